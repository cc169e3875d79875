package imagefield

import (
	"errors"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/turbojpeg"
)

// The planar (YUV) path of the jpeg and smart modes: libjpeg-turbo decodes the JPEG at the DCT
// scale straight to its Y, Cb and Cr planes (no chroma upsampling, no YCbCr→RGB), the luma
// plane is resized to the target and the already subsampled chroma planes to the target's
// 4:2:0 chroma size, and libjpeg-turbo compresses the planes (no RGB→YCbCr, no chroma
// downsampling). At 4:2:0 the resampler handles 1.5 samples per pixel instead of 3.

// yuvBufs is one worker's buffers for the planar path.
type yuvBufs struct {
	dec       turbojpeg.Planes
	y, cb, cr []byte // resized planes, packed
	pad       []byte // padded planes for odd sizes
	tmp       []byte // the resampler's intermediate rows
}

// canYUV reports whether the planar path may take an image with header hdr.
func (f *Field) canYUV(c *codec, hdr Header) bool {
	if f.rgb || c.dec == nil || c.enc == nil || hdr.Format != FormatJPEG || hdr.Precision != 8 {
		return false
	}
	if f.opts.Mode != ModeJPEG && f.opts.Mode != ModeSmart {
		return false
	}
	if f.opts.Filter == FilterNearest || (f.opts.Channels != 3 && f.opts.Channels != 1) {
		return false
	}
	return hdr.Components == 3 || hdr.Components == 1
}

// encodeYUV runs the planar path for the target sw×sh (stored frame). ok is false when the
// image must take the RGB path instead (an unusual JPEG, or a decoding problem that the RGB
// path reports or works around); warned is then the libjpeg-turbo warning, if the decode gave
// one: its planes are not trusted, and the RGB path decides without decoding with
// libjpeg-turbo again (see decode).
func (f *Field) encodeYUV(c *codec, data []byte, hdr Header, sw, sh int) (out []byte, m mldf.ImageMeta, ok bool, warned error) {
	b := &c.yuv
	num := f.dctScale(hdr, sw, sh)
	if err := c.dec.DecodeYUV(data, num, &b.dec); err != nil {
		if errors.Is(err, turbojpeg.ErrWarning) {
			return nil, m, false, err
		}
		return nil, m, false, nil
	}
	d := &b.dec
	gray := f.opts.Channels == 1
	// Resize the planes into packed buffers.
	cw, ch := (sw+1)/2, (sh+1)/2
	y := pixbuf{pix: take(&b.y, sw*sh), w: sw, h: sh, c: 1}
	ah := axis{full: hdr.Width, num: num, sub: 1, src: d.Width, target: sw, outSub: 1, dst: sw}
	av := axis{full: hdr.Height, num: num, sub: 1, src: d.Height, target: sh, outSub: 1, dst: sh}
	resample(d.Y, d.YStride, 1, y.pix, sw, ah, av, f.opts.Filter, &b.tmp, &c.buf.taps)
	var cb, cr pixbuf
	if !gray {
		cb = pixbuf{pix: take(&b.cb, cw*ch), w: cw, h: ch, c: 1}
		cr = pixbuf{pix: take(&b.cr, cw*ch), w: cw, h: ch, c: 1}
		if d.Cb == nil { // grayscale source in a colour field: neutral chroma
			for i := range cb.pix {
				cb.pix[i] = 128
			}
			copy(cr.pix, cb.pix)
		} else {
			// The source chroma planes cover the full image like the luma plane, with one sample
			// for every yw/scw by yh/sch luma samples; the output's for every 2 by 2.
			yw, yh, scw, sch, _ := turbojpeg.PlaneSizes(d.Width, d.Height, d.Subsampling)
			px, py := chromaPad(hdr.Orientation, sw, sh)
			ah := axis{full: hdr.Width, num: num, sub: yw / scw, src: scw, target: sw, outSub: 2, pad: px, dst: cw}
			av := axis{full: hdr.Height, num: num, sub: yh / sch, src: sch, target: sh, outSub: 2, pad: py, dst: ch}
			resample(d.Cb, d.CStride, 1, cb.pix, cw, ah, av, f.opts.Filter, &b.tmp, &c.buf.taps)
			resample(d.Cr, d.CStride, 1, cr.pix, cw, ah, av, f.opts.Filter, &b.tmp, &c.buf.taps)
		}
	}
	if o := hdr.Orientation; o > 1 {
		y = orient(y, o)
		if !gray {
			cb, cr = orient(cb, o), orient(cr, o)
		}
	}
	p := turbojpeg.Planes{Width: y.w, Height: y.h, Subsampling: turbojpeg.Samp420}
	if gray {
		p.Subsampling = turbojpeg.SampGray
	}
	yw, yh, pcw, pch, _ := turbojpeg.PlaneSizes(y.w, y.h, p.Subsampling)
	if yw == y.w && yh == y.h {
		p.Y, p.YStride, p.Cb, p.Cr, p.CStride = y.pix, y.w, cb.pix, cr.pix, cb.w
	} else {
		// Odd sizes: TurboJPEG reads whole chroma samples' worth of luma; replicate the edge.
		n := yw*yh + 2*pcw*pch
		buf := take(&b.pad, n)
		p.Y, p.YStride = buf[:yw*yh], yw
		padPlane(p.Y, yw, yh, y)
		if !gray {
			p.Cb, p.Cr, p.CStride = buf[yw*yh:yw*yh+pcw*pch], buf[yw*yh+pcw*pch:n], pcw
			padPlane(p.Cb, pcw, pch, cb)
			padPlane(p.Cr, pcw, pch, cr)
		}
	}
	out, err := c.enc.EncodeYUV(&p, f.opts.JPEGQuality)
	if err != nil {
		return nil, m, false, nil
	}
	m = mldf.ImageMeta{Height: uint16(y.h), Width: uint16(y.w), Channels: uint8(f.opts.Channels), Mode: mldf.ImageModeJPEG}
	return out, m, true, nil
}

// padPlane copies the 1-channel image src into the w×h plane dst (w >= src.w, h >= src.h),
// replicating the last column and row.
func padPlane(dst []byte, w, h int, src pixbuf) {
	for y := 0; y < h; y++ {
		sy := min(y, src.h-1)
		d := dst[y*w : y*w+w]
		n := copy(d, src.pix[sy*src.w:sy*src.w+src.w])
		for x := n; x < w; x++ {
			d[x] = d[n-1]
		}
	}
}

// chromaPad returns the pad (see axis) of the output chroma planes across and down for a
// w×h image (stored frame) that EXIF orientation o turns afterwards. The encoder pairs
// luma samples from the displayed image's top left; where o reverses a stored axis of odd
// length, the pairs start at that axis's far end, so the stored chroma grid is shifted by
// one luma sample.
func chromaPad(o, w, h int) (px, py int) {
	var rx, ry bool // o reverses the stored x (y) axis (see orient)
	switch o {
	case 2, 8:
		rx = true
	case 4, 6:
		ry = true
	case 3, 7:
		rx, ry = true, true
	}
	if rx {
		px = w % 2
	}
	if ry {
		py = h % 2
	}
	return px, py
}
