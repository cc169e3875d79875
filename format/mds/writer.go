package mds

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/mldf/convert/internal/atomicfile"
)

// WriterOptions configure a Writer.
type WriterOptions struct {
	// SizeLimit bounds a shard's bytes (0: DefaultSizeLimit); a sample larger than it alone
	// gets a shard of its own, as MDSWriter does.
	SizeLimit int64
	// OnShard, when set, is called after each shard is in place and durable, with what a
	// checkpoint records of it (its SHA-256 is computed only then); an error fails the
	// write. The dataset so far is the shards given to OnShard: Resume continues it.
	OnShard func(ShardState) error
}

// ShardState is a finished shard as a checkpoint records it: Resume checks that the file is
// still these bytes.
type ShardState struct {
	Name    string `json:"name"`
	Bytes   int64  `json:"bytes"`
	Samples int64  `json:"samples"`
	SHA256  string `json:"sha256"`
}

// shardEntry is one shard of index.json.
type shardEntry struct {
	ColumnEncodings []string  `json:"column_encodings"`
	ColumnNames     []string  `json:"column_names"`
	ColumnSizes     []*int    `json:"column_sizes"`
	Compression     *string   `json:"compression"`
	Format          string    `json:"format"`
	Hashes          []string  `json:"hashes"`
	RawData         *fileInfo `json:"raw_data"`
	Samples         int64     `json:"samples"`
	SizeLimit       *int64    `json:"size_limit"`
	Version         int       `json:"version"`
	ZipData         *fileInfo `json:"zip_data"`
}

type fileInfo struct {
	Basename string            `json:"basename"`
	Bytes    int64             `json:"bytes"`
	Hashes   map[string]string `json:"hashes"`
}

// config is a shard's configuration, as stored in the shard and (with its file) in the index.
type config struct {
	ColumnEncodings []string `json:"column_encodings"`
	ColumnNames     []string `json:"column_names"`
	ColumnSizes     []*int   `json:"column_sizes"`
	Compression     *string  `json:"compression"`
	Format          string   `json:"format"`
	Hashes          []string `json:"hashes"`
	SizeLimit       *int64   `json:"size_limit"`
	Version         int      `json:"version"`
}

// Writer writes an MDS dataset into a directory: shards of at most the size limit, each
// written to a temporary file and renamed into place when complete, and index.json last (so
// a reader never sees an index naming a shard that is not whole). A Writer is used by one
// goroutine.
type Writer struct {
	dir     string
	cols    []Column // sorted by name
	order   []int    // cols[k] is the caller's column order[k]
	opt     WriterOptions
	conf    []byte // the shard configuration JSON
	samples [][]byte
	size    int64
	shards  []shardEntry
	written []string
	done    bool
}

// Create starts a dataset in dir (created if missing; it must not hold an index.json). The
// columns may come in any order; Write takes values in that order.
func Create(dir string, cols []Column, opt WriterOptions) (*Writer, error) {
	w, err := newWriter(dir, cols, opt)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(filepath.Join(dir, IndexName)); err == nil {
		return nil, fmt.Errorf("mds: %s: %w", filepath.Join(dir, IndexName), os.ErrExist)
	}
	return w, nil
}

// Resume continues a dataset in dir whose first shards are done (as OnShard gave them, in
// order) with the same columns and options: each is checked (its name, size and SHA-256:
// ErrResume when it differs), the temporary file of a shard a killed writer was writing is
// removed, and the next Write starts the next shard. The caller writes the samples after
// those of done (the sum of their Samples); the dataset then has the bytes of one
// uninterrupted write. An index.json in dir (a writer killed after writing it) is replaced
// at Close.
func Resume(dir string, cols []Column, opt WriterOptions, done []ShardState) (*Writer, error) {
	w, err := newWriter(dir, cols, opt)
	if err != nil {
		return nil, err
	}
	var c config
	if err := json.Unmarshal(w.conf, &c); err != nil {
		return nil, err
	}
	for i, d := range done {
		path := filepath.Join(dir, ShardName(i))
		if d.Name != ShardName(i) || d.Samples <= 0 || d.Bytes <= 0 {
			return nil, fmt.Errorf("%w: shard %d of the checkpoint is %q of %d samples, want %s", ErrResume, i, trim(d.Name), d.Samples, ShardName(i))
		}
		sum, size, err := fileSHA256(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrResume, err)
		}
		if size != d.Bytes || sum != d.SHA256 {
			return nil, fmt.Errorf("%w: %s is %d bytes of SHA-256 %.12s, the checkpoint says %d bytes of %.12s", ErrResume, path, size, sum, d.Bytes, d.SHA256)
		}
		w.shards = append(w.shards, w.entry(c, d.Name, d.Bytes, d.Samples))
		w.written = append(w.written, path)
	}
	for i := len(done); i <= len(done)+1; i++ {
		atomicfile.RemoveLeftovers(dir, ShardName(i))
	}
	return w, nil
}

