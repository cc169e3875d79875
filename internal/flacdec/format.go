// The layout this package reads (RFC 9639; all numbers big-endian, bit fields most
// significant bit first):
//
//	stream    = "fLaC" metadata-block+ frame+
//	metadata  = last:1 type:7 length:24 body[length]
//	            the first block is STREAMINFO (type 0, length 34); the others are skipped
//	STREAMINFO= min-block:16 max-block:16 min-frame:24 max-frame:24 sample-rate:20
//	            channels-1:3 bits-per-sample-1:5 total-samples:36 md5:128
//	frame     = header subframe[channels] zero-pad-to-byte crc16:16
//	header    = sync:15 (0x7FFC) blocking:1 block-size:4 sample-rate:4 channels:4
//	            sample-size:3 reserved:1 coded-number(1..7 bytes) [block-size extra 8|16]
//	            [sample-rate extra 8|16] crc8:8
//	subframe  = 0:1 type:6 wasted-flag:1 [wasted-1 in unary] body
//	            type 0 CONSTANT: one sample; 1 VERBATIM: block-size samples;
//	            8..12 FIXED order type-8: warm-up samples, residual;
//	            32..63 LPC order type-31: warm-up samples, precision-1:4 shift:5 (signed,
//	            negative forbidden) coefficients (precision bits each, signed), residual
//	residual  = method:2 (0: 4-bit parameters, 1: 5-bit) partition-order:4 partition+
//	partition = parameter:4|5, all ones = escape: width:5 then raw signed samples;
//	            else Rice codes: quotient in unary (zeros then a one), parameter low bits;
//	            the value is folded (0, -1, 1, -2 ... as 0, 1, 2, 3 ...)
//
// Samples of a subframe have the frame's bit depth, one more for the side channel of a
// stereo decorrelated frame (left/side, side/right, mid/side), less the wasted bits. The
// STREAMINFO MD5 is over the decoded samples, interleaved, as signed little-endian
// integers of ceil(bits/8) bytes.

package flacdec
