// Package imagefolder reads an ImageNet-style folder, root/<class>/.../<image>, as a source of
// samples with an "image" file column and a "label" column (the class folder's index in sorted
// order, as torchvision's ImageFolder), or a flat folder of images with the "image" column only.
// It walks the tree once, up front, so the sample count and input sizes are known before a run;
// the list of files is kept sorted on disk (package sources/listing), not in memory, so a
// folder of 10^8 images costs a few megabytes.
package imagefolder

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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

// Column names of the samples.
const (
	ColumnImage = "image"
	ColumnLabel = "label"
	// ColumnPath is the image's path relative to the root, slash-separated (the sample's
	// Key), for a text field (from: path); a recipe adds it to the samples that need it.
	ColumnPath = "path"
)

// Errors returned by New and carried by samples.
var (
	ErrNotDir      = errors.New("imagefolder: root is not a directory")
	ErrNoImages    = errors.New("imagefolder: no image files found")
	ErrSymlinkLoop = errors.New("imagefolder: symbolic link loop")
	ErrBrokenLink  = errors.New("imagefolder: broken symbolic link")
	ErrNotRegular  = errors.New("imagefolder: not a regular file")
	ErrUnreadable  = errors.New("imagefolder: cannot read directory")
	ErrRange       = errors.New("imagefolder: sample range out of bounds")
	// ErrNoClasses means a folder read with class folders (the default of convert images)
	// has none, yet holds images: it is a flat folder, to be read with --flat.
	ErrNoClasses    = errors.New("imagefolder: no class folders")
	errLayoutOption = errors.New("imagefolder: invalid layout")
)

// DefaultExtensions are the file extensions read when Options.Extensions is empty (compared
// case-insensitively).
var DefaultExtensions = []string{".jpg", ".jpeg", ".png", ".gif", ".bmp", ".tif", ".tiff", ".webp"}

// Layout says how the folder is organised.
type Layout int

// Layouts.
const (
	// LayoutAuto uses class folders when root has at least one subdirectory, else flat.
	LayoutAuto Layout = iota
	// LayoutClasses: every subdirectory of root is a class; files directly in root are ignored.
	LayoutClasses
	// LayoutFlat: every image below root, without labels.
	LayoutFlat
)

// Options configure a folder source. The zero value reads class folders if there are any.
type Options struct {
	Layout Layout
	// Extensions overrides DefaultExtensions (with or without the leading dot).
	Extensions []string
	// TempDir holds the sorted list of files while it does not fit in memory (32 MiB); ""
	// means os.TempDir(). The list takes about 30 bytes per file plus the paths.
	TempDir string

	// Store lists and reads a folder in a bucket (root an s3://, gs://, az:// or azblob://
	// URL); nil: a client of the Source's own.
	Store *objstore.Client
	// Prefetch is how many images of a bucket are fetched ahead of the one being emitted;
	// 0 means 8.
	Prefetch int

	memLimit int // bytes of the list held in memory (tests); 0: the listing's default
}

// Source is an image-folder source. It is immutable after New and safe for concurrent use.
type Source struct {
	root    string
	classes []string
	files   *listing.List // one record per image: see fileKey and fileData
	errs    []error       // per-file problems (broken link, not a regular file), by record
	ignored []string
	flat    bool
	skipped map[string]int64 // files found but not read, by extension (see SkippedFiles)

	remote   bool // root is a URL: records as remote.go says, images read with store
	store    *objstore.Client
	prefetch int
}

// A file's record in the list: its key orders the samples (label, then directory, then name:
// the order of torchvision's sorted(os.walk(...)) within each class) and names the file; its
// data holds the file's size and, when the file is a bad sample, 1 + its index in errs.
//
//	key:  uint32 big-endian label+1 (0 when flat) | directory relative to root | 0x00 | name
//	data: uvarint size | uvarint error index + 1, or 0

func fileKey(b []byte, label int, dirRel, name string) []byte {
	b = binary.BigEndian.AppendUint32(b[:0], uint32(label+1))
	b = append(b, dirRel...)
	b = append(b, 0)
	return append(b, name...)
}

// New walks root and returns the source. It follows symbolic links to directories and files,
// reports a symbolic-link loop or an unreadable directory as an error, and orders samples as
// torchvision's ImageFolder does: classes in sorted order; within a class, directories in
// sorted path order and files in sorted name order. Names starting with "." are skipped.
//
// root may also be a folder in a bucket (s3://bucket/train, gs://..., az://...): see
// remote.go. A missing bucket, denied access or a prefix with no object is an error naming
// the URL.
func New(root string, opts Options) (*Source, error) {
	return NewContext(context.Background(), root, opts)
}

