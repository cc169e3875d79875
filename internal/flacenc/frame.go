package flacenc

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"hash"

	"github.com/mldf/convert/internal/flaccrc"
)

// Channel assignments of the frame header (RFC 9639 section 9.1.3).
const (
	chanLeftSide  = 8
	chanSideRight = 9
	chanMidSide   = 10
)

// encoder holds the state and scratch buffers reused from frame to frame.
type encoder struct {
	info      Info
	level     Level
	blockSize int
	md5       hash.Hash
	md5buf    []byte
	badIndex  int // index within the frame of a sample load rejected

	ch   [][]int32   // the current frame's samples, one slice per channel
	mid  []int32     // (L+R)>>1 for stereo
	side []int32     // L-R for stereo
	sub  []*subframe // analyses: one per channel, then mid and side for stereo
	an   analyzer
	bw   bitWriter
}

func newEncoder(info Info, level Level, blockSize int) *encoder {
	e := &encoder{
		info:      info,
		level:     level,
		blockSize: blockSize,
		md5:       md5.New(),
		md5buf:    make([]byte, 0, 1<<14),
		ch:        make([][]int32, info.Channels),
	}
	for i := range e.ch {
		e.ch[i] = make([]int32, blockSize)
	}
	nsub := info.Channels
	if e.stereo() {
		nsub = 4
		e.mid = make([]int32, blockSize)
		e.side = make([]int32, blockSize)
	}
	e.sub = make([]*subframe, nsub)
	for i := range e.sub {
		e.sub[i] = newSubframe(blockSize)
	}
	e.an.init(level, blockSize, info.BitsPerSample)
	return e
}

// stereo reports whether frames try left/side, side/right and mid/side
// decorrelation. A 32-bit side channel would need 33 bits, which this
// encoder does not write.
func (e *encoder) stereo() bool {
	return e.info.Channels == 2 && e.info.BitsPerSample < 32
}

// load deinterleaves n samples per channel into e.ch, checking their range: x is in range
// when x+2^(bps-1) lies in [0, 2^bps) as an unsigned number, so the loop ORs those sums
// and tests them once; only a channel that fails is scanned again for the culprit.
func (e *encoder) load(chunk []int32, n int) error {
	nch := e.info.Channels
	bps := e.info.BitsPerSample
	off := uint32(1) << ((bps - 1) & 31)
	for c := range nch {
		dst := e.ch[c][:n]
		var or uint32
		if nch == 1 {
			for i, x := range chunk[:n] {
				or |= uint32(x) + off
				dst[i] = x
			}
		} else {
			for i := range dst {
				x := chunk[i*nch+c]
				or |= uint32(x) + off
				dst[i] = x
			}
		}
		if err := e.checkRange(c, dst, or); err != nil {
			return err
		}
	}
	return nil
}

// checkRange returns ErrSampleRange, and sets e.badIndex, when channel c's samples dst do not
// fit the stream's bits per sample. or is the OR of every sample plus 2^(bps-1) (as unsigned):
// all fit when it has no bit at bps or above, so only a failing channel is scanned again.
func (e *encoder) checkRange(c int, dst []int32, or uint32) error {
	bps := e.info.BitsPerSample
	if bps >= 32 || or>>bps == 0 {
		return nil
	}
	lo, hi := int32(-1)<<(bps-1), int32(1)<<(bps-1)-1
	for i, x := range dst {
		if x < lo || x > hi {
			e.badIndex = i
			return fmt.Errorf("%w: channel %d value %d not in %d..%d for %d-bit audio", ErrSampleRange, c, x, lo, hi, bps)
		}
	}
	return nil
}

