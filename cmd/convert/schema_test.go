package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mldf/convert/internal/jsonout"
	"github.com/mldf/convert/sources/h5ad"
)

// The JSON every command prints is checked against docs/schema (JSON Schema 2020-12) on real
// fixtures: each document validates, its keys are snake_case at every depth and no number in
// it is beyond 2^53 (what every JSON reader holds exactly).

const schemaBase = "https://github.com/mldf/convert/docs/schema/"

var (
	schemasOnce sync.Once
	schemas     map[string]*jsonschema.Schema
	schemasErr  error
)

// loadSchemas compiles every schema of docs/schema, by kind ("inspect", "report", ...).
func loadSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "docs", "schema")
	schemasOnce.Do(func() {
		files, err := filepath.Glob(filepath.Join(dir, "*.schema.json"))
		if err != nil || len(files) == 0 {
			schemasErr = fmt.Errorf("no schemas in %s: %v", dir, err)
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				schemasErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				schemasErr = fmt.Errorf("%s: %w", f, err)
				return
			}
			if err := c.AddResource(schemaBase+filepath.Base(f), doc); err != nil {
				schemasErr = fmt.Errorf("%s: %w", f, err)
				return
			}
		}
		schemas = map[string]*jsonschema.Schema{}
		for _, f := range files {
			kind := strings.TrimSuffix(filepath.Base(f), ".schema.json")
			if kind == "defs" {
				continue
			}
			s, err := c.Compile(schemaBase + filepath.Base(f))
			if err != nil {
				schemasErr = fmt.Errorf("%s: %w", f, err)
				return
			}
			schemas[kind] = s
		}
	})
	if schemasErr != nil {
		t.Fatal(schemasErr)
	}
	return schemas
}

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// dataKeyed are the keys whose objects are keyed by data (a reject reason, a file extension),
// not by the vocabulary.
var dataKeyed = map[string]bool{"rejects_by_reason": true, "skipped_files": true}

// checkVocabulary walks a decoded document: every key snake_case, no number beyond 2^53.
func checkVocabulary(t *testing.T, where string, v any, path string) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !snakeKey.MatchString(k) {
				t.Errorf("%s: key %s%q is not snake_case", where, path, k)
			}
			if dataKeyed[k] {
				if m, ok := x.(map[string]any); ok {
					for dk, dx := range m {
						checkVocabulary(t, where, dx, path+k+"["+dk+"].")
					}
					continue
				}
			}
			checkVocabulary(t, where, x, path+k+".")
		}
	case []any:
		for i, x := range v {
			checkVocabulary(t, where, x, fmt.Sprintf("%s[%d].", path, i))
		}
	case json.Number:
		f, _, err := big.ParseFloat(string(v), 10, 200, big.ToNearestEven)
		if err != nil {
			t.Errorf("%s: %s: number %s: %v", where, path, v, err)
			return
		}
		if f.Abs(f).Cmp(new(big.Float).SetInt64(jsonout.MaxSafeInt)) > 0 {
			t.Errorf("%s: %s is %s, beyond 2^53", where, path, v)
		}
	}
}

// checkDoc validates one JSON document (b) against the schema of kind and checks its
// vocabulary; it returns the decoded document.
func checkDoc(t *testing.T, kind, where string, b []byte) map[string]any {
	t.Helper()
	s := loadSchemas(t)[kind]
	if s == nil {
		t.Fatalf("%s: no schema for kind %q", where, kind)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", where, err, b)
	}
	if err := s.Validate(doc); err != nil {
		t.Errorf("%s: does not validate against %s.schema.json: %v\n%s", where, kind, err, b)
	}
	checkVocabulary(t, where, doc, "")
	m, _ := doc.(map[string]any)
	if m["kind"] != kind || m["schema_version"] != json.Number(fmt.Sprint(jsonout.SchemaVersion)) {
		t.Errorf("%s: kind %v schema_version %v, want %s %d", where, m["kind"], m["schema_version"], kind, jsonout.SchemaVersion)
	}
	return m
}

