//go:build race

package main

// raceEnabled: the tests are built with -race. The tests that run a convert binary built for
// the test (buildConvert, buildClusterBinary) skip then: that binary is built without -race,
// so the detector sees nothing of its work, and the test process only waits. The passes
// without -race run them (CGO_ENABLED=0 in scripts/test --full, and cgo in
// scripts/test-plain-clone, which runs the tests that skip here).
const raceEnabled = true
