//go:build !race

package imagefield

// raceEnabled: the tests are built with -race (see race_test.go).
const raceEnabled = false
