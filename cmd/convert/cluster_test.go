package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/merge"
)

// buildClusterBinary builds the convert binary (buildConvert: once per test process).
func buildClusterBinary(t *testing.T) string {
	t.Helper()
	return buildConvert(t, "")
}

// genImageFolder writes classes×perClass noise PNGs of size×size pixels (noise does not
// compress: decoding and encoding them takes a while, and their sizes are all alike).
func genImageFolder(t *testing.T, dir string, classes, perClass, size int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	for c := range classes {
		sub := filepath.Join(dir, fmt.Sprintf("class%02d", c))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range perClass {
			img := image.NewNRGBA(image.Rect(0, 0, size, size))
			for j := range img.Pix {
				img.Pix[j] = byte(rng.Uint32())
			}
			var buf bytes.Buffer
			if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("%04d.png", i)), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// taskEnv is the test's environment without any scheduler variables, plus extra.
func taskEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "SLURM_") || name == "JOB_COMPLETION_INDEX" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// contentDigests returns one digest per sample over every field: the payload bytes and the
// rest of the metadata struct (image size, audio rate...) for payload fields, the 8 bytes of
// INT and FLOAT fields. Payload offsets are left out: they are where merging may differ.
func contentDigests(t *testing.T, path string) []uint64 {
	t.Helper()
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fields := r.Fields()
	out := make([]uint64, r.NumSamples())
	for i := range out {
		d := xxhash.New()
		for f, fd := range fields {
			meta := r.Meta(i, f)
			if _, has := mldf.MetaSize(fd.Type); !has {
				d.Write(meta)
				continue
			}
			p, err := r.Payload(i, f)
			if err != nil {
				t.Fatalf("%s sample %d field %s: %v", path, i, fd.Name, err)
			}
			fmt.Fprintf(d, "%d:", len(p))
			d.Write(p)
			d.Write(meta[12:])
		}
		out[i] = d.Sum64()
	}
	return out
}

// TestClusterSimulation runs a sharded conversion as a scheduler would: four processes that
// take their task index from the environment (Slurm array variables for some, a Kubernetes
// Indexed Job's JOB_COMPLETION_INDEX for others), one of them killed mid-run and run again,
// a completed one run again (a no-op), then merge; the result must hold the same samples, in
// the same order and with the same content, as a single-machine run.
func TestClusterSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and converts a generated dataset")
	}
	if runtime.GOOS != "linux" {
		t.Skip("watches the task's open files in /proc")
	}
	bin := buildClusterBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	genImageFolder(t, data, 4, 40, 384)
	recipePath := filepath.Join(dir, "recipe.yaml")
	out := filepath.Join(dir, "out", "ds.mldf")
	yaml := fmt.Sprintf(`source:
  type: images
  path: %s
fields:
  - name: image
    type: image
    mode: jpeg
    max_resolution: 96
  - name: label
    type: int
output: %s
page_size: 64KiB
workers: 1
chunk_size: 2
`, data, out)
	if err := os.WriteFile(recipePath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	runTask := func(env []string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"run", recipePath}, args...)...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			return stdout.String(), fmt.Errorf("%v\n%s", err, stderr.String())
		}
		return stdout.String(), nil
	}

	// The single-machine reference.
	single := filepath.Join(dir, "single", "ds.mldf")
	if _, err := runTask(taskEnv(), "--output", single); err != nil {
		t.Fatalf("single run: %v", err)
	}

	const n = 4
	envs := [n][]string{
		taskEnv("SLURM_ARRAY_TASK_ID=10", "SLURM_ARRAY_TASK_MIN=10", "SLURM_ARRAY_TASK_COUNT=4"),
		taskEnv("SLURM_ARRAY_TASK_ID=11", "SLURM_ARRAY_TASK_MIN=10", "SLURM_ARRAY_TASK_COUNT=4"),
		taskEnv("JOB_COMPLETION_INDEX=2"),
		taskEnv("JOB_COMPLETION_INDEX=3"),
	}
	flags := [n][]string{nil, nil, {"--shards", "4"}, {"--shards", "4"}}
	part := func(i int) string { return merge.PartPath(out, i, n) }

	// Task 3 is killed mid-run: while it holds its (unnamed) temporary part open, which it
	// does from the start of the run until it publishes the part.
	killed := 3
	cmd := exec.Command(bin, append([]string{"run", recipePath}, flags[killed]...)...)
	cmd.Env = envs[killed]
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	sent := false
	fdDir := fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid)
	outDir := filepath.Dir(out)
