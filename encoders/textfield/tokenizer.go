package textfield

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"sort"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"

	"github.com/mldf/convert/encoders"
)

// vocabInfo is what the field needs to know of a vocabulary beyond its codec: the number of
// ids (largest id + 1, special tokens included) and the <|endoftext|> id.
type vocabInfo struct {
	size, eot uint32
}

// vocabs are the vocabularies compiled into tiktoken-go/tokenizer, with their sizes as in
// OpenAI's tiktoken.
var vocabs = map[string]vocabInfo{
	"r50k_base":   {size: 50257, eot: 50256},
	"p50k_base":   {size: 50281, eot: 50256},
	"cl100k_base": {size: 100277, eot: 100257},
	"o200k_base":  {size: 200019, eot: 199999},
}

// DefaultTokenizer is the vocabulary used when none is named.
const DefaultTokenizer = "cl100k_base"

// Tokenizers returns the names of the built-in vocabularies, sorted.
func Tokenizers() []string {
	names := make([]string, 0, len(vocabs))
	for n := range vocabs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Tokenizer is a BPE tokenizer with a built-in vocabulary. It is safe for concurrent use.
type Tokenizer struct {
	name  string
	info  vocabInfo
	codec tokenizer.Codec
	seed  maphash.Seed
	cache [cacheShards]cacheShard
	hot   sync.Pool // of *hotCache, per goroutine: the ids of frequent segments
	once  sync.Once
	vocab *bpeVocab // ranks for fastSegment, built on first use; nil when it does not apply
}

// NewTokenizer returns the built-in tokenizer name ("" means DefaultTokenizer).
func NewTokenizer(name string) (*Tokenizer, error) {
	if name == "" {
		name = DefaultTokenizer
	}
	info, ok := vocabs[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (built in: %v)", ErrTokenizer, name, Tokenizers())
	}
	c, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrTokenizer, name, err)
	}
	t := &Tokenizer{name: name, info: info, codec: c, seed: maphash.MakeSeed()}
	for i := range t.cache {
		t.cache[i].tab.seed = t.seed // the callers hash with t.seed
	}
	return t, nil
}

// Name returns the vocabulary name, as recorded in the field arguments.
func (t *Tokenizer) Name() string { return t.name }

// VocabSize returns the number of ids: every id is below it.
func (t *Tokenizer) VocabSize() uint32 { return t.info.size }

// EOT returns the id of <|endoftext|>.
func (t *Tokenizer) EOT() uint32 { return t.info.eot }

