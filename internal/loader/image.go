package loader

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
)

// imageDecoder decodes a crop of an encoded image straight to an output size (package
// imgdec's Decoder, behind an interface so that the pipeline does not depend on its codec
// enum).
type imageDecoder interface {
	decode(v value, crop image.Rectangle, o imgOut, dst []byte) error
	close()
}

// imgOut is what an image decode writes: w × h pixels of ch channels, mirrored when flip is
// set, HWC or (chw) CHW; fastJPEG decodes a JPEG the fast way (imgdec.Decoder.SetFastJPEG).
type imgOut struct {
	w, h, ch            int
	flip, chw, fastJPEG bool
}

// image decoder ops
const (
	imgRandomResizedCrop = iota
	imgCenterCrop
	imgResize
)

// imageStage is an image field's pipeline: a decoder op (crop and resize), then an optional
// flip, normalisation and HWC → CHW transposition, fused into one pass over the pixels.
type imageStage struct {
	op         int
	outW, outH int
	ch         int
	scale      [2]float64 // RandomResizedCrop
	logRatio   [2]float64 // RandomResizedCrop
	ratio      [2]float64
	cropRatio  float64 // CenterCrop
	fastJPEG   bool    // the "jpeg": "fast" parameter
	flip       bool
	flipP      float64
	flipPos    int
	norm       *normalize
	chw        bool
}

// normalize maps each channel's byte value to (v·unit − mean)/std, as a table.
type normalize struct {
	f16 bool
	f32 [4][256]float32
	h   [4][256]uint16
}

// parseSize reads a size: an int (a square) or [h, w].
func parseSize(raw json.RawMessage) (w, h int, err error) {
	var one int
	if err := json.Unmarshal(raw, &one); err == nil {
		w, h = one, one
	} else {
		var two []int
		if err := json.Unmarshal(raw, &two); err != nil || len(two) != 2 {
			return 0, 0, fmt.Errorf("size %s: want an int or [height, width]", clip(raw))
		}
		h, w = two[0], two[1]
	}
	if w < 1 || h < 1 || w > 1<<14 || h > 1<<14 {
		return 0, 0, fmt.Errorf("size %s: want 1..16384", clip(raw))
	}
	return w, h, nil
}

