package decode

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/format/mldf"
)

func init() {
	mldf.RegisterCodecs(mldf.Codecs{NewDecoder: NewPayloadDecoder, ArgumentsText: ArgumentsText,
		FilterName: func(id uint8) string { return imagefield.Filter(id).String() }})
}

// ArgumentsText decodes a field's descriptor arguments for inspect and the plan; it falls
// back to hex for layouts it does not know, and is "" for arguments that are all zero.
func ArgumentsText(t mldf.TypeID, a [mldf.ArgumentsSize]byte) string {
	switch {
	case t >= mldf.TypeImageRaw && t <= mldf.TypeImagePNG:
		if o, err := imagefield.ParseArguments(a); err == nil {
			return fmt.Sprintf("mode=%s max_resolution=%d jpeg_quality=%d filter=%s channels=%d max_pixels=%d",
				o.Mode, o.MaxResolution, o.JPEGQuality, o.Filter, o.Channels, o.MaxPixels)
		}
	case t == mldf.TypeAudioWaveform || t == mldf.TypeAudioCompressed:
		if o, err := audiofield.ParseArguments(a); err == nil {
			return fmt.Sprintf("format=%s sample_rate=%d mono=%v bit_depth=%d max_duration=%g", o.Format, o.SampleRate, o.Mono, o.BitDepth, o.MaxDuration)
		}
	case t == mldf.TypeInt:
		if count, sum, ok := encoders.ParseClassLabel(a); ok {
			return fmt.Sprintf("class_label classes=%d names_hash=%016x", count, sum)
		}
	case t == mldf.TypeNDArray && a[0] == 1:
		if a[1] == encoders.NDArrayNPYFiles {
			return "layout=npy-file-per-sample"
		}
		dims := make([]string, min(int(a[18]), encoders.MaxDims))
		for i := range dims {
			dims[i] = fmt.Sprint(binary.LittleEndian.Uint64(a[24+8*i:]))
		}
		return fmt.Sprintf("layout=fixed dtype=%s shape=(%s)", strings.TrimRight(string(a[2:18]), "\x00"), strings.Join(dims, ", "))
	}
	n := len(a)
	for n > 0 && a[n-1] == 0 {
		n--
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("% x", a[:n])
}
