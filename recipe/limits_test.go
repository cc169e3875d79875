package recipe

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources/tarsrc"
)

// Recipes with one number to fill in (@), on a line of its own.
const (
	imagesRecipe = "source: {type: images, path: p}\noutput: o.mldf\nfields:\n  - name: image\n    type: image\n    %s: @\n"
	topRecipe    = "source: {type: images, path: p}\noutput: o.mldf\nfields: [{name: image, type: image}]\n%s: @\n"
	betonRecipe  = "source: {type: images, path: p}\noutput: o.beton\nformat: beton\nfields: [{name: image, type: image}]\n%s: @\n"
	audioRecipe  = "source: {type: audio_folder, path: p}\noutput: o.mldf\nfields:\n  - name: audio\n    type: audio\n    %s: @\n"
	packedRecipe = "source: {type: jsonl, inputs: [a.jsonl]}\noutput: o.mldf\nfields:\n  - name: tokens\n    type: packed\n    from: text\n    seq_len: 8\n    %s: @\n"
	seqRecipe    = "source: {type: jsonl, inputs: [a.jsonl]}\noutput: o.mldf\nfields:\n  - name: tokens\n    type: packed\n    from: text\n    %s: @\n"
	jsonlRecipe  = "source:\n  type: jsonl\n  inputs: [a.jsonl]\n  %s: @\noutput: o.mldf\nfields: [{name: text, type: text}]\n"
	tarRecipe    = "source:\n  type: tar\n  inputs: [a.tar]\n  %s: @\noutput: o.mldf\nfields: [{name: jpg, type: bytes}]\n"
	arrayRecipe  = "source: {type: jsonl, inputs: [a.jsonl]}\noutput: o.mldf\nfields:\n  - name: x\n    type: ndarray\n    dtype: <f4\n    %s: @\n"
)

// TestDeclaredSizes is the table of every number a recipe may declare: at each bound, just
// over it and far over it (1e12, the chunk_size). Accepted values validate; every
// other one is a problem on its own line, naming its key, found by validate before any work.
func TestDeclaredSizes(t *testing.T) {
	for _, c := range []struct {
		key, recipe string
		ok, bad     []string
	}{
		{"page_size", topRecipe, []string{"4KiB", "4096", "2MiB", "1GiB"},
			[]string{"2KiB", "3000", "2GiB", "4611686018427387904", "1e12", "-1"}},
		{"page_size", betonRecipe, []string{"2MiB", "1GiB"}, []string{"1MiB", "2GiB", "1e12"}},
		{"workers", topRecipe, []string{"0", "1", "1024"}, []string{"-1", "1025", "1e12", "1e30"}},
		{"chunk_size", topRecipe, []string{"0", "1", "16384"}, []string{"-1", "16385", "1e12", "9223372036854775807"}},
		{"shards", topRecipe, []string{"0", "1", "99999"}, []string{"-1", "100000", "1e12"}},
		{"max_line_bytes", jsonlRecipe, []string{"0", "1KiB", "1GiB", "256MiB"},
			[]string{"1023", "1073741825", "8GiB", "1e12", "-5"}},
		{"max_member_size", tarRecipe, []string{"0", "1KiB", "1GiB", "4294967295"},
			[]string{"1000", "4GiB", "1024GiB", "1e12"}},
		{"max_resolution", imagesRecipe, []string{"0", "1", "65535"}, []string{"-1", "65536", "1e12"}},
		{"max_pixels", imagesRecipe, []string{"0", "1", "178956970", "1073741824"}, []string{"-1", "1073741825", "1e12"}},
		{"jpeg_quality", imagesRecipe, []string{"1", "100"}, []string{"0", "101", "1e12"}},
		{"sample_rate", audioRecipe, []string{"0", "1", "16000", "768000"}, []string{"-1", "768001", "16777213", "1e12"}},
		{"max_duration", audioRecipe, []string{"0", "0.5", "86400"}, []string{"-1", "86400.5", "1e12", ".nan", ".inf"}},
		{"seq_len", seqRecipe, []string{"1", "2048", "16777216"}, []string{"0", "-1", "16777217", "1e12"}},
		{"pad_id", packedRecipe, []string{"0", "100276", "4294967295"}, []string{"-1", "4294967296", "1e12"}},
		{"shape", arrayRecipe, []string{"[3, 224, 224]", "[1073741823]", "[]"},
			[]string{"[1073741825]", "[65536, 65536, 65536]", "[1e12]", "[1, 1, 1, 1, 1, 1, 1, 1, 1]"}},
	} {
		src := fmt.Sprintf(c.recipe, c.key)
		line := 1 + strings.Count(src[:strings.Index(src, "@")], "\n")
		for _, v := range c.ok {
			r, err := Parse([]byte(strings.Replace(src, "@", v, 1)), env(nil))
			if err == nil {
				r.Defaults()
				err = r.Validate()
			}
			if err != nil {
				t.Errorf("%s: %s refused: %v", c.key, v, err)
			}
		}
		for _, v := range c.bad {
			r, err := Parse([]byte(strings.Replace(src, "@", v, 1)), env(nil))
			if err == nil {
				r.Defaults()
				err = r.Validate()
			}
			want := fmt.Sprintf("line %d:", line)
			if err == nil || !errors.Is(err, ErrRecipe) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %s: got %v, want a problem on %q", c.key, v, err, want)
				continue
			}
			if p := err.Error(); strings.Count(p, "line ") != 1 {
				t.Errorf("%s: %s: want exactly one problem, got %v", c.key, v, err)
			}
			t.Logf("%s: %s: %v", c.key, v, err)
		}
	}
}

// source.max_member_size reaches the tar source: a member over it makes its sample an error
// (read from the header, not by reading the member).
func TestMaxMemberSizeReachesTheSource(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range []struct {
		name string
		size int
	}{{"small.jpg", 1000}, {"big.jpg", 2000}} {
		tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(m.size)})
		tw.Write(make([]byte, m.size))
	}
	tw.Close()
	shard := filepath.Join(dir, "a.tar")
	if err := os.WriteFile(shard, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Parse([]byte(fmt.Sprintf("source:\n  type: tar\n  inputs: [%s]\n  max_member_size: 1KiB\noutput: %s\nfields: [{name: jpg, type: bytes}]\n",
		shard, filepath.Join(dir, "o.mldf"))), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	r.Defaults()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := Build(r)
	if err != nil {
		t.Fatal(err)
	}
	var got []error
	err = p.Source.Run(context.Background(), func(s sample.Sample) error { got = append(got, s.Err); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != nil || !errors.Is(got[1], tarsrc.ErrMemberTooLarge) {
		t.Fatalf("sample errors %v, want nil then ErrMemberTooLarge", got)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1000: "1000", 4096: "4KiB", 3 << 20: "3MiB", 4 << 30: "4GiB", 1<<30 + 1: "1073741825"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
