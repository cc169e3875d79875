package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Dir is a temporary directory beside a target directory that becomes the target at Commit
// (an output stored as a folder of files, such as an SCDL archive): the caller fills Path,
// and the target holds either its old tree or the whole new one, never a part of it.
type Dir struct {
	target, tmp string
	hold        *os.File // the open directory, holding the shared lock
	once        sync.Once
}

// CreateDir makes the temporary directory ".BASE.tmp-*" (mode 0755) beside target, after
// removing the leftovers of killed writes to the same target (RemoveLeftovers). The
// directory is held (a shared lock) until Commit or Abort, so no other process's clean-up
// removes it. target's parent must exist.
func CreateDir(target string) (*Dir, error) {
	parent, base := filepath.Split(filepath.Clean(target))
	if parent == "" {
		parent = "."
	}
	RemoveLeftovers(parent, base)
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	d := &Dir{target: target, tmp: tmp}
	if d.hold, err = os.Open(tmp); err == nil {
		Hold(d.hold)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes 0700 directories
		d.Abort()
		return nil, err
	}
	return d, nil
}

// Path is the temporary directory to fill.
func (d *Dir) Path() string { return d.tmp }

// Commit fsyncs the temporary directory and moves it onto the target: a rename when the
// target does not exist; otherwise the old tree is moved aside first (to ".BASE.old-*"),
// then removed. The parent directory is fsynced. On failure the temporary directory is
// removed and the old tree stays at the target. The caller has fsynced the files it wrote.
func (d *Dir) Commit() error {
	err := ErrDone
	d.once.Do(func() {
		defer d.release()
		if err = SyncDir(d.tmp); err == nil {
			err = replaceDir(d.tmp, d.target)
		}
		if err != nil {
			os.RemoveAll(d.tmp)
		}
	})
	return err
}

// Abort removes the temporary directory; after Commit it does nothing.
func (d *Dir) Abort() error {
	var err error
	d.once.Do(func() {
		d.release()
		err = os.RemoveAll(d.tmp)
	})
	return err
}

func (d *Dir) release() {
	if d.hold != nil {
		d.hold.Close()
	}
}

// replaceDir moves the directory tmp onto path (see Dir.Commit).
func replaceDir(tmp, path string) error {
	if err := os.Rename(tmp, path); err == nil {
		return SyncDir(filepath.Dir(path))
	} else if _, serr := os.Stat(path); serr != nil {
		return fmt.Errorf("publish %s: %w", path, err)
	}
	var r [6]byte
	rand.Read(r[:])
	old := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".old-"+hex.EncodeToString(r[:]))
	if err := os.Rename(path, old); err != nil {
		return fmt.Errorf("publish %s: move the old tree aside: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Rename(old, path)
		return fmt.Errorf("publish %s: %w", path, err)
	}
	if err := os.RemoveAll(old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("publish %s: remove the old tree: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// PublishDir fsyncs the complete directory tmp (a resumable write's named temporary
// directory, whose files the caller has fsynced) and moves it onto target as Dir.Commit does.
// On failure tmp stays.
func PublishDir(tmp, target string) error {
	if err := SyncDir(tmp); err != nil {
		return err
	}
	return replaceDir(tmp, target)
}
