package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/multipart"
)

// memStore is a bucket of one key for the upload tests: its uploads by ID, each a set of
// parts, and the object the last Complete made.
type memStore struct {
	mu      sync.Mutex
	uploads map[string]*memUpload
	object  []byte
	n       int
}

type memUpload struct {
	s     *memStore
	id    string
	parts map[int][]byte
}

func (s *memStore) start() (multipart.Uploader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	u := &memUpload{s: s, id: string(rune('a' + s.n)), parts: map[int][]byte{}}
	s.uploads[u.id] = u
	return u, nil
}

func (u *memUpload) ID() string { return u.id }

func (u *memUpload) UploadPart(ctx context.Context, part int, data []byte) error {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	u.parts[part] = bytes.Clone(data)
	return nil
}

func (u *memUpload) Complete(ctx context.Context) error {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	var obj []byte
	for _, k := range slices.Sorted(func(yield func(int) bool) {
		for k := range u.parts {
			if !yield(k) {
				return
			}
		}
	}) {
		obj = append(obj, u.parts[k]...)
	}
	u.s.object = obj
	delete(u.s.uploads, u.id)
	return nil
}

func (u *memUpload) Abort(ctx context.Context) error {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	delete(u.s.uploads, u.id)
	return nil
}

func (u *memUpload) Forget(from int) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	for k := range u.parts {
		if k > from {
			delete(u.parts, k)
		}
	}
}

var errGone = errors.New("no such upload")

var uploadedParts = regexp.MustCompile(`\(upload: (\d+) parts`)

// uploadedTwo reports whether a checkpoint line of the log counts at least 2 uploaded parts.
func uploadedTwo(log string) bool {
	for _, m := range uploadedParts.FindAllStringSubmatch(log, -1) {
		if n, _ := strconv.Atoi(m[1]); n >= 2 {
			return true
		}
	}
	return false
}

// reattach is Resume.Reattach over the store: the upload's parts listed as a store lists them.
func (s *memStore) reattach(opt multipart.Options) func(context.Context, pagewriter.UploadState) (pagewriter.SinkOpener, error) {
	return func(ctx context.Context, st pagewriter.UploadState) (pagewriter.SinkOpener, error) {
		s.mu.Lock()
		u, ok := s.uploads[st.ID]
		var parts []multipart.Part
		if ok {
			for k, b := range u.parts {
				parts = append(parts, multipart.Part{Number: k, Size: int64(len(b))})
			}
		}
		s.mu.Unlock()
		if !ok {
			return nil, errGone
		}
		slices.SortFunc(parts, func(a, b multipart.Part) int { return a.Number - b.Number })
		sink, err := multipart.Resume(ctx, u, "mem://out", st.Stream, opt, parts, st.Parts)
		if err != nil {
			u.Abort(ctx)
			return nil, err
		}
		return func(pagewriter.SinkLayout) (pagewriter.Sink, error) { return sink, nil }, nil
	}
}

// A run to an upload, interrupted after some parts were uploaded, continues the upload from
// its parts; the object is the bytes of a local run. An upload gone meanwhile starts over.
func TestResumeUpload(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref.mldf")
	mustRun(t, killSamplesConfig(ref, 0))
	want, _ := os.ReadFile(ref)
	opt := multipart.Options{PartSize: 16 << 10, MinPartSize: 16 << 10}
	wantRejects, _ := os.ReadFile(ref + ".rejects.jsonl")
	objects := objstore.New()
	defer objects.Close()
	for _, tc := range []struct {
		name, message string
		gone          bool
		rejectsURL    bool // the rejects in a "bucket" too (file://): kept in the state directory
	}{
		{name: "resumes", message: "the upload after its"},
		{name: "resumes, rejects in a bucket", message: "the upload after its", rejectsURL: true},
		{name: "upload gone", gone: true, message: "starting over: the upload of the checkpoint cannot be continued: no such upload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			store := &memStore{uploads: map[string]*memUpload{}}
			rejects := filepath.Join(dir, "rejects.jsonl")
			config := func(delay time.Duration, log *lockedBuf) Config {
				cfg, _ := resumeConfig("mem://bkt/out.mldf", delay, true, log)
				cfg.RejectsPath = rejects
				if tc.rejectsURL {
					cfg.RejectsPath, cfg.Store = "file://"+rejects, objects
				}
				ctx := context.Background()
				cfg.Sink = pagewriter.Multipart(ctx, cfg.Output, store.start, opt)
				cfg.Resume.State = filepath.Join(dir, "state", "out.mldf")
				cfg.Resume.Reattach = store.reattach(opt)
				return cfg
			}
			os.Mkdir(filepath.Join(dir, "state"), 0o700)
			var log1 lockedBuf
			cfg := config(2*time.Millisecond, &log1)
			// Interrupt once a checkpoint counts uploaded parts.
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { _, err := Run(ctx, cfg); done <- err }()
			for !uploadedTwo(log1.String()) {
				select {
				case err := <-done:
					cancel()
					t.Fatalf("the run ended before a checkpoint with 2 uploaded parts: %v\n%s", err, log1.String())
				case <-time.After(2 * time.Millisecond):
				}
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v", err)
			}
			if store.object != nil || len(store.uploads) != 1 {
				t.Fatalf("after the interruption: object %v, %d uploads (want none, 1 kept)", store.object != nil, len(store.uploads))
			}
			if tc.gone {
				store.uploads = map[string]*memUpload{}
			}
			if tc.rejectsURL {
				if fi, err := os.Stat(filepath.Join(dir, "state", ".out.mldf"+RejectsPartialSuffix)); err != nil || fi.Size() == 0 {
					t.Fatalf("the rejects so far are not in the state directory: %v", err)
				}
			}
			var log2 lockedBuf
			mustRun(t, config(0, &log2))
			if !strings.Contains(log2.String(), tc.message) {
				t.Errorf("the run's lines lack %q:\n%s", tc.message, log2.String())
			}
			if !bytes.Equal(store.object, want) {
				t.Errorf("the object differs from a local run's file (%d and %d bytes)", len(store.object), len(want))
			}
			if got, err := os.ReadFile(rejects); err != nil || !bytes.Equal(got, wantRejects) {
				t.Errorf("the rejects (%d bytes, %v) differ from a local run's (%d bytes)", len(got), err, len(wantRejects))
			}
			if len(store.uploads) != 0 {
				t.Errorf("%d uploads left", len(store.uploads))
			}
			if left, _ := os.ReadDir(filepath.Join(dir, "state")); len(left) != 0 {
				t.Errorf("the state directory holds %d files after the run", len(left))
			}
		})
	}
}
