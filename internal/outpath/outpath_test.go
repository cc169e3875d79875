package outpath

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mldf/convert/objstore"
)

// A tree: in/a.jpg (the input), in/b.jpg (same size, another file), r.yaml (the recipe),
// old.mldf (an earlier output), links of every kind to them, a FIFO, a dangling link.
func tree(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(d, "in"), 0o755))
	must(os.WriteFile(filepath.Join(d, "in/a.jpg"), []byte("input a"), 0o644))
	must(os.WriteFile(filepath.Join(d, "in/b.jpg"), []byte("input b"), 0o644))
	must(os.WriteFile(filepath.Join(d, "r.yaml"), []byte("source: {}\n"), 0o644))
	must(os.WriteFile(filepath.Join(d, "old.mldf"), []byte("an older output"), 0o644))
	must(os.WriteFile(filepath.Join(d, "same-size.mldf"), []byte("7 bytes"), 0o644)) // as the inputs
	must(os.Symlink("in/a.jpg", filepath.Join(d, "link-to-input")))
	must(os.Symlink("in", filepath.Join(d, "indir")))
	must(os.Link(filepath.Join(d, "in/a.jpg"), filepath.Join(d, "hardlink")))
	must(os.Symlink("/dev/null", filepath.Join(d, "link-to-null")))
	must(os.Symlink("nowhere", filepath.Join(d, "dangling")))
	must(os.Symlink(".", filepath.Join(d, "here")))
	must(syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644))
	return d
}

func inputs(names ...string) iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		for _, n := range names {
			var size int64 = -1
			if fi, err := os.Stat(n); err == nil {
				size = fi.Size()
			}
			if !yield(n, size) {
				return
			}
		}
	}
}

// TestAliasing is the table of path aliasing cases: outputs (output, report, rejects) against
// the inputs, the recipe, each other, and files that are not regular.
func TestAliasing(t *testing.T) {
	d := tree(t)
	t.Chdir(d)
	for _, c := range []struct {
		name    string
		outs    [][2]string // role, path
		want    error       // nil: accepted
		wantMsg string
	}{
		{"new names", [][2]string{{"output", "out/x.mldf"}, {"report", "out/x.mldf.report.json"}, {"rejects", "out/x.mldf.rejects.jsonl"}}, nil, ""},
		{"an older output is replaced", [][2]string{{"output", "old.mldf"}}, nil, ""},
		{"a dangling link is a new name", [][2]string{{"output", "dangling"}}, nil, ""},
		{"an older output of the inputs' size", [][2]string{{"output", "same-size.mldf"}}, nil, ""},
		{"output is an input", [][2]string{{"output", "in/a.jpg"}}, ErrAlias, "output in/a.jpg is the input"},
		{"output is an input, spelled ./", [][2]string{{"output", "./in/../in/a.jpg"}}, ErrAlias, "is the input"},
		{"output is an input, absolute", [][2]string{{"output", filepath.Join(d, "in/a.jpg")}}, ErrAlias, "is the input"},
		{"output is a symlink to an input", [][2]string{{"output", "link-to-input"}}, ErrAlias, "is the input"},
		{"output is an input through a linked folder", [][2]string{{"output", "indir/a.jpg"}}, ErrAlias, "is the input"},
		{"output is a hard link to an input", [][2]string{{"output", "hardlink"}}, ErrAlias, "is the input"},
		{"report is an input", [][2]string{{"output", "o.mldf"}, {"report", "in/a.jpg"}}, ErrAlias, "report in/a.jpg is the input"},
		{"rejects is an input", [][2]string{{"output", "o.mldf"}, {"rejects", "in/a.jpg"}}, ErrAlias, "rejects in/a.jpg is the input"},
		{"output is the recipe", [][2]string{{"output", "r.yaml"}}, ErrAlias, "output r.yaml is the recipe"},
		{"report is the recipe", [][2]string{{"output", "o.mldf"}, {"report", "./r.yaml"}}, ErrAlias, "is the recipe"},
		{"report is the output", [][2]string{{"output", "o.mldf"}, {"report", "o.mldf"}}, ErrAlias, "report o.mldf is also the output"},
		{"report is the output, existing", [][2]string{{"output", "old.mldf"}, {"report", "old.mldf"}}, ErrAlias, "is also the output"},
		{"report is the output through a linked folder", [][2]string{{"output", "new/o.mldf"}, {"report", "here/new/o.mldf"}}, ErrAlias, "is also the output"},
		{"rejects is the report", [][2]string{{"output", "o.mldf"}, {"report", "x.json"}, {"rejects", "x.json"}}, ErrAlias, "rejects x.json is also the report"},
		{"output /dev/null", [][2]string{{"output", "/dev/null"}}, ErrNotRegular, "a character device"},
		{"report /dev/null", [][2]string{{"output", "o.mldf"}, {"report", "/dev/null"}}, ErrNotRegular, "report /dev/null"},
		{"output a symlink to /dev/null", [][2]string{{"output", "link-to-null"}}, ErrNotRegular, "a character device"},
		{"output a directory", [][2]string{{"output", "in"}}, ErrNotRegular, "a directory"},
		{"output a directory, trailing slash", [][2]string{{"output", "in/"}}, ErrNotRegular, "a directory"},
		{"output a FIFO", [][2]string{{"output", "fifo"}}, ErrNotRegular, "a named pipe"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s Set
			var err error
			for _, o := range c.outs {
				if err = s.Add(o[0], o[1]); err != nil {
					break
				}
			}
			if err == nil {
				err = s.Check("recipe", "r.yaml")
			}
			if err == nil {
				err = s.CheckInputs("input", inputs("in/a.jpg", "in/b.jpg", "in/missing.jpg"))
			}
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != nil && !errors.Is(err, c.want):
				t.Fatalf("got %v, want %v", err, c.want)
			case c.want != nil && !strings.Contains(err.Error(), c.wantMsg):
				t.Fatalf("message %q lacks %q", err, c.wantMsg)
			}
			if err != nil {
				t.Log(err)
			}
		})
	}
}

