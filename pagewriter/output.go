package pagewriter

import (
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
//
// A resumable run (FileOptions.Partial) writes instead to ".BASE.partial", a named file that
// survives a crash and is reopened by the next run, locked while open; Commit renames it the
// same way (docs/RESUME.md).
type Output struct {
	File
	af   *atomicfile.File // the temporary file, published by atomicfile
	done atomic.Bool
}

// CreateOutput creates the temporary file in target's directory.
func CreateOutput(target string, wrap WrapFunc) (*Output, error) {
	return createOutput(target, wrap, false)
}

// createOutput is CreateOutput; named asks for a named temporary file even where O_TMPFILE
// works (tests). The temporary file, its shared lock and the clean-up of killed runs'
// leftovers are atomicfile's, the one atomic-write implementation.
func createOutput(target string, wrap WrapFunc, named bool) (*Output, error) {
	if _, base := filepath.Split(target); base == "" {
		return nil, fmt.Errorf("create output %q: not a file name", target)
	}
	if err := checkTarget(target); err != nil {
		return nil, fmt.Errorf("create output %s: %w", target, err)
	}
	// Outputs are meant to be shared like any other file: mode 0644.
	af, err := atomicfile.CreateWith(target, 0o644, atomicfile.Options{Named: named})
	if err != nil {
		if errors.Is(err, atomicfile.ErrNotRegular) { // appeared since checkTarget
			return nil, fmt.Errorf("create output %s: %w", target, ErrNotRegular)
		}
		return nil, fmt.Errorf("create output %s: %w", target, err)
	}
	o := &Output{af: af, File: af.File}
	if wrap != nil {
		o.File = wrap(af.File, "output")
	}
	return o, nil
}

// createPartialOutput opens the named temporary file of a resumable run to target,
// ".BASE.partial", created empty or reopened and cut to keep bytes (see Partial). Abort
// removes it; Suspend keeps it.
func createPartialOutput(target string, wrap WrapFunc, keep int64) (*Output, error) {
	if _, base := filepath.Split(target); base == "" {
		return nil, fmt.Errorf("create output %q: not a file name", target)
	}
	if err := checkTarget(target); err != nil {
		return nil, fmt.Errorf("create output %s: %w", target, err)
	}
	af, err := atomicfile.OpenPartial(target, atomicfile.PartialName(target, PartialSuffix), 0o644, keep == 0)
	if err != nil {
		return nil, fmt.Errorf("create output %s: %w", target, err)
	}
	if err := af.Truncate(keep); err != nil {
		af.Keep(af.File.Close)
		return nil, fmt.Errorf("cut %s to its checkpoint: %w", af.TempName(), err)
	}
	o := &Output{af: af, File: af.File}
	if wrap != nil {
		o.File = wrap(af.File, "output")
	}
	return o, nil
}

// TempPath names the temporary file for messages: its path, or "DIR/(unnamed temporary
// file for BASE)" while it has none.
func (o *Output) TempPath() string { return o.af.TempName() }

// Target returns the path the file is published at by Commit.
func (o *Output) Target() string { return o.af.Target() }

// Fd returns the temporary file's descriptor, for hints such as fallocate.
func (o *Output) Fd() uintptr { return o.af.Fd() }

// osFile is the temporary file itself (not the wrapper tests may put around it).
func (o *Output) osFile() *os.File { return o.af.File }

// Commit syncs the file, gives it its temporary name if it has none, renames it onto the
// target (checked again just before: something may have appeared there since Create), and
// syncs the directory. On failure the temporary file is removed and the target is left as
// it was; a failing directory sync is returned with the file in place.
func (o *Output) Commit() error {
	if !o.done.CompareAndSwap(false, true) {
		return ErrClosed
	}
	err := o.af.CommitWith(o.File.Sync, o.File.Close)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		err = fmt.Errorf("%w: %w", ErrNotRegular, err)
	}
	return err
}

// Abort closes and removes the temporary file. It is safe to call after Commit (it does
// nothing then) and more than once.
func (o *Output) Abort() error {
	if !o.done.CompareAndSwap(false, true) {
		return nil
	}
	return o.af.AbortWith(o.File.Close)
}

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
