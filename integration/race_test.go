//go:build race

package integration

// raceDetector says whether these tests run under -race: the binaries
// they start are then built with it too, so that the detector sees the
// server they drive, not only the test process.
const raceDetector = true
