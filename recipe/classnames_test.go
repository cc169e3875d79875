package recipe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources/h5ad"
)

// TestFolderClassNames: an image folder's class folders become the names of the int field
// that reads its label column, in label order; a recipe's names: do the same for any int
// field; a .beton output keeps the side file.
func TestFolderClassNames(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []string{"zebra", "ant", "cat dog"} {
		if err := os.MkdirAll(filepath.Join(dir, c), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join("..", "testdata", "images", "photos", "123_456.jpg"))
		if err := os.WriteFile(filepath.Join(dir, c, "a.jpg"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := "source:\n  type: images\n  path: " + dir + "\noutput: x.mldf\nfields:\n  - {name: image, type: image}\n  - {name: label, type: int}\n"
	p, err := buildYAML(t, src)
	if err != nil {
		t.Fatal(err)
	}
	cl, ok := p.Bindings[1].Field.(*encoders.ClassLabel)
	if !ok || strings.Join(cl.Names(), ",") != "ant,cat dog,zebra" {
		t.Fatalf("label is %T %v", p.Bindings[1].Field, p.Bindings[1].Field)
	}
	if p.WritesClasses() || p.Run != nil {
		t.Error("an MLDF output writes a side file")
	}
	p, err = buildYAML(t, strings.Replace(src, "output: x.mldf", "output: x.beton\nformat: beton", 1))
	if err != nil {
		t.Fatal(err)
	}
	if !p.WritesClasses() {
		t.Error("a .beton output writes no side file")
	}

	r, err := Parse([]byte("source:\n  type: images\n  path: "+dir+"\noutput: x.mldf\nfields:\n  - {name: image, type: image}\n  - {name: label, type: int, names: [a, b, c, d]}\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	r.Defaults()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err = Build(r)
	if err != nil {
		t.Fatal(err)
	}
	if cl, ok := p.Bindings[1].Field.(*encoders.ClassLabel); !ok || len(cl.Names()) != 4 {
		t.Fatalf("names: from the recipe: %T", p.Bindings[1].Field)
	}
	// Names that cannot be stored are a recipe error naming the field.
	_, err = buildYAML(t, strings.Replace(src, "type: int}", "type: int, names: [a, a]}", 1))
	if err == nil || !strings.Contains(err.Error(), `"label"`) || !strings.Contains(err.Error(), "both") {
		t.Fatalf("duplicate names: %v", err)
	}
}

// TestCellClassNames: an int field reading a categorical obs column of an h5ad file gets the
// categories as class names; a cell's category is stored as its index, a missing one as -1.
func TestCellClassNames(t *testing.T) {
	if !h5ad.Available() {
		t.Skip("built without cgo: no h5ad (libhdf5)")
	}
	p, err := buildYAML(t, "source: {type: h5ad, inputs: [../testdata/scdl/small_csr.h5ad]}\n"+
		"fields:\n  - {name: cell_type, type: int}\n  - {name: donor, type: int}\n  - {name: n, type: int, from: n_counts}\noutput: x.mldf\n")
	if err != nil {
		t.Fatal(err)
	}
	cl, ok := p.Bindings[0].Field.(*encoders.ClassLabel)
	if !ok || len(cl.Names()) == 0 {
		t.Fatalf("cell_type is %T", p.Bindings[0].Field)
	}
	if _, ok := p.Bindings[1].Field.(*encoders.ClassLabel); !ok {
		t.Fatalf("donor is %T", p.Bindings[1].Field)
	}
	if _, ok := p.Bindings[2].Field.(*encoders.ClassLabel); ok {
		t.Fatal("a numeric column became a class label")
	}
	meta := make([]byte, 8)
	for k, want := range map[string]int64{"": -1, cl.Names()[1]: 1} {
		if _, err := cl.Encode(sample.Value{Kind: sample.KindString, Bytes: []byte(k)}, meta); err != nil || mldf.GetInt(meta) != want {
			t.Errorf("%q: %d %v", k, mldf.GetInt(meta), err)
		}
	}
	if _, err := cl.Encode(sample.Value{Kind: sample.KindString, Bytes: []byte("no such type")}, meta); err == nil {
		t.Error("an unknown category was accepted")
	}
}