// fileSHA256 returns the hex SHA-256 and the size of the file at path.
func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func newWriter(dir string, cols []Column, opt WriterOptions) (*Writer, error) {
	if opt.SizeLimit <= 0 {
		opt.SizeLimit = DefaultSizeLimit
	}
	if opt.SizeLimit > MaxSizeLimit {
		return nil, fmt.Errorf("%w: shard size limit %d: at most %d", ErrEncoding, opt.SizeLimit, int64(MaxSizeLimit))
	}
	if len(cols) == 0 || len(cols) > MaxColumns {
		return nil, fmt.Errorf("%w: %d columns (1 to %d)", ErrEncoding, len(cols), MaxColumns)
	}
	w := &Writer{dir: dir, opt: opt}
	w.order = make([]int, len(cols))
	for i := range w.order {
		w.order[i] = i
	}
	sort.SliceStable(w.order, func(a, b int) bool { return cols[w.order[a]].Name < cols[w.order[b]].Name })
	c := config{Format: "mds", Version: 2, Hashes: []string{}, SizeLimit: &opt.SizeLimit}
	for k, i := range w.order {
		col := cols[i]
		if k > 0 && col.Name == w.cols[k-1].Name {
			return nil, fmt.Errorf("%w: column %q twice", ErrEncoding, trim(col.Name))
		}
		size, err := EncodedSize(col.Encoding)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", trim(col.Name), err)
		}
		col.Size = size
		w.cols = append(w.cols, col)
		c.ColumnNames = append(c.ColumnNames, col.Name)
		c.ColumnEncodings = append(c.ColumnEncodings, col.Encoding)
		if size > 0 {
			c.ColumnSizes = append(c.ColumnSizes, &size)
		} else {
			c.ColumnSizes = append(c.ColumnSizes, nil)
		}
	}
	conf, err := json.Marshal(c) // fields in name order: as Python's json.dumps(sort_keys=True) orders them
	if err != nil {
		return nil, err
	}
	w.conf = conf
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mds: %w", err)
	}
	w.size = w.shardOverhead()
	return w, nil
}

// entry is the index.json entry of a shard.
func (w *Writer) entry(c config, name string, bytes, samples int64) shardEntry {
	return shardEntry{ColumnEncodings: c.ColumnEncodings, ColumnNames: c.ColumnNames, ColumnSizes: c.ColumnSizes,
		Format: "mds", Hashes: []string{}, RawData: &fileInfo{Basename: name, Bytes: bytes, Hashes: map[string]string{}},
		Samples: samples, SizeLimit: c.SizeLimit, Version: 2}
}

// Columns returns the columns in shard order (sorted by name), with their fixed sizes.
func (w *Writer) Columns() []Column { return slices.Clone(w.cols) }

func (w *Writer) shardOverhead() int64 { return 4 + 4 + int64(len(w.conf)) }

