package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/internal/wav"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// fixturePageSize is small so that payloads fill and cross pages.
const fixturePageSize = 4096

// memSource yields fixed samples in order.
type memSource []sample.Sample

func (s memSource) Len() int64 { return int64(len(s)) }

func (s memSource) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for _, x := range s {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(x); err != nil {
			return err
		}
	}
	return nil
}

// fixture is one good file: its fields and samples.
type fixture struct {
	name    string
	fields  []pipeline.Binding
	samples []sample.Sample
	source  sources.Source // when set, used instead of samples
	err     error          // set when building the fields failed
}

func (fx fixture) write(ctx context.Context, dir string) error {
	if fx.err != nil {
		return fx.err
	}
	path := filepath.Join(dir, fx.name+".mldf")
	var src sources.Source = memSource(fx.samples)
	if fx.source != nil {
		src = fx.source
	}
	_, err := pipeline.Run(ctx, pipeline.Config{
		Source: src, Fields: fx.fields, Output: path,
		PageSize: fixturePageSize, Workers: 2, ChunkSize: 5, Checksums: true, OnError: pipeline.Fail,
	})
	if err != nil {
		return err
	}
	return export(path)
}

func fixtures() []fixture {
	return []fixture{scalarsFixture(), ndarrayFixture(), imagesFixture(), audioFixture(), textFixture(), packedFixture()}
}

// fieldSet collects field constructors' errors so fixtures read as lists.
type fieldSet struct {
	b   []pipeline.Binding
	err error
}

func (s *fieldSet) add(f encoders.Field, err error, column string, optional bool) {
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	s.b = append(s.b, pipeline.Binding{Field: f, Column: column, Optional: optional})
}

func mk(i int, vals map[string]sample.Value) sample.Sample {
	key := fmt.Sprintf("s%03d", i)
	return sample.Sample{Index: int64(i), Key: key, Origin: "mkfixtures:" + key, Values: sample.ColumnsOf(vals)}
}

// scalarsFixture: INT, FLOAT, BYTES (with empty and multi-page payloads) and JSON.
func scalarsFixture() fixture {
	var fs fieldSet
	fi, err := encoders.NewInt("label")
	fs.add(fi, err, "label", false)
	ff, err := encoders.NewFloat("score")
	fs.add(ff, err, "score", false)
	fb, err := encoders.NewBytes("blob")
	fs.add(fb, err, "blob", true)
	fj, err := encoders.NewJSON("meta")
	fs.add(fj, err, "meta", false)

	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 42, 1 << 53, -(1 << 53) - 1}
	floats := []float64{0, math.Copysign(0, -1), 0.1, math.Pi, 1e308, 5e-324, -2.5, math.Inf(1),
		math.Inf(-1), math.NaN(), math.MaxFloat64, 1.0 / 3}
	jsons := []sample.Value{
		{Kind: sample.KindJSON, Bytes: []byte(`{"a": 1, "b": [true, false, null], "c": "x\u00e9\u4e2d"}`)},
		{Kind: sample.KindString, Bytes: []byte("plain text \"quoted\" ✓")},
		{Kind: sample.KindInt, Int: -7},
		{Kind: sample.KindFloat, Float: 0.25},
		{Kind: sample.KindJSON, Bytes: []byte(`[1, 2.5, -3e10, {"nested": {"deep": []}}]`)},
		{Kind: sample.KindJSON, Bytes: []byte(`"just a string"`)},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var ss []sample.Sample
	for i := range 40 {
		vals := map[string]sample.Value{
			"label": {Kind: sample.KindInt, Int: ints[i%len(ints)] + int64(i/len(ints))},
			"score": {Kind: sample.KindFloat, Float: floats[i%len(floats)]},
			"meta":  jsons[i%len(jsons)],
		}
		switch {
		case i%9 == 3: // missing optional column: empty payload
		case i == 5: // larger than a page
			vals["blob"] = sample.Value{Kind: sample.KindBytes, Bytes: randBytes(rng, 3*fixturePageSize+123)}
		case i == 6: // exactly one page
			vals["blob"] = sample.Value{Kind: sample.KindBytes, Bytes: randBytes(rng, fixturePageSize)}
		default:
			vals["blob"] = sample.Value{Kind: sample.KindBytes, Bytes: randBytes(rng, 1+rng.IntN(900))}
		}
		ss = append(ss, mk(i, vals))
	}
	return fixture{name: "scalars", fields: fs.b, samples: ss, err: fs.err}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// npy encodes a C-order array as a version 1.0 .npy file.
func npy(descr string, shape []int, data []byte) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, sh)
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	dict += strings.Repeat(" ", pad) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(dict)))
	b.WriteString(dict)
	b.Write(data)
	return b.Bytes()
}

