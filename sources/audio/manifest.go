package audio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"unicode/utf8"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/sample"
)

// Manifest keys with a meaning of their own.
const (
	KeyAudioFilepath = "audio_filepath"
	KeyOffset        = "offset"
	KeyDuration      = "duration"
)

// Manifest is a NeMo-style JSONL manifest source: one JSON object per line with
// "audio_filepath" (relative to the manifest's folder unless absolute), and optionally "text",
// "duration" and "offset". It emits "audio" (a file value; with "offset" present, Offset and
// Duration select the segment [offset, offset+duration)) and every other key as a column of
// its own name: integral numbers as KindInt, other numbers as KindFloat, strings as KindString,
// anything else as KindJSON. Empty lines are skipped; a bad line becomes a sample whose Err
// names the manifest and the line.
type Manifest struct {
	list
	path string
}

// OpenManifest reads and checks the whole manifest and stats every audio file it names. The
// lines are listed (on disk when the manifest is large) and parsed again by Run. A file named
// by nearby lines (the segments of one recording: within 16384 distinct files) is statted and
// counted once.
func OpenManifest(path string) (*Manifest, error) {
	f, _, err := inputfile.OpenRegular(path) // a named pipe is refused, not waited on
	if err != nil {
		return nil, fmt.Errorf("audio manifest: %w", err)
	}
	defer f.Close()
	m := &Manifest{path: path}
	dir := filepath.Dir(path)
	var recent recentFiles
	m.startUnsorted()
	br := bufio.NewReaderSize(f, 1<<20)
	lineNo := 0
	for {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			m.b.Abort()
			return nil, fmt.Errorf("audio manifest %s: %w", path, rerr)
		}
		if len(line) == 0 && rerr == io.EOF {
			break
		}
		lineNo++
		line = bytes.TrimRight(bytes.TrimSuffix(line, []byte("\n")), "\r")
		if len(bytes.TrimSpace(line)) > 0 {
			if err := m.addLine(line, lineNo, dir, &recent); err != nil {
				m.b.Abort()
				return nil, fmt.Errorf("audio manifest %s: %w", path, err)
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	if err := m.finish(); err != nil {
		return nil, fmt.Errorf("audio manifest %s: %w", path, err)
	}
	if m.Len() == 0 {
		return nil, fmt.Errorf("%w: manifest %s has no entries", ErrNoAudio, path)
	}
	m.decoder = func() func([]byte, *record) sample.Sample { return m.decode }
	return m, nil
}

// addLine lists one manifest line: its number, the line itself (parsed again by Run), the
// audio file it names and the file's size, or the line's error.
func (m *Manifest) addLine(line []byte, lineNo int, dir string, recent *recentFiles) error {
	origin := fmt.Sprintf("%s:%d", m.path, lineNo)
	r := record{line: int64(lineNo), raw: line}
	vals, err := parseManifestLine(line, dir)
	if err != nil {
		return m.add(nil, r, fmt.Errorf("%s: %w", origin, err))
	}
	r.path = vals[ColAudio].Path
	if !recent.has(r.path) {
		size, err := statAudio(r.path)
		if err != nil {
			return m.add(nil, r, fmt.Errorf("%s: %w", origin, err))
		}
		recent.add(r.path)
		r.size, r.first = size, true // a file shared by several segments counts once
	}
	return m.add(nil, r, nil)
}

// decode builds the sample of a listed line.
func (m *Manifest) decode(_ []byte, r *record) sample.Sample {
	origin := fmt.Sprintf("%s:%d", m.path, r.line)
	s := sample.Sample{Key: strconv.FormatInt(r.line, 10), Origin: origin, InputBytes: r.size}
	if r.err > 0 {
		return s
	}
	vals, err := parseManifestLine(r.raw, filepath.Dir(m.path))
	if err != nil { // it parsed when listed: the list or the line changed
		s.Err = fmt.Errorf("%s: %w", origin, err)
		return s
	}
	s.Values = sample.ColumnsOf(vals)
	return s
}

// Path returns the manifest's path.
func (m *Manifest) Path() string { return m.path }

func parseManifestLine(line []byte, dir string) (map[string]sample.Value, error) {
	if !utf8.Valid(line) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrManifest)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrManifest, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrManifest)
	}
	raw, ok := obj[KeyAudioFilepath]
	if !ok {
		return nil, fmt.Errorf("%w: no %q key", ErrManifest, KeyAudioFilepath)
	}
	var rel string
	if err := json.Unmarshal(raw, &rel); err != nil || rel == "" {
		return nil, fmt.Errorf("%w: %q is not a non-empty string", ErrManifest, KeyAudioFilepath)
	}
	if err := inputfile.CheckPath(rel); err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrManifest, KeyAudioFilepath, err)
	}
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	audio := fileValue(p)
	vals := map[string]sample.Value{}
	var offset, duration float64
	_, hasOffset := obj[KeyOffset]
	for k, raw := range obj {
		if k == KeyAudioFilepath {
			continue
		}
		if k == ColAudio {
			return nil, fmt.Errorf("%w: key %s clashes with the audio column", ErrManifest, quote.Q(k))
		}
		v, err := jsonValue(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: key %s: %v", ErrManifest, quote.Q(k), err)
		}
		if k == KeyOffset || k == KeyDuration {
			x := v.Float
			if v.Kind == sample.KindInt {
				x = float64(v.Int)
			} else if v.Kind != sample.KindFloat {
				return nil, fmt.Errorf("%w: %q must be a number", ErrManifest, k)
			}
			if x < 0 || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: %q is %v", ErrManifest, k, x)
			}
			if k == KeyOffset {
				offset = x
			} else {
				duration = x
			}
			v = sample.Value{Kind: sample.KindFloat, Float: x}
		}
		vals[k] = v
	}
	if hasOffset {
		audio.Offset, audio.Duration = offset, duration
	}
	vals[ColAudio] = audio
	return vals, nil
}

// jsonValue turns one JSON value into a sample value.
func jsonValue(raw json.RawMessage) (sample.Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return sample.Value{}, fmt.Errorf("empty value")
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return sample.Value{}, err
		}
		return sample.Value{Kind: sample.KindString, Bytes: []byte(s)}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if !bytes.ContainsAny(raw, ".eE") {
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				return sample.Value{Kind: sample.KindInt, Int: n}, nil
			}
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return sample.Value{}, err
		}
		return sample.Value{Kind: sample.KindFloat, Float: f}, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return sample.Value{}, err
	}
	return sample.Value{Kind: sample.KindJSON, Bytes: buf.Bytes()}, nil
}
