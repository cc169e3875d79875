package objstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	mpart "github.com/mldf/convert/pagewriter/multipart"
)

// resumeCheck: a multipart.Sink writing through an Upload is dropped (as by a crash) after
// its streamed parts 2 and 3 are in the store; ResumeUpload lists them, mpart.Resume
// continues from the caller's checkpoint (part 2: part 3, uploaded after it, is forgotten
// and uploaded again) and the object is the one-shot upload's bytes. A checkpoint the part
// list does not match (a part missing, a part of another size) is ErrResume; an unknown
// upload is ErrNotFound. It runs against the store conformance's servers (the GCS and Azure
// emulators, from their conformance tests), with its own client: 5 MiB parts under -race
// on a loaded machine want a longer stall timeout than the conformance's 2 s.
func resumeCheck(t *testing.T, base string) {
	c := New(testOpts(WithStallTimeout(30 * time.Second))...)
	defer c.Close()
	ctx := context.Background()
	const part = MinPartSize
	data := testData(3*part+777, 11)
	url := base + "resume/obj.bin"
	opt := mpart.Options{PartSize: part, Buffers: 2, ScratchDir: t.TempDir()}

	// The run that is killed: the streamed bytes of parts 2 and 3 are written and uploaded.
	up, err := c.NewUpload(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	id := up.ID()
	ctx1, kill := context.WithCancel(ctx)
	s, err := mpart.New(ctx1, up, url, 0, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteAt(data[part:3*part], part); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if n, end := s.Uploaded(); n == 2 {
			if end != 3*part {
				t.Fatalf("Uploaded: 2 parts ending at %d, want %d", end, 3*part)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("parts 2 and 3 were never uploaded: %v", s.Commit(int64(len(data))))
		}
	}
	kill() // no Abort, no Commit: the upload stays incomplete

	up2, parts, err := c.ResumeUpload(ctx, url, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].Number != 2 || parts[1].Number != 3 || parts[0].Size != part || parts[1].Size != part {
		t.Fatalf("listed parts %+v, want parts 2 and 3 of %d bytes", parts, part)
	}
	if up2.ID() != id {
		t.Fatalf("resumed upload ID %s, want %s", up2.ID(), id)
	}
	for _, tc := range []struct {
		name string
		opt  mpart.Options
		n    int
	}{
		{"a part missing", opt, 3},
		{"parts of another size", mpart.Options{PartSize: part + 4096, Buffers: 2, ScratchDir: opt.ScratchDir}, 1},
	} {
		if _, err := mpart.Resume(ctx, up2, url, 0, tc.opt, parts, tc.n); !errors.Is(err, mpart.ErrResume) {
			t.Fatalf("%s: Resume: %v, want ErrResume", tc.name, err)
		}
	}
	if _, _, err := c.ResumeUpload(ctx, url, "0123456789abcdef"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown upload: %v, want ErrNotFound", err)
	}

	// The checkpoint said one part: part 3 is forgotten and written again.
	s2, err := mpart.Resume(ctx, up2, url, 0, opt, parts, 1)
	if err != nil {
		t.Fatal(err)
	}
	from := s2.ResumeOffset()
	if from != 2*part {
		t.Fatalf("ResumeOffset %d, want %d", from, 2*part)
	}
	if _, err := s2.WriteAt(data[from:], from); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.WriteAt(data[:part], 0); err != nil { // the finalizer's part 1
		t.Fatal(err)
	}
	if err := s2.Commit(int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c, url); !bytes.Equal(got, data) {
		t.Fatalf("resumed upload: %d bytes, differ from the %d of a one-shot upload", len(got), len(data))
	}
	if inc, err := c.ListIncomplete(ctx, base+"resume/"); err != nil || len(inc) != 0 {
		t.Fatalf("left incomplete: %+v, %v", inc, err)
	}
}

func TestResumeLocal(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(dir+"/resume", 0o755); err != nil {
		t.Fatal(err)
	}
	resumeCheck(t, dir+"/")
}

func TestResumeS3(t *testing.T) {
	newS3(t)
	resumeCheck(t, "s3://bkt/")
}
