//go:build cgo

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// abiProgram opens the file in argv[1], reads the labels of the first rank's sequential
// epoch and the "data" field through the variable-output path, and exercises the error path.
const abiProgram = `
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "libmldf.h"

int main(int argc, char **argv) {
	char *err = NULL;
	char *v = mldf_version();
	printf("version %s\n", v);
	mldf_free(v);
	int64_t h = mldf_open(argv[1], "{\"threads\":2,\"verify_checksums\":true}", &err);
	if (h <= 0) { printf("open: %s\n", err); return 1; }
	char *d = mldf_describe(h);
	printf("describe %s\n", d);
	mldf_free(d);
	int64_t idx[8];
	int64_t n = mldf_order(h, "{\"mode\":\"sequential\",\"rank\":1,\"world\":2}", 0, 4, idx, &err);
	if (n < 0) { printf("order: %s\n", err); return 1; }
	printf("len %lld idx %lld %lld %lld %lld\n", (long long)n, (long long)idx[0], (long long)idx[1], (long long)idx[2], (long long)idx[3]);
	int64_t p = mldf_plan(h, "{\"fields\":[{\"field\":\"label\",\"ops\":[{\"op\":\"Int\"}]},{\"field\":\"data\",\"ops\":[{\"op\":\"Bytes\"}]}]}", &err);
	if (p <= 0) { printf("plan: %s\n", err); return 1; }
	char *o = mldf_plan_outputs(p);
	printf("outputs %s\n", o);
	mldf_free(o);
	int64_t sizes[2];
	if (mldf_batch_bytes(p, idx, 4, sizes, &err) < 0) { printf("batch_bytes: %s\n", err); return 1; }
	int64_t labels[4], offsets[5];
	char *data = malloc(sizes[1] + 1);
	void *outs[3] = {labels, offsets, data};
	if (mldf_run(p, idx, 4, 0, outs, sizes, &err) != 0) { printf("run: %s\n", err); return 1; }
	data[sizes[1]] = 0;
	printf("labels %lld %lld %lld %lld data %s offsets %lld\n", (long long)labels[0], (long long)labels[1], (long long)labels[2], (long long)labels[3], data, (long long)offsets[4]);
	free(data);
	// two batches submitted before either is waited for, then the counters
	int64_t idx2[2] = {0, 9}, l1[4], l2[2], o1[5], o2[3], s2[2];
	char d1[64], d2[64];
	void *outs1[3] = {l1, o1, d1}, *outs2[3] = {l2, o2, d2};
	if (mldf_batch_bytes(p, idx2, 2, s2, &err) < 0) { printf("batch_bytes: %s\n", err); return 1; }
	int64_t t1 = mldf_submit(p, idx, 4, 0, outs1, sizes, &err);
	int64_t t2 = mldf_submit(p, idx2, 2, 0, outs2, s2, &err);
	if (t1 <= 0 || t2 <= 0) { printf("submit: %s\n", err); return 1; }
	if (mldf_wait(t2, &err) != 0 || mldf_wait(t1, &err) != 0) { printf("wait: %s\n", err); return 1; }
	printf("submitted %lld %lld %lld %lld %.*s\n", (long long)l1[0], (long long)l1[3], (long long)l2[0], (long long)l2[1], (int)o2[2], d2);
	int wrc = mldf_wait(t1, &err);
	printf("waitagain %d %s\n", wrc, err);
	mldf_free(err);
	err = NULL;
	char *st = mldf_stats(h, 1);
	printf("stats %s\n", st);
	mldf_free(st);
	int64_t bad = mldf_plan(h, "{\"fields\":[{\"field\":\"nope\",\"ops\":[{\"op\":\"Int\"}]}]}", &err);
	printf("badplan %lld %s\n", (long long)bad, err);
	mldf_free(err);
	err = NULL;
	int64_t big[1] = {99};
	int rc = mldf_run(p, big, 1, 0, outs, sizes, &err);
	printf("badrun %d %s\n", rc, err);
	mldf_free(err);
	mldf_plan_close(p);
	mldf_close(h);
	mldf_close(h);
	int64_t h2 = mldf_open("/nonexistent.mldf", NULL, &err);
	printf("badopen %lld %s\n", (long long)h2, err);
	mldf_free(err);
	return 0;
}
`

func TestCABI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the shared library")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libmldf.so")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-o", lib, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	src := filepath.Join(dir, "abi.c")
	os.WriteFile(src, []byte(abiProgram), 0o644)
	bin := filepath.Join(dir, "abi")
	if out, err := exec.Command(cc, "-o", bin, src, "-I", dir, "-L", dir, "-lmldf", "-Wl,-rpath,"+dir).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "t.mldf")
	writeFile(t, file, 10)
	out, err := exec.Command(bin, file).CombinedOutput()
	if err != nil {
		t.Fatalf("abi: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		`"num_samples":10`,
		"len 5 idx 1 3 5 7",
		`"dtype":"int64"`,
		"labels 101 103 105 107 data s1s3s5s7 offsets 8",
		`badplan 0 loader: bad plan: field "nope" is not in`,
		"badrun 1 " + file + ": loader: sample index out of range: index 99",
		"badopen 0 ",
		"submitted 101 107 100 109 s0s9",
		"waitagain 1 libmldf: bad handle: not a submitted batch",
		`stats {"threads":2,`,
		`"batches":3,"samples":10,`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func writeFile(t *testing.T, path string, n int) {
	fields := []mldf.FieldDesc{{Name: "label", Type: mldf.TypeInt}, {Name: "data", Type: mldf.TypeBytes}}
	w, err := mldf.Create(path, mldf.Options{PageSize: 4096, Fields: fields, Checksums: true})
	if err != nil {
		t.Fatal(err)
	}
	b := w.NewBatch()
	for i := range n {
		row := make([]byte, w.RowSize())
		mldf.PutInt(row, int64(100+i))
		if err := b.Append(row, [][]byte{nil, []byte(fmt.Sprintf("s%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(context.Background(), w.Issue(), b); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}