// Write adds one sample: values[i] is the encoded value of column i (in Create's order).
func (w *Writer) Write(values [][]byte) error {
	if w.done {
		return errors.New("mds: write after Close")
	}
	if len(values) != len(w.cols) {
		return fmt.Errorf("%w: %d values for %d columns", ErrEncoding, len(values), len(w.cols))
	}
	n := 0
	for k, i := range w.order {
		c := &w.cols[k]
		v := values[i]
		if c.Size > 0 && len(v) != c.Size {
			return fmt.Errorf("%w: column %q (%s) takes %d bytes, not %d", ErrEncoding, trim(c.Name), c.Encoding, c.Size, len(v))
		}
		if c.Size == 0 {
			n += 4
		}
		n += len(v)
	}
	if int64(n) > MaxSizeLimit-w.shardOverhead()-8 {
		return fmt.Errorf("%w: a sample of %d bytes does not fit a shard", ErrEncoding, n)
	}
	if w.opt.SizeLimit < w.size+int64(n)+4 && len(w.samples) > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	b := make([]byte, 0, n)
	for k, i := range w.order {
		if w.cols[k].Size == 0 {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(values[i])))
		}
	}
	for _, i := range w.order {
		b = append(b, values[i]...)
	}
	w.samples = append(w.samples, b)
	w.size += int64(n) + 4
	return nil
}

// flush writes the samples held as the next shard.
func (w *Writer) flush() error {
	name := ShardName(len(w.shards))
	path := filepath.Join(w.dir, name)
	n := len(w.samples)
	head := make([]byte, 0, 4+4*(n+1)+len(w.conf))
	head = binary.LittleEndian.AppendUint32(head, uint32(n))
	off := uint32(4 + 4*(n+1) + len(w.conf))
	for i := 0; i <= n; i++ {
		head = binary.LittleEndian.AppendUint32(head, off)
		if i < n {
			off += uint32(len(w.samples[i]))
		}
	}
	head = append(head, w.conf...)
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return fmt.Errorf("mds: %w", err)
	}
	var out io.Writer = f
	var h hash.Hash
	if w.opt.OnShard != nil {
		h = sha256.New()
		out = io.MultiWriter(f, h)
	}
	_, err = out.Write(head)
	for i := 0; err == nil && i < n; i++ {
		_, err = out.Write(w.samples[i])
	}
	if err == nil {
		err = f.Commit()
	} else {
		f.Abort()
	}
	if err != nil {
		return fmt.Errorf("mds: %s: %w", path, err)
	}
	w.written = append(w.written, path)
	var c config
	if err := json.Unmarshal(w.conf, &c); err != nil {
		return err
	}
	w.shards = append(w.shards, w.entry(c, name, int64(off), int64(n)))
	w.samples = w.samples[:0]
	w.size = w.shardOverhead()
	if h != nil {
		if err := w.opt.OnShard(ShardState{Name: name, Bytes: int64(off), Samples: int64(n), SHA256: hex.EncodeToString(h.Sum(nil))}); err != nil {
			return fmt.Errorf("mds: %s: %w", path, err)
		}
	}
	return nil
}

// Close writes the last shard and then index.json. A dataset of no samples has an index of
// no shards.
func (w *Writer) Close() error {
	if w.done {
		return errors.New("mds: Close twice")
	}
	w.done = true
	if len(w.samples) > 0 {
		if err := w.flush(); err != nil {
			w.remove()
			return err
		}
	}
	shards := w.shards
	if shards == nil {
		shards = []shardEntry{}
	}
	b, err := json.Marshal(struct {
		Shards  []shardEntry `json:"shards"`
		Version int          `json:"version"`
	}{shards, 2})
	if err == nil {
		err = atomicfile.WriteFile(filepath.Join(w.dir, IndexName), b, 0o644)
	}
	if err != nil {
		w.remove()
		return fmt.Errorf("mds: %s: %w", filepath.Join(w.dir, IndexName), err)
	}
	return nil
}

// Abort removes the shards written; no index.json is written.
func (w *Writer) Abort() {
	if !w.done {
		w.done = true
		w.remove()
	}
}

func (w *Writer) remove() {
	for _, p := range w.written {
		os.Remove(p)
	}
	w.written = nil
	w.samples = nil
}

// Samples returns the number of samples written so far.
func (w *Writer) Samples() int64 {
	n := int64(len(w.samples))
	for _, s := range w.shards {
		n += s.Samples
	}
	return n
}

// Shards returns the number of shards written so far.
func (w *Writer) Shards() int { return len(w.shards) }