// checkLines checks every JSON line of a log (stderr) for its vocabulary, and the progress
// lines against their schema; it returns how many progress lines there were.
func checkLines(t *testing.T, where, log string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Errorf("%s: log line not JSON: %v: %s", where, err, line)
			continue
		}
		if m, ok := doc.(map[string]any); ok && m["msg"] == "progress" {
			checkDoc(t, jsonout.KindProgress, where+" progress", []byte(line))
			n++
			continue
		}
		for k := range doc.(map[string]any) {
			if !snakeKey.MatchString(k) {
				t.Errorf("%s: log key %q is not snake_case: %s", where, k, line)
			}
		}
	}
	return n
}

// checkFile runs inspect, inspect --sample 0 and verify, each with --json, on file.
func checkFile(t *testing.T, file string) {
	t.Helper()
	stdout, _, err := run(t, "inspect", file, "--json")
	if err != nil {
		t.Fatalf("inspect %s: %v", file, err)
	}
	checkDoc(t, jsonout.KindInspect, "inspect "+file, []byte(stdout))
	if stdout, _, err = run(t, "inspect", file, "--sample", "0", "--json"); err != nil {
		t.Fatalf("inspect --sample 0 %s: %v", file, err)
	}
	checkDoc(t, jsonout.KindSample, "inspect --sample "+file, []byte(stdout))
	if stdout, _, err = run(t, "verify", file, "--json"); err != nil {
		t.Fatalf("verify %s: %v", file, err)
	}
	checkDoc(t, jsonout.KindVerify, "verify "+file, []byte(stdout))
}

// TestJSONSchemaRecipes converts recipes covering every field kind and every output format,
// and checks the plan (validate --json), the summary (run --json), the progress lines, the
// report file and the inspect, sample and verify documents of each output.
func TestJSONSchemaRecipes(t *testing.T) {
	for _, name := range []string{"speech-commands", "librispeech", "jsonl-tokenized", "jsonl-packed", "webdataset",
		"ffcv-beton", "hf-image-classification", "scdl-mldf", "h5ad-scdl", "jsonl-tokenized:mds"} {
		t.Run(name, func(t *testing.T) {
			name, asMDS := strings.CutSuffix(name, ":mds")
			var extra []string
			if asMDS {
				extra = []string{"--format", "mds", "--output", filepath.Join(t.TempDir(), "out.mds")}
			}
			cfg := filepath.Join(repoRoot(t), "configs", name+".yaml")
			if name == "h5ad-scdl" && !h5ad.Available() {
				t.Skip("built without cgo: no h5ad (libhdf5)")
			}
			out := t.TempDir()
			t.Setenv("OUT", out)
			stdout, _, err := run(t, append([]string{"validate", cfg, "--json"}, extra...)...)
			if err != nil {
				t.Fatalf("validate: %v", err)
			}
			plan := checkDoc(t, jsonout.KindPlan, "validate "+name, []byte(stdout))
			output := plan["output"].(map[string]any)["path"].(string)
			stdout, stderr, err := run(t, append([]string{"run", cfg, "--json", "--log-format", "json"}, extra...)...)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			checkDoc(t, jsonout.KindSummary, "run "+name, []byte(stdout))
			if checkLines(t, "run "+name, stderr) == 0 {
				t.Errorf("run %s: no progress line on stderr:\n%s", name, stderr)
			}
			rep, err := os.ReadFile(output + ".report.json")
			if err != nil {
				t.Fatal(err)
			}
			checkDoc(t, jsonout.KindReport, "report "+name, rep)
			checkFile(t, output)
		})
	}
}

// TestJSONSchemaFixtures checks inspect, sample and verify of the committed fixtures of
// every format the read commands know.
func TestJSONSchemaFixtures(t *testing.T) {
	for _, f := range []string{"testdata/golden/tiny.mldf", "testdata/golden/classes.mldf", "testdata/scdl/small.scdl",
		"testdata/tar/taridx/golden/gnu.taridx", "testdata/tar/taridx/golden/pax-global-records.taridx", "testdata/mds/text"} {
		t.Run(filepath.Base(f), func(t *testing.T) { checkFile(t, f) })
	}
}

