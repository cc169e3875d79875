package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run with dedup (the recipe key, or --dedup) drops the JSONL lines whose text repeats an
// earlier line's, reports their count and names each with the line it repeats.
func TestDedupRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.jsonl")
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf(`{"text": "line %d", "n": %d}`, i%40, i)) // 10 repeats
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, key string
		flags     []string
		samples   int64
	}{
		{"recipe key", "dedup: {fields: [text]}\n", nil, 40},
		{"flag", "", []string{"--dedup", "text"}, 40},
		{"flag, report", "", []string{"--dedup", "text:report"}, 50},
		{"two fields", "dedup: {fields: [text, n]}\n", nil, 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "o.mldf")
			cfg := filepath.Join(t.TempDir(), "r.yaml")
			y := "source: {type: jsonl, inputs: [" + in + "]}\nfields:\n  - {name: text, type: text}\n  - {name: n, type: int}\noutput: " + out + "\n" + c.key
			if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"run", cfg, "--workers", "2"}, c.flags...)
			if _, stderr, err := run(t, args...); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			raw, err := os.ReadFile(out + ".report.json")
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Samples    int64 `json:"num_samples"`
				Duplicates int64 `json:"num_duplicates"`
			}
			if err := json.Unmarshal(raw, &rep); err != nil {
				t.Fatal(err)
			}
			wantDups := int64(10)
			if c.name == "two fields" {
				wantDups = 0
			}
			if rep.Samples != c.samples || rep.Duplicates != wantDups {
				t.Fatalf("report: %s", raw)
			}
			if wantDups > 0 {
				rej, _ := os.ReadFile(out + ".rejects.jsonl")
				if !strings.Contains(string(rej), `"duplicate_of":{"origin":"`+in+`:1","index":0}`) {
					t.Fatalf("rejects file:\n%s", rej)
				}
			}
		})
	}
	if _, _, err := run(t, "run", "--dedup", "text:keep", filepath.Join(dir, "x.yaml")); err == nil || !strings.Contains(err.Error(), "drop or report") {
		t.Fatalf("--dedup text:keep: %v", err)
	}
}
