package export

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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
	"github.com/mldf/convert/sources/tarsrc"
)

// sliceSource yields fixed samples.
type sliceSource []sample.Sample

func (s sliceSource) Len() int64 { return int64(len(s)) }
func (s sliceSource) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for _, x := range s {
		if err := emit(x); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func pngBytes(t testing.TB, w, h int, seed int) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.NRGBA{uint8(x*7 + seed), uint8(y*13 + seed), uint8(seed * 31), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func npyBytes(descr string, shape []uint64, data []byte) []byte { return npyFile(descr, shape, data) }

// buildAll writes an MLDF file with a field of every kind the encoders write.
func buildAll(t *testing.T, n int) string {
	t.Helper()
	var fields []encoders.Field
	add := func(f encoders.Field, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		fields = append(fields, f)
	}
	add(encoders.NewInt("label"))
	add(encoders.NewFloat("score"))
	add(textfield.NewRaw("caption"))
	add(encoders.NewJSON("meta"))
	add(encoders.NewBytes("blob"))
	add(encoders.NewNDArray("arr", "<f4", []uint64{2, 3}))
	add(encoders.NewNDArray("anyarr", "", nil))
	add(imagefield.New("image", imagefield.Options{Mode: imagefield.ModeRaw}))
	add(imagefield.New("thumb", imagefield.Options{Mode: imagefield.ModeJPEG}))
	add(audiofield.NewWaveform("wave16", audiofield.Options{Format: audiofield.Int16}))
	add(audiofield.NewWaveform("wavef", audiofield.Options{Format: audiofield.Float32}))
	add(audiofield.NewCompressed("flac", audiofield.Options{}))
	add(textfield.NewTokenized("tokens", textfield.TokenizedOptions{}))

	var samples []sample.Sample
	for i := range n {
		ints := make([]int32, 2*(50+i))
		for k := range ints {
			ints[k] = int32((k*97 + i*1000) % 20000)
		}
		wavIn := must[[]byte](t)(wav.Encode(wav.Format{SampleRate: 8000, Channels: 2, Source: wav.PCM, ValidBits: 16}, ints, nil))
		arr := make([]byte, 24)
		for k := 0; k < 6; k++ {
			binary.LittleEndian.PutUint32(arr[4*k:], math.Float32bits(float32(i)+float32(k)/4))
		}
		anyShape := []uint64{uint64(i%3 + 1)}
		samples = append(samples, sample.Sample{Index: int64(i), Key: strconv.Itoa(i), Origin: fmt.Sprintf("s%d", i),
			Values: sample.ColumnsOf(map[string]sample.Value{
				"label":   {Kind: sample.KindInt, Int: int64(i % 4)},
				"score":   {Kind: sample.KindFloat, Float: float64(i)/3 - 1},
				"caption": {Kind: sample.KindString, Bytes: []byte(fmt.Sprintf("a caption. № %d", i))},
				"meta":    {Kind: sample.KindJSON, Bytes: []byte(fmt.Sprintf(`{"i":%d}`, i))},
				"blob":    {Kind: sample.KindBytes, Bytes: bytes.Repeat([]byte{byte(i), 0}, i)},
				"arr":     {Kind: sample.KindBytes, Bytes: npyBytes("<f4", []uint64{2, 3}, arr)},
				"anyarr":  {Kind: sample.KindBytes, Bytes: npyBytes("<i2", anyShape, make([]byte, 2*anyShape[0]))},
				"image":   {Kind: sample.KindBytes, Name: "x.png", Bytes: pngBytes(t, 5+i, 4, i)},
				"thumb":   {Kind: sample.KindBytes, Name: "y.png", Bytes: pngBytes(t, 8, 8, i)},
				"wave16":  {Kind: sample.KindBytes, Name: "a.wav", Bytes: wavIn},
				"wavef":   {Kind: sample.KindBytes, Name: "a.wav", Bytes: wavIn},
				"flac":    {Kind: sample.KindBytes, Name: "a.wav", Bytes: wavIn},
				"tokens":  {Kind: sample.KindString, Bytes: []byte(fmt.Sprintf("hello world %d", i))},
			})})
	}
	var bind []pipeline.Binding
	for _, f := range fields {
		bind = append(bind, pipeline.Binding{Field: f, Column: f.Name()})
	}
	out := filepath.Join(t.TempDir(), "all.mldf")
	rep, err := pipeline.Run(context.Background(), pipeline.Config{Source: sliceSource(samples), Fields: bind,
		Output: out, PageSize: 4096, Workers: 2, Checksums: true, OnError: pipeline.Fail})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Samples != int64(n) {
		t.Fatalf("%d samples written, want %d", rep.Samples, n)
	}
	return out
}

// readTars returns the members of the shards in dir, in order, and the shard names.
func readTars(t *testing.T, dir string) ([]string, map[string][]byte, []string) {
	t.Helper()
	shards, _ := filepath.Glob(filepath.Join(dir, "*.tar"))
	sort.Strings(shards)
	var order []string
	members := map[string][]byte{}
	for _, s := range shards {
		f := must[*os.File](t)(os.Open(s))
		tr := tar.NewReader(f)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			if h.Mode != 0o644 || h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != 0 || h.Typeflag != tar.TypeReg {
				t.Fatalf("%s: header %+v not fixed", h.Name, h)
			}
			b := must[[]byte](t)(io.ReadAll(tr))
			if _, dup := members[h.Name]; dup {
				t.Fatalf("member %s twice", h.Name)
			}
			order = append(order, h.Name)
			members[h.Name] = b
		}
		f.Close()
	}
	return order, members, shards
}

func TestWebDatasetEveryKind(t *testing.T) {
	const n = 7
	file := buildAll(t, n)
	r := must[*mldf.Reader](t)(mldf.Open(file))
	defer r.Close()
	dir := filepath.Join(t.TempDir(), "out")
	res, err := WebDataset(context.Background(), r, dir, WebDatasetOptions{Image: "image", ShardSamples: 3})
	if err != nil {
		t.Fatal(err)
	}
	wantMembers := map[string]string{"label": "cls", "score": "score.txt", "caption": "txt", "meta": "json", "blob": "bin",
		"arr": "arr.npy", "anyarr": "anyarr.npy", "tokens": "tokens.npy", "image": "jpg|png", "thumb": "thumb.jpg|png",
		"wave16": "wave16.wav", "wavef": "wavef.wav", "flac": "flac"}
	if fmt.Sprint(res.Members) != fmt.Sprint(wantMembers) {
		t.Fatalf("members %v\nwant %v", res.Members, wantMembers)
	}
	order, m, shards := readTars(t, dir)
	if len(shards) != 3 || res.Files != 3 || res.Samples != n {
		t.Fatalf("%d shards (%+v), want 3 of at most 3 samples", len(shards), res)
	}
	if filepath.Base(shards[0]) != "shard-000000.tar" {
		t.Fatalf("first shard %s", shards[0])
	}
	if len(order) != n*len(r.Fields()) {
		t.Fatalf("%d members, want %d", len(order), n*len(r.Fields()))
	}
	for i := range n {
		key := fmt.Sprintf("%06d", i)
		get := func(suffix string) []byte {
			b, ok := m[key+"."+suffix]
			if !ok {
				t.Fatalf("no member %s.%s", key, suffix)
			}
			return b
		}
		fi := func(name string) int { return r.FieldIndex(name) }
		payload := func(name string) []byte { return must[[]byte](t)(r.Payload(i, fi(name))) }
		if v := must[int64](t)(r.Int(i, fi("label"))); string(get("cls")) != strconv.FormatInt(v, 10) {
			t.Errorf("sample %d cls %q, want %d", i, get("cls"), v)
		}
		if v := must[float64](t)(r.Float(i, fi("score"))); must[float64](t)(strconv.ParseFloat(string(get("score.txt")), 64)) != v {
			t.Errorf("sample %d score %q, want %v", i, get("score.txt"), v)
		}
		for suffix, field := range map[string]string{"txt": "caption", "json": "meta", "bin": "blob", "flac": "flac", "anyarr.npy": "anyarr", "thumb.jpg": "thumb"} {
			if p := payload(field); !bytes.Equal(get(suffix), p) {
				t.Errorf("sample %d %s: member differs from the payload (%d vs %d bytes)", i, suffix, len(get(suffix)), len(p))
			}
		}
		// Fixed ndarray: a .npy with the field's dtype and shape around the payload.
		arr := must[encoders.NPY](t)(encoders.ParseNPY(get("arr.npy")))
		if arr.Descr != "<f4" || fmt.Sprint(arr.Shape) != "[2 3]" || !bytes.Equal(arr.Data, payload("arr")) {
			t.Errorf("sample %d arr.npy: %s %v", i, arr.Descr, arr.Shape)
		}
		// Tokens: a 1-D .npy of the ids.
		tm, tp := must2[mldf.TextMeta](t)(r.Text(i, fi("tokens")))
		tok := must[encoders.NPY](t)(encoders.ParseNPY(get("tokens.npy")))
		wantDescr := map[uint8]string{mldf.TextTokens16: "<u2", mldf.TextTokens32: "<u4"}[tm.Encoding]
		if tok.Descr != wantDescr || len(tok.Shape) != 1 || !bytes.Equal(tok.Data, tp) {
			t.Errorf("sample %d tokens.npy: %s %v", i, tok.Descr, tok.Shape)
		}
		// Raw image: a PNG of the same pixels.
		im, ip := must2[mldf.ImageMeta](t)(r.Image(i, fi("image")))
		dec := must[image.Image](t)(png.Decode(bytes.NewReader(get("png"))))
		if dec.Bounds().Dx() != int(im.Width) || dec.Bounds().Dy() != int(im.Height) || im.Channels != 3 {
			t.Fatalf("sample %d png %v, meta %+v", i, dec.Bounds(), im)
		}
		for y := range int(im.Height) {
			for x := range int(im.Width) {
				r8, g8, b8, _ := dec.At(x, y).RGBA()
				o := (y*int(im.Width) + x) * 3
				if uint8(r8>>8) != ip[o] || uint8(g8>>8) != ip[o+1] || uint8(b8>>8) != ip[o+2] {
					t.Fatalf("sample %d pixel %d,%d differs", i, x, y)
				}
			}
		}
		// Waveforms: a WAV header the WAV parser accepts, around the payload.
		for _, c := range []struct {
			field string
			enc   wav.Encoding
			bits  int
		}{{"wave16", wav.PCM, 16}, {"wavef", wav.Float, 32}} {
			am, ap := must2[mldf.AudioMeta](t)(r.Audio(i, fi(c.field)))
			f, data, err := wav.Header(get(c.field + ".wav"))
			if err != nil {
				t.Fatalf("sample %d %s.wav: %v", i, c.field, err)
			}
			if f.Source != c.enc || f.ValidBits != c.bits || f.Channels != int(am.NumChannels) || f.SampleRate != int(am.SampleRate) || !bytes.Equal(data, ap) {
				t.Errorf("sample %d %s.wav: format %+v, meta %+v", i, c.field, f, am)
			}
		}
	}

	// The same file exports to identical bytes.
	dir2 := filepath.Join(t.TempDir(), "again")
	if _, err := WebDataset(context.Background(), r, dir2, WebDatasetOptions{Image: "image", ShardSamples: 3}); err != nil {
		t.Fatal(err)
	}
	for _, s := range shards {
		a := must[[]byte](t)(os.ReadFile(s))
		b := must[[]byte](t)(os.ReadFile(filepath.Join(dir2, filepath.Base(s))))
		if !bytes.Equal(a, b) {
			t.Fatalf("%s differs between two exports", filepath.Base(s))
		}
	}
	// No temporary files are left.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Fatalf("left %s", e.Name())
		}
	}
}

