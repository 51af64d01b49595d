//go:build linux

package reap

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// Signals mcpflow and the kernel send the reaper.
const (
	// ParentDeathSignal is the reaper's parent-death signal: like the
	// lifeline closing, it starts the whole stop sequence.
	ParentDeathSignal = syscall.SIGHUP
	// TermSignal asks the reaper to stop its server from step 2, skipping
	// the wait after the stdin close.
	TermSignal = syscall.SIGTERM
	// KillSignal asks the reaper to kill its server's tree at once.
	KillSignal = syscall.SIGUSR1
)

// killTimeout bounds step 3: a process that SIGKILL cannot end (stuck in
// the kernel) is left to die on its own.
const killTimeout = 5 * time.Second

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// Supported reports whether this platform runs the reaper.
const Supported = true

// Main runs the reaper on args (the words after the subcommand) and
// returns its exit code.
func Main(args []string) int {
	// The server's parent-death signal fires when the thread that forked
	// it exits, not the process: keep the goroutine that starts it on one
	// thread for good.
	runtime.LockOSThread()
	fs := flag.NewFlagSet("mcpflow "+Subcommand, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	var g Grace
	fs.DurationVar(&g.Close, "close-grace", DefaultGrace.Close, "how long the server has to exit after its stdin closes before SIGTERM")
	fs.DurationVar(&g.Term, "term-grace", DefaultGrace.Term, "how long the server's process tree has after SIGTERM before SIGKILL")
	lifelineFD := fs.Int("lifeline-fd", -1, "descriptor whose end of file means: stop the server (-1: none)")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	argv := fs.Args()
	if len(argv) == 0 {
		logf("usage: mcpflow reap [--close-grace D] [--term-grace D] [--lifeline-fd N] -- COMMAND [ARGS...]")
		return ExitUsage
	}
	r := &reaper{grace: g.orDefault(), ppid: os.Getppid(), sigs: make(chan os.Signal, 64)}
	// SIGPIPE is caught, not ignored (an ignored disposition would be
	// inherited by the server): once mcpflow is gone a log line to
	// stderr must fail with EPIPE, not end the reaper mid-sequence.
	signal.Notify(r.sigs, syscall.SIGCHLD, ParentDeathSignal, TermSignal, syscall.SIGINT, KillSignal, syscall.SIGPIPE)
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		logf("PR_SET_CHILD_SUBREAPER: %v", errno)
		return ExitUsage
	}
	r.lifeline = watchLifeline(*lifelineFD)
	if r.stopAsked() {
		return 1 // mcpflow died or gave up while this process started
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf("start %s: %v", argv[0], err)
		return ExitNotFound
	}
	r.server = cmd.Process.Pid
	if err := releaseStdio(); err != nil {
		logf("release stdin and stdout: %v", err)
	}
	r.run()
	return r.exitCode()
}

// stopAsked reports whether a stop is already pending.
func (r *reaper) stopAsked() bool {
	for {
		select {
		case <-r.lifeline:
			return true
		case s := <-r.sigs:
			if r.request(s) != none {
				return true
			}
		default:
			return false
		}
	}
}

// logf writes one line to stderr, which mcpflow logs as the server's.
func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "mcpflow reap: "+format+"\n", a...)
}

// request is what an event asks of the reaper; later steps rank higher.
type request int

const (
	none      request = iota
	stop              // lifeline closed or parent died: from step 1
	terminate         // TermSignal or SIGINT: from step 2
	kill              // KillSignal: step 3
)

type reaper struct {
	grace      Grace
	ppid       int
	sigs       chan os.Signal
	lifeline   <-chan struct{}
	server     int
	status     syscall.WaitStatus
	serverDone bool
}

// run waits for the server to exit or a stop to be asked, then runs the
// stop sequence and returns once every descendant is reaped.
func (r *reaper) run() {
	req := none
	for req == none && !r.serverDone {
		req, _ = r.event(nil, nil)
	}
	// Step 1: the server's stdin is closed; it may exit by itself.
	if req == stop && !r.serverDone {
		req = r.waitUntil(func() bool { return r.serverDone }, r.grace.Close, terminate, nil)
	}
	// Step 2: SIGTERM to the group and to every child, including each
	// process adopted while the group winds down (a child's own child
	// that had left the group, say).
	if req < kill && !r.reap() {
		if !r.serverDone {
			logf("server %d still running %s after its stdin closed: SIGTERM", r.server, r.grace.Close)
		}
		_ = syscall.Kill(-r.server, syscall.SIGTERM)
		termed := map[int]bool{}
		termAdopted := func() {
			for _, pid := range children(os.Getpid()) {
				if !termed[pid] {
					termed[pid] = true
					_ = syscall.Kill(pid, syscall.SIGTERM)
				}
			}
		}
		r.waitUntil(r.reap, r.grace.Term, kill, termAdopted)
	}
	// Step 3, on every path: SIGKILL to the group and every child.
	r.killAll()
}

