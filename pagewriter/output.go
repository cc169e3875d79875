package pagewriter

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/mldf/convert/internal/atomicfile"
)

// File is what the writer needs of a file. *os.File implements it; tests wrap it to inject
// faults (a full disk, a failing sync).
type File interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Sync() error
	Close() error
}

// WrapFunc wraps a file the writer opened; role is "output", "rows" or "alloc".
type WrapFunc func(f File, role string) File

// Output is a temporary file beside a target path that becomes the target only on Commit.
// Until then the target path is untouched: an older file there stays as it was, and a failed
// or aborted run removes the temporary file.
//
// On Linux the file is created without a name (O_TMPFILE), so even a killed process leaves
// nothing behind; Commit links it as ".BASE.tmp-RANDOM" and renames that onto the target.
// Elsewhere, or where the file system lacks O_TMPFILE, the file is created under that
// temporary name from the start. A temporary file left by a killed process (in the instant
// between naming and renaming, or all along without O_TMPFILE) is removed by the next
// CreateOutput for the same target; the file of a process still running is locked (flock)
// and left alone.
//
// The target must be a new name, a regular file or a symbolic link (which the rename
// replaces): Output never renames over a directory, a device, a pipe or a socket.
type Output struct {
	File
	os     *os.File
	target string
	tmp    string // the temporary name; "" while the file is unnamed
	done   atomic.Bool
}

// CreateOutput creates the temporary file in target's directory.
func CreateOutput(target string, wrap WrapFunc) (*Output, error) {
	return createOutput(target, wrap, false)
}

func createOutput(target string, wrap WrapFunc, named bool) (*Output, error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return nil, fmt.Errorf("create output %q: not a file name", target)
	}
	if err := checkTarget(target); err != nil {
		return nil, fmt.Errorf("create output %s: %w", target, err)
	}
	RemoveLeftovers(dir, base)
	o := &Output{target: target}
	var f *os.File
	err := errNamed
	if !named {
		f, err = openUnnamed(dir)
	}
	if err != nil {
		// No O_TMPFILE here: a named temporary file. CreateTemp makes it 0600; outputs are
		// meant to be shared like any other file.
		if f, err = os.CreateTemp(dir, "."+base+".tmp-*"); err != nil {
			return nil, fmt.Errorf("create output %s: %w", target, err)
		}
		o.tmp = f.Name()
		if err := f.Chmod(0o644); err != nil {
			f.Close()
			os.Remove(o.tmp)
			return nil, fmt.Errorf("create output %s: %w", target, err)
		}
	}
	// Held until the file is closed (or the process dies): RemoveLeftovers skips it.
	HoldTemp(f)
	o.os, o.File = f, f
	if wrap != nil {
		o.File = wrap(f, "output")
	}
	return o, nil
}

// TempPath names the temporary file for messages: its path, or "DIR/(unnamed temporary
// file for BASE)" while it has none.
func (o *Output) TempPath() string {
	if o.tmp != "" {
		return o.tmp
	}
	return filepath.Join(filepath.Dir(o.target), "(unnamed temporary file for "+filepath.Base(o.target)+")")
}

// Target returns the path the file is published at by Commit.
func (o *Output) Target() string { return o.target }

// Fd returns the temporary file's descriptor, for hints such as fallocate.
func (o *Output) Fd() uintptr { return o.os.Fd() }

// Commit syncs the file, gives it its temporary name if it has none, renames it onto the
// target, and syncs the directory. On failure the temporary file is removed and the target
// is left as it was.
func (o *Output) Commit() error {
	if !o.done.CompareAndSwap(false, true) {
		return ErrClosed
	}
	fail := func(err error) error {
		o.File.Close()
		if o.tmp != "" {
			os.Remove(o.tmp)
		}
		return err
	}
	if err := o.File.Sync(); err != nil {
		return fail(fmt.Errorf("sync %s: %w", o.TempPath(), err))
	}
	if o.tmp == "" {
		if err := o.name(); err != nil {
			return fail(fmt.Errorf("name the temporary file for %s: %w", o.target, err))
		}
	}
	if err := o.File.Close(); err != nil {
		return fail(fmt.Errorf("close %s: %w", o.tmp, err))
	}
	// Checked again as late as possible: something may have appeared there since Create.
	if err := checkTarget(o.target); err != nil {
		os.Remove(o.tmp)
		return fmt.Errorf("publish %s: %w", o.target, err)
	}
	if err := os.Rename(o.tmp, o.target); err != nil {
		os.Remove(o.tmp)
		return fmt.Errorf("publish %s: %w", o.target, err)
	}
	// The file is in place; a failing directory sync means the rename may not survive a
	// power loss, which the caller should hear about, but the file stays.
	if err := SyncDir(filepath.Dir(o.target)); err != nil {
		return fmt.Errorf("sync directory of %s: %w", o.target, err)
	}
	return nil
}

// name links the unnamed file as ".BASE.tmp-RANDOM" beside the target.
func (o *Output) name() error {
	dir, base := filepath.Split(o.target)
	if dir == "" {
		dir = "."
	}
	for range 100 {
		var r [6]byte
		rand.Read(r[:])
		tmp := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(r[:]))
		err := linkUnnamed(o.os, tmp)
		if err == nil {
			o.tmp = tmp
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return fs.ErrExist
}

// Abort closes and removes the temporary file. It is safe to call after Commit (it does
// nothing then) and more than once.
func (o *Output) Abort() error {
	if !o.done.CompareAndSwap(false, true) {
		return nil
	}
	cerr := o.File.Close()
	if o.tmp != "" {
		if err := os.Remove(o.tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", o.tmp, err)
		}
	}
	if cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		return fmt.Errorf("close %s: %w", o.TempPath(), cerr)
	}
	return nil
}

var errNamed = errors.New("named temporary file requested")

// ErrNotRegular is a target that exists and is not a regular file (or a symbolic link): a
// directory, a device, a pipe or a socket. Output never renames over one.
var ErrNotRegular = errors.New("pagewriter: not a regular file or a new name")

// checkTarget refuses a target that is a directory, a device, a pipe or a socket. A symbolic
// link is replaced by the rename, whatever it points to.
func checkTarget(target string) error {
	fi, err := os.Lstat(target)
	if err != nil {
		return nil // a new name (or one the rename will report)
	}
	if m := fi.Mode(); !m.IsRegular() && m&fs.ModeSymlink == 0 {
		return fmt.Errorf("%w (%s)", ErrNotRegular, m.Type())
	}
	return nil
}

// RemoveLeftovers removes ".BASE.tmp-*" files and directories in dir that no running process
// holds (see HoldTemp): the temporary outputs of earlier runs to the same target that were
// killed. See atomicfile.RemoveLeftovers, the one implementation.
func RemoveLeftovers(dir, base string) { atomicfile.RemoveLeftovers(dir, base) }

// HoldTemp takes a shared flock on f (a temporary file or directory), held while f is open:
// a process cleaning leftovers (RemoveLeftovers) then knows it is in use (atomicfile.Hold).
func HoldTemp(f *os.File) { atomicfile.Hold(f) }

// SyncDir fsyncs the directory dir, so a rename or a new name in it is durable (see
// atomicfile.SyncDir, the one implementation).
func SyncDir(dir string) error { return atomicfile.SyncDir(dir) }