func must2[M any](t *testing.T) func(M, []byte, error) (M, []byte) {
	return func(m M, p []byte, err error) (M, []byte) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m, p
	}
}

func TestShardSize(t *testing.T) {
	file := buildAll(t, 9)
	r := must[*mldf.Reader](t)(mldf.Open(file))
	defer r.Close()
	dir := filepath.Join(t.TempDir(), "s")
	const limit = 8 << 10
	res, err := WebDataset(context.Background(), r, dir, WebDatasetOptions{Image: "image", ShardSize: limit})
	if err != nil {
		t.Fatal(err)
	}
	_, _, shards := readTars(t, dir)
	if len(shards) < 2 || len(shards) != res.Files {
		t.Fatalf("%d shards for %d bytes at %d per shard", len(shards), res.Bytes, limit)
	}
	var total int64
	for _, s := range shards {
		st := must[os.FileInfo](t)(os.Stat(s))
		total += st.Size()
		// A shard is over the limit only when it holds one sample.
		if st.Size() > limit {
			_, m, _ := readTarsOne(t, s)
			keys := map[string]bool{}
			for name := range m {
				keys[name[:strings.IndexByte(name, '.')]] = true
			}
			if len(keys) != 1 {
				t.Fatalf("%s is %d bytes with %d samples", s, st.Size(), len(keys))
			}
		}
	}
	if total != res.Bytes {
		t.Fatalf("result says %d bytes, files hold %d", res.Bytes, total)
	}
}

