package appendfile

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/atomicfile"
)

// ErrBusy: another append to the same base holds its resumable working folder.
var ErrBusy = errors.New("append: another append to this base is running")

// stateName is the record of a resumable append in its working folder.
const stateName = "append.json"

// resumeSuffix ends the name of a resumable working folder, ".BASE.append-resume": not a
// temporary name (RemoveStale leaves it), so a killed append's folder waits for the next one.
const resumeSuffix = "resume"

// State is the record of a resumable append (docs/RESUME.md), kept in its working folder: what
// the base was when the append started, and how far the append got.
type State struct {
	// Base is the base's path or URL and BaseFingerprint its Fingerprint at the start.
	Base            string `json:"base"`
	BaseFingerprint string `json:"base_fingerprint"`
	// Delta identifies the run that writes the new samples into the folder (its recipe,
	// inputs and tool version), set before it starts: a restart that finds the same identity
	// and the run's output (which appears only when the run finished) goes straight to the
	// append; a different one converts them again.
	Delta string `json:"delta,omitempty"`
	// Rejected is how many samples the delta run rejected (its exit status, given again
	// when the run is not redone).
	Rejected int64 `json:"rejected,omitempty"`
	// Result is the Fingerprint the base has once the append is published, set just before
	// it is: a base that has it is the finished append of a run killed before its clean-up.
	Result string `json:"result,omitempty"`
	// Upload is the multipart upload of an append to a bucket, to abort when a restart
	// builds the result again.
	Upload string `json:"upload,omitempty"`
}

// OpenResumable opens (making it when missing) the working folder ".BASE.append-resume" of a
// resumable append to base in dir ("": the system's temporary folder), after removing the
// temporary folders of killed appends that did not checkpoint (RemoveStale). Unlike
// NewWorkDir's folder, it has the same name in every run: a killed append's files are there for
// the next one. It is locked while the append lives: a second append to the same base gets
// ErrBusy. With fresh, a killed append's files are removed first (--restart).
func OpenResumable(dir, base string, fresh bool) (*WorkDir, error) {
	RemoveStale(dir, base)
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, workPrefix(base)+resumeSuffix)
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("append: working folder: %w", err)
	}
	lock, err := atomicfile.OpenLocked(filepath.Join(path, "lock"), 0o600, false)
	if errors.Is(err, atomicfile.ErrBusy) {
		return nil, fmt.Errorf("%w (%s holds its files)", ErrBusy, path)
	}
	if err != nil {
		return nil, fmt.Errorf("append: working folder: %w", err)
	}
	w := &WorkDir{path: path, hold: lock}
	if fresh {
		if err := w.Clear(); err != nil {
			lock.Close()
			return nil, err
		}
	}
	return w, nil
}

// Clear removes the files of the folder but its lock: the append starts over.
func (w *WorkDir) Clear() error {
	ents, err := os.ReadDir(w.path)
	if err != nil {
		return fmt.Errorf("append: clear %s: %w", w.path, err)
	}
	for _, e := range ents {
		if e.Name() == "lock" && w.hold != nil {
			continue
		}
		if err := os.RemoveAll(filepath.Join(w.path, e.Name())); err != nil {
			return fmt.Errorf("append: clear %s: %w", w.path, err)
		}
	}
	return nil
}

// LoadState reads the folder's record; ok is false when there is none or it cannot be read
// (a record is written whole by a rename, so an unreadable one was not written by an append).
func (w *WorkDir) LoadState() (s State, ok bool) {
	b, err := os.ReadFile(filepath.Join(w.path, stateName))
	if err != nil || json.Unmarshal(b, &s) != nil || s.BaseFingerprint == "" {
		return State{}, false
	}
	return s, true
}

// SaveState writes the folder's record durably (a temporary file, fsynced and renamed, the
// folder fsynced).
func (w *WorkDir) SaveState(s State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(w.path, stateName), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("append: record: %w", err)
	}
	if err := atomicfile.SyncDir(w.path); err != nil {
		return fmt.Errorf("append: record: %w", err)
	}
	return nil
}

// Fingerprint identifies an MLDF file by its size and the SHA-256 of its signature and header
// (the sample count, the tables' places and, in a checksummed file, the xxhash of the tables):
// an append, or any other rewrite that changes the header, changes it.
func Fingerprint(size int64, preamble []byte) string {
	sum := sha256.Sum256(preamble[:min(len(preamble), mldf.PreambleSize)])
	return fmt.Sprintf("%d:%x", size, sum[:16])
}

// FingerprintAt is the Fingerprint of the MLDF file ra of size bytes.
func FingerprintAt(ra io.ReaderAt, size int64) (string, error) {
	pre := make([]byte, mldf.PreambleSize)
	if _, err := ra.ReadAt(pre, 0); err != nil {
		return "", fmt.Errorf("append: read the header: %w", err)
	}
	return Fingerprint(size, pre), nil
}
