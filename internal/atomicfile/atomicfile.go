// Package atomicfile writes small local files atomically: the bytes go to a temporary file in
// the target's directory (unnamed on Linux, O_TMPFILE, so kill -9 leaves nothing; named
// ".BASE.tmp-*" at Commit or from the start elsewhere), which is fsynced, renamed onto the
// target, and the directory fsynced, so that after a crash the target holds either its old
// bytes or all of the new ones, never a prefix. Every error is returned, the directory sync's included.
//
// The temporary file is created with the naming and the shared lock of the page writer's
// outputs (pagewriter.CreateOutput); Create first removes the temporary files of earlier
// writes to the same target that were killed (RemoveLeftovers), skipping a locked one: a
// write in progress is never removed under its writer.
//
// It is the one implementation of an atomic local write: the page writer's outputs (which add
// preallocation and write-behind on top, through CommitWith), reports, records, side files and
// whole objects all go through it. OpenUnnamed gives the scratch files that never get a name.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Errors, wrapped with the path concerned.
var (
	// ErrNotRegular means the target exists and is neither a regular file nor a symbolic
	// link (a rename would replace a directory entry of another kind, or fail).
	ErrNotRegular = errors.New("exists and is not a regular file")
	// ErrDone means the file was already committed or aborted.
	ErrDone = errors.New("already committed or aborted")
)

// File is a temporary file that becomes its target at Commit. Write to it as to any
// *os.File; call Commit or Abort exactly once (Abort after Commit does nothing, so
// `defer f.Abort()` is the idiom).
type File struct {
	*os.File
	target string
	tmp    string // the temporary name; "" while the file has none (O_TMPFILE)
	once   sync.Once
}

// Create creates the temporary file for target, with mode perm, in target's directory
// (which must exist). A target that exists and is neither a regular file nor a symbolic
// link (which the rename replaces) is refused with ErrNotRegular.
func Create(target string, perm fs.FileMode) (*File, error) {
	return CreateWith(target, perm, Options{})
}

// Options adjust CreateWith for bulk outputs.
type Options struct {
	// NoClean skips the removal of killed writes' leftovers (RemoveLeftovers), which reads
	// the whole directory: for a directory the caller made empty and fills with many files,
	// where a read per file would be quadratic.
	NoClean bool
	// Named makes the temporary file named from the start even where O_TMPFILE works
	// (tests of the named path).
	Named bool
}

// CreateWith is Create with options.
func CreateWith(target string, perm fs.FileMode, o Options) (*File, error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return nil, fmt.Errorf("atomic write %s: not a file name", target)
	}
	if fi, err := os.Lstat(target); err == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
		return nil, fmt.Errorf("atomic write %s: %w", target, ErrNotRegular)
	}
	if !o.NoClean {
		RemoveLeftovers(dir, base)
	}
	tmp := ""
	var f *os.File
	err := errNamed
	if !o.Named {
		f, err = OpenUnnamed(dir)
	}
	if err != nil {
		// No O_TMPFILE here: a named temporary file from the start.
		if f, err = os.CreateTemp(dir, "."+base+".tmp-*"); err != nil {
			return nil, err
		}
		tmp = f.Name()
	}
	if err := f.Chmod(perm); err != nil { // CreateTemp makes 0600 files
		f.Close()
		if tmp != "" {
			os.Remove(tmp)
		}
		return nil, err
	}
	Hold(f)
	return &File{File: f, target: target, tmp: tmp}, nil
}

var errNamed = errors.New("named temporary file requested")

// publish gives the file a temporary name if it has none, closes it (through closeFn), checks
// the target again (something may have appeared there since Create) and renames the file onto
// it; on failure the temporary file is removed. Errors name the step.
func (f *File) publish(closeFn func() error) error {
	err := f.name()
	if err != nil {
		err = fmt.Errorf("name the temporary file for %s: %w", f.target, err)
	}
	if cerr := closeFn(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", f.TempName(), cerr)
	}
	if err == nil {
		if fi, lerr := os.Lstat(f.target); lerr == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
			err = fmt.Errorf("publish %s: %w (%s)", f.target, ErrNotRegular, fi.Mode().Type())
		} else if rerr := os.Rename(f.tmp, f.target); rerr != nil {
			err = fmt.Errorf("publish %s: %w", f.target, rerr)
		}
	}
	if err != nil && f.tmp != "" {
		os.Remove(f.tmp)
	}
	return err
}

