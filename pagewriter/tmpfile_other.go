//go:build !linux

package pagewriter

import (
	"errors"
	"os"
)

var errNoUnnamed = errors.New("unnamed temporary files are not supported here")

func openUnnamed(dir string) (*os.File, error) { return nil, errNoUnnamed }

func linkUnnamed(f *os.File, path string) error { return errNoUnnamed }