// CheckInputs stats only the inputs of an existing output's size: of a million inputs, the
// thousand of that size.
func TestCheckInputsFiltersBySize(t *testing.T) {
	d := tree(t)
	var s Set
	if err := s.Add("output", filepath.Join(d, "old.mldf")); err != nil {
		t.Fatal(err)
	}
	stats := 0
	s.identify = func(name string) (objstore.Identity, error) { stats++; return objstore.Identify(name) }
	size := int64(len("an older output"))
	all := func(yield func(string, int64) bool) {
		for i := range 1_000_000 {
			if !yield(fmt.Sprintf("%s/in/%d.jpg", d, i), int64(i%1000)) {
				return
			}
		}
	}
	if err := s.CheckInputs("input", all); err != nil {
		t.Fatal(err)
	}
	if want := 1_000_000 / 1000; stats != want || size >= 1000 {
		t.Fatalf("%d inputs looked at, want %d", stats, want)
	}
	// The same set with the output among them.
	err := s.CheckInputs("input", inputs(filepath.Join(d, "in/a.jpg"), filepath.Join(d, "old.mldf")))
	if !errors.Is(err, ErrAlias) {
		t.Fatalf("got %v", err)
	}
}

// With no existing output, no input is looked at.
func TestCheckInputsNewOutputs(t *testing.T) {
	var s Set
	if err := s.Add("output", filepath.Join(t.TempDir(), "new.mldf")); err != nil {
		t.Fatal(err)
	}
	called := false
	err := s.CheckInputs("input", func(yield func(string, int64) bool) { called = true })
	if err != nil || called {
		t.Fatalf("err %v, inputs walked %v", err, called)
	}
}

