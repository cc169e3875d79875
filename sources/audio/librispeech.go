package audio

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/sample"
)

// LibriSpeech is a LibriSpeech-layout source: root/<speaker>/<chapter>/<id>.flac with the
// transcripts of a chapter in <speaker>-<chapter>.trans.txt ("<id> TEXT" per line). It emits
// "audio", "text", and "speaker" and "chapter" as KindInt, in sorted path order. A clip with
// no transcript line, or a malformed transcript, becomes a sample with Err set.
type LibriSpeech struct {
	list
}

// OpenLibriSpeech lists a LibriSpeech tree (a split folder such as train-clean-100) and reads
// its transcripts.
func OpenLibriSpeech(root string) (*LibriSpeech, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && IsAudioFile(p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("librispeech %s: %w", root, err)
	}
	sort.Strings(files)
	ls := &LibriSpeech{}
	trans := map[string]map[string]string{} // transcript path -> id -> text
	transErr := map[string]error{}
	seen := map[string]bool{}
	for _, p := range files {
		it := item{origin: p}
		it.key, _ = filepath.Rel(root, p)
		chapterDir := filepath.Dir(p)
		chapter, speaker := filepath.Base(chapterDir), filepath.Base(filepath.Dir(chapterDir))
		tp := filepath.Join(chapterDir, speaker+"-"+chapter+".trans.txt")
		if _, done := trans[tp]; !done && transErr[tp] == nil {
			t, err := readTranscript(tp)
			if err != nil {
				transErr[tp] = err
			} else {
				trans[tp] = t
			}
		}
		id := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		spk, err1 := strconv.ParseInt(speaker, 10, 64)
		chp, err2 := strconv.ParseInt(chapter, 10, 64)
		text, ok := trans[tp][id]
		switch {
		case transErr[tp] != nil:
			it.err = fmt.Errorf("%s: %w", p, transErr[tp])
		case err1 != nil || err2 != nil:
			it.err = fmt.Errorf("%s: %w: speaker/chapter folders %q/%q are not numbers", p, ErrTranscript, speaker, chapter)
		case !ok:
			it.err = fmt.Errorf("%s: %w: no line for %q in %s", p, ErrTranscript, id, tp)
		default:
			it.values = map[string]sample.Value{
				ColAudio:   fileValue(p),
				ColText:    {Kind: sample.KindString, Bytes: []byte(text)},
				ColSpeaker: {Kind: sample.KindInt, Int: spk},
				ColChapter: {Kind: sample.KindInt, Int: chp},
			}
		}
		if size, err := statAudio(p); err != nil && it.err == nil {
			it.err = err
		} else if err == nil {
			it.size = size
		}
		ls.items = append(ls.items, it)
		ls.addInput(seen, p, it.size)
	}
	if len(ls.items) == 0 {
		return nil, fmt.Errorf("%w under %s (want <speaker>/<chapter>/<id>.flac)", ErrNoAudio, root)
	}
	return ls, nil
}

// readTranscript reads a .trans.txt file into id -> text.
func readTranscript(path string) (map[string]string, error) {
	b, err := inputfile.ReadFile(path) // a named pipe is refused, not waited on
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTranscript, err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !utf8.ValidString(line) {
			return nil, fmt.Errorf("%w: %s:%d: invalid UTF-8", ErrTranscript, path, n)
		}
		id, text, ok := strings.Cut(line, " ")
		if !ok || id == "" {
			return nil, fmt.Errorf("%w: %s:%d: want \"<id> <text>\"", ErrTranscript, path, n)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%w: %s:%d: id %q appears twice", ErrTranscript, path, n, id)
		}
		out[id] = text
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrTranscript, path, err)
	}
	return out, nil
}