func readTarsOne(t *testing.T, shard string) ([]string, map[string][]byte, []string) {
	dir := t.TempDir()
	if err := os.Link(shard, filepath.Join(dir, "x.tar")); err != nil {
		b := must[[]byte](t)(os.ReadFile(shard))
		if err := os.WriteFile(filepath.Join(dir, "x.tar"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return readTars(t, dir)
}

func TestFolderRawImages(t *testing.T) {
	file := buildAll(t, 6)
	r := must[*mldf.Reader](t)(mldf.Open(file))
	defer r.Close()
	dir := filepath.Join(t.TempDir(), "f")
	res, err := Folder(context.Background(), r, dir, FolderOptions{Image: "image"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Samples != 6 || res.Files != 6 || len(res.Ignored) != len(r.Fields())-2 {
		t.Fatalf("result %+v", res)
	}
	for i := range 6 {
		label := must[int64](t)(r.Int(i, r.FieldIndex("label")))
		path := filepath.Join(dir, fmt.Sprintf("%04d", label), fmt.Sprintf("%06d.png", i))
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, p := must2[mldf.ImageMeta](t)(r.Image(i, r.FieldIndex("image")))
		want := must[[]byte](t)(rawToPNG(m, p))
		if !bytes.Equal(b, want) {
			t.Fatalf("%s differs", path)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
			t.Fatalf("%s mode %v", path, st.Mode())
		}
	}
	// JPEG field: files as stored.
	dir2 := filepath.Join(t.TempDir(), "g")
	if _, err := Folder(context.Background(), r, dir2, FolderOptions{Image: "thumb"}); err != nil {
		t.Fatal(err)
	}
	b := must[[]byte](t)(os.ReadFile(filepath.Join(dir2, "0001", "000001.jpg")))
	if p := must[[]byte](t)(r.Payload(1, r.FieldIndex("thumb"))); !bytes.Equal(b, p) {
		t.Fatal("jpg differs from the payload")
	}
}

func TestErrors(t *testing.T) {
	file := buildAll(t, 3)
	r := must[*mldf.Reader](t)(mldf.Open(file))
	defer r.Close()
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "old.tar"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		run  func(dir string) error
		is   error
		msg  string
	}{
		{"two image fields", func(string) error { _, err := pickField(r, "", "none", "image", "--field", isImage); return err }, ErrField, "name one with --field"},
		{"folder image not an image", func(d string) error { _, err := Folder(ctx, r, d, FolderOptions{Image: "caption"}); return err }, ErrField, "TEXT_RAW"},
		{"folder no such field", func(d string) error { _, err := Folder(ctx, r, d, FolderOptions{Image: "nope"}); return err }, ErrField, `no field "nope"`},
		{"folder label not INT", func(d string) error {
			_, err := Folder(ctx, r, d, FolderOptions{Image: "image", Label: "score"})
			return err
		}, ErrField, "FLOAT"},
		{"non-empty dir", func(string) error { _, err := WebDataset(ctx, r, full, WebDatasetOptions{}); return err }, ErrDirNotEmpty, "old.tar"},
		{"key not text", func(d string) error { _, err := WebDataset(ctx, r, d, WebDatasetOptions{Key: "label"}); return err }, ErrField, "INT"},
		{"key with a dot", func(d string) error { _, err := WebDataset(ctx, r, d, WebDatasetOptions{Key: "caption"}); return err }, ErrValue, "sample 0"},
		{"negative shard size", func(d string) error {
			_, err := WebDataset(ctx, r, d, WebDatasetOptions{ShardSize: -1})
			return err
		}, ErrOption, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(filepath.Join(t.TempDir(), "out"))
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err %v, want %v with %q", err, c.is, c.msg)
			}
		})
	}
}

func TestKeyField(t *testing.T) {
	var samples []sample.Sample
	for i, k := range []string{"b/x1", "a", "c-9"} {
		samples = append(samples, sample.Sample{Index: int64(i), Values: sample.ColumnsOf(map[string]sample.Value{
			"__key__": {Kind: sample.KindString, Bytes: []byte(k)},
			"label":   {Kind: sample.KindInt, Int: -int64(i)},
			"text":    {Kind: sample.KindString, Bytes: nil}})})
	}
	key := must[*textfield.Raw](t)(textfield.NewRaw("__key__"))
	lab := must[*encoders.Int](t)(encoders.NewInt("label"))
	txt := must[*textfield.Raw](t)(textfield.NewRaw("text"))
	out := filepath.Join(t.TempDir(), "k.mldf")
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Source: sliceSource(samples), Output: out, PageSize: 4096,
		Fields: []pipeline.Binding{{Field: key, Column: "__key__"}, {Field: lab, Column: "label"}, {Field: txt, Column: "text"}}}); err != nil {
		t.Fatal(err)
	}
	r := must[*mldf.Reader](t)(mldf.Open(out))
	defer r.Close()
	dir := filepath.Join(t.TempDir(), "o")
	if _, err := WebDataset(context.Background(), r, dir, WebDatasetOptions{Key: "__key__"}); err != nil {
		t.Fatal(err)
	}
	order, m, _ := readTars(t, dir)
	want := []string{"b/x1.cls", "b/x1.txt", "a.cls", "a.txt", "c-9.cls", "c-9.txt"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("members %v, want %v", order, want)
	}
	if string(m["c-9.cls"]) != "-2" || len(m["a.txt"]) != 0 {
		t.Fatalf("values %q %q", m["c-9.cls"], m["a.txt"])
	}
	// A negative label has no class folder.
	_, err := Folder(context.Background(), r, filepath.Join(t.TempDir(), "f"), FolderOptions{})
	if !errors.Is(err, ErrField) { // no image field at all
		t.Fatalf("folder without image: %v", err)
	}
}

