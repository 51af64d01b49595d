//go:build race

package integration

// raceDetector says whether these tests run under -race: the binaries
// they start are then built with it too, so that the detector sees the
// server they drive, not only the test process.
const raceDetector = true

// raceOptions are the GORACE options of the race-built binaries the tests
// start: without atexit_sleep_ms=0 the race runtime sleeps a second as each
// process exits, which a test would measure as the process's own time
// (a stdio server and its reaper, stopped in turn, took 2 s instead of 12 ms).
const raceOptions = "atexit_sleep_ms=0"
