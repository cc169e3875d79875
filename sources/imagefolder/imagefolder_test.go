package imagefolder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"testing"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

func touch(t *testing.T, root string, rels ...string) {
	t.Helper()
	for _, r := range rels {
		p := filepath.Join(root, filepath.FromSlash(r))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(r), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func collect(t *testing.T, s sources.Source) []sample.Sample {
	t.Helper()
	var out []sample.Sample
	if err := s.Run(context.Background(), func(x sample.Sample) error { out = append(out, x); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(ss []sample.Sample) []string {
	var k []string
	for _, s := range ss {
		k = append(k, s.Key)
	}
	return k
}

func TestClassesOrderAndLabels(t *testing.T) {
	root := t.TempDir()
	touch(t, root,
		"dog/b.JPG", "dog/a.png", "dog/sub/z.jpeg", "dog/sub-2/c.webp", "dog/sub/deeper/q.jpg", "dog/z.jpg", "dog/notes.txt",
		"cat/x.Png", "cat/.hidden.jpg", "ant/deep/er/e.gif",
		"empty/readme.md", "stray.jpg", "README.md")
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Classes(), []string{"ant", "cat", "dog", "empty"}; !reflect.DeepEqual(got, want) {
		t.Errorf("classes %v, want %v", got, want)
	}
	ss := collect(t, s)
	// torchvision order, sorted(os.walk(...)): directories in sorted path order ("dog/sub" <
	// "dog/sub-2" < "dog/sub/deeper"), each directory's files sorted by name.
	want := []string{"ant/deep/er/e.gif", "cat/x.Png", "dog/a.png", "dog/b.JPG", "dog/z.jpg", "dog/sub/z.jpeg", "dog/sub-2/c.webp", "dog/sub/deeper/q.jpg"}
	if got := keys(ss); !reflect.DeepEqual(got, want) {
		t.Errorf("order %v\nwant %v", got, want)
	}
	labels := []int64{0, 1, 2, 2, 2, 2, 2, 2}
	for i, x := range ss {
		if x.Index != int64(i) || x.Value(ColumnLabel).Int != labels[i] || x.Value(ColumnLabel).Kind != sample.KindInt {
			t.Errorf("%s: index %d label %+v", x.Key, x.Index, x.Value(ColumnLabel))
		}
		img := x.Value(ColumnImage)
		if img.Kind != sample.KindFile || img.Path != filepath.Join(root, filepath.FromSlash(x.Key)) || x.Origin != img.Path {
			t.Errorf("%s: image value %+v", x.Key, img)
		}
		if x.InputBytes != int64(len(x.Key)) {
			t.Errorf("%s: InputBytes %d", x.Key, x.InputBytes)
		}
	}
	if s.Len() != int64(len(want)) || s.Inputs().Len() != int64(len(want)) {
		t.Errorf("Len %d, Inputs %d", s.Len(), s.Inputs().Len())
	}
	if got := s.Ignored(); len(got) != 1 || filepath.Base(got[0]) != "stray.jpg" {
		t.Errorf("ignored %v", got)
	}
	// Deterministic across calls.
	s2, _ := New(root, Options{})
	if !reflect.DeepEqual(keys(collect(t, s2)), want) {
		t.Error("second walk differs")
	}
}

func TestFlat(t *testing.T) {
	root := t.TempDir()
	touch(t, root, "b.jpg", "a.PNG", "c.txt")
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ss := collect(t, s)
	if !s.Flat() || !reflect.DeepEqual(keys(ss), []string{"a.PNG", "b.jpg"}) {
		t.Fatalf("flat %v: %v", s.Flat(), keys(ss))
	}
	if ss[0].Has(ColumnLabel) || !reflect.DeepEqual(s.Columns(), []string{"image", "path"}) {
		t.Error("flat samples carry a label")
	}
	// Forced flat over class folders: recursive, no labels.
	touch(t, root, "sub/d.jpg")
	s, _ = New(root, Options{Layout: LayoutFlat, Extensions: []string{"jpg"}})
	if got := keys(collect(t, s)); !reflect.DeepEqual(got, []string{"b.jpg", "sub/d.jpg"}) {
		t.Errorf("forced flat: %v", got)
	}
}

func TestRangeAndCancel(t *testing.T) {
	root := t.TempDir()
	touch(t, root, "a/1.jpg", "a/2.jpg", "b/3.jpg", "b/4.jpg")
	s, _ := New(root, Options{})
	r, err := s.Range(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	ss := collect(t, r)
	if !reflect.DeepEqual(keys(ss), []string{"a/2.jpg", "b/3.jpg"}) || ss[0].Index != 0 || ss[1].Value(ColumnLabel).Int != 1 {
		t.Errorf("range: %v", ss)
	}
	if r.Len() != 2 || s.Len() != 4 {
		t.Errorf("len %d %d", r.Len(), s.Len())
	}
	for _, bad := range [][2]int{{-1, 2}, {3, 2}, {0, 5}} {
		if _, err := s.Range(bad[0], bad[1]); !errors.Is(err, ErrRange) {
			t.Errorf("range %v: %v", bad, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = s.Run(ctx, func(sample.Sample) error { n++; cancel(); return nil })
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("cancel: %v after %d", err, n)
	}
	stop := errors.New("stop")
	if err := s.Run(context.Background(), func(sample.Sample) error { return stop }); err != stop {
		t.Errorf("emit error: %v", err)
	}
}

func TestSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	root := t.TempDir()
	other := t.TempDir()
	touch(t, other, "x.jpg")
	touch(t, root, "a/1.jpg")
	// A symlinked class folder and a symlinked file are followed.
	if err := os.Symlink(other, filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "x.jpg"), filepath.Join(root, "a", "2.jpg")); err != nil {
		t.Fatal(err)
	}
	// A broken link becomes a sample with Err.
	if err := os.Symlink(filepath.Join(root, "gone.jpg"), filepath.Join(root, "a", "3.jpg")); err != nil {
		t.Fatal(err)
	}
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ss := collect(t, s)
	if got := keys(ss); !reflect.DeepEqual(got, []string{"a/1.jpg", "a/2.jpg", "a/3.jpg", "b/x.jpg"}) {
		t.Fatalf("keys %v", got)
	}
	if ss[1].Err != nil || ss[1].InputBytes != 5 || !errors.Is(ss[2].Err, ErrBrokenLink) {
		t.Errorf("link samples: %+v / %v", ss[1], ss[2].Err)
	}
	// A loop: a/loop -> a.
	if err := os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "a", "loop")); err != nil {
		t.Fatal(err)
	}
	if _, err := New(root, Options{}); !errors.Is(err, ErrSymlinkLoop) {
		t.Errorf("loop: %v", err)
	}
	os.Remove(filepath.Join(root, "a", "loop"))
	// A loop back to the root.
	if err := os.Symlink(root, filepath.Join(root, "a", "up")); err != nil {
		t.Fatal(err)
	}
	if _, err := New(root, Options{}); !errors.Is(err, ErrSymlinkLoop) {
		t.Errorf("loop to root: %v", err)
	}
}

func TestUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permissions are not enforced")
	}
	root := t.TempDir()
	touch(t, root, "a/1.jpg", "a/locked/2.jpg")
	locked := filepath.Join(root, "a", "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	if _, err := New(root, Options{}); !errors.Is(err, ErrUnreadable) {
		t.Errorf("unreadable dir: %v", err)
	}
}

func TestBadRoot(t *testing.T) {
	if _, err := New(filepath.Join(t.TempDir(), "missing"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	f := filepath.Join(t.TempDir(), "f.jpg")
	os.WriteFile(f, nil, 0o644)
	if _, err := New(f, Options{}); !errors.Is(err, ErrNotDir) {
		t.Errorf("file root: %v", err)
	}
}

// TestDemoDataset reads the shipped demo folder.
func TestDemoDataset(t *testing.T) {
	s, err := New("../../testdata/images", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Classes(); !reflect.DeepEqual(got, []string{"photos", "skimage", "tango_apps", "tango_emotes"}) {
		t.Errorf("classes %v", got)
	}
	if s.Len() != 25 {
		t.Errorf("len %d", s.Len())
	}
	var total int64
	s.Inputs().Each(func(_ int64, in sources.Input) error { total += in.Size; return nil })
	if total < 100<<10 || total > 1<<20 {
		t.Errorf("demo set is %d bytes", total)
	}
}

// TestSpilledList: a list too large for memory (here 512 bytes) is sorted on disk, with the
// same samples in the same order, and ranges of it too.
func TestSpilledList(t *testing.T) {
	root := t.TempDir()
	var rels []string
	for i := range 300 {
		rels = append(rels, fmt.Sprintf("c%d/sub%s/img%03d.jpg", i%3, []string{"", "-2", "/deeper"}[i%3], 299-i))
	}
	rels = append(rels, "c0/a.jpg", "c2/z.png")
	touch(t, root, rels...)
	mem, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	disk, err := New(root, Options{memLimit: 512, TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	a, b := collect(t, mem), collect(t, disk)
	if !reflect.DeepEqual(a, b) || len(a) != 302 {
		t.Fatalf("spilled list differs: %d vs %d samples", len(a), len(b))
	}
	if !sort.SliceIsSorted(a, func(i, j int) bool { return a[i].Value(ColumnLabel).Int < a[j].Value(ColumnLabel).Int }) {
		t.Fatal("labels out of order")
	}
	r, err := disk.Range(100, 250)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, r)
	for i, x := range got {
		if x.Key != a[100+i].Key || x.Index != int64(i) {
			t.Fatalf("range sample %d: %s, want %s", i, x.Key, a[100+i].Key)
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("named temporary files left: %v", entries)
	}
}
