//go:build !unix

package parquet

import "time"

// processCPU is unknown here.
func processCPU() time.Duration { return 0 }
