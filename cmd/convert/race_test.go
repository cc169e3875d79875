//go:build race

package main

// raceEnabled: the tests are built with -race. The tests that run a convert binary built for
// the test (buildConvert, buildClusterBinary) skip then: that binary is built without -race,
// so the detector sees nothing of its work, and the test process only waits. scripts/test
// --full runs them without -race twice: with cgo (its norace phase, which finds the tests
// that test raceEnabled or call a helper that does) and in the pure-Go build.
const raceEnabled = true
