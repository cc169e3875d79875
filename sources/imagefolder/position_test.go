package imagefolder

import (
	"errors"
	"slices"
	"testing"

	"github.com/mldf/convert/sources"
)

// TestResume: Resume(n) gives the samples after the first n, with their labels and the
// source's skipped-file counts; an n past the end is refused.
func TestResume(t *testing.T) {
	root := t.TempDir()
	touch(t, root, "b/2.png", "a/1.jpg", "a/0.jpg", "b/x.svg", "c/5.png", "a/sub/3.png")
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := collect(t, s)
	for n := range int64(len(all) + 1) {
		r, err := s.Resume(n, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := collect(t, r)
		if !slices.Equal(keys(got), keys(all[n:])) {
			t.Errorf("Resume(%d): %v, want %v", n, keys(got), keys(all[n:]))
		}
		for i := range got {
			if got[i].Values[1].Value.Int != all[n+int64(i)].Values[1].Value.Int {
				t.Errorf("Resume(%d): sample %d has label %v, want %v", n, i, got[i].Values[1], all[n+int64(i)].Values[1])
			}
		}
		if sk := sources.SkippedFiles(r); sk[".svg"] != 1 {
			t.Errorf("Resume(%d) lost the skipped files: %v", n, sk)
		}
	}
	if _, err := s.Resume(int64(len(all)+1), nil); !errors.Is(err, sources.ErrPosition) {
		t.Errorf("Resume past the end: %v", err)
	}
}
