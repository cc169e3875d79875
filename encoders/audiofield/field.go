// Package audiofield encodes audio files (WAV, FLAC) as AUDIO_WAVEFORM fields (raw
// little-endian interleaved PCM) and AUDIO_COMPRESSED fields (FLAC). It decodes, cuts a segment,
// downmixes, resamples and converts the sample format as the field's options say.
//
// The field arguments (docs/fields/audio.md) record every option, including the sample format
// of a waveform (int16, int32 or float32), so a reader never mistakes int32 for float32.
package audiofield

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/flacdec"
	"github.com/mldf/convert/internal/flacenc"
	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/internal/resample"
	"github.com/mldf/convert/internal/wav"
	"github.com/mldf/convert/sample"
)

// SampleFormat is the sample format of an AUDIO_WAVEFORM payload.
type SampleFormat uint8

// Sample formats, as stored in the arguments' byte 1. FormatFLAC marks an AUDIO_COMPRESSED
// field.
const (
	Int16   = SampleFormat(mldf.AudioInt16)   // int16 little-endian; AudioMeta.bit_depth 16
	Int32   = SampleFormat(mldf.AudioInt32)   // int32 little-endian; bit_depth 32
	Float32 = SampleFormat(mldf.AudioFloat32) // IEEE float32 little-endian, nominal [-1, 1]; bit_depth 32
	FLAC    = SampleFormat(mldf.AudioFLAC)    // AUDIO_COMPRESSED: a FLAC stream; bit_depth is its bits per sample
)

