package audio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
)

// Manifest keys with a meaning of their own.
const (
	KeyAudioFilepath = "audio_filepath"
	KeyOffset        = "offset"
	KeyDuration      = "duration"
)

// Manifest is a NeMo-style JSONL manifest source: one JSON object per line with
// "audio_filepath" (relative to the manifest's folder unless absolute or a bucket URL), and
// optionally "text", "duration" and "offset". It emits "audio" (a file value; with "offset"
// present, Offset and Duration select the segment [offset, offset+duration)) and every other
// key as a column of its own name: integral numbers as KindInt, other numbers as KindFloat,
// strings as KindString, anything else as KindJSON. Empty lines are skipped; a bad line
// becomes a sample whose Err names the manifest and the line.
type Manifest struct {
	list
	path string
	dir  string // the manifest's folder: relative audio paths are joined to it
}

// manifestBatch is how many manifest lines are checked together: the clips they name in a
// bucket are statted statParallel at a time.
const (
	manifestBatch = 256
	statParallel  = 16
)

// OpenManifest reads and checks the whole manifest and stats every audio file it names. The
// lines are listed (on disk when the manifest is large) and parsed again by Run. A file named
// by nearby lines (the segments of one recording: within 16384 distinct files) is statted and
// counted once.
func OpenManifest(path string) (*Manifest, error) {
	return OpenManifestContext(context.Background(), path, Options{})
}

