package recipe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// buildErr loads the recipe text written in dir and builds its plan.
func buildErr(t *testing.T, dir, src string) error {
	t.Helper()
	p := filepath.Join(dir, "r.yaml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Load(p)
	if err != nil {
		return err
	}
	r.Defaults()
	if err := r.Validate(); err != nil {
		return err
	}
	_, err = BuildWith(context.Background(), r, nil)
	return err
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// An input with nothing to convert, and a column the source cannot supply, are errors of
// validate (Build) naming the recipe line, unless allow_empty says an empty input is meant.
func TestInputsAndColumnsChecked(t *testing.T) {
	const images = "source:\n  type: images\n  path: data\nfields:\n  - name: image\n    type: image\n"
	const jsonl = "source:\n  type: jsonl\n  inputs: [data/a.jsonl]\nfields:\n  - name: t\n    type: text\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		src   string
		want  string // "" = valid
	}{
		{"empty folder", map[string]string{"data/.keep": ""}, images + "output: o.mldf\n", "line 3: source.path: nothing to convert: no samples found (allow_empty: true"},
		{"empty folder allowed", map[string]string{"data/.keep": ""}, images + "output: o.mldf\nallow_empty: true\n", ""},
		{"no class folders", map[string]string{"data/a.jpg": "x", "data/b.jpg": "x"}, images + "  - name: label\n    type: int\noutput: o.mldf\n",
			"has no class subfolders but 2 image(s) directly in it: to convert them without labels, read it as a flat folder (convert images --flat, or source.flat: true in a recipe)"},
		{"flat", map[string]string{"data/a.jpg": "x"}, strings.Replace(images, "path: data", "path: data\n  flat: true", 1) + "output: o.mldf\n", ""},
		{"label on flat", map[string]string{"data/a.jpg": "x"}, strings.Replace(images, "path: data", "path: data\n  flat: true", 1) + "  - name: label\n    type: int\noutput: o.mldf\n",
			`line 8: field "label": from "label": a images source has no such column (its columns: image, path)`},
		{"image from a missing column", map[string]string{"data/c/a.jpg": "x"}, images + "    from: picture\noutput: o.mldf\n",
			`line 7: field "image": from "picture": a images source has no such column (its columns: image, label, path)`},
		{"audio folder missing column", map[string]string{"data/c/a.wav": "x"}, "source:\n  type: audio_folder\n  path: data\nfields:\n  - name: audio\n    type: audio\n    from: transcript\noutput: o.mldf\n",
			`line 7: field "audio": from "transcript": a audio_folder source has no such column (its columns: audio, label, path)`},
		{"audio folder path", map[string]string{"data/c/a.wav": "x"}, "source:\n  type: audio_folder\n  path: data\nfields:\n  - name: p\n    type: text\n    from: path\noutput: o.mldf\n", ""},
		{"jsonl key missing", map[string]string{"data/a.jsonl": "\n{\"text\": \"x\"}\n{\"txt\": \"y\"}\n"}, jsonl + "    from: txt\noutput: o.mldf\n",
			`a.jsonl has no such key (its keys: text)`},
		{"jsonl key present", map[string]string{"data/a.jsonl": "{\"text\": \"x\"}\n"}, jsonl + "    from: text\noutput: o.mldf\n", ""},
		{"jsonl nested key", map[string]string{"data/a.jsonl": "{\"m\": {\"l\": [\"x\"]}}\n"}, jsonl + "    from: m.l.0\noutput: o.mldf\n", ""},
		{"jsonl alternatives", map[string]string{"data/a.jsonl": "{\"b\": \"x\"}\n"}, jsonl + "    from: a|b\noutput: o.mldf\n", ""},
		{"jsonl optional key", map[string]string{"data/a.jsonl": "{\"text\": \"x\"}\n"}, jsonl + "    from: txt\n    required: false\noutput: o.mldf\n", ""},
		{"jsonl empty", map[string]string{"data/a.jsonl": "\n  \n"}, jsonl + "output: o.mldf\n", "line 3: source.inputs: nothing to convert: no records in any input"},
		{"jsonl empty allowed", map[string]string{"data/a.jsonl": ""}, jsonl + "output: o.mldf\nallow_empty: true\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, c.files)
			err := buildErr(t, dir, c.src)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v\nwant %q", err, c.want)
			}
		})
	}
}
