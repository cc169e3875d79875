package loader

import (
	"bytes"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// TestCorruptSamples: a bad payload in sample 3 gives an error naming the file, the sample
// and the field, for every decoder, with any number of threads.
func TestCorruptSamples(t *testing.T) {
	var good bytes.Buffer
	if err := jpeg.Encode(&good, testPhoto(40, 30, 1), &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	jpg := good.Bytes()
	var flacArgs [mldf.ArgumentsSize]byte
	flacArgs[0], flacArgs[1] = 1, 4
	imgMeta := mldf.ImageMeta{Width: 40, Height: 30, Channels: 3, Mode: 1}
	cases := []struct {
		name  string
		field mldf.FieldDesc
		good  tval
		bad   tval
		op    string
	}{
		{"truncated jpeg", mldf.FieldDesc{Name: "f", Type: mldf.TypeImageJPEG},
			tval{Payload: jpg, Img: imgMeta}, tval{Payload: jpg[:len(jpg)/3], Img: imgMeta}, `{"op":"RandomResizedCrop","size":16}`},
		{"jpeg smaller than its metadata", mldf.FieldDesc{Name: "f", Type: mldf.TypeImageJPEG},
			tval{Payload: jpg, Img: imgMeta}, tval{Payload: jpg, Img: mldf.ImageMeta{Width: 400, Height: 300, Channels: 3, Mode: 1}}, `{"op":"CenterCrop","size":16,"ratio":1}`},
		{"not an image", mldf.FieldDesc{Name: "f", Type: mldf.TypeImageJPEG},
			tval{Payload: jpg, Img: imgMeta}, tval{Payload: []byte("GIF89a garbage"), Img: imgMeta}, `{"op":"Resize","size":16}`},
		{"flac garbage", mldf.FieldDesc{Name: "f", Type: mldf.TypeAudioCompressed, Arguments: flacArgs},
			tval{Payload: []byte("fLaC"), Aud: mldf.AudioMeta{NumSamples: 10, SampleRate: 8000, NumChannels: 1, BitDepth: 16, Codec: 1}},
			tval{Payload: []byte("fLaC\x00\x00\x00\x22garbage"), Aud: mldf.AudioMeta{NumSamples: 10, SampleRate: 8000, NumChannels: 1, BitDepth: 16, Codec: 1}},
			`{"op":"Audio","length":8}`},
		{"npy garbage", mldf.FieldDesc{Name: "f", Type: mldf.TypeNDArray},
			tval{Payload: []byte("x")}, tval{Payload: []byte("\x93NUMPY\x01\x00garbage")}, `{"op":"NDArray","dtype":"<f4","shape":[2]}`},
		{"missing image", mldf.FieldDesc{Name: "f", Type: mldf.TypeImageJPEG},
			tval{Payload: jpg, Img: imgMeta}, tval{}, `{"op":"Resize","size":16}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeMLDF(t, t.TempDir(), 4096, []mldf.FieldDesc{c.field}, 6, func(i int) []tval {
				if i == 3 {
					return []tval{c.bad}
				}
				return []tval{c.good}
			})
			for _, threads := range []int{1, 4} {
				l := openT(t, path, Options{Threads: threads})
				p := planT(t, l, `{"fields":[{"field":"f","ops":[`+c.op+`]}]}`)
				_, err := runT(t, p, []int64{3}, 0)
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "sample 3") || !strings.Contains(err.Error(), `"f"`) {
					t.Fatalf("threads %d: err %v, want one naming %s, sample 3, field \"f\"", threads, err, path)
				}
			}
		})
	}
}
