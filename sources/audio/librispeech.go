package audio

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/sample"
)

// LibriSpeech is a LibriSpeech-layout source: root/<speaker>/<chapter>/<id>.flac with the
// transcripts of a chapter in <speaker>-<chapter>.trans.txt ("<id> TEXT" per line). It emits
// "audio", "text", and "speaker" and "chapter" as KindInt, in sorted path order. A clip with
// no transcript line, or a malformed transcript, becomes a sample with Err set. Transcripts
// are read as the run reaches their chapter, one chapter at a time.
type LibriSpeech struct {
	list
}

// Columns returns the columns the source supplies to a recipe's fields (from:).
func (ls *LibriSpeech) Columns() []string { return []string{ColAudio, ColText, ColSpeaker, ColChapter} }

// OpenLibriSpeech lists a LibriSpeech tree (a split folder such as train-clean-100) and stats
// its clips; the transcripts are read by Run.
func OpenLibriSpeech(root string) (*LibriSpeech, error) {
	ls := &LibriSpeech{}
	ls.start()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !IsAudioFile(p) {
			if !isTranscript(p) {
				ls.skip(p)
			}
			return nil
		}
		r := record{path: p, first: true}
		r.size, err = statAudio(p)
		return ls.add([]byte(p), r, err)
	})
	if err := ls.end(err, "librispeech", root, "<speaker>/<chapter>/<id>.flac"); err != nil {
		return nil, err
	}
	ls.decoder = func(context.Context) func([]byte, *record) sample.Sample {
		return ls.run(root, paths{}, inputfile.ReadFile) // a named pipe is refused, not waited on
	}
	return ls, nil
}

// run returns the decoder of one run, for clips under root named by paths of kind k, reading
// transcripts with read. It keeps the transcript of the chapter being read (clips come in
// path order, so a chapter's clips are together; one seen again is read again).
func (ls *LibriSpeech) run(root string, k paths, read func(string) ([]byte, error)) func([]byte, *record) sample.Sample {
	var (
		transPath string
		trans     map[string]string
		transErr  error
	)
	return func(_ []byte, r *record) sample.Sample {
		p := r.path
		s := sample.Sample{Origin: p, InputBytes: r.size}
		s.Key = k.rel(root, p)
		chapterDir := k.dir(p)
		chapter, speaker := k.base(chapterDir), k.base(k.dir(chapterDir))
		tp := k.join(chapterDir, speaker+"-"+chapter+".trans.txt")
		if tp != transPath {
			transPath = tp
			trans, transErr = readTranscript(tp, read)
		}
		name := k.base(p)
		id := strings.TrimSuffix(name, filepath.Ext(name))
		spk, err1 := strconv.ParseInt(speaker, 10, 64)
		chp, err2 := strconv.ParseInt(chapter, 10, 64)
		text, ok := trans[id]
		switch {
		case transErr != nil:
			s.Err = fmt.Errorf("%s: %w", p, transErr)
		case err1 != nil || err2 != nil:
			s.Err = fmt.Errorf("%s: %w: speaker/chapter folders %q/%q are not numbers", p, ErrTranscript, speaker, chapter)
		case !ok:
			s.Err = fmt.Errorf("%s: %w: no line for %q in %s", p, ErrTranscript, id, tp)
		default:
			s.Values = []sample.Column{
				{Name: ColAudio, Value: fileValue(p)},
				{Name: ColChapter, Value: sample.Value{Kind: sample.KindInt, Int: chp}},
				{Name: ColSpeaker, Value: sample.Value{Kind: sample.KindInt, Int: spk}},
				{Name: ColText, Value: sample.Value{Kind: sample.KindString, Bytes: []byte(text)}},
			}
		}
		return s
	}
}

// readTranscript reads a .trans.txt file (with read) into id -> text.
func readTranscript(path string, read func(string) ([]byte, error)) (map[string]string, error) {
	b, err := read(path)
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