// String returns the format's name as used in recipes (int16, int32, float32, flac).
func (f SampleFormat) String() string {
	switch f {
	case Int16:
		return "int16"
	case Int32:
		return "int32"
	case Float32:
		return "float32"
	case FLAC:
		return "flac"
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// ArgsVersion is the version of the argument layout written by this package.
const ArgsVersion = mldf.ArgsVersion

// Options configures an audio field. The zero value keeps rate and channels, stores int16
// (waveform) or the source depth (compressed), and has no duration limit.
type Options struct {
	// Format is Int16 (default), Int32 or Float32 for a waveform field; ignored (FLAC) for a
	// compressed field.
	Format SampleFormat
	// BitDepth of a compressed field: 0 keeps the source depth (integer sources of 4..24 bits;
	// 32-bit integer and float sources become 24-bit), or 8, 16, 24.
	BitDepth int
	// SampleRate resamples to this rate; 0 keeps the source rate.
	SampleRate int
	// Mono downmixes to one channel (the mean of the channels); false keeps the channels.
	Mono bool
	// MaxDuration, in seconds (0 = no limit): longer clips are truncated, or rejected with
	// ErrTooLong when SkipLong is set.
	MaxDuration float64
	SkipLong    bool
	// NoPassthrough re-encodes FLAC inputs that need no conversion instead of storing their
	// original bytes (compressed fields only).
	NoPassthrough bool
	// EncodeFLAC encodes interleaved integer samples as a FLAC stream with its STREAMINFO
	// MD5 set. nil means EncodeFLAC (internal/flacenc).
	EncodeFLAC func(samples []int32, channels, bitsPerSample, sampleRate int) ([]byte, error)
}

// EncodeFLAC encodes interleaved samples with internal/flacenc at its default level.
func EncodeFLAC(samples []int32, channels, bitsPerSample, sampleRate int) ([]byte, error) {
	return flacenc.Append(nil, samples, flacenc.Info{SampleRate: sampleRate, Channels: channels, BitsPerSample: bitsPerSample}, flacenc.Options{})
}

// Field is an AUDIO_WAVEFORM or AUDIO_COMPRESSED field. It is safe for concurrent use.
type Field struct {
	name string
	typ  mldf.TypeID
	opt  Options
	args [mldf.ArgumentsSize]byte

	// pcmFLAC is set when FLAC is encoded by internal/flacenc (Options.EncodeFLAC was nil):
	// 16- and 24-bit WAV data then goes to flacenc.AppendPCM as it is (wavToFLAC).
	pcmFLAC bool

	// readBufs holds buffers of files read earlier that no payload kept, for the next read:
	// decoding and re-encoding paths then neither allocate nor fault in a new buffer a clip.
	readBufs chan []byte

	mu         sync.Mutex
	resamplers map[[2]int]*resample.Resampler
	cached     int // bytes of the cached resamplers' tables
}

// NewWaveform returns an AUDIO_WAVEFORM field.
func NewWaveform(name string, o Options) (*Field, error) {
	if o.Format == 0 {
		o.Format = Int16
	}
	if o.Format != Int16 && o.Format != Int32 && o.Format != Float32 {
		return nil, fmt.Errorf("audio field %q: sample format %s (want int16, int32 or float32)", name, o.Format)
	}
	o.BitDepth = 16
	if o.Format != Int16 {
		o.BitDepth = 32
	}
	return newField(name, mldf.TypeAudioWaveform, o)
}

// NewCompressed returns an AUDIO_COMPRESSED (FLAC) field.
func NewCompressed(name string, o Options) (*Field, error) {
	o.Format = FLAC
	switch o.BitDepth {
	case 0, 8, 16, 24:
	default:
		return nil, fmt.Errorf("audio field %q: FLAC bit depth %d (want 0 = source, 8, 16 or 24)", name, o.BitDepth)
	}
	pcm := o.EncodeFLAC == nil
	if pcm {
		o.EncodeFLAC = EncodeFLAC
	}
	f, err := newField(name, mldf.TypeAudioCompressed, o)
	if f != nil {
		f.pcmFLAC = pcm
	}
	return f, err
}

func newField(name string, t mldf.TypeID, o Options) (*Field, error) {
	if err := mldf.ValidateName(name); err != nil {
		return nil, err
	}
	if o.SampleRate < 0 || o.SampleRate > MaxSampleRate {
		return nil, fmt.Errorf("audio field %q: sample_rate %d (want 0 to keep the source rate, or 1..%d Hz)", name, o.SampleRate, MaxSampleRate)
	}
	if o.MaxDuration < 0 || math.IsNaN(o.MaxDuration) || math.IsInf(o.MaxDuration, 0) {
		return nil, fmt.Errorf("audio field %q: max_duration %v", name, o.MaxDuration)
	}
	f := &Field{name: name, typ: t, opt: o, resamplers: map[[2]int]*resample.Resampler{},
		readBufs: make(chan []byte, readBufCount)}
	f.args = o.arguments()
	return f, nil
}

// Name returns the field name.
func (f *Field) Name() string { return f.name }

// Type returns TypeAudioWaveform or TypeAudioCompressed.
func (f *Field) Type() mldf.TypeID { return f.typ }

// Arguments returns the descriptor arguments (layout in docs/fields/audio.md).
func (f *Field) Arguments() [mldf.ArgumentsSize]byte { return f.args }

// Options returns the field's options.
func (f *Field) Options() Options { return f.opt }

// arguments encodes o as the descriptor arguments, mldf.AudioArgs (docs/fields/audio.md).
func (o Options) arguments() [mldf.ArgumentsSize]byte {
	return mldf.AudioArgs{
		Format: uint8(o.Format), Mono: o.Mono, SkipLong: o.SkipLong, SampleRate: uint32(o.SampleRate),
		MaxDuration: o.MaxDuration, BitDepth: uint8(o.BitDepth), Passthrough: o.Format == FLAC && !o.NoPassthrough,
		Resampler: mldf.AudioResamplerKaiser, StopbandDB: uint8(resample.StopbandDB),
		Passband: uint16(math.Round(resample.PassbandFraction * 1000)),
	}.Marshal()
}

// ParseArguments decodes a field's arguments back into Options (EncodeFLAC left nil).
func ParseArguments(a [mldf.ArgumentsSize]byte) (Options, error) {
	if a[0] != ArgsVersion {
		return Options{}, fmt.Errorf("audio arguments: layout version %d (this reader knows %d)", a[0], ArgsVersion)
	}
	var aa mldf.AudioArgs
	if err := aa.Unmarshal(a); err != nil {
		return Options{}, err
	}
	o := Options{
		Format:        SampleFormat(aa.Format),
		Mono:          aa.Mono,
		SkipLong:      aa.SkipLong,
		SampleRate:    int(aa.SampleRate),
		MaxDuration:   aa.MaxDuration,
		BitDepth:      int(aa.BitDepth),
		NoPassthrough: aa.Format == uint8(FLAC) && !aa.Passthrough,
	}
	if o.Format < Int16 || o.Format > FLAC {
		return o, fmt.Errorf("audio arguments: unknown sample format %d", aa.Format)
	}
	return o, nil
}

// origin names the value's file for errors, shortened when absurdly long.
func origin(v sample.Value) string {
	switch {
	case v.Path != "":
		return quote.S(v.Path)
	case v.Name != "":
		return quote.S(v.Name)
	}
	return "audio value"
}

// Encode decodes the audio file in v, applies the field's options and returns the payload.
// Errors name the file.
func (f *Field) Encode(v sample.Value, meta []byte) ([]byte, error) {
	p, m, err := f.encode(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", origin(v), err)
	}
	if err := mldf.CheckPayloadSize(len(p)); err != nil {
		return nil, fmt.Errorf("%s: %w", origin(v), err)
	}
	m.Put(meta)
	return p, nil
}

func (f *Field) encode(v sample.Value) ([]byte, mldf.AudioMeta, error) {
	var m mldf.AudioMeta
	if v.Kind != sample.KindFile && v.Kind != sample.KindBytes {
		return nil, m, fmt.Errorf("%w (kind %d)", ErrValue, v.Kind)
	}
	if v.Offset < 0 || v.Duration < 0 || math.IsNaN(v.Offset) || math.IsNaN(v.Duration) || math.IsInf(v.Offset, 0) || math.IsInf(v.Duration, 0) {
		return nil, m, fmt.Errorf("%w: offset %v, duration %v", ErrSegment, v.Offset, v.Duration)
	}
	if v.Kind != sample.KindFile {
		data, err := v.Load()
		if err != nil {
			return nil, m, err
		}
		return f.encodeData(data, v)
	}
	var buf []byte
	select {
	case buf = <-f.readBufs:
	default:
	}
	data, err := inputfile.ReadFileInto(v.Path, buf)
	if err != nil {
		f.recycle(buf)
		return nil, m, fmt.Errorf("read %s: %w", quote.S(v.Path), err) // as sample.Value.Load says it
	}
	p, m, err := f.encodeData(data, v)
	if !overlaps(p, data) {
		f.recycle(data)
	}
	return p, m, err
}

// readBufCount and maxReadBuf bound the read buffers a field keeps (Field.readBufs).
const (
	readBufCount = 4
	maxReadBuf   = 16 << 20
)

// recycle keeps buf for a later read if there is room and it is not too large.
func (f *Field) recycle(buf []byte) {
	if cap(buf) == 0 || cap(buf) > maxReadBuf {
		return
	}
	select {
	case f.readBufs <- buf[:0]:
	default:
	}
}

// overlaps reports whether p shares memory with buf's backing array.
func overlaps(p, buf []byte) bool {
	if cap(p) == 0 || cap(buf) == 0 {
		return false
	}
	p0, b0 := uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p0 < b0+uintptr(cap(buf)) && b0 < p0+uintptr(cap(p))
}

// encodeData encodes the bytes of the audio file in v.
func (f *Field) encodeData(data []byte, v sample.Value) ([]byte, mldf.AudioMeta, error) {
	var m mldf.AudioMeta
	var err error
	kind := Sniff(data)
	if kind == ContainerWAV && f.typ == mldf.TypeAudioWaveform {
		if p, m, ok, err := f.wavFastPath(data, v); ok || err != nil {
			return p, m, err
		}
	}
	if kind == ContainerWAV && f.pcmFLAC {
		if p, m, ok, err := f.wavToFLAC(data, v); ok || err != nil {
			return p, m, err
		}
	}
	if kind == ContainerUnknown {
		ext := strings.ToLower(filepath.Ext(v.Name + v.Path))
		return nil, m, fmt.Errorf("%w (extension %q, starts with %q)", ErrFormat, ext, data[:min(4, len(data))])
	}
	if kind == ContainerFLAC && f.typ == mldf.TypeAudioCompressed && !f.opt.NoPassthrough {
		if m, ok, err := f.flacPassthrough(data, v); ok || err != nil {
			return data, m, err
		}
	}
	var clip *Clip
	if kind == ContainerFLAC {
		clip, _, err = DecodeFLAC(data)
	} else {
		clip, err = Decode(data)
	}
	if err != nil {
		return nil, m, err
	}
	converted, err := f.convert(clip, v)
	if err != nil {
		return nil, m, err
	}
	out := converted
	if uint64(out.Frames()) > math.MaxUint32 {
		return nil, m, fmt.Errorf("%w: %d frames (num_samples is 32-bit)", ErrTooLarge, out.Frames())
	}
	m = mldf.AudioMeta{NumSamples: uint32(out.Frames()), SampleRate: uint32(out.SampleRate), NumChannels: uint16(out.Channels)}
	if f.typ == mldf.TypeAudioCompressed {
		m.Codec = mldf.AudioCodecFLAC
		if kind == ContainerFLAC && out == clip && !f.opt.NoPassthrough && (f.opt.BitDepth == 0 || f.opt.BitDepth == clip.BitDepth) {
			m.BitDepth = uint8(clip.BitDepth)
			return data, m, nil // verified above: decodes, MD5 matches
		}
		ints, depth := toFLACDepth(out, f.opt.BitDepth, clip)
		p, err := f.opt.EncodeFLAC(ints, out.Channels, depth, out.SampleRate)
		if err != nil {
			return nil, m, fmt.Errorf("FLAC encode: %w", err)
		}
		m.BitDepth = uint8(depth)
		return p, m, nil
	}
	m.Codec = mldf.AudioCodecPCM
	m.BitDepth = uint8(f.opt.BitDepth)
	return pcmBytes(out, f.opt.Format), m, nil
}

// flacPassthrough stores a FLAC input as its original bytes when nothing would change them
// (no segment, no downmix, no resampling, the same bit depth), checking it as DecodeFLAC
// does (CRCs, sample count, MD5) without holding its samples. ok is false when the stream
// must be decoded and converted instead (or its STREAMINFO does not state its length).
func (f *Field) flacPassthrough(data []byte, v sample.Value) (m mldf.AudioMeta, ok bool, err error) {
	si, _, err := flacHeader(data)
	if err != nil || si.TotalSamples == 0 || si.TotalSamples > math.MaxUint32 {
		return m, false, nil // DecodeFLAC reports the error, or finds the stream's true length
	}
	frames := int(si.TotalSamples)
	if start, end, err := f.segment(frames, si.SampleRate, v); err != nil || start != 0 || end != frames {
		return m, false, nil
	}
	if f.opt.Mono && si.Channels > 1 || f.opt.SampleRate > 0 && f.opt.SampleRate != si.SampleRate ||
		f.opt.BitDepth != 0 && f.opt.BitDepth != si.BitsPerSample {
		return m, false, nil
	}
	if _, err := flacdec.Verify(data, flacdec.Options{MaxSamples: MaxDecodedSamples}); err != nil {
		return m, true, flacError(err)
	}
	return mldf.AudioMeta{NumSamples: uint32(frames), SampleRate: uint32(si.SampleRate), NumChannels: uint16(si.Channels),
		Codec: mldf.AudioCodecFLAC, BitDepth: uint8(si.BitsPerSample)}, true, nil
}

// MaxSampleRate is the highest sample rate a source file may declare, and the highest
// target rate: 768 kHz (internal/wav and internal/resample apply the same bound).
const MaxSampleRate = wav.MaxSampleRate

// maxCacheBytes bounds the per-field cache of filter tables by their size (a table takes up
// to resample.MaxTableBytes; a hostile dataset could declare a new sample rate in every file).
// Pairs seen once the cache is full get a table built for the clip and dropped after it.
const maxCacheBytes = 32 << 20

// maxUpsample bounds the resampling ratio, so that a file declaring a tiny sample rate
// cannot expand into gigabytes.
const maxUpsample = 64

// resampler returns the resampler for a rate pair, cached for the first pairs seen, up to
// maxCacheBytes of tables.
func (f *Field) resampler(in, out int) (*resample.Resampler, error) {
	key := [2]int{in, out}
	f.mu.Lock()
	r := f.resamplers[key]
	f.mu.Unlock()
	if r != nil {
		return r, nil
	}
	r, err := resample.New(in, out) // outside the lock: building a table takes a while
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if prev := f.resamplers[key]; prev != nil {
		return prev, nil
	}
	if n := r.TableBytes(); f.cached+n <= maxCacheBytes {
		f.resamplers[key] = r
		f.cached += n
	}
	return r, nil
}

// convert applies the segment, max_duration, downmix and resampling. It returns c itself when
// nothing changes.
func (f *Field) convert(c *Clip, v sample.Value) (*Clip, error) {
	frames := c.Frames()
	start, end, err := f.segment(frames, c.SampleRate, v)
	if err != nil {
		return nil, err
	}
	out := c
	if start != 0 || end != frames {
		out = c.slice(start, end)
	}
	if f.opt.Mono && out.Channels > 1 {
		out = downmix(out)
	}
	if f.opt.SampleRate > 0 && f.opt.SampleRate != out.SampleRate {
		if f.opt.SampleRate > maxUpsample*out.SampleRate {
			return nil, fmt.Errorf("%w: resampling %d Hz to %d Hz (at most %dx up)", ErrUnsupported, out.SampleRate, f.opt.SampleRate, maxUpsample)
		}
		r, err := f.resampler(out.SampleRate, f.opt.SampleRate)
		if err != nil {
			return nil, err
		}
		if n := uint64(r.OutLen(out.Frames())) * uint64(out.Channels) * 4; n > math.MaxUint32 {
			return nil, fmt.Errorf("%w: resampled audio would take %d bytes", ErrTooLarge, n)
		}
		fl := toFloat(out)
		res := r.Interleaved(nil, fl, out.Channels)
		out = &Clip{SampleRate: f.opt.SampleRate, Channels: out.Channels, BitDepth: 32, IsFloat: true, Float: res}
	}
	return out, nil
}

// segment returns the frame range [start, end) that the value's Offset/Duration and the
// field's max_duration select from frames frames at rate Hz.
func (f *Field) segment(frames, rateHz int, v sample.Value) (start, end int, err error) {
	rate := float64(rateHz)
	start, end = 0, frames
	// Computed in float64 and compared before converting, so huge values cannot overflow.
	if v.Offset > 0 || v.Duration > 0 {
		s := math.Round(v.Offset * rate)
		if s >= float64(frames) {
			return 0, 0, fmt.Errorf("%w: offset %.3fs is at or past the end (%.3fs)", ErrSegment, v.Offset, float64(frames)/rate)
		}
		start = int(s)
		if v.Duration > 0 {
			if e := s + math.Round(v.Duration*rate); e < float64(frames) {
				end = int(e)
			}
		}
	}
	if md := f.opt.MaxDuration; md > 0 {
		if limit := math.Floor(md * rate); float64(end-start) > limit {
			if f.opt.SkipLong {
				return 0, 0, fmt.Errorf("%w: %.3fs > %gs", ErrTooLong, float64(end-start)/rate, md)
			}
			end = start + int(limit)
		}
	}
	if end <= start {
		return 0, 0, fmt.Errorf("%w: %d frames selected", ErrEmpty, max(0, end-start))
	}
	return start, end, nil
}

// wavFastPath stores the bytes of a little-endian WAV data chunk directly when they already
// are the field's sample format (16-bit PCM for int16, 32-bit PCM for int32, float32 for
// float32) and no downmix or resampling is needed. ok is false when the general path must run.
func (f *Field) wavFastPath(b []byte, v sample.Value) (p []byte, m mldf.AudioMeta, ok bool, err error) {
	h, data, err := wav.Header(b)
	if err != nil {
		return nil, m, false, err
	}
	switch {
	case h.BigEndian || (f.opt.Mono && h.Channels > 1) || (f.opt.SampleRate > 0 && f.opt.SampleRate != h.SampleRate):
		return nil, m, false, nil
	case f.opt.Format == Int16 && h.Source == wav.PCM && h.Width == 2:
	case f.opt.Format == Int32 && h.Source == wav.PCM && h.Width == 4:
	case f.opt.Format == Float32 && h.Source == wav.Float && h.Width == 4:
	default:
		return nil, m, false, nil
	}
	p, n, err := f.wavSegment(data, h.Width*h.Channels, h.SampleRate, v)
	if err != nil {
		return nil, m, true, err
	}
	if v.Kind == sample.KindBytes {
		p = append([]byte(nil), p...) // the value's bytes are not ours to hand on
	}
	m = mldf.AudioMeta{NumSamples: uint32(n), SampleRate: uint32(h.SampleRate), NumChannels: uint16(h.Channels),
		BitDepth: uint8(f.opt.BitDepth), Codec: mldf.AudioCodecPCM}
	return p, m, true, nil
}

// wavSegment returns the bytes of the frames of a WAV data chunk (frames of frameBytes bytes at
// rate Hz) that the value's Offset and Duration select, and how many frames they are.
func (f *Field) wavSegment(data []byte, frameBytes, rate int, v sample.Value) ([]byte, int, error) {
	start, end, err := f.segment(len(data)/frameBytes, rate, v)
	if err != nil {
		return nil, 0, err
	}
	if uint64(end-start) > math.MaxUint32 {
		return nil, 0, fmt.Errorf("%w: %d frames (num_samples is 32-bit)", ErrTooLarge, end-start)
	}
	return data[start*frameBytes : end*frameBytes], end - start, nil
}

// wavToFLAC encodes the data chunk of a 16- or 24-bit little-endian PCM WAV file with
// flacenc.AppendPCM when nothing but a segment would change its samples: the bytes are the
// samples the FLAC MD5 covers, so neither a decoded []int32 copy nor a conversion is made.
// The stream is the one the decoding path writes. ok is false for everything else (other
// encodings and widths, downmixing, resampling, a different bit depth, unusual headers),
// which the decoding path handles and reports.
func (f *Field) wavToFLAC(b []byte, v sample.Value) (p []byte, m mldf.AudioMeta, ok bool, err error) {
	h, data, err := wav.Header(b)
	if err != nil {
		return nil, m, false, nil // Decode reports it
	}
	switch {
	case h.BigEndian || h.Source != wav.PCM || h.IsFloat || (h.Width != 2 && h.Width != 3) || h.BitDepth != 8*h.Width,
		h.Channels < 1 || h.Channels > 8 || h.SampleRate < 1 || h.SampleRate > MaxSampleRate,
		f.opt.Mono && h.Channels > 1, f.opt.SampleRate > 0 && f.opt.SampleRate != h.SampleRate,
		f.opt.BitDepth != 0 && f.opt.BitDepth != h.BitDepth:
		return nil, m, false, nil
	}
	seg, n, err := f.wavSegment(data, h.Width*h.Channels, h.SampleRate, v)
	if err != nil {
		return nil, m, true, err
	}
	info := flacenc.Info{SampleRate: h.SampleRate, Channels: h.Channels, BitsPerSample: h.BitDepth}
	p, err = flacenc.AppendPCM(nil, seg, info, flacenc.Options{})
	if err != nil {
		return nil, m, true, fmt.Errorf("FLAC encode: %w", err)
	}
	m = mldf.AudioMeta{NumSamples: uint32(n), SampleRate: uint32(h.SampleRate), NumChannels: uint16(h.Channels),
		Codec: mldf.AudioCodecFLAC, BitDepth: uint8(h.BitDepth)}
	return p, m, true, nil
}

func (c *Clip) slice(start, end int) *Clip {
	n := *c
	if c.IsFloat {
		n.Float = c.Float[start*c.Channels : end*c.Channels]
	} else {
		n.Int = c.Int[start*c.Channels : end*c.Channels]
	}
	return &n
}

// downmix averages the channels into one (integers rounded to nearest).
func downmix(c *Clip) *Clip {
	ch, frames := c.Channels, c.Frames()
	out := &Clip{SampleRate: c.SampleRate, Channels: 1, BitDepth: c.BitDepth, IsFloat: c.IsFloat}
	if c.IsFloat {
		out.Float = make([]float32, frames)
		for i := range out.Float {
			var s float32
			for _, v := range c.Float[i*ch : i*ch+ch] {
				s += v
			}
			out.Float[i] = s / float32(ch)
		}
		return out
	}
	out.Int = make([]int32, frames)
	for i := range out.Int {
		var s int64
		for _, v := range c.Int[i*ch : i*ch+ch] {
			s += int64(v)
		}
		out.Int[i] = int32(math.Round(float64(s) / float64(ch)))
	}
	return out
}

// toFloat returns the samples as float32 in [-1, 1).
func toFloat(c *Clip) []float32 {
	if c.IsFloat {
		return c.Float
	}
	scale := 1 / float32(int64(1)<<(c.BitDepth-1))
	out := make([]float32, len(c.Int))
	for i, v := range c.Int {
		out[i] = float32(v) * scale
	}
	return out
}

// floatToInt converts a float sample to a bits-deep integer, rounding and clipping.
func floatToInt(x float32, bits int) int32 {
	full := float64(int64(1) << (bits - 1))
	v := math.Round(float64(x) * full)
	if v >= full {
		return int32(full - 1)
	}
	if v < -full {
		return int32(-full)
	}
	return int32(v)
}

// requantize changes an integer sample's depth: exact when widening; rounded to nearest and
// clipped when narrowing.
func requantize(v int32, from, to int) int32 {
	if to >= from {
		return v << (to - from)
	}
	s := from - to
	r := (int64(v) + int64(1)<<(s-1)) >> s
	if maxV := int64(1)<<(to-1) - 1; r > maxV {
		r = maxV
	}
	return int32(r)
}

// toInts converts the clip to integers of the given depth.
func toInts(c *Clip, bits int) []int32 {
	out := make([]int32, max(len(c.Int), len(c.Float)))
	if c.IsFloat {
		for i, x := range c.Float {
			out[i] = floatToInt(x, bits)
		}
		return out
	}
	if c.BitDepth == bits {
		copy(out, c.Int)
		return out
	}
	for i, v := range c.Int {
		out[i] = requantize(v, c.BitDepth, bits)
	}
	return out
}

// toFLACDepth chooses the FLAC depth (want, or the depth of the decoded source src) and
// converts the samples of c.
func toFLACDepth(c *Clip, want int, src *Clip) ([]int32, int) {
	depth := want
	if depth == 0 {
		depth = src.BitDepth
		if src.IsFloat || depth > 24 {
			depth = 24
		}
	}
	if !c.IsFloat && c.BitDepth == depth {
		return c.Int, depth
	}
	return toInts(c, depth), depth
}

// pcmBytes encodes the clip as little-endian interleaved samples of the given format.
func pcmBytes(c *Clip, format SampleFormat) []byte {
	n := max(len(c.Int), len(c.Float))
	switch format {
	case Float32:
		out := make([]byte, 4*n)
		if c.IsFloat {
			for i, x := range c.Float {
				binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
			}
			return out
		}
		for i, x := range toFloat(c) {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
		return out
	case Int32:
		out := make([]byte, 4*n)
		if !c.IsFloat {
			sh := 32 - c.BitDepth
			for i, v := range c.Int {
				binary.LittleEndian.PutUint32(out[4*i:], uint32(v<<sh))
			}
			return out
		}
		for i, v := range toInts(c, 32) {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		}
		return out
	default:
		out := make([]byte, 2*n)
		if !c.IsFloat && c.BitDepth == 16 {
			for i, v := range c.Int {
				binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
			}
			return out
		}
		for i, v := range toInts(c, 16) {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
		}
		return out
	}
}
