//go:build !amd64 || purego

package jsonl

// hasStrBlocks is false: strBlocks has no vectorised form on this architecture.
const hasStrBlocks = false

// strBlocks is never called without hasStrBlocks.
func strBlocks(b []byte) (off, state int) { return 0, stateTail }

// strDecodeBlocks is never called without hasStrBlocks.
func strDecodeBlocks(src, dst []byte) (p, d, state int) { return 0, 0, decTail }
