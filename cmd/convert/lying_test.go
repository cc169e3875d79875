package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/hostile"
	"github.com/mldf/convert/internal/wav"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
)

type memSamples []sample.Sample

func (s memSamples) Len() int64 { return int64(len(s)) }

func (s memSamples) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for _, x := range s {
		if err := emit(x); err != nil {
			return err
		}
	}
	return nil
}

// allKindsFile writes, through the real encoders, a 3-sample file with a field of every kind
// the field rules read: raw and JPEG images, PCM and FLAC audio, text and token ids, fixed and
// .npy arrays, JSON and an INT label.
func allKindsFile(t *testing.T, path string) {
	t.Helper()
	var b []pipeline.Binding
	add := func(f encoders.Field, err error) {
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, pipeline.Binding{Field: f})
	}
	add(imagefield.New("raw", imagefield.Options{Mode: imagefield.ModeRaw}))
	b[len(b)-1].Column = "img"
	add(imagefield.New("jpeg", imagefield.Options{Mode: imagefield.ModeJPEG}))
	b[len(b)-1].Column = "img"
	add(audiofield.NewWaveform("pcm", audiofield.Options{Format: audiofield.Int16}))
	b[len(b)-1].Column = "wav"
	add(audiofield.NewCompressed("flac", audiofield.Options{}))
	b[len(b)-1].Column = "wav"
	add(textfield.NewRaw("text"))
	b[len(b)-1].Column = "text"
	add(textfield.NewTokenized("tokens", textfield.TokenizedOptions{AppendEnd: true}))
	b[len(b)-1].Column = "text"
	add(encoders.NewNDArray("fixed", "<f4", []uint64{2, 3}))
	b[len(b)-1].Column = "fixed"
	add(encoders.NewNDArray("npy", "", nil))
	b[len(b)-1].Column = "npy"
	add(encoders.NewJSON("meta"))
	b[len(b)-1].Column = "meta"
	add(encoders.NewInt("label"))
	b[len(b)-1].Column = "label"

	var ss []sample.Sample
	for i := range 3 {
		img := image.NewNRGBA(image.Rect(0, 0, 20+i, 15))
		for k := range img.Pix {
			img.Pix[k] = uint8(k*7 + i)
		}
		for k := 3; k < len(img.Pix); k += 4 {
			img.Pix[k] = 255
		}
		var pb bytes.Buffer
		if err := png.Encode(&pb, img); err != nil {
			t.Fatal(err)
		}
		pcm := make([]int32, 400+100*i)
		for k := range pcm {
			pcm[k] = int32(math.Sin(float64(k)/7) * 9000)
		}
		w, err := wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, Source: wav.PCM, ValidBits: 16}, pcm, nil)
		if err != nil {
			t.Fatal(err)
		}
		f32 := make([]byte, 24)
		npyHdr := func(descr, shape string) []byte {
			d := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }"
			d += strings.Repeat(" ", (64-(10+len(d)+1)%64)%64) + "\n"
			return append([]byte("\x93NUMPY\x01\x00"+string([]byte{byte(len(d)), byte(len(d) >> 8)})), d...)
		}
		ss = append(ss, sample.Sample{Index: int64(i), Key: strconv.Itoa(i), Values: sample.ColumnsOf(map[string]sample.Value{
			"img":   {Kind: sample.KindBytes, Bytes: pb.Bytes(), Name: "i.png"},
			"wav":   {Kind: sample.KindBytes, Bytes: w, Name: "a.wav"},
			"text":  {Kind: sample.KindString, Bytes: []byte("hello world " + strconv.Itoa(i))},
			"fixed": {Kind: sample.KindBytes, Bytes: append(npyHdr("<f4", "(2, 3)"), f32...)},
			"npy":   {Kind: sample.KindBytes, Bytes: append(npyHdr("<i2", "(4,)"), make([]byte, 8)...)},
			"meta":  {Kind: sample.KindJSON, Bytes: []byte(`{"i": [` + strconv.Itoa(i) + `]}`)},
			"label": {Kind: sample.KindInt, Int: int64(i)},
		})})
	}
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Source: memSamples(ss), Fields: b, Output: path,
		PageSize: 4096, Workers: 1, Checksums: true, OnError: pipeline.Fail}); err != nil {
		t.Fatal(err)
	}
}

