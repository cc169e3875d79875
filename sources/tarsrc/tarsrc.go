// Package tarsrc reads WebDataset tar shards (.tar, .tar.gz/.tgz, .tar.zst) as a source of
// samples: members that share a key (their path up to the first dot of the base name) form
// one sample whose columns are named by the members' extensions. Shards are read in
// parallel, yet samples come out in shard order, then member order.
//
// Grouping follows WebDataset: only regular files count (directories, links and devices are
// skipped; pax and GNU long names are honoured by archive/tar, and names that are not UTF-8
// are kept as bytes); a member whose base name has no dot, or starts with one, is skipped as
// WebDataset does; the members of a sample must be adjacent. A key seen again after another
// key, or an extension seen twice in one sample, makes that sample an error (Sample.Err) for
// the pipeline's policy. Keys are checked within a shard, not across shards, with bounded
// memory: a shard whose keys increase (as WebDataset writers emit them) is checked exactly
// however long it is; in a shard whose keys are out of order, a key that comes back is
// caught when it comes back within KeyWindow samples (and may be missed beyond twice that).
//
// A broken tar stream (a garbage tar header, a truncated uncompressed archive) ends its shard:
// the samples before it are emitted, then one error sample naming the shard and the offset in
// the tar; the rest of that shard cannot be read. A compressed shard is different: gzip and
// zstd verify their data only with a checksum at the end of the stream, after its samples have
// been emitted, so any decompressor error (a checksum mismatch, corrupt or truncated
// compressed data, bytes after the last member that do not start a new one) stops the run
// with an error wrapping ErrCorrupt that names the shard: samples already read from it cannot
// be trusted, and a failed run keeps none of them. Compression is detected from the first
// bytes, not the file name. Gzip uses klauspost/compress/gzip, one stream per shard: with
// several shards decoded at once it costs the same CPU per byte as pgzip without pgzip's extra
// goroutines and read-ahead buffers.
//
// Memory: a member is read only when Options.Columns wants its extension (others are skipped
// without being held, whatever their size), and only up to Options.MaxMemberSize, checked
// against the tar header before reading. Each shard read at once holds at most
// Options.ReadAheadBytes of samples ahead of the consumer, plus the sample being built: about
// Parallel × (ReadAheadBytes + 1.5 × the largest sample) in all (a member of unknown true size
// grows its buffer by doubling, so one of size S may briefly take 1.5 S).
package tarsrc

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/errgroup"

	"golang.org/x/sync/semaphore"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// Errors. Each is wrapped with the shard and the member or offset it concerns.
var (
	// ErrRange means a Range outside the source's shards.
	ErrRange = errors.New("tarsrc: shard range out of bounds")
	// ErrDuplicateKey means a key appears in two non-adjacent runs of members in one shard.
	ErrDuplicateKey = errors.New("tarsrc: duplicate sample key")
	// ErrDuplicateField means one sample holds two members with the same extension.
	ErrDuplicateField = errors.New("tarsrc: duplicate extension in sample")
	// ErrMemberTooLarge means a member is larger than Options.MaxMemberSize.
	ErrMemberTooLarge = errors.New("tarsrc: member too large")
	// ErrShard means the shard's tar stream is broken (a garbage tar header, a truncated
	// archive): the rest of that shard cannot be read. It is carried by an error sample.
	ErrShard = errors.New("tarsrc: unreadable shard")
	// ErrCorrupt means a compressed shard failed its decompressor's checks (a checksum
	// mismatch, corrupt or truncated data): Run stops with it, since samples already emitted
	// from the shard were never verified.
	ErrCorrupt = errors.New("tarsrc: corrupt compressed shard")
	// ErrOptions means an Options value out of its range.
	ErrOptions = errors.New("tarsrc: invalid option")
)

