//go:build !noazure

package objstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	azblobblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"

	mpart "github.com/mldf/convert/pagewriter/multipart"
)

// openAzure opens a container with the credentials gocloud's azureblob finds in the
// environment (AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN,
// AZURE_STORAGE_CONNECTION_STRING, else azidentity's DefaultAzureCredential: environment,
// workload identity, managed identity, Azure CLI).
func openAzure(ctx context.Context, containerName string) (store, error) {
	svc, err := azureblob.NewServiceURL(azureblob.NewDefaultServiceURLOptions())
	if err != nil {
		return nil, &kindError{ErrConfig, "set AZURE_STORAGE_ACCOUNT or AZURE_STORAGE_CONNECTION_STRING: " + err.Error()}
	}
	cl, err := azureblob.NewDefaultClient(svc, azureblob.ContainerName(containerName))
	if err != nil {
		return nil, &kindError{ErrDenied, "no Azure credentials: " + err.Error()}
	}
	b, err := azureblob.OpenBucket(ctx, cl, nil)
	if err != nil {
		return nil, err
	}
	return &cloudStore{b: b, native: &azNative{cl: cl}}, nil
}

type azNative struct {
	cl *container.Client
}

func (n *azNative) readIf(a Attrs) func(as func(any) bool) error {
	return func(as func(any) bool) error {
		var o *azblobblob.DownloadStreamOptions
		if a.ETag != "" && as(&o) {
			etag := azcore.ETag(a.ETag)
			o.AccessConditions = &azblobblob.AccessConditions{ModifiedAccessConditions: &azblobblob.ModifiedAccessConditions{IfMatch: &etag}}
		}
		return nil
	}
}

func (n *azNative) checkRead(r *blob.Reader, a Attrs) error {
	var resp azblobblob.DownloadStreamResponse
	if a.ETag != "" && r.As(&resp) && resp.ETag != nil && string(*resp.ETag) != a.ETag {
		return &kindError{ErrChanged, fmt.Sprintf("ETag was %s, now %s", a.ETag, *resp.ETag)}
	}
	return nil
}

func (n *azNative) version(*blob.Attributes, *Attrs) {}

func (n *azNative) statSized(ba *blob.Attributes) bool {
	var resp azblobblob.GetPropertiesResponse
	return !ba.As(&resp) || resp.ContentLength != nil
}

func (n *azNative) rangeSize(r *blob.Reader) (int64, bool) {
	var resp azblobblob.DownloadStreamResponse
	if !r.As(&resp) {
		return 0, false
	}
	return replySize(resp.ContentRange, resp.ContentLength, false)
}

func (n *azNative) listedSized(*blob.ListObject) bool { return true } // gocloud needs it: a missing one fails under guard

// Azure multipart: each part is one or more staged blocks (IDs "UPLOADID-PPPPP-SSSSS",
// base64, all of one length as Azure requires), committed as one block list at Complete.
// Uncommitted blocks are invisible and Azure discards them at the blob's next commit or
// after a week; nothing can delete them sooner without touching the blob.
const azMaxBlock = 100 << 20 // a copied or streamed range is staged in blocks of at most this

func azBlockID(uid string, part, sub int) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s-%05d-%05d", uid, part, sub))
}

// azParseBlockID returns the upload ID of one of our block IDs.
func azParseBlockID(id string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(id)
	if err != nil || len(b) != 28 || b[16] != '-' || b[22] != '-' || !isHexID(string(b[:16])) {
		return "", false
	}
	return string(b[:16]), true
}

type azUpload struct {
	n   *azNative
	key string
	uid string
	bb  *blockblob.Client

	mu     sync.Mutex
	blocks map[int][]string
}

func (n *azNative) createUpload(_ context.Context, key string) (multipart, error) {
	return &azUpload{n: n, key: key, uid: newUploadID(), bb: n.cl.NewBlockBlobClient(key), blocks: map[int][]string{}}, nil
}

func (u *azUpload) id() string { return u.uid }

