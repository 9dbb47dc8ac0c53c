//go:build race

package racedetect

// Enabled is true in a build with the race detector.
const Enabled = true