// Bounds of the options.
const (
	// DefaultMaxMemberSize is the default bound on one member's payload: 1 GiB.
	DefaultMaxMemberSize = 1 << 30
	// MaxMemberSizeLimit is the largest MaxMemberSize accepted: the largest MLDF payload
	// (its size is a u32).
	MaxMemberSizeLimit = 1<<32 - 1
	// DefaultReadAheadBytes is the default bound on the bytes of samples one shard holds
	// ready ahead of the consumer: 64 MiB.
	DefaultReadAheadBytes = 64 << 20
	// KeyWindow is how many recent keys of a shard are remembered (as 64-bit hashes, in two
	// generations) to catch a key that comes back in a shard whose keys are not in order.
	KeyWindow = 1 << 15
)

// ColumnKey is the column holding a sample's key (the member path up to the first dot of its
// base name, as WebDataset's __key__), for a text field (from: __key__); a recipe adds it to
// the samples that need it. The other columns are the members' extensions.
const ColumnKey = "__key__"

// KeyColumns returns the columns a tar source supplies besides member extensions.
func KeyColumns() []string { return []string{ColumnKey} }

// Options tune a Source. The zero value selects the defaults.
type Options struct {
	// Parallel is how many shards are read at once, the one being emitted included
	// (default GOMAXPROCS, at least 2).
	Parallel int
	// ReadAhead is how many samples each shard may hold ready ahead of the consumer
	// (default 32).
	ReadAhead int
	// ReadAheadBytes bounds the member bytes of the samples each shard holds ready ahead of
	// the consumer (default DefaultReadAheadBytes). A sample larger than the bound is still
	// read, alone.
	ReadAheadBytes int64
	// MaxMemberSize bounds the payload of one member that is read, in bytes: 1 to
	// MaxMemberSizeLimit, 0 meaning DefaultMaxMemberSize. It is checked against the tar
	// header before reading; a larger member makes its sample an error (ErrMemberTooLarge)
	// and is skipped unread. Members that Columns does not want are skipped whatever their
	// size.
	MaxMemberSize int64
	// Columns, when not nil, lists the extensions (column names) to read. A member with
	// another extension is skipped without being read into memory: its sample gets a column
	// of that name with a KindNone value whose Name is the member's name, so that a caller
	// can still see (and reject) members nobody reads. An entry "a|b" names alternatives and
	// wants both. nil reads every member.
	Columns []string
	// Store reads the shards named by URL (s3://, gs://, az://, azblob://) and expands
	// patterns against bucket listings; nil: a client of the Source's own.
	Store *objstore.Client
	// Prefetch is how many shards in a bucket are opened (stat'ed, first blocks fetched)
	// ahead of the shards being read; 0 means sources.DefaultPrefetch.
	Prefetch int
}

// Source is a sources.Source over tar shards.
type Source struct {
	inputs []sources.Input
	opts   Options
	want   map[string]bool // nil: read every member
	// skipped counts the members of a Run that no sample holds (see SkippedFiles).
	skipped *sources.Skipped
	// base is the index of inputs[0] in the source resumed (0 unless resumed), and from the
	// place in inputs[0] a resumed source starts at.
	base int
	from position
}

var (
	_ sources.Sharder     = (*Source)(nil)
	_ sources.SkipCounter = (*Source)(nil)
)

// New expands the patterns and returns a Source over the shards, in order. Patterns are
// local paths or URLs, expanded by objstore's Client.Expand: brace ranges
// (data-{000..127}.tar, {a,b}, {1..9..2}, nested), then globs (* ? [) matched against the
// directory or the bucket listing, sorted. A glob that matches nothing, a missing shard,
// bucket or directory, denied access, or a shard named twice is one error naming it
// (wrapping objstore.ErrPattern, ErrNotFound, ErrDenied...), before any shard is read.
func New(patterns []string, opts Options) (*Source, error) {
	return NewContext(context.Background(), patterns, opts)
}

