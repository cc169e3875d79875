//go:build !nogcs

package objstore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"

	"cloud.google.com/go/storage"
	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
	"google.golang.org/api/googleapi"

	mpart "github.com/mldf/convert/pagewriter/multipart"
)

// openGCS opens a bucket with Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS,
// gcloud's user credentials, the metadata server), or none when STORAGE_EMULATOR_HOST names
// an emulator. The storage client's own retries are off: this package retries.
func openGCS(ctx context.Context, bucket string) (store, error) {
	var hc *gcp.HTTPClient
	var opts gcsblob.Options
	if os.Getenv("STORAGE_EMULATOR_HOST") != "" {
		hc = gcp.NewAnonymousHTTPClient(gcp.DefaultTransport())
		// Emulators serve reads through the JSON API only (GCS itself serves both).
		opts.ClientOptions = append(opts.ClientOptions, storage.WithJSONReads())
	} else {
		creds, err := gcp.DefaultCredentials(ctx)
		if err != nil {
			return nil, &kindError{ErrDenied, "no Google credentials found: " + err.Error()}
		}
		if hc, err = gcp.NewHTTPClient(gcp.DefaultTransport(), gcp.CredentialsTokenSource(creds)); err != nil {
			return nil, err
		}
	}
	b, err := gcsblob.OpenBucket(ctx, hc, bucket, &opts)
	if err != nil {
		return nil, err
	}
	var cl *storage.Client
	if !b.As(&cl) {
		b.Close()
		return nil, errors.New("gcsblob: no storage client")
	}
	cl.SetRetry(storage.WithPolicy(storage.RetryNever))
	return &cloudStore{b: b, native: &gcsNative{b: b, cl: cl, bucket: bucket}}, nil
}

type gcsNative struct {
	b      *blob.Bucket
	cl     *storage.Client
	bucket string
}

func (n *gcsNative) readIf(a Attrs) func(as func(any) bool) error {
	return func(as func(any) bool) error {
		var h **storage.ObjectHandle
		if a.gen != 0 && as(&h) {
			*h = (*h).If(storage.Conditions{GenerationMatch: a.gen})
		}
		return nil
	}
}

func (n *gcsNative) checkRead(r *blob.Reader, a Attrs) error {
	var sr *storage.Reader
	if a.gen != 0 && r.As(&sr) && sr.Attrs.Generation != 0 && sr.Attrs.Generation != a.gen {
		return &kindError{ErrChanged, fmt.Sprintf("generation was %d, now %d", a.gen, sr.Attrs.Generation)}
	}
	return nil
}

func (n *gcsNative) version(ba *blob.Attributes, a *Attrs) {
	var oa storage.ObjectAttrs
	if ba.As(&oa) {
		a.gen = oa.Generation
	}
}

// GCS has no multipart upload in its JSON API: parts are temporary objects
// "DIR/.BASE.upload-ID/NNNNN" composed into the object at Complete (32 sources per compose,
// in a tree for more), then deleted.
func tmpPrefix(key, id string) string {
	dir, base := path.Split(key)
	return dir + "." + base + uploadInfix + id + "/"
}

// putBlob writes a whole object through gocloud (atomic: it appears at Close).
func putBlob(ctx context.Context, b *blob.Bucket, key string, r io.Reader) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		cancel() // before Close: the write is aborted
		w.Close()
		return err
	}
	return w.Close()
}

type gcsUpload struct {
	n   *gcsNative
	key string
	uid string
}

func (n *gcsNative) createUpload(_ context.Context, key string) (multipart, error) {
	return &gcsUpload{n: n, key: key, uid: newUploadID()}, nil
}

func (u *gcsUpload) id() string { return u.uid }

func (u *gcsUpload) part(n int) string { return tmpPrefix(u.key, u.uid) + fmt.Sprintf("%05d", n) }

func (u *gcsUpload) uploadPart(ctx context.Context, n int, body io.ReadSeeker, size int64) error {
	return putBlob(ctx, u.n.b, u.part(n), body)
}

func (u *gcsUpload) streamPart(ctx context.Context, n int, r io.Reader, size int64) error {
	return putBlob(ctx, u.n.b, u.part(n), r)
}

// copyPart copies a whole source object server-side; a range has no server-side copy on
// GCS (errNoServerCopy: the client streams it).
func (u *gcsUpload) copyPart(ctx context.Context, n int, src Location, _ store, sa Attrs, off, size int64) error {
	if src.Scheme != SchemeGCS || off != 0 || size != sa.Size {
		return errNoServerCopy
	}
	from := u.n.cl.Bucket(src.Bucket).Object(src.Key)
	if sa.gen != 0 {
		from = from.If(storage.Conditions{GenerationMatch: sa.gen})
	}
	_, err := u.n.cl.Bucket(u.n.bucket).Object(u.part(n)).CopierFrom(from).Run(ctx)
	return err
}

const maxComposeSources = 32

