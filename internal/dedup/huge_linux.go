package dedup

import "golang.org/x/sys/unix"

// adviseHuge asks for huge pages behind b (advice: without them, small pages).
func adviseHuge(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }
