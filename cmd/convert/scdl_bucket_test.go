package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/format/scdl"
)

// An SCDL archive in a bucket (its files the objects under a prefix) is inspected and
// verified as on disk: the same answers, read with ranged requests through objstore.
func TestBucketReadSCDL(t *testing.T) {
	c, _ := newBucket(t)
	out := t.TempDir()
	t.Setenv("OUT", out)
	if _, stderr, err := run(t, "run", "configs/tenx-scdl.yaml", "--workers", "2"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	local := filepath.Join(out, "tenx.scdl")
	upload(t, c, local, "s3://bkt/cells/tenx.scdl")
	for _, url := range []string{"s3://bkt/cells/tenx.scdl", "s3://bkt/cells/tenx.scdl/"} {
		for _, args := range [][]string{{"inspect"}, {"inspect", "--json"}, {"inspect", "--sample", "3"}, {"verify"}} {
			lo, _, lerr := run(t, append([]string{args[0], local}, args[1:]...)...)
			ro, _, rerr := run(t, append([]string{args[0], url}, args[1:]...)...)
			if lerr != nil || rerr != nil {
				t.Fatalf("%v: local %v, bucket %v", args, lerr, rerr)
			}
			if got := strings.ReplaceAll(ro, strings.TrimSuffix(url, "/"), local); got != lo {
				t.Fatalf("%v of %s: from the bucket\n%s\nlocally\n%s", args, url, ro, lo)
			}
		}
	}

	// A damaged archive in the bucket: the rule and the array, as locally.
	upload(t, c, local, "s3://bkt/cells/bad.scdl")
	if err := c.WriteFile(context.Background(), "s3://bkt/cells/bad.scdl/"+scdl.DataFile, []byte("short")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "verify", "s3://bkt/cells/bad.scdl"); err == nil || !strings.Contains(err.Error(), `rule "array length"`) ||
		!strings.Contains(err.Error(), "s3://bkt/cells/bad.scdl") {
		t.Fatalf("verify of a damaged archive in the bucket: %v", err)
	}
	// A missing member: the same error as locally.
	const nometa = "s3://bkt/cells/nometa.scdl"
	upload(t, c, local, nometa)
	if err := c.Remove(context.Background(), nometa+"/"+scdl.MetadataFile); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(local, scdl.MetadataFile))
	_, _, lerr := run(t, "inspect", local)
	_, _, rerr := run(t, "inspect", nometa)
	if lerr == nil || rerr == nil || strings.ReplaceAll(rerr.Error(), nometa, local) != lerr.Error() {
		t.Fatalf("a missing member: local %v, bucket %v", lerr, rerr)
	}
	// A prefix with no object is no archive: the error names it.
	if _, _, err := run(t, "inspect", "s3://bkt/cells/none.scdl"); err == nil || !strings.Contains(err.Error(), "s3://bkt/cells/none.scdl") {
		t.Fatalf("inspect of nothing: %v", err)
	}
}