func TestCheckKey(t *testing.T) {
	for k, ok := range map[string]bool{"a": true, "a/b": true, "x.y/z": true, "": false, "a.b": false, "/a": false,
		"a//b": false, "../a": false, "a/": false, "a\x00b": false, "\xff": false, `a\b`: false} {
		if err := checkKey([]byte(k)); (err == nil) != ok {
			t.Errorf("checkKey(%q) = %v", k, err)
		}
	}
}

func TestNPYHeader(t *testing.T) {
	for _, shape := range [][]uint64{{}, {0}, {5}, {2, 3}, {1, 2, 3, 4, 5, 6, 7, 8}} {
		size := uint64(2)
		for _, d := range shape {
			size *= d
		}
		b := npyFile("<i2", shape, make([]byte, size))
		if (len(b)-int(size))%64 != 0 {
			t.Errorf("%v: header of %d bytes is not 64-aligned", shape, len(b)-int(size))
		}
		a, err := encoders.ParseNPY(b)
		if err != nil || a.Descr != "<i2" || fmt.Sprint(a.Shape) != fmt.Sprint(shape) {
			t.Errorf("%v: %v %+v", shape, err, a)
		}
	}
}

func TestRawToPNGChannels(t *testing.T) {
	for c := 1; c <= 4; c++ {
		p := make([]byte, 3*2*c)
		for k := range p {
			p[k] = byte(k * 17)
		}
		b, err := rawToPNG(mldf.ImageMeta{Width: 3, Height: 2, Channels: uint8(c)}, p)
		if err != nil {
			t.Fatal(err)
		}
		m := must[image.Image](t)(png.Decode(bytes.NewReader(b)))
		for k := 0; k < 6; k++ {
			x, y := k%3, k/3
			got := color.NRGBAModel.Convert(m.At(x, y)).(color.NRGBA)
			px := p[k*c : k*c+c]
			var want color.NRGBA
			switch c {
			case 1:
				want = color.NRGBA{px[0], px[0], px[0], 255}
			case 2:
				want = color.NRGBA{px[0], px[0], px[0], px[1]}
			case 3:
				want = color.NRGBA{px[0], px[1], px[2], 255}
			case 4:
				want = color.NRGBA{px[0], px[1], px[2], px[3]}
			}
			if got != want {
				t.Fatalf("%d channels, pixel %d: %v, want %v", c, k, got, want)
			}
		}
	}
	if _, err := rawToPNG(mldf.ImageMeta{Width: 3, Height: 2, Channels: 3}, make([]byte, 17)); !errors.Is(err, ErrValue) {
		t.Fatalf("short payload: %v", err)
	}
	if _, _, err := imageFile(mldf.ImageMeta{Mode: 9}, []byte{1}); !errors.Is(err, ErrValue) {
		t.Fatalf("bad mode: %v", err)
	}
}