// name links an unnamed file as ".BASE.tmp-RANDOM" beside the target.
func (f *File) name() error {
	if f.tmp != "" {
		return nil
	}
	dir, base := filepath.Split(f.target)
	if dir == "" {
		dir = "."
	}
	for range 100 {
		var r [6]byte
		rand.Read(r[:])
		tmp := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(r[:]))
		err := linkUnnamed(f.File, tmp)
		if err == nil {
			f.tmp = tmp
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return fs.ErrExist
}

// Target returns the path Commit publishes the file at.
func (f *File) Target() string { return f.target }

// TempName names the temporary file for messages: its path, or "DIR/(unnamed temporary file
// for BASE)" while it has none.
func (f *File) TempName() string {
	if f.tmp != "" {
		return f.tmp
	}
	return filepath.Join(filepath.Dir(f.target), "(unnamed temporary file for "+filepath.Base(f.target)+")")
}

// Commit fsyncs and closes the file, renames it onto the target and fsyncs the directory.
// On a failure before the rename the temporary file is removed and the target is left as
// it was; a failing directory sync is returned too (the new file is in place, but the
// rename may not survive a power loss).
func (f *File) Commit() error { return f.CommitWith(f.File.Sync, f.File.Close) }

// CommitWith is Commit for a caller that reaches the file through a wrapper of its own (the
// page writer, whose tests wrap the file to inject faults): syncFn and closeFn sync and close
// the file through it. closeFn must close the *os.File (a second Close of it is harmless).
func (f *File) CommitWith(syncFn, closeFn func() error) error {
	err := ErrDone
	f.once.Do(func() {
		if serr := syncFn(); serr != nil {
			err = fmt.Errorf("sync %s: %w", f.TempName(), serr)
			closeFn()
			f.File.Close()
			if f.tmp != "" {
				os.Remove(f.tmp)
			}
			return
		}
		if err = f.publish(closeFn); err != nil {
			f.File.Close()
			return
		}
		// The file is in place; a failing directory sync means the rename may not survive a
		// power loss, which the caller hears about, but the file stays.
		if derr := SyncDir(filepath.Dir(f.target)); derr != nil {
			err = fmt.Errorf("sync the directory of %s: %w", f.target, derr)
		}
	})
	return err
}

// CommitUnsynced is Commit without the file's and the directory's fsync: the file appears
// whole or not at all while the system runs, but a power loss may lose it. It is for bulk
// outputs (an export's many small files) whose caller accepts that.
func (f *File) CommitUnsynced() error {
	err := ErrDone
	f.once.Do(func() {
		if err = f.publish(f.File.Close); err != nil {
			f.File.Close()
		}
	})
	return err
}

// Abort closes and removes the temporary file, leaving the target as it was. After Commit
// it does nothing.
func (f *File) Abort() error { return f.AbortWith(f.File.Close) }

// AbortWith is Abort closing the file through closeFn (see CommitWith). A failing close is
// returned, unless the file was already closed; a temporary file already gone is no error.
func (f *File) AbortWith(closeFn func() error) error {
	var err error
	f.once.Do(func() {
		cerr := closeFn()
		f.File.Close()
		if f.tmp != "" {
			if rerr := os.Remove(f.tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				err = fmt.Errorf("remove %s: %w", f.tmp, rerr)
			}
		}
		if err == nil && cerr != nil && !errors.Is(cerr, os.ErrClosed) {
			err = fmt.Errorf("close %s: %w", f.TempName(), cerr)
		}
	})
	return err
}

// Write writes target atomically with the bytes fill writes to the temporary file, mode
// perm. When fill fails, nothing changes at target.
func Write(target string, perm fs.FileMode, fill func(io.Writer) error) error {
	f, err := Create(target, perm)
	if err != nil {
		return err
	}
	if err := fill(f.File); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// WriteFile writes data to target atomically, mode perm.
func WriteFile(target string, data []byte, perm fs.FileMode) error {
	return Write(target, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// SyncDir fsyncs the directory dir, so a rename or a new name in it is durable. File
// systems that cannot sync a directory (os.ErrInvalid) are not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// RemoveLeftovers removes ".BASE.tmp-*" files and directories in dir that no running process
// holds (see Hold): the temporary files of earlier writes to the same target that were
// killed. It reads the directory in batches, so a large directory costs time, not memory.
// Errors are ignored: a leftover that cannot be removed is only clutter.
func RemoveLeftovers(dir, base string) { RemoveUnheld(dir, "."+base+".tmp-") }

// RemoveUnheld is RemoveLeftovers for the files and directories in dir named prefix followed
// by a random name (decimal digits, as os.MkdirTemp makes, or hex) that no running process
// holds: the working folders of killed processes that Hold them while they live.
func RemoveUnheld(dir, prefix string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	for {
		ents, err := d.ReadDir(1024)
		for _, e := range ents {
			name := e.Name()
			if !(e.Type().IsRegular() || e.IsDir()) || len(name) <= len(prefix) || name[:len(prefix)] != prefix || !isTmpSuffix(name[len(prefix):]) {
				continue
			}
			path := filepath.Join(dir, name)
			f, err := os.Open(path)
			if err != nil {
				continue
			}
			if tryLock(f) {
				if e.IsDir() {
					os.RemoveAll(path)
				} else {
					os.Remove(path)
				}
			}
			f.Close()
		}
		if err != nil {
			return
		}
	}
}

// isTmpSuffix reports whether s is what CreateTemp (decimal digits) or a random hex name puts
// after ".tmp-".
func isTmpSuffix(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
