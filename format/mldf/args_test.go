package mldf_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// argsVectorsPath holds the argument vectors of TestArgsVectors, read by the Python reader's
// tests (python/tests/test_args.py): the one definition of the layouts (args.go) checks the
// Python decoders of python/mldf/_format.py.
var argsVectorsPath = filepath.Join("..", "..", "testdata", "golden", "args.json")

// argsVector is one field's arguments: the bytes Marshal writes and the dict the Python
// reader's decode_arguments must return for them.
type argsVector struct {
	Name string         `json:"name"`
	Type mldf.TypeID    `json:"type_id"`
	Hex  string         `json:"hex"`
	Want map[string]any `json:"want"`
}

// Names the Python reader gives to the ids (docs/fields/image.md, audio.md).
var (
	imageModes   = map[uint8]string{mldf.ImageArgRaw: "raw", mldf.ImageArgJPEG: "jpeg", mldf.ImageArgPNG: "png", mldf.ImageArgSmart: "smart"}
	imageFilters = map[uint8]string{1: "nearest", 2: "box", 3: "linear", 4: "catmullrom", 5: "mitchell", 6: "lanczos"}
	audioFormats = map[uint8]string{mldf.AudioInt16: "int16", mldf.AudioInt32: "int32", mldf.AudioFloat32: "float32", mldf.AudioFLAC: "flac"}
)

func imageVector(name string, t mldf.TypeID, a mldf.ImageArgs) argsVector {
	return argsVector{Name: name, Type: t, Hex: hexArgs(a.Marshal()), Want: map[string]any{
		"version": mldf.ArgsVersion, "mode": imageModes[a.Mode], "jpeg_quality": a.JPEGQuality, "channels": a.Channels,
		"max_resolution": a.MaxResolution, "filter": imageFilters[a.Filter],
		"exif_orientation": a.Flags&mldf.ImageFlagExifOrientation != 0, "subsampling": "4:2:0", "max_pixels": a.MaxPixels,
	}}
}

func audioVector(name string, t mldf.TypeID, a mldf.AudioArgs) argsVector {
	onLong := "truncate"
	if a.SkipLong {
		onLong = "skip"
	}
	return argsVector{Name: name, Type: t, Hex: hexArgs(a.Marshal()), Want: map[string]any{
		"version": mldf.ArgsVersion, "format": audioFormats[a.Format], "mono": a.Mono, "on_long": onLong,
		"sample_rate": a.SampleRate, "max_duration": a.MaxDuration, "bit_depth": a.BitDepth, "passthrough": a.Passthrough,
		"resampler": "kaiser-sinc", "stopband_db": a.StopbandDB, "passband": float64(a.Passband) / 1000,
	}}
}

func textVector(name string, t mldf.TypeID, a mldf.TextArgs) argsVector {
	return argsVector{Name: name, Type: t, Hex: hexArgs(a.Marshal()), Want: map[string]any{
		"version": mldf.ArgsVersion, "width": a.Width, "end": a.Flags&mldf.TextFlagEnd != 0,
		"pad_last": a.Flags&mldf.TextFlagPadLast != 0, "end_id": a.EndID, "vocab_size": a.VocabSize,
		"seq_len": a.SeqLen, "pad_id": a.PadID, "tokenizer": a.Tokenizer,
	}}
}

func ndarrayVector(name string, a mldf.NDArrayArgs) argsVector {
	want := map[string]any{"version": mldf.ArgsVersion, "layout": "npy"}
	if a.Layout == mldf.NDArrayFixed {
		want = map[string]any{"version": mldf.ArgsVersion, "layout": "fixed", "dtype": a.DType, "shape": a.Shape}
	}
	return argsVector{Name: name, Type: mldf.TypeNDArray, Hex: hexArgs(a.Marshal()), Want: want}
}

func hexArgs(b [mldf.ArgumentsSize]byte) string {
	n := len(b)
	for n > 1 && b[n-1] == 0 {
		n--
	}
	return hex.EncodeToString(b[:n])
}

