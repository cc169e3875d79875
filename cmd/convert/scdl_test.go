package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/sources/h5ad"
)

// TestSCDLEndToEnd: h5ad files → SCDL archive (run), verify and inspect it, then SCDL →
// MLDF, and read the cells back with the Python reader, every cell equal to what AnnData
// wrote (testdata/scdl/expected.json).
func TestSCDLEndToEnd(t *testing.T) {
	if !h5ad.Available() {
		t.Skip("built without cgo: no h5ad")
	}
	out := t.TempDir()
	t.Setenv("OUT", out)
	if _, stderr, err := run(t, "run", "configs/h5ad-scdl.yaml", "--workers", "3"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	arch := filepath.Join(out, "pbmc.scdl")
	stdout, _, err := run(t, "verify", arch)
	if err != nil || !strings.Contains(stdout, "OK: SCDL archive, 145 cells") {
		t.Fatalf("verify: %v %q", err, stdout)
	}
	stdout, _, err = run(t, "inspect", arch)
	if err != nil || !strings.Contains(stdout, "var_features 2 block(s)") {
		t.Fatalf("inspect: %v %q", err, stdout)
	}
	// A damaged archive: one clear error naming the rule and the array.
	bad := filepath.Join(out, "bad.scdl")
	os.CopyFS(bad, os.DirFS(arch))
	os.WriteFile(filepath.Join(bad, scdl.DataFile), []byte("short"), 0o644)
	if _, _, err := run(t, "verify", bad); err == nil || !strings.Contains(err.Error(), `rule "array length"`) || !strings.Contains(err.Error(), "DATA (data.npy)") {
		t.Fatalf("verify of a damaged archive: %v", err)
	}

	// SCDL → MLDF, from the archive just written.
	rec := filepath.Join(out, "cells.yaml")
	os.WriteFile(rec, []byte(`source: {type: scdl, path: `+arch+`}
fields:
  - {name: values, type: ndarray}
  - {name: genes, type: ndarray}
  - {name: cell_type, type: text}
  - {name: n_counts, type: int}
output: `+filepath.Join(out, "cells.mldf")+"\n"), 0o644)
	if _, stderr, err := run(t, "run", rec, "--workers", "2"); err != nil {
		t.Fatalf("scdl → mldf: %v\n%s", err, stderr)
	}
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Skip("no python3 with numpy for the Python reader")
	}
	script := `
import io, json, sys
sys.path.insert(0, "python")
import numpy as np, mldf
exp = json.load(open("testdata/scdl/expected.json"))
rows = exp["small_csr"]["rows"] + exp["small_csc"]["rows"] + exp["other_genes"]["rows"]
ct = exp["small_csr"]["obs"]["cell_type"] + exp["small_csc"]["obs"]["cell_type"] + exp["other_genes"]["obs"]["cell_type"]
with mldf.open(sys.argv[1]) as r:
    assert len(r) == len(rows), (len(r), len(rows))
    for i, (vals, cols) in enumerate(rows):
        s = r[i]
        v, g = s["values"], s["genes"]
        v = v if isinstance(v, np.ndarray) else np.load(io.BytesIO(bytes(v)))
        g = g if isinstance(g, np.ndarray) else np.load(io.BytesIO(bytes(g)))
        assert v.dtype == np.float32 and g.dtype == np.uint32, (v.dtype, g.dtype)
        assert v.tolist() == [float(np.float32(x)) for x in vals], (i, v, vals)
        assert g.tolist() == cols, (i, g, cols)
        want = ct[i] if ct[i] is not None else ""
        got = s["cell_type"]
        got = got.decode() if isinstance(got, (bytes, bytearray)) else str(got)
        assert got == want, (i, got, want)
print("ok", len(rows))
`
	cmd := exec.Command(py, "-c", script, filepath.Join(out, "cells.mldf"))
	cmd.Dir = repoRoot(t)
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "ok 145") {
		t.Fatalf("python reader: %v\n%s", err, b)
	}
	var rep runReport
	rb, _ := os.ReadFile(filepath.Join(out, "pbmc.scdl.report.json"))
	if err := json.Unmarshal(rb, &rep); err != nil || !rep.OK || rep.NumSamples != 145 {
		t.Fatalf("report %+v %v", rep, err)
	}
}

// SIGINT during an SCDL run without checkpoints: exit 130, no archive, no temporary directory beside it, and no
// sort files left in TMPDIR.
func TestSCDLSignalLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildConvert(t, dir)
	tenx := filepath.Join(dir, "tenx")
	os.Mkdir(tenx, 0o755)
	const cells, genes, perCell = 200000, 2000, 15
	var mtx strings.Builder
	fmt.Fprintf(&mtx, "%%%%MatrixMarket matrix coordinate integer general\n%d %d %d\n", genes, cells, cells*perCell)
	for c := 1; c <= cells; c++ {
		for k := range perCell {
			fmt.Fprintf(&mtx, "%d %d %d\n", 1+(c*7+k*131)%genes, c, 1+k)
		}
	}
	os.WriteFile(filepath.Join(tenx, "matrix.mtx"), []byte(mtx.String()), 0o644)
	var feats, bcs strings.Builder
	for g := range genes {
		fmt.Fprintf(&feats, "ENSG%d\tG%d\tGene Expression\n", g, g)
	}
	for c := range cells {
		fmt.Fprintf(&bcs, "BC%d-1\n", c)
	}
	os.WriteFile(filepath.Join(tenx, "features.tsv"), []byte(feats.String()), 0o644)
	os.WriteFile(filepath.Join(tenx, "barcodes.tsv"), []byte(bcs.String()), 0o644)
	outDir := filepath.Join(dir, "out")
	os.Mkdir(outDir, 0o755)
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o755)
	rec := filepath.Join(dir, "r.yaml")
	os.WriteFile(rec, []byte("source: {type: mtx10x, path: "+tenx+"}\nformat: scdl\noutput: "+filepath.Join(outDir, "x.scdl")+"\nworkers: 2\n"), 0o644)
	// Without checkpoints (a resumable run keeps its partial archive for the next run:
	// TestSCDLResumeKill9).
	cmd := exec.Command(bin, "run", rec, "--checkpoint-every", "0")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the temporary archive to appear, then interrupt.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(outDir, ".x.scdl.tmp-*")); len(m) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Skipf("the run ended before the signal (%v): nothing to check", err)
	}
	if ee.ExitCode() != 130 {
		t.Fatalf("exit code %d, want 130", ee.ExitCode())
	}
	for _, d := range []string{outDir, tmp} {
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			names := []string{}
			for _, e := range entries {
				if !strings.HasSuffix(e.Name(), ".report.json") { // the run's report (ok: false) stays
					names = append(names, e.Name())
				}
			}
			if len(names) > 0 {
				t.Fatalf("%s holds %v after the interrupted run", d, names)
			}
		}
	}
}
