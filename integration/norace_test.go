//go:build !race

package integration

// raceDetector says whether these tests run under -race (race_test.go).
const raceDetector = false

// raceOptions are the GORACE options of race-built binaries (race_test.go).
const raceOptions = ""