// ndarrayFixture: a fixed-shape <f4 (3, 4) field and a whole-.npy field of varying shapes and
// dtypes.
func ndarrayFixture() fixture {
	var fs fieldSet
	fixed, err := encoders.NewNDArray("fixed", "<f4", []uint64{3, 4})
	fs.add(fixed, err, "fixed", false)
	anyf, err := encoders.NewNDArray("npy", "", nil)
	fs.add(anyf, err, "npy", false)
	fi, err := encoders.NewInt("idx")
	fs.add(fi, err, "idx", false)

	var ss []sample.Sample
	for i := range 12 {
		f32 := make([]byte, 0, 48)
		for k := range 12 {
			f32 = binary.LittleEndian.AppendUint32(f32, math.Float32bits(float32(i)*0.5-float32(k)*1.25))
		}
		var other []byte
		switch i % 4 {
		case 0:
			d := make([]byte, 0)
			for k := range i + 1 {
				d = binary.LittleEndian.AppendUint64(d, uint64(int64(k*k-i*1000)))
			}
			other = npy("<i8", []int{i + 1}, d)
		case 1:
			d := make([]byte, 2*3*(i+1))
			for k := range d {
				d[k] = byte(k * 7)
			}
			other = npy("|u1", []int{2, 3, i + 1}, d)
		case 2:
			d := make([]byte, 0)
			for k := range 5 {
				d = binary.LittleEndian.AppendUint64(d, math.Float64bits(float64(k)/float64(i+1)))
			}
			other = npy("<f8", []int{5, 1}, d)
		case 3:
			other = npy("<i2", []int{}, []byte{byte(i), 0x80})
		}
		ss = append(ss, mk(i, map[string]sample.Value{
			"fixed": {Kind: sample.KindBytes, Bytes: npy("<f4", []int{3, 4}, f32)},
			"npy":   {Kind: sample.KindBytes, Bytes: other},
			"idx":   {Kind: sample.KindInt, Int: int64(i)},
		}))
	}
	return fixture{name: "ndarray", fields: fs.b, samples: ss, err: fs.err}
}

