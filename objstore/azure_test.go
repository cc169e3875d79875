//go:build !noazure

package objstore

import (
	"bytes"
	"context"
	"testing"

	"github.com/mldf/convert/internal/aztest"
)

// TestConformanceAzure runs the store conformance against Azurite, reached through the
// standard AZURE_STORAGE_* settings.
func TestConformanceAzure(t *testing.T) {
	srv := aztest.Start(t)
	srv.Env(t)
	srv.MakeContainer(t, "bkt")
	c := New(testOpts()...)
	defer c.Close()
	conformance(t, c, "az://bkt/")
	t.Run("resume", func(t *testing.T) { resumeCheck(t, "az://bkt/") }) // uncommitted blocks
	_, err := c.Stat(context.Background(), "az://nobucket/x")
	wantErr(t, err, ErrNotFound, "az://nobucket/x")
	t.Log(err)
}

// On Azure, CopyPart is server-side (Put Block From URL with a SAS the client signs).
func TestAzureServerSideCopy(t *testing.T) {
	srv := aztest.Start(t)
	srv.Env(t)
	srv.MakeContainer(t, "bkt")
	c := New(testOpts()...)
	defer c.Close()
	ctx := context.Background()
	data := testData(300_000, 1)
	if err := c.WriteFile(ctx, "az://bkt/src", data); err != nil {
		t.Fatal(err)
	}
	u, err := c.NewUpload(ctx, "az://bkt/dst")
	if err != nil {
		t.Fatal(err)
	}
	sl, ss, _ := c.parseObject(ctx, "copy", "az://bkt/src")
	sa, _ := c.Stat(ctx, "az://bkt/src")
	if err := u.mp.copyPart(ctx, 1, sl, ss, sa, 1000, 2000); err != nil {
		t.Fatalf("server-side copy: %v", err)
	}
	u.record(1, 2000)
	if err := u.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c, "az://bkt/dst"); !bytes.Equal(got, data[1000:3000]) {
		t.Fatal("copied range differs")
	}
	_, err = c.Stat(ctx, "az://bkt/a?b")
	wantErr(t, err, ErrBadURL, "az://bkt/a?b")
}
