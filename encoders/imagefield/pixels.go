package imagefield

import (
	"image"
	"image/color"
)

// fromImage converts a decoded image to an 8-bit pixbuf with c channels (1, 3 or 4). Alpha is
// dropped for 1 and 3 channels (as Pillow's convert("RGB") does); 16-bit samples keep their
// high byte; CMYK, YCbCr and paletted images become RGB. img is left unchanged.
func fromImage(img image.Image, c int) pixbuf {
	nat := natural(img)
	return convertChannels(nat, c)
}

// fromDecoded is fromImage for an image the caller owns and drops: the pixels are converted
// in img's own memory where the layout allows (RGBA, NRGBA, their 16-bit forms, Gray,
// Gray16), so a large decode does not hold a second copy. The result is the same as
// fromImage's.
func fromDecoded(img image.Image, c int) pixbuf {
	if b, ok := naturalInPlace(img); ok {
		return convertChannels(b, c)
	}
	return fromImage(img, c)
}

// naturalInPlace is natural for the packed image types, writing into img's pixel memory
// (each pixel's output lies at or before its input, so a forward pass never reads what it
// wrote). ok is false for other types and layouts.
func naturalInPlace(img image.Image) (pixbuf, bool) {
	r := img.Bounds()
	w, h := r.Dx(), r.Dy()
	n := w * h
	packed := func(stride, bpp int, min image.Point) bool { return stride == w*bpp && min == image.Point{} }
	switch m := img.(type) {
	case *image.Gray:
		if !packed(m.Stride, 1, r.Min) {
			return pixbuf{}, false
		}
		return pixbuf{pix: m.Pix[:n], w: w, h: h, c: 1}, true
	case *image.Gray16:
		if !packed(m.Stride, 2, r.Min) {
			return pixbuf{}, false
		}
		for i := 0; i < n; i++ {
			m.Pix[i] = m.Pix[2*i]
		}
		return pixbuf{pix: m.Pix[:n], w: w, h: h, c: 1}, true
	case *image.NRGBA:
		if !packed(m.Stride, 4, r.Min) {
			return pixbuf{}, false
		}
		return opaqueToRGB(pixbuf{pix: m.Pix[:4*n], w: w, h: h, c: 4}), true
	case *image.RGBA:
		if !packed(m.Stride, 4, r.Min) {
			return pixbuf{}, false
		}
		p := m.Pix[:4*n]
		for i := 0; i < n; i++ { // unpremultiply as color.NRGBA64Model does, keep the high byte
			if a := p[4*i+3]; a != 255 {
				c := color.NRGBA64Model.Convert(color.RGBA{p[4*i], p[4*i+1], p[4*i+2], a}).(color.NRGBA64)
				p[4*i], p[4*i+1], p[4*i+2] = byte(c.R>>8), byte(c.G>>8), byte(c.B>>8)
			}
		}
		return opaqueToRGB(pixbuf{pix: p, w: w, h: h, c: 4}), true
	case *image.NRGBA64:
		if !packed(m.Stride, 8, r.Min) {
			return pixbuf{}, false
		}
		p := m.Pix[:8*n]
		for i := 0; i < n; i++ {
			p[4*i], p[4*i+1], p[4*i+2], p[4*i+3] = p[8*i], p[8*i+2], p[8*i+4], p[8*i+6]
		}
		return opaqueToRGB(pixbuf{pix: p[:4*n], w: w, h: h, c: 4}), true
	case *image.RGBA64:
		if !packed(m.Stride, 8, r.Min) {
			return pixbuf{}, false
		}
		p := m.Pix[:8*n]
		for i := 0; i < n; i++ {
			q := p[8*i : 8*i+8]
			c := color.RGBA64{uint16(q[0])<<8 | uint16(q[1]), uint16(q[2])<<8 | uint16(q[3]),
				uint16(q[4])<<8 | uint16(q[5]), uint16(q[6])<<8 | uint16(q[7])}
			nc := color.NRGBA64Model.Convert(c).(color.NRGBA64)
			p[4*i], p[4*i+1], p[4*i+2], p[4*i+3] = byte(nc.R>>8), byte(nc.G>>8), byte(nc.B>>8), byte(nc.A>>8)
		}
		return opaqueToRGB(pixbuf{pix: p[:4*n], w: w, h: h, c: 4}), true
	}
	return pixbuf{}, false
}

