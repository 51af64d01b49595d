package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// TestLockStoreIsExclusive: a second lock on a store fails at once,
// naming the store and the owner's pid; released, it can be taken again.
func TestLockStoreIsExclusive(t *testing.T) {
	is := is.New(t)
	root := filepath.Join(t.TempDir(), "store")
	first, err := app.LockStore(root)
	is.NoErr(err) // the first lock is taken
	_, err = app.LockStore(root)
	is.True(errors.Is(err, app.ErrStoreInUse)) // the second is refused
	want := fmt.Sprintf("store %s is in use by another mcpflow (pid %d)", root, os.Getpid())
	is.True(strings.Contains(err.Error(), want)) // naming the store and its owner
	is.NoErr(first.Release())
	is.NoErr(first.Release()) // releasing twice is harmless
	again, err := app.LockStore(root)
	is.NoErr(err) // released, the store can be locked again
	is.NoErr(again.Release())
}

// TestLockStoreIsReleasedWhenTheOwnerIsKilled: the kernel releases the
// lock of a process that dies by SIGKILL; no stale lock is left.
func TestLockStoreIsReleasedWhenTheOwnerIsKilled(t *testing.T) {
	if root := os.Getenv("MCPFLOW_TEST_HOLD_LOCK"); root != "" {
		if _, err := app.LockStore(root); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Hour) // until killed
	}
	is := is.New(t)
	root := filepath.Join(t.TempDir(), "store")
	holder := exec.Command(os.Args[0], "-test.run=^TestLockStoreIsReleasedWhenTheOwnerIsKilled$")
	holder.Env = append(os.Environ(), "MCPFLOW_TEST_HOLD_LOCK="+root)
	out, err := holder.StdoutPipe()
	is.NoErr(err)
	is.NoErr(holder.Start())
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	is.NoErr(err)
	is.Equal(strings.TrimSpace(line), "locked") // the helper holds the lock

	_, err = app.LockStore(root)
	is.True(errors.Is(err, app.ErrStoreInUse))
	is.True(strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", holder.Process.Pid))) // the helper owns it

	is.NoErr(holder.Process.Kill()) // SIGKILL
	_ = holder.Wait()
	l, err := app.LockStore(root)
	is.NoErr(err) // free again the moment its owner is dead
	is.NoErr(l.Release())
}

// TestSecondStartOnAStoreInUseFails: app.Start refuses a store another
// App holds, before opening anything; after Shutdown it is free.
func TestSecondStartOnAStoreInUseFails(t *testing.T) {
	is := is.New(t)
	cfg := &config.File{Version: 1, Server: config.Server{Store: config.Store{Root: filepath.Join(t.TempDir(), "store")}}}
	opts := app.DefaultOptions(cfg)
	opts.WarmUp = 0
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // three starts and two shutdowns, under -race
	defer cancel()
	first, err := app.Start(ctx, opts)
	is.NoErr(err)
	_, err = app.Start(ctx, opts)
	is.True(errors.Is(err, app.ErrStoreInUse)) // the second is refused
	is.NoErr(first.Shutdown(ctx))
	third, err := app.Start(ctx, opts)
	is.NoErr(err) // the lock went with the first one's shutdown
	is.NoErr(third.Shutdown(ctx))
}

// TestAFailedStartUndoesWhatItBuilt: a start that fails past its first
// stages (here: joining a cluster, which needs PostgreSQL, after the
// SQLite store, its lock and the actor engine's remote stand) undoes
// them: the next start on the same store opens it.
func TestAFailedStartUndoesWhatItBuilt(t *testing.T) {
	is := is.New(t)
	t.Setenv(app.EnvSecretsKey, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	root := filepath.Join(t.TempDir(), "store")
	cluster := &config.File{Version: 1, Server: config.Server{Store: config.Store{Root: root},
		Cluster: &config.Cluster{NodeID: "n1", Listen: "127.0.0.1:0"}}}
	opts := app.DefaultOptions(cluster)
	opts.WarmUp = 0
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := app.Start(ctx, opts)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "needs the PostgreSQL store")) // it failed joining, past the store
	opts = app.DefaultOptions(&config.File{Version: 1, Server: config.Server{Store: config.Store{Root: root}}})
	opts.WarmUp = 0
	a, err := app.Start(ctx, opts)
	is.NoErr(err) // the store and its lock were released
	is.NoErr(a.Shutdown(ctx))
}