// OpenManifestContext is OpenManifest for a manifest on disk or in a bucket (path an s3://,
// gs://, az:// or azblob:// URL). The audio files a manifest names may be in a bucket too:
// "audio_filepath" a URL, or a relative path in a manifest that is in a bucket. Those clips
// are statted statParallel at a time when the manifest is opened and fetched o.Prefetch
// ahead by Run (the segments of one recording on consecutive lines share one fetch).
func OpenManifestContext(ctx context.Context, path string, o Options) (*Manifest, error) {
	// The clips are statted through the store (a local clip too) and, when one is in a
	// bucket, fetched through it.
	o.fill()
	m := &Manifest{path: path, dir: objstore.Dir(path)}
	obj, err := o.Store.OpenRegularStream(ctx, path) // a named pipe is refused, not waited on
	if err != nil {
		return nil, fmt.Errorf("audio manifest: %w", err)
	}
	defer obj.Close()
	var r io.Reader = obj
	st := manifestStat{ctx: ctx, opts: &o}
	m.startUnsorted()
	br := bufio.NewReaderSize(r, 1<<20)
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
			st.pending = append(st.pending, m.parseLine(line, lineNo))
			if len(st.pending) == manifestBatch {
				if err := m.addLines(&st); err != nil {
					m.b.Abort()
					return nil, fmt.Errorf("audio manifest %s: %w", path, err)
				}
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	if err := m.addLines(&st); err != nil {
		m.b.Abort()
		return nil, fmt.Errorf("audio manifest %s: %w", path, err)
	}
	if err := m.finish(); err != nil {
		return nil, fmt.Errorf("audio manifest %s: %w", path, err)
	}
	if m.Len() == 0 {
		return nil, fmt.Errorf("%w: manifest %s has no entries", ErrNoAudio, path)
	}
	if st.remote {
		m.setRemote(o)
	}
	m.decoder = func(context.Context) func([]byte, *record) sample.Sample { return m.decode }
	return m, nil
}

// manifestLine is one parsed line waiting in manifestStat.pending.
type manifestLine struct {
	r   record
	err error
}

// manifestStat is the state of listing a manifest: the lines waiting for their clips'
// sizes, the clips named recently, and the store (opened at the first URL).
type manifestStat struct {
	ctx     context.Context
	opts    *Options
	pending []manifestLine
	recent  recentFiles
	remote  bool                // a clip is in a bucket
	stats   map[string]clipStat // the stats of the batch's clips
}

// parseLine parses one manifest line for the listing.
func (m *Manifest) parseLine(line []byte, lineNo int) manifestLine {
	l := manifestLine{r: record{line: int64(lineNo), raw: line}}
	vals, err := parseManifestLine(line, m.dir)
	if err != nil {
		l.err = fmt.Errorf("%s:%d: %w", m.path, lineNo, err)
		return l
	}
	l.r.path = vals[ColAudio].Path
	return l
}

// addLines lists the pending lines in order: each clip not named recently is statted
// (statParallel at a time, through the store: a local file or an object alike) and counted
// as an input. A clip the store fetches (one in a bucket) makes the source fetch its clips.
func (m *Manifest) addLines(st *manifestStat) error {
	defer func() { st.pending = st.pending[:0] }()
	var names []string
	for _, l := range st.pending {
		if l.err == nil && !st.recent.has(l.r.path) && !slices.Contains(names, l.r.path) {
			names = append(names, l.r.path)
		}
	}
	if st.stats == nil {
		st.stats = map[string]clipStat{}
	}
	clear(st.stats)
	if len(names) > 0 {
		g, ctx := errgroup.WithContext(st.ctx)
		g.SetLimit(statParallel)
		got := make([]clipStat, len(names))
		for i, u := range names {
			g.Go(func() error {
				got[i].a, got[i].err = st.opts.Store.StatInput(ctx, u)
				return ctx.Err() // a missing clip is the sample's error, not the listing's
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for i, u := range names {
			st.stats[u] = got[i]
			st.remote = st.remote || got[i].err == nil && got[i].a.Fetch
		}
	}
	for _, l := range st.pending {
		if l.err != nil {
			if err := m.add(nil, l.r, l.err); err != nil {
				return err
			}
			continue
		}
		origin := fmt.Sprintf("%s:%d", m.path, l.r.line)
		p := l.r.path
		if !st.recent.has(p) {
			cs, ok := st.stats[p]
			if !ok { // it left recent since the batch was statted
				cs.a, cs.err = st.opts.Store.StatInput(st.ctx, p)
				st.remote = st.remote || cs.err == nil && cs.a.Fetch
			}
			err := cs.err
			var pe *fs.PathError
			if errors.As(err, &pe) { // the path is the manifest's: quoted short and escaped
				err = &fs.PathError{Op: pe.Op, Path: quote.Q(pe.Path), Err: pe.Err}
			}
			if err != nil {
				if err := m.add(nil, l.r, fmt.Errorf("%s: %w", origin, err)); err != nil {
					return err
				}
				continue
			}
			st.recent.add(p)
			l.r.size, l.r.first = cs.a.Size, true // a file shared by several segments counts once
		}
		if err := m.add(nil, l.r, nil); err != nil {
			return err
		}
	}
	return nil
}

// clipStat is the result of a clip's stat.
type clipStat struct {
	a   objstore.Attrs
	err error
}

// decode builds the sample of a listed line.
func (m *Manifest) decode(_ []byte, r *record) sample.Sample {
	origin := fmt.Sprintf("%s:%d", m.path, r.line)
	s := sample.Sample{Key: strconv.FormatInt(r.line, 10), Origin: origin, InputBytes: r.size}
	if r.err > 0 {
		return s
	}
	vals, err := parseManifestLine(r.raw, m.dir)
	if err != nil { // it parsed when listed: the list or the line changed
		s.Err = fmt.Errorf("%s: %w", origin, err)
		return s
	}
	s.Values = sample.ColumnsOf(vals)
	return s
}

// Path returns the manifest's path.
func (m *Manifest) Path() string { return m.path }

// parseManifestLine parses one line of a manifest in the folder dir (local or in a bucket).
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
	p, err := objstore.Ref(dir, rel)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrManifest, KeyAudioFilepath, err)
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

// Errors of clip paths in a manifest in a bucket: its clips are objects of its bucket
// (objstore.Ref's rules).
var (
	// errEscapes means a relative clip path in a manifest in a bucket climbs above the bucket.
	errEscapes = objstore.ErrEscapes
	// errOutsideBucket means a manifest in a bucket names a clip that is not in its bucket:
	// a local path (absolute, or a file:// URL), another bucket or store, or a URL of an
	// unknown scheme. Such a manifest never reaches the files of the machine converting it.
	errOutsideBucket = objstore.ErrOutsideBucket
)