// testImage draws a deterministic w×h picture: gradients, a few circles and noise.
func testImage(rng *rand.Rand, w, h int, alpha bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	cx, cy, r := rng.IntN(w+1), rng.IntN(h+1), 1+rng.IntN(max(w, h))
	for y := range h {
		for x := range w {
			c := color.NRGBA{R: uint8(x * 255 / max(w-1, 1)), G: uint8(y * 255 / max(h-1, 1)), B: uint8((x ^ y) * 3), A: 255}
			if (x-cx)*(x-cx)+(y-cy)*(y-cy) < r*r {
				c.B = 255 - c.B
			}
			c.R += uint8(rng.IntN(8))
			if alpha {
				c.A = uint8(128 + (x+y)%128)
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

func pngBytes(img image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // encoding an in-memory NRGBA cannot fail
	}
	return b.Bytes()
}

// imagesFixture: raw RGB (some larger than a page), raw gray, JPEG, PNG RGBA with a missing
// optional value, and smart mode.
func imagesFixture() fixture {
	var fs fieldSet
	add := func(name string, o imagefield.Options, column string, optional bool) {
		f, err := imagefield.New(name, o)
		fs.add(f, err, column, optional)
	}
	add("raw", imagefield.Options{Mode: imagefield.ModeRaw}, "img", false)
	add("gray", imagefield.Options{Mode: imagefield.ModeRaw, Channels: 1, MaxResolution: 32}, "img", false)
	add("jpeg", imagefield.Options{Mode: imagefield.ModeJPEG, JPEGQuality: 85}, "img", false)
	add("png", imagefield.Options{Mode: imagefield.ModePNG, Channels: 4}, "rgba", true)
	add("smart", imagefield.Options{Mode: imagefield.ModeSmart, MaxResolution: 40}, "img", false)
	fl, err := encoders.NewInt("label")
	fs.add(fl, err, "label", false)

	rng := rand.New(rand.NewPCG(3, 4))
	sizes := [][2]int{{1, 1}, {37, 23}, {64, 48}, {80, 60}, {16, 90}, {50, 50}, {3, 7}, {45, 31}}
	var ss []sample.Sample
	for i, wh := range sizes {
		vals := map[string]sample.Value{
			"img":   {Kind: sample.KindBytes, Bytes: pngBytes(testImage(rng, wh[0], wh[1], false)), Name: fmt.Sprintf("img%d.png", i)},
			"label": {Kind: sample.KindInt, Int: int64(i % 3)},
		}
		if i != 2 {
			vals["rgba"] = sample.Value{Kind: sample.KindBytes, Bytes: pngBytes(testImage(rng, wh[1], wh[0], true)), Name: fmt.Sprintf("rgba%d.png", i)}
		}
		ss = append(ss, mk(i, vals))
	}
	return fixture{name: "images", fields: fs.b, samples: ss, err: fs.err}
}

// wavBytes returns a 16-bit PCM WAV of a few tones.
func wavBytes(rng *rand.Rand, frames, channels, rate int) ([]byte, error) {
	ints := make([]int32, frames*channels)
	f0 := 100 + rng.Float64()*900
	for i := range frames {
		for c := range channels {
			v := 12000*math.Sin(2*math.Pi*f0*float64(i)/float64(rate)*float64(c+1)) + float64(rng.IntN(200)-100)
			ints[i*channels+c] = int32(v)
		}
	}
	if frames > 3 {
		ints[0], ints[1] = 32767, -32768 // full scale
	}
	return wav.Encode(wav.Format{SampleRate: rate, Channels: channels, Source: wav.PCM, ValidBits: 16}, ints, nil)
}

// audioFixture: waveforms as int16, int32, float32, mono, and FLAC.
func audioFixture() fixture {
	var fs fieldSet
	add := func(f *audiofield.Field, err error) { fs.add(f, err, "wav", false) }
	add(audiofield.NewWaveform("pcm16", audiofield.Options{Format: audiofield.Int16}))
	add(audiofield.NewWaveform("pcm32", audiofield.Options{Format: audiofield.Int32}))
	add(audiofield.NewWaveform("f32", audiofield.Options{Format: audiofield.Float32}))
	add(audiofield.NewWaveform("mono", audiofield.Options{Format: audiofield.Int16, Mono: true}))
	add(audiofield.NewCompressed("flac", audiofield.Options{}))

	rng := rand.New(rand.NewPCG(5, 6))
	var ss []sample.Sample
	for i := range 6 {
		frames := []int{1, 100, 700, 2500, 64, 1500}[i]
		ch := 1 + i%2
		b, err := wavBytes(rng, frames, ch, 8000+1000*i)
		if err != nil {
			return fixture{name: "audio", err: err}
		}
		ss = append(ss, mk(i, map[string]sample.Value{"wav": {Kind: sample.KindBytes, Bytes: b, Name: fmt.Sprintf("a%d.wav", i)}}))
	}
	return fixture{name: "audio", fields: fs.b, samples: ss, err: fs.err}
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }
