//go:build race

package server_test

// raceDetector is set in a build with the race detector, whose
// instrumentation makes frames larger than a normal build's.
const raceDetector = true
