//go:build cgo

package imgdec

/*
#cgo LDFLAGS: -ljpeg
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	int damaged; // a warning that says the pixels are wrong ended the decode
	char msg[JMSG_LENGTH_MAX];
} imgdec_err;

// What the header says, or what a decode did.
typedef struct {
	int width, height, components, colorspace;
	int xoff, outw; // the columns decoded, after jpeg_crop_scanline widened them to iMCUs
	int rc;         // 0 ok, 1 error (msg), 2 damaged (msg)
	char msg[JMSG_LENGTH_MAX];
} imgdec_res;

typedef struct {
	struct jpeg_decompress_struct ci;
	imgdec_err err;
	imgdec_res res; // the last call's result (kept in C memory: no allocation per call)
} imgdec_jpeg;

static void imgdec_error_exit(j_common_ptr c) {
	imgdec_err *e = (imgdec_err *)c->err;
	(*c->err->format_message)(c, e->msg);
	longjmp(e->jb, 1);
}

// Warnings: the harmless ones are counted, any other (a truncated scan, a bad Huffman code,
// a lost restart marker, or one this list does not know) ends the decode as damaged data.
static void imgdec_emit_message(j_common_ptr c, int level) {
	imgdec_err *e = (imgdec_err *)c->err;
	if (level >= 0) return; // trace messages
	switch (c->err->msg_code) {
	case JWRN_EXTRANEOUS_DATA:
	case JWRN_JFIF_MAJOR:
	case JWRN_BOGUS_ICC:
		c->err->num_warnings++;
		return;
	}
	(*c->err->format_message)(c, e->msg);
	e->damaged = 1;
	longjmp(e->jb, 1);
}

static void imgdec_output_message(j_common_ptr c) { (void)c; }

static imgdec_jpeg *imgdec_new(void) {
	imgdec_jpeg *j = calloc(1, sizeof(imgdec_jpeg));
	if (j == NULL) return NULL;
	j->ci.err = jpeg_std_error(&j->err.pub);
	j->err.pub.error_exit = imgdec_error_exit;
	j->err.pub.emit_message = imgdec_emit_message;
	j->err.pub.output_message = imgdec_output_message;
	if (setjmp(j->err.jb)) {
		free(j);
		return NULL;
	}
	jpeg_create_decompress(&j->ci);
	return j;
}

static void imgdec_free(imgdec_jpeg *j) {
	jpeg_destroy_decompress(&j->ci);
	free(j);
}

// imgdec_fail ends a decode that longjmp'ed back: the decompressor is reset for the next
// image and no pointer to the caller's bytes is kept.
static void imgdec_fail(imgdec_jpeg *j, imgdec_res *r) {
	r->rc = j->err.damaged ? 2 : 1;
	memcpy(r->msg, j->err.msg, sizeof(r->msg));
	r->msg[sizeof(r->msg) - 1] = 0;
	jpeg_abort_decompress(&j->ci);
}

static void imgdec_done(imgdec_jpeg *j) {
	if (j->ci.src != NULL) {
		j->ci.src->next_input_byte = NULL;
		j->ci.src->bytes_in_buffer = 0;
	}
}

static void imgdec_begin(imgdec_jpeg *j, const unsigned char *b, unsigned long n) {
	j->err.damaged = 0;
	j->err.msg[0] = 0;
	j->err.pub.num_warnings = 0;
	jpeg_mem_src(&j->ci, b, n);
	jpeg_read_header(&j->ci, TRUE);
}

static void imgdec_header(imgdec_jpeg *j, const unsigned char *b, unsigned long n) {
	imgdec_res *r = &j->res;
	memset(r, 0, sizeof(*r));
	if (setjmp(j->err.jb)) {
		imgdec_fail(j, r);
		imgdec_done(j);
		return;
	}
	imgdec_begin(j, b, n);
	r->width = j->ci.image_width;
	r->height = j->ci.image_height;
	r->components = j->ci.num_components;
	r->colorspace = j->ci.jpeg_color_space;
	jpeg_abort_decompress(&j->ci);
	imgdec_done(j);
}

// cmyk_row converts n CMYK pixels (Adobe's inverted samples when inverted is set) to RGB or
// gray, in place: out may start where in does.
static void cmyk_row(unsigned char *out, const unsigned char *in, int n, int gray, int inverted) {
	for (int i = 0; i < n; i++) {
		int c = in[4 * i], m = in[4 * i + 1], y = in[4 * i + 2], k = in[4 * i + 3];
		if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
		// (255-C)(255-K)/255 with C = 255-c: c*k/255, rounded.
		int r = (c * k + 127) / 255, g = (m * k + 127) / 255, b = (y * k + 127) / 255;
		if (gray) {
			out[i] = (unsigned char)((19595 * r + 38470 * g + 7471 * b + 32768) >> 16);
		} else {
			out[3 * i] = r; out[3 * i + 1] = g; out[3 * i + 2] = b;
		}
	}
}

// imgdec_decode decodes rows [y0, y1) and columns [x0, x0+xw) (widened to whole iMCUs: see
// r->xoff, r->outw) of the image at scale num/8 into dst (cap bytes), rows packed, as RGB or
// gray. A CMYK image needs 4 bytes a pixel of room. fast selects the fast integer IDCT and
// plain (replicating) chroma upsampling, as TurboJPEG's TJFLAG_FASTDCT|TJFLAG_FASTUPSAMPLE.
static void imgdec_decode(imgdec_jpeg *j, const unsigned char *b, unsigned long n, int num, int gray, int fast,
                          int x0, int xw, int y0, int y1, long maxmem, unsigned char *dst, size_t cap) {
	j_decompress_ptr ci = &j->ci;
	imgdec_res *r = &j->res;
	memset(r, 0, sizeof(*r));
	if (setjmp(j->err.jb)) {
		imgdec_fail(j, r);
		imgdec_done(j);
		return;
	}
	imgdec_begin(j, b, n);
	int cmyk = ci->jpeg_color_space == JCS_CMYK || ci->jpeg_color_space == JCS_YCCK;
	ci->scale_num = num;
	ci->scale_denom = 8;
	ci->out_color_space = cmyk ? JCS_CMYK : gray ? JCS_GRAYSCALE : JCS_RGB;
	ci->mem->max_memory_to_use = maxmem;
	ci->dct_method = fast ? JDCT_IFAST : JDCT_ISLOW;
	ci->do_fancy_upsampling = fast ? FALSE : TRUE;
	jpeg_start_decompress(ci);
	JDIMENSION ow = ci->output_width, oh = ci->output_height;
	if (x0 < 0 || xw < 1 || (JDIMENSION)x0 + (JDIMENSION)xw > ow || y0 < 0 || y1 <= y0 || (JDIMENSION)y1 > oh) {
		snprintf(j->err.msg, sizeof(j->err.msg), "crop x %d+%d y %d..%d outside the %ux%u scaled image", x0, xw, y0, y1, ow, oh);
		j->err.damaged = 0;
		longjmp(j->err.jb, 1);
	}
	JDIMENSION xoff = x0, w = xw;
	if (xoff != 0 || w != ow) jpeg_crop_scanline(ci, &xoff, &w);
	int inc = ci->output_components;
	int outc = gray ? 1 : 3;
	if ((size_t)(y1 - y0) * (size_t)w * (size_t)(inc > outc ? inc : outc) > cap) {
		snprintf(j->err.msg, sizeof(j->err.msg), "decode buffer of %zu bytes too small for %ux%d", cap, w, y1 - y0);
		j->err.damaged = 0;
		longjmp(j->err.jb, 1);
	}
	if (y0 > 0) {
		JDIMENSION s = jpeg_skip_scanlines(ci, y0);
		if (s != (JDIMENSION)y0) {
			snprintf(j->err.msg, sizeof(j->err.msg), "skipped %u of %d rows", s, y0);
			j->err.damaged = 1;
			longjmp(j->err.jb, 1);
		}
	}
	int inverted = ci->saw_Adobe_marker;
	for (int y = 0; y < y1 - y0;) {
		JSAMPROW rows[8];
		int k = y1 - y0 - y;
		if (k > 8) k = 8;
		for (int i = 0; i < k; i++) rows[i] = dst + (size_t)(y + i) * w * (cmyk ? 4 : outc);
		JDIMENSION got = jpeg_read_scanlines(ci, rows, k);
		if (got == 0) {
			snprintf(j->err.msg, sizeof(j->err.msg), "no scanline at row %d", y0 + y);
			j->err.damaged = 1;
			longjmp(j->err.jb, 1);
		}
		if (cmyk) {
			for (JDIMENSION i = 0; i < got; i++) {
				cmyk_row(dst + (size_t)(y + i) * w * outc, dst + (size_t)(y + i) * w * 4, w, gray, inverted);
			}
		}
		y += got;
	}
	r->width = ci->image_width;
	r->height = ci->image_height;
	r->components = ci->num_components;
	r->xoff = xoff;
	r->outw = w;
	jpeg_abort_decompress(ci);
	imgdec_done(j);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"image"
	"runtime"
	"unsafe"
)

// jpegDecoder owns one libjpeg decompressor, created on first use.
type jpegDecoder struct {
	j       *C.imgdec_jpeg
	cleanup runtime.Cleanup
}

// LibJPEG reports whether JPEG is decoded by libjpeg-turbo (cgo builds) rather than by
// image/jpeg.
const LibJPEG = true

func freeJPEG(j *C.imgdec_jpeg) { C.imgdec_free(j) }

func (jd *jpegDecoder) init() error {
	if jd.j != nil {
		return nil
	}
	jd.j = C.imgdec_new()
	if jd.j == nil {
		return errors.New("imgdec: cannot create a libjpeg decompressor")
	}
	jd.cleanup = runtime.AddCleanup(jd, freeJPEG, jd.j)
	return nil
}

func (jd *jpegDecoder) close() {
	if jd.j != nil {
		jd.cleanup.Stop()
		C.imgdec_free(jd.j)
		jd.j = nil
	}
}

func resErr(r *C.imgdec_res) error {
	msg := C.GoString(&r.msg[0])
	if r.rc == 2 {
		return fmt.Errorf("%w: JPEG: damaged data: %s", ErrCorrupt, msg)
	}
	return fmt.Errorf("%w: JPEG: %s", ErrCorrupt, msg)
}

func (jd *jpegDecoder) header(data []byte) (*C.imgdec_res, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty image (0 bytes)", ErrCorrupt)
	}
	if err := jd.init(); err != nil {
		return nil, err
	}
	C.imgdec_header(jd.j, (*C.uchar)(unsafe.Pointer(&data[0])), C.ulong(len(data)))
	runtime.KeepAlive(jd) // its cleanup must not free the decompressor during the call
	r := &jd.j.res
	if r.rc != 0 {
		return nil, resErr(r)
	}
	return r, nil
}

func (jd *jpegDecoder) size(data []byte) (w, h, c int, err error) {
	r, err := jd.header(data)
	if err != nil {
		return 0, 0, 0, err
	}
	c = 3
	if r.components == 1 {
		c = 1
	}
	return int(r.width), int(r.height), c, nil
}

// decodeJPEG decodes the crop's rows and columns at the smallest DCT scale that covers the
// output (or the next one libjpeg-turbo has SIMD code for: simdScale), then resamples them.
func (d *Decoder) decodeJPEG(data []byte, crop image.Rectangle, outW, outH, channels int, flip, planar bool, dst []byte) error {
	hdr, err := d.jpeg.header(data)
	if err != nil {
		return err
	}
	w, h := int(hdr.width), int(hdr.height)
	if err := d.checkSize("JPEG", w, h, crop); err != nil {
		return err
	}
	num := simdScale(scaleFor(crop.Dx(), crop.Dy(), outW, outH))
	sw, sh := (w*num+7)/8, (h*num+7)/8
	s := float64(num) / 8
	b := fbox{float64(crop.Min.X) * s, float64(crop.Min.Y) * s, min(float64(crop.Max.X)*s, float64(sw)), min(float64(crop.Max.Y)*s, float64(sh))}
	x0, x1 := int(b.x0), min(int(ceil(b.x1)), sw)
	y0, y1 := int(b.y0), min(int(ceil(b.y1)), sh)
	inc := 3
	if hdr.components == 4 {
		inc = 4
	}
	// jpeg_crop_scanline widens the columns to whole iMCUs: at most the scaled width.
	d.buf = grow(d.buf, (y1-y0)*sw*inc)
	maxmem := int64(0)
	if d.maxPixels > 0 {
		maxmem = 8*d.maxPixels + 64<<20 // progressive coefficients: 2 bytes a sample
	}
	gray := C.int(0)
	if channels == 1 {
		gray = 1
	}
	fast := C.int(0)
	if d.fast {
		fast = 1
	}
	C.imgdec_decode(d.jpeg.j, (*C.uchar)(unsafe.Pointer(&data[0])), C.ulong(len(data)), C.int(num), gray, fast,
		C.int(x0), C.int(x1-x0), C.int(y0), C.int(y1), C.long(maxmem),
		(*C.uchar)(unsafe.Pointer(&d.buf[0])), C.size_t(len(d.buf)))
	runtime.KeepAlive(d)
	r := &d.jpeg.j.res
	if r.rc != 0 {
		return resErr(r)
	}
	if int(r.width) != w || int(r.height) != h {
		return fmt.Errorf("%w: JPEG: header said %dx%d (height x width), then %dx%d", ErrCorrupt, h, w, r.height, r.width)
	}
	xoff, ow := int(r.xoff), int(r.outw)
	src := plane{pix: d.buf, stride: ow * channels, c: channels}
	b.x0, b.x1 = b.x0-float64(xoff), b.x1-float64(xoff)
	b.y0, b.y1 = b.y0-float64(y0), b.y1-float64(y0)
	lim := image.Rect(x0-xoff, 0, x1-xoff, y1-y0)
	d.rs.resample(src, b, lim, outW, outH, flip, planar, dst)
	return nil
}

func ceil(x float64) float64 {
	i := float64(int(x))
	if i < x {
		return i + 1
	}
	return i
}
