package imgdec

import (
	"bytes"
	"encoding/json"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// pillowScript does what the tests ask of Pillow: "resize" opens an image, converts it to a
// mode, crops, resizes with BILINEAR (Pillow's antialiased bilinear, no reducing_gap) and
// writes the raw pixels; "make" writes raw RGB pixels as a JPEG (progressive, or CMYK) or WebP.
const pillowScript = `
import sys, json
from PIL import Image
a = json.loads(sys.argv[1])
if a["op"] == "resize":
    im = Image.open(a["path"]).convert(a["mode"])
    if a.get("crop"):
        im = im.crop(tuple(a["crop"]))
    im = im.resize((a["w"], a["h"]), Image.BILINEAR)
    sys.stdout.buffer.write(im.tobytes())
else:
    im = Image.frombytes("RGB", (a["w"], a["h"]), open(a["raw"], "rb").read())
    if a.get("mode"):
        im = im.convert(a["mode"])
    kw = {}
    if a["format"] == "JPEG":
        kw = {"quality": 90, "progressive": bool(a.get("progressive"))}
    im.save(a["path"], a["format"], **kw)
`

const python = "/usr/bin/python3"

// needPillow skips the test when /usr/bin/python3 with Pillow is not there.
func needPillow(t *testing.T) {
	t.Helper()
	if err := exec.Command(python, "-c", "import PIL").Run(); err != nil {
		t.Skipf("needs %s with Pillow for reference pixels: %v", python, err)
	}
}

func runPillow(t *testing.T, args map[string]any) []byte {
	t.Helper()
	j, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(python, "-c", pillowScript, string(j))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pillow %s: %v\n%s", j, err, stderr.String())
	}
	return out
}

// pillowResized is Pillow's crop-then-resize of the image file data.
func pillowResized(t *testing.T, data []byte, crop image.Rectangle, w, h, channels int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mode := "RGB"
	if channels == 1 {
		mode = "L"
	}
	return runPillow(t, map[string]any{"op": "resize", "path": path, "mode": mode,
		"crop": []int{crop.Min.X, crop.Min.Y, crop.Max.X, crop.Max.Y}, "w": w, "h": h})
}

// pillowMake encodes img with Pillow: format JPEG (mode "CMYK" for a CMYK JPEG, progressive)
// or WEBP.
func pillowMake(t *testing.T, img *image.RGBA, format, mode string, progressive bool) []byte {
	t.Helper()
	dir := t.TempDir()
	b := img.Bounds()
	raw := make([]byte, 0, b.Dx()*b.Dy()*3)
	for i := 0; i < b.Dx()*b.Dy(); i++ {
		raw = append(raw, img.Pix[4*i:4*i+3]...)
	}
	rawPath, path := filepath.Join(dir, "raw"), filepath.Join(dir, "out")
	if err := os.WriteFile(rawPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	runPillow(t, map[string]any{"op": "make", "raw": rawPath, "path": path, "w": b.Dx(), "h": b.Dy(),
		"format": format, "mode": mode, "progressive": progressive})
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPillowReference: a crop resized by DecodeResized matches Pillow's crop + resize
// (BILINEAR) of the same file with PSNR >= 30 dB: center crops down (DCT-scaled decode) and
// up (full-scale decode of the crop's rows and columns), a whole-image reduction, gray, PNG,
// a progressive and a CMYK JPEG; with the accurate and the fast JPEG decode. The figures are
// logged (go test -v).
func TestPillowReference(t *testing.T) {
	needPillow(t)
	img := photo(256, 192)
	jpg := encodeJPEG(t, img, 90)
	png := encodePNG(t, img)
	grayJPG := encodeJPEG(t, gray(img), 90)
	prog := pillowMake(t, img, "JPEG", "", true)
	cmyk := pillowMake(t, img, "JPEG", "CMYK", false)
	big := photo(640, 480)
	bigJPG := encodeJPEG(t, big, 90)
	cases := []struct {
		name       string
		data       []byte
		crop       image.Rectangle
		outW, outH int
		channels   int
		minPSNR    float64
	}{
		{"center 192 to 160 (scale 7/8, decoded at 8/8)", jpg, image.Rect(32, 0, 224, 192), 160, 160, 3, 30},
		{"center 192 to 224 (scale 8/8)", jpg, image.Rect(32, 0, 224, 192), 224, 224, 3, 30},
		{"center 128 to 224", jpg, image.Rect(64, 32, 192, 160), 224, 224, 3, 30},
		{"whole to 64x48 (scale 2/8)", jpg, image.Rect(0, 0, 256, 192), 64, 48, 3, 30},
		{"640x480 center 480 to 224 (scale 4/8)", bigJPG, image.Rect(80, 0, 560, 480), 224, 224, 3, 30},
		{"640x480 center 480 to 160 (scale 3/8, decoded at 4/8)", bigJPG, image.Rect(80, 0, 560, 480), 160, 160, 3, 30},
		{"gray JPEG", grayJPG, image.Rect(32, 0, 224, 192), 160, 160, 1, 30},
		{"colour JPEG to gray", jpg, image.Rect(32, 0, 224, 192), 160, 160, 1, 30},
		{"progressive", prog, image.Rect(40, 30, 220, 180), 160, 160, 3, 30},
		{"CMYK", cmyk, image.Rect(40, 30, 220, 180), 160, 160, 3, 30},
		// PNG: the same pixels as Pillow's, so only the resampler differs: near exact.
		{"PNG center 192 to 160", png, image.Rect(32, 0, 224, 192), 160, 160, 3, 45},
		{"PNG center 128 to 224", png, image.Rect(64, 32, 192, 160), 224, 224, 3, 45},
	}
	d := NewDecoder()
	defer d.Close()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := pillowResized(t, tc.data, tc.crop, tc.outW, tc.outH, tc.channels)
			for _, fast := range []bool{false, true} {
				d.SetFastJPEG(fast)
				got := make([]byte, tc.outW*tc.outH*tc.channels)
				if err := d.DecodeResized(Image{Data: tc.data}, tc.crop, tc.outW, tc.outH, tc.channels, false, got); err != nil {
					t.Fatal(err)
				}
				p := psnr(got, want)
				t.Logf("%s, fast JPEG %v: PSNR %.1f dB against Pillow (libjpeg: %v)", tc.name, fast, p, LibJPEG)
				if p < tc.minPSNR {
					t.Errorf("fast JPEG %v: PSNR %.1f dB, want >= %.0f", fast, p, tc.minPSNR)
				}
			}
		})
	}
}
