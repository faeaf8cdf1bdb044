//go:build !race

package porttest

// underRace is set when the race detector is on (see race.go).
const underRace = false
