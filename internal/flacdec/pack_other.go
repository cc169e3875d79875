//go:build !amd64 || purego

package flacdec

// pack16Vec has no vector version on this platform: hash packs every sample in Go.
func pack16Vec(buf []byte, s []int32, off uint32) (int, uint32) { return 0, 0 }