func TestMemberNameCollisions(t *testing.T) {
	d := func(name string, typ mldf.TypeID) mldf.FieldDesc {
		return mldf.FieldDesc{Name: name, Type: typ}
	}
	for _, c := range []struct {
		fields []mldf.FieldDesc
		want   string // members, or the error text
	}{
		{[]mldf.FieldDesc{d("a", mldf.TypeInt), d("b", mldf.TypeInt)}, "map[a:a.cls b:b.cls]"},
		{[]mldf.FieldDesc{d("a/b", mldf.TypeFloat), d("x", mldf.TypeTextRaw)}, "map[a/b:a_b.txt x:txt]"},
		{[]mldf.FieldDesc{d("a/b", mldf.TypeFloat), d("a_b", mldf.TypeFloat)}, "both be written as KEY.a_b.txt"},
		{[]mldf.FieldDesc{d("S", mldf.TypeFloat), d("s", mldf.TypeFloat)}, "both be written as KEY.s.txt"},
		{[]mldf.FieldDesc{d("v", mldf.TypeAudioWaveform), d("f", mldf.TypeAudioCompressed), d("n", mldf.TypeNDArray)}, "map[f:flac n:npy v:wav]"},
	} {
		_, m, err := memberNames(c.fields, -1, -1, -1)
		got := fmt.Sprint(m)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%v: %s, want %s", c.fields, got, c.want)
		}
	}
}

