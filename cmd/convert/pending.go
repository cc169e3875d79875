package main

import (
	"context"
	"fmt"
	"io"
)

// TEMPORARY: replaced as the merge, export and beton work lands.
func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return fmt.Errorf("merge: %w", errNotYet)
}
func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return fmt.Errorf("export: %w", errNotYet)
}
func inspectBeton(w io.Writer, path string, n int, asJSON bool) error { return errNotYet }
func verifyBeton(w io.Writer, path string) error                      { return errNotYet }