// NewContext is New with a context for the expansion (bucket listings and HEADs).
func NewContext(ctx context.Context, patterns []string, opts Options) (*Source, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("%w: no shard pattern", objstore.ErrPattern)
	}
	if opts.Store == nil {
		opts.Store = objstore.New()
	}
	found, err := opts.Store.Expand(ctx, patterns)
	if err != nil {
		return nil, fmt.Errorf("tarsrc: %w", err)
	}
	if opts.Parallel <= 0 {
		opts.Parallel = max(2, runtime.GOMAXPROCS(0))
	}
	if opts.ReadAhead <= 0 {
		opts.ReadAhead = 32
	}
	if opts.ReadAheadBytes <= 0 {
		opts.ReadAheadBytes = DefaultReadAheadBytes
	}
	switch {
	case opts.MaxMemberSize == 0:
		opts.MaxMemberSize = DefaultMaxMemberSize
	case opts.MaxMemberSize < 0 || opts.MaxMemberSize > MaxMemberSizeLimit:
		return nil, fmt.Errorf("%w: max_member_size %d (want 1..%d bytes)", ErrOptions, opts.MaxMemberSize, int64(MaxMemberSizeLimit))
	}
	s := &Source{opts: opts, skipped: &sources.Skipped{}}
	if opts.Columns != nil {
		s.want = make(map[string]bool)
		for _, c := range opts.Columns {
			s.want[c] = true
			for _, alt := range strings.Split(c, "|") {
				s.want[alt] = true
			}
		}
	}
	for _, a := range found {
		s.inputs = append(s.inputs, sources.Input{Path: a.URL, Size: a.Size})
	}
	return s, nil
}

// Len returns -1: the number of samples is known only after reading the shards.
func (s *Source) Len() int64 { return -1 }

// Inputs implements sources.Lister: the shards in order with their sizes on disk.
func (s *Source) Inputs() sources.InputList { return sources.Inputs(s.inputs) }

// SkippedFiles implements sources.SkipCounter: the members of the last Run (or of the one
// running) that belong to no sample, by extension: regular members whose base name has no
// dot or starts with one (WebDataset skips them too: counted under "" and their extension)
// and links and special files (counted under "(link)" and "(special)"). Directories are not
// counted.
func (s *Source) SkippedFiles() map[string]int64 { return s.skipped.Counts() }

// Range implements sources.Sharder: a source over shards lo..hi-1 of s (a contiguous slice
// of Inputs, for sharded runs), with the same options. Its samples are indexed from 0.
func (s *Source) Range(lo, hi int) (sources.Source, error) {
	if lo < 0 || hi < lo || hi > len(s.inputs) {
		return nil, fmt.Errorf("%w: [%d, %d) of %d shards", ErrRange, lo, hi, len(s.inputs))
	}
	return &Source{inputs: s.inputs[lo:hi:hi], opts: s.opts, want: s.want, skipped: &sources.Skipped{}, base: s.base + lo}, nil
}

// Run emits every sample of every shard: shard order, then member order, whatever the
// parallelism. Per-sample problems (duplicate keys or extensions, oversized members, a broken
// tar stream that ends a shard early) arrive as Sample.Err; a shard that cannot be opened, or
// whose compressed stream fails its checks (ErrCorrupt), stops the run. A shard may be a
// named pipe: cancelling ctx ends the wait for its writer.
func (s *Source) Run(ctx context.Context, emit func(sample.Sample) error) error {
	return s.run(ctx, func(smp sample.Sample, _ func() []byte) error { return emit(smp) })
}

