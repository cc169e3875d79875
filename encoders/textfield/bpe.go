package textfield

// The common case of a segment, " word" or " word," (a space, letters, at most one closing
// punctuation mark), is tokenized here instead of by tiktoken-go, whose
// pre-tokenizer (a backtracking regular expression over runes) and per-call allocations cost
// several microseconds a call. In the split patterns of r50k, p50k and cl100k such a segment
// is one or two pre-tokens: " word" (`[^\r\n\p{L}\p{N}]?\p{L}+`, ` ?\p{L}+`) and the mark
// (` ?[^\s\p{L}\p{N}]+`); each is then merged by byte-pair encoding with the vocabulary's
// ranks, exactly as tiktoken does (the lowest-ranked adjacent pair first, the leftmost of
// equal ranks). o200k splits words by case and keeps its own path. The tests and a fuzz
// target compare the ids with tiktoken-go's on whole texts.

import (
	"hash/maphash"
	"math"
	"unicode"
	"unicode/utf8"
)

// bpeVocab is a vocabulary's ranks (the rank of a token is its id), rebuilt from the codec
// by decoding every id.
type bpeVocab struct {
	seed  maphash.Seed
	ranks idTable     // token bytes → rank
	bytes [256]uint32 // the id of each single byte (every byte is a token)
	pairs []uint32    // the rank of each two-byte token by its bytes (a<<8 | b), none when not one
}

// rank returns the rank of the token b, if b is one.
func (v *bpeVocab) rank(b []byte) (uint32, bool) {
	r, ok := v.ranks.get(maphash.Bytes(v.seed, b), b)
	if !ok {
		return 0, false
	}
	return r[0], true
}

// maxFastSegment is the longest segment tokenized by fastSegment.
const maxFastSegment = 64

// none is the rank of a pair that is not a token.
const none = uint32(math.MaxUint32)

// fastVocabs are the vocabularies whose pre-tokenizer fastSegment follows.
var fastVocabs = map[string]bool{"r50k_base": true, "p50k_base": true, "cl100k_base": true}

// loadVocab builds the rank table of t's vocabulary, or returns nil when t has no fast path
// or its vocabulary does not decode as expected.
func (t *Tokenizer) loadVocab() *bpeVocab {
	if !fastVocabs[t.name] {
		return nil
	}
	v := &bpeVocab{seed: maphash.MakeSeed()}
	v.ranks.seed = v.seed
	v.ranks.reserve(int(t.info.size))
	v.pairs = make([]uint32, 1<<16)
	for i := range v.pairs {
		v.pairs[i] = none
	}
	var seen [256]bool
	id := []uint{0}
	for i := range t.info.size {
		id[0] = uint(i)
		s, err := t.codec.Decode(id)
		if err != nil || s == "" {
			continue // a special token or a gap in the ids
		}
		rank := [1]uint32{i}
		if !v.ranks.put(maphash.String(v.seed, s), []byte(s), rank[:]) {
			return nil // a duplicate (or a huge token): not the vocabulary expected
		}
		switch len(s) {
		case 1:
			v.bytes[s[0]], seen[s[0]] = i, true
		case 2:
			v.pairs[int(s[0])<<8|int(s[1])] = i
		}
	}
	for _, ok := range seen {
		if !ok {
			return nil
		}
	}
	return v
}

// isFastPunct reports whether c is a mark fastSegment handles after a word.
func isFastPunct(c byte) bool {
	switch c {
	case '.', ',', ';', ':', '!', '?':
		return true
	}
	return false
}

// fastForm reports whether seg has the form ` ?\p{L}+[.,;:!?]?` that fastSegment handles
// (letters in the sense of Go's unicode.IsLetter, the tables tiktoken-go's pre-tokenizer
// uses), and where its word ends.
func fastForm(seg []byte) (end int, ok bool) {
	if len(seg) > maxFastSegment {
		return 0, false
	}
	i := 0
	if len(seg) > 0 && seg[0] == ' ' {
		i = 1
	}
	word := i
	for i < len(seg) {
		if c := seg[i]; c < utf8.RuneSelf {
			if c|0x20 < 'a' || c|0x20 > 'z' {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(seg[i:])
		if !unicode.IsLetter(r) { // a mark, a symbol, invalid UTF-8 (RuneError is no letter)
			break
		}
		i += n
	}
	if i == word {
		return 0, false
	}
	end = i
	if i < len(seg) && isFastPunct(seg[i]) {
		i++
	}
	return end, i == len(seg)
}

// fastSegment appends the ids of seg, a segment of the form fastForm accepts whose word
// ends at end (and which is followed by a space or the end of the text).
func (v *bpeVocab) fastSegment(seg []byte, end int, dst []uint32) []uint32 {
	dst = v.merge(seg[:end], dst)
	if end < len(seg) {
		dst = append(dst, v.bytes[seg[end]])
	}
	return dst
}

// merge appends the ids of one pre-token by byte-pair encoding.
func (v *bpeVocab) merge(piece []byte, dst []uint32) []uint32 {
	if id, ok := v.rank(piece); ok {
		return append(dst, id)
	}
	// bounds[k] is where part k starts, the last entry is len(piece); rank[k] is the rank of
	// parts k and k+1 joined (none when not a token). A merge looks up only the two pairs
	// it changes.
	var buf [maxFastSegment + 1]int
	var rbuf [maxFastSegment]uint32
	bounds := buf[:len(piece)+1]
	for k := range bounds {
		bounds[k] = k
	}
	rank := rbuf[:len(piece)-1]
	pair := func(k int) uint32 {
		if k < 0 || k+2 >= len(bounds) {
			return none
		}
		if a, b := bounds[k], bounds[k+2]; b-a == 2 {
			return v.pairs[int(piece[a])<<8|int(piece[a+1])]
		}
		if r, ok := v.rank(piece[bounds[k]:bounds[k+2]]); ok {
			return r
		}
		return none
	}
	for k := range rank {
		rank[k] = pair(k)
	}
	for len(rank) > 0 {
		best, bestRank := -1, none
		for k, r := range rank {
			if r < bestRank {
				best, bestRank = k, r
			}
		}
		if best < 0 {
			break
		}
		bounds = append(bounds[:best+1], bounds[best+2:]...)
		rank = append(rank[:best], rank[best+1:]...)
		if best < len(rank) {
			rank[best] = pair(best)
		}
		if best > 0 {
			rank[best-1] = pair(best - 1)
		}
	}
	for k := 0; k+1 < len(bounds); k++ {
		part := piece[bounds[k]:bounds[k+1]]
		if len(part) == 1 {
			dst = append(dst, v.bytes[part[0]])
		} else {
			id, _ := v.rank(part) // a part is a token: a byte, or a merge of two tokens
			dst = append(dst, id)
		}
	}
	return dst
}
