//go:build !amd64 || purego

package jsonl

// hasStrBlocks is false: strBlocks has no vectorised form on this architecture.
const hasStrBlocks = false

// strBlocks is never called without hasStrBlocks.
func strBlocks(b []byte) (off, state int) { return 0, stateTail }
