package loader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/mldf/convert/internal/flacdec"
)

// audio offsets: where a clip longer than the output is cut.
const (
	audioStart = iota
	audioCenter
	audioRandom
)

// audioStage decodes a PCM or FLAC clip to a fixed [channels, length] output: cut at the
// start, the centre or a random offset when longer, padded with pad after the clip (around
// it for "center") when shorter.
type audioStage struct {
	flac     bool
	format   int // PCM sample format of the field (pcm*), 0 unknown
	length   int
	channels int
	offset   int
	pad      float64
	i16      bool
}

// MaxAudioLength bounds Audio's length (frames per channel of one sample).
const MaxAudioLength = 1 << 26

func compileAudio(fi *fieldInfo, o *opSpec) (stage, Output, error) {
	if err := o.allow("length", "offset", "pad", "dtype", "channels"); err != nil {
		return nil, Output{}, err
	}
	st := &audioStage{flac: fi.Kind == kindAudioFLAC, format: fi.PCMFormat, channels: 1}
	if o.Length == nil || *o.Length < 1 || *o.Length > MaxAudioLength {
		return nil, Output{}, fmt.Errorf("length: want 1..%d frames", MaxAudioLength)
	}
	st.length = *o.Length
	switch o.Offset {
	case "", "start":
	case "center":
		st.offset = audioCenter
	case "random":
		st.offset = audioRandom
	default:
		return nil, Output{}, fmt.Errorf("offset %q: want start, center or random", o.Offset)
	}
	if o.Channels != nil {
		if *o.Channels < 1 || *o.Channels > 8 {
			return nil, Output{}, fmt.Errorf("channels %d: want 1..8", *o.Channels)
		}
		st.channels = *o.Channels
	}
	switch o.DType {
	case "", "float32":
	case "int16":
		st.i16 = true
	default:
		return nil, Output{}, fmt.Errorf("dtype %q: want float32 or int16", o.DType)
	}
	if o.Pad != nil {
		st.pad = *o.Pad
		if math.IsNaN(st.pad) || math.IsInf(st.pad, 0) || (st.i16 && (st.pad < -32768 || st.pad > 32767)) {
			return nil, Output{}, fmt.Errorf("pad %v: out of the dtype's range", st.pad)
		}
	}
	out := Output{DType: "float32", Kind: "Audio", Shape: []int{st.channels, st.length}, itemSize: 4 * st.channels * st.length}
	if st.i16 {
		out.DType, out.itemSize = "int16", 2*st.channels*st.length
	}
	return st, out, nil
}

var errAudio = errors.New("loader: audio does not fit the plan")

func (st *audioStage) decode(w *worker, rc runCtx, v value, dst []byte) error {
	if len(v.Payload) == 0 {
		return errMissing
	}
	frames, ch := v.Frames, v.AudioChannels
	if ch != st.channels && st.channels != 1 {
		return fmt.Errorf("%w: the clip has %d channels, the plan wants %d (or 1: the mean)", errAudio, ch, st.channels)
	}
	// sample returns frame f of channel c on a [-1, 1) scale (float) and as int16.
	var sample func(f, c int) (float64, int16)
	le := binary.LittleEndian
	p := v.Payload
	switch {
	case st.flac:
		max := frames*ch + 1<<16
		data, info, err := flacdec.DecodeOptions(p, flacdec.Options{MaxSamples: max, SkipMD5: true})
		if err != nil {
			return err
		}
		if info.Channels != ch || len(data) < frames*ch {
			return fmt.Errorf("%w: FLAC stream of %d channels and %d samples, the metadata says %d × %d", errAudio, info.Channels, len(data), ch, frames)
		}
		bits := info.BitsPerSample
		scale := 1 / math.Ldexp(1, bits-1)
		sample = func(f, c int) (float64, int16) {
			s := data[f*ch+c]
			var i int16
			if bits >= 16 {
				i = int16(s >> (bits - 16))
			} else {
				i = int16(s << (16 - bits))
			}
			return float64(s) * scale, i
		}
	case v.BitDepth == 16:
		sample = func(f, c int) (float64, int16) {
			s := int16(le.Uint16(p[2*(f*ch+c):]))
			return float64(s) / 32768, s
		}
	case v.BitDepth == 32 && st.format == pcmInt32:
		sample = func(f, c int) (float64, int16) {
			s := int32(le.Uint32(p[4*(f*ch+c):]))
			return float64(s) / (1 << 31), int16(s >> 16)
		}
	case v.BitDepth == 32 && st.format == pcmFloat32:
		sample = func(f, c int) (float64, int16) {
			s := float64(math.Float32frombits(le.Uint32(p[4*(f*ch+c):])))
			return s, int16(max(-32768, min(32767, math.Round(s*32767))))
		}
	default:
		return fmt.Errorf("%w: PCM of %d bits in a field whose sample format is not recorded", errAudio, v.BitDepth)
	}
	if len(p) < frames*ch*v.BitDepth/8 && !st.flac {
		return fmt.Errorf("%w: PCM payload of %d bytes for %d frames", errAudio, len(p), frames)
	}
	// src: the first frame read; at: where it goes; n: frames copied
	src, at, n := 0, 0, min(frames, st.length)
	if frames > st.length {
		switch st.offset {
		case audioCenter:
			src = (frames - st.length) / 2
		case audioRandom:
			r := rc.rand(0)
			src = r.intn(frames - st.length)
		}
	} else if st.offset == audioCenter {
		at = (st.length - frames) / 2
	}
	padI := int16(st.pad)
	padF := math.Float32bits(float32(st.pad))
	for c := range st.channels {
		row := c * st.length
		for k := range st.length {
			o := row + k
			if k < at || k >= at+n {
				if st.i16 {
					le.PutUint16(dst[2*o:], uint16(padI))
				} else {
					le.PutUint32(dst[4*o:], padF)
				}
				continue
			}
			f := src + k - at
			var x float64
			var xi int16
			if st.channels == ch {
				x, xi = sample(f, c)
			} else { // mono: the mean of the channels
				sum, sumI := 0.0, 0
				for cc := range ch {
					a, b := sample(f, cc)
					sum += a
					sumI += int(b)
				}
				x = sum / float64(ch)
				xi = int16(math.Round(float64(sumI) / float64(ch)))
			}
			if st.i16 {
				le.PutUint16(dst[2*o:], uint16(xi))
			} else {
				le.PutUint32(dst[4*o:], math.Float32bits(float32(x)))
			}
		}
	}
	return nil
}
