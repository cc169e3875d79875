package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mldf/convert/encoders/textfield" // the recipes use them
	"github.com/mldf/convert/export"
	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
	_ "github.com/mldf/convert/sources/jsonl"
)

// syncBuf is a bytes.Buffer safe for the checkpointer's and the run's lines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// slowSource delays every 20th sample, and stalls at sample 1000 until the run is cancelled:
// the first run checkpoints and cannot end before the test interrupts it.
type slowSource struct{ sources.Source }

func (s slowSource) Run(ctx context.Context, emit func(sample.Sample) error) error {
	n := 0
	return s.Source.Run(ctx, func(x sample.Sample) error {
		n++
		if n == 1000 {
			<-ctx.Done()
			return ctx.Err()
		}
		if n%20 == 0 {
			time.Sleep(time.Millisecond)
		}
		return emit(x)
	})
}

const mdsShard = 16 << 10 // small shards: many of them

// mdsConfig returns the pipeline configuration of a JSONL recipe of format mds into dir.
func mdsConfig(t *testing.T, jsonl, dir string, slow bool, log *syncBuf) pipeline.Config {
	t.Helper()
	text := fmt.Sprintf("source:\n  type: jsonl\n  inputs: [%q]\nfields:\n  - {name: n, type: int}\n  - {name: t, type: text}\nformat: mds\noutput: %q\nchunk_size: 16\n", jsonl, dir)
	r, err := recipe.Parse([]byte(text), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	r.Defaults()
	store := objstore.New()
	t.Cleanup(func() { store.Close() })
	plan, err := recipe.BuildWith(context.Background(), r, store)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Config(plan, dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = store
	if slow {
		cfg.Source = slowSource{cfg.Source}
	}
	if log != nil {
		cfg.Resume = &pipeline.Resume{Fingerprint: pipeline.Fingerprint{Recipe: "r", Version: "test", Inputs: plan.Inputs},
			Every: 5 * time.Millisecond, Log: log}
	}
	return cfg
}

// readDir returns the files of dir by name.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// An MDS output interrupted in either phase (the conversion into the MLDF file, which
// checkpoints as MLDF does; the export, which records each finished shard) and run again
// continues where it stopped; the shards and index.json equal an uninterrupted run's. A
// changed recipe or an edited shard starts over, saying why.
func TestResumeMDS(t *testing.T) {
	base := t.TempDir()
	jsonl := filepath.Join(base, "lines.jsonl")
	var b bytes.Buffer
	for i := range 2000 {
		fmt.Fprintf(&b, "{\"n\":%d,\"t\":\"%0*d\"}\n", i, 20+i*37%300, i)
	}
	if err := os.WriteFile(jsonl, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(base, "ref.mds")
	if _, err := runMDS(context.Background(), mdsConfig(t, jsonl, ref, false, nil), &mdsKnobs{sizeLimit: mdsShard}); err != nil {
		t.Fatal(err)
	}
	want := readDir(t, ref)
	if len(want) < 10 {
		t.Fatalf("%d files in the reference dataset, want many shards", len(want))
	}
	for _, tc := range []struct {
		name    string
		phase   int // 1: stop in the conversion, 2: in the export
		change  func(t *testing.T, dir string, cfg *pipeline.Config)
		message string
	}{
		{name: "conversion", phase: 1, message: "resumed at sample"},
		{name: "export", phase: 2, message: "finished shards"},
		{name: "export, recipe changed", phase: 2, change: func(t *testing.T, dir string, cfg *pipeline.Config) {
			cfg.Resume.Fingerprint.Recipe = "r2"
		}, message: "starting over: the recipe, the inputs or the tool changed"},
		{name: "export, shard edited", phase: 2, change: func(t *testing.T, dir string, cfg *pipeline.Config) {
			p := filepath.Join(dir, "shard.00001.mds")
			sb, _ := os.ReadFile(p)
			sb[len(sb)-1] ^= 1
			os.WriteFile(p, sb, 0o644)
		}, message: "starting over: the finished shards cannot be continued"},
		{name: "export, --restart", phase: 2, change: func(t *testing.T, dir string, cfg *pipeline.Config) {
			cfg.Resume.Restart = true
		}, message: "starting over: --restart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out.mds")
			var log1 syncBuf
			cfg := mdsConfig(t, jsonl, dir, tc.phase == 1, &log1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			knobs := &mdsKnobs{sizeLimit: mdsShard}
			done := make(chan error, 1)
			if tc.phase == 2 {
				knobs.afterShard = func(n int) {
					if n == 3 {
						cancel()
					}
				}
				go func() { _, err := runMDS(ctx, cfg, knobs); done <- err }()
			} else {
				go func() { _, err := runMDS(ctx, cfg, knobs); done <- err }()
				rec := atomicfile.PartialName(dir+".mldf.tmp", pipeline.CheckpointSuffix)
				for {
					if bt, err := os.ReadFile(rec); err == nil {
						var c struct{ Number int64 }
						if json.Unmarshal(bt, &c) == nil && c.Number >= 1 {
							cancel()
							break
						}
					}
					time.Sleep(time.Millisecond)
				}
			}
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v\n%s", err, log1.String())
			}
			if _, err := os.Stat(filepath.Join(dir, "index.json")); err == nil {
				t.Fatal("an index.json after the interruption")
			}
			var log2 syncBuf
			cfg2 := mdsConfig(t, jsonl, dir, false, &log2)
			if tc.change != nil {
				tc.change(t, dir, &cfg2)
			}
			rep, err := runMDS(context.Background(), cfg2, &mdsKnobs{sizeLimit: mdsShard})
			if err != nil {
				t.Fatalf("second run: %v\n%s", err, log2.String())
			}
			if !strings.Contains(log2.String(), tc.message) {
				t.Errorf("the second run's lines lack %q:\n%s", tc.message, log2.String())
			}
			if rep.Samples != 2000 {
				t.Errorf("the report counts %d samples, want 2000", rep.Samples)
			}
			if got := readDir(t, dir); !sameFiles(got, want) {
				t.Errorf("the dataset differs from an uninterrupted run's (%d files, want %d)", len(got), len(want))
			}
			left, _ := os.ReadDir(filepath.Dir(dir))
			if len(left) != 1 {
				var names []string
				for _, e := range left {
					names = append(names, e.Name())
				}
				t.Errorf("beside the output after the run: %v, want only it", names)
			}
		})
	}
}

// A run that starts from its first sample replaces an MDS dataset at its output (as an MLDF
// output replaces a file) and refuses a directory holding anything else, touching nothing.
func TestClearMDSDir(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string // a trailing "/" makes a directory
		ok    bool
	}{
		{name: "absent", ok: true},
		{name: "empty", files: []string{}, ok: true},
		{name: "a dataset", files: []string{"index.json", "shard.00000.mds", "shard.00001.mds"}, ok: true},
		{name: "an index only", files: []string{"index.json"}, ok: true},
		{name: "a shard's temporary file", files: []string{"index.json", "shard.00000.mds", ".shard.00001.mds.tmp-123"}, ok: true},
		{name: "shards without an index", files: []string{"shard.00000.mds"}},
		{name: "another file", files: []string{"index.json", "shard.00000.mds", "notes.txt"}},
		{name: "a shard-like name", files: []string{"index.json", "shard.0000x.mds"}},
		{name: "a directory", files: []string{"index.json", "shard.00000.mds/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out.mds")
			if tc.files != nil {
				os.Mkdir(dir, 0o755)
			}
			for _, f := range tc.files {
				if d, ok := strings.CutSuffix(f, "/"); ok {
					os.Mkdir(filepath.Join(dir, d), 0o755)
				} else {
					os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
				}
			}
			err := clearMDSDir(dir)
			ents, _ := os.ReadDir(dir)
			switch {
			case tc.ok && (err != nil || len(ents) != 0):
				t.Fatalf("clearMDSDir: %v, %d entries left", err, len(ents))
			case !tc.ok && (!errors.Is(err, export.ErrDirNotEmpty) || len(ents) != len(tc.files)):
				t.Fatalf("clearMDSDir: %v, %d of %d entries left", err, len(ents), len(tc.files))
			}
		})
	}
}

// TestMLDFStageCached checks that an MDS output's MLDF file, read back at once by the export,
// is written through the page cache whatever the run's own direct_io.
func TestMLDFStageCached(t *testing.T) {
	for _, noDirect := range []bool{false, true} {
		got := mldfStage(pipeline.Config{Output: "/data/out", NoDirect: noDirect})
		if got.Output != "/data/out.mldf.tmp" || !got.NoDirect {
			t.Fatalf("direct_io off %v: stage writes %s with NoDirect %v, want /data/out.mldf.tmp through the cache", noDirect, got.Output, got.NoDirect)
		}
	}
}