func (u *azUpload) setBlocks(part int, ids []string) {
	u.mu.Lock()
	u.blocks[part] = ids
	u.mu.Unlock()
}

func (u *azUpload) uploadPart(ctx context.Context, n int, body io.ReadSeeker, size int64) error {
	if size > 4000<<20 {
		return &kindError{ErrPart, "Azure blocks are at most 4000 MiB"}
	}
	id := azBlockID(u.uid, n, 0)
	if _, err := u.bb.StageBlock(ctx, id, streaming.NopCloser(body), nil); err != nil {
		return err
	}
	u.setBlocks(n, []string{id})
	return nil
}

// streamPart stages r in blocks of at most azMaxBlock, one buffer at a time.
func (u *azUpload) streamPart(ctx context.Context, n int, r io.Reader, size int64) error {
	buf := make([]byte, min(size, azMaxBlock))
	var ids []string
	for left := size; left > 0; {
		k := min(left, int64(len(buf)))
		if _, err := io.ReadFull(r, buf[:k]); err != nil {
			return err
		}
		id := azBlockID(u.uid, n, len(ids))
		if _, err := u.bb.StageBlock(ctx, id, streaming.NopCloser(bytesReader(buf[:k])), nil); err != nil {
			return err
		}
		ids = append(ids, id)
		left -= k
	}
	u.setBlocks(n, ids)
	return nil
}

// copyPart stages the range with Put Block From URL, from a read-only SAS URL of the source
// that the client signs; without a shared key (no SAS can be signed) the range passes
// through the client.
func (u *azUpload) copyPart(ctx context.Context, n int, src Location, ss store, sa Attrs, off, size int64) error {
	cs, ok := ss.(*cloudStore)
	if src.Scheme != SchemeAzure || !ok {
		return errNoServerCopy
	}
	srcNative, ok := cs.native.(*azNative)
	if !ok {
		return errNoServerCopy
	}
	sasURL, err := srcNative.cl.NewBlobClient(src.Key).GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(6*time.Hour), nil)
	if err != nil {
		return errNoServerCopy
	}
	var ids []string
	for o := off; o < off+size; o += azMaxBlock {
		k := min(off+size-o, azMaxBlock)
		id := azBlockID(u.uid, n, len(ids))
		opts := &blockblob.StageBlockFromURLOptions{Range: azblobblob.HTTPRange{Offset: o, Count: k}}
		if sa.ETag != "" {
			etag := azcore.ETag(sa.ETag)
			opts.SourceModifiedAccessConditions = &azblobblob.SourceModifiedAccessConditions{SourceIfMatch: &etag}
		}
		if _, err := u.bb.StageBlockFromURL(ctx, id, sasURL, opts); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	u.setBlocks(n, ids)
	return nil
}

func (u *azUpload) complete(ctx context.Context, sizes []int64) error {
	u.mu.Lock()
	var ids []string
	for i := range sizes {
		b, ok := u.blocks[i+1]
		if !ok {
			u.mu.Unlock()
			return fmt.Errorf("part %d was not recorded", i+1)
		}
		ids = append(ids, b...)
	}
	u.mu.Unlock()
	ct := "application/octet-stream"
	_, err := u.bb.CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{HTTPHeaders: &azblobblob.HTTPHeaders{BlobContentType: &ct}})
	return err
}

func (u *azUpload) completed(ctx context.Context, total int64) (bool, error) {
	p, err := u.bb.GetProperties(ctx, nil)
	if err != nil {
		return false, err
	}
	return p.ContentLength != nil && *p.ContentLength == total, nil
}

// abort has nothing to delete: the staged blocks are never committed (see above).
func (u *azUpload) abort(context.Context) error { return nil }

