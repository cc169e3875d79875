//go:build race

package imagefield

// raceEnabled: the tests are built with -race. The heavy single-goroutine tests (data volume
// through code with no goroutines) skip then: the race detector finds nothing in them and
// multiplies their time by 10-20. The passes without -race run them (CGO_ENABLED=0 in
// scripts/test --full, and cgo in scripts/test-plain-clone, which runs the tests that skip
// here).
const raceEnabled = true
