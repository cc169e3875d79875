//go:build cgo

package turbojpeg

/*
#cgo LDFLAGS: -lturbojpeg
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

typedef struct {
	int rc;
	int code;
	int width, height, subsamp, colorspace;
	unsigned long size;
	char msg[200];
} tjw_result;

static void tjw_fail(tjhandle h, tjw_result *r) {
	const char *s = tjGetErrorStr2(h);
	r->rc = -1;
	r->code = tjGetErrorCode(h);
	if (s == NULL) s = "unknown error";
	strncpy(r->msg, s, sizeof(r->msg) - 1);
	r->msg[sizeof(r->msg) - 1] = 0;
}

static tjw_result tjw_header(tjhandle h, const unsigned char *buf, unsigned long n) {
	tjw_result r;
	memset(&r, 0, sizeof(r));
	if (tjDecompressHeader3(h, buf, n, &r.width, &r.height, &r.subsamp, &r.colorspace) != 0) {
		tjw_fail(h, &r);
		r.code = TJERR_FATAL;
	}
	return r;
}

static tjw_result tjw_decode(tjhandle h, const unsigned char *buf, unsigned long n,
                             unsigned char *dst, int w, int hh, int pf) {
	tjw_result r;
	memset(&r, 0, sizeof(r));
	if (tjDecompress2(h, buf, n, dst, w, 0, hh, pf, 0) != 0) {
		tjw_fail(h, &r);
	}
	return r;
}

// tjw_encode compresses into dst (cap bytes, at least tjBufSize) without reallocating it.
static tjw_result tjw_encode(tjhandle h, const unsigned char *src, int w, int pitch, int hh,
                             int pf, unsigned char *dst, unsigned long cap, int samp, int q) {
	tjw_result r;
	unsigned char *out = dst;
	unsigned long size = cap;
	memset(&r, 0, sizeof(r));
	if (tjCompress2(h, src, w, pitch, hh, pf, &out, &size, samp, q, TJFLAG_NOREALLOC) != 0) {
		tjw_fail(h, &r);
		r.code = TJERR_FATAL;
	} else if (out != dst) {
		// Cannot happen with TJFLAG_NOREALLOC; never keep a C buffer.
		tjFree(out);
		r.rc = -1;
		r.code = TJERR_FATAL;
		strcpy(r.msg, "output buffer reallocated");
	}
	r.size = size;
	return r;
}

// tjw_decode_yuv decompresses to planes at the given (scaled) size with the given strides.
static tjw_result tjw_decode_yuv(tjhandle h, const unsigned char *buf, unsigned long n,
                                 unsigned char *y, unsigned char *u, unsigned char *v,
                                 int w, int hh, int sy, int sc, int flags) {
	tjw_result r;
	unsigned char *planes[3];
	int strides[3];
	memset(&r, 0, sizeof(r));
	planes[0] = y; planes[1] = u; planes[2] = v;
	strides[0] = sy; strides[1] = sc; strides[2] = sc;
	if (tjDecompressToYUVPlanes(h, buf, n, planes, w, strides, hh, flags) != 0) {
		tjw_fail(h, &r);
	}
	return r;
}

// tjw_encode_yuv compresses planes into dst (cap bytes) without reallocating it.
static tjw_result tjw_encode_yuv(tjhandle h, const unsigned char *y, const unsigned char *u,
                                 const unsigned char *v, int w, int hh, int sy, int sc,
                                 int samp, unsigned char *dst, unsigned long cap, int q) {
	tjw_result r;
	const unsigned char *planes[3];
	int strides[3];
	unsigned char *out = dst;
	unsigned long size = cap;
	memset(&r, 0, sizeof(r));
	planes[0] = y; planes[1] = u; planes[2] = v;
	strides[0] = sy; strides[1] = sc; strides[2] = sc;
	if (tjCompressFromYUVPlanes(h, planes, w, strides, hh, samp, &out, &size, q, TJFLAG_NOREALLOC) != 0) {
		tjw_fail(h, &r);
		r.code = TJERR_FATAL;
	} else if (out != dst) {
		tjFree(out);
		r.rc = -1;
		r.code = TJERR_FATAL;
		strcpy(r.msg, "output buffer reallocated");
	}
	r.size = size;
	return r;
}

static unsigned long tjw_bufsize(int w, int hh, int samp) {
	return tjBufSize(w, hh, samp);
}
*/
import "C"

import (
	"bytes"
	"fmt"
	"runtime"
	"unsafe"
)

