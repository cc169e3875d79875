package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// appendInputs makes five inputs for kind (jsonl files, or flat image folders whose names
// sort in input order) in dir and returns them, and the one-run input (all five: the list of
// files, or one folder holding every image).
func appendInputs(t *testing.T, dir, kind string) (inputs []string, all string) {
	t.Helper()
	switch kind {
	case "jsonl":
		var names []string
		for k := range 5 {
			var b strings.Builder
			for i := range 3 + k*4 {
				fmt.Fprintf(&b, "{\"text\": %q}\n", strings.Repeat(fmt.Sprintf("input %d line %d ", k, i), 1+(i*37+k*11)%300))
			}
			p := filepath.Join(dir, fmt.Sprintf("in%d.jsonl", k))
			if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, p)
			names = append(names, fmt.Sprintf("%q", p))
		}
		return inputs, "[" + strings.Join(names, ", ") + "]"
	case "images":
		src := filepath.Join(repoRoot(t), "testdata", "images", "tango_apps")
		ents, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		allDir := filepath.Join(dir, "all")
		if err := os.Mkdir(allDir, 0o755); err != nil {
			t.Fatal(err)
		}
		var pngs []string
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".png") {
				pngs = append(pngs, filepath.Join(src, e.Name()))
			}
		}
		for k := range 5 {
			in := filepath.Join(dir, fmt.Sprintf("in%d", k))
			if err := os.Mkdir(in, 0o755); err != nil {
				t.Fatal(err)
			}
			for i, p := range pngs {
				if (i+k)%3 == 0 {
					continue // inputs of different sizes
				}
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%d-%02d.png", k, i)
				for _, d := range []string{in, allDir} {
					if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			inputs = append(inputs, in)
		}
		return inputs, allDir
	}
	t.Fatalf("kind %s", kind)
	return nil, ""
}

func appendRecipeText(kind, in, out, extra string) string {
	src := fmt.Sprintf("source:\n  type: jsonl\n  inputs: %s\nfields:\n  - name: text\n    type: text\n", in)
	if kind == "images" {
		src = fmt.Sprintf("source:\n  type: images\n  path: %q\n  flat: true\nfields:\n  - name: image\n    type: image\n", in)
	}
	return src + fmt.Sprintf("output: %q\npage_size: 4096\nworkers: 2\n", out) + extra
}

// TestAppendFiveEqualsOneRun: a run over the first input and four appends (the command, and
// mode: append in a recipe) give the bytes of one run over the five inputs in order.
func TestAppendFiveEqualsOneRun(t *testing.T) {
	for _, kind := range []string{"jsonl", "images"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			inputs, all := appendInputs(t, dir, kind)
			write := func(name, text string) string {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			one := filepath.Join(dir, "one.mldf")
			base := filepath.Join(dir, "base.mldf")
			quoted := func(p string) string {
				if kind == "jsonl" {
					return fmt.Sprintf("[%q]", p)
				}
				return p
			}
			if _, _, err := run(t, "run", write("one.yaml", appendRecipeText(kind, all, one, ""))); err != nil {
				t.Fatal(err)
			}
			// The base is written by a plain run, or (jsonl) by an append to a file that
			// does not exist yet.
			args := []string{"run", write("base.yaml", appendRecipeText(kind, quoted(inputs[0]), base, ""))}
			if kind == "jsonl" {
				args = []string{"append", base, args[1]}
			}
			if _, _, err := run(t, args...); err != nil {
				t.Fatal(err)
			}
			for k, in := range inputs[1:] {
				var err error
				if k%2 == 0 {
					y := write(fmt.Sprintf("add%d.yaml", k), appendRecipeText(kind, quoted(in), filepath.Join(dir, "unused.mldf"), ""))
					_, _, err = run(t, "append", base, y)
				} else {
					y := write(fmt.Sprintf("add%d.yaml", k), appendRecipeText(kind, quoted(in), base, "mode: append\n"))
					_, _, err = run(t, "run", y)
				}
				if err != nil {
					t.Fatalf("append %d: %v", k+1, err)
				}
			}
			want, _ := os.ReadFile(one)
			got, _ := os.ReadFile(base)
			if !bytes.Equal(got, want) {
				t.Fatalf("five appends: %d bytes; one run: %d bytes; they differ", len(got), len(want))
			}
			if _, _, err := run(t, "verify", base); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "unused.mldf")); err == nil {
				t.Fatal("append wrote the recipe's output")
			}
			left, _ := filepath.Glob(filepath.Join(dir, ".base.mldf.*"))
			if len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

// TestAppendRefusesOtherSchema: appending a recipe with other fields names both files and
// leaves the base as it was.
func TestAppendRefusesOtherSchema(t *testing.T) {
	dir := t.TempDir()
	inputs, _ := appendInputs(t, dir, "jsonl")
	base := filepath.Join(dir, "base.mldf")
	y := filepath.Join(dir, "base.yaml")
	os.WriteFile(y, []byte(appendRecipeText("jsonl", fmt.Sprintf("[%q]", inputs[0]), base, "")), 0o644)
	if _, _, err := run(t, "run", y); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(base)
	other := strings.Replace(appendRecipeText("jsonl", fmt.Sprintf("[%q]", inputs[1]), base, ""), "type: text", "type: bytes", 1)
	os.WriteFile(y, []byte(other), 0o644)
	_, _, err := run(t, "append", base, y)
	if err == nil || !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), "new.mldf") {
		t.Fatalf("err = %v, want an error naming the base and the new samples' file", err)
	}
	after, _ := os.ReadFile(base)
	if !bytes.Equal(before, after) {
		t.Fatal("base changed")
	}
}