// listIncomplete lists the blobs under prefix with their uncommitted blocks (one
// Get Block List per blob) and reports the upload IDs found in our block IDs.
func (n *azNative) listIncomplete(ctx context.Context, prefix string) ([]Incomplete, error) {
	pager := n.cl.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix,
		Include: container.ListBlobsInclude{UncommittedBlobs: true}})
	var out []Incomplete
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Segment.BlobItems {
			if it.Name == nil {
				continue
			}
			bl, err := n.cl.NewBlockBlobClient(*it.Name).GetBlockList(ctx, blockblob.BlockListTypeUncommitted, nil)
			if err != nil {
				if classify(err).kind == ErrNotFound {
					continue
				}
				return nil, err
			}
			seen := map[string]bool{}
			for _, b := range bl.UncommittedBlocks {
				if b.Name == nil {
					continue
				}
				if uid, ok := azParseBlockID(*b.Name); ok && !seen[uid] {
					seen[uid] = true
					out = append(out, Incomplete{URL: *it.Name, ID: uid})
				}
			}
		}
	}
	sortIncomplete(out)
	return out, nil
}

// resumeUpload reads the blob's uncommitted blocks and keeps those of upload id, grouped by
// part: a part is its blocks 0..k-1 (a part whose blocks are not all there is left out, to
// be uploaded again).
func (n *azNative) resumeUpload(ctx context.Context, key, id string) (multipart, []mpart.Part, error) {
	if !isHexID(id) {
		return nil, nil, &kindError{ErrBadURL, "not an upload ID: " + id}
	}
	u := &azUpload{n: n, key: key, uid: id, bb: n.cl.NewBlockBlobClient(key), blocks: map[int][]string{}}
	bl, err := u.bb.GetBlockList(ctx, blockblob.BlockListTypeUncommitted, nil)
	if err != nil {
		return nil, nil, err
	}
	type block struct {
		id   string
		size int64
	}
	subs := map[int]map[int]block{}
	for _, b := range bl.UncommittedBlocks {
		if b.Name == nil || b.Size == nil {
			continue
		}
		uid, part, sub, ok := azParseBlock(*b.Name)
		if !ok || uid != id {
			continue
		}
		if subs[part] == nil {
			subs[part] = map[int]block{}
		}
		subs[part][sub] = block{*b.Name, *b.Size}
	}
	if len(subs) == 0 {
		return nil, nil, &kindError{ErrNotFound, "no blocks of upload " + id}
	}
	var parts []mpart.Part
	for part, bs := range subs {
		var ids []string
		var size int64
		for i := range len(bs) {
			b, ok := bs[i]
			if !ok {
				ids = nil
				break
			}
			ids, size = append(ids, b.id), size+b.size
		}
		if ids != nil {
			u.blocks[part] = ids
			parts = append(parts, mpart.Part{Number: part, Size: size})
		}
	}
	return u, parts, nil
}

// azParseBlock returns the upload ID, part and block number of one of our block IDs.
func azParseBlock(id string) (uid string, part, sub int, ok bool) {
	uid, ok = azParseBlockID(id)
	if !ok {
		return "", 0, 0, false
	}
	b, _ := base64.StdEncoding.DecodeString(id)
	p, err1 := strconv.Atoi(string(b[17:22]))
	s, err2 := strconv.Atoi(string(b[23:28]))
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return uid, p, s, true
}

// abortIncomplete discards the uncommitted blocks of a blob that has no committed
// version, by committing an empty block list and deleting the blob (this drops every
// upload in progress to that key, and an empty blob exists for that instant). A blob that
// has a committed version keeps its uncommitted blocks until its next commit or a week.
func (n *azNative) abortIncomplete(ctx context.Context, key, _ string) error {
	bb := n.cl.NewBlockBlobClient(key)
	if _, err := bb.GetProperties(ctx, nil); err == nil {
		return nil
	} else if classify(err).kind != ErrNotFound {
		return err
	}
	if _, err := bb.CommitBlockList(ctx, nil, nil); err != nil {
		return err
	}
	_, err := bb.Delete(ctx, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == 404 {
		return nil
	}
	return err
}

// azureBuilt: this build reaches az:// (azblob://) URLs.
const azureBuilt = true

// azureReply reads an Azure SDK error: its HTTP status and error code.
func azureReply(err error, r *reply) {
	var are *azcore.ResponseError
	if errors.As(err, &are) {
		r.status, r.code = are.StatusCode, are.ErrorCode
	}
}
