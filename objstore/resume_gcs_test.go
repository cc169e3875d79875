//go:build !nogcs

package objstore

import (
	"strings"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// TestResumeGCS resumes an upload whose parts are temporary objects (fake-gcs-server).
func TestResumeGCS(t *testing.T) {
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Port: 0})
	if err != nil {
		t.Skipf("fake-gcs-server does not start: %v", err)
	}
	defer srv.Stop()
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "bkt"})
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(srv.URL(), "http://"))
	// fake-gcs-server takes its time over 5 MiB parts under -race: a longer stall timeout.
	c := New(testOpts(WithStallTimeout(30 * time.Second))...)
	defer c.Close()
	resumeCheck(t, c, "gs://bkt/")
}
