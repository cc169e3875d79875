package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/format/mds"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources/mdssrc"
)

// TestMDSEveryKind: every field kind exports to its MDS column, in shards of the size limit,
// and reads back (through the mds source) equal to the MLDF file's values.
func TestMDSEveryKind(t *testing.T) {
	const n = 12
	path := buildAll(t, n)
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := filepath.Join(t.TempDir(), "mds")
	res, err := MDS(context.Background(), r, dir, MDSOptions{SizeLimit: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if res.Samples != n || res.Files < 2 {
		t.Fatalf("%d samples in %d shards", res.Samples, res.Files)
	}
	src, err := mdssrc.New(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	encs := map[string]string{}
	for _, c := range src.Columns() {
		encs[c.Name] = c.Encoding
	}
	want := map[string]string{"label": "int", "score": "float64", "caption": "str", "meta": "json", "blob": "bytes",
		"arr": "ndarray", "image": "png", "thumb": "jpeg", "flac": "bytes", "tokens": "bytes"}
	for name, enc := range want {
		if encs[name] != enc {
			t.Errorf("column %s: encoding %q, want %q", name, encs[name], enc)
		}
	}
	i := 0
	err = src.Run(context.Background(), func(s sample.Sample) error {
		if s.Err != nil {
			return s.Err
		}
		lbl, _ := r.Int(i, r.FieldIndex("label"))
		score, _ := r.Float(i, r.FieldIndex("score"))
		_, caption, _ := r.Text(i, r.FieldIndex("caption"))
		blob, _ := r.Payload(i, r.FieldIndex("blob"))
		_, thumb, _ := r.Image(i, r.FieldIndex("thumb"))
		switch {
		case s.Value("label").Int != lbl, s.Value("score").Float != score, string(s.Value("caption").Bytes) != string(caption),
			string(s.Value("blob").Bytes) != string(blob), string(s.Value("thumb").Bytes) != string(thumb):
			return fmt.Errorf("sample %d differs: %+v", i, s.Values)
		}
		a, err := mldf.ParseNPY(s.Value("arr").Bytes)
		if err != nil || a.Descr != "<f4" || fmt.Sprint(a.Shape) != "[2 3]" {
			return fmt.Errorf("sample %d: arr %+v %v", i, a, err)
		}
		i++
		return nil
	})
	if err != nil || i != n {
		t.Fatalf("%d samples read: %v", i, err)
	}
	// A second export into the same directory is refused, the dataset left as it was.
	if _, err := MDS(context.Background(), r, dir, MDSOptions{}); err == nil {
		t.Fatal("export into a non-empty directory")
	}
	if _, err := os.Stat(filepath.Join(dir, mds.IndexName)); err != nil {
		t.Fatal(err)
	}
}
