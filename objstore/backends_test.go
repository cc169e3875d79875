package objstore

import (
	"context"
	"strings"
	"testing"
)

// A store whose SDK a build tag left out (nos3, nogcs, noazure) fails with ErrUnsupported
// and says so, for every operation that opens it; in the default build every store is in.
// scripts/test --full runs this package with -tags nos3,nogcs,noazure.
func TestBackendsLeftOut(t *testing.T) {
	ctx := context.Background()
	seen := map[string]bool{}
	for _, b := range Backends() {
		seen[b.Scheme] = true
		if b.Built {
			continue
		}
		scheme := b.Scheme
		if scheme == SchemeAzure {
			scheme = "az"
		}
		c := New(testOpts()...)
		url := scheme + "://bkt/x.mldf"
		_, err := c.Stat(ctx, url)
		wantErr(t, err, ErrUnsupported, url)
		if want := "this build has no " + scheme + ":// support (built with -tags " + b.Tag + ")"; !strings.Contains(err.Error(), want) {
			t.Errorf("Stat(%s): %v, want it to say %q", url, err, want)
		}
		if err := c.WriteFile(ctx, url, []byte("x")); err == nil || !strings.Contains(err.Error(), "no "+scheme+":// support") {
			t.Errorf("WriteFile(%s): %v, want the build's missing support named", url, err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{SchemeS3, SchemeGCS, SchemeAzure} {
		if !seen[s] {
			t.Errorf("Backends() lacks %s", s)
		}
	}
}
