//go:build !unix

package dedup

// unlinkEarly: elsewhere a file in use keeps its name until closed.
const unlinkEarly = false

// allocBytes returns n zeroed bytes (the heap: no anonymous mappings here).
func allocBytes(n int) ([]byte, error) { return make([]byte, n), nil }

func freeBytes([]byte) {}
