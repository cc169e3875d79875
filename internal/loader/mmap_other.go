//go:build !unix

package loader

import (
	"errors"
	"os"
)

var errNoMmap = errors.New("mmap not supported on this platform")

// mmapFile fails on this platform: the caller reads with ReadAt.
func mmapFile(*os.File, int64) ([]byte, error) { return nil, errNoMmap }

func munmap([]byte) error { return nil }
