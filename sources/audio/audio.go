// Package audio provides the sources of audio datasets: class folders (Speech Commands style),
// NeMo-style JSONL manifests and LibriSpeech trees. Each lists its files up front in a
// deterministic order and yields one sample per clip with an "audio" file value. The list is
// kept by package sources/listing: in memory while small, sorted on disk beyond, so memory
// does not grow with the number of clips (only with the clips that are errors).
package audio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/listing"
)

// Errors of the audio sources, wrapped with the file (and line) they concern.
var (
	ErrNoAudio    = errors.New("audio source: no audio files found")
	ErrManifest   = errors.New("audio source: bad manifest line")
	ErrTranscript = errors.New("audio source: bad transcript")
	ErrRange      = errors.New("audio source: input range out of bounds")
)

var (
	_ sources.Sharder     = (*Folder)(nil)
	_ sources.Sharder     = (*LibriSpeech)(nil)
	_ sources.Sharder     = (*Manifest)(nil)
	_ sources.SkipCounter = (*Folder)(nil)
	_ sources.SkipCounter = (*LibriSpeech)(nil)
)

// isTranscript reports whether name is a LibriSpeech chapter's transcript, which the
// LibriSpeech source reads (it is not a skipped file).
func isTranscript(name string) bool { return strings.HasSuffix(name, ".trans.txt") }

// Column names the sources emit.
const (
	ColAudio   = "audio"
	ColLabel   = "label"
	ColText    = "text"
	ColSpeaker = "speaker"
	ColChapter = "chapter"
	// ColPath is a folder source's file path relative to the root, slash-separated (the
	// sample's Key), for a text field (from: path); a recipe adds it to the samples that need
	// it.
	ColPath = "path"
)

// FolderColumns returns the columns an audio folder supplies to a recipe's fields (from:).
func FolderColumns() []string { return []string{ColAudio, ColLabel, ColPath} }

// IsAudioFile reports whether name has an audio extension this package reads (.wav, .flac;
// case-insensitive).
func IsAudioFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".wav", ".flac":
		return true
	}
	return false
}

// record is one listed sample as the list keeps it (on disk when large): what the source
// found before the run. The source's decode turns it into a sample at run time.
type record struct {
	size  int64  // bytes the sample accounts for (0 for a file already counted)
	err   int    // 1 + index in list.errs of the sample's error, or 0
	first bool   // the sample is the first to use path: path is one of the inputs
	path  string // the audio file
	line  int64  // manifest line number
	raw   []byte // manifest line
}

func (r *record) append(b []byte) []byte {
	b = binary.AppendUvarint(b[:0], uint64(r.size))
	b = binary.AppendUvarint(b, uint64(r.err))
	first := byte(0)
	if r.first {
		first = 1
	}
	b = append(b, first)
	b = binary.AppendUvarint(b, uint64(len(r.path)))
	b = append(b, r.path...)
	b = binary.AppendUvarint(b, uint64(r.line))
	return append(b, r.raw...)
}

func (r *record) decode(b []byte, errs int) error {
	var n int
	next := func() uint64 {
		if n < 0 {
			return 0
		}
		v, m := binary.Uvarint(b[n:])
		if m <= 0 {
			n = -1
			return 0
		}
		n += m
		return v
	}
	r.size = int64(next())
	r.err = int(next())
	if n < 0 || n >= len(b) || r.err > errs {
		return listing.ErrCorrupt
	}
	r.first = b[n] == 1
	n++
	pl := next()
	if n < 0 || uint64(len(b)-n) < pl {
		return listing.ErrCorrupt
	}
	r.path = string(b[n : n+int(pl)])
	n += int(pl)
	r.line = int64(next())
	if n < 0 {
		return listing.ErrCorrupt
	}
	r.raw = b[n:]
	return nil
}

// list is the shared implementation of the audio sources: one record per sample, kept in key
// order by a listing (on disk beyond 32 MiB, so 10^7 clips cost a few megabytes of memory),
// turned into samples by the source's decode as the run reads them.
type list struct {
	items  *listing.List
	errs   []error // the listed samples' errors, by record.err - 1
	inputs int64   // records with first set
	// decoder returns, for one run under ctx, the function that builds a sample from its key
	// and record (Index and the listed error are set by Run).
	decoder func(ctx context.Context) func(key []byte, r *record) sample.Sample

	// A source in a bucket (remote.go): Run fetches the clips whose "audio" value is a URL,
	// prefetch of them ahead, with store.
	remote   bool
	store    *objstore.Client
	prefetch int

	b   *listing.Builder // while listing
	buf []byte
	// skips counts, while listing, the files of a folder that are not clips; skipped is the
	// result (see SkippedFiles).
	skips   *sources.Skipped
	skipped map[string]int64
}

// skip counts a file of the folder that is not read.
func (l *list) skip(name string) {
	if l.skips == nil {
		l.skips = &sources.Skipped{}
	}
	l.skips.Add(name)
}

