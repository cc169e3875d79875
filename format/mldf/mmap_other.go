//go:build !unix

package mldf

import (
	"errors"
	"os"
)

var errNoMmap = errors.New("mmap not supported on this platform")

func mmapFile(*os.File, int64) ([]byte, error) { return nil, errNoMmap }

func munmap([]byte) error { return nil }

func dropResident([]byte) {}
