package scdl

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mldf/convert/internal/atomicfile"
)

// resumeInputs are inputs with every kind of feature block: merged var and obs blocks, a new
// var table, other obs columns, an index-only obs table, nulls.
func resumeInputs() []Input {
	a := randomInput("a", 1, 300, 60, 0.1)
	b := randomInput("b", 2, 120, 60, 0.1)
	c := randomInput("c", 3, 90, 60, 0.2)
	c.vars[1].Strings[3] = "renamed"
	c.obs = c.obs[:2]
	d := randomInput("d", 4, 70, 60, 0.1)
	d.obs = d.obs[:1]
	return []Input{a, b, c, d}
}

const resumeCells = 300 + 120 + 90 + 70

// logLines collects the lines of Resume.Log.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(s string) { l.mu.Lock(); l.lines = append(l.lines, s); l.mu.Unlock() }
func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// interrupted runs a resumable Write into dir that is cancelled at the first checkpoint
// holding at least stop cells.
func interrupted(t *testing.T, dir string, stop int64) {
	t.Helper()
	_, existed := os.Stat(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := &Resume{Print: "p", Every: time.Nanosecond, AfterCheckpoint: func(cells int64) {
		if cells >= stop {
			cancel()
		}
	}}
	// One worker: the chunks end in order, so the run stops at the checkpoint asked for.
	_, err := Write(ctx, dir, resumeInputs(), Options{Workers: 1, ChunkNNZ: 200, Resume: res})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	if _, err := os.Stat(dir); err == nil && existed != nil {
		t.Fatalf("an interrupted run left %s", dir)
	}
}

func TestWriteResumesByteIdentical(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref.scdl")
	if _, err := Write(context.Background(), ref, resumeInputs(), Options{Workers: 2, ChunkNNZ: 200}); err != nil {
		t.Fatal(err)
	}
	want := readDir(t, ref)
	partial := func(dir, name string) string {
		return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+PartialSuffix, name)
	}
	for _, tc := range []struct {
		name   string
		stop   int64
		damage func(t *testing.T, dir string)
		log    string // in the resumed run's log
	}{
		{name: "first checkpoint", stop: 1, log: "resumed after"},
		{name: "a third", stop: resumeCells / 3, log: "resumed after"},
		{name: "in the second input", stop: 350, log: "resumed after"},
		{name: "in the last input", stop: 530, log: "resumed after"},
		{name: "every chunk written", stop: resumeCells, log: "resumed after 580 of 580"},
		{name: "a killed final pass", stop: resumeCells, log: "resumed after 580 of 580", damage: func(t *testing.T, dir string) {
			os.MkdirAll(partial(dir, ObsFeatures), 0o755)
			os.WriteFile(partial(dir, RowPtrFile), []byte("half"), 0o644)
			os.WriteFile(partial(dir, filepath.Join(ObsFeatures, "dataframe_0.parquet")), []byte("half"), 0o644)
			os.WriteFile(partial(dir, HeaderFile), []byte("half"), 0o644)
		}},
		{name: "chunks written after the checkpoint", stop: 200, log: "resumed after 231 of", damage: func(t *testing.T, dir string) {
			for _, name := range []string{DataFile, ColPtrFile, rowSpill, obsSpill} {
				f, err := os.OpenFile(partial(dir, name), os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.Write([]byte("written by a chunk after the checkpoint"))
				f.Close()
			}
		}},
		{name: "short data file", stop: 300, log: DataFile + " is shorter", damage: func(t *testing.T, dir string) {
			if err := os.Truncate(partial(dir, DataFile), 3); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "missing column file", stop: 300, log: ColPtrFile + " of the checkpoint is missing", damage: func(t *testing.T, dir string) {
			os.Remove(partial(dir, ColPtrFile))
		}},
		{name: "short obs spill", stop: 300, log: obsSpill + " is shorter", damage: func(t *testing.T, dir string) {
			os.Truncate(partial(dir, obsSpill), 1)
		}},
		{name: "damaged row pointers", stop: 300, log: rowSpill + " is damaged", damage: func(t *testing.T, dir string) {
			b, _ := os.ReadFile(partial(dir, rowSpill))
			for i := range b {
				b[i] = 0xff
			}
			os.WriteFile(partial(dir, rowSpill), b, 0o644)
		}},
		{name: "damaged record", stop: 300, log: "damaged or of another layout", damage: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+CheckpointSuffix), []byte("{"), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out.scdl")
			interrupted(t, dir, tc.stop)
			if tc.damage != nil {
				tc.damage(t, dir)
			}
			var log logLines
			res := &Resume{Print: "p", Every: time.Nanosecond, Log: log.add}
			rep, err := Write(context.Background(), dir, resumeInputs(), Options{Workers: 2, ChunkNNZ: 200, Resume: res})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log.String(), tc.log) {
				t.Fatalf("log %q, want %q", log.String(), tc.log)
			}
			if rep.Cells != resumeCells {
				t.Fatalf("report %+v", rep)
			}
			got := readDir(t, dir)
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
				t.Fatalf("files %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
			}
			for name, b := range want {
				if string(got[name]) != string(b) {
					t.Errorf("%s differs from the uninterrupted run's", name)
				}
			}
			left, _ := os.ReadDir(filepath.Dir(dir))
			if len(left) != 1 {
				t.Fatalf("beside the archive: %v", left)
			}
		})
	}
}

