//go:build !race

package main

// raceEnabled: the tests are built with -race (see race_test.go).
const raceEnabled = false
