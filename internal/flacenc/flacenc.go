// Package flacenc encodes PCM samples as a FLAC stream (RFC 9639) with linear-prediction
// analysis that compresses about as well as the reference encoder at `flac -5`.
// It is pure Go, writes the STREAMINFO MD5, and encodes a whole clip held in memory.
package flacenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Errors returned by the encoder; they are wrapped with the details of the
// offending value.
var (
	// ErrInfo reports an Info that FLAC cannot express.
	ErrInfo = errors.New("flacenc: invalid stream info")
	// ErrOptions reports invalid Options.
	ErrOptions = errors.New("flacenc: invalid options")
	// ErrSampleCount reports a sample slice whose length is not a multiple of the channel
	// count, or a stream longer than FLAC's 36-bit sample counter.
	ErrSampleCount = errors.New("flacenc: invalid sample count")
	// ErrSampleRange reports a sample value that does not fit in Info.BitsPerSample bits.
	ErrSampleRange = errors.New("flacenc: sample out of range")
)

// Info describes the PCM samples to encode.
type Info struct {
	// SampleRate in Hz, 1..1048575.
	SampleRate int
	// Channels, 1..8. Samples are interleaved; channel order follows RFC 9639 section
	// 9.1.3 (for example L R for stereo, L R C LFE Ls Rs for 5.1).
	Channels int
	// BitsPerSample, 4..32. Every sample must lie in [-2^(b-1), 2^(b-1)-1].
	BitsPerSample int
}

// Level selects the effort spent on analysis. The zero value is LevelDefault.
type Level int

const (
	// LevelDefault works like `flac -5`: LPC up to order 8 with the order estimated from the
	// prediction error, fixed predictors, adaptive stereo decorrelation.
	LevelDefault Level = iota
	// LevelFast uses fixed predictors only, like `flac -0`..`-2`; 1.5-2x as fast and up to
	// 40% bigger.
	LevelFast
	// LevelBest encodes every LPC order up to 12, then coefficient precisions up to 15 bits
	// for the best order, and keeps the smallest, like `flac -8 -e`; about 5x slower and
	// 0-2% smaller.
	LevelBest
)

// DefaultBlockSize is the number of samples per channel in every frame but the last.
const DefaultBlockSize = 4096

// Options tunes the encoder. The zero value gives the defaults.
type Options struct {
	// Level is the analysis effort.
	Level Level
	// BlockSize is the samples per channel per frame, 16..65535; 0 means DefaultBlockSize.
	BlockSize int
}

// maxTotalSamples is the largest count the 36-bit STREAMINFO field can hold.
const maxTotalSamples = 1<<36 - 1

// Encode writes samples, interleaved by channel, to w as a FLAC stream with the default
// options.
func Encode(w io.Writer, samples []int32, info Info) error {
	return EncodeOptions(w, samples, info, Options{})
}

// EncodeOptions is Encode with options.
func EncodeOptions(w io.Writer, samples []int32, info Info, opts Options) error {
	b, err := Append(nil, samples, info, opts)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("flacenc: write: %w", err)
	}
	return nil
}

// Append appends the FLAC stream of samples, interleaved by channel, to dst and returns the
// extended slice. On error it returns dst unchanged (its spare capacity may be overwritten).
func Append(dst []byte, samples []int32, info Info, opts Options) ([]byte, error) {
	if err := info.check(); err != nil {
		return dst, err
	}
	if len(samples)%info.Channels != 0 {
		return dst, fmt.Errorf("%w: %d samples is not a multiple of %d channels", ErrSampleCount, len(samples), info.Channels)
	}
	return appendStream(dst, len(samples), info, opts, func(e *encoder, off, n int) error {
		chunk := samples[off*info.Channels : (off+n)*info.Channels]
		if err := e.load(chunk, n); err != nil {
			return err
		}
		e.hashPCM(chunk)
		return nil
	})
}

// AppendPCM is Append for samples held as bytes: interleaved little-endian two's
// complement integers of ceil(BitsPerSample/8) bytes each (the data of a 16-, 24- or
// 32-bit PCM WAV file, whose samples use the container's whole width). That is the layout
// the STREAMINFO MD5 covers, so the bytes are hashed as they are, and no []int32 copy of
// the clip is made. Every sample must fit in BitsPerSample bits.
func AppendPCM(dst []byte, pcm []byte, info Info, opts Options) ([]byte, error) {
	if err := info.check(); err != nil {
		return dst, err
	}
	width := (info.BitsPerSample + 7) / 8
	if len(pcm)%(width*info.Channels) != 0 {
		return dst, fmt.Errorf("%w: %d bytes is not a multiple of %d channels of %d bytes", ErrSampleCount, len(pcm), info.Channels, width)
	}
	frame := width * info.Channels
	return appendStream(dst, len(pcm)/width, info, opts, func(e *encoder, off, n int) error {
		chunk := pcm[off*frame : (off+n)*frame]
		if err := e.loadBytes(chunk, n, width); err != nil {
			return err
		}
		e.md5.Write(chunk)
		return nil
	})
}