// natural converts img to a pixbuf of its natural channel count: 1 for gray, 3 for opaque
// colour, 4 for colour with alpha.
func natural(img image.Image) pixbuf {
	r := img.Bounds()
	w, h := r.Dx(), r.Dy()
	switch m := img.(type) {
	case *image.YCbCr:
		b := pixbuf{pix: make([]byte, w*h*3), w: w, h: h, c: 3}
		i := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				yi, ci := m.YOffset(x, y), m.COffset(x, y)
				b.pix[i], b.pix[i+1], b.pix[i+2] = color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
				i += 3
			}
		}
		return b
	case *image.Gray:
		b := pixbuf{pix: make([]byte, w*h), w: w, h: h, c: 1}
		for y := 0; y < h; y++ {
			o := m.PixOffset(r.Min.X, r.Min.Y+y)
			copy(b.pix[y*w:(y+1)*w], m.Pix[o:o+w])
		}
		return b
	case *image.Gray16:
		b := pixbuf{pix: make([]byte, w*h), w: w, h: h, c: 1}
		for y := 0; y < h; y++ {
			o := m.PixOffset(r.Min.X, r.Min.Y+y)
			for x := 0; x < w; x++ {
				b.pix[y*w+x] = m.Pix[o+2*x]
			}
		}
		return b
	case *image.CMYK:
		b := pixbuf{pix: make([]byte, w*h*3), w: w, h: h, c: 3}
		for y := 0; y < h; y++ {
			o := m.PixOffset(r.Min.X, r.Min.Y+y)
			for x := 0; x < w; x++ {
				p := m.Pix[o+4*x : o+4*x+4]
				i := (y*w + x) * 3
				b.pix[i], b.pix[i+1], b.pix[i+2] = color.CMYKToRGB(p[0], p[1], p[2], p[3])
			}
		}
		return b
	case *image.NRGBA:
		b := pixbuf{pix: make([]byte, w*h*4), w: w, h: h, c: 4}
		for y := 0; y < h; y++ {
			o := m.PixOffset(r.Min.X, r.Min.Y+y)
			copy(b.pix[y*w*4:(y+1)*w*4], m.Pix[o:o+4*w])
		}
		return opaqueToRGB(b)
	case *image.Paletted:
		pal := make([][4]byte, 256)
		for i := range pal {
			if i < len(m.Palette) {
				c := color.NRGBAModel.Convert(m.Palette[i]).(color.NRGBA)
				pal[i] = [4]byte{c.R, c.G, c.B, c.A}
			} else {
				pal[i] = [4]byte{0, 0, 0, 255} // out-of-range index: opaque black, as image/png does
			}
		}
		b := pixbuf{pix: make([]byte, w*h*4), w: w, h: h, c: 4}
		for y := 0; y < h; y++ {
			o := m.PixOffset(r.Min.X, r.Min.Y+y)
			for x := 0; x < w; x++ {
				copy(b.pix[(y*w+x)*4:], pal[m.Pix[o+x]][:])
			}
		}
		return opaqueToRGB(b)
	}
	// Generic path (RGBA, RGBA64, NRGBA64, Alpha, ...): through color.NRGBA64 to keep
	// unpremultiplied colour, high byte of each 16-bit sample.
	b := pixbuf{pix: make([]byte, w*h*4), w: w, h: h, c: 4}
	i := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.NRGBA64Model.Convert(img.At(x, y)).(color.NRGBA64)
			b.pix[i], b.pix[i+1], b.pix[i+2], b.pix[i+3] = byte(c.R>>8), byte(c.G>>8), byte(c.B>>8), byte(c.A>>8)
			i += 4
		}
	}
	return opaqueToRGB(b)
}

// opaqueToRGB drops the alpha channel of a 4-channel buffer when every pixel is opaque.
func opaqueToRGB(b pixbuf) pixbuf {
	for i := 3; i < len(b.pix); i += 4 {
		if b.pix[i] != 255 {
			return b
		}
	}
	return convertChannels(b, 3)
}

// luma is ITU-R BT.601 luma with 16-bit fixed-point weights, as image/color's GrayModel.
func luma(r, g, b byte) byte {
	return byte((19595*uint32(r) + 38470*uint32(g) + 7471*uint32(b) + 1<<15) >> 16)
}

// convertChannels converts b to c channels (1, 3 or 4). Fewer channels are written in place,
// over b's pixels (b is not to be used afterwards); more channels take a new buffer.
func convertChannels(b pixbuf, c int) pixbuf {
	if b.c == c {
		return b
	}
	n := b.w * b.h
	var out pixbuf
	if c < b.c {
		out = pixbuf{pix: b.pix[:n*c], w: b.w, h: b.h, c: c} // pixel i moves from i*b.c to i*c
	} else {
		out = pixbuf{pix: make([]byte, n*c), w: b.w, h: b.h, c: c}
	}
	s, d := b.pix, out.pix
	for i := 0; i < n; i++ {
		var r, g, bl, a byte
		switch b.c {
		case 1:
			r, g, bl, a = s[i], s[i], s[i], 255
		case 3:
			r, g, bl, a = s[3*i], s[3*i+1], s[3*i+2], 255
		default:
			r, g, bl, a = s[4*i], s[4*i+1], s[4*i+2], s[4*i+3]
		}
		switch c {
		case 1:
			d[i] = luma(r, g, bl)
		case 3:
			d[3*i], d[3*i+1], d[3*i+2] = r, g, bl
		default:
			d[4*i], d[4*i+1], d[4*i+2], d[4*i+3] = r, g, bl, a
		}
	}
	return out
}

// toImage wraps b as an image.Image for the standard encoders: Gray, RGBA (opaque) or NRGBA.
func toImage(b pixbuf) image.Image {
	r := image.Rect(0, 0, b.w, b.h)
	switch b.c {
	case 1:
		return &image.Gray{Pix: b.pix, Stride: b.w, Rect: r}
	case 4:
		return &image.NRGBA{Pix: b.pix, Stride: 4 * b.w, Rect: r}
	}
	rgba := convertChannels(b, 4)
	return &image.RGBA{Pix: rgba.pix, Stride: 4 * b.w, Rect: r}
}
