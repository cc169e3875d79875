package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"
)

// conformance runs the behaviour every store must have against base (a URL or directory
// ending in "/", empty), with c configured for it.
func conformance(t *testing.T, c *Client, base string) {
	ctx := context.Background()
	if l, _ := Parse(base); l.IsLocal() { // a bucket has no directories to make
		for _, d := range []string{"rt", "x", "mp", "ab", "names", "names/train", "names/train/cat"} {
			if err := os.Mkdir(l.Key+d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("round trip", func(t *testing.T) {
		for _, n := range []int{0, 1, 4095, 300_001, 9<<20 + 3} {
			url := fmt.Sprintf("%srt/obj-%d", base, n)
			want := testData(n, uint64(n))
			if err := c.WriteFile(ctx, url, want); err != nil {
				t.Fatalf("write %d: %v", n, err)
			}
			if got := readAll(t, c, url); !bytes.Equal(got, want) {
				t.Fatalf("%s: read %d bytes, differ from the %d written", url, len(got), n)
			}
			ra, err := c.OpenReaderAt(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			if n > 10 {
				buf := make([]byte, 10)
				if _, err := ra.ReadAt(buf, int64(n-10)); err != nil || !bytes.Equal(buf, want[n-10:]) {
					t.Fatalf("ReadAt tail: %v", err)
				}
			}
			ra.Close()
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := c.Stat(ctx, base+"nothing/here")
		wantErr(t, err, ErrNotFound, base+"nothing/here")
		_, err = c.Open(ctx, base+"nothing/here")
		wantErr(t, err, ErrNotFound, base+"nothing/here")
		_, err = c.Expand(ctx, []string{base + "nothing/*.tar"})
		wantErr(t, err, ErrPattern, base+"nothing/*.tar")
	})
	t.Run("changed", func(t *testing.T) {
		url := base + "changed.bin"
		if err := c.WriteFile(ctx, url, testData(1000, 1)); err != nil {
			t.Fatal(err)
		}
		ra, err := c.OpenReaderAt(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer ra.Close()
		if err := c.WriteFile(ctx, url, testData(1000, 2)); err != nil {
			t.Fatal(err)
		}
		if _, err := ra.ReadAt(make([]byte, 10), 0); ra.f == nil {
			wantErr(t, err, ErrChanged, url)
		}
	})
	t.Run("expand", func(t *testing.T) {
		for i := range 40 {
			if err := c.WriteFile(ctx, fmt.Sprintf("%sx/s-%03d.tar", base, i), testData(i, 1)); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			pattern string
			n       int
		}{{"x/s-{000..002}.tar", 3}, {"x/s-00?.tar", 10}, {"x/*.tar", 40}, {"x/s-{000..039}.tar", 40}, {"x/s-0[12]*", 20}} {
			got, err := c.Expand(ctx, []string{base + tc.pattern})
			if err != nil || len(got) != tc.n {
				t.Fatalf("%s: %d, %v", tc.pattern, len(got), err)
			}
			for i := 1; i < len(got); i++ {
				if got[i-1].URL >= got[i].URL {
					t.Fatalf("%s: not in order: %s, %s", tc.pattern, got[i-1].URL, got[i].URL)
				}
			}
		}
		_, err := c.Expand(ctx, []string{base + "x/s-{038..040}.tar"})
		wantErr(t, err, ErrNotFound, base+"x/s-040.tar")
	})
	t.Run("multipart", func(t *testing.T) {
		url := base + "mp/out.bin"
		src := base + "mp/src.bin"
		srcData := testData(MinPartSize+999, 4)
		if err := c.WriteFile(ctx, src, srcData); err != nil {
			t.Fatal(err)
		}
		u, err := c.NewUpload(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		p1, p4 := testData(MinPartSize, 1), testData(777, 4)
		if err := u.UploadPart(ctx, 4, p4); err != nil {
			t.Fatal(err)
		}
		if err := u.CopyPart(ctx, 3, src, 0, int64(len(srcData))); err != nil { // whole object
			t.Fatal(err)
		}
		if err := u.CopyPart(ctx, 2, src, 500, MinPartSize); err != nil { // a range
			t.Fatal(err)
		}
		if err := u.UploadPart(ctx, 1, p1); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Stat(ctx, url); !errors.Is(err, ErrNotFound) {
			t.Fatalf("visible before Complete: %v", err)
		}
		if err := u.Complete(ctx); err != nil {
			t.Fatal(err)
		}
		want := slices.Concat(p1, srcData[500:500+MinPartSize], srcData, p4)
		if got := readAll(t, c, url); !bytes.Equal(got, want) {
			t.Fatal("completed object differs")
		}
		var listed []string
		for a, err := range c.List(ctx, base+"mp/") {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, a.URL)
		}
		if !slices.Equal(listed, []string{url, src}) {
			t.Fatalf("listing after Complete: %q", listed)
		}
	})
	t.Run("abort", func(t *testing.T) {
		url := base + "ab/out.bin"
		u, err := c.NewUpload(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.UploadPart(ctx, 1, testData(1000, 1)); err != nil {
			t.Fatal(err)
		}
		if err := u.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Stat(ctx, url); !errors.Is(err, ErrNotFound) {
			t.Fatalf("aborted upload left an object: %v", err)
		}
		// Killed runs leave uploads; the next run finds and aborts them.
		for range 2 {
			u, err := c.NewUpload(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			if err := u.UploadPart(ctx, 1, testData(1000, 1)); err != nil {
				t.Fatal(err)
			}
		}
		inc, err := c.ListIncomplete(ctx, base+"ab/")
		if err != nil || len(inc) < 1 {
			t.Fatalf("ListIncomplete = %+v, %v", inc, err)
		}
		for _, i := range inc {
			if i.URL != url {
				t.Fatalf("incomplete upload to %s, want %s", i.URL, url)
			}
		}
		if _, err := c.AbortIncomplete(ctx, url, 0); err != nil {
			t.Fatal(err)
		}
		if inc, err := c.ListIncomplete(ctx, base+"ab/"); err != nil || len(inc) != 0 {
			t.Fatalf("after AbortIncomplete: %+v, %v", inc, err)
		}
		if _, err := c.Stat(ctx, url); !errors.Is(err, ErrNotFound) {
			t.Fatalf("AbortIncomplete left an object: %v", err)
		}
		var n int
		for _, err := range c.List(ctx, base+"ab/") {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 0 {
			t.Fatalf("%d objects left under ab/", n)
		}
	})
	t.Run("small files", func(t *testing.T) {
		// A side file in a directory that does not exist yet: MakeParents, then a whole write
		// read back with ReadFile; an empty one too; a larger one is refused by size.
		url := base + "small/deeper/record.json"
		if err := c.MakeParents(ctx, url); err != nil {
			t.Fatal(err)
		}
		want := testData(5000, 9)
		if err := c.WriteFile(ctx, url, want); err != nil {
			t.Fatal(err)
		}
		if got, err := c.ReadFile(ctx, url, 5000); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("ReadFile: %d bytes, %v", len(got), err)
		}
		_, err := c.ReadFile(ctx, url, 4999)
		wantErr(t, err, ErrTooLarge, url)
		empty := base + "small/empty"
		if err := c.WriteFile(ctx, empty, nil); err != nil {
			t.Fatal(err)
		}
		if got, err := c.ReadFile(ctx, empty, 10); err != nil || len(got) != 0 {
			t.Fatalf("ReadFile of an empty object: %q, %v", got, err)
		}
		_, err = c.ReadFile(ctx, base+"small/none", 10)
		wantErr(t, err, ErrNotFound, base+"small/none")
		// File is the local file behind a ReaderAt, for copy_file_range; nil in a bucket.
		ra, err := c.OpenReaderAt(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer ra.Close()
		if l, _ := Parse(base); (ra.File() != nil) != l.IsLocal() {
			t.Fatalf("File() = %v for %s", ra.File(), url)
		}
		// Remove, then Remove again: a missing object is not an error.
		for range 2 {
			if err := c.Remove(ctx, url); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("names", func(t *testing.T) { conformNames(t, c, base) })
	_ = io.EOF
}

// conformNames checks the operations that let callers treat a local name and a bucket URL
// alike: a folder's listing, identities, names relative to a file, and the capabilities of
// what is opened (a local file or an object to fetch).
func conformNames(t *testing.T, c *Client, base string) {
	ctx := context.Background()
	local := false
	if l, _ := Parse(base); l.IsLocal() {
		local = true
	}
	root := base + "names/train"
	files := []string{"cat/1.jpg", "cat/2.jpg", "dog.jpg"}
	for i, f := range files {
		if err := c.MakeParents(ctx, root+"/"+f); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteFile(ctx, root+"/"+f, testData(10+i, uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	// A folder lists alike for both, names relative to it; Dir is the local capability.
	for _, spelled := range []string{root, root + "/"} {
		f := FolderOf(spelled)
		if f.String() != root {
			t.Errorf("FolderOf(%s).String() = %s", spelled, f.String())
		}
		var got []string
		for a, err := range f.List(ctx, c) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, f.Rel(a.URL))
		}
		if !slices.Equal(got, files) {
			t.Errorf("List(%s) = %v, want %v", spelled, got, files)
		}
		if _, ok := f.Dir(); ok != local {
			t.Errorf("FolderOf(%s).Dir() ok = %v", spelled, ok)
		}
	}
	// One object however it is spelled: the same Key and Identity.
	obj := root + "/cat/1.jpg"
	other := root + "/cat/../cat/1.jpg"
	if !local {
		l, _ := Parse(obj)
		other = l.Scheme + "://" + l.Bucket + "/" + l.Key // az:// spelled azblob://
	}
	k1, err1 := Key(obj)
	k2, err2 := Key(other)
	if err1 != nil || err2 != nil || k1 != k2 {
		t.Errorf("Key(%s) = %q, %v; Key(%s) = %q, %v", obj, k1, err1, other, k2, err2)
	}
	id1, err1 := Identify(obj)
	id2, err2 := Identify(other)
	if err1 != nil || err2 != nil || !id1.Same(id2) || id1.Object == local {
		t.Errorf("Identify(%s) = %+v, %v; Identify(%s) = %+v, %v", obj, id1, err1, other, id2, err2)
	}
	if (id1.File != nil) != local {
		t.Errorf("Identify(%s).File = %v", obj, id1.File)
	}
	if id3, err := Identify(root + "/dog.jpg"); err != nil || id3.Same(id1) {
		t.Errorf("Identify of another object: %+v, %v", id3, err)
	}
	// A name written in a file of the folder resolves against the folder, in its store.
	if got, err := Ref(Dir(obj), "../dog.jpg"); err != nil {
		t.Errorf("Ref = %q, %v", got, err)
	} else if a, err := c.Stat(ctx, got); err != nil || a.Size != 12 {
		t.Errorf("Stat(Ref) = %+v, %v", a, err)
	}
	// What is opened says whether it is a local file.
	a, err := c.StatInput(ctx, obj)
	if err != nil || a.Size != 10 || a.Fetch == local {
		t.Errorf("StatInput(%s) = %+v, %v", obj, a, err)
	}
	rc, err := c.OpenCheck(ctx, obj)
	if err != nil || (rc != nil) != local {
		t.Errorf("OpenCheck(%s) = %v, %v", obj, rc, err)
	}
	if rc != nil {
		if b, err := io.ReadAll(rc); err != nil || !bytes.Equal(b, testData(10, 0)) {
			t.Errorf("OpenCheck read %d bytes, %v", len(b), err)
		}
		rc.Close()
	}
	rs, err := c.OpenRegularStream(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(rs); err != nil || !bytes.Equal(b, testData(10, 0)) {
		t.Errorf("OpenRegularStream read %d bytes, %v", len(b), err)
	}
	rs.Close()
	ra, err := c.OpenRegular(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	if (ra.File() != nil) != local {
		t.Errorf("OpenRegular(%s).File() = %v", obj, ra.File())
	}
	ra.Close()
	if _, ok := TargetOf(obj).Path(); ok != local {
		t.Errorf("TargetOf(%s).Path() ok = %v", obj, ok)
	}
	_, err = c.StatInput(ctx, root+"/none.jpg")
	if err == nil || !errors.Is(err, ErrNotFound) && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("StatInput of a missing file: %v", err)
	}
}

func TestConformanceLocal(t *testing.T) {
	c := New()
	defer c.Close()
	conformance(t, c, t.TempDir()+"/")
}

// The same suite through file:// URLs: local files named as URLs.
func TestConformanceFileURL(t *testing.T) {
	c := New()
	defer c.Close()
	conformance(t, c, "file://"+t.TempDir()+"/")
}

func TestConformanceS3(t *testing.T) {
	c, _ := newS3(t)
	conformance(t, c, "s3://bkt/")
}