// NewContext is New with a context for listing a folder in a bucket.
func NewContext(ctx context.Context, root string, opts Options) (*Source, error) {
	exts := opts.Extensions
	if len(exts) == 0 {
		exts = DefaultExtensions
	}
	extSet := map[string]bool{}
	for _, e := range exts {
		e = strings.ToLower(e)
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		extSet[e] = true
	}
	// A folder of this machine is walked with the file system's own rules (symbolic links
	// followed, loops refused), which needs its directory; a folder in a bucket is listed
	// through objstore.
	local, ok := objstore.FolderOf(root).Dir()
	if !ok {
		if opts.Prefetch <= 0 {
			opts.Prefetch = 8
		}
		return newRemote(ctx, root, extSet, opts)
	}
	root = local
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("imagefolder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrNotDir, root)
	}
	w := &walker{exts: extSet, list: listing.NewBuilder(listing.Options{Dir: opts.TempDir, MemLimit: opts.memLimit})}
	s := &Source{root: root}
	if err := s.walk(w, st, opts.Layout); err != nil {
		w.list.Abort()
		return nil, err
	}
	if s.files, err = w.list.Finish(); err != nil {
		return nil, fmt.Errorf("imagefolder: listing %s: %w", root, err)
	}
	s.errs = w.errs
	s.skipped = w.skipped.Counts()
	if err := s.checkClasses(); err != nil {
		s.files.Close()
		return nil, err
	}
	return s, nil
}

// checkClasses refuses a folder read with class folders that has no image in any, but
// images directly in it: a flat folder, which would convert to nothing.
func (s *Source) checkClasses() error {
	if s.flat || s.files.Len() > 0 || len(s.ignored) == 0 {
		return nil
	}
	what := "no class subfolders"
	if len(s.classes) > 0 {
		what = fmt.Sprintf("no image in its %d class subfolder(s)", len(s.classes))
	}
	return fmt.Errorf("%w: %s has %s but %d image(s) directly in it: to convert them without labels, read it as a flat folder (convert images --flat, or source.flat: true in a recipe)",
		ErrNoClasses, s.root, what, len(s.ignored))
}

func (s *Source) walk(w *walker, st os.FileInfo, layout Layout) error {
	root := s.root
	var dirs, rootFiles []string
	err := eachEntry(root, func(e os.DirEntry) error {
		if strings.HasPrefix(e.Name(), ".") {
			return nil
		}
		isDir, err := isDirFollow(filepath.Join(root, e.Name()), e)
		if err != nil || !isDir {
			if w.exts[strings.ToLower(filepath.Ext(e.Name()))] {
				rootFiles = append(rootFiles, e.Name())
			} else if layout != LayoutFlat {
				// Flat, w.walk below counts it; with class folders nothing reads it.
				w.skipped.Add(e.Name())
			}
			return nil
		}
		dirs = append(dirs, e.Name())
		return nil
	})
	if err != nil {
		return err
	}
	switch layout {
	case LayoutAuto:
		s.flat = len(dirs) == 0
	case LayoutClasses:
	case LayoutFlat:
		s.flat = true
	default:
		return fmt.Errorf("%w %d", errLayoutOption, layout)
	}
	if s.flat {
		if layout == LayoutAuto {
			w.skipped.Reset() // w.walk counts the root's files again
		}
		return w.walk(root, "", -1, []os.FileInfo{st})
	}
	sort.Strings(dirs)
	s.classes = dirs
	for i, d := range dirs {
		cst, err := os.Stat(filepath.Join(root, d))
		if err != nil {
			return fmt.Errorf("imagefolder: %w", err)
		}
		if containsDir([]os.FileInfo{st}, cst) {
			return fmt.Errorf("%w: %s leads back to %s", ErrSymlinkLoop, filepath.Join(root, d), root)
		}
		if err := w.walk(filepath.Join(root, d), d, i, []os.FileInfo{st, cst}); err != nil {
			return err
		}
	}
	for _, n := range rootFiles {
		s.ignored = append(s.ignored, filepath.Join(root, n))
		w.skipped.Add(n)
	}
	sort.Strings(s.ignored)
	return nil
}

func containsDir(ancestors []os.FileInfo, st os.FileInfo) bool {
	for _, a := range ancestors {
		if os.SameFile(a, st) {
			return true
		}
	}
	return false
}

// dirBatch is how many directory entries are read at a time: a directory of millions of
// files is never held whole.
const dirBatch = 4096

// eachEntry calls fn for every entry of dir, in directory order (not sorted).
func eachEntry(dir string, fn func(os.DirEntry) error) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrUnreadable, dir, err)
	}
	defer f.Close()
	for {
		entries, err := f.ReadDir(dirBatch)
		for _, e := range entries {
			if err := fn(e); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w %s: %w", ErrUnreadable, dir, err)
		}
	}
}

