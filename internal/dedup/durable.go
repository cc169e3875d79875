package dedup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/internal/quote"
)

// Errors of a durable table.
var (
	// ErrNotDurable is returned by Checkpoint on a table without Config.Durable.
	ErrNotDurable = errors.New("dedup: the table is not durable")
	// ErrDamaged is a file of a durable table that does not hold what its State says
	// (missing, shorter, another checksum): the table cannot be reopened.
	ErrDamaged = errors.New("dedup: damaged table file")
)

// The names of a durable table's files after Config.Durable.
const (
	originsSuffix  = "-origins"
	prefixesSuffix = "-prefixes"
	runSuffix      = "-run-"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func runName(durable string, seq int64) string {
	return durable + runSuffix + strconv.FormatInt(seq, 10)
}

// FileState is one file of a durable table at a checkpoint: its name (in the table's
// directory), its length and the CRC-32C (Castagnoli) of those bytes.
type FileState struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	CRC  uint32 `json:"crc32c"`
}

// State is what a durable table's Checkpoint made durable: its run files (immutable once
// written: a checkpoint only adds the runs written since the last one), the used part of
// its append-only origins and prefixes files, and its counters. Reopen continues it.
type State struct {
	Runs       []FileState `json:"runs"`
	Origins    FileState   `json:"origins"`
	Prefixes   FileState   `json:"prefixes"`
	NPrefixes  int         `json:"n_prefixes"`
	Entries    int64       `json:"entries"`
	Duplicates int64       `json:"duplicates"`

	dir     string   // where the files are
	retired []string // runs merged away before the checkpoint (see Retired)
}

// Retired returns the files of runs merged away before the checkpoint: the state does not
// name them, the one before it may. Remove them once the state is recorded in place of the
// one before.
func (s *State) Retired() []string { return s.retired }

