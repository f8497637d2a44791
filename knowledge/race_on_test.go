//go:build race

package knowledge_test

// raceEnabled is true under the race detector, which slows the pure-Go
// SQLite driver about twentyfold; the largest tests then run a subset of
// their cases.
const raceEnabled = true