// loadBytes is load for n samples per channel held as little-endian two's complement
// integers of width bytes each, interleaved.
func (e *encoder) loadBytes(chunk []byte, n, width int) error {
	nch := e.info.Channels
	bps := e.info.BitsPerSample
	off := uint32(1) << ((bps - 1) & 31)
	frame := width * nch
	for c := range nch {
		dst := e.ch[c][:n]
		var or uint32
		src := chunk[c*width:]
		switch width {
		case 1:
			for i := range dst {
				x := int32(int8(src[i*frame]))
				or |= uint32(x) + off
				dst[i] = x
			}
		case 2:
			if nch == 1 { // four samples a load
				src = src[:2*n]
				i := 0
				for ; i+4 <= n; i += 4 {
					w := binary.LittleEndian.Uint64(src[2*i:])
					d := dst[i : i+4 : i+4]
					d[0], d[1], d[2], d[3] = int32(int16(w)), int32(int16(w>>16)), int32(int16(w>>32)), int32(int16(w>>48))
					or |= (uint32(d[0]) + off) | (uint32(d[1]) + off) | (uint32(d[2]) + off) | (uint32(d[3]) + off)
				}
				for ; i < n; i++ {
					x := int32(int16(binary.LittleEndian.Uint16(src[2*i:])))
					or |= uint32(x) + off
					dst[i] = x
				}
				break
			}
			for i := range dst {
				x := int32(int16(binary.LittleEndian.Uint16(src[i*frame:])))
				or |= uint32(x) + off
				dst[i] = x
			}
		case 3:
			for i := range dst {
				b := src[i*frame : i*frame+3]
				x := int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
				or |= uint32(x) + off
				dst[i] = x
			}
		default:
			for i := range dst {
				x := int32(binary.LittleEndian.Uint32(src[i*frame:]))
				or |= uint32(x) + off
				dst[i] = x
			}
		}
		if err := e.checkRange(c, dst, or); err != nil {
			return err
		}
	}
	return nil
}

// encodeFrame appends the frame of the n samples per channel in e.ch.
func (e *encoder) encodeFrame(out []byte, frame uint64, n int) []byte {
	bps := uint(e.info.BitsPerSample)
	assign := e.info.Channels - 1
	var order []*subframe
	if e.stereo() {
		l, r := e.ch[0][:n], e.ch[1][:n]
		mid, side := e.mid[:n], e.side[:n]
		for i := range l {
			mid[i] = int32((int64(l[i]) + int64(r[i])) >> 1)
			side[i] = l[i] - r[i]
		}
		sl, sr, sm, ss := e.sub[0], e.sub[1], e.sub[2], e.sub[3]
		if e.level == LevelBest {
			// Code all four channels and keep the best pair.
			e.an.analyze(sl, l, bps)
			e.an.analyze(sr, r, bps)
			e.an.analyze(sm, mid, bps)
			e.an.analyze(ss, side, bps+1)
			best := sl.bits + sr.bits
			order = []*subframe{sl, sr}
			if b := sl.bits + ss.bits; b < best {
				best, assign, order = b, chanLeftSide, []*subframe{sl, ss}
			}
			if b := ss.bits + sr.bits; b < best {
				best, assign, order = b, chanSideRight, []*subframe{ss, sr}
			}
			if b := sm.bits + ss.bits; b < best {
				assign, order = chanMidSide, []*subframe{sm, ss}
			}
		} else {
			// Pick the pair from the fixed predictors' estimates (as libFLAC's adaptive
			// stereo does), then code only those two channels.
			var ord [4]int
			var est [4]float64
			for i, x := range [4][]int32{l, r, mid, side} {
				ord[i], est[i] = fixedEstimate(x, bps+1) // side has bps+1 bits
			}
			pair, best := [2]int{0, 1}, est[0]+est[1]
			for _, c := range []struct {
				assign int
				pair   [2]int
			}{{chanLeftSide, [2]int{0, 3}}, {chanSideRight, [2]int{3, 1}}, {chanMidSide, [2]int{2, 3}}} {
				if b := est[c.pair[0]] + est[c.pair[1]]; b < best {
					best, assign, pair = b, c.assign, c.pair
				}
			}
			chans := [4][]int32{l, r, mid, side}
			subs := [4]*subframe{sl, sr, sm, ss}
			order = []*subframe{subs[pair[0]], subs[pair[1]]}
			for _, i := range pair {
				cb := bps
				if i == 3 {
					cb++
				}
				e.an.analyzeEst(subs[i], chans[i], cb, ord[i], est[i])
			}
		}
	} else {
		order = e.sub
		for c, sf := range e.sub {
			e.an.analyze(sf, e.ch[c][:n], bps)
		}
	}

	start := len(out)
	out = e.appendHeader(out, frame, n, assign)
	bw := &e.bw
	bw.buf = out
	for _, sf := range order {
		sf.write(bw)
	}
	bw.align()
	out = bw.buf
	bw.buf = nil
	crc := flaccrc.CRC16(out[start:])
	return append(out, byte(crc>>8), byte(crc))
}

