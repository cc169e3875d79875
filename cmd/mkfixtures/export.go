package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/format/mldf"
)

// expected is the JSON a fixture's NAME.expected.json holds: what the Go reader reads.
type expected struct {
	File         string           `json:"file"`
	NumSamples   int              `json:"num_samples"`
	VersionMajor uint16           `json:"version_major"`
	VersionMinor uint16           `json:"version_minor"`
	PageSize     uint32           `json:"page_size"`
	Flags        uint32           `json:"flags"`
	Fields       []expectedField  `json:"fields"`
	Samples      []map[string]any `json:"samples"`
}

type expectedField struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	TypeID    uint16 `json:"type_id"`
	Flags     uint16 `json:"flags"`
	Arguments string `json:"arguments_b64"`
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// export writes PATH without .mldf + ".expected.json" from what the Go reader reads in path.
func export(path string) error {
	e, err := exportValues(path)
	if err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return writeFile(strings.TrimSuffix(path, ".mldf")+".expected.json", b)
}

func exportValues(path string) (*expected, error) {
	r, err := mldf.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if _, err := r.Verify(); err != nil {
		return nil, err
	}
	h := r.Header()
	e := &expected{File: filepath.Base(path), NumSamples: r.NumSamples(), VersionMajor: h.VersionMajor,
		VersionMinor: h.VersionMinor, PageSize: h.PageSize, Flags: h.Flags}
	fields := r.Fields()
	for _, f := range fields {
		e.Fields = append(e.Fields, expectedField{Name: f.Name, Type: f.Type.String(), TypeID: uint16(f.Type),
			Flags: f.Flags, Arguments: b64(f.Arguments[:])})
	}
	for i := range r.NumSamples() {
		s := map[string]any{}
		for k, f := range fields {
			v, err := exportValue(r, i, k, f)
			if err != nil {
				return nil, fmt.Errorf("%s: sample %d, field %q: %w", path, i, f.Name, err)
			}
			s[f.Name] = v
		}
		e.Samples = append(e.Samples, s)
	}
	return e, nil
}

func exportValue(r *mldf.Reader, i, k int, f mldf.FieldDesc) (map[string]any, error) {
	switch t := f.Type; {
	case t == mldf.TypeInt:
		v, err := r.Int(i, k)
		return map[string]any{"int": v}, err
	case t == mldf.TypeFloat:
		v, err := r.Float(i, k)
		return map[string]any{"bits": fmt.Sprintf("%016x", math.Float64bits(v)),
			"repr": strconv.FormatFloat(v, 'g', -1, 64)}, err
	case t == mldf.TypeBytes:
		p, err := r.Payload(i, k)
		return map[string]any{"b64": b64(p), "size": len(p)}, err
	case t == mldf.TypeJSON:
		p, err := r.Payload(i, k)
		return map[string]any{"text": string(p), "size": len(p)}, err
	case t == mldf.TypeNDArray:
		p, err := r.Payload(i, k)
		if err != nil {
			return nil, err
		}
		return exportNDArray(f, p)
	case t >= mldf.TypeImageRaw && t <= mldf.TypeImagePNG:
		m, p, err := r.Image(i, k)
		if err != nil {
			return nil, err
		}
		return exportImage(m, p)
	case t >= mldf.TypeAudioWaveform && t <= mldf.TypeAudioCodecTokens:
		m, p, err := r.Audio(i, k)
		if err != nil {
			return nil, err
		}
		return exportAudio(f, m, p)
	case t >= mldf.TypeTextRaw && t <= mldf.TypeTextHierarchical:
		m, p, err := r.Text(i, k)
		if err != nil {
			return nil, err
		}
		return exportText(m, p)
	}
	p, err := r.Payload(i, k)
	return map[string]any{"b64": b64(p), "size": len(p)}, err
}

func exportNDArray(f mldf.FieldDesc, p []byte) (map[string]any, error) {
	a := f.Arguments
	out := map[string]any{"b64": b64(p), "size": len(p), "layout": int(a[1])}
	if len(p) == 0 {
		return out, nil
	}
	switch a[1] {
	case encoders.NDArrayFixed:
		dtype := strings.TrimRight(string(a[2:18]), "\x00")
		shape := []uint64{}
		for d := range int(a[18]) {
			shape = append(shape, binary.LittleEndian.Uint64(a[24+8*d:]))
		}
		out["dtype"], out["shape"], out["data_b64"] = dtype, shape, b64(p)
	case encoders.NDArrayNPYFiles:
		arr, err := encoders.ParseNPY(p)
		if err != nil {
			return nil, err
		}
		out["dtype"], out["shape"], out["data_b64"] = arr.Descr, arr.Shape, b64(arr.Data)
	}
	return out, nil
}

