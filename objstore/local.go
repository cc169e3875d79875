package objstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mldf/convert/internal/atomicfile"
	mpart "github.com/mldf/convert/pagewriter/multipart"
)

// kindError is a store's error that already knows its kind (classify keeps it).
type kindError struct {
	kind   error
	detail string
}

func (e *kindError) Error() string { return e.kind.Error() + " (" + e.detail + ")" }
func (e *kindError) Unwrap() error { return e.kind }

// localStore is the local filesystem: keys are paths. It holds no state.
type localStore struct{}

func (localStore) close() error { return nil }

func (localStore) bucketExists(context.Context) (bool, error) { return true, nil }

func (localStore) stat(_ context.Context, key string) (Attrs, error) {
	fi, err := os.Stat(key)
	if err != nil {
		return Attrs{}, err
	}
	if fi.IsDir() {
		return Attrs{}, &kindError{ErrBadURL, "is a directory"}
	}
	return Attrs{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// list walks the directory holding prefix; files (not directories) whose path starts with
// prefix are listed, each directory's entries in name order. Paths keep prefix's spelling.
func (localStore) list(ctx context.Context, prefix string, _ retrier, fn func(Attrs) error) error {
	dir := prefix[:strings.LastIndexByte(prefix, os.PathSeparator)+1] // "" or ends in "/"
	root := dir
	if root == "" {
		root = "."
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable subdirectory: skipped, like a listing would
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." {
			return nil
		}
		name := dir + filepath.ToSlash(rel)
		if d.IsDir() {
			if !strings.HasPrefix(name+"/", prefix) && !strings.HasPrefix(prefix, name+"/") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(name, prefix) {
			return nil
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		return fn(Attrs{URL: name, Size: fi.Size(), ModTime: fi.ModTime()})
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a prefix in a directory that does not exist lists nothing
	}
	return err
}

type fileSection struct {
	*io.SectionReader
	f *os.File
}

func (s fileSection) Close() error { return s.f.Close() }

func (localStore) openRange(_ context.Context, key string, _ Attrs, off, n int64) (io.ReadCloser, error) {
	f, err := os.Open(key)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		n = 1<<63 - 1 - off
	}
	return fileSection{io.NewSectionReader(f, off, n), f}, nil
}

// put writes r to a temporary file beside key and renames it onto key.
func (localStore) put(ctx context.Context, key string, r io.Reader, _ int64) error {
	return atomicWrite(key, func(f *os.File) error {
		_, err := io.Copy(f, ctxReader{ctx, r})
		return err
	})
}

// atomicWrite writes target through a temporary file beside it (atomicfile: fsynced, renamed,
// the directory fsynced): on any failure the temporary file is removed and target is
// untouched.
func atomicWrite(target string, fill func(*os.File) error) error {
	f, err := createTemp(target)
	if err != nil {
		return err
	}
	if err := fill(f.File); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// createTemp creates ".BASE.tmp-*" (mode 0644) beside target, refusing a target that
// exists and is not a regular file or a symbolic link.
func createTemp(target string) (*atomicfile.File, error) {
	f, err := atomicfile.Create(target, 0o644)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return nil, &kindError{ErrBadURL, "exists and is not a regular file"}
	}
	return f, err
}

// ctxReader stops a copy when ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func (localStore) remove(_ context.Context, key string) error { return os.Remove(key) }

// Local multipart uploads keep their parts as files in a directory ".BASE.upload-ID"
// beside the target; Complete concatenates them into a temporary file (copy_file_range
// where the kernel has it) and renames it onto the target.
const uploadInfix = ".upload-"

func uploadDir(key, id string) string {
	dir, base := filepath.Split(key)
	return filepath.Join(dir, "."+base+uploadInfix+id)
}

func newUploadID() string {
	var r [8]byte
	rand.Read(r[:])
	return hex.EncodeToString(r[:])
}

type localUpload struct {
	key, uid string
}

func (localStore) createUpload(_ context.Context, key string) (multipart, error) {
	dir := filepath.Dir(key)
	if fi, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, &kindError{ErrBadURL, dir + " is not a directory"}
	}
	u := &localUpload{key: key, uid: newUploadID()}
	if err := os.Mkdir(uploadDir(key, u.uid), 0o755); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *localUpload) id() string { return u.uid }

func (u *localUpload) partPath(n int) string {
	return filepath.Join(uploadDir(u.key, u.uid), fmt.Sprintf("%05d", n))
}

func (u *localUpload) uploadPart(ctx context.Context, n int, body io.ReadSeeker, size int64) error {
	return u.writePart(n, func(f *os.File) error {
		_, err := io.Copy(f, ctxReader{ctx, body})
		return err
	})
}

func (u *localUpload) streamPart(ctx context.Context, n int, r io.Reader, size int64) error {
	return u.writePart(n, func(f *os.File) error {
		got, err := io.Copy(f, ctxReader{ctx, r})
		if err == nil && got != size {
			err = fmt.Errorf("%w: part %d: %d of %d bytes", io.ErrUnexpectedEOF, n, got, size)
		}
		return err
	})
}

// writePart writes part n through a temporary file renamed into place (atomicfile), so a
// part file is always whole. Parts are not fsynced: Complete fsyncs the object they make.
func (u *localUpload) writePart(n int, fill func(*os.File) error) error {
	f, err := atomicfile.CreateWith(u.partPath(n), 0o644, atomicfile.Options{NoClean: true})
	if err != nil {
		return err
	}
	if err := fill(f.File); err != nil {
		f.Abort()
		return err
	}
	return f.CommitUnsynced()
}

func (u *localUpload) copyPart(ctx context.Context, n int, src Location, _ store, _ Attrs, off, size int64) error {
	if !src.IsLocal() {
		return errNoServerCopy
	}
	in, err := os.Open(src.Key)
	if err != nil {
		return err
	}
	defer in.Close()
	if _, err := in.Seek(off, io.SeekStart); err != nil {
		return err
	}
	return u.writePart(n, func(f *os.File) error {
		// *os.File.ReadFrom turns a LimitedReader over a file into copy_file_range.
		got, err := f.ReadFrom(&io.LimitedReader{R: in, N: size})
		if err == nil && got != size {
			err = fmt.Errorf("%s: %w: %d bytes short", src, io.ErrUnexpectedEOF, size-got)
		}
		return err
	})
}

func (u *localUpload) complete(ctx context.Context, sizes []int64) error {
	err := atomicWrite(u.key, func(f *os.File) error {
		for i, want := range sizes {
			if err := ctx.Err(); err != nil {
				return err
			}
			p, err := os.Open(u.partPath(i + 1))
			if err != nil {
				return err
			}
			got, err := f.ReadFrom(p)
			p.Close()
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("part %d is %d bytes, uploaded %d", i+1, got, want)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return os.RemoveAll(uploadDir(u.key, u.uid))
}

func (u *localUpload) completed(context.Context, int64) (bool, error) { return false, nil }

func (u *localUpload) abort(context.Context) error {
	return os.RemoveAll(uploadDir(u.key, u.uid))
}

// resumeUpload lists the part files of the upload's directory (a part file is whole: it
// is renamed into place).
func (localStore) resumeUpload(_ context.Context, key, id string) (multipart, []mpart.Part, error) {
	if !isHexID(id) {
		return nil, nil, &kindError{ErrBadURL, "not an upload ID: " + strconv.Quote(id)}
	}
	u := &localUpload{key: key, uid: id}
	ents, err := os.ReadDir(uploadDir(key, id))
	if err != nil {
		return nil, nil, err
	}
	var parts []mpart.Part
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || len(e.Name()) != 5 || !e.Type().IsRegular() {
			continue // a temporary file of a part being written
		}
		fi, err := e.Info()
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, mpart.Part{Number: n, Size: fi.Size()})
	}
	return u, parts, nil
}

// listIncomplete finds ".BASE.upload-ID" directories beside keys starting with prefix.
func (localStore) listIncomplete(_ context.Context, prefix string) ([]Incomplete, error) {
	dir, basePrefix := filepath.Split(prefix)
	d := dir
	if d == "" {
		d = "."
	}
	ents, err := os.ReadDir(d)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Incomplete
	for _, e := range ents {
		name := e.Name()
		i := strings.LastIndex(name, uploadInfix)
		if !e.IsDir() || !strings.HasPrefix(name, ".") || i < 0 {
			continue
		}
		base, id := name[1:i], name[i+len(uploadInfix):]
		if !strings.HasPrefix(base, basePrefix) || !isHexID(id) {
			continue
		}
		var t time.Time
		if fi, err := e.Info(); err == nil {
			t = fi.ModTime()
		}
		out = append(out, Incomplete{URL: dir + base, ID: id, Initiated: t})
	}
	sortIncomplete(out)
	return out, nil
}

func (localStore) abortIncomplete(_ context.Context, key, id string) error {
	if !isHexID(id) {
		return &kindError{ErrBadURL, "not an upload ID: " + strconv.Quote(id)}
	}
	return os.RemoveAll(uploadDir(key, id))
}

func isHexID(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// errNoServerCopy is a copyPart the store cannot do server-side; Upload.CopyPart then
// passes the range through the client.
var errNoServerCopy = errors.New("no server-side copy for this source")
