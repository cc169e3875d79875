//go:build !nos3

package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"

	mpart "github.com/mldf/convert/pagewriter/multipart"
)

// s3Env is the AWS configuration of a client, loaded once from the standard chain.
type s3Env struct {
	cfg       aws.Config
	pathStyle bool
	checksums bool // send CRC32 checksums with parts (not when AWS_REQUEST_CHECKSUM_CALCULATION=when_required)
}

// loadS3Env reads the AWS configuration the way the AWS CLI does (environment, shared
// config and credentials files, SSO, web identity, container and instance roles). The SDK's
// own retries are off: this package retries, resuming reads where they broke.
func loadS3Env(ctx context.Context) (*s3Env, error) {
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = 256
		t.MaxIdleConnsPerHost = 64
	})
	cfg, err := awsconfig.LoadDefaultConfig(ctx,
		awsconfig.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
		awsconfig.WithHTTPClient(hc),
	)
	if err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1" // S3-compatible servers take any; AWS redirects to the right one
	}
	custom := cfg.BaseEndpoint != nil || os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
	path := custom
	switch strings.ToLower(os.Getenv("AWS_S3_ADDRESSING_STYLE")) {
	case "path":
		path = true
	case "virtual":
		path = false
	}
	return &s3Env{cfg: cfg, pathStyle: path, checksums: cfg.RequestChecksumCalculation != aws.RequestChecksumCalculationWhenRequired}, nil
}

func (c *Client) openS3(ctx context.Context, bucket string) (store, error) {
	if c.s3env == nil {
		env, err := loadS3Env(ctx)
		if err != nil {
			return nil, err
		}
		c.s3env = env
	}
	env := c.s3env
	cl := s3.NewFromConfig(env.cfg, func(o *s3.Options) {
		o.UsePathStyle = env.pathStyle
		// A whole-object GET of a multipart object cannot verify its composite checksum;
		// the SDK would log that to stderr on every such read.
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	b, err := s3blob.OpenBucket(ctx, cl, bucket, nil)
	if err != nil {
		return nil, err
	}
	return &cloudStore{b: b, native: &s3Native{cl: cl, bucket: bucket, checksums: env.checksums && !c.cfg.noPartChecksums}}, nil
}

type s3Native struct {
	cl        *s3.Client
	bucket    string
	checksums bool
}

func (n *s3Native) readIf(a Attrs) func(as func(any) bool) error {
	return func(as func(any) bool) error {
		var in *s3.GetObjectInput
		if as(&in) && a.ETag != "" {
			in.IfMatch = aws.String(a.ETag)
		}
		return nil
	}
}

func (n *s3Native) checkRead(r *blob.Reader, a Attrs) error {
	var out s3.GetObjectOutput
	if a.ETag != "" && r.As(&out) && out.ETag != nil && *out.ETag != a.ETag {
		return &kindError{ErrChanged, fmt.Sprintf("ETag was %s, now %s", a.ETag, *out.ETag)}
	}
	return nil
}

func (n *s3Native) version(*blob.Attributes, *Attrs) {}

func (n *s3Native) createUpload(ctx context.Context, key string) (multipart, error) {
	in := &s3.CreateMultipartUploadInput{Bucket: &n.bucket, Key: aws.String(key),
		ContentType: aws.String("application/octet-stream")}
	if n.checksums {
		in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
	}
	out, err := n.cl.CreateMultipartUpload(ctx, in)
	if err != nil {
		return nil, err
	}
	return &s3Upload{n: n, key: key, uid: aws.ToString(out.UploadId), parts: map[int]types.CompletedPart{}}, nil
}

func (n *s3Native) listIncomplete(ctx context.Context, prefix string) ([]Incomplete, error) {
	var out []Incomplete
	in := &s3.ListMultipartUploadsInput{Bucket: &n.bucket, Prefix: aws.String(prefix)}
	for {
		page, err := n.cl.ListMultipartUploads(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, u := range page.Uploads {
			out = append(out, Incomplete{URL: aws.ToString(u.Key), ID: aws.ToString(u.UploadId), Initiated: aws.ToTime(u.Initiated)})
		}
		if !aws.ToBool(page.IsTruncated) || (page.NextKeyMarker == nil && page.NextUploadIdMarker == nil) {
			break
		}
		in.KeyMarker, in.UploadIdMarker = page.NextKeyMarker, page.NextUploadIdMarker
	}
	sortIncomplete(out)
	return out, nil
}

func (n *s3Native) abortIncomplete(ctx context.Context, key, id string) error {
	_, err := n.cl.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &n.bucket, Key: aws.String(key), UploadId: aws.String(id)})
	return err
}

// resumeUpload lists the upload's parts (ListParts), with their ETags and checksums for
// Complete.
func (n *s3Native) resumeUpload(ctx context.Context, key, id string) (multipart, []mpart.Part, error) {
	u := &s3Upload{n: n, key: key, uid: id, parts: map[int]types.CompletedPart{}}
	var parts []mpart.Part
	in := &s3.ListPartsInput{Bucket: &n.bucket, Key: aws.String(key), UploadId: aws.String(id)}
	for {
		page, err := n.cl.ListParts(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range page.Parts {
			k := int(aws.ToInt32(p.PartNumber))
			u.record(k, types.CompletedPart{ETag: p.ETag, ChecksumCRC32: p.ChecksumCRC32})
			parts = append(parts, mpart.Part{Number: k, Size: aws.ToInt64(p.Size), ETag: aws.ToString(p.ETag)})
		}
		if !aws.ToBool(page.IsTruncated) || page.NextPartNumberMarker == nil {
			break
		}
		in.PartNumberMarker = page.NextPartNumberMarker
	}
	return u, parts, nil
}

// s3Upload is an S3 multipart upload: UploadPart, UploadPartCopy, CompleteMultipartUpload.
type s3Upload struct {
	n   *s3Native
	key string
	uid string

	mu    sync.Mutex
	parts map[int]types.CompletedPart
}

func (u *s3Upload) id() string { return u.uid }

func (u *s3Upload) uploadPart(ctx context.Context, n int, body io.ReadSeeker, size int64) error {
	in := &s3.UploadPartInput{Bucket: &u.n.bucket, Key: aws.String(u.key), UploadId: aws.String(u.uid),
		PartNumber: aws.Int32(int32(n)), Body: body, ContentLength: aws.Int64(size)}
	if u.n.checksums {
		in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
	}
	out, err := u.n.cl.UploadPart(ctx, in)
	if err != nil {
		return err
	}
	u.record(n, types.CompletedPart{ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32})
	return nil
}

func (u *s3Upload) record(n int, p types.CompletedPart) {
	p.PartNumber = aws.Int32(int32(n))
	if !u.n.checksums {
		p.ChecksumCRC32 = nil
	}
	u.mu.Lock()
	u.parts[n] = p
	u.mu.Unlock()
}

func (u *s3Upload) copyPart(ctx context.Context, n int, src Location, _ store, sa Attrs, off, size int64) error {
	if src.Scheme != SchemeS3 {
		return errNoServerCopy
	}
	in := &s3.UploadPartCopyInput{Bucket: &u.n.bucket, Key: aws.String(u.key), UploadId: aws.String(u.uid),
		PartNumber: aws.Int32(int32(n)), CopySource: aws.String(src.Bucket + "/" + escapeKeyPath(src.Key)),
		CopySourceRange: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+size-1))}
	if sa.ETag != "" {
		in.CopySourceIfMatch = aws.String(sa.ETag)
	}
	out, err := u.n.cl.UploadPartCopy(ctx, in)
	if err != nil {
		return err
	}
	if out.CopyPartResult == nil {
		return errors.New("UploadPartCopy returned no result")
	}
	u.record(n, types.CompletedPart{ETag: out.CopyPartResult.ETag, ChecksumCRC32: out.CopyPartResult.ChecksumCRC32})
	return nil
}

