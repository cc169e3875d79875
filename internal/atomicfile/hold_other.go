//go:build !linux

package atomicfile

import "os"

func hold(*os.File) {}
