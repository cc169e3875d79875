package loader

import (
	"image"

	"github.com/mldf/convert/internal/imgdec"
)

// imgdecDecoder adapts package imgdec's Decoder.
type imgdecDecoder struct{ d *imgdec.Decoder }

func newImageDecoder() (imageDecoder, error) { return imgdecDecoder{imgdec.NewDecoder()}, nil }

func (a imgdecDecoder) decode(v value, crop image.Rectangle, o imgOut, dst []byte) error {
	im := imgdec.Image{Data: v.Payload}
	if v.Codec == codecRaw {
		im.Raw, im.Width, im.Height, im.Channels = true, v.W, v.H, v.C
	}
	a.d.SetFastJPEG(o.fastJPEG)
	if o.chw {
		return a.d.DecodeResizedCHW(im, crop, o.w, o.h, o.ch, o.flip, dst)
	}
	return a.d.DecodeResized(im, crop, o.w, o.h, o.ch, o.flip, dst)
}

func (a imgdecDecoder) close() { a.d.Close() }
