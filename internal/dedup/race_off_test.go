//go:build !race

package dedup

// raceOn: the race detector is on (the larger table tests are left to the plain pass).
const raceOn = false
