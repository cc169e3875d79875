package recipe

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources/parquet"
)

func buildYAML(t *testing.T, src string) (*Plan, error) {
	t.Helper()
	r, err := Parse([]byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	r.Defaults()
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return Build(r)
}

const hfText = "source:\n  type: parquet\n  inputs: [../testdata/parquet/hf-text.parquet]\noutput: x.mldf\n"

func TestParquetInferred(t *testing.T) {
	p, err := buildYAML(t, hfText)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range p.Bindings {
		got = append(got, b.Field.Name()+" "+b.Field.Type().String())
	}
	if strings.Join(got, ", ") != "text TEXT_RAW, label INT, input_ids TEXT_TOKENIZED, embedding NDARRAY" {
		t.Fatalf("fields %v", got)
	}
	if _, ok := p.Bindings[1].Field.(*encoders.ClassLabel); !ok {
		t.Errorf("label is %T, want a class label", p.Bindings[1].Field)
	}
	if count, _, ok := encoders.ParseClassLabel(p.Bindings[1].Field.Arguments()); !ok || count != 2 {
		t.Errorf("label arguments: %d classes, %v", count, ok)
	}
	notes := strings.Join(p.Notes, "\n")
	for _, want := range []string{"Hugging Face ClassLabel (2 names)", "Sequence of int32", "length 4", "stored in the file"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	// The names go into the file: no side file, so no wrapped run.
	if p.Source.Len() != 10 || p.WritesClasses() {
		t.Errorf("len %d, writes classes %v", p.Source.Len(), p.WritesClasses())
	}
	if d := encoders.Descriptor(p.Bindings[1].Field); len(d.ClassNames) != 2 {
		t.Errorf("descriptor names %q", d.ClassNames)
	}
}

func TestParquetFieldErrors(t *testing.T) {
	for _, tc := range []struct {
		fields string
		err    error
		msg    string
	}{
		{"  - {name: x, type: text, from: nosuch}", parquet.ErrColumn, `line 5: field "x": from "nosuch": ../testdata/parquet/hf-text.parquet: parquet: unusable column: no column "nosuch"`},
		{"  - {name: x, type: int, from: input_ids}", parquet.ErrColumn, "is a list"},
		{"  - {name: x, type: ndarray, from: text}", nil, ""}, // a string column of .npy files: checked per sample
		{"  - {name: x, type: ndarray, from: label}\n  - {name: y, type: json, from: label}", ErrRecipe, "is read as value by another field and as json here"},
		{"  - {name: x, type: tokens, from: input_ids}", nil, ""},
	} {
		src := strings.Replace(hfText, "output:", "fields:\n"+tc.fields+"\noutput:", 1)
		p, err := buildYAML(t, src)
		switch {
		case tc.err == nil && err != nil:
			t.Errorf("%s: %v", tc.fields, err)
		case tc.err != nil && (!errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg)):
			t.Errorf("%s: %v, want %v with %q", tc.fields, err, tc.err, tc.msg)
		case tc.err == nil && strings.Contains(tc.fields, "tokens"):
			// A list column read by a tokens field holds ids: the tokenizer becomes "none".
			if a := p.Bindings[0].Field.Arguments(); string(a[24:28]) != "none" || p.Bindings[0].Field.Type() != mldf.TypeTextTokenized {
				t.Errorf("tokens from a list: arguments % x", a[:32])
			}
		}
	}
}

func TestParquetNoInputs(t *testing.T) {
	_, err := buildYAML(t, "source:\n  type: parquet\noutput: x.mldf\n")
	if err == nil || !strings.Contains(err.Error(), "needs at least one input") {
		t.Fatal(err)
	}
	_, err = buildYAML(t, "source:\n  type: parquet\n  inputs: [nosuch-*.parquet]\noutput: x.mldf\n")
	if err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Fatal(err)
	}
}

// TestParquetImagePNGStaysPNG: a Hugging Face Image column mapped without fields keeps PNG
// bytes as they are (docs/PARQUET.md), in a .mldf; a .beton or MDS output, whose image
// columns hold one format, gets smart mode's JPEG; keep_png is refused where it cannot hold.
func TestParquetImagePNGStaysPNG(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 12, 10))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 13)
		if i%4 == 3 {
			img.Pix[i] = 255 // opaque: an RGB PNG
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	src := buf.Bytes()
	const images = "source:\n  type: parquet\n  inputs: [../testdata/parquet/hf-images.parquet]\n"
	for _, tc := range []struct {
		extra string
		mode  uint8
	}{
		{"output: x.mldf\n", mldf.ImageModePNG},
		{"format: beton\noutput: x.beton\n", mldf.ImageModeJPEG},
		{"format: mds\noutput: x.mds\n", mldf.ImageModeJPEG},
	} {
		p, err := buildYAML(t, images+tc.extra)
		if err != nil {
			t.Fatalf("%s: %v", tc.extra, err)
		}
		var f encoders.Field
		for _, b := range p.Bindings {
			if b.Column == "image" {
				f = b.Field
			}
		}
		if f == nil || f.Type() != mldf.TypeImageJPEG {
			t.Fatalf("%s: no image field (%v)", tc.extra, f)
		}
		meta := make([]byte, mldf.ImageMetaSize)
		out, err := f.Encode(sample.Value{Kind: sample.KindBytes, Bytes: src, Name: "a.png"}, meta)
		if err != nil {
			t.Fatal(err)
		}
		m := mldf.GetImageMeta(meta)
		if m.Mode != tc.mode || bytes.Equal(out, src) != (tc.mode == mldf.ImageModePNG) {
			t.Errorf("%s: a PNG row stored in mode %d (want %d), as its bytes: %v", tc.extra, m.Mode, tc.mode, bytes.Equal(out, src))
		}
	}
	for _, tc := range []struct{ field, extra, msg string }{
		{"mode: smart, keep_png: true", "format: beton\noutput: x.beton\n", "drop keep_png"},
		{"mode: smart, keep_png: true", "format: mds\noutput: x.mds\n", "drop keep_png"},
		{"mode: jpeg, keep_png: true", "output: x.mldf\n", "keep_png needs mode smart"},
	} {
		_, err := buildYAML(t, images+"fields:\n  - {name: image, type: image, "+tc.field+"}\n"+tc.extra)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s, %s: %v, want %q", tc.field, tc.extra, err, tc.msg)
		}
	}
}
