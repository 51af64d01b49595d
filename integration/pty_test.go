package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/creack/pty"
	"github.com/matryer/is"
)

// ptyCommand is a command running under a pseudo-terminal, its screen read
// as it comes. Its reader and the command end with the test.
type ptyCommand struct {
	t      *testing.T
	ctx    context.Context
	ptmx   *os.File
	chunks chan []byte
	exited chan struct{}
	waited error
	screen bytes.Buffer
}

// startPTY starts cmd under a pty of size; ctx bounds every wait on it.
func startPTY(t *testing.T, ctx context.Context, cmd *exec.Cmd, size *pty.Winsize) *ptyCommand {
	t.Helper()
	is := is.New(t)
	ptmx, err := pty.StartWithSize(cmd, size)
	is.NoErr(err) // start under a pty
	pc := &ptyCommand{t: t, ctx: ctx, ptmx: ptmx, chunks: make(chan []byte, 1024), exited: make(chan struct{})}
	go func() {
		pc.waited = cmd.Wait()
		close(pc.exited)
	}()
	// The pty's reader ends at EIO, once the command has exited and its
	// output is read, or when the test stops reading.
	stop := make(chan struct{})
	go func() {
		defer close(pc.chunks)
		for {
			buf := make([]byte, 4096)
			n, err := ptmx.Read(buf)
			if n > 0 {
				select {
				case pc.chunks <- buf[:n]:
				case <-stop:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		_ = cmd.Process.Kill()
		<-pc.exited
		_ = ptmx.Close()
	})
	return pc
}

// read reads the screen as it comes until until holds of it.
func (pc *ptyCommand) read(until func(string) bool, what string) {
	pc.t.Helper()
	is := is.New(pc.t)
	for !until(pc.screen.String()) {
		select {
		case c, ok := <-pc.chunks:
			if !ok {
				pc.t.Logf("the command's output ended before %s:\n%q", what, pc.screen.String())
				is.Fail() // the screen shows it
			}
			pc.screen.Write(c)
		case <-pc.ctx.Done():
			pc.t.Logf("no %s in time:\n%q", what, pc.screen.String())
			is.Fail() // the screen shows it in time
		}
	}
}

// write types s on the terminal.
func (pc *ptyCommand) write(s string) {
	pc.t.Helper()
	_, err := pc.ptmx.Write([]byte(s))
	is.New(pc.t).NoErr(err) // typed
}

// wait waits for the command to exit, reads the rest of its screen, and
// answers how it exited.
func (pc *ptyCommand) wait() error {
	pc.t.Helper()
	select {
	case <-pc.exited:
	case <-pc.ctx.Done():
		is.New(pc.t).Fail() // the command exits in time
	}
	for c := range pc.chunks {
		pc.screen.Write(c)
	}
	return pc.waited
}
