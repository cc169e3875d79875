package beton

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
)

// sliceSource yields fixed samples; streaming hides its length.
type sliceSource struct {
	samples   []sample.Sample
	streaming bool
}

func (s sliceSource) Len() int64 {
	if s.streaming {
		return -1
	}
	return int64(len(s.samples))
}

func (s sliceSource) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for _, x := range s.samples {
		x.Values = maps(x.Values)
		if err := emit(x); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func maps(m []sample.Column) []sample.Column { return append([]sample.Column(nil), m...) }

func testJPEG(t testing.TB, w, h, seed int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x*7 + seed), uint8(y*5 + seed*3), uint8((x + y + seed) * 3), 255})
		}
	}
	var buf bytes.Buffer
	must(t, jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}))
	return buf.Bytes()
}

func npy(vals []float32) []byte {
	hdr := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }", len(vals))
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	b = append(b, hdr...)
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// testSamples makes n samples of every FFCV type; with bad, sample 5 has a corrupt image.
func testSamples(t testing.TB, n int, bad bool) []sample.Sample {
	var out []sample.Sample
	for i := range n {
		img := testJPEG(t, 16+i%13, 9+i%7, i)
		if bad && i == 5 {
			img = []byte("not an image")
		}
		v := map[string]sample.Value{
			"image": {Kind: sample.KindBytes, Bytes: img, Name: fmt.Sprintf("img%d.jpg", i)},
			"label": {Kind: sample.KindInt, Int: int64(i % 10)},
			"score": {Kind: sample.KindFloat, Float: float64(i) / 8},
			"meta":  {Kind: sample.KindJSON, Bytes: []byte(fmt.Sprintf(`{"i":%d,"s":"x%d"}`, i, i))},
			"arr":   {Kind: sample.KindBytes, Bytes: npy([]float32{float32(i), 1, 2})},
		}
		if i%4 != 0 {
			v["blob"] = sample.Value{Kind: sample.KindBytes, Bytes: bytes.Repeat([]byte{byte(i)}, i)}
		}
		out = append(out, sample.Sample{Origin: fmt.Sprintf("s%d", i), Key: fmt.Sprint(i), Values: sample.ColumnsOf(v)})
	}
	return out
}

func testBindings(t testing.TB) []pipeline.Binding {
	img, err := imagefield.New("image", imagefield.Options{Mode: imagefield.ModeJPEG, JPEGQuality: 85})
	must(t, err)
	label, err := encoders.NewInt("label")
	must(t, err)
	score, err := encoders.NewFloat("score")
	must(t, err)
	meta, err := encoders.NewJSON("meta")
	must(t, err)
	blob, err := encoders.NewBytes("blob")
	must(t, err)
	arr, err := encoders.NewNDArray("arr", "<f4", []uint64{3})
	must(t, err)
	return []pipeline.Binding{{Field: img, Column: "image"}, {Field: label, Column: "label"}, {Field: score, Column: "score"},
		{Field: meta, Column: "meta"}, {Field: blob, Column: "blob", Optional: true}, {Field: arr, Column: "arr"}}
}

func runPipeline(t testing.TB, out string, src sliceSource, workers int) pipeline.Report {
	t.Helper()
	rep, err := pipeline.Run(context.Background(), pipeline.Config{Source: src, Fields: testBindings(t), Output: out,
		PageSize: 2 << 20, Workers: workers, ChunkSize: 3, Container: NewContainer})
	must(t, err)
	return rep
}

// The pipeline writes the same bytes for any worker count, with and without a known sample
// count; the file verifies, reads back, and reads with numpy.
func TestPipelineDeterministic(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []bool{false, true} {
		samples := testSamples(t, 60, bad)
		var first []byte
		for _, streaming := range []bool{false, true} {
			for _, workers := range []int{1, 2, 8} {
				out := filepath.Join(dir, fmt.Sprintf("o-%v-%v-%d.beton", bad, streaming, workers))
				rep := runPipeline(t, out, sliceSource{samples, streaming}, workers)
				wantRows := int64(60)
				if bad {
					wantRows = 59
				}
				if rep.Samples != wantRows {
					t.Fatalf("%s: %d samples (rejected %d)", out, rep.Samples, rep.Rejected)
				}
				got, err := os.ReadFile(out)
				must(t, err)
				switch {
				case first == nil:
					first = got
					checkFile(t, out, samples, bad)
				case bad && !streaming:
					// The in-place file reserves rows for the rejected sample too: same data,
					// another data start when that crosses a page (not here: one page).
					if !bytes.Equal(got, first) {
						t.Errorf("%s differs from the first output", out)
					}
				default:
					if !bytes.Equal(got, first) {
						t.Errorf("%s differs from the first output at byte %d", out, firstDiff(got, first))
					}
				}
			}
		}
	}
}