// run is Run, emit being also given the token of the place after each sample.
func (s *Source) run(ctx context.Context, emit func(sample.Sample, func() []byte) error) error {
	s.skipped.Reset()
	if len(s.inputs) == 0 {
		return ctx.Err()
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(runCtx)
	// slots bounds the shards started but not yet fully emitted. Shards start in order and a
	// slot is freed only when the consumer finishes a shard, so the shard being consumed has
	// always been started; order hands the consumer each shard's channel, in shard order.
	//
	// Each shard also has its own byte budget (ReadAheadBytes) for the samples it holds ready:
	// the reader acquires a sample's bytes before handing it over and the consumer releases
	// them once emitted. Budgets are per shard, so a shard waiting for the consumer never holds
	// back the shard being consumed.
	//
	// The streams are opened in shard order by this goroutine (shards in buckets ahead of
	// their turn, see sources.Streams) and each handed to its shard's reader.
	slots := make(chan struct{}, s.opts.Parallel)
	order := make(chan *shardQueue, s.opts.Parallel)
	names := make([]string, len(s.inputs))
	for i, in := range s.inputs {
		names[i] = in.Path
	}
	// A resumed source seeks into its first shard (an uncompressed one) rather than
	// streaming it from its start.
	seek := s.from.Off > 0
	streamed := names
	if seek {
		streamed = names[1:]
	}
	streams := sources.OpenStreams(gctx, s.opts.Store, streamed, s.opts.Prefetch)
	defer streams.Close()
	g.Go(func() error {
		defer close(order)
		for i := range s.inputs {
			select {
			case slots <- struct{}{}:
			case <-gctx.Done():
				return nil
			}
			var f io.ReadCloser
			var name string
			var err error
			if i == 0 && seek {
				f, name, err = s.openAt(gctx, names[0], s.from.Off)
			} else {
				f, name, err = streams.Next()
			}
			if err != nil {
				return fmt.Errorf("tarsrc: %w", err)
			}
			var st walkStart
			if i == 0 {
				st = walkStart{drop: s.from.N}
				if seek {
					st = walkStart{off: s.from.Off, n: s.from.N, max: s.from.Max, blind: true}
				}
			}
			q := &shardQueue{ch: make(chan item, s.opts.ReadAhead), budget: semaphore.NewWeighted(s.opts.ReadAheadBytes), path: name}
			g.Go(func() error {
				defer close(q.ch)
				defer f.Close()
				return s.readShard(gctx, name, f, q, st)
			})
			select {
			case order <- q:
			case <-gctx.Done():
				return nil
			}
		}
		return nil
	})

	var emitErr error
	var index int64
	// The place after the sample being emitted, made into a token only when asked for.
	var shard int
	var at place
	after := func() []byte { return s.token(shard, at) }
consume:
	for {
		var q *shardQueue
		select {
		case c, ok := <-order:
			if !ok {
				break consume
			}
			q = c
		case <-gctx.Done():
			break consume
		}
		for {
			select {
			case it, ok := <-q.ch:
				if !ok {
					<-slots
					shard++
					continue consume
				}
				smp := it.smp
				smp.Index = index
				index++
				w := s.weight(smp)
				at = it.at
				err := emit(smp, after)
				q.budget.Release(w)
				if err != nil {
					emitErr = err
					break consume
				}
			case <-gctx.Done():
				break consume
			}
		}
	}
	cancel()
	werr := g.Wait()
	switch {
	case emitErr != nil:
		return emitErr
	case werr != nil && !errors.Is(werr, context.Canceled):
		return werr
	}
	return ctx.Err()
}

// shardQueue hands one shard's samples to the consumer, with the shard's read-ahead budget.
type shardQueue struct {
	ch     chan item
	budget *semaphore.Weighted
	path   string
}

// item is a sample and the place after it in its shard.
type item struct {
	smp sample.Sample
	at  place
}

// weight is what a sample costs of its shard's read-ahead budget: its member bytes, at most
// the whole budget (a larger sample goes alone).
func (s *Source) weight(smp sample.Sample) int64 {
	var n int64
	for _, c := range smp.Values {
		n += int64(len(c.Value.Bytes))
	}
	return min(n, s.opts.ReadAheadBytes)
}

// countingReader counts the bytes read through it: the offset in the (decompressed) tar.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// shardReader holds one shard's walk state.
type shardReader struct {
	path string
	send func(sample.Sample, place) error
	max  int64
	cur  *sample.Sample
	keys keySet
	n    int64 // the shard's samples so far, the pending one not included
	drop int64 // the first samples of the shard not sent (a resumed run's)
	seek bool  // the shard is not compressed: a place in it is a byte offset
}

// keySet finds the keys of a shard that come back after other keys, in bounded memory. A key
// greater than every earlier key is new; only one that is not (keys out of order) is looked
// up among the hashes of the last KeyWindow to 2 × KeyWindow keys. So a shard whose keys
// increase is checked exactly at any length, and memory stays under about 2 MB a shard.
type keySet struct {
	window int // keys per generation: KeyWindow
	max    string
	any    bool
	// unordered is set once a key came that is not greater than every earlier one; blind
	// while the keys before a resumed walk's place are not in the maps yet (see walkStart).
	unordered, blind bool
	seed             maphash.Seed
	cur, old         map[uint64]struct{}
}

// repeated records key and reports whether it was seen before.
func (k *keySet) repeated(key string) bool {
	if k.cur == nil {
		k.seed, k.cur = maphash.MakeSeed(), make(map[uint64]struct{})
	}
	h := maphash.String(k.seed, key)
	dup := false
	if !k.any || key > k.max {
		k.max, k.any = strings.Clone(key), true
	} else {
		k.unordered = true
		_, inCur := k.cur[h]
		_, inOld := k.old[h]
		dup = inCur || inOld
	}
	k.cur[h] = struct{}{}
	if len(k.cur) >= k.window {
		k.old, k.cur = k.cur, make(map[uint64]struct{}, k.window)
	}
	return dup
}

// flush sends the pending sample; next is the offset of the header after it (-1: the
// shard ends with it).
func (sr *shardReader) flush(next int64) error {
	if sr.cur == nil {
		return nil
	}
	s := *sr.cur
	sr.cur = nil
	return sr.sendAt(s, next)
}

// sendAt sends a sample of the shard (unless it is one of the first drop), with its place.
func (sr *shardReader) sendAt(s sample.Sample, next int64) error {
	sr.n++
	if sr.n <= sr.drop {
		return nil
	}
	at := place{next: next, n: sr.n}
	if next >= 0 && sr.seek && !sr.keys.unordered && len(sr.keys.max) <= maxTokenKey {
		at.max = sr.keys.max
	} else if next >= 0 {
		at.next = 0 // the shard is re-read from its start, its first n samples dropped
	}
	return sr.send(s, at)
}

// broken ends the shard with an error sample naming the offset. When the member being read
// is the one cut short, the pending sample is incomplete and carries the error itself;
// otherwise the pending sample is emitted first, as it stands.
func (sr *shardReader) broken(off int64, what string, err error, pendingCut bool) error {
	e := fmt.Errorf("%w: %s: %s at tar offset %d: %w; the rest of the shard is not read",
		ErrShard, sr.path, what, off, err)
	if pendingCut && sr.cur != nil {
		if sr.cur.Err == nil {
			sr.cur.Err = e
		}
		return sr.flush(-1)
	}
	sr.seek = false // a place before the error sample: the shard is re-read
	if ferr := sr.flush(off); ferr != nil {
		return ferr
	}
	return sr.sendAt(sample.Sample{Origin: fmt.Sprintf("%s@%d", sr.path, off), Err: e}, -1)
}

// readShard walks the stream f of one shard from st and sends its samples to q.
func (s *Source) readShard(ctx context.Context, path string, f io.Reader, q *shardQueue, st walkStart) error {
	send := func(smp sample.Sample, at place) error {
		w := s.weight(smp)
		if err := q.budget.Acquire(ctx, w); err != nil {
			return err
		}
		select {
		case q.ch <- item{smp, at}:
			return nil
		case <-ctx.Done():
			q.budget.Release(w)
			return ctx.Err()
		}
	}
	if st.blind {
		st.replay = func(upto int64) (keySet, error) { return s.replayKeys(ctx, path, upto) }
	}
	return walkFrom(ctx, path, f, s.opts.MaxMemberSize, s.want, s.skipped, st, send)
}

// decompressed reads a decompressor and remembers its first error other than io.EOF, so a
// tar error caused by the compressed stream is told apart from a broken tar.
type decompressed struct {
	r    io.Reader
	kind string // "gzip" or "zstd"
	err  error
}

func (d *decompressed) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF && d.err == nil {
		d.err = err
	}
	return n, err
}