// TestJSONSchemaMerge checks merge --json and the merged report.
func TestJSONSchemaMerge(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 4, 8)
	out := filepath.Join(dir, "o.mldf")
	for i := range 2 {
		stdout, _, err := run(t, "images", data, out, "--mode", "png", "--shards", "2", "--shard", fmt.Sprint(i), "--json")
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		checkDoc(t, jsonout.KindSummary, "shard run", []byte(stdout))
		// The re-run of a finished task prints an up-to-date summary.
		if stdout, _, err = run(t, "images", data, out, "--mode", "png", "--shards", "2", "--shard", fmt.Sprint(i), "--json"); err != nil {
			t.Fatalf("shard %d re-run: %v", i, err)
		}
		if s := checkDoc(t, jsonout.KindSummary, "shard re-run", []byte(stdout)); s["up_to_date"] != true {
			t.Errorf("re-run summary %s: want up_to_date", stdout)
		}
	}
	stdout, _, err := run(t, "merge", out, partPath(out, 0, 2), partPath(out, 1, 2), "--json", "--verify")
	if err != nil {
		t.Fatal(err)
	}
	checkDoc(t, jsonout.KindMerge, "merge", []byte(stdout))
	rep, err := os.ReadFile(out + ".report.json")
	if err != nil {
		t.Fatal(err)
	}
	checkDoc(t, jsonout.KindReport, "merged report", rep)
	checkFile(t, out)
}

// TestJSONErrors: with --json, --log-format json or a recipe's log_format: json, an error is
// an error document (main prints it on stderr); without, the text line.
func TestJSONErrors(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "r.yaml")
	if err := os.WriteFile(rec, []byte("source: {type: images, path: "+filepath.Join(dir, "none")+"}\nfields: [{name: image, type: image}]\noutput: "+
		filepath.Join(dir, "o.mldf")+"\nlog_format: json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		json  bool
		usage bool
	}{
		{[]string{"verify", "missing.mldf", "--json"}, true, false},
		{[]string{"inspect", "--json", "missing.mldf"}, true, false},
		{[]string{"inspect", "--json=true", "a", "b"}, true, true},
		{[]string{"run", rec}, true, false},
		{[]string{"run", rec, "--log-format", "json", "--no-such-flag"}, true, true},
		{[]string{"merge", "--json", "--copy", "sideways", "o.mldf"}, true, true},
		{[]string{"verify", "missing.mldf"}, false, false},
		{[]string{"inspect", "--json=false", "missing.mldf"}, false, false},
	} {
		_, _, err := run(t, c.args...)
		if err == nil {
			t.Fatalf("%v: no error", c.args)
		}
		var buf bytes.Buffer
		printError(&buf, c.args, err, exitCode(err, false))
		where := strings.Join(c.args, " ")
		if !c.json {
			if !strings.HasPrefix(buf.String(), "convert: ") {
				t.Errorf("%s: %q, want the text line", where, buf.String())
			}
			continue
		}
		doc := checkDoc(t, jsonout.KindError, where, buf.Bytes())
		if doc["usage"] != c.usage {
			t.Errorf("%s: usage %v, want %v: %s", where, doc["usage"], c.usage, buf.String())
		}
	}
}

