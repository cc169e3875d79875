//go:build race

package flacenc

// raceEnabled: the tests are built with -race. The heavy single-goroutine tests (data volume
// through code with no goroutines) skip then: the race detector finds nothing in them and
// multiplies their time by 10-20. scripts/test --full runs them without -race twice: with
// cgo (its norace phase, which finds the tests that test raceEnabled) and in the pure-Go
// build.
const raceEnabled = true