// isDirFollow reports whether e (in its parent directory, at path) is a directory, following
// a symbolic link.
func isDirFollow(path string, e os.DirEntry) (bool, error) {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir(), nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return st.IsDir(), nil
}

// walker adds the images below a directory to the list.
type walker struct {
	exts    map[string]bool
	list    *listing.Builder
	errs    []error
	skipped sources.Skipped // files with an extension not in exts
	key     []byte
	data    []byte
}

// pending is a directory still to list: its path, its path relative to the root and the
// directories on the way to it from the root (to detect symbolic-link loops).
type pending struct {
	dir, rel  string
	ancestors []os.FileInfo
}

// walk lists the images below dir (rel is dir relative to the root) into the list with the
// given label; the list's key puts them in torchvision's order. ancestors holds the
// directories on the path from the root, to detect symbolic-link loops.
func (w *walker) walk(dir, rel string, label int, ancestors []os.FileInfo) error {
	stack := []pending{{dir, rel, ancestors}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		err := eachEntry(p.dir, func(e os.DirEntry) error {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				return nil
			}
			path := filepath.Join(p.dir, name)
			r := name
			if p.rel != "" {
				r = p.rel + "/" + name
			}
			if e.Type()&fs.ModeSymlink != 0 {
				st, err := os.Stat(path)
				if err != nil {
					if w.exts[strings.ToLower(filepath.Ext(name))] {
						return w.add(label, p.rel, name, 0, fmt.Errorf("%w: %s: %w", ErrBrokenLink, path, err))
					}
					return nil
				}
				if st.IsDir() {
					return w.pushDir(&stack, path, r, p.ancestors, st)
				}
				if !w.exts[strings.ToLower(filepath.Ext(name))] {
					w.skipped.Add(name)
					return nil
				}
				return w.regular(label, p.rel, name, path, st)
			}
			if e.IsDir() {
				st, err := os.Stat(path)
				if err != nil {
					return fmt.Errorf("%w %s: %w", ErrUnreadable, path, err)
				}
				return w.pushDir(&stack, path, r, p.ancestors, st)
			}
			if !w.exts[strings.ToLower(filepath.Ext(name))] {
				w.skipped.Add(name)
				return nil
			}
			st, err := e.Info()
			if err != nil {
				return w.add(label, p.rel, name, 0, fmt.Errorf("imagefolder: %w", err))
			}
			return w.regular(label, p.rel, name, path, st)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) regular(label int, dirRel, name, path string, st os.FileInfo) error {
	var err error
	if !st.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is %s", ErrNotRegular, path, inputfile.Kind(st.Mode()))
	}
	return w.add(label, dirRel, name, st.Size(), err)
}

// add appends one image to the list.
func (w *walker) add(label int, dirRel, name string, size int64, ferr error) error {
	w.key = fileKey(w.key, label, dirRel, name)
	w.data = binary.AppendUvarint(w.data[:0], uint64(max(size, 0)))
	var e uint64
	if ferr != nil {
		w.errs = append(w.errs, ferr)
		e = uint64(len(w.errs))
	}
	w.data = binary.AppendUvarint(w.data, e)
	if err := w.list.Add(w.key, w.data); err != nil {
		return fmt.Errorf("imagefolder: %w", err)
	}
	return nil
}

func (w *walker) pushDir(stack *[]pending, path, rel string, ancestors []os.FileInfo, st os.FileInfo) error {
	if containsDir(ancestors, st) {
		return fmt.Errorf("%w: %s leads back to one of its parent directories", ErrSymlinkLoop, path)
	}
	anc := append(append([]os.FileInfo(nil), ancestors...), st)
	*stack = append(*stack, pending{path, rel, anc})
	return nil
}

// Root returns the folder the source reads.
func (s *Source) Root() string { return s.root }

// Flat reports whether the source has no class folders (and no label column).
func (s *Source) Flat() bool { return s.flat }

// Classes returns the class folder names in label order (nil when flat). A class folder with
// no images keeps its index, as in torchvision.
func (s *Source) Classes() []string { return append([]string(nil), s.classes...) }

// Columns returns the columns the source supplies to a recipe's fields (from:): the image,
// its label unless flat, and its path relative to the root (which a recipe adds to the
// samples of a field that reads it).
func (s *Source) Columns() []string {
	if s.flat {
		return []string{ColumnImage, ColumnPath}
	}
	return []string{ColumnImage, ColumnLabel, ColumnPath}
}

// Ignored returns the files directly in root that class-folder layout skips.
func (s *Source) Ignored() []string { return append([]string(nil), s.ignored...) }

// SkippedFiles implements sources.SkipCounter: the files below root that are not read (an
// extension not among Options.Extensions; with class folders, also the images directly in
// root), by extension. Hidden names (starting with ".") are not counted. A range of the
// source (a shard) reports them only when it starts at the first image, so that the shards'
// counts add up to the folder's.
func (s *Source) SkippedFiles() map[string]int64 { return maps.Clone(s.skipped) }

// Len implements sources.Source: the number of images found.
func (s *Source) Len() int64 { return s.files.Len() }

// entry is one listed image, decoded from its record.
type entry struct {
	label      int
	size       int64
	err        error
	dirRel, nm []byte
}

// decode reads an image's record.
func (s *Source) decode(key, data []byte) (entry, error) {
	var e entry
	if len(key) < 4 {
		return e, fmt.Errorf("%w: record key of %d bytes", listing.ErrCorrupt, len(key))
	}
	e.label = int(binary.BigEndian.Uint32(key)) - 1
	rest := key[4:]
	z := bytes.IndexByte(rest, 0)
	if z < 0 {
		return e, fmt.Errorf("%w: record key without a separator", listing.ErrCorrupt)
	}
	e.dirRel, e.nm = rest[:z], rest[z+1:]
	size, n := binary.Uvarint(data)
	ei, m := binary.Uvarint(data[max(n, 0):])
	if n <= 0 || m <= 0 || ei > uint64(len(s.errs)) {
		return e, fmt.Errorf("%w: bad record data", listing.ErrCorrupt)
	}
	e.size = int64(size)
	if ei > 0 {
		e.err = s.errs[ei-1]
	}
	return e, nil
}

// relPath joins a record's directory and name.
func relPath(dirRel, name []byte) string {
	if len(dirRel) == 0 {
		return string(name)
	}
	return string(dirRel) + "/" + string(name)
}

// Inputs returns every image path with its size, in sample order: read from the list as it
// is walked, not held.
func (s *Source) Inputs() sources.InputList { return inputList{s} }

type inputList struct{ s *Source }

func (l inputList) Len() int64 { return l.s.Len() }

func (l inputList) Each(fn func(int64, sources.Input) error) error {
	return l.s.files.Each(func(i int64, key, data []byte) error {
		if l.s.remote {
			e, err := l.s.decodeRemote(key, data)
			if err != nil {
				return err
			}
			return fn(i, sources.Input{Path: l.s.root + "/" + relPath(e.dirRel, e.nm), Size: e.size})
		}
		e, err := l.s.decode(key, data)
		if err != nil {
			return err
		}
		return fn(i, sources.Input{Path: filepath.Join(l.s.root, relPath(e.dirRel, e.nm)), Size: e.size})
	})
}

// Range implements sources.Sharder: a source of samples lo..hi-1 of s (a contiguous slice of
// Inputs, one image each, for sharded runs). Its samples are indexed from 0; labels and
// classes are those of s.
func (s *Source) Range(lo, hi int) (sources.Source, error) {
	if lo < 0 || hi < lo || int64(hi) > s.Len() {
		return nil, fmt.Errorf("%w: [%d, %d) of %d samples", ErrRange, lo, hi, s.Len())
	}
	files, err := s.files.Slice(int64(lo), int64(hi))
	if err != nil {
		return nil, err
	}
	r := *s
	r.files = files
	if lo > 0 {
		r.skipped = nil
	}
	return &r, nil
}

// Run implements sources.Source. Each sample has Key = the path relative to root
// (slash-separated), Origin = the file's path, the "image" column as a KindFile value and, with
// class folders, the "label" column as a KindInt value. A broken link or a non-regular file is
// a sample with Err set.
func (s *Source) Run(ctx context.Context, emit func(sample.Sample) error) error {
	if s.remote {
		return s.runRemote(ctx, emit)
	}
	return s.files.Each(func(i int64, key, data []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, err := s.decode(key, data)
		if err != nil {
			return fmt.Errorf("imagefolder: %s: %w", s.root, err)
		}
		rel := relPath(e.dirRel, e.nm)
		path := filepath.Join(s.root, filepath.FromSlash(rel))
		vals := make([]sample.Column, 1, 2)
		vals[0] = sample.Column{Name: ColumnImage, Value: sample.Value{Kind: sample.KindFile, Path: path, Name: filepath.Base(path)}}
		if !s.flat {
			vals = append(vals, sample.Column{Name: ColumnLabel, Value: sample.Value{Kind: sample.KindInt, Int: int64(e.label)}})
		}
		return emit(sample.Sample{Index: i, Key: rel, Origin: path, Values: vals, InputBytes: e.size, Err: e.err})
	})
}

var (
	_ sources.Sharder     = (*Source)(nil)
	_ sources.SkipCounter = (*Source)(nil)
)
