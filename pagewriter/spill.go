package pagewriter

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mldf/convert/internal/atomicfile"
)

// Spill is a scratch file for a table that grows with the dataset (metadata rows, allocation
// entries) or a staged data region: records are written at their final index with WriteAt
// by any worker and copied into the output by the finalizer, so the table never has to fit
// in memory. The file has no name (O_TMPFILE on Linux), so nothing is left behind even after
// kill -9; elsewhere it is unlinked right after it is created (a kill in that instant leaves
// a ".convert-ROLE-*" file). A resumable writer's spills are named instead
// (".BASE.partial-ROLE", see Partial) and removed when the run ends.
type Spill struct {
	File
	name string // set where the file could not be unlinked at once
	path string // a resumable writer's named spill (kept by Close; see Partial)
}

// CreateSpill creates an unlinked scratch file in dir: without a name from the start where
// the system allows it (O_TMPFILE), so no kill can leave it behind; elsewhere removed right
// after it is created.
func CreateSpill(dir, role string, wrap WrapFunc) (*Spill, error) {
	s := &Spill{}
	f, err := atomicfile.OpenUnnamed(dir)
	if err != nil {
		if f, err = os.CreateTemp(dir, ".convert-"+role+"-*"); err != nil {
			return nil, fmt.Errorf("create %s scratch file in %s: %w", role, dir, err)
		}
		// On Linux the open file lives on without a name. Where removing an open file
		// fails, Close removes it.
		if os.Remove(f.Name()) != nil {
			s.name = f.Name()
		}
	}
	s.File = f
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