// pythonReader runs the Python reader (python/mldf) on files and returns, per file, the rule
// it names when opening, when reading sample s of field f, and when verifying ("" = none).
func pythonReader(t *testing.T, files []string, sample, field []int) []map[string]string {
	t.Helper()
	py := "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import numpy").CombinedOutput(); err != nil {
		t.Skipf("the Python reader needs %s with numpy (scripts/deps test installs it): %v %s", py, err, out)
	}
	const script = `
import json, sys
import mldf
out = []
for path, s, f in json.load(sys.stdin):
    res = {}
    try:
        r = mldf.open(path)
    except mldf.FormatError as e:
        res["open"] = e.rule
        out.append(res)
        continue
    with r:
        if s >= 0:
            try:
                r.get(s, r.fields[f].name)
            except mldf.FormatError as e:
                res["access"] = e.rule
                res["where"] = "%s/%s" % (e.sample, e.field)
        try:
            r.verify()
        except mldf.FormatError as e:
            res["verify"] = e.rule
    out.append(res)
json.dump(out, sys.stdout)
`
	var in [][3]any
	for k, f := range files {
		in = append(in, [3]any{f, sample[k], field[k]})
	}
	stdin, _ := json.Marshal(in)
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(repoRoot(t), "python"))
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python reader: %v\n%s", err, stderr.String())
	}
	var res []map[string]string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("python reader output %q: %v", out, err)
	}
	return res
}

