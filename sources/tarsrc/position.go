package tarsrc

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// The source continues a run from a place in a shard (docs/RESUME.md). In an uncompressed
// shard the place is the byte offset of the next sample's first header: a resumed run seeks
// there and reads nothing before it. A gzip or zstd shard cannot be entered in the middle:
// it is read again from its start, the samples before the place dropped (at most one shard
// is read again). The same holds for a shard whose keys came out of order before the place
// (the duplicate-key check needs the keys before it) and for the place before the error
// sample of a broken shard.
var (
	_ sources.Resumer          = (*Source)(nil)
	_ sources.PositionedRunner = (*Source)(nil)
)

// maxTokenKey is the longest greatest key a token carries; past it (a pax name of a MiB)
// the shard is read again from its start instead.
const maxTokenKey = 4096

// place is the place after a sample in its shard: next is the offset of the header after it
// (-1: the shard ends there; 0: the shard is read again from its start), n the shard's
// samples up to it, max the greatest key so far (keys in order) where next > 0.
type place struct {
	next, n int64
	max     string
}

// position is the token of a place: the shard (its index among the inputs, and its name),
// the offset in its uncompressed tar to read from, the samples of the shard before the
// place, and the greatest key among them. Off 0 reads the shard from its start and drops
// its first N samples; Shard one past the last input is the end.
type position struct {
	Shard int    `json:"shard"`
	Path  string `json:"path,omitempty"`
	Off   int64  `json:"off,omitempty"`
	N     int64  `json:"n,omitempty"`
	Max   string `json:"max,omitempty"`
}

// token is the token of place at in the source's shard i.
func (s *Source) token(i int, at place) []byte {
	p := position{Shard: s.base + i, Path: s.inputs[i].Path, Off: at.next, N: at.n, Max: at.max}
	if at.next < 0 {
		p = position{Shard: s.base + i + 1}
		if i+1 < len(s.inputs) {
			p.Path = s.inputs[i+1].Path
		}
	}
	b, _ := json.Marshal(p)
	return b
}

// RunPositioned implements sources.PositionedRunner.
func (s *Source) RunPositioned(ctx context.Context, emit func(sample.Sample, func() []byte) error) error {
	return s.run(ctx, emit)
}

// Resume implements sources.Resumer: a source over the samples after the token's place, in
// its shard and the shards after it. samples is not needed. A token that does not name a
// shard of s with a place that can be in it is refused with sources.ErrPosition.
func (s *Source) Resume(_ int64, token []byte) (sources.Source, error) {
	var p position
	dec := json.NewDecoder(bytes.NewReader(token))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || dec.More() {
		return nil, fmt.Errorf("%w: %s", sources.ErrPosition, quote.Q(string(token)))
	}
	i := p.Shard - s.base
	switch {
	case i < 0 || i > len(s.inputs) || p.Off < 0 || p.N < 0 || len(p.Max) > maxTokenKey:
		return nil, fmt.Errorf("%w: shard %d, offset %d, sample %d of %d shards", sources.ErrPosition, p.Shard, p.Off, p.N, len(s.inputs))
	case i == len(s.inputs):
		if p.Path != "" || p.Off != 0 || p.N != 0 || p.Max != "" {
			return nil, fmt.Errorf("%w: a place after the last shard", sources.ErrPosition)
		}
	case p.Path != s.inputs[i].Path:
		return nil, fmt.Errorf("%w: shard %d is %s, not %s", sources.ErrPosition, p.Shard, quote.Q(s.inputs[i].Path), quote.Q(p.Path))
	case p.Off > 0 && (p.Off%512 != 0 || p.Off >= s.inputs[i].Size || p.N == 0 || p.Max == ""):
		return nil, fmt.Errorf("%w: offset %d in %s (%d bytes) after %d samples", sources.ErrPosition, p.Off, quote.Q(p.Path), s.inputs[i].Size, p.N)
	case p.Off == 0 && p.Max != "":
		return nil, fmt.Errorf("%w: a greatest key without an offset", sources.ErrPosition)
	}
	return &Source{inputs: s.inputs[i:], opts: s.opts, want: s.want, skipped: &sources.Skipped{}, base: p.Shard, from: p}, nil
}

// openAt opens shard name from byte off on.
func (s *Source) openAt(ctx context.Context, name string, off int64) (io.ReadCloser, string, error) {
	ra, err := s.opts.Store.OpenRegular(ctx, name)
	if err != nil {
		return nil, name, err
	}
	if off > ra.Size() {
		ra.Close()
		return nil, name, fmt.Errorf("%s: resume offset %d is past its end (%d bytes)", quote.Q(name), off, ra.Size())
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(ra, off, ra.Size()-off), ra}, name, nil
}

// replayKeys returns the key set of a walk over the uncompressed shard name up to the header
// at offset upto: the keys of its samples, from its headers (the members are skipped).
func (s *Source) replayKeys(ctx context.Context, name string, upto int64) (keySet, error) {
	ks := keySet{window: KeyWindow}
	f, err := s.opts.Store.OpenRegularStream(ctx, name)
	if err != nil {
		return ks, fmt.Errorf("tarsrc: reading the keys before the resumed place: %w", err)
	}
	defer f.Close()
	cr := &countingReader{r: bufio.NewReaderSize(f, 512<<10)}
	tr := tar.NewReader(cr)
	var next int64
	prev, have := "", false
	for next < upto {
		if err := ctx.Err(); err != nil {
			return ks, err
		}
		hdr, err := tr.Next()
		if err != nil {
			return ks, fmt.Errorf("tarsrc: %s: reading the keys before the resumed place (offset %d): %w", quote.Q(name), upto, err)
		}
		next = cr.n + (hdr.Size+511)&^511
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		key, _, ok := SplitKey(hdr.Name)
		if !ok || (have && key == prev) {
			continue
		}
		ks.repeated(key)
		prev, have = key, true
	}
	return ks, nil
}
