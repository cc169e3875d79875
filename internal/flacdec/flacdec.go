// Package flacdec decodes a FLAC stream (RFC 9639) held in memory to interleaved integer
// samples and verifies the STREAMINFO MD5 of what it decoded.
// It is pure Go, checks every frame's CRCs, and returns an error, never a panic, on
// hostile input, allocating no more than the input and the spec's bounds justify.
package flacdec

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
)

// Errors returned by the decoder, wrapped with the byte offset, frame and details.
var (
	// ErrSignature reports data that does not start with "fLaC".
	ErrSignature = errors.New("flacdec: no fLaC signature")
	// ErrNoStreamInfo reports a stream whose first metadata block is not STREAMINFO.
	ErrNoStreamInfo = errors.New("flacdec: first metadata block is not STREAMINFO")
	// ErrMetadata reports a malformed metadata block or STREAMINFO values the format forbids.
	ErrMetadata = errors.New("flacdec: invalid metadata")
	// ErrTruncated reports a stream that ends inside a metadata block or a frame.
	ErrTruncated = errors.New("flacdec: stream truncated")
	// ErrFrame reports a malformed frame: no sync code, a reserved or forbidden value, a
	// residual that does not fit, a frame that disagrees with STREAMINFO.
	ErrFrame = errors.New("flacdec: invalid frame")
	// ErrCRC reports a frame header or frame whose CRC does not match.
	ErrCRC = errors.New("flacdec: CRC mismatch")
	// ErrSampleCount reports a stream whose frames hold more or fewer samples than
	// STREAMINFO declares, or no samples at all.
	ErrSampleCount = errors.New("flacdec: sample count differs from STREAMINFO")
	// ErrTooLarge reports a stream that decodes to more samples than Options.MaxSamples.
	ErrTooLarge = errors.New("flacdec: too many samples")
	// ErrMD5 reports decoded samples whose MD5 differs from STREAMINFO's.
	ErrMD5 = errors.New("flacdec: MD5 mismatch")
)

// Info is the content of the STREAMINFO block.
type Info struct {
	MinBlockSize, MaxBlockSize int // samples per channel per frame
	MinFrameSize, MaxFrameSize int // bytes; 0 means unknown
	SampleRate                 int // Hz
	Channels                   int // 1..8
	BitsPerSample              int // 4..32
	// TotalSamples per channel; 0 means unknown. A hostile stream can lie here: the
	// decoder checks it against what the frames hold.
	TotalSamples uint64
	// MD5 of the decoded samples; all zero means not computed, and the check is skipped.
	MD5 [16]byte
}

// MD5Set reports whether STREAMINFO holds an MD5 (all zero means "not computed").
func (i *Info) MD5Set() bool { return i.MD5 != [16]byte{} }

// Options tunes Decode. The zero value decodes every sample and checks the MD5.
type Options struct {
	// MaxSamples bounds the samples (all channels counted) the stream may decode to; 0
	// means 1<<31. A small stream of constant subframes can expand a thousandfold.
	MaxSamples int
	// SkipMD5 skips computing and checking the MD5.
	SkipMD5 bool
}

const defaultMaxSamples int64 = 1 << 31

// maxBlockSize is the largest block size a frame may declare: STREAMINFO's 16-bit fields
// cannot describe a larger one.
const maxBlockSize = 65535

// Decode decodes the FLAC stream in b (which may start with an ID3v2 tag) to interleaved
// samples and checks every CRC, the sample count and the MD5 against STREAMINFO.
// Decoding stops after the number of samples STREAMINFO declares, so trailing bytes (an
// ID3v1 tag) are ignored; when it declares none, every frame up to the end is decoded.
func Decode(b []byte) ([]int32, Info, error) {
	return DecodeOptions(b, Options{})
}

// DecodeOptions is Decode with options.
func DecodeOptions(b []byte, opts Options) ([]int32, Info, error) {
	var d decoder
	return d.decode(b, opts)
}

// Verify decodes the FLAC stream in b like Decode and checks it the same way, but keeps
// no samples: it needs memory for one frame, whatever the stream's length. It is what a
// caller storing the original bytes needs (and what `flac -t` does).
func Verify(b []byte, opts Options) (Info, error) {
	d := decoder{discard: true}
	_, info, err := d.decode(b, opts)
	return info, err
}

