//go:build race

package pipeline

// dedupRace: the race detector is on (TestDedupTableOnDisk runs a smaller case).
const dedupRace = true