func exportImage(m mldf.ImageMeta, p []byte) (map[string]any, error) {
	out := map[string]any{"height": m.Height, "width": m.Width, "channels": m.Channels, "mode": m.Mode,
		"b64": b64(p), "size": len(p)}
	switch {
	case len(p) == 0:
	case m.Mode == mldf.ImageModeRaw:
		out["pixels_b64"] = b64(p)
	case m.Mode == mldf.ImageModePNG:
		img, err := png.Decode(bytes.NewReader(p))
		if err != nil {
			return nil, err
		}
		px, err := pixels(img, int(m.Channels))
		if err != nil {
			return nil, err
		}
		out["pixels_b64"] = b64(px)
	}
	return out, nil
}

// pixels returns img as H×W×C uint8, row-major (C = 1 gray, 3 RGB, 4 RGBA with straight alpha).
func pixels(img image.Image, c int) ([]byte, error) {
	if c != 1 && c != 3 && c != 4 {
		return nil, fmt.Errorf("%d channels", c)
	}
	b := img.Bounds()
	out := make([]byte, 0, b.Dx()*b.Dy()*c)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			px := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			switch c {
			case 1:
				out = append(out, color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y)
			case 3:
				out = append(out, px.R, px.G, px.B)
			case 4:
				out = append(out, px.R, px.G, px.B, px.A)
			}
		}
	}
	return out, nil
}

func exportAudio(f mldf.FieldDesc, m mldf.AudioMeta, p []byte) (map[string]any, error) {
	out := map[string]any{"num_samples": m.NumSamples, "sample_rate": m.SampleRate, "num_channels": m.NumChannels,
		"bit_depth": m.BitDepth, "codec": m.Codec, "b64": b64(p), "size": len(p)}
	if len(p) == 0 {
		return out, nil
	}
	switch m.Codec {
	case mldf.AudioCodecPCM:
		o, err := audiofield.ParseArguments(f.Arguments)
		if err != nil {
			return nil, err
		}
		out["format"] = o.Format.String()
		var samples []any
		switch o.Format {
		case audiofield.Int16:
			for j := 0; j+2 <= len(p); j += 2 {
				samples = append(samples, int16(binary.LittleEndian.Uint16(p[j:])))
			}
		case audiofield.Int32:
			for j := 0; j+4 <= len(p); j += 4 {
				samples = append(samples, int32(binary.LittleEndian.Uint32(p[j:])))
			}
		case audiofield.Float32:
			for j := 0; j+4 <= len(p); j += 4 {
				// float32 → float64 is exact; JSON's shortest repr round-trips the float64.
				samples = append(samples, float64(math.Float32frombits(binary.LittleEndian.Uint32(p[j:]))))
			}
		default:
			return nil, fmt.Errorf("waveform format %s", o.Format)
		}
		out["samples"] = samples
	case mldf.AudioCodecFLAC:
		c, _, err := audiofield.DecodeFLAC(p)
		if err != nil {
			return nil, err
		}
		out["samples"] = c.Int
		out["decoded_bit_depth"] = c.BitDepth
	}
	return out, nil
}

func exportText(m mldf.TextMeta, p []byte) (map[string]any, error) {
	out := map[string]any{"num_tokens": m.NumTokens, "encoding": m.Encoding, "b64": b64(p), "size": len(p)}
	switch m.Encoding {
	case mldf.TextUTF8:
		out["text"] = string(p)
	case mldf.TextTokens32:
		ids := []int32{}
		for j := 0; j+4 <= len(p); j += 4 {
			ids = append(ids, int32(binary.LittleEndian.Uint32(p[j:])))
		}
		out["tokens"] = ids
	case mldf.TextTokens16:
		ids := []int16{}
		for j := 0; j+2 <= len(p); j += 2 {
			ids = append(ids, int16(binary.LittleEndian.Uint16(p[j:])))
		}
		out["tokens"] = ids
	}
	return out, nil
}
