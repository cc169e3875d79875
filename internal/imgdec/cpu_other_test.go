//go:build !unix

package imgdec

import "time"

func cpuTime() time.Duration { return -1 }
