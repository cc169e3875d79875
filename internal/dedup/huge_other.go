//go:build unix && !linux

package dedup

// adviseHuge does nothing where madvise has no huge-page advice (the BSDs, macOS).
func adviseHuge([]byte) {}
