package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTenX writes a 10x Genomics directory (matrix.mtx, features.tsv, barcodes.tsv) of
// cells x genes with perCell values per cell.
func writeTenX(t *testing.T, dir string, cells, genes, perCell int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var mtx, feats, bcs strings.Builder
	fmt.Fprintf(&mtx, "%%%%MatrixMarket matrix coordinate integer general\n%d %d %d\n", genes, cells, cells*perCell)
	for c := 1; c <= cells; c++ {
		for k := range perCell {
			fmt.Fprintf(&mtx, "%d %d %d\n", 1+(c*7+k*131)%genes, c, 1+k)
		}
	}
	for g := range genes {
		fmt.Fprintf(&feats, "ENSG%d\tG%d\tGene Expression\n", g, g)
	}
	for c := range cells {
		fmt.Fprintf(&bcs, "BC%d-1\n", c)
	}
	for name, s := range map[string]string{"matrix.mtx": mtx.String(), "features.tsv": feats.String(), "barcodes.tsv": bcs.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// An SCDL output killed with SIGKILL at random moments and started again each time ends with
// the archive of an uninterrupted run, every file the same bytes, and nothing else left beside
// it. Builds the binary: skipped under -race (buildConvert), run by the norace phase.
func TestSCDLResumeKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildConvert(t, dir)
	tenx := filepath.Join(dir, "tenx")
	writeTenX(t, tenx, 150_000, 2000, 12)
	rec := filepath.Join(dir, "r.yaml")
	os.WriteFile(rec, []byte("source: {type: mtx10x, path: "+tenx+"}\nformat: scdl\noutput: x.scdl\nworkers: 2\n"), 0o644)
	ref := filepath.Join(dir, "ref", "x.scdl")
	start := time.Now()
	if b, err := exec.Command(bin, "run", rec, "--output", ref, "--checkpoint-every", "0").CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, b)
	}
	full := time.Since(start)
	want := treeFiles(t, ref)
	out := filepath.Join(dir, "out", "x.scdl")
	os.Mkdir(filepath.Dir(out), 0o755)
	record := filepath.Join(filepath.Dir(out), ".x.scdl.scdl-checkpoint")
	rnd := rand.New(rand.NewPCG(30, 3))
	args := []string{"run", rec, "--output", out, "--checkpoint-every", "20ms"}
	logs, kills := killRuns(t, bin, args, 6, 40, func(k int, began time.Time) {
		// Reading the 10x matrix takes most of a run: every other kill lands in the writing,
		// a moment after a checkpoint of this run; the others anywhere.
		if k%2 == 0 {
			for time.Since(began) < 2*full+5*time.Second {
				if fi, err := os.Stat(record); err == nil && fi.ModTime().After(began) {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			time.Sleep(time.Duration(rnd.Int64N(int64(100 * time.Millisecond))))
		} else {
			time.Sleep(time.Duration(rnd.Int64N(int64(full))))
		}
	})
	sameTree(t, out, want, kills, logs)
	onlyFiles(t, filepath.Dir(out), "x.scdl", "x.scdl.report.json")
	resumes := strings.Count(logs, "resumed after")
	t.Logf("uninterrupted %v; %d kills; %d resumes", full.Round(time.Millisecond), kills, resumes)
	if kills >= 3 && resumes == 0 {
		t.Errorf("%d kills and not one resume:\n%s", kills, logs)
	}
}
