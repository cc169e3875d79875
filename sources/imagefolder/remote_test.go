package imagefolder

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mldf/convert/internal/s3test"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
)

// got is what a source yields, paths made relative.
type got struct {
	Classes []string
	Flat    bool
	Keys    []string
	Labels  []int64
	Data    [][]byte
	Ignored []string
}

func collectSource(t *testing.T, s *Source, root string) got {
	t.Helper()
	g := got{Classes: s.Classes(), Flat: s.Flat()}
	for _, p := range s.Ignored() {
		g.Ignored = append(g.Ignored, strings.TrimPrefix(filepath.ToSlash(p), root))
	}
	err := s.Run(context.Background(), func(smp sample.Sample) error {
		if smp.Err != nil {
			t.Fatalf("sample %s: %v", smp.Key, smp.Err)
		}
		g.Keys = append(g.Keys, smp.Key)
		img, _ := smp.Get(ColumnImage)
		b, err := img.Load()
		if err != nil {
			t.Fatal(err)
		}
		g.Data = append(g.Data, b)
		if v, ok := smp.Get(ColumnLabel); ok && v.Kind == sample.KindInt {
			g.Labels = append(g.Labels, v.Int)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRemoteSameAsLocal: a folder in a bucket gives the samples of the same folder on disk,
// in the same order (names chosen so that path order and class-first order differ), with
// the listing spilled to disk.
func TestRemoteSameAsLocal(t *testing.T) {
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	c := objstore.New()
	defer c.Close()
	dir := t.TempDir()
	files := []string{
		"a/x.jpg", "a/b/y.png", "a/b.jpg", "a-b/z.jpg", "a-b/.hidden.jpg", "a.b/q.JPG",
		"c/d/e/f.png", "c/notes.txt", ".git/h.jpg", "root.jpg", "c/.cache/i.jpg", "zz/readme.md",
	}
	for i, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		data := bytes.Repeat([]byte{byte(i)}, 10+i)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteFile(context.Background(), "s3://bkt/ds/"+f, data); err != nil {
			t.Fatal(err)
		}
	}
	for _, layout := range []Layout{LayoutAuto, LayoutClasses, LayoutFlat} {
		ls, err := New(dir, Options{Layout: layout, memLimit: 64})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := New("s3://bkt/ds", Options{Layout: layout, memLimit: 64, Store: c, Prefetch: 3})
		if err != nil {
			t.Fatal(err)
		}
		want, have := collectSource(t, ls, dir+"/"), collectSource(t, rs, "s3://bkt/ds/")
		if !reflect.DeepEqual(want, have) {
			t.Errorf("layout %d:\nbucket %+v\nlocal  %+v", layout, have, want)
		}
		if rs.Len() != ls.Len() || len(want.Keys) == 0 {
			t.Errorf("layout %d: Len %d, local %d", layout, rs.Len(), ls.Len())
		}
		// A range (sharded runs) of the bucket's source.
		r2, err := rs.Range(1, 3)
		if err != nil {
			t.Fatal(err)
		}
		if g := collectSource(t, r2.(*Source), ""); !reflect.DeepEqual(g.Keys, want.Keys[1:3]) {
			t.Errorf("layout %d: Range(1, 3) keys %q, want %q", layout, g.Keys, want.Keys[1:3])
		}
	}

	// An object deleted after the listing is a sample error naming its URL.
	rs, err := New("s3://bkt/ds", Options{Store: c})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(context.Background(), "s3://bkt/ds/a/x.jpg"); err != nil {
		t.Fatal(err)
	}
	var bad []error
	rs.Run(context.Background(), func(smp sample.Sample) error {
		if smp.Err != nil {
			bad = append(bad, smp.Err)
		}
		return nil
	})
	if len(bad) != 1 || !strings.Contains(bad[0].Error(), "s3://bkt/ds/a/x.jpg") {
		t.Fatalf("sample errors %v", bad)
	}
	if _, err := New("s3://bkt/none", Options{Store: c}); err == nil || !strings.Contains(err.Error(), "s3://bkt/none") {
		t.Fatalf("empty prefix: %v", err)
	}
}
