//go:build !race

// Package racedetect tells whether the build has the race detector, whose
// instrumentation makes frames larger than a normal build's and whose
// sync.Pool drops some of what is put back: tests of stack depth and of
// pooled buffers allow for it.
package racedetect

// Enabled is true in a build with the race detector.
const Enabled = false
