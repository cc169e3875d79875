//go:build unix && !linux

package jsonl

import "os"

// prefetch does nothing here: the kernel reads a mapping ahead of its page faults.
func prefetch(*os.File, int64, int64) {}
