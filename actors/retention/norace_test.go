//go:build !race

package retention_test

// raceDetector is whether the tests run under the race detector, which
// makes the pure-Go SQLite some twenty times slower.
const raceDetector = false