// ParseInfo reads the metadata of the stream in b and returns its STREAMINFO and the
// offset of the first frame.
func ParseInfo(b []byte) (Info, int, error) {
	p := 0
	if len(b) >= 10 && string(b[:3]) == "ID3" {
		size := int(b[6]&0x7f)<<21 | int(b[7]&0x7f)<<14 | int(b[8]&0x7f)<<7 | int(b[9]&0x7f)
		p = 10 + size
		if b[5]&0x10 != 0 { // footer present
			p += 10
		}
	}
	if len(b) < p+4 || string(b[p:p+4]) != "fLaC" {
		return Info{}, 0, fmt.Errorf("%w at byte %d", ErrSignature, p)
	}
	p += 4
	var info Info
	for first := true; ; first = false {
		if len(b) < p+4 {
			return info, 0, fmt.Errorf("%w: metadata block header at byte %d", ErrTruncated, p)
		}
		last, typ := b[p]&0x80 != 0, b[p]&0x7f
		length := int(b[p+1])<<16 | int(b[p+2])<<8 | int(b[p+3])
		body := p + 4
		if len(b) < body+length {
			return info, 0, fmt.Errorf("%w: metadata block of type %d at byte %d declares %d bytes, %d remain",
				ErrTruncated, typ, p, length, len(b)-body)
		}
		switch {
		case first && typ != 0:
			return info, 0, fmt.Errorf("%w (type %d at byte %d)", ErrNoStreamInfo, typ, p)
		case first && length != 34:
			return info, 0, fmt.Errorf("%w: STREAMINFO length %d, want 34", ErrMetadata, length)
		case !first && typ == 0:
			return info, 0, fmt.Errorf("%w: second STREAMINFO at byte %d", ErrMetadata, p)
		case typ == 127:
			return info, 0, fmt.Errorf("%w: forbidden block type 127 at byte %d", ErrMetadata, p)
		case first:
			if err := info.parse(b[body : body+34]); err != nil {
				return info, 0, err
			}
		}
		p = body + length
		if last {
			return info, p, nil
		}
	}
}

func (i *Info) parse(s []byte) error {
	i.MinBlockSize = int(binary.BigEndian.Uint16(s[0:]))
	i.MaxBlockSize = int(binary.BigEndian.Uint16(s[2:]))
	i.MinFrameSize = int(s[4])<<16 | int(s[5])<<8 | int(s[6])
	i.MaxFrameSize = int(s[7])<<16 | int(s[8])<<8 | int(s[9])
	v := binary.BigEndian.Uint64(s[10:])
	i.SampleRate = int(v >> 44)
	i.Channels = int(v>>41&7) + 1
	i.BitsPerSample = int(v>>36&31) + 1
	i.TotalSamples = v & (1<<36 - 1)
	copy(i.MD5[:], s[18:34])
	switch {
	case i.BitsPerSample < 4:
		return fmt.Errorf("%w: STREAMINFO declares %d bits per sample (4..32)", ErrMetadata, i.BitsPerSample)
	case i.MaxBlockSize < 16 || i.MinBlockSize > i.MaxBlockSize:
		return fmt.Errorf("%w: STREAMINFO block sizes %d..%d", ErrMetadata, i.MinBlockSize, i.MaxBlockSize)
	}
	return nil
}

// decoder holds the state of one Decode call.
type decoder struct {
	info    Info
	br      bitReader
	ch      [8][]int32 // per-channel samples of the current frame (multichannel streams)
	wide    []int64    // the 33-bit side channel of a 32-bit stereo frame
	md5     hash.Hash
	md5buf  []byte
	out     []int32
	maxOut  int
	frameNo int
	stats   *stats // counts of the codings met, for tests; nil otherwise
	discard bool   // keep only the current frame's samples (Verify)
	decoded uint64 // samples per channel decoded so far
}

// stats counts the codings a stream used, so tests can show what they covered.
type stats struct {
	kinds     [4]int  // constant, verbatim, fixed, LPC subframes
	fixed     [5]int  // by order
	lpc       [33]int // by order
	wasted    int     // subframes with wasted bits
	escapes   int     // escape-coded partitions
	rice2     int     // residuals with 5-bit parameters
	wide      int     // 33-bit side subframes
	assign    [11]int // frames by channel assignment
	variable  int     // frames with variable blocking
	maxPartOr int     // highest partition order
}

