//go:build linux

package parquet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mldf/convert/internal/pqfile/pqtest"
	"github.com/mldf/convert/sample"
)

// rssCase is a hostile table of the memory measurements, at the size of its report.
type rssCase struct {
	gen  func() []byte
	cols []Column
}

func rssCases() map[string]rssCase {
	return map[string]rssCase{
		"wide: 5000 INT64 columns x 200 rows":                     {func() []byte { return pqtest.Wide(5000, 200) }, rssColumns("c", 5000)},
		"dictionary: id + one 256 KiB string in 40 000 rows":      {func() []byte { return pqtest.Dict(40000, 256<<10) }, []Column{{Name: "id", Path: "id"}, {Name: "s", Path: "s"}}},
		"zstd: four 200 MiB pages of zeros in one row group":      {func() []byte { return pqtest.Zstd(4, 1, 200<<20) }, rssColumns("b", 4)},
		"zstd: one 200 MiB page of zeros in each of 4 row groups": {func() []byte { return pqtest.Zstd(1, 4, 200<<20) }, rssColumns("b", 1)},
		"300 000 one-row row groups":                              {func() []byte { return pqtest.ManyGroups(300000) }, []Column{{Name: "x", Path: "x"}}},
	}
}

func rssColumns(prefix string, n int) []Column {
	out := make([]Column, n)
	for i := range out {
		out[i] = Column{Name: fmt.Sprintf("%s%d", prefix, i), Path: fmt.Sprintf("%s%d", prefix, i)}
	}
	return out
}

// TestPeakRSS measures the peak RSS of reading each hostile table (in a child process, so
// that generating the file does not count), when PARQUET_RSS=1; it asserts nothing.
//
//	PARQUET_RSS=1 go test -run TestPeakRSS -v ./sources/parquet
func TestPeakRSS(t *testing.T) {
	if os.Getenv("PARQUET_RSS") == "" {
		t.Skip("a measurement: set PARQUET_RSS=1")
	}
	for name := range rssCases() {
		if only := os.Getenv("PARQUET_RSS"); only != "1" && only != name {
			continue
		}
		// The file is written by a child too: a child's peak RSS counts its parent's (exec
		// keeps the high-water mark of the address space it replaces).
		path := filepath.Join(t.TempDir(), "t.parquet")
		gen := exec.Command(os.Args[0], "-test.run=^TestRSSChild$")
		gen.Env = append(os.Environ(), "PARQUET_RSS_CHILD="+name, "PARQUET_RSS_FILE="+path, "PARQUET_RSS_GEN=1")
		if out, err := gen.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", name, err, out)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestRSSChild$")
		cmd.Env = append(os.Environ(), "PARQUET_RSS_CHILD="+name, "PARQUET_RSS_FILE="+path)
		out, err := cmd.CombinedOutput()
		ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		var rss int64
		if ru != nil {
			rss = int64(ru.Maxrss) >> 10
		}
		t.Logf("%-58s %7d bytes: peak RSS %5d MiB, %.1f s CPU (%v) %s", name, st.Size(), rss,
			(cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), err, lastLine(out))
	}
}

func lastLine(b []byte) string {
	s := string(b)
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			s = s[i+1:]
			break
		}
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// TestRSSChild is TestPeakRSS's child: it reads one table and prints the outcome.
func TestRSSChild(t *testing.T) {
	name := os.Getenv("PARQUET_RSS_CHILD")
	if name == "" {
		t.Skip("run by TestPeakRSS")
	}
	if os.Getenv("PARQUET_RSS_GEN") != "" {
		if err := os.WriteFile(os.Getenv("PARQUET_RSS_FILE"), rssCases()[name].gen(), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	src, err := NewFiles([]string{os.Getenv("PARQUET_RSS_FILE")}, rssCases()[name].cols, Options{Workers: 2})
	rows := 0
	if err == nil {
		err = src.Run(context.Background(), func(s sample.Sample) error {
			rows++
			return s.Err
		})
	}
	fmt.Printf("rows %d, error: %v\n", rows, err)
}