// appendHeader appends a frame header (RFC 9639 section 9.1).
func (e *encoder) appendHeader(out []byte, frame uint64, n, assign int) []byte {
	start := len(out)
	bsCode, bsExtra := blockSizeCode(n)
	srCode, srExtra := sampleRateCode(e.info.SampleRate)
	out = append(out, 0xFF, 0xF8, byte(bsCode<<4|srCode), byte(assign<<4|sampleSizeCode(e.info.BitsPerSample)<<1))
	out = appendCodedNumber(out, frame)
	switch bsCode {
	case 6:
		out = append(out, byte(bsExtra))
	case 7:
		out = append(out, byte(bsExtra>>8), byte(bsExtra))
	}
	switch srCode {
	case 12:
		out = append(out, byte(srExtra))
	case 13, 14:
		out = append(out, byte(srExtra>>8), byte(srExtra))
	}
	return append(out, flaccrc.CRC8(out[start:]))
}

// blockSizeCode returns the 4-bit block size code and, for codes 6 and 7, the
// value (n-1) stored after the coded number.
func blockSizeCode(n int) (code, extra int) {
	switch n {
	case 192:
		return 1, 0
	case 576, 1152, 2304, 4608:
		return 2 + log2(n/576), 0
	case 256, 512, 1024, 2048, 4096, 8192, 16384, 32768:
		return 8 + log2(n/256), 0
	}
	if n <= 256 {
		return 6, n - 1
	}
	return 7, n - 1
}

func log2(x int) int {
	k := 0
	for x > 1 {
		x >>= 1
		k++
	}
	return k
}

// sampleRateCode returns the 4-bit sample rate code and, for codes 12..14,
// the value stored after the block size.
func sampleRateCode(sr int) (code, extra int) {
	switch sr {
	case 88200:
		return 1, 0
	case 176400:
		return 2, 0
	case 192000:
		return 3, 0
	case 8000:
		return 4, 0
	case 16000:
		return 5, 0
	case 22050:
		return 6, 0
	case 24000:
		return 7, 0
	case 32000:
		return 8, 0
	case 44100:
		return 9, 0
	case 48000:
		return 10, 0
	case 96000:
		return 11, 0
	}
	switch {
	case sr%1000 == 0 && sr/1000 <= 255:
		return 12, sr / 1000
	case sr <= 65535:
		return 13, sr
	case sr%10 == 0 && sr/10 <= 65535:
		return 14, sr / 10
	}
	return 0, 0 // taken from STREAMINFO
}

// sampleSizeCode returns the 3-bit sample size code; 0 means "see STREAMINFO".
func sampleSizeCode(bps int) int {
	switch bps {
	case 8:
		return 1
	case 12:
		return 2
	case 16:
		return 4
	case 20:
		return 5
	case 24:
		return 6
	case 32:
		return 7
	}
	return 0
}

// appendCodedNumber appends v in the UTF-8-like coding of RFC 9639 section
// 9.1.5 (up to 36 bits, 7 bytes).
func appendCodedNumber(out []byte, v uint64) []byte {
	if v < 0x80 {
		return append(out, byte(v))
	}
	// Number of continuation bytes: each holds 6 bits; the first byte holds
	// 6-k bits for k continuation bytes (5 bits for k=1 ... 0 bits for k=6).
	k := 1
	for k < 6 && v >= 1<<(6*k+6-k) {
		k++
	}
	lead := byte(0xFF << (7 - k))
	out = append(out, lead|byte(v>>(6*k)))
	for i := k - 1; i >= 0; i-- {
		out = append(out, 0x80|byte(v>>(6*i))&0x3F)
	}
	return out
}