// Encode appends the token ids of the UTF-8 text to dst. Special-token text such as
// "<|endoftext|>" inside the text is tokenized as ordinary text (tiktoken's
// encode_ordinary), so a document cannot inject control tokens.
//
// The text is cut into segments at points where the vocabulary's pre-tokenizer always
// splits: before every space that follows a non-whitespace character. In the split
// patterns of r50k, p50k, cl100k and o200k a space can only start a pre-token or sit in a
// run of whitespace, so no pre-token spans such a point, and the pre-tokens on either side
// depend only on the text on their side (the one lookahead, `\s+(?!\S)`, cannot reach
// across a non-whitespace character). The ids of short segments (" word", " 16") are cached
// (a small cache per goroutine in front of a shared one, neither holding pointers for the
// garbage collector to scan); an uncached segment of the common form " word," is encoded
// here by byte-pair merges over the vocabulary's ranks (bpe.go), and the other uncached
// segments go to tiktoken-go together. This makes text several times faster to tokenize than
// passing it whole; the ids are the same (the tests and a fuzz target compare them).
//
// Encode checks that the tokens cover every byte of the text and returns ErrTokenLoss
// otherwise: tiktoken-go v0.10.0 silently drops U+007F (DEL), whose bit is missing from its
// generated pre-tokenizer, and such a text is rejected rather than stored without it.
func (t *Tokenizer) Encode(text []byte, dst []uint32) ([]uint32, error) {
	t.once.Do(func() { t.vocab = t.loadVocab() })
	hot, _ := t.hot.Get().(*hotCache)
	if hot == nil {
		hot = new(hotCache)
	}
	defer t.hot.Put(hot)
	var (
		err      error
		start    int   // start of the current segment
		runStart = -1  // start of the run of uncached segments, -1 when none
		cuts     []int // ends of the segments of the run
		scratch  []uint32
	)
	// flush tokenizes the pending run of segments, which come before text[start:].
	flush := func() error {
		if runStart >= 0 {
			if dst, err = t.encodeRun(text[runStart:start], runStart, cuts, dst); err != nil {
				return err
			}
			runStart, cuts = -1, cuts[:0]
		}
		return nil
	}
	// segment handles text[start:end]: cached ids are appended at once, a segment of the
	// common form is tokenized here; other segments gather into a run that goes to
	// tiktoken-go in one call (a call has a fixed cost).
	segment := func(end int) error {
		seg := text[start:end]
		if len(seg) > maxCached {
			if runStart < 0 {
				runStart = start
			}
			cuts = append(cuts, end)
			return nil
		}
		h := maphash.Bytes(t.seed, seg)
		e := &hot[h%hotEntries]
		if int(e.klen) == len(seg) && string(e.key[:e.klen]) == string(seg) {
			if err := flush(); err != nil {
				return err
			}
			dst = append(dst, e.ids[:e.n]...)
			return nil
		}
		var ok bool
		if scratch, ok = t.lookup(h, seg, scratch[:0]); ok {
			if err := flush(); err != nil {
				return err
			}
			e.put(seg, scratch)
			dst = append(dst, scratch...)
			return nil
		}
		if wordEnd, ok := fastForm(seg); ok && t.vocab != nil {
			if err := flush(); err != nil {
				return err
			}
			k := len(dst)
			dst = t.vocab.fastSegment(seg, wordEnd, dst)
			e.put(seg, dst[k:])
			t.store(h, seg, dst[k:])
			return nil
		}
		if runStart < 0 {
			runStart = start
		}
		cuts = append(cuts, end)
		return nil
	}
	for k := 1; k < len(text); k++ {
		i := bytes.IndexByte(text[k:], ' ')
		if i < 0 {
			break
		}
		k += i
		if !splitsAfter(text[:k]) {
			continue
		}
		if err := segment(k); err != nil {
			return dst, err
		}
		start = k
	}
	if start < len(text) {
		if err := segment(len(text)); err != nil {
			return dst, err
		}
	}
	if runStart >= 0 {
		return t.encodeRun(text[runStart:], runStart, cuts, dst)
	}
	return dst, nil
}

// hotEntries is the number of entries of a hotCache: 8192 of 64 bytes (512 KiB, about a
// core's L2 cache), which hold the segments making most of a text (on a Zipf-like corpus of
// English, the 4096 most frequent segments are about 70% of them).
const hotEntries = 8192

// hotEntry is a segment of at most hotKey bytes and its ids (at most hotIDs), in one cache
// line. klen 0 marks an empty entry (a segment is never empty).
type hotEntry struct {
	klen, n uint8
	key     [hotKey]byte
	ids     [hotIDs]uint32
}

const (
	hotKey = 30
	hotIDs = 8
)

// put stores seg's ids in e when they fit, replacing what e held.
func (e *hotEntry) put(seg []byte, ids []uint32) {
	if len(seg) > hotKey || len(ids) > hotIDs {
		return
	}
	e.klen, e.n = uint8(len(seg)), uint8(len(ids))
	copy(e.key[:], seg)
	copy(e.ids[:], ids)
}

// hotCache is a direct-mapped cache of segment ids used by one goroutine at a time (Encode
// takes one from the Tokenizer's pool): a hit costs a hash and one cache line, with no lock
// and no map. The shared sharded map behind it holds many more segments.
type hotCache [hotEntries]hotEntry

