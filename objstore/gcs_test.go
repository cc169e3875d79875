//go:build !nogcs

package objstore

import (
	"context"
	"strings"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// TestConformanceGCS runs the store conformance against fake-gcs-server (in-process, over
// HTTP), reached the standard way: STORAGE_EMULATOR_HOST.
func TestConformanceGCS(t *testing.T) {
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Port: 0})
	if err != nil {
		t.Skipf("fake-gcs-server does not start: %v", err)
	}
	defer srv.Stop()
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "bkt"})
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(srv.URL(), "http://"))
	c := New(testOpts()...)
	defer c.Close()
	conformance(t, c, "gs://bkt/")
	t.Run("resume", func(t *testing.T) { resumeCheck(t, "gs://bkt/") }) // temporary part objects
	_, err = c.Stat(context.Background(), "gs://nobucket/x")
	wantErr(t, err, ErrNotFound, "gs://nobucket/x")
}
