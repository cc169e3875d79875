// Package imagefolder reads an ImageNet-style folder, root/<class>/.../<image>, as a source of
// samples with an "image" file column and a "label" column (the class folder's index in sorted
// order, as torchvision's ImageFolder), or a flat folder of images with the "image" column only.
// It walks the tree once, up front, so the sample count and input sizes are known before a run.
package imagefolder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// Column names of the samples.
const (
	ColumnImage = "image"
	ColumnLabel = "label"
)

// Errors returned by New and carried by samples.
var (
	ErrNotDir       = errors.New("imagefolder: root is not a directory")
	ErrNoImages     = errors.New("imagefolder: no image files found")
	ErrSymlinkLoop  = errors.New("imagefolder: symbolic link loop")
	ErrBrokenLink   = errors.New("imagefolder: broken symbolic link")
	ErrNotRegular   = errors.New("imagefolder: not a regular file")
	ErrUnreadable   = errors.New("imagefolder: cannot read directory")
	ErrRange        = errors.New("imagefolder: sample range out of bounds")
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
}

// Source is an image-folder source. It is immutable after New and safe for concurrent use.
type Source struct {
	root    string
	classes []string
	files   []file
	ignored []string
	flat    bool
}

type file struct {
	rel   string // slash-separated path relative to root
	path  string // path to open
	size  int64
	label int
	err   error // per-sample problem (broken link, not a regular file)
}

// New walks root and returns the source. It follows symbolic links to directories and files,
// reports a symbolic-link loop or an unreadable directory as an error, and orders samples as
// torchvision's ImageFolder does: classes in sorted order; within a class, directories in
// sorted path order and files in sorted name order. Names starting with "." are skipped.
func New(root string, opts Options) (*Source, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("imagefolder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrNotDir, root)
	}
	exts := opts.Extensions
	if len(exts) == 0 {
		exts = DefaultExtensions
	}
	w := walker{exts: map[string]bool{}}
	for _, e := range exts {
		e = strings.ToLower(e)
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		w.exts[e] = true
	}
	s := &Source{root: root}
	entries, err := readDir(root)
	if err != nil {
		return nil, err
	}
	var dirs []string
	var rootFiles []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		isDir, err := isDirFollow(filepath.Join(root, e.Name()), e)
		if err != nil || !isDir {
			if w.exts[strings.ToLower(filepath.Ext(e.Name()))] {
				rootFiles = append(rootFiles, e.Name())
			}
			continue
		}
		dirs = append(dirs, e.Name())
	}
	switch opts.Layout {
	case LayoutAuto:
		s.flat = len(dirs) == 0
	case LayoutClasses:
	case LayoutFlat:
		s.flat = true
	default:
		return nil, fmt.Errorf("%w %d", errLayoutOption, opts.Layout)
	}
	if s.flat {
		files, err := w.walk(root, "", -1, []os.FileInfo{st})
		if err != nil {
			return nil, err
		}
		s.files = files
	} else {
		sort.Strings(dirs)
		s.classes = dirs
		for i, d := range dirs {
			cst, err := os.Stat(filepath.Join(root, d))
			if err != nil {
				return nil, fmt.Errorf("imagefolder: %w", err)
			}
			if containsDir([]os.FileInfo{st}, cst) {
				return nil, fmt.Errorf("%w: %s leads back to %s", ErrSymlinkLoop, filepath.Join(root, d), root)
			}
			files, err := w.walk(filepath.Join(root, d), d, i, []os.FileInfo{st, cst})
			if err != nil {
				return nil, err
			}
			s.files = append(s.files, files...)
		}
		for _, n := range rootFiles {
			s.ignored = append(s.ignored, filepath.Join(root, n))
		}
		sort.Strings(s.ignored)
	}
	return s, nil
}

func containsDir(ancestors []os.FileInfo, st os.FileInfo) bool {
	for _, a := range ancestors {
		if os.SameFile(a, st) {
			return true
		}
	}
	return false
}

func readDir(dir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrUnreadable, dir, err)
	}
	return entries, nil
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

type walker struct {
	exts map[string]bool
}

// walk lists the images below dir (rel is dir relative to the root) in torchvision's order:
// the files of a directory, sorted by name, come before those of its subdirectories, and
// directories are visited in sorted path order. ancestors holds the directories on the path
// from the root, to detect symbolic-link loops.
type pending struct {
	dir, rel  string
	ancestors []os.FileInfo
}

