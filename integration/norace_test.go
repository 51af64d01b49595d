//go:build !race

package integration

// raceDetector says whether these tests run under -race (race_test.go).
const raceDetector = false
