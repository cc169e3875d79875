//go:build !unix

package jsonl

import (
	"errors"
	"os"
)

// canMap is whether local files are read through a mapping on this system: not here, they
// are read with read calls.
const canMap = false

func mapRange(*os.File, int64, int) ([]byte, error) {
	return nil, errors.ErrUnsupported
}

func unmap([]byte) {}

func prefetch(*os.File, int64, int64) {}
