package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources/parquet"
)

// buildLabelled writes n PNG images with a label field (a class label with names, or a plain
// INT with names == nil) and a text field "path" holding keys (without an extension) or paths.
func buildLabelled(t *testing.T, n int, names []string, keys func(i int) string) string {
	t.Helper()
	img := must[*imagefield.Field](t)(imagefield.New("image", imagefield.Options{Mode: imagefield.ModePNG}))
	var label encoders.Field = must[*encoders.Int](t)(encoders.NewInt("label"))
	if names != nil {
		label = must[*encoders.ClassLabel](t)(encoders.NewClassLabel("label", names))
	}
	path := must[*textfield.Raw](t)(textfield.NewRaw("path"))
	var samples []sample.Sample
	for i := range n {
		samples = append(samples, sample.Sample{Index: int64(i), Origin: fmt.Sprint(i), Values: sample.ColumnsOf(map[string]sample.Value{
			"image": {Kind: sample.KindBytes, Name: "x.png", Bytes: pngBytes(t, 4, 3, i)},
			"label": {Kind: sample.KindInt, Int: int64(i % 3)},
			"path":  {Kind: sample.KindString, Bytes: []byte(keys(i))},
		})})
	}
	out := filepath.Join(t.TempDir(), "l.mldf")
	_, err := pipeline.Run(context.Background(), pipeline.Config{Source: sliceSource(samples),
		Fields: []pipeline.Binding{{Field: img, Column: "image"}, {Field: label, Column: "label"}, {Field: path, Column: "path"}},
		Output: out, PageSize: 4096, Workers: 2, Checksums: true, OnError: pipeline.Fail})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFolderClassNames: the class folders are the names the file holds, in the order of the
// labels; names that cannot be folder names give numbered folders and a note.
func TestFolderClassNames(t *testing.T) {
	for _, tc := range []struct {
		names []string
		dirs  string
		note  string
	}{
		{[]string{"ant", "bee", "cat dog"}, "ant,bee,cat dog", ""},
		{[]string{"zebra", "ant", "é"}, "ant,zebra,é", "not in sorted order"},
		{[]string{"a/b", "c", "d"}, "0000,0001,0002", `"a/b" cannot be a folder name`},
		{[]string{"..", "c", "d"}, "0000,0001,0002", "cannot be a folder name"},
		{nil, "0000,0001,0002", ""},
	} {
		t.Run(tc.dirs, func(t *testing.T) {
			r := must[*mldf.Reader](t)(mldf.Open(buildLabelled(t, 6, tc.names, func(i int) string { return fmt.Sprint(i) })))
			defer r.Close()
			dir := filepath.Join(t.TempDir(), "f")
			res, err := Folder(context.Background(), r, dir, FolderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ents, _ := os.ReadDir(dir)
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			if strings.Join(got, ",") != tc.dirs {
				t.Fatalf("folders %q, want %s", got, tc.dirs)
			}
			if notes := strings.Join(res.Notes, "\n"); (tc.note == "") != (notes == "") || !strings.Contains(notes, tc.note) {
				t.Fatalf("notes %q, want %q", notes, tc.note)
			}
			if tc.names != nil && tc.note == "" {
				if _, err := os.Stat(filepath.Join(dir, tc.names[2], "000005.png")); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	// A file without names in it takes them from the options (a side file beside an old file).
	r := must[*mldf.Reader](t)(mldf.Open(buildLabelled(t, 3, nil, func(i int) string { return "" })))
	defer r.Close()
	dir := filepath.Join(t.TempDir(), "f")
	if _, err := Folder(context.Background(), r, dir, FolderOptions{Classes: map[string][]string{"label": {"x", "y", "z"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "z", "000002.png")); err != nil {
		t.Fatal(err)
	}
}

// TestParquetClassNamesAndPaths: a class label with names in the file becomes a ClassLabel
// feature with its names; the key field fills image.path, with the image's extension when
// the key has none.
func TestParquetClassNamesAndPaths(t *testing.T) {
	names := []string{"neg", "pos", "a<b"}
	for _, tc := range []struct {
		key  func(i int) string
		opt  string
		want func(i int) string
	}{
		{func(i int) string { return fmt.Sprintf("shard/%03d", i) }, "", func(i int) string { return fmt.Sprintf("shard/%03d.png", i) }},
		{func(i int) string { return fmt.Sprintf("cls/%d.jpeg", i) }, "path", func(i int) string { return fmt.Sprintf("cls/%d.jpeg", i) }},
		{func(i int) string { return "k" }, "-", func(i int) string { return "" }},
	} {
		r := must[*mldf.Reader](t)(mldf.Open(buildLabelled(t, 4, names, tc.key)))
		dir := filepath.Join(t.TempDir(), "pq")
		if _, err := Parquet(context.Background(), r, dir, ParquetOptions{Key: tc.opt}); err != nil {
			t.Fatal(err)
		}
		r.Close()
		files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
		_, meta, err := parquet.ReadSchema(files[0], nil)
		if err != nil {
			t.Fatal(err)
		}
		feats, err := parquet.Features(meta)
		if err != nil {
			t.Fatal(err)
		}
		if f := feats["label"]; f.Type != "ClassLabel" || strings.Join(f.Names, ",") != strings.Join(names, ",") {
			t.Fatalf("label feature %+v", f)
		}
		src, err := parquet.New(files, []parquet.Column{{Name: "p", Path: "image.path", As: parquet.AsValue}}, parquet.Options{})
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		err = src.Run(context.Background(), func(s sample.Sample) error {
			v, ok := s.Get("p")
			if want := tc.want(i); (want == "") == ok || (ok && string(v.Bytes) != want) {
				t.Errorf("sample %d: image.path %q (%v), want %q", i, v.Bytes, ok, want)
			}
			i++
			return s.Err
		})
		if err != nil || i != 4 {
			t.Fatal(i, err)
		}
	}
}
