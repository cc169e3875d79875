//go:build !cgo

package imgdec

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"

	"github.com/mldf/convert/encoders"
)

// LibJPEG reports whether JPEG is decoded by libjpeg-turbo (cgo builds) rather than by
// image/jpeg: false in this build.
const LibJPEG = false

// jpegDecoder decodes JPEG with image/jpeg: the whole image, then its crop is resampled.
type jpegDecoder struct{}

func (jpegDecoder) close() {}

func (jpegDecoder) size(data []byte) (w, h, c int, err error) {
	var cfg image.Config
	err = encoders.Guard("image/jpeg", func() (err error) {
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
		return err
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%w: JPEG header: %w", ErrCorrupt, err)
	}
	c = 3
	if cfg.ColorModel == color.GrayModel {
		c = 1
	}
	return cfg.Width, cfg.Height, c, nil
}

func (d *Decoder) decodeJPEG(data []byte, crop image.Rectangle, outW, outH, channels int, flip, planar bool, dst []byte) error {
	w, h, _, err := d.jpeg.size(data)
	if err != nil {
		return err
	}
	if err := d.checkSize("JPEG", w, h, crop); err != nil {
		return err
	}
	var img image.Image
	err = encoders.Guard("image/jpeg", func() (err error) {
		img, err = jpeg.Decode(bytes.NewReader(data))
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: JPEG: %w", ErrCorrupt, err)
	}
	return d.fromImage(img, crop, outW, outH, channels, flip, planar, dst)
}
