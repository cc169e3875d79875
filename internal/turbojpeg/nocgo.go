//go:build !cgo

package turbojpeg

// Available reports whether libjpeg-turbo is compiled in: false in this build.
func Available() bool { return false }

// Decoder is unavailable without cgo; every method returns ErrUnavailable.
type Decoder struct{}

// NewDecoder returns ErrUnavailable.
func NewDecoder() (*Decoder, error) { return nil, ErrUnavailable }

// Close does nothing.
func (d *Decoder) Close() {}

// Header returns ErrUnavailable.
func (d *Decoder) Header(jpeg []byte) (Header, error) { return Header{}, ErrUnavailable }

// Decode returns ErrUnavailable.
func (d *Decoder) Decode(jpeg []byte, num int, pf PixelFormat, dst []byte) ([]byte, int, int, error) {
	return nil, 0, 0, ErrUnavailable
}

// DecodeYUV returns ErrUnavailable.
func (d *Decoder) DecodeYUV(jpeg []byte, num int, dst *Planes) error { return ErrUnavailable }

// Encoder is unavailable without cgo; every method returns ErrUnavailable.
type Encoder struct{}

// NewEncoder returns ErrUnavailable.
func NewEncoder() (*Encoder, error) { return nil, ErrUnavailable }

// Close does nothing.
func (e *Encoder) Close() {}

// Encode returns ErrUnavailable.
func (e *Encoder) Encode(pix []byte, w, h int, pf PixelFormat, q int, samp Subsampling) ([]byte, error) {
	return nil, ErrUnavailable
}

// EncodeYUV returns ErrUnavailable.
func (e *Encoder) EncodeYUV(p *Planes, q int) ([]byte, error) { return nil, ErrUnavailable }