// Available reports whether libjpeg-turbo is compiled in.
func Available() bool { return true }

func resultErr(op string, r C.tjw_result) error {
	msg := C.GoString(&r.msg[0])
	if r.code == C.TJERR_WARNING {
		if DamagingWarning(msg) {
			return fmt.Errorf("%w: %w: %s: %s", ErrWarning, ErrDamaged, op, msg)
		}
		return fmt.Errorf("%w: %s: %s", ErrWarning, op, msg)
	}
	return fmt.Errorf("%w: %s: %s", ErrFatal, op, msg)
}

type handle struct {
	h       C.tjhandle
	cleanup runtime.Cleanup
}

func newHandle(h C.tjhandle) (*handle, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: cannot create a TurboJPEG instance", ErrFatal)
	}
	return &handle{h: h}, nil
}

func destroy(h C.tjhandle) { C.tjDestroy(h) }

// close frees the handle now (and cancels its cleanup); it is safe on a nil or closed handle.
func (hd *handle) close() {
	if hd != nil && hd.h != nil {
		hd.cleanup.Stop()
		C.tjDestroy(hd.h)
		hd.h = nil
	}
}

// Decoder decompresses JPEG images. It is not safe for concurrent use.
type Decoder struct{ hd *handle }

// NewDecoder returns a Decoder that owns one TurboJPEG decompressor.
func NewDecoder() (*Decoder, error) {
	hd, err := newHandle(C.tjInitDecompress())
	if err != nil {
		return nil, err
	}
	d := &Decoder{hd: hd}
	hd.cleanup = runtime.AddCleanup(d, destroy, hd.h)
	return d, nil
}

// Close frees the decompressor. The Decoder must not be used afterwards.
func (d *Decoder) Close() { d.hd.close() }

func (d *Decoder) check() error {
	if d == nil || d.hd == nil || d.hd.h == nil {
		return fmt.Errorf("%w: decoder closed", ErrArgument)
	}
	return nil
}

// reset replaces the decompressor after an error: TurboJPEG 2.1 can leave a handle in a state
// where later calls fail ("Bogus DQT index") after a corrupt input.
func (d *Decoder) reset() {
	d.hd.cleanup.Stop()
	C.tjDestroy(d.hd.h)
	d.hd.h = C.tjInitDecompress()
	if d.hd.h != nil {
		d.hd.cleanup = runtime.AddCleanup(d, destroy, d.hd.h)
	}
}

// Header reads the JPEG's header (up to the start of scan) without decoding pixels.
func (d *Decoder) Header(jpeg []byte) (Header, error) {
	if err := d.check(); err != nil {
		return Header{}, err
	}
	if len(jpeg) == 0 {
		return Header{}, fmt.Errorf("%w: header: empty input", ErrFatal)
	}
	r := C.tjw_header(d.hd.h, (*C.uchar)(unsafe.Pointer(&jpeg[0])), C.ulong(len(jpeg)))
	runtime.KeepAlive(d)
	if r.rc != 0 {
		d.reset()
		return Header{}, resultErr("header", r)
	}
	return Header{Width: int(r.width), Height: int(r.height),
		Subsampling: Subsampling(r.subsamp), Colorspace: Colorspace(r.colorspace)}, nil
}

// Decode decompresses jpeg at scale num/8 (1..8; see ScaleFor) to pixel format pf, reusing dst
// when it is large enough. It returns the pixels (width*height*pf.Size() bytes, rows packed)
// and their size. A warning (for example a truncated file) returns the decoded pixels together
// with an error wrapping ErrWarning, and ErrDamaged when the warning says the data is damaged;
// such pixels are not to be trusted (see DamagingWarning). A fatal error returns no pixels.
func (d *Decoder) Decode(jpeg []byte, num int, pf PixelFormat, dst []byte) (pix []byte, w, h int, err error) {
	hdr, err := d.Header(jpeg)
	if err != nil {
		return nil, 0, 0, err
	}
	if num < 1 || num > 8 {
		return nil, 0, 0, fmt.Errorf("%w: scale %d/8", ErrArgument, num)
	}
	w, h = ScaledSize(hdr.Width, hdr.Height, num)
	n := w * h * pf.Size()
	if cap(dst) >= n {
		pix = dst[:n]
	} else {
		pix = make([]byte, n)
	}
	cpf := C.int(C.TJPF_RGB)
	if pf == Gray {
		cpf = C.TJPF_GRAY
	}
	r := C.tjw_decode(d.hd.h, (*C.uchar)(unsafe.Pointer(&jpeg[0])), C.ulong(len(jpeg)),
		(*C.uchar)(unsafe.Pointer(&pix[0])), C.int(w), C.int(h), cpf)
	runtime.KeepAlive(d)
	if r.rc != 0 {
		err = resultErr("decode", r)
		d.reset()
		if r.code != C.TJERR_WARNING {
			return nil, 0, 0, err
		}
	}
	return pix, w, h, err
}

