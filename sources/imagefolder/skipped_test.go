package imagefolder

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/mldf/convert/sources"
)

// TestSkippedFiles checks that the files a folder source does not read are counted by
// extension (9 .svg among 111 files, a README, a file without extension), for both layouts,
// and that only the shard starting at the first image reports them.
func TestSkippedFiles(t *testing.T) {
	root := t.TempDir()
	var files []string
	for i := range 100 {
		files = append(files, fmt.Sprintf("c%d/%03d.jpg", i%3, i))
	}
	for i := range 9 {
		files = append(files, fmt.Sprintf("c%d/icon%d.SVG", i%3, i))
	}
	files = append(files, "README.md", "c1/LICENSE", "c2/.hidden.svg")
	touch(t, root, files...)
	cases := []struct {
		layout Layout
		want   map[string]int64
	}{
		{LayoutClasses, map[string]int64{".svg": 9, ".md": 1, "": 1}},
		{LayoutAuto, map[string]int64{".svg": 9, ".md": 1, "": 1}},
		{LayoutFlat, map[string]int64{".svg": 9, ".md": 1, "": 1}},
	}
	for _, c := range cases {
		s, err := New(root, Options{Layout: c.layout})
		if err != nil {
			t.Fatal(err)
		}
		if s.Len() != 100 {
			t.Errorf("layout %d: %d images", c.layout, s.Len())
		}
		if got := sources.SkippedFiles(s); !maps.Equal(got, c.want) {
			t.Errorf("layout %d: skipped %v, want %v", c.layout, got, c.want)
		}
		first, _ := s.Range(0, 50)
		second, _ := s.Range(50, 100)
		if got := sources.SkippedFiles(first); !maps.Equal(got, c.want) {
			t.Errorf("layout %d: first shard skipped %v", c.layout, got)
		}
		if got := sources.SkippedFiles(second); len(got) != 0 {
			t.Errorf("layout %d: second shard skipped %v", c.layout, got)
		}
	}
}

// TestNoClassFolders checks that a folder of images with no class subfolder, read with class
// folders (the default of convert images), is an error that says to use --flat, while an
// empty folder is not (the run decides what 0 samples means).
func TestNoClassFolders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		err   bool
	}{
		{"flat images", []string{"a.jpg", "b.png", "c.txt"}, true},
		{"images beside empty class folders", []string{"a.jpg", "empty/x.txt"}, true},
		{"empty", nil, false},
		{"class folders", []string{"a.jpg", "c/b.jpg"}, false},
	} {
		root := t.TempDir()
		touch(t, root, tc.files...)
		_, err := New(root, Options{Layout: LayoutClasses})
		if tc.err != (err != nil) {
			t.Fatalf("%s: error %v", tc.name, err)
		}
		if tc.err && (!errors.Is(err, ErrNoClasses) || !strings.Contains(err.Error(), "--flat") || !strings.Contains(err.Error(), root)) {
			t.Errorf("%s: error %v, want ErrNoClasses naming the folder and --flat", tc.name, err)
		}
		if _, err := New(root, Options{Layout: LayoutFlat}); err != nil {
			t.Errorf("%s: flat: %v", tc.name, err)
		}
	}
}