poll:
	for {
		select {
		case err := <-exited:
			t.Fatalf("task %d ended (%v) before it could be killed mid-run: the generated dataset is too small", killed, err)
		default:
		}
		fds, _ := os.ReadDir(fdDir)
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && strings.HasPrefix(target, outDir+"/") &&
				!strings.Contains(target, "rejects") {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				sent = true
				break poll
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	werr := <-exited
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !sent || !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("task %d was not killed mid-run: %v", killed, werr)
	}
	for _, p := range []string{part(killed), part(killed) + ".done"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("killed task left %s (%v)", p, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("killed task left a temporary file %s", e.Name())
		}
	}
	// The other tasks, then the killed one again.
	for _, i := range []int{0, 1, 2, killed} {
		if i == killed {
			// Merging before the re-run names the missing task.
			if _, _, err := run(t, "merge", out); err == nil || !strings.Contains(err.Error(), "tasks [3]") {
				t.Fatalf("merge with task 3 missing: err = %v", err)
			}
		}
		if _, err := runTask(envs[i], flags[i]...); err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
		if _, err := os.Stat(part(i) + ".done"); err != nil {
			t.Fatalf("task %d: no completion record: %v", i, err)
		}
	}

	// A completed task run again does nothing.
	before, err := os.ReadFile(part(1))
	if err != nil {
		t.Fatal(err)
	}
	st1, _ := os.Stat(part(1))
	stdout, err := runTask(envs[1], flags[1]...)
	if err != nil {
		t.Fatalf("re-run of task 1: %v", err)
	}
	if !strings.Contains(stdout, "up to date") {
		t.Fatalf("re-run of a completed task printed %q, want \"up to date\"", stdout)
	}
	after, _ := os.ReadFile(part(1))
	st2, _ := os.Stat(part(1))
	if !bytes.Equal(before, after) || !st1.ModTime().Equal(st2.ModTime()) {
		t.Fatal("re-run of a completed task rewrote its part")
	}

	// Merge (the parts found from the output's name) and compare with the single run.
	mergeOut, err := exec.Command(bin, "merge", out, "--verify").CombinedOutput()
	if err != nil {
		t.Fatalf("merge: %v\n%s", err, mergeOut)
	}
	if !strings.Contains(string(mergeOut), "merged 4 parts") {
		t.Fatalf("merge printed %q", mergeOut)
	}
	if _, err := mldf.Verify(out); err != nil {
		t.Fatalf("merged file: %v", err)
	}
	want, got := contentDigests(t, single), contentDigests(t, out)
	if len(got) != len(want) || len(want) != 160 {
		t.Fatalf("merged %d samples, single run %d (want 160)", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sample %d differs between the merged file and the single run", i)
		}
	}
	var total int
	for i := range n {
		r, err := mldf.Open(part(i))
		if err != nil {
			t.Fatal(err)
		}
		if r.NumSamples() == 0 {
			t.Errorf("part %d is empty: the slicing is not balanced", i)
		}
		total += r.NumSamples()
		r.Close()
	}
	if total != len(want) {
		t.Fatalf("parts hold %d samples, want %d", total, len(want))
	}

	t.Run("refusals", func(t *testing.T) { testMergeRefusals(t, out, n) })
}

// testMergeRefusals copies the parts of a finished run and checks that merge refuses a
// missing part, a part without its record, a part that does not match its record and parts
// of different recipes.
func testMergeRefusals(t *testing.T, out string, n int) {
	cases := []struct {
		name  string
		spoil func(t *testing.T, out string)
		want  string
	}{
		{"missing part", func(t *testing.T, out string) {
			os.Remove(merge.PartPath(out, 2, n))
		}, "re-run task 2"},
		{"part without record", func(t *testing.T, out string) {
			os.Remove(merge.PartPath(out, 1, n) + ".done")
		}, ".done does not exist"},
		{"checksum mismatch", func(t *testing.T, out string) {
			// Part 2's bytes under part 1's name: its record no longer matches.
			b, err := os.ReadFile(merge.PartPath(out, 2, n))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(merge.PartPath(out, 1, n), b, 0o644)
		}, "header checksum"},
		{"different recipes", func(t *testing.T, out string) {
			rec := merge.PartPath(out, 3, n) + ".done"
			var m map[string]any
			b, _ := os.ReadFile(rec)
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m["recipe_sha256"] = strings.Repeat("0", 64)
			b, _ = json.Marshal(m)
			os.WriteFile(rec, b, 0o644)
		}, "different recipes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := filepath.Join(dir, "ds.mldf")
			for i := range n {
				for _, suffix := range []string{"", ".done"} {
					b, err := os.ReadFile(merge.PartPath(out, i, n) + suffix)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(merge.PartPath(o, i, n)+suffix, b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			tc.spoil(t, o)
			var parts []string
			for i := range n {
				parts = append(parts, merge.PartPath(o, i, n))
			}
			_, _, err := run(t, append([]string{"merge", o}, parts...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("merge: err = %v, want it to say %q", err, tc.want)
			}
			if _, err := os.Stat(o); !os.IsNotExist(err) {
				t.Fatalf("a refused merge wrote %s", o)
			}
		})
	}
}
