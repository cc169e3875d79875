//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

// Hold does nothing here: without flock, RemoveLeftovers takes every leftover for a killed
// run's.
func Hold(*os.File) {}

func tryLock(*os.File) bool { return true }

var errNoUnnamed = errors.New("unnamed temporary files are not supported here")

// OpenUnnamed fails here: there are no unnamed files (see the Linux build).
func OpenUnnamed(string) (*os.File, error) { return nil, errNoUnnamed }

func linkUnnamed(*os.File, string) error { return errNoUnnamed }
