package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources/parquet"
)

// TestParquetEveryKind exports a file with every field kind and reads it back with the
// parquet source: values, nulls, the Hugging Face features, several files, same bytes twice.
func TestParquetEveryKind(t *testing.T) {
	path := buildAll(t, 6)
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := filepath.Join(t.TempDir(), "pq")
	res, err := Parquet(context.Background(), r, dir, ParquetOptions{FileSamples: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.Samples != 6 || res.Files != 2 {
		t.Fatalf("%+v", res)
	}
	again := filepath.Join(t.TempDir(), "pq")
	if _, err := Parquet(context.Background(), r, again, ParquetOptions{FileSamples: 4}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"data-000000.parquet", "data-000001.parquet"} {
		a, _ := os.ReadFile(filepath.Join(dir, name))
		b, _ := os.ReadFile(filepath.Join(again, name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("%s: two exports differ (%d, %d bytes)", name, len(a), len(b))
		}
	}
	if _, err := Parquet(context.Background(), r, dir, ParquetOptions{}); !errors.Is(err, ErrDirNotEmpty) {
		t.Fatalf("non-empty dir: %v", err)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	schema, meta, err := parquet.ReadSchema(files[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	feats, err := parquet.Features(meta)
	if err != nil {
		t.Fatal(err)
	}
	wantFeat := map[string]string{"label": "Value", "image": "Image", "thumb": "Image", "flac": "Audio", "wave16": "Audio",
		"tokens": "Sequence", "arr": "Value", "caption": "Value"}
	for col, typ := range wantFeat {
		if feats[col].Type != typ {
			t.Errorf("feature of %s: %q, want %q", col, feats[col].Type, typ)
		}
	}
	var cols []parquet.Column
	for _, fd := range r.Fields() {
		as := parquet.AsValue
		if fd.Type == mldf.TypeTextTokenized {
			as = parquet.AsJSON
		}
		cols = append(cols, parquet.Column{Name: fd.Name, Path: fd.Name, As: as})
	}
	if schema.Lookup("image.bytes") == nil {
		t.Fatalf("no image.bytes in %s", schema)
	}
	src, err := parquet.New(files, cols, parquet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	err = src.Run(context.Background(), func(s sample.Sample) error {
		if s.Err != nil {
			return s.Err
		}
		for f, fd := range r.Fields() {
			v, ok := s.Get(fd.Name)
			want, _, err := value(r, i, f, fd)
			if err != nil {
				return err
			}
			switch fd.Type {
			case mldf.TypeInt:
				n, _ := r.Int(i, f)
				if v.Int != n {
					t.Errorf("sample %d %s: %d, want %d", i, fd.Name, v.Int, n)
				}
			case mldf.TypeFloat:
				x, _ := r.Float(i, f)
				if v.Float != x {
					t.Errorf("sample %d %s: %v, want %v", i, fd.Name, v.Float, x)
				}
			case mldf.TypeTextTokenized:
				m, p, _ := r.Text(i, f)
				ids, _ := textIDs(m, p)
				var got []uint32
				if err := json.Unmarshal(v.Bytes, &got); err != nil || !equalIDs(got, ids) {
					t.Errorf("sample %d tokens: %s, want %v (%v)", i, v.Bytes, ids, err)
				}
			default:
				if want == nil {
					if ok {
						t.Errorf("sample %d %s: %d bytes, want a null", i, fd.Name, len(v.Bytes))
					}
				} else if !bytes.Equal(v.Bytes, want) {
					t.Errorf("sample %d %s: %d bytes differ from the %d expected", i, fd.Name, len(v.Bytes), len(want))
				}
			}
		}
		i++
		return nil
	})
	if err != nil || i != 6 {
		t.Fatal(i, err)
	}
}

func textIDs(m mldf.TextMeta, p []byte) ([]uint32, error) {
	if len(p) == 0 {
		return nil, nil
	}
	return decodeIDs(p, m.Encoding)
}

func decodeIDs(p []byte, enc uint8) ([]uint32, error) {
	width := 4
	if enc == mldf.TextTokens16 {
		width = 2
	}
	ids := make([]uint32, len(p)/width)
	for k := range ids {
		if width == 2 {
			ids[k] = uint32(p[2*k]) | uint32(p[2*k+1])<<8
		} else {
			ids[k] = uint32(p[4*k]) | uint32(p[4*k+1])<<8 | uint32(p[4*k+2])<<16 | uint32(p[4*k+3])<<24
		}
	}
	return ids, nil
}

func equalIDs(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestParquetClassNames: for a file that does not hold its class names (written before they
// went into the file, names in a side file), names that do not match the class-label field
// are refused; matching ones become a ClassLabel feature.
func TestParquetClassNames(t *testing.T) {
	f, err := encoders.NewClassLabel("label", []string{"a", "b", "c", "d"})
	if err != nil {
		t.Fatal(err)
	}
	path := buildWith(t, struct{ encoders.Field }{f}) // hides the names from the writer
	if names, err := must[*mldf.Reader](t)(mldf.Open(path)).ClassNames(0); names != nil || err != nil {
		t.Fatalf("names in an old-style file: %q %v", names, err)
	}
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = Parquet(context.Background(), r, filepath.Join(t.TempDir(), "x"), ParquetOptions{Classes: map[string][]string{"label": {"a", "b"}}})
	if !errors.Is(err, encoders.ErrInvalid) {
		t.Fatalf("wrong names: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "y")
	if _, err := Parquet(context.Background(), r, dir, ParquetOptions{Classes: map[string][]string{"label": {"a", "b", "c", "d"}}}); err != nil {
		t.Fatal(err)
	}
	_, meta, err := parquet.ReadSchema(filepath.Join(dir, "data-000000.parquet"), nil)
	if err != nil {
		t.Fatal(err)
	}
	feats, _ := parquet.Features(meta)
	if feats["label"].Type != "ClassLabel" || len(feats["label"].Names) != 4 {
		t.Fatalf("%+v", feats["label"])
	}
}

// buildWith writes a file of one INT field f with labels 0..3.
func buildWith(t *testing.T, f encoders.Field) string {
	t.Helper()
	var samples []sample.Sample
	for i := range 4 {
		samples = append(samples, sample.Sample{Index: int64(i), Values: []sample.Column{{Name: "label", Value: sample.Value{Kind: sample.KindInt, Int: int64(i)}}}})
	}
	out := filepath.Join(t.TempDir(), "c.mldf")
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Source: sliceSource(samples), Output: out, PageSize: 4096,
		Fields: []pipeline.Binding{{Field: f, Column: "label"}}}); err != nil {
		t.Fatal(err)
	}
	return out
}
