package recipe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
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