// FuzzCheckKey: a key checkKey accepts comes back from the member names as the same key.
func FuzzCheckKey(f *testing.F) {
	for _, s := range []string{"a", "a/b", "x.y/z", "a.b", "../a", "", "a//b", "\xff", "é/ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		if checkKey([]byte(k)) != nil {
			return
		}
		key, ext, ok := tarsrc.SplitKey(k + ".jpg")
		if !ok || key != k || ext != "jpg" {
			t.Fatalf("key %q: member %q splits into %q %q %v", k, k+".jpg", key, ext, ok)
		}
	})
}

// flipCtx is a context whose Err reports Canceled from its n-th call on.
type flipCtx struct {
	context.Context
	calls, n int
}

func (c *flipCtx) Err() error {
	c.calls++
	if c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

func TestCancelLeavesNoPartialShard(t *testing.T) {
	var samples []sample.Sample
	for i := range 300 {
		samples = append(samples, sample.Sample{Index: int64(i), Values: sample.ColumnsOf(map[string]sample.Value{"label": {Kind: sample.KindInt, Int: int64(i)}})})
	}
	lab := must[*encoders.Int](t)(encoders.NewInt("label"))
	out := filepath.Join(t.TempDir(), "i.mldf")
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Source: sliceSource(samples), Output: out, PageSize: 4096,
		Fields: []pipeline.Binding{{Field: lab, Column: "label"}}}); err != nil {
		t.Fatal(err)
	}
	r := must[*mldf.Reader](t)(mldf.Open(out))
	defer r.Close()
	dir := filepath.Join(t.TempDir(), "c")
	// The second check, at sample 256, sees the cancellation with shard 25 open.
	_, err := WebDataset(&flipCtx{Context: context.Background(), n: 2}, r, dir, WebDatasetOptions{ShardSamples: 10})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 25 {
		t.Fatalf("%d entries after cancel, want the 25 complete shards", len(entries))
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "shard-") || !strings.HasSuffix(e.Name(), ".tar") {
			t.Fatalf("left %s after cancel", e.Name())
		}
	}
	order, _, _ := readTars(t, dir)
	if len(order) != 250 {
		t.Fatalf("%d members in the complete shards, want 250", len(order))
	}
}
