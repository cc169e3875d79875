package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A .beton in a bucket is inspected and verified like MLDF: through objstore's ranged reads,
// with the output the same file gives on disk (its name aside). A truncated one fails alike.
func TestBucketBetonInspectVerify(t *testing.T) {
	c, _ := newBucket(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 4, 8)
	local := filepath.Join(dir, "x.beton")
	if _, stderr, err := run(t, "images", data, local, "--format", "beton", "--mode", "raw"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	const url = "s3://bkt/ds/x.beton"
	upload(t, c, local, url)
	for _, args := range [][]string{{"inspect"}, {"inspect", "--json"}, {"inspect", "--sample", "3"}, {"verify"}} {
		lout, _, lerr := run(t, append(args, local)...)
		rout, _, rerr := run(t, append(args, url)...)
		if lerr != nil || rerr != nil {
			t.Fatalf("%v: on disk %v, from the bucket %v", args, lerr, rerr)
		}
		if strings.ReplaceAll(rout, url, local) != lout {
			t.Errorf("%v: from the bucket\n%s\non disk\n%s", args, rout, lout)
		}
	}
	b, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.beton")
	if err := os.WriteFile(short, b[:len(b)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	upload(t, c, short, "s3://bkt/short.beton")
	for _, cmd := range []string{"inspect", "verify"} {
		_, _, lerr := run(t, cmd, short)
		_, _, rerr := run(t, cmd, "s3://bkt/short.beton")
		if lerr == nil || rerr == nil || strings.ReplaceAll(rerr.Error(), "s3://bkt/short.beton", short) != lerr.Error() {
			t.Errorf("%s of a truncated .beton: from the bucket %v, on disk %v", cmd, rerr, lerr)
		}
	}
}
