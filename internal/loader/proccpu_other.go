//go:build !unix

package loader

import "time"

func procCPU() time.Duration { return -1 }