// DecodeYUV decompresses jpeg at scale num/8 (1..8) to planar YCbCr without colour conversion
// or chroma upsampling, into dst (its buffers are reused). The planes keep the JPEG's own
// subsampling (SampGray for a grayscale JPEG). It returns an error wrapping ErrArgument, before
// decoding anything, for a JPEG that is not YCbCr or grayscale (RGB, CMYK, YCCK): decode those
// with Decode. Warnings are reported as by Decode, with the planes filled.
func (d *Decoder) DecodeYUV(jpeg []byte, num int, dst *Planes) error {
	hdr, err := d.Header(jpeg)
	if err != nil {
		return err
	}
	if num < 1 || num > 8 {
		return fmt.Errorf("%w: scale %d/8", ErrArgument, num)
	}
	if hdr.Colorspace != CSYCbCr && hdr.Colorspace != CSGray {
		return fmt.Errorf("%w: %s JPEG has no YCbCr planes", ErrArgument, hdr.Colorspace)
	}
	w, h := ScaledSize(hdr.Width, hdr.Height, num)
	if err := dst.Alloc(w, h, hdr.Subsampling); err != nil {
		return err
	}
	u, v := (*C.uchar)(nil), (*C.uchar)(nil)
	if dst.Cb != nil {
		u, v = (*C.uchar)(unsafe.Pointer(&dst.Cb[0])), (*C.uchar)(unsafe.Pointer(&dst.Cr[0]))
	}
	r := C.tjw_decode_yuv(d.hd.h, (*C.uchar)(unsafe.Pointer(&jpeg[0])), C.ulong(len(jpeg)),
		(*C.uchar)(unsafe.Pointer(&dst.Y[0])), u, v, C.int(w), C.int(h),
		C.int(dst.YStride), C.int(dst.CStride), 0)
	runtime.KeepAlive(d)
	if r.rc != 0 {
		err = resultErr("decode", r)
		d.reset()
	}
	return err
}

// Encoder compresses images to JPEG. It is not safe for concurrent use.
type Encoder struct {
	hd  *handle
	buf []byte
}

// NewEncoder returns an Encoder that owns one TurboJPEG compressor.
func NewEncoder() (*Encoder, error) {
	hd, err := newHandle(C.tjInitCompress())
	if err != nil {
		return nil, err
	}
	e := &Encoder{hd: hd}
	hd.cleanup = runtime.AddCleanup(e, destroy, hd.h)
	return e, nil
}

// Close frees the compressor. The Encoder must not be used afterwards.
func (e *Encoder) Close() { e.hd.close() }

// Encode compresses the w×h image pix (rows packed, pf) at quality q (1..100) with chroma
// subsampling samp (ignored for Gray, which is always SampGray). It returns a new slice that
// the caller owns.
func (e *Encoder) Encode(pix []byte, w, h int, pf PixelFormat, q int, samp Subsampling) ([]byte, error) {
	if e == nil || e.hd == nil || e.hd.h == nil {
		return nil, fmt.Errorf("%w: encoder closed", ErrArgument)
	}
	if w <= 0 || h <= 0 || w > 65535 || h > 65535 || len(pix) < w*h*pf.Size() {
		return nil, fmt.Errorf("%w: %dx%d (height x width) image with %d bytes", ErrArgument, h, w, len(pix))
	}
	if q < 1 || q > 100 {
		return nil, fmt.Errorf("%w: quality %d", ErrArgument, q)
	}
	cpf := C.int(C.TJPF_RGB)
	if pf == Gray {
		cpf = C.TJPF_GRAY
		samp = SampGray
	} else if samp < Samp444 || samp > Samp411 || samp == SampGray {
		return nil, fmt.Errorf("%w: subsampling %d for colour", ErrArgument, samp)
	}
	n := int(C.tjw_bufsize(C.int(w), C.int(h), C.int(samp)))
	if n <= 0 {
		return nil, fmt.Errorf("%w: no buffer size for %dx%d (height x width)", ErrArgument, h, w)
	}
	return e.withBuffer(n, func(buf []byte) C.tjw_result {
		return C.tjw_encode(e.hd.h, (*C.uchar)(unsafe.Pointer(&pix[0])), C.int(w), C.int(w*pf.Size()), C.int(h), cpf,
			(*C.uchar)(unsafe.Pointer(&buf[0])), C.ulong(len(buf)), C.int(samp), C.int(q))
	})
}

