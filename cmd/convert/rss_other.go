//go:build !unix

package main

// peakRSS returns 0 (unknown) where getrusage does not exist (Windows): the report's
// peak_rss_bytes is then 0.
func peakRSS() int64 { return 0 }
