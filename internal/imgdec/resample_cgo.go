//go:build cgo

package imgdec

/*
#cgo CFLAGS: -O3
#include <stdint.h>
#include <string.h>

#define IMGDEC_PREC 22

// On x86-64 Linux the passes are compiled twice, for AVX2 (8 lanes of 32-bit multiplies) and
// for the baseline (SSE2, which has no 32-bit vector multiply); the loader picks one for the
// CPU it runs on.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define IMGDEC_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define IMGDEC_CLONES
#endif

static inline unsigned char imgdec_clip8(int32_t v) {
	v >>= IMGDEC_PREC;
	return v < 0 ? 0 : v > 255 ? 255 : (unsigned char)v;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define IMGDEC_SSE41 1
// The horizontal pass of RGB rows with SSE4.1: a pixel's three samples are one vector
// (loaded as 4 bytes: the caller makes sure a byte follows the last pixel read), so each tap
// is one widen, one multiply and one add. packs/packus clamp to 0..255 as imgdec_clip8 does.
__attribute__((target("sse4.1")))
static inline __m128i imgdec_px(const unsigned char *p) {
	int32_t v;
	memcpy(&v, p, 4);
	return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(v));
}

// imgdec_htable lays out the horizontal filter in output order (mirrored when flip is set)
// for imgdec_hrow3: per output pixel x, off[x] the byte offset of its first input pixel
// and cnt[x] its taps, and per tap a vector of the weight four times, at wv[x*ksize + t].
__attribute__((target("sse4.1")))
static void imgdec_htable(int outW, const int32_t *restrict start, const int32_t *restrict n,
                          const int32_t *restrict k, int ksize, int flip, int32_t *restrict off,
                          int32_t *restrict cnt, __m128i *restrict wv) {
	for (int x = 0; x < outW; x++) {
		int i = flip ? outW - 1 - x : x;
		off[x] = 3 * start[i];
		cnt[x] = n[i];
		for (int t = 0; t < n[i]; t++) wv[(long)x * ksize + t] = _mm_set1_epi32(k[i * ksize + t]);
	}
}

// imgdec_hrow3 is the horizontal pass of one RGB row, reading the tables of imgdec_htable
// (no index arithmetic, mirroring or weight broadcast per pixel). Output pixels are written
// in increasing x, 4 bytes at a time (the 4th is the next pixel's, written next), the last
// one 3 bytes; or, when plane > 0, one byte to each of the three planes plane bytes apart.
__attribute__((target("sse4.1")))
static void imgdec_hrow3(const unsigned char *restrict in, int outW, const int32_t *restrict off,
                             const int32_t *restrict cnt, const __m128i *restrict wv, int ksize, long plane,
                             unsigned char *restrict o) {
	const __m128i h = _mm_set1_epi32(1 << (IMGDEC_PREC - 1));
	for (int x = 0; x < outW; x++) {
		const unsigned char *p = in + off[x];
		const __m128i *w = wv + (long)x * ksize;
		__m128i acc;
		const int nt = cnt[x];
		if (nt == 2) {
			acc = _mm_add_epi32(h, _mm_add_epi32(_mm_mullo_epi32(imgdec_px(p), w[0]), _mm_mullo_epi32(imgdec_px(p + 3), w[1])));
		} else {
			acc = h;
			for (int t = 0; t < nt; t++) acc = _mm_add_epi32(acc, _mm_mullo_epi32(imgdec_px(p + 3 * t), w[t]));
		}
		acc = _mm_srai_epi32(acc, IMGDEC_PREC);
		__m128i b16 = _mm_packs_epi32(acc, acc);
		uint32_t rgb = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(b16, b16));
		if (plane > 0) {
			o[x] = (unsigned char)rgb;
			o[plane + x] = (unsigned char)(rgb >> 8);
			o[2 * plane + x] = (unsigned char)(rgb >> 16);
		} else if (x < outW - 1) {
			memcpy(o + 3 * x, &rgb, 4);
		} else {
			o[3 * x] = (unsigned char)rgb;
			o[3 * x + 1] = (unsigned char)(rgb >> 8);
			o[3 * x + 2] = (unsigned char)(rgb >> 16);
		}
	}
}

// imgdec_htablep lays out a filter of at most two taps in output order (mirrored when flip
// is set) for imgdec_hrow3p_avx2: per output pixel x, off[x] the byte offset of its first
// input pixel and w0[x], w1[x] its two weights (w1[x] 0 for a one-tap output); then per
// block of 8 outputs, when each half of the block reads at most 4 consecutive input pixels
// (upscales always do) and 16 bytes from its first one are readable (safe bytes from a row's
// start), the byte offsets of the two halves' first pixels in win[2b], win[2b+1] and a
// shuffle in mask[32b:] that picks each output's taps from the two 16-byte windows; else
// win[2b] is -1 and the block gathers.
static void imgdec_htablep(int outW, const int32_t *restrict start, const int32_t *restrict n,
                           const int32_t *restrict k, int ksize, int flip, long safe, int32_t *restrict off,
                           int32_t *restrict w0, int32_t *restrict w1, int32_t *restrict win,
                           unsigned char *restrict mask) {
	for (int x = 0; x < outW; x++) {
		int i = flip ? outW - 1 - x : x;
		off[x] = 3 * start[i];
		w0[x] = k[i * ksize];
		w1[x] = n[i] == 2 ? k[i * ksize + 1] : 0;
	}
	for (int b = 0; b < outW / 8; b++) {
		unsigned char *m = mask + 32 * b;
		win[2 * b] = 0;
		for (int half = 0; half < 2 && win[2 * b] >= 0; half++) {
			const int32_t *o = off + 8 * b + 4 * half;
			int32_t lo = o[0], hi = o[0];
			for (int j = 1; j < 4; j++) {
				lo = o[j] < lo ? o[j] : lo;
				hi = o[j] > hi ? o[j] : hi;
			}
			if (hi - lo > 9 || lo + 16 > safe) {
				win[2 * b] = -1;
				break;
			}
			win[2 * b + half] = lo;
			for (int j = 0; j < 4; j++) {
				unsigned char r = (unsigned char)(o[j] - lo);
				unsigned char *mj = m + 16 * half + 4 * j;
				mj[0] = r;
				mj[1] = mj[2] = 0x80;
				mj[3] = r + 3;
			}
		}
	}
}

// imgdec_hrow3p_avx2 is the horizontal pass of one RGB row into three planes (plane bytes
// apart) with a filter of at most two taps (an upscale, or a reduction under 1.5x: most
// random-resized crops), 8 output pixels of one channel at a time. For each channel it makes
// the 32-bit words at in + off[x] + ch of 8 outputs: byte 0 is the first tap, byte 3 the
// second (the next pixel's same channel). Where imgdec_htablep found the block's two halves
// each within 16 bytes, one byte shuffle of the two windows makes them (the mask's zeroing
// bytes stay negative with ch added); else a gather reads them. Reads up to 3 bytes past the
// last pixel a filter uses (the caller makes sure they exist); the arithmetic is the scalar
// pass's, so the pixels are the same to the bit.
__attribute__((target("avx2")))
static void imgdec_hrow3p_avx2(const unsigned char *restrict in, int outW, const int32_t *restrict off,
                               const int32_t *restrict w0, const int32_t *restrict w1,
                               const int32_t *restrict win, const unsigned char *restrict mask, long plane,
                               unsigned char *restrict o) {
	const __m256i h = _mm256_set1_epi32(1 << (IMGDEC_PREC - 1)), lo8 = _mm256_set1_epi32(0xff);
	int x = 0;
	for (; x + 8 <= outW; x += 8) {
		const int b = x / 8;
		const __m256i k0 = _mm256_loadu_si256((const __m256i *)(w0 + x));
		const __m256i k1 = _mm256_loadu_si256((const __m256i *)(w1 + x));
		__m256i d[3];
		if (win[2 * b] >= 0) {
			const __m256i w = _mm256_inserti128_si256(
			    _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(in + win[2 * b]))),
			    _mm_loadu_si128((const __m128i *)(in + win[2 * b + 1])), 1);
			const __m256i m = _mm256_loadu_si256((const __m256i *)(mask + 32 * b));
			d[0] = _mm256_shuffle_epi8(w, m);
			d[1] = _mm256_shuffle_epi8(w, _mm256_add_epi8(m, _mm256_set1_epi8(1)));
			d[2] = _mm256_shuffle_epi8(w, _mm256_add_epi8(m, _mm256_set1_epi8(2)));
		} else {
			const __m256i idx = _mm256_loadu_si256((const __m256i *)(off + x));
			for (int ch = 0; ch < 3; ch++) d[ch] = _mm256_i32gather_epi32((const int *)(in + ch), idx, 1);
		}
		for (int ch = 0; ch < 3; ch++) {
			__m256i a = _mm256_add_epi32(h, _mm256_add_epi32(_mm256_mullo_epi32(_mm256_and_si256(d[ch], lo8), k0),
			                                                 _mm256_mullo_epi32(_mm256_srli_epi32(d[ch], 24), k1)));
			a = _mm256_srai_epi32(a, IMGDEC_PREC);
			__m256i p = _mm256_packs_epi32(a, a);
			p = _mm256_packus_epi16(p, p);
			// p's lanes each start with their 4 outputs' bytes
			__m128i q = _mm_unpacklo_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
			_mm_storel_epi64((__m128i *)(o + ch * plane + x), q);
		}
	}
	const int32_t h1 = 1 << (IMGDEC_PREC - 1);
	for (; x < outW; x++) {
		const unsigned char *p = in + off[x];
		for (int ch = 0; ch < 3; ch++) o[ch * plane + x] = imgdec_clip8(h1 + p[ch] * w0[x] + p[ch + 3] * w1[x]);
	}
}

// imgdec_htablep4 lays out a filter of three or four taps in output order for
// imgdec_hrow3p4_avx2: per output x, off[x] its first input pixel's byte offset, cnt[x] its
// taps and wt[t*outW + x] its weights (0 past its taps); per block of 8 outputs, when each
// half of it reads within 32 bytes of its first pixel and those are readable (safe bytes from
// a row's start), win[2b], win[2b+1] the halves' first bytes and, per channel, the shuffles
// that pick the two words of taps (taps 0 and 1 at bytes 0 and 3, taps 2 and 3 likewise) out
// of the first and the second 16 bytes: mask[384b + 128ch + 32q], q = word*2 + window; else
// win[2b] is -1 and the block runs scalar.
static void imgdec_htablep4(int outW, const int32_t *restrict start, const int32_t *restrict n,
                            const int32_t *restrict k, int ksize, int flip, long safe, int32_t *restrict off,
                            int32_t *restrict cnt, int32_t *restrict wt, int32_t *restrict win,
                            unsigned char *restrict mask) {
	for (int x = 0; x < outW; x++) {
		int i = flip ? outW - 1 - x : x;
		off[x] = 3 * start[i];
		cnt[x] = n[i];
		for (int t = 0; t < 4; t++) wt[t * outW + x] = t < n[i] ? k[i * ksize + t] : 0;
	}
	for (int b = 0; b < outW / 8; b++) {
		unsigned char *m = mask + 384 * b;
		memset(m, 0x80, 384);
		win[2 * b] = 0;
		for (int half = 0; half < 2 && win[2 * b] >= 0; half++) {
			const int32_t *o = off + 8 * b + 4 * half;
			int32_t lo = o[0], hi = o[0];
			for (int j = 1; j < 4; j++) {
				lo = o[j] < lo ? o[j] : lo;
				hi = o[j] > hi ? o[j] : hi;
			}
			if (hi - lo + 3 * 3 + 2 >= 32 || lo + 32 > safe) {
				win[2 * b] = -1;
				break;
			}
			win[2 * b + half] = lo;
			for (int j = 0; j < 4; j++) {
				const int x = 8 * b + 4 * half + j;
				for (int ch = 0; ch < 3; ch++) {
					for (int t = 0; t < cnt[x]; t++) {
						int r = o[j] - lo + 3 * t + ch;  // the tap's byte in the 32
						int word = t / 2, pos = t % 2 ? 3 : 0;
						unsigned char *mq = m + 128 * ch + 32 * (word * 2 + r / 16);
						mq[16 * half + 4 * j + pos] = (unsigned char)(r % 16);
					}
				}
			}
		}
	}
}

// imgdec_hrow3p4_avx2 is imgdec_hrow3p_avx2 for filters of three or four taps (reductions
// of 1.5x to 2.5x): two words of taps per channel and output, each from shuffles of two
// 16-byte windows per half block, or a scalar loop where imgdec_htablep4 found no windows.
__attribute__((target("avx2")))
static void imgdec_hrow3p4_avx2(const unsigned char *restrict in, int outW, const int32_t *restrict off,
                                const int32_t *restrict cnt, const int32_t *restrict wt,
                                const int32_t *restrict win, const unsigned char *restrict mask, long plane,
                                unsigned char *restrict o) {
	const __m256i h = _mm256_set1_epi32(1 << (IMGDEC_PREC - 1)), lo8 = _mm256_set1_epi32(0xff);
	const int32_t h1 = 1 << (IMGDEC_PREC - 1);
	int x = 0;
	for (; x + 8 <= outW; x += 8) {
		const int b = x / 8;
		if (win[2 * b] < 0) {
			for (int j = x; j < x + 8; j++) {
				const unsigned char *p = in + off[j];
				for (int ch = 0; ch < 3; ch++) {
					int32_t v = h1;
					for (int t = 0; t < cnt[j]; t++) v += p[3 * t + ch] * wt[t * outW + j];
					o[ch * plane + j] = imgdec_clip8(v);
				}
			}
			continue;
		}
		__m256i k[4];
		for (int t = 0; t < 4; t++) k[t] = _mm256_loadu_si256((const __m256i *)(wt + t * outW + x));
		const unsigned char *p0 = in + win[2 * b], *p1 = in + win[2 * b + 1];
		const __m256i A = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p0)),
		                                          _mm_loadu_si128((const __m128i *)p1), 1);
		const __m256i B = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p0 + 16))),
		                                          _mm_loadu_si128((const __m128i *)(p1 + 16)), 1);
		for (int ch = 0; ch < 3; ch++) {
			const unsigned char *m = mask + 384 * b + 128 * ch;
			__m256i a = h;
			for (int word = 0; word < 2; word++) {
				__m256i d = _mm256_or_si256(
				    _mm256_shuffle_epi8(A, _mm256_loadu_si256((const __m256i *)(m + 64 * word))),
				    _mm256_shuffle_epi8(B, _mm256_loadu_si256((const __m256i *)(m + 64 * word + 32))));
				a = _mm256_add_epi32(a, _mm256_add_epi32(_mm256_mullo_epi32(_mm256_and_si256(d, lo8), k[2 * word]),
				                                         _mm256_mullo_epi32(_mm256_srli_epi32(d, 24), k[2 * word + 1])));
			}
			a = _mm256_srai_epi32(a, IMGDEC_PREC);
			__m256i p = _mm256_packs_epi32(a, a);
			p = _mm256_packus_epi16(p, p);
			__m128i q = _mm_unpacklo_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
			_mm_storel_epi64((__m128i *)(o + ch * plane + x), q);
		}
	}
	for (; x < outW; x++) {
		const unsigned char *p = in + off[x];
		for (int ch = 0; ch < 3; ch++) {
			int32_t v = h1;
			for (int t = 0; t < cnt[x]; t++) v += p[3 * t + ch] * wt[t * outW + x];
			o[ch * plane + x] = imgdec_clip8(v);
		}
	}
}

// imgdec_vrow2_sse41 is the vertical pass of one output row from two input rows.
__attribute__((target("sse4.1")))
static void imgdec_vrow2_sse41(const unsigned char *restrict r0, const unsigned char *restrict r1, int32_t w0,
                               int32_t w1, int len, unsigned char *restrict out) {
	const __m128i h = _mm_set1_epi32(1 << (IMGDEC_PREC - 1));
	const __m128i k0 = _mm_set1_epi32(w0), k1 = _mm_set1_epi32(w1);
	int j = 0;
	for (; j + 16 <= len; j += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(r0 + j));
		__m128i b = _mm_loadu_si128((const __m128i *)(r1 + j));
		__m128i s[4];
		for (int q = 0; q < 4; q++) {
			__m128i av = _mm_cvtepu8_epi32(a), bv = _mm_cvtepu8_epi32(b);
			s[q] = _mm_srai_epi32(_mm_add_epi32(h, _mm_add_epi32(_mm_mullo_epi32(av, k0), _mm_mullo_epi32(bv, k1))), IMGDEC_PREC);
			a = _mm_srli_si128(a, 4);
			b = _mm_srli_si128(b, 4);
		}
		__m128i lo = _mm_packs_epi32(s[0], s[1]), hi = _mm_packs_epi32(s[2], s[3]);
		_mm_storeu_si128((__m128i *)(out + j), _mm_packus_epi16(lo, hi));
	}
	for (; j < len; j++) out[j] = imgdec_clip8((1 << (IMGDEC_PREC - 1)) + r0[j] * w0 + r1[j] * w1);
}

// imgdec_vrow2_avx2 is imgdec_vrow2_sse41 on 32 bytes at a time (8 lanes a multiply).
__attribute__((target("avx2")))
static void imgdec_vrow2_avx2(const unsigned char *restrict r0, const unsigned char *restrict r1, int32_t w0,
                              int32_t w1, int len, unsigned char *restrict out) {
	const __m256i h = _mm256_set1_epi32(1 << (IMGDEC_PREC - 1));
	const __m256i k0 = _mm256_set1_epi32(w0), k1 = _mm256_set1_epi32(w1);
	int j = 0;
	for (; j + 32 <= len; j += 32) {
		__m256i s[4];
		for (int q = 0; q < 4; q++) {
			__m256i av = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(r0 + j + 8 * q)));
			__m256i bv = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(r1 + j + 8 * q)));
			s[q] = _mm256_srai_epi32(_mm256_add_epi32(h, _mm256_add_epi32(_mm256_mullo_epi32(av, k0), _mm256_mullo_epi32(bv, k1))), IMGDEC_PREC);
		}
		// packs/packus work within 128-bit lanes: [s0 s1] -> lanes (s0lo s1lo | s0hi s1hi)
		__m256i lo = _mm256_packs_epi32(s[0], s[1]), hi = _mm256_packs_epi32(s[2], s[3]);
		__m256i b = _mm256_packus_epi16(lo, hi);
		// b's dwords are s0lo s1lo s2lo s3lo | s0hi s1hi s2hi s3hi (4 bytes each): reorder
		b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
		_mm256_storeu_si256((__m256i *)(out + j), b);
	}
	for (; j < len; j++) out[j] = imgdec_clip8((1 << (IMGDEC_PREC - 1)) + r0[j] * w0 + r1[j] * w1);
}
#endif

// The horizontal pass over rows rows of src (stride bytes apart), c channels, into out
// (rows of outW*c bytes; or, when plane > 0, c planes plane bytes apart of rows of outW
// bytes), mirrored when flip is set; then the vertical pass. Both are the Go passes
// (goPasses) line for line, so the two builds give the same pixels.
IMGDEC_CLONES static void imgdec_hpass(const unsigned char *restrict src, long stride, int rows, int c, int outW,
                         const int32_t *restrict start, const int32_t *restrict n, const int32_t *restrict k,
                         int ksize, int maxn, int flip, int simdrows, long safe, long plane, int32_t *restrict tab,
                         unsigned char *restrict out) {
	const int32_t h = 1 << (IMGDEC_PREC - 1);
#ifdef IMGDEC_SSE41
	// tab (RGB only) holds 2*outW + 3 + 4*outW*ksize int32 for imgdec_htable's tables: the
	// offsets, the tap counts, then the weight vectors from the next 16-byte boundary.
	// Planar RGB with at most two taps: the AVX2 pass, its tables at the start of tab (3*outW
	// + 2*(outW/8) int32, then outW/8 masks of 32 bytes). safe: bytes readable from the start
	// of any of the first simdrows rows.
	int gather = c == 3 && plane > 0 && maxn <= 2 && tab != NULL && simdrows > 0 && __builtin_cpu_supports("avx2");
	int32_t *goff = tab, *gw0 = tab + outW, *gw1 = tab + 2 * (long)outW, *gwin = tab + 3 * (long)outW;
	unsigned char *gmask = (unsigned char *)(gwin + 2 * (outW / 8));
	if (gather) imgdec_htablep(outW, start, n, k, ksize, flip, safe, goff, gw0, gw1, gwin, gmask);
	// Three or four taps: the AVX2 window pass, its tables likewise (6*outW + 2*(outW/8)
	// int32, then outW/8 masks of 384 bytes).
	int gather4 = !gather && c == 3 && plane > 0 && maxn <= 4 && tab != NULL && simdrows > 0 && __builtin_cpu_supports("avx2");
	int32_t *g4cnt = tab + outW, *g4wt = tab + 2 * (long)outW, *g4win = tab + 6 * (long)outW;
	unsigned char *g4mask = (unsigned char *)(g4win + 2 * (outW / 8));
	if (gather4) imgdec_htablep4(outW, start, n, k, ksize, flip, safe, goff, g4cnt, g4wt, g4win, g4mask);
	int usetab = !gather && !gather4 && c == 3 && tab != NULL && simdrows > 0 && __builtin_cpu_supports("sse4.1");
	int32_t *off = NULL, *cnt = NULL;
	__m128i *wv = NULL;
	if (usetab) {
		off = tab;
		cnt = tab + outW;
		wv = (__m128i *)(tab + 2 * outW + (-(2 * outW + ((uintptr_t)tab >> 2)) & 3));
		imgdec_htable(outW, start, n, k, ksize, flip, off, cnt, wv);
	}
#endif
	// Channel q of output pixel x is at oq[x*step].
	const long step = plane > 0 ? 1 : c, rowlen = plane > 0 ? outW : (long)outW * c;
	const long off1 = plane > 0 ? plane : 1, off2 = plane > 0 ? 2 * plane : 2;
	for (int y = 0; y < rows; y++) {
		const unsigned char *restrict in = src + (long)y * stride;
		unsigned char *restrict o = out + (long)y * rowlen;
#ifdef IMGDEC_SSE41
		if (gather && y < simdrows) {
			imgdec_hrow3p_avx2(in, outW, goff, gw0, gw1, gwin, gmask, plane, o);
			continue;
		}
		if (gather4 && y < simdrows) {
			imgdec_hrow3p4_avx2(in, outW, goff, g4cnt, g4wt, g4win, g4mask, plane, o);
			continue;
		}
		if (usetab && y < simdrows) {
			imgdec_hrow3(in, outW, off, cnt, wv, ksize, plane, o);
			continue;
		}
#endif
		if (c == 3 && maxn <= 2) {
			// Up to two taps (upscaling, or a reduction under 1.5x): no inner loop.
			for (int i = 0; i < outW; i++) {
				const unsigned char *p = in + 3 * start[i];
				const int32_t *kk = k + i * ksize;
				int32_t r = h + p[0] * kk[0], g = h + p[1] * kk[0], b = h + p[2] * kk[0];
				if (n[i] == 2) {
					r += p[3] * kk[1];
					g += p[4] * kk[1];
					b += p[5] * kk[1];
				}
				long x = (flip ? outW - 1 - i : i) * step;
				o[x] = imgdec_clip8(r);
				o[x + off1] = imgdec_clip8(g);
				o[x + off2] = imgdec_clip8(b);
			}
		} else if (c == 3) {
			for (int i = 0; i < outW; i++) {
				const unsigned char *p = in + 3 * start[i];
				const int32_t *kk = k + i * ksize;
				int32_t r = h, g = h, b = h;
				const int nt = n[i];
				for (int t = 0; t < nt; t++) {
					r += p[3 * t] * kk[t];
					g += p[3 * t + 1] * kk[t];
					b += p[3 * t + 2] * kk[t];
				}
				long x = (flip ? outW - 1 - i : i) * step;
				o[x] = imgdec_clip8(r);
				o[x + off1] = imgdec_clip8(g);
				o[x + off2] = imgdec_clip8(b);
			}
		} else {
			for (int i = 0; i < outW; i++) {
				const unsigned char *p = in + start[i];
				const int32_t *kk = k + i * ksize;
				int32_t v = h;
				const int nt = n[i];
				for (int t = 0; t < nt; t++) v += p[t] * kk[t];
				o[flip ? outW - 1 - i : i] = imgdec_clip8(v);
			}
		}
	}
}

IMGDEC_CLONES static void imgdec_vpass(const unsigned char *restrict tmp, int rowLen, int y0, int outH,
                         const int32_t *restrict start, const int32_t *restrict n, const int32_t *restrict k,
                         int ksize, int32_t *restrict acc, unsigned char *restrict dst) {
	const int32_t h = 1 << (IMGDEC_PREC - 1);
#ifdef IMGDEC_SSE41
	int sse41 = __builtin_cpu_supports("sse4.1");
	int avx2 = __builtin_cpu_supports("avx2");
#endif
	for (int i = 0; i < outH; i++) {
		const int32_t *kk = k + i * ksize;
		const unsigned char *base = tmp + (long)(start[i] - y0) * rowLen;
		unsigned char *out = dst + (long)i * rowLen;
		if (n[i] == 1 && kk[0] == (1 << IMGDEC_PREC)) {
			memcpy(out, base, rowLen);
			continue;
		}
#ifdef IMGDEC_SSE41
		if (n[i] == 2 && avx2) {
			imgdec_vrow2_avx2(base, base + rowLen, kk[0], kk[1], rowLen, out);
			continue;
		}
		if (n[i] == 2 && sse41) {
			imgdec_vrow2_sse41(base, base + rowLen, kk[0], kk[1], rowLen, out);
			continue;
		}
#endif
		if (n[i] == 2) {
			const unsigned char *r0 = base, *r1 = base + rowLen;
			int32_t w0 = kk[0], w1 = kk[1];
			for (int j = 0; j < rowLen; j++) out[j] = imgdec_clip8(h + r0[j] * w0 + r1[j] * w1);
			continue;
		}
		for (int j = 0; j < rowLen; j++) acc[j] = h;
		for (int t = 0; t < n[i]; t++) {
			const unsigned char *row = base + (long)t * rowLen;
			int32_t w = kk[t];
			for (int j = 0; j < rowLen; j++) acc[j] += row[j] * w;
		}
		for (int j = 0; j < rowLen; j++) out[j] = imgdec_clip8(acc[j]);
	}
}
*/
import "C"

