//go:build !linux

package pagewriter

func preallocate(fd uintptr, off, n int64) (supported bool, err error) { return false, nil }

func startWriteback(fd uintptr) {}

func syncData(fd uintptr) error { return nil }

func punchHole(fd uintptr, from, to int64) {}