// escapeKeyPath URL-encodes a key for x-amz-copy-source, keeping its slashes.
func escapeKeyPath(k string) string {
	seg := strings.Split(k, "/")
	for i, s := range seg {
		seg[i] = url.PathEscape(s)
	}
	return strings.Join(seg, "/")
}

func (u *s3Upload) complete(ctx context.Context, sizes []int64) error {
	u.mu.Lock()
	parts := make([]types.CompletedPart, 0, len(sizes))
	for i := range sizes {
		p, ok := u.parts[i+1]
		if !ok {
			u.mu.Unlock()
			return fmt.Errorf("part %d was not recorded", i+1)
		}
		parts = append(parts, p)
	}
	u.mu.Unlock()
	_, err := u.n.cl.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &u.n.bucket,
		Key: aws.String(u.key), UploadId: aws.String(u.uid), MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	return err
}

// completed reports whether the key holds an object of the upload's size created by a
// multipart upload (its ETag ends in "-N"): what a Complete whose answer was lost leaves.
func (u *s3Upload) completed(ctx context.Context, total int64) (bool, error) {
	out, err := u.n.cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &u.n.bucket, Key: aws.String(u.key)})
	if err != nil {
		return false, err
	}
	return aws.ToInt64(out.ContentLength) == total && strings.Contains(aws.ToString(out.ETag), "-"), nil
}

func (u *s3Upload) abort(ctx context.Context) error {
	return u.n.abortIncomplete(ctx, u.key, u.uid)
}

func (n *s3Native) statSized(ba *blob.Attributes) bool {
	var out s3.HeadObjectOutput
	return !ba.As(&out) || out.ContentLength != nil
}

func (n *s3Native) rangeSize(r *blob.Reader) (int64, bool) {
	var out s3.GetObjectOutput
	if !r.As(&out) {
		return 0, false
	}
	whole := false // a 200 reply: the server ignored the range and sent the whole object
	if raw, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response); ok && raw.Response != nil {
		whole = raw.StatusCode == 200
	}
	return replySize(out.ContentRange, out.ContentLength, whole)
}

func (n *s3Native) listedSized(o *blob.ListObject) bool {
	var obj types.Object
	return !o.As(&obj) || obj.Size != nil
}

// s3Built: this build reaches s3:// URLs.
const s3Built = true

// s3Reply reads an AWS SDK error: its code and message, and the HTTP status.
func s3Reply(err error, r *reply) {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		r.code, r.msg = ae.ErrorCode(), ae.ErrorMessage()
	}
	var sre *smithyhttp.ResponseError
	if errors.As(err, &sre) && sre.Response != nil {
		r.status = sre.HTTPStatusCode()
	}
}