// TestInspectImageHeightFirst: the text inspect --sample prints an image's dimensions as
// height x width x channels, as the JSON and the Python reader give them.
func TestInspectImageHeightFirst(t *testing.T) {
	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 6, 4)) // 6 wide, 4 high
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "in", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in", "a", "x.png"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o.mldf")
	if _, _, err := run(t, "images", filepath.Join(dir, "in"), out, "--mode", "png"); err != nil {
		t.Fatal(err)
	}
	text, _, err := run(t, "inspect", out, "--sample", "0")
	if err != nil || !strings.Contains(text, " 4x6x") {
		t.Errorf("inspect --sample 0: %q %v, want 4x6x (height first)", text, err)
	}
	js, _, err := run(t, "inspect", out, "--sample", "0", "--json")
	if err != nil || !strings.Contains(js, `"height": 4`) || !strings.Contains(js, `"width": 6`) {
		t.Errorf("inspect --sample 0 --json: %s %v", js, err)
	}
}

// TestJSONNoPascalCase guards the class: no document the format packages encode carries a
// key from a Go field name (as encoding/json writes a struct without tags).
func TestJSONNoPascalCase(t *testing.T) {
	pascal := regexp.MustCompile(`"[A-Z][A-Za-z0-9]*":`)
	for _, f := range []string{"testdata/golden/tiny.mldf", "testdata/scdl/small.scdl", "testdata/tar/taridx/golden/gnu.taridx", "testdata/mds/text"} {
		for _, args := range [][]string{{"inspect", f, "--json"}, {"inspect", f, "--sample", "0", "--json"}, {"verify", f, "--json"}} {
			stdout, _, err := run(t, args...)
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			if m := pascal.FindString(stdout); m != "" {
				t.Errorf("%v: key %s", args, m)
			}
		}
	}
}

// TestJSONSummaryRejects: a run that rejects samples names its rejects log in the summary,
// and its exit-status-3 error is an error document with that status.
func TestJSONSummaryRejects(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 2, 8)
	if err := os.WriteFile(filepath.Join(data, "class0", "bad.png"), []byte("not a png"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o.mldf")
	args := []string{"images", data, out, "--mode", "png", "--json"}
	stdout, _, err := run(t, args...)
	if code := exitCode(err, false); code != exitRejected {
		t.Fatalf("exit status %d (%v), want %d", code, err, exitRejected)
	}
	s := checkDoc(t, jsonout.KindSummary, "summary", []byte(stdout))
	if s["rejects"] != out+".rejects.jsonl" || s["num_rejected"] != json.Number("1") {
		t.Errorf("summary %s: want 1 rejected, listed in %s.rejects.jsonl", stdout, out)
	}
	var buf bytes.Buffer
	printError(&buf, args, err, exitCode(err, false))
	if e := checkDoc(t, jsonout.KindError, "exit 3", buf.Bytes()); e["exit_status"] != json.Number("3") {
		t.Errorf("error %s: want exit_status 3", buf.String())
	}
}

// TestJSONSchemaStrict: the schemas refuse what the vocabulary forbids: an unknown (Go-named)
// key, a checksum as a number, an integer beyond 2^53, a missing schema_version.
func TestJSONSchemaStrict(t *testing.T) {
	stdout, _, err := run(t, "inspect", "testdata/golden/tiny.mldf", "--json")
	if err != nil {
		t.Fatal(err)
	}
	s := loadSchemas(t)[jsonout.KindInspect]
	for _, c := range []struct {
		name   string
		change func(m map[string]any)
	}{
		{"Go field name", func(m map[string]any) { m["FileSize"] = json.Number("1") }},
		{"checksum as a number", func(m map[string]any) { m["checksum"] = json.Number("5642131441298083637") }},
		{"beyond 2^53", func(m map[string]any) { m["num_samples"] = json.Number("9007199254740993") }},
		{"no schema_version", func(m map[string]any) { delete(m, "schema_version") }},
		{"unknown format", func(m map[string]any) { m["format"] = "zip" }},
		{"raw arguments", func(m map[string]any) {
			m["fields"].([]any)[0].(map[string]any)["arguments"] = []any{json.Number("1"), json.Number("0")}
		}},
	} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(stdout))
		if err != nil {
			t.Fatal(err)
		}
		c.change(doc.(map[string]any))
		if s.Validate(doc) == nil {
			t.Errorf("%s: the schema accepts it", c.name)
		}
	}
}