// checkFile reads every sample with our reader and with numpy and compares.
func checkFile(t *testing.T, path string, samples []sample.Sample, bad bool) {
	r, err := Open(path)
	must(t, err)
	defer r.Close()
	if _, err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	var py []map[string]any
	if out, ok := runPython(t, path); ok {
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var m map[string]any
			must(t, json.Unmarshal([]byte(line), &m))
			py = append(py, m)
		}
		if int64(len(py)) != r.NumSamples() {
			t.Fatalf("python read %d samples, want %d", len(py), r.NumSamples())
		}
	}
	row := int64(0)
	for i, s := range samples {
		if bad && i == 5 {
			continue
		}
		v, err := r.Sample(row)
		must(t, err)
		if v[0].Image.Mode != ImageJPEG || int(v[0].Image.Width) != 16+i%13 || int(v[0].Image.Height) != 9+i%7 ||
			!bytes.HasPrefix(v[0].Data, []byte{0xff, 0xd8}) {
			t.Errorf("sample %d: image %v", i, v[0])
		}
		if v[1].Int != int64(i%10) || v[2].Float != float64(i)/8 || string(v[3].Data) != string(s.Value("meta").Bytes) {
			t.Errorf("sample %d: %v", i, v)
		}
		if want := s.Value("blob").Bytes; !bytes.Equal(v[4].Data, want) {
			t.Errorf("sample %d: blob %q, want %q", i, v[4].Data, want)
		}
		if got := math.Float32frombits(binary.LittleEndian.Uint32(v[5].Data)); got != float32(i) || len(v[5].Data) != 12 {
			t.Errorf("sample %d: arr %v", i, v[5].Data)
		}
		if py != nil {
			p := py[row]
			sum := sha256.Sum256(v[0].Data)
			img := p["image"].(map[string]any)
			if img["sha256"] != hex.EncodeToString(sum[:]) || img["width"].(float64) != float64(v[0].Image.Width) || img["mode"].(float64) != 0 {
				t.Errorf("sample %d: numpy image %v", i, img)
			}
			if p["label"].(float64) != float64(v[1].Int) || p["score"].(float64) != v[2].Float {
				t.Errorf("sample %d: numpy label/score %v %v", i, p["label"], p["score"])
			}
			var js any
			must(t, json.Unmarshal(v[3].Data, &js))
			if fmt.Sprint(p["meta"].(map[string]any)["json"]) != fmt.Sprint(js) {
				t.Errorf("sample %d: numpy json %v", i, p["meta"])
			}
			if p["blob"].(map[string]any)["size"].(float64) != float64(len(v[4].Data)) {
				t.Errorf("sample %d: numpy blob %v", i, p["blob"])
			}
			if a := p["arr"].(map[string]any); a["first"].([]any)[0].(float64) != float64(i) {
				t.Errorf("sample %d: numpy arr %v", i, a)
			}
		}
		row++
	}
}

// runPython runs testdata/check_beton.py (numpy only) on path; ok is false (and the test
// logs why) when python3 with numpy is not installed.
func runPython(t *testing.T, path string) (string, bool) {
	var py string
	for _, c := range []string{"/usr/bin/python3", "python3"} {
		if p, err := exec.LookPath(c); err == nil && exec.Command(p, "-c", "import numpy").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		t.Log("python3 with numpy not found: skipping the numpy check")
		return "", false
	}
	var stderr bytes.Buffer
	cmd := exec.Command(py, "testdata/check_beton.py", path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check_beton.py %s: %v\n%s", path, err, stderr.String())
	}
	return string(out), true
}

func TestPythonGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.beton")
	must(t, os.WriteFile(path, handBuilt(), 0o644)) // TestGolden pins these bytes to the golden file
	out, ok := runPython(t, path)
	if !ok {
		t.Skip("no python3 with numpy")
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"label": 7`) || !strings.Contains(lines[1], `"json": null`) {
		t.Errorf("python read:\n%s", out)
	}
}