func TestAddDir(t *testing.T) {
	d := tree(t)
	for _, c := range []struct {
		dir string
		ok  bool
	}{{filepath.Join(d, "in"), true}, {filepath.Join(d, "new"), true}, {filepath.Join(d, "r.yaml"), false}, {"/dev/null", false}} {
		var s Set
		err := s.AddDir("export directory", c.dir)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.dir, err)
		}
		if err == nil {
			if err := s.Check("input", filepath.Join(d, "in/a.jpg")); err != nil {
				t.Errorf("%s: a file inside the directory: %v", c.dir, err)
			}
		}
	}
}

// Bucket URLs are compared by store, bucket and key (az:// is azblob://); file:// URLs are
// the local paths they name.
func TestURLs(t *testing.T) {
	d := tree(t)
	cases := []struct {
		outs    [][2]string // role, name
		inputs  []string
		wantErr string
	}{
		{outs: [][2]string{{"output", "s3://b/x.mldf"}, {"report", "s3://b/x.mldf.report.json"}}, inputs: []string{"s3://b/in/a.jpg", "s3://other/x.mldf", "gs://b/x.mldf"}},
		{outs: [][2]string{{"output", "s3://b/x.mldf"}, {"report", "s3://b/x.mldf"}}, wantErr: "report s3://b/x.mldf is also the output"},
		{outs: [][2]string{{"output", "az://c/x.mldf"}, {"report", "azblob://c/x.mldf"}}, wantErr: "is also the output"},
		{outs: [][2]string{{"output", "s3://b/x.mldf"}}, inputs: []string{"s3://b/in/a.jpg", "s3://b/x.mldf"}, wantErr: "output s3://b/x.mldf is the input s3://b/x.mldf"},
		{outs: [][2]string{{"output", "file://" + filepath.Join(d, "new.mldf")}, {"report", filepath.Join(d, "new.mldf")}}, wantErr: "is also the output"},
		{outs: [][2]string{{"output", "file://" + filepath.Join(d, "hardlink")}}, inputs: []string{filepath.Join(d, "in/a.jpg")}, wantErr: "is the input"},
		{outs: [][2]string{{"output", filepath.Join(d, "hardlink")}}, inputs: []string{"file://" + filepath.Join(d, "in/a.jpg")}, wantErr: "is the input"},
	}
	for i, c := range cases {
		var s Set
		var err error
		for _, o := range c.outs {
			if err = s.Add(o[0], o[1]); err != nil {
				break
			}
		}
		if err == nil {
			err = s.CheckInputs("input", func(yield func(string, int64) bool) {
				for _, in := range c.inputs {
					if !yield(in, 7) {
						return
					}
				}
			})
		}
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("case %d: %v", i, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrAlias)):
			t.Errorf("case %d: got %v, want %q", i, err, c.wantErr)
		}
	}
}

// An output URL that objstore refuses is an error naming it, never a local relative path
// (s3://bkt/a/../x.mldf once created the local directory ./s3:/bkt).
func TestMalformedURLOutput(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.MkdirAll("s3:/bkt/a", 0o755); err != nil { // what a local reading would use
		t.Fatal(err)
	}
	for _, bad := range []string{"s3://bkt/a/../x.mldf", "s3:///x.mldf", "s3://bkt/x__0x41.mldf",
		"s3://bkt/" + strings.Repeat("k", 1025), "gs://bkt/a/../x", "http://host/x.mldf", "file://host/x.mldf"} {
		var s Set
		err := s.Add("output", bad)
		if !errors.Is(err, objstore.ErrBadURL) || !strings.Contains(err.Error(), "output") {
			t.Errorf("Add(%.40q) = %v, want ErrBadURL", bad, err)
		}
	}
	// Inputs: a malformed URL is no output's (the command refuses it where it reads it).
	var s Set
	if err := s.Add("output", "s3://bkt/x.mldf"); err != nil {
		t.Fatal(err)
	}
	if err := s.Check("input", "s3://bkt/a/../x.mldf"); err != nil {
		t.Errorf("Check: %v", err)
	}
}
