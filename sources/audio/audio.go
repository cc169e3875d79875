// Package audio provides the sources of audio datasets: class folders (Speech Commands style),
// NeMo-style JSONL manifests and LibriSpeech trees. Each lists its files up front in a
// deterministic order and yields one sample per clip with an "audio" file value.
package audio

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

// Errors of the audio sources, wrapped with the file (and line) they concern.
var (
	ErrNoAudio    = errors.New("audio source: no audio files found")
	ErrManifest   = errors.New("audio source: bad manifest line")
	ErrTranscript = errors.New("audio source: bad transcript")
)

// Column names the sources emit.
const (
	ColAudio   = "audio"
	ColLabel   = "label"
	ColText    = "text"
	ColSpeaker = "speaker"
	ColChapter = "chapter"
)

// IsAudioFile reports whether name has an audio extension this package reads (.wav, .flac;
// case-insensitive).
func IsAudioFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".wav", ".flac":
		return true
	}
	return false
}

// item is one listed sample: its values (without the audio value's size) and origin.
type item struct {
	key, origin string
	values      map[string]sample.Value
	size        int64
	err         error
}

// list is the shared implementation of a source over a precomputed item list.
type list struct {
	items  []item
	inputs []sources.Input
}

// Len returns the number of samples.
func (l *list) Len() int64 { return int64(len(l.items)) }

// Inputs returns the files the source reads, with their sizes, in sample order (a file
// shared by several samples is listed once, at its first use).
func (l *list) Inputs() []sources.Input { return l.inputs }

// Run emits the samples in order.
func (l *list) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for i, it := range l.items {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := sample.Sample{Index: int64(i), Key: it.key, Origin: it.origin, InputBytes: it.size, Err: it.err}
		if it.err == nil {
			s.Values = sample.ColumnsOf(it.values)
		}
		if err := emit(s); err != nil {
			return err
		}
	}
	return nil
}

func (l *list) addInput(seen map[string]bool, path string, size int64) {
	if !seen[path] {
		seen[path] = true
		l.inputs = append(l.inputs, sources.Input{Path: path, Size: size})
	}
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
		}
	}
	sort.Strings(f.classes)
	seen := map[string]bool{}
	for label, class := range f.classes {
		var files []string
		err := filepath.WalkDir(filepath.Join(root, class), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && IsAudioFile(p) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("audio folder %s: %w", root, err)
		}
		sort.Strings(files)
		for _, p := range files {
			it := item{origin: p, values: map[string]sample.Value{
				ColAudio: fileValue(p),
				ColLabel: {Kind: sample.KindInt, Int: int64(label)},
			}}
			it.key, _ = filepath.Rel(root, p)
			it.size, it.err = statAudio(p)
			f.items = append(f.items, it)
			f.addInput(seen, p, it.size)
		}
	}
	if len(f.items) == 0 {
		return nil, fmt.Errorf("%w under %s (want %s/<class>/<file>.wav|.flac)", ErrNoAudio, root, root)
	}
	return f, nil
}

// Classes returns the class names; label i is Classes()[i].
func (f *Folder) Classes() []string { return f.classes }