func (u *gcsUpload) complete(ctx context.Context, sizes []int64) error {
	names := make([]string, len(sizes))
	for i := range sizes {
		names[i] = u.part(i + 1)
	}
	bkt := u.n.cl.Bucket(u.n.bucket)
	compose := func(dst string, srcs []string) error {
		hs := make([]*storage.ObjectHandle, len(srcs))
		for i, s := range srcs {
			hs[i] = bkt.Object(s)
		}
		c := bkt.Object(dst).ComposerFrom(hs...)
		c.ContentType = "application/octet-stream"
		_, err := c.Run(ctx)
		return err
	}
	for level := 0; len(names) > maxComposeSources; level++ {
		var next []string
		for i := 0; i < len(names); i += maxComposeSources {
			dst := tmpPrefix(u.key, u.uid) + fmt.Sprintf("c%d-%05d", level, i/maxComposeSources)
			if err := compose(dst, names[i:min(i+maxComposeSources, len(names))]); err != nil {
				return err
			}
			next = append(next, dst)
		}
		names = next
	}
	if err := compose(u.key, names); err != nil {
		return err
	}
	// The object is in place; leftover temporaries are only clutter (ListIncomplete shows them).
	u.n.deletePrefix(ctx, tmpPrefix(u.key, u.uid))
	return nil
}

func (u *gcsUpload) completed(ctx context.Context, total int64) (bool, error) {
	a, err := u.n.cl.Bucket(u.n.bucket).Object(u.key).Attrs(ctx)
	if err != nil {
		return false, err
	}
	return a.Size == total && a.ComponentCount > 0, nil
}

func (u *gcsUpload) abort(ctx context.Context) error {
	return u.n.deletePrefix(ctx, tmpPrefix(u.key, u.uid))
}

// deletePrefix deletes every object under prefix.
func (n *gcsNative) deletePrefix(ctx context.Context, prefix string) error {
	it := n.b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := n.b.Delete(ctx, o.Key); err != nil && classify(err).kind != ErrNotFound {
			return err
		}
	}
}

func (n *gcsNative) listIncomplete(ctx context.Context, prefix string) ([]Incomplete, error) {
	dir, basePrefix := path.Split(prefix)
	it := n.b.List(&blob.ListOptions{Prefix: dir + "." + basePrefix})
	seen := map[[2]string]int{}
	var out []Incomplete
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		rest := strings.TrimPrefix(o.Key, dir+".")
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			continue
		}
		i := strings.LastIndex(rest[:slash], uploadInfix)
		if i < 0 || !isHexID(rest[i+len(uploadInfix):slash]) {
			continue
		}
		k := [2]string{dir + rest[:i], rest[i+len(uploadInfix) : slash]}
		if j, ok := seen[k]; ok {
			if o.ModTime.Before(out[j].Initiated) {
				out[j].Initiated = o.ModTime
			}
			continue
		}
		seen[k] = len(out)
		out = append(out, Incomplete{URL: k[0], ID: k[1], Initiated: o.ModTime})
	}
	sortIncomplete(out)
	return out, nil
}

// resumeUpload lists the upload's temporary part objects (NNNNN; the compose tree's are
// not parts).
func (n *gcsNative) resumeUpload(ctx context.Context, key, id string) (multipart, []mpart.Part, error) {
	if !isHexID(id) {
		return nil, nil, &kindError{ErrBadURL, "not an upload ID: " + id}
	}
	prefix := tmpPrefix(key, id)
	it := n.b.List(&blob.ListOptions{Prefix: prefix})
	var parts []mpart.Part
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		name := strings.TrimPrefix(o.Key, prefix)
		k, err := strconv.Atoi(name)
		if err != nil || len(name) != 5 {
			continue
		}
		parts = append(parts, mpart.Part{Number: k, Size: o.Size, ETag: hex.EncodeToString(o.MD5)})
	}
	if len(parts) == 0 {
		return nil, nil, &kindError{ErrNotFound, "no parts of upload " + id}
	}
	return &gcsUpload{n: n, key: key, uid: id}, parts, nil
}

func (n *gcsNative) abortIncomplete(ctx context.Context, key, id string) error {
	if !isHexID(id) {
		return &kindError{ErrBadURL, "not an upload ID: " + id}
	}
	return n.deletePrefix(ctx, tmpPrefix(key, id))
}

// gcsBuilt: this build reaches gs:// URLs.
const gcsBuilt = true

// gcsReply reads a Google Cloud Storage error: a missing bucket or object, or the API's
// status, reason and message.
func gcsReply(err error, r *reply) {
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		r.missing = "no such bucket"
	case errors.Is(err, storage.ErrObjectNotExist):
		r.missing = "no such object"
	}
	var gae *googleapi.Error
	if errors.As(err, &gae) {
		r.status, r.msg = gae.Code, gae.Message
		if len(gae.Errors) > 0 {
			r.code = gae.Errors[0].Reason
		}
	}
}