func clip(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

func parsePair(raw json.RawMessage, name string, def [2]float64) ([2]float64, error) {
	if raw == nil {
		return def, nil
	}
	var p []float64
	if err := json.Unmarshal(raw, &p); err != nil || len(p) != 2 {
		return def, fmt.Errorf("%s %s: want [low, high]", name, clip(raw))
	}
	if !(p[0] > 0) || !(p[1] >= p[0]) || math.IsInf(p[1], 0) {
		return def, fmt.Errorf("%s [%g, %g]: want 0 < low <= high", name, p[0], p[1])
	}
	return [2]float64{p[0], p[1]}, nil
}

func compileImage(fi *fieldInfo, ops []*opSpec) (stage, Output, error) {
	st := &imageStage{ch: 3}
	if fi.Channels == 1 {
		st.ch = 1
	}
	d := ops[0]
	fail := func(k int, err error) (stage, Output, error) {
		return nil, Output{}, fmt.Errorf("op %d %s: %w", k, ops[k].Op, err)
	}
	var err error
	switch d.Op {
	case "RandomResizedCrop":
		st.op = imgRandomResizedCrop
		if err := d.allow("size", "scale", "ratio", "channels", "interpolation", "jpeg"); err != nil {
			return fail(0, err)
		}
		if st.scale, err = parsePair(d.Scale, "scale", [2]float64{0.08, 1}); err != nil {
			return fail(0, err)
		}
		if st.scale[1] > 1 {
			return fail(0, fmt.Errorf("scale [%g, %g]: high above 1", st.scale[0], st.scale[1]))
		}
		if st.ratio, err = parsePair(d.Ratio, "ratio", [2]float64{3.0 / 4, 4.0 / 3}); err != nil {
			return fail(0, err)
		}
		st.logRatio = [2]float64{math.Log(st.ratio[0]), math.Log(st.ratio[1])}
	case "CenterCrop":
		st.op = imgCenterCrop
		if err := d.allow("size", "ratio", "channels", "interpolation", "jpeg"); err != nil {
			return fail(0, err)
		}
		st.cropRatio = 224.0 / 256
		if d.Ratio != nil {
			if err := json.Unmarshal(d.Ratio, &st.cropRatio); err != nil || !(st.cropRatio > 0 && st.cropRatio <= 1) {
				return fail(0, fmt.Errorf("ratio %s: want a number in (0, 1]", clip(d.Ratio)))
			}
		}
	case "Resize":
		st.op = imgResize
		if err := d.allow("size", "channels", "interpolation", "jpeg"); err != nil {
			return fail(0, err)
		}
	}
	if d.Size == nil {
		return fail(0, errors.New("no size"))
	}
	if st.outW, st.outH, err = parseSize(d.Size); err != nil {
		return fail(0, err)
	}
	if d.Channels != nil {
		if *d.Channels != 1 && *d.Channels != 3 {
			return fail(0, fmt.Errorf("channels %d: want 1 or 3", *d.Channels))
		}
		st.ch = *d.Channels
	}
	switch d.JPEG {
	case "", "accurate":
	case "fast":
		st.fastJPEG = true
	default:
		return fail(0, fmt.Errorf("jpeg %q: want \"accurate\" or \"fast\"", d.JPEG))
	}
	if d.Interp != "" && d.Interp != "bilinear" && d.Interp != "antialias" {
		return fail(0, fmt.Errorf("interpolation %q: only bilinear (antialiased) is implemented", d.Interp))
	}
	for k := 1; k < len(ops); k++ {
		o := ops[k]
		switch o.Op {
		case "RandomHorizontalFlip", "Flip":
			if st.flip || st.norm != nil || st.chw {
				return fail(k, errors.New("must come once, right after the decoder"))
			}
			if err := o.allow("p"); err != nil {
				return fail(k, err)
			}
			st.flip, st.flipP, st.flipPos = true, 0.5, k
			if o.P != nil {
				if !(*o.P >= 0 && *o.P <= 1) {
					return fail(k, fmt.Errorf("p %g: want 0..1", *o.P))
				}
				st.flipP = *o.P
			}
		case "Normalize":
			if st.norm != nil || st.chw {
				return fail(k, errors.New("must come once, before ToCHW"))
			}
			if err := o.allow("mean", "std", "dtype"); err != nil {
				return fail(k, err)
			}
			n, err := newNormalize(o, st.ch)
			if err != nil {
				return fail(k, err)
			}
			st.norm = n
		case "ToCHW":
			if st.chw {
				return fail(k, errors.New("given twice"))
			}
			if err := o.allow(); err != nil {
				return fail(k, err)
			}
			st.chw = true
		default:
			return fail(k, errors.New("is not an image transform (RandomHorizontalFlip, Normalize, ToCHW)"))
		}
	}
	out := Output{DType: "uint8", Kind: "Image", Shape: []int{st.outH, st.outW, st.ch}}
	if st.chw {
		out.Shape = []int{st.ch, st.outH, st.outW}
	}
	item := 1
	if st.norm != nil {
		out.DType, item = "float32", 4
		if st.norm.f16 {
			out.DType, item = "float16", 2
		}
	}
	out.itemSize = item * st.ch * st.outH * st.outW
	return st, out, nil
}

// newNormalize builds the tables of Normalize. mean and std are per channel (or one value
// for all); when every mean and std is at most 1 they are on torchvision's [0, 1] scale
// (pixel/255), otherwise on the [0, 255] scale of the stored bytes (FFCV's convention):
// both give (pixel/255 − mean)/std in torchvision's terms.
func newNormalize(o *opSpec, ch int) (*normalize, error) {
	n := &normalize{}
	switch o.DType {
	case "", "float32":
	case "float16":
		n.f16 = true
	default:
		return nil, fmt.Errorf("dtype %q: want float32 or float16", o.DType)
	}
	mean, std := o.Mean, o.Std
	if len(mean) == 0 {
		mean = []float64{0}
	}
	if len(std) == 0 {
		std = []float64{1}
	}
	if (len(mean) != 1 && len(mean) != ch) || (len(std) != 1 && len(std) != ch) {
		return nil, fmt.Errorf("%d means and %d stds for %d channels", len(mean), len(std), ch)
	}
	unit := 1.0
	small := true
	for _, v := range append(append([]float64{}, mean...), std...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("mean %v std %v: not finite", mean, std)
		}
		if math.Abs(v) > 1 {
			small = false
		}
	}
	if small {
		unit = 1.0 / 255
	}
	for c := range ch {
		m, s := mean[min(c, len(mean)-1)], std[min(c, len(std)-1)]
		if s == 0 {
			return nil, fmt.Errorf("std %v: zero", std)
		}
		for v := range 256 {
			f := float32((float64(v)*unit - m) / s)
			n.f32[c][v] = f
			n.h[c][v] = float16bits(f)
		}
	}
	return n, nil
}

