//go:build unix

package app

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is lockFile's error when another open file description holds
// the lock.
var errLocked = errors.New("locked")

// lockFile takes an exclusive flock on f without waiting.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		default:
			return err
		}
	}
}