// SkippedFiles implements sources.SkipCounter: the files of the folder that the source does
// not read (not .wav or .flac, nor a LibriSpeech transcript; with class folders, also the
// files directly in the root), by extension (none for a manifest). A range of the source (a
// shard) reports them only when it starts at the first input, so that the shards' counts
// add up to the folder's.
func (l *list) SkippedFiles() map[string]int64 { return maps.Clone(l.skipped) }

func (l *list) start() { l.b = listing.NewBuilder(listing.Options{}) }

// startUnsorted starts a list that keeps the order of add.
func (l *list) startUnsorted() { l.b = listing.NewBuilder(listing.Options{Unsorted: true}) }

// add lists one sample with its sort key; err, when set, is the sample's error.
func (l *list) add(key []byte, r record, err error) error {
	if err != nil {
		l.errs = append(l.errs, err)
		r.err = len(l.errs)
	}
	if r.first {
		l.inputs++
	}
	l.buf = r.append(l.buf)
	return l.b.Add(key, l.buf)
}

// finish ends the listing.
func (l *list) finish() error {
	var err error
	l.items, err = l.b.Finish()
	l.b = nil
	return err
}

// end ends a listing that a walk stopped with walkErr or completed: the listing is dropped
// on an error, finished otherwise, and a listing of no clip is ErrNoAudio naming want, the
// layout expected. Errors name what (the kind of source) and root.
func (l *list) end(walkErr error, what, root, want string) error {
	if walkErr != nil {
		l.b.Abort()
		return fmt.Errorf("%s %s: %w", what, root, walkErr)
	}
	if err := l.finish(); err != nil {
		return fmt.Errorf("%s %s: %w", what, root, err)
	}
	if l.skips != nil {
		l.skipped, l.skips = l.skips.Counts(), nil
	}
	if l.Len() == 0 {
		return fmt.Errorf("%w under %s (want %s)", ErrNoAudio, root, want)
	}
	return nil
}

// Len returns the number of samples.
func (l *list) Len() int64 { return l.items.Len() }

// sub returns l cut to its inputs [lo, hi): the samples from the one that first uses input
// lo up to the one that first uses input hi. A sample that uses an input already counted
// (the segments of one recording) goes with the input before it, and the samples before the
// first input (manifest lines that name no readable file) go with input 0, so consecutive
// ranges partition the samples. A list with no input at all (every line an error) is not
// cut: each range holds every sample, so that none is lost.
func (l *list) sub(lo, hi int) (list, error) {
	if lo < 0 || hi < lo || int64(hi) > l.inputs {
		return list{}, fmt.Errorf("%w: [%d, %d) of %d inputs", ErrRange, lo, hi, l.inputs)
	}
	start, end := int64(0), l.items.Len()
	if l.inputs > 0 {
		// bound(k) is the index of the first sample of input k (0 for the first input,
		// every sample for one past the last).
		bounds := map[int]int64{0: 0, int(l.inputs): l.items.Len()}
		want := func(k int) bool { _, ok := bounds[k]; return !ok && (k == lo || k == hi) }
		if want(lo) || want(hi) {
			var r record
			k := -1
			err := l.items.Each(func(i int64, _, data []byte) error {
				if err := r.decode(data, len(l.errs)); err != nil {
					return err
				}
				if !r.first {
					return nil
				}
				k++
				if want(k) {
					bounds[k] = i
					if !want(lo) && !want(hi) {
						return errStop
					}
				}
				return nil
			})
			if err != nil && err != errStop {
				return list{}, fmt.Errorf("audio source: %w", err)
			}
		}
		start, end = bounds[lo], bounds[hi]
	}
	items, err := l.items.Slice(start, end)
	if err != nil {
		return list{}, err
	}
	r := list{items: items, errs: l.errs, inputs: int64(hi - lo), decoder: l.decoder,
		remote: l.remote, store: l.store, prefetch: l.prefetch}
	if lo == 0 {
		r.skipped = l.skipped
	}
	return r, nil
}

// errStop ends a walk of the list early.
var errStop = errors.New("stop")

// Inputs returns the files the source reads, with their sizes, in sample order (a file
// shared by several samples is listed once, at its first use): read from the list.
func (l *list) Inputs() sources.InputList { return inputList{l} }

type inputList struct{ l *list }

func (il inputList) Len() int64 { return il.l.inputs }

func (il inputList) Each(fn func(int64, sources.Input) error) error {
	var k int64
	var r record
	return il.l.items.Each(func(_ int64, _, data []byte) error {
		if err := r.decode(data, len(il.l.errs)); err != nil {
			return err
		}
		if !r.first {
			return nil
		}
		k++
		return fn(k-1, sources.Input{Path: r.path, Size: r.size})
	})
}

// Run emits the samples in order. A source in a bucket hands its clips over as KindBytes
// values, fetched ahead (a clip that cannot be read is a sample with Err set).
func (l *list) Run(ctx context.Context, emit func(sample.Sample) error) error {
	if l.remote {
		return l.runRemote(ctx, emit)
	}
	return l.each(ctx, emit)
}