import "unsafe"

// passes runs the two resampling passes in C (compiled with -O3 the vertical pass is
// vectorised, its two-tap rows with AVX2 or SSE4.1, and the horizontal pass of RGB rows uses
// SSE4.1, where the CPU has them); the result is goPasses' to the bit.
func (r *resampler) passes(src plane, y0, y1, outW, outH int, flip, planar bool, dst []byte) {
	fl := C.int(0)
	if flip {
		fl = 1
	}
	// The vector horizontal passes read up to 3 bytes past the last pixel a row's filter
	// uses (4 bytes for a 3-byte pixel; the gather pass a 4-byte word at each output's first
	// tap, one-tap outputs included): every row but the last has the next row after it; the
	// last one only when 3 bytes follow its last pixel.
	simdRows := y1 - y0 - 1
	if (y1-1)*src.stride+src.c*r.h.end+2 < len(src.pix) {
		simdRows = y1 - y0
	}
	// Bytes readable from the start of any of the first simdRows rows: those of the last.
	safe := len(src.pix) - (y0+max(simdRows, 1)-1)*src.stride
	lo := layoutOf(src.c, outW, planar)
	tmpPlane := (y1 - y0) * lo.rowLen
	cplane := C.long(0)
	if planar {
		cplane = C.long(tmpPlane)
	}
	var tab *C.int32_t // the vector pass's tables (RGB): offsets, taps, 16-byte aligned weights
	if src.c == 3 {
		r.hw = growI32(r.hw, max(2*outW+3+4*outW*r.h.ksize, 6*outW+2*(outW/8)+96*(outW/8)))
		tab = (*C.int32_t)(unsafe.Pointer(&r.hw[0]))
	}
	C.imgdec_hpass((*C.uchar)(unsafe.Pointer(&src.pix[y0*src.stride])), C.long(src.stride), C.int(y1-y0), C.int(src.c), C.int(outW),
		(*C.int32_t)(unsafe.Pointer(&r.h.start[0])), (*C.int32_t)(unsafe.Pointer(&r.h.n[0])), (*C.int32_t)(unsafe.Pointer(&r.h.k[0])), C.int(r.h.ksize), C.int(r.h.maxN),
		fl, C.int(simdRows), C.long(safe), cplane, tab, (*C.uchar)(unsafe.Pointer(&r.tmp[0])))
	for p := range lo.planes {
		C.imgdec_vpass((*C.uchar)(unsafe.Pointer(&r.tmp[p*tmpPlane])), C.int(lo.rowLen), C.int(y0), C.int(outH),
			(*C.int32_t)(unsafe.Pointer(&r.v.start[0])), (*C.int32_t)(unsafe.Pointer(&r.v.n[0])), (*C.int32_t)(unsafe.Pointer(&r.v.k[0])), C.int(r.v.ksize),
			(*C.int32_t)(unsafe.Pointer(&r.acc[0])), (*C.uchar)(unsafe.Pointer(&dst[p*outH*lo.rowLen])))
	}
}