// corrupt is the run-stopping error for a compressed shard whose decompressor failed at
// decompressed offset off.
func corrupt(path string, d *decompressed, off int64) error {
	return fmt.Errorf("%w: %s: %s stream fails at tar offset %d: %w; the samples already read from this shard are not verified, so the run stops (re-create or remove the shard)",
		ErrCorrupt, path, d.kind, off, d.err)
}

// walk reads one shard stream (plain, gzip or zstd, told apart by magic bytes) and sends its
// samples in member order. want, when not nil, names the extensions to read; other members
// are skipped unread. It returns an error wrapping ErrCorrupt when a decompressor fails.
func walk(ctx context.Context, path string, f io.Reader, maxMember int64, want map[string]bool, skipped *sources.Skipped, send func(sample.Sample) error) error {
	return walkFrom(ctx, path, f, maxMember, want, skipped, walkStart{}, func(s sample.Sample, _ place) error { return send(s) })
}

// walkStart is where a walk starts in its shard: at the start, dropping the first drop
// samples; or, f being the shard's bytes from offset off on (an uncompressed shard whose keys
// so far were in order, max the greatest), after its first n samples. Such a walk does not
// know the keys before off (blind): the first key not greater than max, which the walk over
// the whole shard would look up among the recent keys, has replay rebuild them from the
// shard's headers up to the offset given.
type walkStart struct {
	off, n, drop int64
	max          string
	blind        bool
	replay       func(upto int64) (keySet, error)
}