// each emits the listed samples in order, as the decoder builds them.
func (l *list) each(ctx context.Context, emit func(sample.Sample) error) error {
	var r record
	decode := l.decoder(ctx)
	return l.items.Each(func(i int64, key, data []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.decode(data, len(l.errs)); err != nil {
			return fmt.Errorf("audio source: sample %d: %w", i, err)
		}
		s := decode(key, &r)
		s.Index = i
		if r.err > 0 && s.Err == nil {
			s.Err = l.errs[r.err-1]
		}
		return emit(s)
	})
}

// recentFiles remembers the audio files recently named (in two generations of recentWindow),
// so that a file shared by nearby manifest lines (the segments of one recording) is statted
// and counted once, in bounded memory.
type recentFiles struct {
	cur, old map[string]struct{}
}

const recentWindow = 1 << 14

func (r *recentFiles) has(path string) bool {
	if _, ok := r.cur[path]; ok {
		return true
	}
	_, ok := r.old[path]
	return ok
}

func (r *recentFiles) add(path string) {
	if r.cur == nil || len(r.cur) >= recentWindow {
		r.old, r.cur = r.cur, make(map[string]struct{})
	}
	r.cur[path] = struct{}{}
}

// statAudio returns the size of the audio file at path, or an error naming it when it is
// missing or not a regular file (a named pipe or a device would block or never end when read).
func statAudio(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err // a *PathError: names the path
	}
	if err := inputfile.CheckRegular(path, st.Mode()); err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func fileValue(path string) sample.Value {
	return sample.Value{Kind: sample.KindFile, Path: path, Name: filepath.Base(path)}
}

// Folder is a class-folder source: root/<class>/**/<file>.wav|.flac, giving "audio" and
// "label" (the index of the class folder in sorted order).
type Folder struct {
	list
	classes []string
}

// OpenFolder lists a class-folder dataset. Files directly under root are ignored; class
// folders are searched recursively (following no symlinked directories). An audio file that
// is not a regular file (a named pipe, a device) becomes a sample with Err set.
func OpenFolder(root string) (*Folder, error) {
	// Stat before reading: os.ReadDir opens its argument, and opening a named pipe blocks.
	if st, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("audio folder: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("audio folder %s: %w", root, inputfile.ErrNotDir)
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("audio folder %s: %w", root, err)
	}
	f := &Folder{}
	for _, e := range ents {
		if e.IsDir() {
			f.classes = append(f.classes, e.Name())
		} else {
			f.skip(e.Name()) // files directly under root are not clips
		}
	}
	sort.Strings(f.classes)
	f.start()
	var key []byte
	for label, class := range f.classes {
		err = filepath.WalkDir(filepath.Join(root, class), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if !IsAudioFile(p) {
				f.skip(p)
				return nil
			}
			// Key: the label, then the path (files of a class in sorted path order).
			key = binary.BigEndian.AppendUint32(key[:0], uint32(label))
			key = append(key, p...)
			r := record{path: p, first: true}
			r.size, err = statAudio(p)
			return f.add(key, r, err)
		})
		if err != nil {
			break
		}
	}
	if err := f.end(err, "audio folder", root, root+"/<class>/<file>.wav|.flac"); err != nil {
		return nil, err
	}
	f.decoder = func(context.Context) func([]byte, *record) sample.Sample {
		return func(key []byte, r *record) sample.Sample {
			rel, _ := filepath.Rel(root, r.path)
			label := int64(binary.BigEndian.Uint32(key))
			return sample.Sample{Key: rel, Origin: r.path, InputBytes: r.size,
				Values: []sample.Column{{Name: ColAudio, Value: fileValue(r.path)}, {Name: ColLabel, Value: sample.Value{Kind: sample.KindInt, Int: label}}}}
		}
	}
	return f, nil
}

// Classes returns the class names; label i is Classes()[i].
func (f *Folder) Classes() []string { return f.classes }

// Columns returns the columns the source supplies to a recipe's fields (from:): the clip, its
// label and its path relative to the root (which a recipe adds to the samples of a field that
// reads it).
func (f *Folder) Columns() []string { return FolderColumns() }

// Range implements sources.Sharder: the clips of inputs [lo, hi) (one file each), indexed
// from 0, with the labels and classes of f.
func (f *Folder) Range(lo, hi int) (sources.Source, error) {
	l, err := f.sub(lo, hi)
	if err != nil {
		return nil, err
	}
	return &Folder{list: l, classes: f.classes}, nil
}

// Range implements sources.Sharder: the clips of inputs [lo, hi), in path order, indexed
// from 0.
func (ls *LibriSpeech) Range(lo, hi int) (sources.Source, error) {
	l, err := ls.sub(lo, hi)
	if err != nil {
		return nil, err
	}
	return &LibriSpeech{list: l}, nil
}

// Range implements sources.Sharder: the manifest lines from the first that names input lo
// up to the first that names input hi, indexed from 0 (origins and keys keep their line
// numbers). The segments of one recording on consecutive lines stay together.
func (m *Manifest) Range(lo, hi int) (sources.Source, error) {
	l, err := m.sub(lo, hi)
	if err != nil {
		return nil, err
	}
	r := *m
	r.list = l
	return &r, nil
}
