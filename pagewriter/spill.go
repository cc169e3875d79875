package pagewriter

import (
	"fmt"
	"os"
	"path/filepath"
)

// Spill is a scratch file for a table that grows with the dataset (metadata rows, allocation
// entries) or a staged data region: records are written at their final index with WriteAt
// by any worker and copied into the output by the finalizer, so the table never has to fit
// in memory. The file is unlinked as soon as it is created, so nothing is left behind even
// after kill -9.
type Spill struct {
	File
	os   *os.File
	name string
}

// CreateSpill creates an unlinked scratch file in dir.
func CreateSpill(dir, role string, wrap WrapFunc) (*Spill, error) {
	f, err := os.CreateTemp(dir, ".convert-"+role+"-*")
	if err != nil {
		return nil, fmt.Errorf("create %s scratch file in %s: %w", role, dir, err)
	}
	// On Linux the open file lives on without a name. Where removing an open file fails,
	// Close removes it.
	unlinked := os.Remove(f.Name()) == nil
	s := &Spill{File: f, os: f}
	if !unlinked {
		s.name = f.Name()
	}
	if wrap != nil {
		s.File = wrap(f, role)
	}
	return s, nil
}

// Close closes the scratch file and removes it if it still has a name.
func (s *Spill) Close() error {
	err := s.File.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
	return err
}

func dirOf(path string) string {
	d := filepath.Dir(path)
	if d == "" {
		return "."
	}
	return d
}
