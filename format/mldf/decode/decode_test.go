package decode

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/wav"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
)

func picture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 5), uint8(x ^ y), 255})
		}
	}
	return img
}

func jpegBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, picture(w, h), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func pngBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, picture(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func flacBytes(t testing.TB, frames, ch int) []byte {
	s := make([]int32, frames*ch)
	for i := range s {
		s[i] = int32(i*37%2000 - 1000)
	}
	b, err := audiofield.EncodeFLAC(s, ch, 16, 16000)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func imageMeta(h, w uint16, c, mode uint8) []byte {
	m := make([]byte, mldf.ImageMetaSize)
	mldf.ImageMeta{Height: h, Width: w, Channels: c, Mode: mode}.Put(m)
	return m
}

// TestDecodeRules: every rule D1..D5 on a good payload and on payloads that break it.
func TestDecodeRules(t *testing.T) {
	d, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	jp := jpegBytes(t, 40, 30)
	// A baseline JPEG cut in the middle of its scan with an EOI appended.
	cut := append(append([]byte(nil), jp[:len(jp)*2/3]...), 0xff, 0xd9)
	pn := pngBytes(t, 12, 9)
	fl := flacBytes(t, 3000, 2)
	flacMeta := func(frames uint32, ch uint16) []byte {
		m := make([]byte, mldf.AudioMetaSize)
		mldf.AudioMeta{NumSamples: frames, SampleRate: 16000, NumChannels: ch, BitDepth: 16, Codec: 1}.Put(m)
		return m
	}
	tok := &mldf.FieldDesc{Type: mldf.TypeTextTokenized}
	tok.Arguments[0], tok.Arguments[1] = 1, 4
	binary.LittleEndian.PutUint32(tok.Arguments[8:], 1000) // vocab_size
	tokMeta := make([]byte, mldf.TextMetaSize)
	mldf.TextMeta{Encoding: 1}.Put(tokMeta)
	ids := func(v ...uint32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, x)
		}
		return b
	}
	for _, c := range []struct {
		name    string
		typ     mldf.TypeID
		desc    *mldf.FieldDesc
		meta    []byte
		payload []byte
		rule    string
	}{
		{"jpeg ok", mldf.TypeImageJPEG, nil, imageMeta(30, 40, 3, 1), jp, ""},
		{"jpeg height lies", mldf.TypeImageJPEG, nil, imageMeta(33, 40, 3, 1), jp, "D1"},
		{"jpeg truncated scan, EOI appended", mldf.TypeImageJPEG, nil, imageMeta(30, 40, 3, 1), cut, "D1"},
		{"jpeg garbage", mldf.TypeImageJPEG, nil, imageMeta(30, 40, 3, 1), []byte("not a jpeg at all"), "D1"},
		{"png ok", mldf.TypeImagePNG, nil, imageMeta(9, 12, 3, 2), pn, ""},
		{"png width lies", mldf.TypeImagePNG, nil, imageMeta(9, 13, 3, 2), pn, "D1"},
		{"png truncated", mldf.TypeImagePNG, nil, imageMeta(9, 12, 3, 2), pn[:len(pn)-20], "D1"},
		{"raw needs no decoding", mldf.TypeImageRaw, nil, imageMeta(1, 1, 3, 0), []byte{1, 2, 3}, ""},
		{"flac ok", mldf.TypeAudioCompressed, nil, flacMeta(3000, 2), fl, ""},
		{"flac frames lie", mldf.TypeAudioCompressed, nil, flacMeta(3001, 2), fl, "D2"},
		{"flac channels lie", mldf.TypeAudioCompressed, nil, flacMeta(3000, 1), fl, "D2"},
		{"flac corrupt", mldf.TypeAudioCompressed, nil, flacMeta(3000, 2), append(append([]byte(nil), fl[:len(fl)/2]...), make([]byte, 100)...), "D2"},
		{"json ok", mldf.TypeJSON, nil, nil, []byte(`{"a":[1,2]}`), ""},
		{"json too deep", mldf.TypeJSON, nil, nil, []byte(strings.Repeat("[", 513) + strings.Repeat("]", 513)), "D3"},
		{"json invalid", mldf.TypeJSON, nil, nil, []byte(`{"a":`), "D3"},
		{"text ok", mldf.TypeTextRaw, nil, nil, []byte("héllo"), ""},
		{"text not UTF-8", mldf.TypeTextRaw, nil, nil, []byte("h\xffllo"), "D4"},
		{"tokens ok", mldf.TypeTextTokenized, tok, tokMeta, ids(0, 999), ""},
		{"token outside the vocabulary", mldf.TypeTextTokenized, tok, tokMeta, ids(5, 1000), "D5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fd := c.desc
			if fd == nil {
				fd = &mldf.FieldDesc{Type: c.typ}
			}
			err := d.Decode(fd, mldf.NewFieldRules(*fd), c.meta, c.payload)
			if c.rule == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *mldf.FieldError
			if !errors.As(err, &fe) || fe.Rule != c.rule {
				t.Fatalf("%v, want rule %s", err, c.rule)
			}
		})
	}
}