func (d *decoder) decode(b []byte, opts Options) ([]int32, Info, error) {
	info, p, err := ParseInfo(b)
	if err != nil {
		return nil, info, err
	}
	d.info = info
	d.maxOut = opts.MaxSamples
	if d.maxOut <= 0 {
		d.maxOut = int(min(defaultMaxSamples, math.MaxInt)) // 2^31-1 on 32-bit systems
	}
	nch := info.Channels
	if info.TotalSamples > uint64(d.maxOut/nch) {
		return nil, info, fmt.Errorf("%w: STREAMINFO declares %d samples per channel, limit %d in all",
			ErrTooLarge, info.TotalSamples, d.maxOut)
	}
	checkMD5 := !opts.SkipMD5 && info.MD5Set()
	if checkMD5 {
		d.md5 = md5.New()
	}
	// Preallocate what STREAMINFO declares, but no more than the input could plausibly
	// expand to (it can lie); append grows the rest.
	if !d.discard {
		prealloc := int(info.TotalSamples) * nch
		prealloc = min(prealloc, 4*(len(b)-p)+1<<16)
		d.out = make([]int32, 0, prealloc)
	}
	total := info.TotalSamples
	for p < len(b) {
		if total != 0 && d.decoded >= total {
			break // trailing bytes after the declared samples are ignored
		}
		if p, err = d.frame(b, p); err != nil {
			return nil, info, fmt.Errorf("frame %d: %w", d.frameNo, err)
		}
		d.frameNo++
	}
	got := d.decoded
	if got == 0 {
		return nil, info, fmt.Errorf("%w: no audio frames", ErrSampleCount)
	}
	if total != 0 && got != total {
		return nil, info, fmt.Errorf("%w: %d samples per channel decoded, STREAMINFO declares %d", ErrSampleCount, got, total)
	}
	if checkMD5 {
		var sum [16]byte
		d.md5.Sum(sum[:0])
		if sum != info.MD5 {
			return nil, info, fmt.Errorf("%w: decoded samples hash to %x, STREAMINFO says %x", ErrMD5, sum, info.MD5)
		}
	}
	if d.discard {
		return nil, info, nil
	}
	return d.out, info, nil
}

// hash feeds interleaved samples to the MD5 as little-endian integers of ceil(bps/8) bytes,
// and reports whether every sample is a signed bps-bit number (the range check and the
// byte conversion share one pass over the samples). A sample v is in range when v+2^(bps-1)
// lies in [0, 2^bps) as an unsigned number; OR-ing those sums together and testing the
// bits from bps up once at the end costs two operations a sample.
func (d *decoder) hash(s []int32) bool {
	bps := uint(d.info.BitsPerSample)
	width := (int(bps) + 7) / 8
	need := len(s)*width + 8
	if cap(d.md5buf) < need {
		d.md5buf = make([]byte, need)
	}
	buf := d.md5buf[:need]
	off := uint32(1) << ((bps - 1) & 31)
	var or uint32
	switch width {
	case 1:
		buf = buf[:len(s)]
		for i, v := range s {
			or |= uint32(v) + off
			buf[i] = byte(v)
		}
	case 2:
		n, o := pack16Vec(buf, s, off) // a vector loop, where there is one, takes the bulk
		or, s = o, s[n:]
		j := 2 * n
		for len(s) >= 4 {
			q := s[:4:4]
			or |= (uint32(q[0]) + off) | (uint32(q[1]) + off) | (uint32(q[2]) + off) | (uint32(q[3]) + off)
			binary.LittleEndian.PutUint64(buf[j:], uint64(uint16(q[0]))|uint64(uint16(q[1]))<<16|
				uint64(uint16(q[2]))<<32|uint64(uint16(q[3]))<<48)
			j += 8
			s = s[4:]
		}
		for _, v := range s {
			or |= uint32(v) + off
			binary.LittleEndian.PutUint16(buf[j:], uint16(v))
			j += 2
		}
		buf = buf[:j]
	case 3:
		// Write 4 bytes per sample; the next sample overwrites the fourth.
		for i, v := range s {
			or |= uint32(v) + off
			binary.LittleEndian.PutUint32(buf[3*i:], uint32(v))
		}
		buf = buf[:3*len(s)]
	default:
		buf = buf[:4*len(s)]
		for i, v := range s {
			or |= uint32(v) + off // 25-31 bits; 32 needs no check
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(v))
		}
	}
	d.md5.Write(buf)
	return bps >= 32 || or>>(bps&31) == 0
}

// grow extends d.out by n samples (or, when discarding, makes it hold n samples) and
// returns the n new ones.
func (d *decoder) grow(n int) ([]int32, error) {
	nch := uint64(d.info.Channels)
	if uint64(n) > uint64(d.maxOut)-d.decoded*nch {
		return nil, fmt.Errorf("%w: more than %d samples", ErrTooLarge, d.maxOut)
	}
	d.decoded += uint64(n) / nch
	if d.discard {
		if cap(d.out) < n {
			d.out = make([]int32, n)
		}
		d.out = d.out[:n]
		return d.out, nil
	}
	base := len(d.out)
	d.out = slices.Grow(d.out, n)[:base+n]
	return d.out[base:], nil
}