// encodeRun tokenizes run, the text of consecutive segments starting at offset base of the
// text and ending at the offsets cuts, appends the ids and caches each short segment's ids.
// Pre-tokens never cross a cut, so every token lies inside one segment.
func (t *Tokenizer) encodeRun(run []byte, base int, cuts []int, dst []uint32) ([]uint32, error) {
	var raw []uint
	var toks []string
	err := encoders.Guard("tiktoken-go", func() (err error) {
		raw, toks, err = t.codec.Encode(string(run))
		return err
	})
	if err != nil {
		return dst, fmt.Errorf("tokenizer %s: %w", t.name, err)
	}
	n := 0
	for _, tk := range toks {
		n += len(tk)
	}
	if n != len(run) {
		return dst, fmt.Errorf("%w: %s covers %d of %d bytes", ErrTokenLoss, t.name, n, len(run))
	}
	first := len(dst)
	for _, id := range raw {
		dst = append(dst, uint32(id))
	}
	// Cache the short segments: walk the tokens, cutting at the segment ends.
	off, ti, segStart, segTok := 0, 0, 0, 0
	for _, c := range cuts {
		end := c - base
		for ti < len(toks) && off < end {
			off += len(toks[ti])
			ti++
		}
		if off != end {
			return dst, nil // a token crosses a cut: cache nothing (never seen; ids stay right)
		}
		if seg := run[segStart:end]; len(seg) <= maxCached {
			t.store(maphash.Bytes(t.seed, seg), seg, dst[first+segTok:first+ti])
		}
		segStart, segTok = end, ti
	}
	return dst, nil
}

// lookup appends the ids of seg (hash h) from the shared cache to dst.
func (t *Tokenizer) lookup(h uint64, seg []byte, dst []uint32) ([]uint32, bool) {
	sh := &t.cache[h%cacheShards]
	sh.mu.RLock()
	ids, ok := sh.tab.get(h, seg)
	dst = append(dst, ids...)
	sh.mu.RUnlock()
	return dst, ok
}

// store caches the ids of seg, whose hash is h, in the shared cache.
func (t *Tokenizer) store(h uint64, seg []byte, ids []uint32) {
	sh := &t.cache[h%cacheShards]
	sh.mu.Lock()
	if sh.tab.len() < shardEntries {
		sh.tab.put(h, seg, ids)
	}
	sh.mu.Unlock()
}

// splitsAfter reports whether b ends with a character that is certainly not whitespace
// (printable ASCII other than space, or a letter, mark, digit, punctuation or symbol): the
// pre-token holding it cannot run on into a following space.
func splitsAfter(b []byte) bool {
	c := b[len(b)-1]
	if c < utf8.RuneSelf {
		return c > ' ' && c < 0x7f
	}
	r, _ := utf8.DecodeLastRune(b)
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.Is(unicode.M, r)
}

// maxCached is the longest segment whose ids are cached, and cacheShards × shardEntries the
// most entries kept in the shared cache (at most about 55 MB: 32 MB of slots, the ids, and
// the keys longer than a slot holds).
const (
	maxCached    = 32
	cacheShards  = 32
	shardEntries = 1 << 14
)

// cacheShard is one lock's part of the shared cache of segment ids.
type cacheShard struct {
	mu  sync.RWMutex
	tab idTable
}

// EncodeWhole returns the ids tiktoken-go gives for the whole text in one call, without the
// segmenting and the cache of Encode; it is the reference Encode is tested against.
func (t *Tokenizer) EncodeWhole(text []byte) ([]uint32, error) {
	raw, _, err := t.codec.Encode(string(text))
	if err != nil {
		return nil, err
	}
	ids := make([]uint32, len(raw))
	for i, id := range raw {
		ids[i] = uint32(id)
	}
	return ids, nil
}

// Decode returns the text of ids.
func (t *Tokenizer) Decode(ids []uint32) (string, error) {
	u := make([]uint, len(ids))
	for i, id := range ids {
		u[i] = uint(id)
	}
	return t.codec.Decode(u)
}