// rescan is how often a wait looks for newly adopted processes: an
// orphan is re-parented to the reaper without a signal.
const rescan = 20 * time.Millisecond

// event waits for one event (or for timeout or tick, when not nil),
// reaping children on SIGCHLD, and returns the request it made and
// whether the timeout fired.
func (r *reaper) event(timeout, tick <-chan time.Time) (request, bool) {
	select {
	case s := <-r.sigs:
		return r.request(s), false
	case <-r.lifeline:
		r.lifeline = nil
		return stop, false
	case <-tick:
		return none, false
	case <-timeout:
		return none, true
	}
}

// request handles signal s and returns the request it makes.
func (r *reaper) request(s os.Signal) request {
	switch s {
	case syscall.SIGCHLD:
		r.reap()
	case ParentDeathSignal:
		// The parent-death signal follows the forking thread, not the
		// process; the parent is gone only if getppid changed.
		if os.Getppid() != r.ppid {
			return stop
		}
	case TermSignal, syscall.SIGINT:
		return terminate
	case KillSignal:
		return kill
	}
	return none
}

// waitUntil handles events until done holds, d passes, or an event asks
// for at least escalate, which it returns. each, when not nil, runs
// before every wait and at least every rescan.
func (r *reaper) waitUntil(done func() bool, d time.Duration, escalate request, each func()) request {
	t := time.NewTimer(d)
	defer t.Stop()
	var tick <-chan time.Time
	if each != nil {
		ticker := time.NewTicker(rescan)
		defer ticker.Stop()
		tick = ticker.C
	}
	for !done() {
		if each != nil {
			each()
		}
		req, timedOut := r.event(t.C, tick)
		if timedOut {
			return none
		}
		if req >= escalate {
			return req
		}
	}
	return none
}

// killAll SIGKILLs the group and every child until no child is left:
// each killed parent hands its own children to the reaper, which kills
// them on the next round.
func (r *reaper) killAll() {
	deadline := time.Now().Add(killTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		r.signalAll(syscall.SIGKILL)
		if r.reap() {
			return
		}
		if time.Now().After(deadline) {
			logf("processes %v survived SIGKILL for %s", children(os.Getpid()), killTimeout)
			return
		}
		select {
		case s := <-r.sigs:
			if s == syscall.SIGCHLD {
				r.reap()
			}
		case <-tick.C:
		}
	}
}

// signalAll sends sig to the server's process group and to every child of
// the reaper: the server, and each orphan re-parented here. Only the
// reaper reaps its children, so none of these pids can be reused before
// the signal lands.
func (r *reaper) signalAll(sig syscall.Signal) {
	_ = syscall.Kill(-r.server, sig)
	for _, pid := range children(os.Getpid()) {
		_ = syscall.Kill(pid, sig)
	}
}

// reap collects every child that has exited, noting the server's status,
// and reports whether no child is left.
func (r *reaper) reap() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			return true
		case err != nil:
			logf("wait4: %v", err)
			return false
		case pid <= 0:
			return false
		}
		if pid == r.server {
			r.status, r.serverDone = ws, true
		}
	}
}

// exitCode is the server's exit status, 128+N when signal N ended it.
func (r *reaper) exitCode() int {
	switch {
	case !r.serverDone:
		return 1
	case r.status.Exited():
		return r.status.ExitStatus()
	case r.status.Signaled():
		return 128 + int(r.status.Signal())
	}
	return 1
}

// watchLifeline returns a channel closed when fd reaches end of file (or
// fails), or nil when fd < 0. The server does not inherit fd.
func watchLifeline(fd int) <-chan struct{} {
	if fd < 0 {
		return nil
	}
	syscall.CloseOnExec(fd)
	done := make(chan struct{})
	f := os.NewFile(uintptr(fd), "lifeline")
	go func() {
		_, _ = io.Copy(io.Discard, f)
		close(done)
	}()
	return done
}

// releaseStdio points the reaper's stdin and stdout at /dev/null once the
// server holds them, so that the server's end of the pipes alone decides
// when mcpflow sees end of file or a broken pipe.
func releaseStdio() error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	for _, fd := range []int{0, 1} {
		if err := syscall.Dup3(int(null.Fd()), fd, 0); err != nil {
			return err
		}
	}
	return nil
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(child); ok && ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// parentOf reads the parent pid of pid from /proc/PID/stat, whose second
// field (the command name) may hold spaces and parentheses.
func parentOf(pid int) (int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	return ppid, err == nil
}