// keepBuffer bounds the output buffer an Encoder keeps between calls: a buffer for one huge
// image is dropped after it, so a worker's memory returns to what typical images need.
const keepBuffer = 32 << 20

// withBuffer runs encode into the Encoder's buffer of n bytes and returns a copy of its
// output. n must be tjBufSize's worst case: with TJFLAG_NOREALLOC, TurboJPEG 2.1 assumes a
// buffer of that size whatever size it is told, so a smaller one would be overrun. (Pages of
// the buffer the JPEG does not reach are never touched, so they cost no resident memory.)
func (e *Encoder) withBuffer(n int, encode func([]byte) C.tjw_result) ([]byte, error) {
	if cap(e.buf) < n {
		e.buf = nil // let the old one go before the new one is allocated
		e.buf = make([]byte, n)
	}
	r := encode(e.buf[:n])
	runtime.KeepAlive(e)
	if r.rc != 0 {
		e.reset()
		return nil, resultErr("encode", r)
	}
	out := bytes.Clone(e.buf[:int(r.size)]) // not zeroed first, unlike make

	if cap(e.buf) > keepBuffer {
		e.buf = nil
	}
	return out, nil
}

// reset replaces the compressor after an error: TurboJPEG 2.1 can leave a handle unusable.
func (e *Encoder) reset() {
	e.hd.cleanup.Stop()
	C.tjDestroy(e.hd.h)
	e.hd.h = C.tjInitCompress()
	if e.hd.h != nil {
		e.hd.cleanup = runtime.AddCleanup(e, destroy, e.hd.h)
	}
}

// EncodeYUV compresses the planar YCbCr image p (see Planes; its padding samples must be
// filled, for example by replicating the edge) at quality q (1..100) with p's subsampling. It
// skips colour conversion and chroma downsampling. It returns a new slice the caller owns.
func (e *Encoder) EncodeYUV(p *Planes, q int) ([]byte, error) {
	if e == nil || e.hd == nil || e.hd.h == nil {
		return nil, fmt.Errorf("%w: encoder closed", ErrArgument)
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	if q < 1 || q > 100 {
		return nil, fmt.Errorf("%w: quality %d", ErrArgument, q)
	}
	n := int(C.tjw_bufsize(C.int(p.Width), C.int(p.Height), C.int(p.Subsampling)))
	if n <= 0 {
		return nil, fmt.Errorf("%w: no buffer size for %dx%d (height x width)", ErrArgument, p.Height, p.Width)
	}
	u, v := (*C.uchar)(nil), (*C.uchar)(nil)
	if p.Subsampling != SampGray {
		u, v = (*C.uchar)(unsafe.Pointer(&p.Cb[0])), (*C.uchar)(unsafe.Pointer(&p.Cr[0]))
	}
	out, err := e.withBuffer(n, func(buf []byte) C.tjw_result {
		return C.tjw_encode_yuv(e.hd.h, (*C.uchar)(unsafe.Pointer(&p.Y[0])), u, v, C.int(p.Width), C.int(p.Height),
			C.int(p.YStride), C.int(p.CStride), C.int(p.Subsampling), (*C.uchar)(unsafe.Pointer(&buf[0])), C.ulong(len(buf)), C.int(q))
	})
	runtime.KeepAlive(p)
	return out, err
}

// check verifies that p's planes are large enough for its size and subsampling.
func (p *Planes) check() error {
	yw, yh, cw, ch, ok := PlaneSizes(p.Width, p.Height, p.Subsampling)
	if !ok || p.Width > 65535 || p.Height > 65535 {
		return fmt.Errorf("%w: %dx%d (height x width) planes with subsampling %d", ErrArgument, p.Height, p.Width, p.Subsampling)
	}
	short := func(b []byte, stride, w, h int) bool {
		return stride < w || len(b) < stride*(h-1)+w
	}
	if short(p.Y, p.YStride, yw, yh) || (ch > 0 && (short(p.Cb, p.CStride, cw, ch) || short(p.Cr, p.CStride, cw, ch))) {
		return fmt.Errorf("%w: planes too small for %dx%d (height x width)", ErrArgument, p.Height, p.Width)
	}
	return nil
}