// walkFrom is walk from st, each sample sent with the place after it.
func walkFrom(ctx context.Context, path string, f io.Reader, maxMember int64, want map[string]bool, skipped *sources.Skipped, st walkStart, send func(sample.Sample, place) error) error {
	sr := &shardReader{path: path, send: send, max: maxMember, keys: keySet{window: KeyWindow}, n: st.n, drop: st.drop, seek: true}
	if st.blind {
		sr.keys.max, sr.keys.any, sr.keys.blind = st.max, true, true
	}
	br := bufio.NewReaderSize(f, 512<<10)
	var r io.Reader = br
	var dec *decompressed
	magic, _ := br.Peek(4)
	if st.off > 0 {
		magic = nil // the middle of an uncompressed tar
	}
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		dec = &decompressed{kind: "gzip"}
		zr, err := gzip.NewReader(br)
		if err != nil {
			dec.err = err
			return corrupt(path, dec, 0)
		}
		defer zr.Close()
		dec.r = zr
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		dec = &decompressed{kind: "zstd"}
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false))
		if err != nil {
			dec.err = err
			return corrupt(path, dec, 0)
		}
		defer zr.Close()
		dec.r = zr
	}
	if dec != nil {
		r = dec
		sr.seek = false
	}
	cr := &countingReader{r: r, n: st.off}
	tr := tar.NewReader(cr)
	next := st.off // where the next header is expected
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			if dec != nil {
				// Read the compressed stream to its end so its checksum is verified before
				// the last sample goes out.
				if _, err := io.Copy(io.Discard, r); err != nil || dec.err != nil {
					return corrupt(path, dec, cr.n)
				}
			}
			return sr.flush(-1)
		}
		if err != nil {
			if dec != nil && dec.err != nil {
				return corrupt(path, dec, cr.n)
			}
			return sr.broken(next, "tar header", err, false)
		}
		dataStart, headerStart := cr.n, next
		next = dataStart + (hdr.Size+511)&^511
		switch hdr.Typeflag {
		case tar.TypeReg:
		case tar.TypeDir:
			continue
		case tar.TypeSymlink, tar.TypeLink:
			skipped.AddKind("(link)")
			continue
		default:
			skipped.AddKind("(special)") // devices, FIFOs; pax and GNU name headers are already merged
			continue
		}
		key, ext, ok := SplitKey(hdr.Name)
		if !ok {
			skipped.Add(hdr.Name) // no extension: WebDataset drops such members too
			continue
		}
		if sr.cur != nil && sr.cur.Key != key {
			if err := sr.flush(headerStart); err != nil {
				return err
			}
		}
		if sr.cur == nil && sr.keys.blind && key <= sr.keys.max {
			ks, err := st.replay(headerStart)
			if err != nil {
				return err
			}
			sr.keys = ks
		}
		if sr.cur == nil {
			// Origin is for messages: a key of up to a MiB (a pax name) is shortened there;
			// Key keeps it whole.
			sr.cur = &sample.Sample{Key: key, Origin: path + ":" + quote.S(key), Values: make([]sample.Column, 0, 4)}
			if sr.keys.repeated(key) {
				sr.cur.Err = fmt.Errorf("%w: %s: key %s appears again at member %s (tar offset %d), apart from its first run",
					ErrDuplicateKey, path, quote.Q(key), quote.Q(hdr.Name), dataStart-512)
			}
		}
		cur := sr.cur
		if cur.Err != nil {
			continue
		}
		if cur.Has(ext) {
			cur.Err = fmt.Errorf("%w: %s: key %s has two %s members (the second is %s at tar offset %d)",
				ErrDuplicateField, path, quote.Q(key), quote.Q(ext), quote.Q(hdr.Name), dataStart-512)
			continue
		}
		if want != nil && !want[ext] {
			// Nobody reads it: note that it was there, and let tr.Next skip its payload.
			cur.Values = append(cur.Values, sample.Column{Name: ext, Value: sample.Value{Kind: sample.KindNone, Name: hdr.Name}})
			cur.InputBytes += hdr.Size
			continue
		}
		if hdr.Size > sr.max {
			cur.Err = fmt.Errorf("%w: %s: member %s is %d bytes, the limit (max_member_size) is %d",
				ErrMemberTooLarge, path, quote.Q(hdr.Name), hdr.Size, sr.max)
			continue
		}
		data, err := readMember(tr, hdr.Size)
		if err != nil {
			if dec != nil && dec.err != nil {
				return corrupt(path, dec, cr.n)
			}
			return sr.broken(dataStart, "member "+quote.Q(hdr.Name), err, true)
		}
		cur.Values = append(cur.Values, sample.Column{Name: ext, Value: sample.Value{Kind: sample.KindBytes, Bytes: data, Name: hdr.Name}})
		cur.InputBytes += hdr.Size
	}
}

