//go:build !noazure

package objstore

import (
	"testing"

	"github.com/mldf/convert/internal/aztest"
)

// TestResumeAzure resumes an upload whose parts are uncommitted blocks (Azurite).
func TestResumeAzure(t *testing.T) {
	srv := aztest.Start(t)
	srv.Env(t)
	srv.MakeContainer(t, "bkt")
	c := New(testOpts()...)
	defer c.Close()
	resumeCheck(t, c, "az://bkt/")
}