// Sync makes the files s names durable (fsync, then the directory's), so that a record of
// s may be written. It opens them by name: safe beside the table's goroutine, which removes
// no file a recorded state names.
func (s *State) Sync() error {
	names := []string{s.Origins.Name, s.Prefixes.Name}
	for _, r := range s.Runs {
		names = append(names, r.Name)
	}
	for _, n := range names {
		f, err := os.Open(filepath.Join(s.dir, n))
		if err != nil {
			return fmt.Errorf("dedup: sync %s: %w", n, err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("dedup: sync %s: %w", n, err)
		}
	}
	return atomicfile.SyncDir(s.dir)
}

// Checkpoint makes the table's state so far recordable: it writes the memtable as a run
// (and merges as a full memtable's flush does), writes out the origins and the new
// prefixes, and returns the state naming them. The files still need State.Sync before the
// state is recorded; the table goes on meanwhile (it removes no run file: see Retired).
func (t *Table) Checkpoint() (*State, error) {
	if t.closed {
		return nil, ErrClosed
	}
	if t.durable == "" {
		return nil, ErrNotDurable
	}
	if t.m.n > 0 {
		if err := t.flush(); err != nil {
			return nil, err
		}
	}
	if err := t.ow.Flush(); err != nil {
		return nil, fmt.Errorf("dedup: write the origins file: %w", err)
	}
	t.oflushed = t.olen
	if t.prefixSaved < len(t.prefixes) {
		var b []byte
		for _, p := range t.prefixes[t.prefixSaved:] {
			b = binary.AppendUvarint(b, uint64(len(p)))
			b = append(b, p...)
		}
		if _, err := t.prefixFile.WriteAt(b, t.prefixLen); err != nil {
			return nil, fmt.Errorf("dedup: write the prefixes file: %w", err)
		}
		t.prefixCRC = crc32.Update(t.prefixCRC, castagnoli, b)
		t.prefixLen += int64(len(b))
		t.prefixSaved = len(t.prefixes)
	}
	dir, base := filepath.Split(t.durable)
	st := &State{
		Origins:   FileState{Name: base + originsSuffix, Size: t.olen, CRC: t.originsCRC},
		Prefixes:  FileState{Name: base + prefixesSuffix, Size: t.prefixLen, CRC: t.prefixCRC},
		NPrefixes: t.prefixSaved, Entries: t.st.Entries, Duplicates: t.st.Duplicates,
		dir: filepath.Clean(dir), retired: t.retired,
	}
	for _, r := range t.runs {
		st.Runs = append(st.Runs, FileState{Name: filepath.Base(r.name), Size: r.n * entrySize, CRC: r.crc})
	}
	t.retired = nil
	return st, nil
}

// Keep closes a durable table without removing its files: a later run reopens them from the
// last recorded State (Reopen). A table that is not durable is closed as by Close.
func (t *Table) Keep() error {
	if t.closed || t.durable == "" {
		return t.Close()
	}
	t.closed = true
	var err error
	for _, r := range t.runs {
		if cerr := r.f.Close(); err == nil {
			err = cerr
		}
	}
	t.runs = nil
	if cerr := t.ow.Flush(); err == nil {
		err = cerr
	}
	if cerr := t.origins.Close(); err == nil {
		err = cerr
	}
	if cerr := t.prefixFile.Close(); err == nil {
		err = cerr
	}
	t.free()
	return err
}

// Reopen continues the durable table (cfg.Durable, the Config it had) that st recorded: it
// checks each file st names (length and checksum; an error wrapping ErrDamaged names the
// file), cuts the origins and prefixes files to their recorded length, removes the run
// files st does not name (written after it), and rebuilds the filter and the runs' indexes
// by reading the runs once.
func Reopen(cfg Config, st *State) (*Table, error) {
	if cfg.Durable == "" {
		return nil, ErrNotDurable
	}
	if st == nil {
		return nil, fmt.Errorf("%w: no state", ErrDamaged)
	}
	return newTable(cfg, st)
}

// RemoveFiles removes every file of the durable table named after durable (Config.Durable),
// such as a killed run's table that will not be reopened. Missing files are no error.
func RemoveFiles(durable string) error {
	names, _ := filepath.Glob(globEscape(durable) + runSuffix + "*")
	names = append(names, durable+originsSuffix, durable+prefixesSuffix)
	var errs []error
	for _, n := range names {
		if err := os.Remove(n); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// globEscape escapes the pattern characters of a path for filepath.Glob.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// damaged is the error of file name not holding what the state says.
func damaged(name, what string) error {
	return fmt.Errorf("%w: %s: %s", ErrDamaged, quote.S(name), what)
}

// openDurable opens the files of a durable table: new ones (st nil; any left by an earlier
// table of that name are removed first), or those st names, checked and loaded.
func (t *Table) openDurable(st *State) (err error) {
	opened := []*os.File{}
	defer func() {
		if err != nil {
			for _, f := range opened {
				f.Close()
			}
			for _, r := range t.runs {
				r.f.Close()
			}
			t.runs = nil
		}
	}()
	if st == nil {
		if err := RemoveFiles(t.durable); err != nil {
			return fmt.Errorf("dedup: remove an earlier table: %w", err)
		}
	}
	dir, base := filepath.Split(t.durable)
	open := func(suffix string, want *FileState) (*os.File, error) {
		name := t.durable + suffix
		if want != nil && (want.Name != base+suffix || want.Size < 0) {
			return nil, damaged(name, "the state names "+quote.S(want.Name))
		}
		if want != nil {
			if _, err := os.Stat(name); err != nil {
				return nil, damaged(name, "missing")
			}
		}
		f, err := atomicfile.OpenLocked(name, 0o600, want == nil)
		if err != nil {
			return nil, fmt.Errorf("dedup: open %s: %w", name, err)
		}
		opened = append(opened, f)
		if want == nil {
			return f, nil
		}
		if fi, err := f.Stat(); err != nil || fi.Size() < want.Size {
			return nil, damaged(name, fmt.Sprintf("shorter than its %d bytes at the checkpoint", want.Size))
		}
		if err := f.Truncate(want.Size); err != nil {
			return nil, fmt.Errorf("dedup: cut %s to its checkpoint: %w", name, err)
		}
		if _, err := f.Seek(want.Size, io.SeekStart); err != nil { // the origins are appended
			return nil, fmt.Errorf("dedup: cut %s to its checkpoint: %w", name, err)
		}
		h := crc32.New(castagnoli)
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, want.Size)); err != nil {
			return nil, fmt.Errorf("dedup: read %s: %w", name, err)
		}
		if h.Sum32() != want.CRC {
			return nil, damaged(name, "its checksum differs from the checkpoint's")
		}
		return f, nil
	}
	var ws [2]*FileState
	if st != nil {
		ws = [2]*FileState{&st.Origins, &st.Prefixes}
	}
	if t.origins, err = open(originsSuffix, ws[0]); err != nil {
		return err
	}
	if t.prefixFile, err = open(prefixesSuffix, ws[1]); err != nil {
		return err
	}
	t.ow = bufio.NewWriterSize(t.origins, originsBuf)
	if st == nil {
		return nil
	}
	if st.Entries < 0 || st.Duplicates < 0 || st.NPrefixes < 0 || st.NPrefixes > 1<<prefixBits {
		return damaged(t.durable, "the state's counters are out of range")
	}
	t.olen, t.oflushed, t.originsCRC = st.Origins.Size, st.Origins.Size, st.Origins.CRC
	t.prefixLen, t.prefixCRC = st.Prefixes.Size, st.Prefixes.CRC
	if err := t.loadPrefixes(st.NPrefixes); err != nil {
		return err
	}
	// The run files the state does not name were written after it.
	keep := map[string]bool{}
	for _, r := range st.Runs {
		seq, ok := strings.CutPrefix(r.Name, base+runSuffix)
		n, perr := strconv.ParseInt(seq, 10, 64)
		if !ok || perr != nil || n <= 0 || keep[r.Name] || r.Size < 0 || r.Size%entrySize != 0 {
			return damaged(r.Name, "not a run file of the table")
		}
		keep[r.Name] = true
		t.runSeq = max(t.runSeq, n)
	}
	names, _ := filepath.Glob(globEscape(t.durable) + runSuffix + "*")
	for _, n := range names {
		if !keep[filepath.Base(n)] {
			os.Remove(n)
		}
	}
	for _, rs := range st.Runs {
		if err := t.loadRun(filepath.Join(dir, rs.Name), rs); err != nil {
			return err
		}
	}
	var n int64
	for _, r := range t.runs {
		n += r.n
	}
	if n != st.Entries {
		return damaged(t.durable, fmt.Sprintf("the runs hold %d entries, the state says %d", n, st.Entries))
	}
	t.st.Entries, t.st.Duplicates = st.Entries, st.Duplicates
	return nil
}

// loadPrefixes reads the n interned prefixes of the prefixes file (checked).
func (t *Table) loadPrefixes(n int) error {
	b := make([]byte, t.prefixLen)
	if _, err := t.prefixFile.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("dedup: read %s: %w", t.prefixFile.Name(), err)
	}
	for len(b) > 0 {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return damaged(t.prefixFile.Name(), "a cut prefix")
		}
		p := string(b[k : k+int(l)])
		b = b[k+int(l):]
		if _, dup := t.prefixIDs[p]; dup {
			return damaged(t.prefixFile.Name(), "a prefix given twice")
		}
		t.prefixIDs[p] = uint64(len(t.prefixes))
		t.prefixes = append(t.prefixes, p)
		t.prefixBytes += int64(len(p))
	}
	if len(t.prefixes) != n {
		return damaged(t.prefixFile.Name(), fmt.Sprintf("%d prefixes, the state says %d", len(t.prefixes), n))
	}
	t.prefixSaved = n
	return nil
}

