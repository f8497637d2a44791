//go:build race

package uselite_test

// raceEnabled is true under the race detector, which slows the models
// about tenfold; TestRetrievalQuality then leaves the MiniLM model out.
const raceEnabled = true