// box computes the crop rectangle of an image of w × h pixels.
func (st *imageStage) box(rc runCtx, w, h int) image.Rectangle {
	switch st.op {
	case imgRandomResizedCrop:
		r := rc.rand(0)
		return randomResizedCrop(&r, w, h, st.scale, st.logRatio, st.ratio)
	case imgCenterCrop:
		s := st.cropRatio * min(float64(w)/float64(st.outW), float64(h)/float64(st.outH))
		cw := max(min(int(float64(st.outW)*s), w), 1)
		ch := max(min(int(float64(st.outH)*s), h), 1)
		x0, y0 := (w-cw)/2, (h-ch)/2
		return image.Rect(x0, y0, x0+cw, y0+ch)
	}
	return image.Rect(0, 0, w, h)
}

// randomResizedCrop is torchvision's RandomResizedCrop.get_params: ten tries at a box of a
// random area fraction (scale) and log-uniform aspect ratio, then a centre crop of the
// image clamped to the ratio range.
func randomResizedCrop(r *prng, width, height int, scale, logRatio, ratio [2]float64) image.Rectangle {
	area := float64(width) * float64(height)
	for range 10 {
		target := area * (scale[0] + r.float64()*(scale[1]-scale[0]))
		aspect := math.Exp(logRatio[0] + r.float64()*(logRatio[1]-logRatio[0]))
		w := int(math.RoundToEven(math.Sqrt(target * aspect)))
		h := int(math.RoundToEven(math.Sqrt(target / aspect)))
		if w > 0 && w <= width && h > 0 && h <= height {
			y := r.intn(height - h)
			x := r.intn(width - w)
			return image.Rect(x, y, x+w, y+h)
		}
	}
	in := float64(width) / float64(height)
	w, h := width, height
	switch {
	case in < ratio[0]:
		h = int(math.RoundToEven(float64(w) / ratio[0]))
	case in > ratio[1]:
		w = int(math.RoundToEven(float64(h) * ratio[1]))
	}
	w, h = max(min(w, width), 1), max(min(h, height), 1)
	x, y := (width-w)/2, (height-h)/2
	return image.Rect(x, y, x+w, y+h)
}

func (st *imageStage) decode(w *worker, rc runCtx, v value, dst []byte) error {
	if len(v.Payload) == 0 {
		return errMissing
	}
	crop := st.box(rc, v.W, v.H)
	flip := false
	if st.flip {
		r := rc.rand(st.flipPos)
		flip = r.float64() < st.flipP
	}
	dec, err := w.imageDecoder()
	if err != nil {
		return err
	}
	o := imgOut{w: st.outW, h: st.outH, ch: st.ch, flip: flip, chw: st.chw, fastJPEG: st.fastJPEG}
	if st.norm == nil {
		return dec.decode(v, crop, o, dst)
	}
	px := w.scratchBytes(st.outW * st.outH * st.ch)
	if err := dec.decode(v, crop, o, px); err != nil {
		return err
	}
	st.normalize(px, dst)
	return nil
}

// normalize writes the pixels px (HWC, or CHW when st.chw is set: the layout of dst) to dst
// as normalised float16 or float32 values.
func (st *imageStage) normalize(px, dst []byte) {
	ch := st.ch
	le := binary.LittleEndian
	if st.norm.f16 {
		tabs := &st.norm.h
		if st.chw || ch == 1 {
			plane := st.outW * st.outH
			for c := range ch {
				t := &tabs[c]
				for p, v := range px[c*plane : (c+1)*plane] {
					le.PutUint16(dst[2*(c*plane+p):], t[v])
				}
			}
			return
		}
		for i, v := range px {
			le.PutUint16(dst[2*i:], tabs[i%ch][v])
		}
		return
	}
	tabs := &st.norm.f32
	if st.chw || ch == 1 {
		plane := st.outW * st.outH
		for c := range ch {
			t := &tabs[c]
			for p, v := range px[c*plane : (c+1)*plane] {
				le.PutUint32(dst[4*(c*plane+p):], math.Float32bits(t[v]))
			}
		}
		return
	}
	for i, v := range px {
		le.PutUint32(dst[4*i:], math.Float32bits(tabs[i%ch][v]))
	}
}

// float16bits converts f to IEEE 754 binary16, rounding to nearest even.
func float16bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	man := b & 0x7fffff
	switch {
	case b&0x7fffffff == 0:
		return sign
	case exp >= 31:
		if b&0x7f800000 == 0x7f800000 && man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint(14 - exp)
		half := man >> shift
		rem := man & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(exp)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, which is right (up to infinity)
	}
	return sign | uint16(half)
}
