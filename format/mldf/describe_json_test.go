package mldf

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDecodeArguments: every argument layout decodes to its options, with names; bytes that
// do not decode, and layouts no field type defines, are given in hex with the reason.
func TestDecodeArguments(t *testing.T) {
	var junk [ArgumentsSize]byte
	junk[0], junk[5] = 7, 0xab
	badNDim := NDArrayArgs{Layout: NDArrayFixed, DType: "<f4", Shape: []uint64{2}}.Marshal()
	badNDim[ndarrayNDimAt] = MaxNDArrayDims + 1
	for _, c := range []struct {
		name string
		t    TypeID
		a    [ArgumentsSize]byte
		want string
	}{
		{"zero", TypeInt, [ArgumentsSize]byte{}, `null`},
		{"image", TypeImageJPEG, ImageArgs{Mode: ImageArgSmart, JPEGQuality: 90, Channels: 3, MaxResolution: 256, Filter: 1, Flags: ImageFlagExifOrientation, MaxPixels: -1}.Marshal(),
			`{"kind":"image","version":1,"mode":"smart","jpeg_quality":90,"channels":3,"max_resolution":256,"filter_id":1,"exif_orientation":true,"subsampling":"4:2:0","max_pixels":-1}`},
		{"audio", TypeAudioCompressed, AudioArgs{Format: AudioFLAC, Mono: true, SkipLong: true, SampleRate: 16000, MaxDuration: 1.5, BitDepth: 16, Resampler: AudioResamplerKaiser}.Marshal(),
			`{"kind":"audio","version":1,"sample_format":"flac","mono":true,"on_long":"skip","sample_rate":16000,"max_duration_seconds":1.5,"bit_depth":16,"passthrough":false,"resampler":"kaiser","stopband_db":0,"passband_permille":0}`},
		{"text", TypeTextPacked, TextArgs{Width: 4, Flags: TextFlagEnd, EndID: 9, VocabSize: 10, SeqLen: 64, Tokenizer: "cl100k_base"}.Marshal(),
			`{"kind":"text","version":1,"token_width":4,"append_end":true,"pad_last":false,"end_id":9,"vocab_size":10,"seq_len":64,"pad_id":0,"tokenizer":"cl100k_base"}`},
		{"raw text", TypeTextRaw, TextArgs{}.Marshal(), `{"kind":"text","version":1}`},
		{"ndarray", TypeNDArray, NDArrayArgs{Layout: NDArrayFixed, DType: "<f4", Shape: []uint64{3, 1 << 60}}.Marshal(),
			`{"kind":"ndarray","version":1,"layout":"fixed","dtype":"\u003cf4","shape":[3,"1152921504606846976"]}`},
		{"npy", TypeNDArray, NDArrayArgs{Layout: NDArrayNPY}.Marshal(), `{"kind":"ndarray","version":1,"layout":"npy"}`},
		{"class label", TypeInt, func() (a [ArgumentsSize]byte) {
			ClassLabelArgs{NumClasses: 3, NamesHash: 0x4e30ddc0be88af7b}.Put(&a)
			return a
		}(),
			`{"kind":"class_label","version":1,"num_classes":3,"names_hash":"4e30ddc0be88af7b"}`},
		{"unknown version", TypeImagePNG, junk, `{"kind":"raw","version":7,"hex":"07 00 00 00 00 ab","error":"mldf: bad field arguments: image arguments: layout version 7 (this reader knows 1)"}`},
		{"ndim", TypeNDArray, badNDim, `"kind":"raw"`},
		{"no layout", TypeMultimodal, junk, `{"kind":"raw","version":7,"hex":"07 00 00 00 00 ab"}`},
	} {
		b, err := json.Marshal(DecodeArguments(c.t, c.a))
		if err != nil || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %s %v, want %s", c.name, b, err, c.want)
		}
	}
}

// FuzzDecodeArguments: any 128 bytes of any type decode or fall back to hex, never panic, and
// encode as JSON.
func FuzzDecodeArguments(f *testing.F) {
	img := ImageArgs{Mode: 1, JPEGQuality: 90, Channels: 3}.Marshal()
	nd := NDArrayArgs{DType: "<i8", Shape: []uint64{1, 2}}.Marshal()
	f.Add(uint16(TypeImageJPEG), img[:])
	f.Add(uint16(TypeNDArray), nd[:])
	f.Fuzz(func(t *testing.T, typ uint16, b []byte) {
		var a [ArgumentsSize]byte
		copy(a[:], b)
		if _, err := json.Marshal(DecodeArguments(TypeID(typ), a)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestEnumNames: every one-byte code the JSON names has its name, and a code this reader does
// not know is shown with its number.
func TestEnumNames(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{imageArgModeName(ImageArgRaw), "raw"}, {imageArgModeName(ImageArgJPEG), "jpeg"},
		{imageArgModeName(ImageArgPNG), "png"}, {imageArgModeName(ImageArgSmart), "smart"}, {imageArgModeName(9), "mode(9)"},
		{subsamplingName(0), "4:2:0"}, {subsamplingName(2), "subsampling(2)"},
		{audioFormatName(AudioInt16), "int16"}, {audioFormatName(AudioInt32), "int32"},
		{audioFormatName(AudioFloat32), "float32"}, {audioFormatName(AudioFLAC), "flac"}, {audioFormatName(0), "format(0)"},
		{resamplerName(0), "none"}, {resamplerName(AudioResamplerKaiser), "kaiser"}, {resamplerName(7), "resampler(7)"},
		{imageMetaModeName(ImageModeRaw), "raw"}, {imageMetaModeName(ImageModeJPEG), "jpeg"},
		{imageMetaModeName(ImageModePNG), "png"}, {imageMetaModeName(3), "mode(3)"},
		{audioCodecName(AudioCodecPCM), "pcm"}, {audioCodecName(AudioCodecFLAC), "flac"}, {audioCodecName(255), "codec(255)"},
		{textEncodingName(TextUTF8), "utf-8"}, {textEncodingName(TextTokens32), "tokens32"},
		{textEncodingName(TextTokens16), "tokens16"}, {textEncodingName(3), "encoding(3)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