// loadRun opens the run file path that rs records, checks it, adds its hashes to the
// filter and builds its fan-out.
func (t *Table) loadRun(path string, rs FileState) error {
	fi, err := os.Stat(path)
	if err != nil {
		return damaged(path, "missing")
	}
	if fi.Size() != rs.Size {
		return damaged(path, fmt.Sprintf("%d bytes, %d at the checkpoint", fi.Size(), rs.Size))
	}
	f, err := atomicfile.OpenLocked(path, 0o600, false)
	if err != nil {
		return fmt.Errorf("dedup: open %s: %w", path, err)
	}
	n := rs.Size / entrySize
	bits := fanBits(n, t.fanBudget-t.fanUsed())
	r := &run{f: f, name: path, fan: make([]int64, int64(1)<<bits+1), shift: 64 - bits}
	rd := bufio.NewReaderSize(io.NewSectionReader(f, 0, rs.Size), t.ioBuf)
	var e [entrySize]byte
	var next uint64
	prev, first := entry{}, true
	for i := int64(0); i < n; i++ {
		if _, err := io.ReadFull(rd, e[:]); err != nil {
			f.Close()
			return fmt.Errorf("dedup: read %s: %w", path, err)
		}
		r.crc = crc32.Update(r.crc, castagnoli, e[:])
		en := getEntry(e[:])
		if !first && !prev.less(en) || en.idx == 0 {
			f.Close()
			return damaged(path, "its entries are out of order")
		}
		prev, first = en, false
		for b := r.bucket(en.hi); next <= b; next++ {
			r.fan[next] = i
		}
		t.f.add(Hash{Hi: en.hi, Lo: en.lo})
	}
	for ; next < uint64(len(r.fan)); next++ {
		r.fan[next] = n
	}
	r.n = n
	if r.crc != rs.CRC {
		f.Close()
		return damaged(path, "its checksum differs from the checkpoint's")
	}
	t.runs = append(t.runs, r)
	return nil
}