func TestWriteResumeStartsOverOnAnotherPrint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out.scdl")
	interrupted(t, dir, 200)
	var log logLines
	res := &Resume{Print: "q", Every: time.Nanosecond, Log: log.add}
	if _, err := Write(context.Background(), dir, resumeInputs(), Options{Workers: 2, ChunkNNZ: 200, Resume: res}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "starting over: the recipe, the inputs or the tool changed") {
		t.Fatalf("log %q", log.String())
	}
	interrupted(t, dir, 200)
	log = logLines{}
	res = &Resume{Print: "p", Restart: true, Log: log.add}
	if _, err := Write(context.Background(), dir, resumeInputs(), Options{Workers: 2, ChunkNNZ: 200, Resume: res}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "--restart discards") {
		t.Fatalf("log %q", log.String())
	}
}

// A bad input fails a resumable run as it fails any run: nothing is left to resume.
func TestWriteResumableBadInputLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out.scdl")
	in := randomInput("bad", 1, 50, 10, 0.3)
	in.indices[3] = 99
	res := &Resume{Print: "p", Every: time.Nanosecond}
	if _, err := Write(context.Background(), dir, []Input{in}, Options{Workers: 2, ChunkNNZ: 20, Resume: res}); !errors.Is(err, ErrInput) {
		t.Fatalf("got %v", err)
	}
	if left, _ := os.ReadDir(filepath.Dir(dir)); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
}

// A second run on the output of a resumable run still writing is refused.
func TestWriteResumableBusy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out.scdl")
	tmp := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+PartialSuffix)
	os.Mkdir(tmp, 0o755)
	f, err := atomicfile.OpenLocked(filepath.Join(tmp, lockFile), 0o644, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = Write(context.Background(), dir, resumeInputs(), Options{Workers: 1, ChunkNNZ: 200, Resume: &Resume{Print: "p"}})
	if !errors.Is(err, atomicfile.ErrBusy) {
		t.Fatalf("got %v, want %v", err, atomicfile.ErrBusy)
	}
}

// A run without checkpoints removes what a killed resumable run left (it would never resume it).
func TestWriteWithoutCheckpointsRemovesPartial(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out.scdl")
	interrupted(t, dir, 200)
	if _, err := Write(context.Background(), dir, resumeInputs(), Options{Workers: 2, ChunkNNZ: 200}); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(filepath.Dir(dir)); len(left) != 1 {
		t.Fatalf("beside the archive: %v", left)
	}
}
