//go:build !linux

package pagewriter

import (
	"errors"
	"os"
	"sync"
)

// haveWritev says that pwritev is not used here: writeRange copies into one buffer.
const haveWritev = false

func pwritev(f *os.File, bufs [][]byte, off int64, iovs *sync.Pool) (int, error) {
	return 0, errors.ErrUnsupported
}