// readMember reads a member's payload. Small members are read into an exact buffer; large
// ones grow with the data actually present, so a lying size in a truncated stream does not
// allocate its claim up front.
func readMember(r io.Reader, size int64) ([]byte, error) {
	const exact = 4 << 20
	if size <= exact {
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return b, nil
	}
	var buf bytes.Buffer
	buf.Grow(exact)
	n, err := io.Copy(&buf, io.LimitReader(r, size))
	if err != nil {
		return nil, err
	}
	if n != size {
		return nil, io.ErrUnexpectedEOF
	}
	return buf.Bytes(), nil
}

// SplitKey splits a member name the WebDataset way: the key is the path up to the first dot
// of the base name (directory included), the extension is the rest, lower-cased. ok is false
// when the base name has no dot or starts with one (WebDataset skips such members).
func SplitKey(name string) (key, ext string, ok bool) {
	slash := strings.LastIndexByte(name, '/')
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot <= 0 {
		return "", "", false
	}
	dot += slash + 1
	return name[:dot], lower(name[dot+1:]), true
}

// lower lower-cases s; names that are not UTF-8 are lower-cased in ASCII only, so their bytes
// are kept.
func lower(s string) string {
	if utf8.ValidString(s) {
		return strings.ToLower(s)
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// DefaultFieldKind returns the field kind the default recipe gives a column named by
// extension ext: "image" (jpg, jpeg, png, webp), "int" (cls, label), "text" (txt), "json",
// "audio" (wav, flac), "ndarray" (npy), else "bytes". For a multi-part extension such as
// "seg.png" the last part decides.
func DefaultFieldKind(ext string) string {
	ext = strings.ToLower(ext)
	if i := strings.LastIndexByte(ext, '.'); i >= 0 {
		ext = ext[i+1:]
	}
	switch ext {
	case "jpg", "jpeg", "png", "webp":
		return "image"
	case "cls", "label":
		return "int"
	case "txt":
		return "text"
	case "json":
		return "json"
	case "wav", "flac":
		return "audio"
	case "npy":
		return "ndarray"
	}
	return "bytes"
}
