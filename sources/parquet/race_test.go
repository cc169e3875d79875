//go:build race

package parquet

// raceEnabled: the tests are built with -race. TestReadAllocations skips then: under the race
// detector sync.Pool drops a share of what is put back on purpose, so allocation counts say
// nothing about the reader. scripts/test --full runs it without -race (its norace phase).
const raceEnabled = true