// TestAppendInBucket: convert append to an object in a bucket (the S3 test server; the
// first append creates it) gives the bytes of one local run over all the inputs.
func TestAppendInBucket(t *testing.T) {
	srv := startS3(t)
	dir := t.TempDir()
	inputs, all := appendInputs(t, dir, "jsonl")
	one := filepath.Join(dir, "one.mldf")
	y := filepath.Join(dir, "r.yaml")
	os.WriteFile(y, []byte(appendRecipeText("jsonl", all, one, "")), 0o644)
	if _, _, err := run(t, "run", y); err != nil {
		t.Fatal(err)
	}
	url := "s3://bkt/data/base.mldf"
	for k, in := range inputs {
		os.WriteFile(y, []byte(appendRecipeText("jsonl", fmt.Sprintf("[%q]", in), url, "")), 0o644)
		if _, _, err := run(t, "append", url, y); err != nil {
			t.Fatalf("append %d: %v", k, err)
		}
	}
	want, _ := os.ReadFile(one)
	if got := object(t, srv, "data/base.mldf"); !bytes.Equal(got, want) {
		t.Fatalf("appends in the bucket: %d bytes; one local run: %d bytes; they differ", len(got), len(want))
	}
}

// TestAppendDedupFiveEqualsOneRun: with dedup, a run over the first input and four appends
// give the bytes of one run with dedup over the five inputs: the appends' tables are seeded
// with the base's payloads (hashed as a run hashes them), so a new sample that duplicates a
// base sample is dropped, and the rejects file names the base and the sample's id there.
func TestAppendDedupFiveEqualsOneRun(t *testing.T) {
	for _, kind := range []string{"jsonl", "images"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			var inputs []string
			all := ""
			field := "image"
			if kind == "jsonl" {
				// Input k repeats texts of every input before it, and its own.
				field = "text"
				var names []string
				for k := range 5 {
					var b strings.Builder
					for i := range 6 {
						fmt.Fprintf(&b, "{\"text\": \"line %d of input %d\"}\n", i%(3+k), (k*i)%(k+1))
					}
					p := filepath.Join(dir, fmt.Sprintf("in%d.jsonl", k))
					if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
						t.Fatal(err)
					}
					inputs = append(inputs, p)
					names = append(names, fmt.Sprintf("%q", p))
				}
				all = "[" + strings.Join(names, ", ") + "]"
			} else {
				// The same images in several inputs (appendInputs copies each into most).
				inputs, all = appendInputs(t, dir, kind)
			}
			quoted := func(p string) string {
				if kind == "jsonl" {
					return fmt.Sprintf("[%q]", p)
				}
				return p
			}
			write := func(name, text string) string {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			dd := fmt.Sprintf("dedup: {fields: [%s]}\n", field)
			one, base := filepath.Join(dir, "one.mldf"), filepath.Join(dir, "base.mldf")
			if _, _, err := run(t, "run", write("one.yaml", appendRecipeText(kind, all, one, dd))); err != nil {
				t.Fatal(err)
			}
			if _, _, err := run(t, "run", write("base.yaml", appendRecipeText(kind, quoted(inputs[0]), base, dd))); err != nil {
				t.Fatal(err)
			}
			for k, in := range inputs[1:] {
				y := write(fmt.Sprintf("add%d.yaml", k), appendRecipeText(kind, quoted(in), base, ""))
				args := []string{"append", base, y, "--dedup", field} // the flag, or the recipe's key
				if k%2 == 1 {
					y = write(fmt.Sprintf("add%d.yaml", k), appendRecipeText(kind, quoted(in), base, "mode: append\n"+dd))
					args = []string{"run", y}
				}
				if _, _, err := run(t, args...); err != nil {
					t.Fatalf("append %d: %v", k+1, err)
				}
			}
			want, _ := os.ReadFile(one)
			got, _ := os.ReadFile(base)
			if !bytes.Equal(got, want) {
				t.Fatalf("five appends with dedup: %d bytes; one run: %d bytes; they differ", len(got), len(want))
			}
			plain := filepath.Join(dir, "plain.mldf")
			if _, _, err := run(t, "run", write("plain.yaml", appendRecipeText(kind, all, plain, ""))); err != nil {
				t.Fatal(err)
			}
			if p, _ := os.ReadFile(plain); bytes.Equal(p, want) {
				t.Fatal("the inputs hold no duplicates: the test tests nothing")
			}
			// The last append's rejects name base samples (the base's own duplicates among
			// the new ones are named by the file and their id in it).
			rej, _ := os.ReadFile(base + ".rejects.jsonl")
			if !strings.Contains(string(rej), fmt.Sprintf(`"duplicate_of":{"origin":%q,"index":`, base)) {
				t.Fatalf("the rejects file names no base sample:\n%s", rej)
			}
		})
	}
}