// appendStream writes the stream of nsamples samples (all channels), asking load to put
// the n samples per channel starting at frame off into e.ch and to hash them.
func appendStream(dst []byte, nsamples int, info Info, opts Options, load func(e *encoder, off, n int) error) ([]byte, error) {
	blockSize := opts.BlockSize
	if blockSize == 0 {
		blockSize = DefaultBlockSize
	}
	if blockSize < 16 || blockSize > 65535 {
		return dst, fmt.Errorf("%w: block size %d not in 16..65535", ErrOptions, opts.BlockSize)
	}
	if opts.Level < LevelDefault || opts.Level > LevelBest {
		return dst, fmt.Errorf("%w: unknown level %d", ErrOptions, opts.Level)
	}
	total := nsamples / info.Channels
	if uint64(total) > maxTotalSamples {
		return dst, fmt.Errorf("%w: %d samples per channel exceeds 2^36-1", ErrSampleCount, total)
	}

	start := len(dst)
	const headerSize = 4 + 4 + 34 // "fLaC", block header, STREAMINFO
	// Reserve about what speech and music need (half to two thirds of PCM).
	out := slices.Grow(dst, headerSize+nsamples*((info.BitsPerSample+7)/8)*2/3)
	out = append(out, make([]byte, headerSize)...)

	e := newEncoder(info, opts.Level, blockSize)
	minFrame, maxFrame := 0, 0
	for frame, off := uint64(0), 0; off < total; frame, off = frame+1, off+blockSize {
		n := min(blockSize, total-off)
		if err := load(e, off, n); err != nil {
			return dst[:start], fmt.Errorf("%w (sample %d of %d)", err, off+e.badIndex, total)
		}
		before := len(out)
		out = e.encodeFrame(out, frame, n)
		size := len(out) - before
		if minFrame == 0 || size < minFrame {
			minFrame = size
		}
		maxFrame = max(maxFrame, size)
	}

	h := out[start : start+headerSize]
	copy(h, "fLaC")
	h[4] = 0x80 // last metadata block, type 0 (STREAMINFO)
	h[5], h[6], h[7] = 0, 0, 34
	si := h[8:]
	si[0], si[1] = byte(blockSize>>8), byte(blockSize)
	si[2], si[3] = byte(blockSize>>8), byte(blockSize)
	put24(si[4:], minFrame)
	put24(si[7:], maxFrame)
	// 20 bits sample rate, 3 bits channels-1, 5 bits bps-1, 36 bits total samples.
	v := uint64(info.SampleRate)<<44 | uint64(info.Channels-1)<<41 | uint64(info.BitsPerSample-1)<<36 | uint64(total)
	for i := range 8 {
		si[10+i] = byte(v >> (56 - 8*i))
	}
	e.md5.Sum(si[18:18])
	return out, nil
}

func put24(b []byte, v int) {
	if v > 1<<24-1 {
		v = 0 // unknown; cannot happen with block sizes up to 65535 and 8 channels of 32 bits.
	}
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

func (info Info) check() error {
	switch {
	case info.SampleRate < 1 || info.SampleRate > 1<<20-1:
		return fmt.Errorf("%w: sample rate %d Hz not in 1..1048575", ErrInfo, info.SampleRate)
	case info.Channels < 1 || info.Channels > 8:
		return fmt.Errorf("%w: %d channels not in 1..8", ErrInfo, info.Channels)
	case info.BitsPerSample < 4 || info.BitsPerSample > 32:
		return fmt.Errorf("%w: %d bits per sample not in 4..32", ErrInfo, info.BitsPerSample)
	}
	return nil
}

// hashPCM feeds interleaved samples to the MD5 as little-endian integers of
// ceil(bps/8) bytes each, the layout RFC 9639 specifies for the STREAMINFO MD5.
func (e *encoder) hashPCM(s []int32) {
	width := (e.info.BitsPerSample + 7) / 8
	buf := e.md5buf[:0]
	for len(s) > 0 {
		m := min(len(s), cap(buf)/width)
		buf = buf[:m*width]
		switch width {
		case 1:
			for i, x := range s[:m] {
				buf[i] = byte(x)
			}
		case 2:
			q := s[:m]
			j := 0
			for ; len(q) >= 4; q = q[4:] {
				w := q[:4:4]
				binary.LittleEndian.PutUint64(buf[j:], uint64(uint16(w[0]))|uint64(uint16(w[1]))<<16|
					uint64(uint16(w[2]))<<32|uint64(uint16(w[3]))<<48)
				j += 8
			}
			for _, x := range q {
				binary.LittleEndian.PutUint16(buf[j:], uint16(x))
				j += 2
			}
		case 3:
			for i, x := range s[:m-1] { // 4 bytes per sample; the next overwrites the fourth
				binary.LittleEndian.PutUint32(buf[3*i:], uint32(x))
			}
			x := s[m-1]
			buf[3*m-3], buf[3*m-2], buf[3*m-1] = byte(x), byte(x>>8), byte(x>>16)
		default:
			for i, x := range s[:m] {
				buf[4*i], buf[4*i+1], buf[4*i+2], buf[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
			}
		}
		e.md5.Write(buf)
		s = s[m:]
	}
}
