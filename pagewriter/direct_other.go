//go:build !linux

package pagewriter

// directAlign reports false: direct writes are Linux's here.
func directAlign(fd int) (int, bool) { return 0, false }

// setDirect reports false: direct writes are Linux's here.
func setDirect(fd int, on bool) bool { return false }

// alignPad is 0: no buffer is aligned for direct I/O here.
func alignPad(b []byte, n int) int { return 0 }

// writeAt is never called: no direct sink is made here.
func (d *directFile) writeAt(b []byte, off int64) error { return nil }
