//go:build race

package porttest

// underRace is set when the race detector is on: it slows the databases'
// drivers several times, so the property test runs fewer logs (its
// breadth runs in the normal pass; the race run is for the concurrent
// cases).
const underRace = true
