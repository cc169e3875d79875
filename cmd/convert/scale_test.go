//go:build !race

// The race detector multiplies memory and time: this test runs in the non-race pass of
// scripts/test (CGO_ENABLED=0 go test ./...).

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// TestScaleMemoryFlat converts 1 M and 4 M generated JSONL lines in a subprocess and checks
// that the peak RSS does not grow with the sample count: the kernel's high-water mark of the
// whole process (the report, verify and inspect included) differs by less than 20 MB. It also
// runs verify and inspect on both files and asks the same of them.
func TestScaleMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 5 M samples")
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak RSS from wait4 is read on Linux")
	}
	bin := buildClusterBinary(t)
	dir := t.TempDir()
	type run struct{ convert, verify, inspect int64 }
	var got []run
	for _, n := range []int{1_000_000, 4_000_000} {
		in := filepath.Join(dir, fmt.Sprintf("lines-%d.jsonl", n))
		writeTinyJSONL(t, in, n)
		out := filepath.Join(dir, fmt.Sprintf("out-%d.mldf", n))
		recipe := filepath.Join(dir, fmt.Sprintf("r-%d.yaml", n))
		y := fmt.Sprintf("source: {type: jsonl, inputs: [%q]}\nfields:\n  - {name: text, type: text}\n  - {name: id, type: int}\noutput: %q\n", in, out)
		if err := os.WriteFile(recipe, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		var r run
		r.convert = childPeakRSS(t, bin, "run", recipe, "--workers", "2")
		rd, err := mldf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		if rd.NumSamples() != n {
			t.Fatalf("%s holds %d samples, want %d", out, rd.NumSamples(), n)
		}
		rd.Close()
		r.verify = childPeakRSS(t, bin, "verify", out)
		r.inspect = childPeakRSS(t, bin, "inspect", out)
		os.Remove(in)
		got = append(got, r)
		t.Logf("%d samples: peak RSS convert %d MB, verify %d MB, inspect %d MB", n, r.convert>>20, r.verify>>20, r.inspect>>20)
	}
	const slack = 20 << 20
	for _, c := range []struct {
		what       string
		small, big int64
	}{{"convert", got[0].convert, got[1].convert}, {"verify", got[0].verify, got[1].verify}, {"inspect", got[0].inspect, got[1].inspect}} {
		if c.big-c.small >= slack {
			t.Errorf("%s: peak RSS %d MB for 4 M samples, %d MB for 1 M: it grows with the sample count", c.what, c.big>>20, c.small>>20)
		}
	}
}

// writeTinyJSONL writes n lines {"id": i, "text": "..."} of a few words.
func writeTinyJSONL(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	words := []string{"model", "data", "token", "page", "shard", "sample"}
	var b []byte
	for i := range n {
		b = append(b[:0], `{"id": `...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `, "text": "`...)
		b = append(b, words[i%len(words)]...)
		b = append(b, ' ')
		b = append(b, words[(i/7)%len(words)]...)
		b = append(b, "\"}\n"...)
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// childPeakRSS runs the binary with args and returns the process's peak resident set size as the
// kernel accounted it (wait4's ru_maxrss, the VmHWM of the whole run).
func childPeakRSS(t *testing.T, bin string, args ...string) int64 {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("convert %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok || ru.Maxrss <= 0 {
		t.Fatalf("no rusage for convert %s", strings.Join(args, " "))
	}
	return int64(ru.Maxrss) << 10 // KiB on Linux
}
