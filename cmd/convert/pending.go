package main

import "io"

// TEMPORARY: replaced as the merge, export and beton work lands.
func inspectBeton(w io.Writer, path string, n int, asJSON bool) error { return errNotYet }
func verifyBeton(w io.Writer, path string) error                      { return errNotYet }
