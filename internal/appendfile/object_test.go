package appendfile

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mldf/convert/internal/s3test"
	"github.com/mldf/convert/objstore"
)

// TestAppendInBucket: appending to an object in a bucket (the S3 test server) gives the bytes
// of the local append, with the base's data region copied server-side when it is large
// enough for a part, and through the client when it is not.
func TestAppendInBucket(t *testing.T) {
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	// Without part checksums, as for a merge (objstore.WithoutPartChecksums: server-side copies).
	c := objstore.New(objstore.WithoutPartChecksums(), objstore.WithRetry(3, time.Millisecond, 10*time.Millisecond))
	defer c.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		baseN      int
		serverCopy bool
		empty      int // samples without a payload first: a metadata table of more than the 4 MiB the tables are written by
	}{
		{"small base", 40, false, 0},
		{"large base", 7000, true, 0}, // ~14 MB of payloads: a 5 MiB top-up, then a copied part
		{"many rows", 40, false, 200_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			base, add := filepath.Join(dir, "base.mldf"), filepath.Join(dir, "add.mldf")
			writeFile(t, base, 4096, testFields, true, append(make([]sample, tc.empty), genSamples(tc.baseN, 1)...))
			writeFile(t, add, 4096, testFields, true, genSamples(50, 2))
			b, _ := os.ReadFile(base)
			url := "s3://bkt/" + strings.ReplaceAll(tc.name, " ", "-") + "/base.mldf"
			if err := c.WriteFile(ctx, url, b); err != nil {
				t.Fatal(err)
			}
			if _, err := Append(ctx, base, add, base); err != nil {
				t.Fatal(err)
			}
			rep, err := AppendWith(ctx, c, url, add, url)
			if err != nil {
				t.Fatal(err)
			}
			if (rep.ServerCopied > 0) != tc.serverCopy {
				t.Fatalf("server-side copied %d bytes; want a server-side copy: %v", rep.ServerCopied, tc.serverCopy)
			}
			got, err := c.ReadFile(ctx, url, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(base)
			if !bytes.Equal(got, want) {
				t.Fatalf("bucket append: %d bytes; local append: %d bytes; they differ", len(got), len(want))
			}
		})
	}
}