func argsVectors() []argsVector {
	var cl [mldf.ArgumentsSize]byte
	mldf.ClassLabelArgs{NumClasses: 1000, NamesHash: 0x0123456789abcdef, NamesPtr: 4096, NamesSize: 777}.Put(&cl)
	return []argsVector{
		imageVector("image jpeg", mldf.TypeImageJPEG, mldf.ImageArgs{Mode: mldf.ImageArgJPEG, JPEGQuality: 90, Channels: 3,
			MaxResolution: 512, Filter: 2, Flags: mldf.ImageFlagExifOrientation, MaxPixels: -1}),
		imageVector("image smart", mldf.TypeImageJPEG, mldf.ImageArgs{Mode: mldf.ImageArgSmart, JPEGQuality: 75, Channels: 1,
			MaxResolution: 70000, Filter: 6, MaxPixels: 1 << 40}),
		imageVector("image raw rgba", mldf.TypeImageRaw, mldf.ImageArgs{Mode: mldf.ImageArgRaw, JPEGQuality: 1, Channels: 4, Filter: 3, MaxPixels: 89478485}),
		audioVector("audio pcm", mldf.TypeAudioWaveform, mldf.AudioArgs{Format: mldf.AudioInt16, Mono: true, SampleRate: 16000,
			MaxDuration: 12.5, BitDepth: 16, Resampler: mldf.AudioResamplerKaiser, StopbandDB: 80, Passband: 900}),
		audioVector("audio flac", mldf.TypeAudioCompressed, mldf.AudioArgs{Format: mldf.AudioFLAC, SkipLong: true, SampleRate: 48000,
			BitDepth: 24, Passthrough: true, Resampler: mldf.AudioResamplerKaiser, StopbandDB: 100, Passband: 950}),
		textVector("text tokenized", mldf.TypeTextTokenized, mldf.TextArgs{Width: 4, Flags: mldf.TextFlagEnd, EndID: 100257,
			VocabSize: 100277, Tokenizer: "cl100k_base"}),
		textVector("text packed", mldf.TypeTextPacked, mldf.TextArgs{Width: 2, Flags: mldf.TextFlagEnd | mldf.TextFlagPadLast,
			EndID: 50256, VocabSize: 50257, SeqLen: 2048, PadID: 65535, Tokenizer: "gpt2"}),
		{Name: "text raw", Type: mldf.TypeTextRaw, Hex: hexArgs(mldf.TextArgs{}.Marshal()), Want: map[string]any{"version": mldf.ArgsVersion}},
		ndarrayVector("ndarray fixed", mldf.NDArrayArgs{Layout: mldf.NDArrayFixed, DType: "<f4", Shape: []uint64{3, 224, 1 << 33}}),
		ndarrayVector("ndarray fixed 8 dims", mldf.NDArrayArgs{Layout: mldf.NDArrayFixed, DType: "|u1", Shape: []uint64{1, 2, 3, 4, 5, 6, 7, 8}}),
		ndarrayVector("ndarray npy", mldf.NDArrayArgs{Layout: mldf.NDArrayNPY}),
		{Name: "int class label", Type: mldf.TypeInt, Hex: hexArgs(cl), Want: map[string]any{"version": mldf.ArgsVersion,
			"kind": "class_label", "num_classes": 1000, "names_hash": uint64(0x0123456789abcdef), "names_ptr": 4096, "names_size": 777}},
	}
}

// TestArgsVectors: the vectors in testdata/golden/args.json are the ones the typed layouts
// give (go test ./format/mldf -run ArgsVectors -update rewrites them), and each decodes back
// to its value.
func TestArgsVectors(t *testing.T) {
	vs := argsVectors()
	b, err := json.MarshalIndent(vs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile(argsVectorsPath, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(argsVectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b) {
		t.Fatalf("%s differs from the layouts of args.go (go test ./format/mldf -run ArgsVectors -update)", argsVectorsPath)
	}
}

// TestArgsRoundTrip: Unmarshal(Marshal(v)) == v for every layout, and Unmarshal refuses
// another version, reserved image bytes and a fixed NDARRAY of more than 8 dimensions.
func TestArgsRoundTrip(t *testing.T) {
	img := mldf.ImageArgs{Mode: mldf.ImageArgSmart, JPEGQuality: 90, Channels: 3, MaxResolution: 1 << 20, Filter: 6,
		Flags: mldf.ImageFlagExifOrientation, MaxPixels: -1}
	aud := mldf.AudioArgs{Format: mldf.AudioFLAC, Mono: true, SkipLong: true, SampleRate: 44100, MaxDuration: math.Pi,
		BitDepth: 24, Passthrough: true, Resampler: 1, StopbandDB: 80, Passband: 900}
	txt := mldf.TextArgs{Width: 4, Flags: 3, EndID: 1, VocabSize: 2, SeqLen: 3, PadID: 4, Tokenizer: "o200k_base"}
	nd := mldf.NDArrayArgs{Layout: mldf.NDArrayFixed, DType: "<c16", Shape: []uint64{1, 2, 3, 4, 5, 6, 7, 8}}
	var img2 mldf.ImageArgs
	var aud2 mldf.AudioArgs
	var txt2 mldf.TextArgs
	var nd2 mldf.NDArrayArgs
	for _, c := range []struct {
		in, out any
		err     error
	}{
		{img, &img2, img2.Unmarshal(img.Marshal())},
		{aud, &aud2, aud2.Unmarshal(aud.Marshal())},
		{txt, &txt2, txt2.Unmarshal(txt.Marshal())},
		{nd, &nd2, nd2.Unmarshal(nd.Marshal())},
	} {
		if c.err != nil || !reflect.DeepEqual(c.in, reflect.ValueOf(c.out).Elem().Interface()) {
			t.Errorf("%T: %v, %+v", c.in, c.err, c.out)
		}
	}
	bad := func(f func(*[mldf.ArgumentsSize]byte)) [mldf.ArgumentsSize]byte {
		b := img.Marshal()
		f(&b)
		return b
	}
	for name, err := range map[string]error{
		"image version 2":   img2.Unmarshal(bad(func(b *[mldf.ArgumentsSize]byte) { b[0] = 2 })),
		"image reserved":    img2.Unmarshal(bad(func(b *[mldf.ArgumentsSize]byte) { b[100] = 1 })),
		"image reserved 11": img2.Unmarshal(bad(func(b *[mldf.ArgumentsSize]byte) { b[11] = 1 })),
		"audio version 0":   aud2.Unmarshal([mldf.ArgumentsSize]byte{}),
		"text version 0":    txt2.Unmarshal([mldf.ArgumentsSize]byte{}),
		"ndarray 9 dims":    nd2.Unmarshal(func() [mldf.ArgumentsSize]byte { b := nd.Marshal(); b[18] = 9; return b }()),
	} {
		if !errors.Is(err, mldf.ErrArgs) {
			t.Errorf("%s: %v, want ErrArgs", name, err)
		}
	}
}
