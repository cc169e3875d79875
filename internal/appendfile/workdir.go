package appendfile

import (
	"os"
	"path/filepath"
	"runtime"

	"github.com/mldf/convert/internal/atomicfile"
)

// WorkDir is the folder ".BASE.append-*" where an append writes its new samples before
// appending them to BASE. It is held (atomicfile.Hold: a shared lock on the open folder)
// while the append lives, so that another append's clean-up never removes it.
type WorkDir struct {
	path string
	hold *os.File
}

// NewWorkDir makes the working folder of an append to base in dir ("" for the system's
// temporary folder), after removing the folders that killed appends to the same base left
// there (RemoveStale).
func NewWorkDir(dir, base string) (*WorkDir, error) {
	RemoveStale(dir, base)
	path, err := os.MkdirTemp(dir, workPrefix(base))
	if err != nil {
		return nil, err
	}
	w := &WorkDir{path: path}
	if w.hold, err = os.Open(path); err == nil {
		atomicfile.Hold(w.hold)
	}
	return w, nil
}

// Path returns the folder.
func (w *WorkDir) Path() string { return w.path }

// Remove removes the folder and its files, then lets go of it.
func (w *WorkDir) Remove() error {
	err := os.RemoveAll(w.path)
	if w.hold != nil {
		w.hold.Close()
	}
	return err
}

// Release lets go of the folder and keeps it (a resumable append's, for the next run).
func (w *WorkDir) Release() {
	if w.hold != nil {
		w.hold.Close()
	}
}

// RemoveStale removes the working folders ".BASE.append-*" in dir ("": the system's temporary
// folder) that no live append holds: those of appends that were killed. Errors are ignored
// (a leftover that cannot be removed is only clutter). Where folders cannot be held (not
// Linux), it removes nothing: it could not tell a live append's folder.
func RemoveStale(dir, base string) {
	if runtime.GOOS != "linux" {
		return
	}
	if dir == "" {
		dir = os.TempDir()
	}
	atomicfile.RemoveUnheld(dir, workPrefix(base))
}

func workPrefix(base string) string { return "." + filepath.Base(base) + ".append-" }
