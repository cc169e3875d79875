//go:build cgo

package imagefield

// The resampler's two passes in C, compiled with cgo: the same sums as resampleH and resampleV
// (bit for bit; TestResampleCMatchesGo), in loops the C compiler vectorises. The Go passes
// serve the pure-Go build.

/*
#cgo CFLAGS: -O3
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define WBITS 14
#define HALF (1 << (WBITS - 1))

static inline uint8_t rs_clamp(int32_t a) {
	int32_t v = a >> WBITS;
	return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
}

#ifdef __SSE2__
// rs_pack turns two vectors of 4 sums (each holding HALF) into 8 clamped bytes: the signed
// and unsigned saturating packs clamp exactly as rs_clamp does.
static inline __m128i rs_pack(__m128i s0, __m128i s1) {
	s0 = _mm_srai_epi32(s0, WBITS);
	s1 = _mm_srai_epi32(s1, WBITS);
	return _mm_packs_epi32(s0, s1);
}
#endif

#ifdef __SSE2__
// rs_group sums 8 outputs across (see rs_h) with samples gathered 16 bits at a time, and
// returns them as 8 clamped bytes in the low half.
static inline __m128i rs_group(const uint8_t *s, const int32_t *st, const int16_t *wg, int n) {
	const __m128i zero = _mm_setzero_si128(), half = _mm_set1_epi32(HALF);
	__m128i s0 = half, s1 = half;
	for (int k = 0; k < n; k += 2) {
		// The samples of taps k and k+1 of the 8 outputs, side by side.
		__m128i v = zero;
		if (k + 1 < n) {
			uint16_t q;
#define RS_PAIR(j) memcpy(&q, s + st[j] + k, 2); v = _mm_insert_epi16(v, q, j)
			RS_PAIR(0); RS_PAIR(1); RS_PAIR(2); RS_PAIR(3);
			RS_PAIR(4); RS_PAIR(5); RS_PAIR(6); RS_PAIR(7);
#undef RS_PAIR
		} else { // the last tap alone: never read past it
#define RS_ONE(j) v = _mm_insert_epi16(v, s[st[j] + k], j)
			RS_ONE(0); RS_ONE(1); RS_ONE(2); RS_ONE(3);
			RS_ONE(4); RS_ONE(5); RS_ONE(6); RS_ONE(7);
#undef RS_ONE
		}
		const __m128i *wp = (const __m128i *)(wg + k * 8);
		s0 = _mm_add_epi32(s0, _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), _mm_loadu_si128(wp)));
		s1 = _mm_add_epi32(s1, _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), _mm_loadu_si128(wp + 1)));
	}
	__m128i r = rs_pack(s0, s1);
	return _mm_packus_epi16(r, r);
}

// rs_h_sse2 runs rs_group along a row; it returns the outputs done (a multiple of 8).
static int rs_h_sse2(const uint8_t *s, uint8_t *d, int dw, const int32_t *start, int n, const int16_t *w16) {
	const int np = (n + 1) / 2;
	int x = 0;
	for (; x + 8 <= dw; x += 8) {
		_mm_storel_epi64((__m128i *)(d + x), rs_group(s, start + x, w16 + (ptrdiff_t)(x / 8) * np * 16, n));
	}
	return x;
}
#endif

#if defined(__SSE2__) && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <tmmintrin.h>
#define RS_SSSE3 1
// rs_h_ssse3 is rs_h_sse2 gathering the samples of 8 outputs with one 16-byte load and a
// byte shuffle (shuf: one 16-byte mask per run of 8 outputs and pair of taps, relative to the
// run's first start) where ok says the run's samples lie within those 16 bytes and the row.
// It runs only where the CPU has SSSE3 (checked by the caller).
__attribute__((target("ssse3")))
static int rs_h_ssse3(const uint8_t *s, uint8_t *d, int dw, const int32_t *start, int n, const int16_t *w16,
                      const uint8_t *shuf, const uint8_t *ok) {
	const int np = (n + 1) / 2;
	const __m128i zero = _mm_setzero_si128(), half = _mm_set1_epi32(HALF);
	int x = 0;
	for (; x + 8 <= dw; x += 8) {
		const int g = x / 8;
		const int16_t *wg = w16 + (ptrdiff_t)g * np * 16;
		if (!ok[g]) {
			_mm_storel_epi64((__m128i *)(d + x), rs_group(s, start + x, wg, n));
			continue;
		}
		const __m128i b = _mm_loadu_si128((const __m128i *)(s + start[x]));
		const uint8_t *mg = shuf + (ptrdiff_t)g * np * 16;
		__m128i s0 = half, s1 = half;
		for (int p = 0; p < np; p++) {
			__m128i v = _mm_shuffle_epi8(b, _mm_loadu_si128((const __m128i *)(mg + p * 16)));
			const __m128i *wp = (const __m128i *)(wg + p * 16);
			s0 = _mm_add_epi32(s0, _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), _mm_loadu_si128(wp)));
			s1 = _mm_add_epi32(s1, _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), _mm_loadu_si128(wp + 1)));
		}
		__m128i r = rs_pack(s0, s1);
		_mm_storel_epi64((__m128i *)(d + x), _mm_packus_epi16(r, r));
	}
	return x;
}
#endif

// rs_h resamples rows rows of one-channel samples across: output x of a row is the sum over
// k < n of w[x*n+k] times the source sample start[x]+k. w16, when not NULL, holds the same
// weights as 16-bit pairs for the SIMD loops: for each run of 8 outputs and each pair of taps
// (2p, 2p+1), the 8 outputs' two weights side by side (0 for a missing tap 2p+1). shuf and ok,
// when not NULL, are rs_h_ssse3's, to use (the CPU has SSSE3).
static void rs_h(const uint8_t *src, ptrdiff_t sstride, int rows, uint8_t *dst, ptrdiff_t dstride,
                 int dw, const int32_t *start, const int32_t *w, int n, const int16_t *w16,
                 const uint8_t *shuf, const uint8_t *ok) {
	for (int y = 0; y < rows; y++) {
		const uint8_t *s = src + y * sstride;
		uint8_t *d = dst + y * dstride;
		int x = 0;
#ifdef __SSE2__
		if (w16 != NULL) {
#ifdef RS_SSSE3
			if (shuf != NULL) {
				x = rs_h_ssse3(s, d, dw, start, n, w16, shuf, ok);
			} else
#endif
			x = rs_h_sse2(s, d, dw, start, n, w16);
		}
#endif
		if (n == 2) {
			for (; x < dw; x++) {
				const uint8_t *p = s + start[x];
				d[x] = rs_clamp(HALF + w[2 * x] * p[0] + w[2 * x + 1] * p[1]);
			}
		} else if (n == 3) {
			for (; x < dw; x++) {
				const uint8_t *p = s + start[x];
				d[x] = rs_clamp(HALF + w[3 * x] * p[0] + w[3 * x + 1] * p[1] + w[3 * x + 2] * p[2]);
			}
		} else {
			for (; x < dw; x++) {
				const uint8_t *p = s + start[x];
				const int32_t *wx = w + x * n;
				int32_t a = HALF;
				for (int k = 0; k < n; k++) a += wx[k] * p[k];
				d[x] = rs_clamp(a);
			}
		}
	}
}

// rs_has_ssse3 reports whether rs_h_ssse3 is compiled in.
static int rs_has_ssse3(void) {
#ifdef RS_SSSE3
	return 1;
#else
	return 0;
#endif
}

// rs_v resamples rows of len bytes down to dh rows: output row y is the sum over k < n of
// w[y*n+k] times source row start[y]+k. w16 is as for rs_h. It returns -1 when out of memory.
static int rs_v(const uint8_t *src, ptrdiff_t sstride, int len, uint8_t *dst, ptrdiff_t dstride,
                int dh, const int32_t *start, const int32_t *w, int n, int w16) {
	int32_t *acc = NULL;
	if (n > 3 && (acc = malloc((size_t)len * sizeof(int32_t))) == NULL) return -1;
	for (int y = 0; y < dh; y++) {
		const uint8_t *r = src + start[y] * sstride;
		const int32_t *wy = w + y * n;
		uint8_t *restrict d = dst + y * dstride;
		int i = 0;
#ifdef __SSE2__
		if (w16) {
			// Rows in pairs (the last one alone, beside zeros): each 32-bit lane multiplies
			// the pair's two samples by their two 16-bit weights and adds.
			const __m128i zero = _mm_setzero_si128(), half = _mm_set1_epi32(HALF);
			for (; i + 16 <= len; i += 16) {
				__m128i s0 = half, s1 = half, s2 = half, s3 = half;
				for (int k = 0; k < n; k += 2) {
					__m128i a = _mm_loadu_si128((const __m128i *)(r + k * sstride + i));
					__m128i b = zero;
					uint32_t wk = (uint16_t)wy[k];
					if (k + 1 < n) {
						b = _mm_loadu_si128((const __m128i *)(r + (k + 1) * sstride + i));
						wk |= (uint32_t)(uint16_t)wy[k + 1] << 16;
					}
					__m128i wv = _mm_set1_epi32((int32_t)wk);
					__m128i lo = _mm_unpacklo_epi8(a, b), hi = _mm_unpackhi_epi8(a, b);
					s0 = _mm_add_epi32(s0, _mm_madd_epi16(_mm_unpacklo_epi8(lo, zero), wv));
					s1 = _mm_add_epi32(s1, _mm_madd_epi16(_mm_unpackhi_epi8(lo, zero), wv));
					s2 = _mm_add_epi32(s2, _mm_madd_epi16(_mm_unpacklo_epi8(hi, zero), wv));
					s3 = _mm_add_epi32(s3, _mm_madd_epi16(_mm_unpackhi_epi8(hi, zero), wv));
				}
				_mm_storeu_si128((__m128i *)(d + i), _mm_packus_epi16(rs_pack(s0, s1), rs_pack(s2, s3)));
			}
		}
#endif
		if (i == len) continue;
		if (n == 1) {
			const int32_t w0 = wy[0];
			for (; i < len; i++) d[i] = rs_clamp(HALF + w0 * r[i]);
		} else if (n == 2) {
			const uint8_t *r1 = r + sstride;
			const int32_t w0 = wy[0], w1 = wy[1];
			for (; i < len; i++) d[i] = rs_clamp(HALF + w0 * r[i] + w1 * r1[i]);
		} else if (n == 3) {
			const uint8_t *r1 = r + sstride, *r2 = r1 + sstride;
			const int32_t w0 = wy[0], w1 = wy[1], w2 = wy[2];
			for (; i < len; i++) d[i] = rs_clamp(HALF + w0 * r[i] + w1 * r1[i] + w2 * r2[i]);
		} else {
			int i0 = i;
			for (i = i0; i < len; i++) acc[i] = HALF + wy[0] * r[i];
			for (int k = 1; k < n; k++) {
				const uint8_t *rk = r + k * sstride;
				const int32_t wk = wy[k];
				for (i = i0; i < len; i++) acc[i] += wk * rk[i];
			}
			for (i = i0; i < len; i++) d[i] = rs_clamp(acc[i]);
		}
	}
	free(acc);
	return 0;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// spanOK panics unless b holds rows rows of n bytes, rows stride bytes apart: the C passes
// index without bounds checks.
func spanOK(b []byte, rows, stride, n int) {
	if rows > 0 && (stride < n || len(b) < (rows-1)*stride+n) {
		panic(fmt.Sprintf("imagefield: %d bytes for %d rows of %d bytes, stride %d", len(b), rows, n, stride))
	}
}

// w16 tells the C passes whether every weight of t fits in 16 bits.
func w16(t *taps) C.int {
	if t.small {
		return 1
	}
	return 0
}

// passH is resampleH, in C for one channel (the Go loops for interleaved pixels are as fast).
func passH(src []byte, sw, sh, sstride, c int, dst []byte, dw, dstride int, t *taps) {
	if c != 1 {
		resampleH(src, sw, sh, sstride, c, dst, dw, dstride, t)
		return
	}
	if t.src != sw || len(t.start) != dw {
		panic("imagefield: taps do not fit the pass")
	}
	spanOK(src, sh, sstride, sw)
	spanOK(dst, sh, dstride, dw)
	if sh == 0 || dw == 0 {
		return
	}
	var p16 *C.int16_t
	var shuf, ok *C.uint8_t
	if len(t.w16) > 0 {
		p16 = (*C.int16_t)(unsafe.Pointer(&t.w16[0]))
		if len(t.shuf) > 0 {
			shuf, ok = (*C.uint8_t)(unsafe.Pointer(&t.shuf[0])), (*C.uint8_t)(unsafe.Pointer(&t.shufOK[0]))
		}
	}
	C.rs_h((*C.uint8_t)(unsafe.Pointer(&src[0])), C.ptrdiff_t(sstride), C.int(sh),
		(*C.uint8_t)(unsafe.Pointer(&dst[0])), C.ptrdiff_t(dstride), C.int(dw),
		(*C.int32_t)(unsafe.Pointer(&t.start[0])), (*C.int32_t)(unsafe.Pointer(&t.w[0])), C.int(t.n), p16, shuf, ok)
}

// ssse3 is true when rs_h may shuffle bytes (compiled in, and the CPU has SSSE3).
var ssse3 = C.rs_has_ssse3() != 0 && cpu.X86.HasSSSE3

// cTaps holds a taps' weights laid out for the C pass across (see rs_h).
type cTaps struct {
	w16    []int16 // 16-bit weight pairs, nil when the SIMD loops cannot take the weights
	shuf   []byte  // byte shuffles of rs_h_ssse3, nil without SSSE3
	shufOK []byte  // per run of 8 outputs: 1 when its shuffles may be used
}

// prepare fills t.cTaps: for each run of 8 outputs and each pair of taps (2p, 2p+1), the
// 8 outputs' two weights side by side as 16-bit values (0 for a missing tap 2p+1), and the
// shuffle that gathers their samples from 16 bytes read at the run's first start. Nothing
// when a weight does not fit in 16 bits or there are fewer than 8 outputs.
func (t *taps) prepare() {
	if !t.small || len(t.start) < 8 {
		return
	}
	n, np := t.n, (t.n+1)/2
	groups := len(t.start) / 8
	t.w16 = make([]int16, groups*np*16)
	if ssse3 {
		t.shuf, t.shufOK = make([]byte, groups*np*16), make([]byte, groups)
	}
	for g := 0; g < groups; g++ {
		base := int(t.start[8*g])
		fits := base+16 <= t.src
		for p := 0; p < np; p++ {
			for j := 0; j < 8; j++ {
				x := 8*g + j
				o := (g*np+p)*16 + 2*j
				t.w16[o] = int16(t.w[x*n+2*p])
				off := int(t.start[x]) - base + 2*p
				hi := 0x80 // a missing tap: the shuffle gives 0
				if 2*p+1 < n {
					t.w16[o+1] = int16(t.w[x*n+2*p+1])
					hi = off + 1
				}
				if t.shuf != nil {
					t.shuf[o], t.shuf[o+1] = byte(off), byte(hi)
				}
				if off+1 > 15 {
					fits = false
				}
			}
		}
		if t.shufOK != nil && fits {
			t.shufOK[g] = 1
		}
	}
}

// passV is resampleV in C.
func passV(src []byte, rowLen, sstride int, dst []byte, dh, dstride int, t *taps) {
	if len(t.start) != dh {
		panic("imagefield: taps do not fit the pass")
	}
	spanOK(src, t.src, sstride, rowLen)
	spanOK(dst, dh, dstride, rowLen)
	if dh == 0 || rowLen == 0 {
		return
	}
	if C.rs_v((*C.uint8_t)(unsafe.Pointer(&src[0])), C.ptrdiff_t(sstride), C.int(rowLen),
		(*C.uint8_t)(unsafe.Pointer(&dst[0])), C.ptrdiff_t(dstride), C.int(dh),
		(*C.int32_t)(unsafe.Pointer(&t.start[0])), (*C.int32_t)(unsafe.Pointer(&t.w[0])), C.int(t.n), w16(t)) != 0 {
		resampleV(src, rowLen, sstride, dst, dh, dstride, t) // no memory for the sums in C
	}
}
