package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFile is the lock's file name under the store root.
const LockFile = "mcpflow.lock"

// ErrStoreInUse is returned (as a *StoreInUseError) by LockStore when
// another process, or another LockStore in this one, holds the store.
var ErrStoreInUse = errors.New("store is in use by another mcpflow")

// StoreInUseError names the store another mcpflow holds, and its pid
// ("unknown" when it had not written it yet).
type StoreInUseError struct {
	Root, Owner string
}

func (e *StoreInUseError) Error() string {
	return fmt.Sprintf("store %s is in use by another mcpflow (pid %s): stop that one first, or give this one another store root", e.Root, e.Owner)
}

// Is makes errors.Is(err, ErrStoreInUse) hold.
func (e *StoreInUseError) Is(target error) bool { return target == ErrStoreInUse }

// StoreLock is the exclusive ownership of one store root, held from
// LockStore until Release or the end of the process.
//
// It is an flock(2) LOCK_EX|LOCK_NB on LockFile. The lock belongs to the
// open file description, so the kernel releases it whenever the process
// ends, SIGKILL and crashes included: a dead owner never leaves a stale
// lock, and no pid has to be checked for liveness (pids are reused). The
// descriptor is close-on-exec, so stdio servers (which may outlive us for a
// moment) never inherit it. The file is never removed: unlinking a lock
// file lets two processes lock two different inodes. The pid written into
// it only names the owner in the error a second instance reports.
type StoreLock struct {
	f *os.File
}

// LockStore takes the exclusive lock of the store under root, creating
// root (mode 0700) if needed. If another process holds it, it fails at
// once with a *StoreInUseError (errors.Is ErrStoreInUse) naming root and
// the owner's pid, and changes nothing.
func LockStore(root string) (*StoreLock, error) {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("lock store %s: %w", root, err)
	}
	path := filepath.Join(root, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock store %s: %w", root, err)
	}
	if err := lockFile(f); err != nil {
		owner := "unknown"
		if data, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); perr == nil {
				owner = strconv.Itoa(pid)
			}
		}
		_ = f.Close()
		if errors.Is(err, errLocked) {
			return nil, &StoreInUseError{Root: root, Owner: owner}
		}
		return nil, fmt.Errorf("lock store %s: %w", root, err)
	}
	// Ours now: name the owner for whoever finds it locked.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &StoreLock{f: f}, nil
}

// Release gives the store up. It is safe to call on a nil lock and more
// than once.
func (l *StoreLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	// Closing the last descriptor of the open file description releases
	// the flock; the pid stays in the file, harmless once unlocked.
	return f.Close()
}
