//go:build !linux

package pagewriter

import (
	"errors"
	"os"
)

var errNoUnnamed = errors.New("unnamed temporary files are not supported here")

func openUnnamed(dir string) (*os.File, error) { return nil, errNoUnnamed }

func linkUnnamed(f *os.File, path string) error { return errNoUnnamed }

// HoldTemp does nothing here: without flock, RemoveLeftovers takes every leftover for a
// killed run's.
func HoldTemp(f *os.File) {}

func tryLock(f *os.File) bool { return true }
