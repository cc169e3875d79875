package objstore

import (
	"context"
	"io"
	"slices"
	"strings"
	"time"

	mpart "github.com/mldf/convert/pagewriter/multipart"
)

// Attrs describes one object.
type Attrs struct {
	URL     string    // the object's URL, spelled like the URL it was found through
	Size    int64     // bytes
	ETag    string    // the store's version tag ("" for local files)
	ModTime time.Time // last modification
	// Fetch is set by StatInput for an object the run reads through the Client (one in a
	// bucket), clear for a local file it may open by path.
	Fetch bool
	gen   int64 // GCS generation (0 elsewhere)
}

// Incomplete is a multipart upload that was started and neither completed nor aborted
// (typically by a run that was killed).
type Incomplete struct {
	URL       string    // the object the upload would have created
	ID        string    // the store's upload ID
	Initiated time.Time // when the upload began (zero when the store does not say)
}

// store is one bucket, or the local filesystem. Its methods return the store's raw errors;
// the Client classifies them, retries and names the URL. Keys are Location.Key.
type store interface {
	// stat returns the attributes of one object (Attrs.URL unset).
	stat(ctx context.Context, key string) (Attrs, error)
	// list calls fn for each object whose key starts with prefix, in lexical key order
	// (Attrs.URL holds the key). It stops at fn's first error and returns it. Each
	// request of the listing goes through retry.
	list(ctx context.Context, prefix string, retry retrier, fn func(Attrs) error) error
	// bucketExists reports whether the bucket exists (true for the local store).
	bucketExists(ctx context.Context) (bool, error)
	// openRange reads n bytes from off (n < 0: to the end). A non-empty a.ETag (or a.gen)
	// makes the store refuse the read when the object has changed.
	openRange(ctx context.Context, key string, a Attrs, off, n int64) (io.ReadCloser, error)
	// put writes a whole object from r (size bytes) atomically.
	put(ctx context.Context, key string, r io.Reader, size int64) error
	// remove deletes an object.
	remove(ctx context.Context, key string) error
	// createUpload starts a multipart upload to key.
	createUpload(ctx context.Context, key string) (multipart, error)
	// listIncomplete lists the incomplete uploads to keys starting with prefix
	// (Incomplete.URL holds the key).
	listIncomplete(ctx context.Context, prefix string) ([]Incomplete, error)
	// abortIncomplete aborts one incomplete upload.
	abortIncomplete(ctx context.Context, key, id string) error
	// resumeUpload reattaches to the incomplete upload id to key and lists its parts.
	resumeUpload(ctx context.Context, key, id string) (multipart, []mpart.Part, error)
	close() error
}

// retrier runs one request with the client's retries.
type retrier func(fn func(a *attempt) error) error

// multipart is one store's multipart upload. Parts are numbered from 1.
type multipart interface {
	id() string
	// uploadPart stores part n; body is seekable (an SDK may rewind it).
	uploadPart(ctx context.Context, n int, body io.ReadSeeker, size int64) error
	// copyPart makes part n a server-side copy of src[off:off+size]; src is in the same
	// kind of store. It returns errNoServerCopy when the store cannot copy that range.
	copyPart(ctx context.Context, n int, src Location, srcStore store, srcAttrs Attrs, off, size int64) error
	// complete assembles parts 1..len(sizes) into the object.
	complete(ctx context.Context, sizes []int64) error
	// completed reports whether the object exists as complete would have made it (used
	// when a retried complete finds the upload gone: the earlier attempt succeeded).
	completed(ctx context.Context, total int64) (bool, error)
	abort(ctx context.Context) error
}

// sortIncomplete orders uploads by URL, then ID.
func sortIncomplete(out []Incomplete) {
	slices.SortFunc(out, func(a, b Incomplete) int {
		if c := strings.Compare(a.URL, b.URL); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
