package merge

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mldf/convert/internal/s3test"
	"github.com/mldf/convert/objstore"
)

// A merge in a bucket makes the local merge's checks, through the MLDF reader over ranged
// reads: VerifyParts verifies every part in the bucket (a flipped payload bit fails the merge,
// naming the part, and nothing appears), and the merged object is the local merge's bytes.
func TestObjectMergeVerifiesParts(t *testing.T) {
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	c := objstore.New(objstore.WithRetry(3, time.Millisecond, 10*time.Millisecond))
	defer c.Close()
	ctx := context.Background()

	dir := t.TempDir()
	local := filepath.Join(dir, "o.mldf")
	parts := writeParts(t, local, 3, 8192, genSamples(300, 7), "r")
	if _, err := MergeWith(ctx, local, parts, Options{}); err != nil {
		t.Fatal(err)
	}
	upload := func(t *testing.T, out string, flip bool) []string {
		t.Helper()
		var urls []string
		for i, p := range parts {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if flip && i == 1 {
				cp := filepath.Join(t.TempDir(), filepath.Base(p))
				if err := os.WriteFile(cp, b, 0o644); err != nil {
					t.Fatal(err)
				}
				flipPayloadBit(t, cp, 5, func(int) int { return 0 })
				b, _ = os.ReadFile(cp)
			}
			url := PartPath(out, i, len(parts))
			rec, err := os.ReadFile(p + ".done")
			if err != nil {
				t.Fatal(err)
			}
			if err := c.WriteFile(ctx, url, b); err != nil {
				t.Fatal(err)
			}
			if err := c.WriteFile(ctx, url+".done", rec); err != nil {
				t.Fatal(err)
			}
			urls = append(urls, url)
		}
		return urls
	}

	out := "s3://bkt/good/o.mldf"
	if _, err := MergeWith(ctx, out, upload(t, out, false), Options{Store: c, TrustParts: true, VerifyParts: true}); err != nil {
		t.Fatalf("bucket merge with VerifyParts: %v", err)
	}
	want, _ := os.ReadFile(local)
	got, err := c.ReadFile(ctx, out, 1<<30)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("merged object: %d bytes (%v), differs from the local merge's %d", len(got), err, len(want))
	}

	out = "s3://bkt/bad/o.mldf"
	urls := upload(t, out, true)
	_, err = MergeWith(ctx, out, urls, Options{Store: c, TrustParts: true, VerifyParts: true})
	if !errors.Is(err, ErrCorruptPart) || !strings.Contains(err.Error(), urls[1]) {
		t.Fatalf("a flipped bit in a bucket part, VerifyParts: got %v", err)
	}
	if _, err := c.Stat(ctx, out); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("a failed merge left %s: %v", out, err)
	}
	// Without VerifyParts the server-side copy takes the part as it is (TrustParts).
	if _, err := MergeWith(ctx, out, urls, Options{Store: c, TrustParts: true}); err != nil {
		t.Fatalf("bucket merge without VerifyParts: %v", err)
	}
}