// TestLyingHeadersEveryReader is the table of lying headers × readers: every lie of
// internal/hostile, applied once to a file of every field kind, is rejected with its rule
// named by `convert verify` (with --decode for what only decoding can tell), by the Go
// reader's accessors, by the Python reader (open, read, verify) and by `convert export`.
func TestLyingHeadersEveryReader(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.mldf")
	allKindsFile(t, base)
	if out, _, err := run(t, "verify", base, "--decode"); err != nil || !strings.Contains(out, ": OK:") {
		t.Fatalf("base: %q %v", out, err)
	}
	good, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	var samples, fields []int
	for _, l := range hostile.Lies {
		b, s, f, err := hostile.Apply(good, l)
		if err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
		p := filepath.Join(dir, l.Name+".mldf")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files, samples, fields = append(files, p), append(samples, s), append(fields, f)
	}
	names := func(f int) string {
		r, _ := mldf.Open(base)
		defer r.Close()
		return r.Fields()[f].Name
	}
	ruleIn := func(err error, rule string) bool {
		return err != nil && strings.Contains(err.Error(), "(FORMAT.md rule "+rule+")")
	}

	for k, l := range hostile.Lies {
		path, s, f := files[k], samples[k], fields[k]
		t.Run("verify/"+l.Name, func(t *testing.T) {
			args := []string{"verify", path}
			if l.Reach == hostile.Decode {
				if _, _, err := run(t, args...); err != nil {
					t.Fatalf("verify without --decode: %v (only decoding can tell)", err)
				}
				args = append(args, "--decode")
			}
			_, _, err := run(t, args...)
			if !ruleIn(err, l.Rule) {
				t.Fatalf("%v: %v, want rule %s", args, err, l.Rule)
			}
			if s >= 0 && l.Reach != hostile.Verify && !strings.Contains(err.Error(), "sample "+strconv.Itoa(s)+", field "+strconv.Itoa(f)+" \""+names(f)+"\"") {
				t.Fatalf("%v does not name sample %d, field %q", err, s, names(f))
			}
		})
		t.Run("reader/"+l.Name, func(t *testing.T) {
			r, err := mldf.Open(path)
			if l.Reach == hostile.Open {
				if !ruleIn(err, l.Rule) {
					t.Fatalf("Open: %v, want rule %s", err, l.Rule)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if s < 0 {
				return
			}
			var aerr error
			switch typ := r.Fields()[f].Type; {
			case typ >= mldf.TypeImageRaw && typ <= mldf.TypeImagePNG:
				_, _, aerr = r.Image(s, f)
			case typ == mldf.TypeAudioWaveform || typ == mldf.TypeAudioCompressed:
				_, _, aerr = r.Audio(s, f)
			case typ >= mldf.TypeTextRaw && typ <= mldf.TypeTextPacked:
				_, _, aerr = r.Text(s, f)
			default:
				_, aerr = r.Payload(s, f)
			}
			if l.Reach == hostile.Access {
				var re *mldf.RuleError
				if !errors.As(aerr, &re) || re.Rule != l.Rule || re.Sample != s || re.Field != f {
					t.Fatalf("accessor: %v, want rule %s at sample %d, field %d", aerr, l.Rule, s, f)
				}
			} else if aerr != nil {
				t.Fatalf("accessor: %v (the Go reader's accessors do not decode)", aerr)
			}
		})
		t.Run("export/"+l.Name, func(t *testing.T) {
			out := filepath.Join(dir, "export-"+l.Name)
			_, _, err := run(t, "export", path, out, "--format", "webdataset")
			if l.Reach == hostile.Decode {
				// export writes JPEG and FLAC payloads as stored, without decoding them.
				if err != nil {
					t.Fatalf("export: %v", err)
				}
				return
			}
			if !ruleIn(err, l.Rule) {
				t.Fatalf("export: %v, want rule %s", err, l.Rule)
			}
			if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
				t.Fatalf("a refused export created %s", out)
			}
			if l.Reach == hostile.Access {
				// Without the up-front verify, the value itself is refused, never guessed.
				_, _, err := run(t, "export", path, out+"-noverify", "--format", "webdataset", "--verify=false")
				if !ruleIn(err, l.Rule) || !strings.Contains(err.Error(), "sample "+strconv.Itoa(s)) {
					t.Fatalf("export --verify=false: %v, want rule %s at sample %d", err, l.Rule, s)
				}
			}
		})
	}
	t.Run("python", func(t *testing.T) {
		res := pythonReader(t, files, samples, fields)
		for k, l := range hostile.Lies {
			got := res[k]
			switch l.Reach {
			case hostile.Open:
				if got["open"] != l.Rule {
					t.Errorf("%s: Python %v, want open rule %s", l.Name, got, l.Rule)
				}
			case hostile.Access:
				if got["access"] != l.Rule || got["verify"] != l.Rule || got["where"] != strconv.Itoa(samples[k])+"/"+names(fields[k]) {
					t.Errorf("%s: Python %v, want rule %s on reading sample %d and on verify", l.Name, got, l.Rule, samples[k])
				}
			case hostile.Verify:
				if got["verify"] != l.Rule || got["access"] != "" {
					t.Errorf("%s: Python %v, want verify rule %s", l.Name, got, l.Rule)
				}
			case hostile.Decode:
				// The Python reader decodes images (with Pillow) when it reads them; FLAC only
				// with soundfile. It never passes a payload off as something it is not.
				typ := l.Type
				if typ >= mldf.TypeImageRaw && typ <= mldf.TypeImagePNG && got["access"] != l.Rule && got["access"] != "" {
					t.Errorf("%s: Python %v, want %s or nothing (Pillow missing)", l.Name, got, l.Rule)
				}
				if got["verify"] != "" {
					t.Errorf("%s: Python verify %v: it does not decode", l.Name, got)
				}
			}
		}
	})
}

// TestVerifyWithoutChecksums: a file written without checksums verifies, saying plainly that
// only the structure was verified; --require-checksums fails it.
func TestVerifyWithoutChecksums(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.mldf")
	if _, _, err := run(t, "images", "testdata/images", plain, "--mode", "jpeg", "--max-resolution", "16", "--workers", "1", "--checksums=false"); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "verify", plain)
	if err != nil || !strings.Contains(out, "structure verified; file has no checksums") {
		t.Fatalf("verify: %q %v", out, err)
	}
	if _, _, err := run(t, "verify", plain, "--require-checksums"); !errors.Is(err, errNoChecksums) {
		t.Fatalf("--require-checksums: %v", err)
	}
	summed := filepath.Join(dir, "summed.mldf")
	if _, _, err := run(t, "images", "testdata/images", summed, "--mode", "jpeg", "--max-resolution", "16", "--workers", "1"); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "verify", summed, "--require-checksums", "--decode")
	if err != nil || !strings.Contains(out, ": OK: ") || !strings.Contains(out, "payloads decoded") {
		t.Fatalf("verify: %q %v", out, err)
	}
}

// TestInspectJSONNonFinite: `inspect --sample N --json` prints NaN and ±Inf FLOAT values as
// the strings "NaN", "Infinity", "-Infinity".
func TestInspectJSONNonFinite(t *testing.T) {
	f, err := encoders.NewFloat("x")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "f.mldf")
	var ss []sample.Sample
	for i, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0.25} {
		ss = append(ss, sample.Sample{Index: int64(i), Key: strconv.Itoa(i), Values: sample.ColumnsOf(map[string]sample.Value{"x": {Kind: sample.KindFloat, Float: x}})})
	}
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Source: memSamples(ss), Fields: []pipeline.Binding{{Field: f, Column: "x"}},
		Output: path, PageSize: 4096, Workers: 1, Checksums: true, OnError: pipeline.Fail}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []any{"NaN", "Infinity", "-Infinity", 0.25} {
		out, _, err := run(t, "inspect", path, "--sample", strconv.Itoa(i), "--json")
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		var doc struct {
			Values []map[string]any `json:"values"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Values) != 1 || doc.Values[0]["float"] != want || doc.Values[0]["name"] != "x" {
			t.Fatalf("sample %d: %s (%v), want float %v", i, out, err, want)
		}
	}
}
