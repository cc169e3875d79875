package pagewriter

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Spill is a scratch file for a table that grows with the dataset (metadata rows, allocation
// entries): records are written at their final index with WriteAt by any worker and copied
// after the data when the writer finishes, so the table never has to fit in memory. The file
// is unlinked as soon as it is created, so nothing is left behind even after kill -9.
type Spill struct {
	File
	os   *os.File
	name string
}

// CreateSpill creates an unlinked scratch file in dir.
func CreateSpill(dir, role string, wrap WrapFunc) (*Spill, error) {
	f, err := os.CreateTemp(dir, ".mldf-"+role+"-*")
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

// copyBuf is the size of the buffer CopyTo uses.
const copyBuf = 1 << 20

// CopyTo copies the first n bytes of the spill to dst at off, feeding them to h as well
// (h may be nil).
func (s *Spill) CopyTo(dst io.WriterAt, off, n int64, h io.Writer) error {
	buf := make([]byte, min(n, copyBuf))
	for done := int64(0); done < n; {
		b := buf[:min(int64(len(buf)), n-done)]
		if _, err := s.File.ReadAt(b, done); err != nil {
			return fmt.Errorf("read scratch at %d: %w", done, err)
		}
		if h != nil {
			h.Write(b)
		}
		if _, err := dst.WriteAt(b, off+done); err != nil {
			return err
		}
		done += int64(len(b))
	}
	return nil
}

func dirOf(path string) string {
	d := filepath.Dir(path)
	if d == "" {
		return "."
	}
	return d
}