func (w *walker) walk(dir, rel string, label int, ancestors []os.FileInfo) ([]file, error) {
	// Collect (directory, files) groups, then sort groups by relative path: the same order as
	// sorted(os.walk(...)).
	type group struct {
		rel   string
		files []file
	}
	var groups []group
	stack := []pending{{dir, rel, ancestors}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, err := readDir(p.dir)
		if err != nil {
			return nil, err
		}
		g := group{rel: p.rel}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
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
						g.files = append(g.files, file{rel: r, path: path, label: label,
							err: fmt.Errorf("%w: %s: %w", ErrBrokenLink, path, err)})
					}
					continue
				}
				if st.IsDir() {
					if err := w.pushDir(&stack, path, r, p.ancestors, st); err != nil {
						return nil, err
					}
					continue
				}
				if !w.exts[strings.ToLower(filepath.Ext(name))] {
					continue
				}
				g.files = append(g.files, w.regular(path, r, label, st))
				continue
			}
			if e.IsDir() {
				st, err := os.Stat(path)
				if err != nil {
					return nil, fmt.Errorf("%w %s: %w", ErrUnreadable, path, err)
				}
				if err := w.pushDir(&stack, path, r, p.ancestors, st); err != nil {
					return nil, err
				}
				continue
			}
			if !w.exts[strings.ToLower(filepath.Ext(name))] {
				continue
			}
			st, err := e.Info()
			if err != nil {
				g.files = append(g.files, file{rel: r, path: path, label: label, err: fmt.Errorf("imagefolder: %w", err)})
				continue
			}
			g.files = append(g.files, w.regular(path, r, label, st))
		}
		sort.Slice(g.files, func(i, j int) bool { return g.files[i].rel < g.files[j].rel })
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].rel < groups[j].rel })
	var out []file
	for _, g := range groups {
		out = append(out, g.files...)
	}
	return out, nil
}

func (w *walker) regular(path, rel string, label int, st os.FileInfo) file {
	f := file{rel: rel, path: path, size: st.Size(), label: label}
	if !st.Mode().IsRegular() {
		f.err = fmt.Errorf("%w: %s is a %s", ErrNotRegular, path, inputfile.TypeName(st.Mode()))
	}
	return f
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

// Columns returns the column names the samples carry.
func (s *Source) Columns() []string {
	if s.flat {
		return []string{ColumnImage}
	}
	return []string{ColumnImage, ColumnLabel}
}

// Ignored returns the files directly in root that class-folder layout skips.
func (s *Source) Ignored() []string { return append([]string(nil), s.ignored...) }

// Len implements sources.Source: the number of images found.
func (s *Source) Len() int64 { return int64(len(s.files)) }

// Inputs returns every image path with its size, in sample order.
func (s *Source) Inputs() []sources.Input {
	in := make([]sources.Input, len(s.files))
	for i, f := range s.files {
		in[i] = sources.Input{Path: f.path, Size: f.size}
	}
	return in
}

// Range returns a source of samples lo..hi-1 of s (a contiguous slice of Inputs, for sharded
// runs). Its samples are indexed from 0; labels and classes are those of s.
func (s *Source) Range(lo, hi int) (*Source, error) {
	if lo < 0 || hi < lo || hi > len(s.files) {
		return nil, fmt.Errorf("%w: [%d, %d) of %d samples", ErrRange, lo, hi, len(s.files))
	}
	r := *s
	r.files = s.files[lo:hi:hi]
	return &r, nil
}

// Run implements sources.Source. Each sample has Key = the path relative to root
// (slash-separated), Origin = the file's path, the "image" column as a KindFile value and, with
// class folders, the "label" column as a KindInt value. A broken link or a non-regular file is
// a sample with Err set.
func (s *Source) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for i, f := range s.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		vals := make([]sample.Column, 1, 2)
		vals[0] = sample.Column{Name: ColumnImage, Value: sample.Value{Kind: sample.KindFile, Path: f.path, Name: filepath.Base(f.path)}}
		if !s.flat {
			vals = append(vals, sample.Column{Name: ColumnLabel, Value: sample.Value{Kind: sample.KindInt, Int: int64(f.label)}})
		}
		smp := sample.Sample{Index: int64(i), Key: f.rel, Origin: f.path, Values: vals, InputBytes: f.size, Err: f.err}
		if err := emit(smp); err != nil {
			return err
		}
	}
	return nil
}

var _ sources.Source = (*Source)(nil)
