//go:build !unix

package pagewriter

import "testing"

// mkfifo skips the test: named pipes are a Unix thing.
func mkfifo(t *testing.T, _ string) {
	t.Skip("no named pipes on this system")
}