// TestVerifyDecode writes a file with every decodable kind through the real encoders,
// verifies it with --decode's decoder with 1 and 2 workers, then lies about two samples: the
// lower one is reported, whatever the number of workers.
func TestVerifyDecode(t *testing.T) {
	img, _ := imagefield.New("image", imagefield.Options{Mode: imagefield.ModeJPEG})
	flac, _ := audiofield.NewCompressed("flac", audiofield.Options{})
	js, _ := encoders.NewJSON("meta")
	txt, _ := textfield.NewRaw("text")
	var ss []sample.Sample
	wavOf := func(frames int) []byte {
		s := make([]int32, frames)
		for i := range s {
			s[i] = int32(i*13%3000 - 1500)
		}
		b, err := wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, Source: wav.PCM, ValidBits: 16}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i := range 300 {
		ss = append(ss, sample.Sample{Index: int64(i), Key: "k", Values: sample.ColumnsOf(map[string]sample.Value{
			"image": {Kind: sample.KindBytes, Bytes: pngBytes(t, 8+i%5, 6+i%3)},
			"flac":  {Kind: sample.KindBytes, Bytes: wavOf(100 + i)},
			"meta":  {Kind: sample.KindJSON, Bytes: []byte(`{"i":[1,{"x":2}]}`)},
			"text":  {Kind: sample.KindString, Bytes: []byte("héllo")},
		})})
	}
	out := filepath.Join(t.TempDir(), "d.mldf")
	res, err := pipeline.Run(context.Background(), pipeline.Config{Source: sliceSource(ss), Output: out, PageSize: 4096, Checksums: true, OnError: pipeline.Fail,
		Fields: []pipeline.Binding{{Field: img, Column: "image"}, {Field: flac, Column: "flac"}, {Field: js, Column: "meta"}, {Field: txt, Column: "text"}}})
	if err != nil || res.Samples != 300 {
		t.Fatalf("%+v %v", res, err)
	}
	for _, w := range []int{1, 2, 7} {
		rep, err := mldf.VerifyFile(context.Background(), out, mldf.VerifyOptions{NewDecoder: NewPayloadDecoder, Workers: w})
		if err != nil || rep.Decoded != 4*300 {
			t.Fatalf("workers %d: %v, %d decoded", w, err, rep.Decoded)
		}
	}
	// Lie about samples 250 and 70 (different batches): 70 is reported.
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := mldf.FromBytes("lie", raw) // Meta slices raw: edits land in it
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{250, 70} {
		m := rr.Meta(i, 1)
		binary.LittleEndian.PutUint32(m[12:], binary.LittleEndian.Uint32(m[12:])+5) // FLAC frames
	}
	for _, w := range []int{1, 2, 7} {
		_, err := rr.VerifyWith(context.Background(), mldf.VerifyOptions{NewDecoder: NewPayloadDecoder, Workers: w})
		var re *mldf.RuleError
		// The metadata changed: V1 first; skip the checksum to reach D2.
		if !errors.As(err, &re) || re.Rule != "V1" {
			t.Fatalf("workers %d: %v, want V1", w, err)
		}
	}
	unsummed := unchecksum(t, raw)
	rr, err = mldf.FromBytes("lie", unsummed)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 2, 7} {
		_, err := rr.VerifyWith(context.Background(), mldf.VerifyOptions{NewDecoder: NewPayloadDecoder, Workers: w})
		var re *mldf.RuleError
		if !errors.As(err, &re) || re.Rule != "D2" || re.Sample != 70 || re.Name != "flac" {
			t.Fatalf("workers %d: %v, want D2 at sample 70, field flac", w, err)
		}
	}
}

// unchecksum returns b as a file written without checksums (flag bit 2 clear, zero header
// checksum and checks), so that an edited table reaches the rule the test targets.
func unchecksum(t *testing.T, b []byte) []byte {
	b = append([]byte(nil), b...)
	h, err := mldf.DecodeHeader(b[mldf.HeaderOffset:])
	if err != nil {
		t.Fatal(err)
	}
	hdr := b[mldf.HeaderOffset:]
	binary.LittleEndian.PutUint32(hdr[4:], mldf.FlagLittleEndian)
	binary.LittleEndian.PutUint64(hdr[mldf.HeaderChecksumOffset:], 0)
	for e := h.AllocTablePtr; e < uint64(len(b)); e += mldf.AllocEntrySize {
		binary.LittleEndian.PutUint32(b[e+12:], 0)
	}
	return b
}

// sliceSource yields fixed samples in order.
type sliceSource []sample.Sample

func (s sliceSource) Len() int64 { return int64(len(s)) }

func (s sliceSource) Run(ctx context.Context, emit func(sample.Sample) error) error {
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
