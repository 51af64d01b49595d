package lease

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflow/mcpflow/actors/clock"
)

// Defaults of KeeperOptions.
const (
	DefaultMaxLeases  = 1 << 16
	DefaultLostBuffer = 64
)

// ErrStopped is the error of a Keeper's Acquire once its Run has ended.
var ErrStopped = errors.New("the lease keeper has stopped")

// KeeperOptions configure a Keeper; the zero value means the defaults.
type KeeperOptions struct {
	// TTL is the ttl of the keeper's leases: DefaultTTL when zero.
	TTL time.Duration
	// MaxLeases bounds the leases the keeper holds together with the
	// losses it has yet to deliver: DefaultMaxLeases when zero.
	MaxLeases int
	// LostBuffer is the capacity of Lost: DefaultLostBuffer when zero.
	LostBuffer int
	// Clock times the renewals, their attempts and the deadlines (only
	// durations on it matter, never its reading of the date):
	// clock.System when nil.
	Clock clock.Clock
	// Logger logs failed renewals and lost leases: slog.Default when nil.
	Logger *slog.Logger
	// Metrics is told of acquisitions, renewals, losses and the leases
	// held: nothing when nil.
	Metrics Metrics
}

// Loss is a lease that a Keeper lost, and why; Err is ErrLost to
// errors.Is.
type Loss struct {
	Lease Lease
	Err   error
}

// Keeper holds one owner's leases (one node's) and keeps them: Run renews
// them all in one statement every third of their ttl, and reports on Lost
// each lease it loses, so that whatever the lease guarded can stop.
//
// A lease is lost when a renewal finds it ended (another owner took it, or
// it expired), and also when it has gone unrenewed until its deadline on
// the keeper's own clock: the start of its last successful renewal plus
// its ttl, less a margin of a fifth of the ttl. That start precedes the
// database's time of the renewal, so the deadline falls before the
// database's expiry as long as the two clocks run at one rate, whatever
// their readings: a node cut off from the database gives its leases up
// before another node can take them. Each renewal attempt is bounded by
// the renewal interval and by the earliest deadline.
type Keeper struct {
	table    *Table
	owner    string
	ttl      time.Duration
	interval time.Duration // between renewals
	margin   time.Duration // before a lease's expiry by the keeper's clock
	max      int
	clock    clock.Clock
	log      *slog.Logger
	metrics  Metrics
	lost     chan Loss
	wake     chan struct{} // pokes Run; one pending poke is enough
	running  atomic.Bool

	mu      sync.Mutex
	held    map[string]*holding
	soonest time.Time // no deadline of held is before it; zero when held was empty
	pending []Loss    // losses not yet sent on lost, oldest first
	stopped bool
}

// holding is a lease the keeper holds.
type holding struct {
	lease    Lease
	deadline time.Time // on the keeper's clock: given up then unless renewed
}

// NewKeeper returns a keeper of owner's leases in table. Run starts its
// renewals.
func NewKeeper(table *Table, owner string, opts KeeperOptions) (*Keeper, error) {
	o := opts
	o.TTL = cmp.Or(o.TTL, DefaultTTL)
	o.MaxLeases = cmp.Or(o.MaxLeases, DefaultMaxLeases)
	o.LostBuffer = cmp.Or(o.LostBuffer, DefaultLostBuffer)
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = noMetrics{}
	}
	switch {
	case owner == "":
		return nil, errors.New("new lease keeper: the owner is empty")
	case o.TTL < 3*time.Millisecond:
		return nil, fmt.Errorf("new lease keeper of %q: a ttl of %s leaves no time to renew", owner, o.TTL)
	case o.MaxLeases < 0 || o.LostBuffer < 0:
		return nil, fmt.Errorf("new lease keeper of %q: negative bounds", owner)
	}
	return &Keeper{
		table:    table,
		owner:    owner,
		ttl:      o.TTL,
		interval: o.TTL / 3,
		margin:   o.TTL / 5,
		max:      o.MaxLeases,
		clock:    o.Clock,
		log:      o.Logger.With("owner", owner),
		metrics:  o.Metrics,
		lost:     make(chan Loss, o.LostBuffer),
		wake:     make(chan struct{}, 1),
		held:     make(map[string]*holding),
	}, nil
}

// Lost delivers each lease the keeper loses, once, none dropped; it is
// closed when Run ends. Losses wait in the keeper while it is full.
func (k *Keeper) Lost() <-chan Loss { return k.lost }

// Acquire takes key for the keeper's owner (Table.Acquire, with its ttl),
// within ctx, and keeps it from then on. A key it holds is renewed, and
// if its tenure had ended meanwhile the old one is reported lost. Once Run
// has ended, it fails with ErrStopped.
func (k *Keeper) Acquire(ctx context.Context, key string) (Lease, error) {
	l, err := k.acquire(ctx, key)
	switch {
	case err == nil:
		k.metrics.LeaseAcquisition(Acquired)
	case errors.Is(err, ErrHeld):
		k.metrics.LeaseAcquisition(HeldElsewhere)
	default:
		k.metrics.LeaseAcquisition(AcquireFailed)
	}
	return l, err
}

// acquire does the work of Acquire.
func (k *Keeper) acquire(ctx context.Context, key string) (Lease, error) {
	k.mu.Lock()
	err := k.admit(key)
	k.mu.Unlock()
	if err != nil {
		return Lease{}, err
	}
	start := k.clock.Now()
	l, err := k.table.Acquire(ctx, key, k.owner, k.ttl)
	if err != nil {
		return Lease{}, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped { // nobody renews it: it expires within its ttl
		return Lease{}, fmt.Errorf("acquire lease %q: %w", key, ErrStopped)
	}
	if h := k.held[key]; h != nil && h.lease.Epoch != l.Epoch {
		k.lose(h.lease, errors.New("its tenure ended and a new one began"))
	}
	deadline := k.deadline(start)
	k.held[key] = &holding{lease: l, deadline: deadline}
	if k.soonest.IsZero() || deadline.Before(k.soonest) {
		k.soonest = deadline
	}
	k.countHeld()
	return l, nil
}

// admit refuses an Acquire of key when the keeper has stopped or is full.
// k.mu is held.
func (k *Keeper) admit(key string) error {
	switch {
	case k.stopped:
		return fmt.Errorf("acquire lease %q: %w", key, ErrStopped)
	case k.held[key] == nil && len(k.held)+len(k.pending) >= k.max:
		return fmt.Errorf("acquire lease %q: the keeper of %q holds %d leases and losses, its most", key, k.owner, k.max)
	}
	return nil
}

// deadline is when a lease renewed by an attempt that began at start is
// given up unless renewed again.
func (k *Keeper) deadline(start time.Time) time.Time { return start.Add(k.ttl - k.margin) }

// Release stops keeping key's lease and ends it (Table.Release) within
// ctx, so that another owner may take the key at once. A key the keeper
// does not hold, or whose lease ended meanwhile, is no error: either way
// the owner holds it no longer.
func (k *Keeper) Release(ctx context.Context, key string) error {
	k.mu.Lock()
	h := k.held[key]
	delete(k.held, key)
	k.countHeld()
	k.mu.Unlock()
	if h == nil {
		return nil
	}
	if err := k.table.Release(ctx, h.lease); err != nil && !errors.Is(err, ErrLost) {
		return err
	}
	return nil
}

// ReleaseAll stops keeping every lease and ends them in one statement
// within ctx, as a node that shuts down does, so that other nodes may take
// their keys at once.
func (k *Keeper) ReleaseAll(ctx context.Context) error {
	k.mu.Lock()
	leases := k.leases()
	clear(k.held)
	k.countHeld()
	k.mu.Unlock()
	_, err := k.table.ReleaseAll(ctx, leases)
	return err
}

// Holds reports whether the keeper still holds key's tenure epoch, short
// of its deadline by the keeper's own clock (see Keeper): false once the
// lease was lost, released or given up, or Run has ended. It reads no
// database, so it is cheap enough to fence each action taken on behalf of
// the tenure; Table.Check is the fence that needs no clock.
func (k *Keeper) Holds(key string, epoch int64) bool {
	now := k.clock.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	h := k.held[key]
	return !k.stopped && h != nil && h.lease.Epoch == epoch && now.Before(h.deadline)
}

// Held returns the leases the keeper holds, in the order of their keys.
func (k *Keeper) Held() []Lease {
	k.mu.Lock()
	defer k.mu.Unlock()
	leases := k.leases()
	slices.SortFunc(leases, func(a, b Lease) int { return cmp.Compare(a.Key, b.Key) })
	return leases
}

// leases lists the held leases. k.mu is held.
func (k *Keeper) leases() []Lease {
	leases := make([]Lease, 0, len(k.held))
	for h := range maps.Values(k.held) {
		leases = append(leases, h.lease)
	}
	return leases
}

// Run keeps the leases until ctx ends: it renews them every third of the
// ttl, gives up those past their deadline, and delivers the losses. Then
// it stops renewing, so that every lease it held expires within its ttl,
// and closes Lost: the owner must take its leases as lost. It returns
// nil, or an error at once if it was started before.
func (k *Keeper) Run(ctx context.Context) error {
	if !k.running.CompareAndSwap(false, true) {
		return fmt.Errorf("the lease keeper of %q runs already", k.owner)
	}
	defer k.stop()
	nextRenewal := k.clock.Now().Add(k.interval)
	for {
		now := k.clock.Now()
		k.giveUpDue(now)
		if !now.Before(nextRenewal) {
			k.renew(ctx, now)
			nextRenewal = now.Add(k.interval)
			continue
		}
		wakeAt, out, next := k.plan(nextRenewal)
		timer := k.clock.AfterFunc(wakeAt.Sub(now), k.poke)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-k.wake:
		case out <- next:
			k.delivered()
		}
		timer.Stop()
	}
}

// plan returns when Run must wake next (the next renewal, or an earlier
// deadline) and, when a loss waits, the channel to send it on.
func (k *Keeper) plan(nextRenewal time.Time) (time.Time, chan<- Loss, Loss) {
	k.mu.Lock()
	defer k.mu.Unlock()
	wakeAt := nextRenewal
	if !k.soonest.IsZero() && k.soonest.Before(wakeAt) {
		wakeAt = k.soonest
	}
	if len(k.pending) == 0 {
		return wakeAt, nil, Loss{}
	}
	return wakeAt, k.lost, k.pending[0]
}

// delivered drops the loss that Run sent.
func (k *Keeper) delivered() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pending[0] = Loss{}
	k.pending = k.pending[1:]
	if len(k.pending) == 0 {
		k.pending = nil // let the array go
	}
}

// poke wakes Run.
func (k *Keeper) poke() {
	select {
	case k.wake <- struct{}{}:
	default: // a poke is pending already
	}
}

// stop marks the keeper stopped and closes Lost.
func (k *Keeper) stop() {
	k.mu.Lock()
	k.stopped = true
	k.countHeld()
	k.mu.Unlock()
	close(k.lost)
}

// giveUpDue gives up the leases whose deadline has come by now.
func (k *Keeper) giveUpDue(now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.soonest.IsZero() || now.Before(k.soonest) {
		return
	}
	k.soonest = time.Time{}
	n := 0
	for key, h := range k.held {
		if !now.Before(h.deadline) {
			delete(k.held, key)
			k.lose(h.lease, fmt.Errorf("not renewed within %s on the owner's clock", k.ttl-k.margin))
			n++
			continue
		}
		if k.soonest.IsZero() || h.deadline.Before(k.soonest) {
			k.soonest = h.deadline
		}
	}
	if n > 0 {
		k.countHeld()
		k.log.Warn("leases given up: not renewed in time", "leases", n)
	}
}

// renew renews every held lease in one statement, bounded by the renewal
// interval and by the earliest deadline, and records what it renewed and
// what it found lost. start is the clock's reading before the attempt.
func (k *Keeper) renew(ctx context.Context, start time.Time) {
	k.mu.Lock()
	leases := k.leases()
	bound := k.interval
	if until := k.soonest.Sub(start); !k.soonest.IsZero() && until < bound {
		bound = until
	}
	k.mu.Unlock()
	if len(leases) == 0 {
		return
	}
	attempt, cancel := context.WithCancel(ctx)
	defer cancel()
	timeout := k.clock.AfterFunc(bound, cancel) // on the keeper's clock, as its deadlines
	renewed, lost, err := k.table.RenewAll(attempt, leases)
	timeout.Stop()
	if err != nil {
		if ctx.Err() == nil { // not the keeper stopping
			k.metrics.LeaseRenewal(false)
			k.log.Warn("lease renewal failed", "leases", len(leases), "within", bound, "err", err)
		}
		return
	}
	k.metrics.LeaseRenewal(true)
	k.mu.Lock()
	defer k.mu.Unlock()
	deadline := k.deadline(start)
	for _, l := range renewed {
		if h := k.held[l.Key]; h != nil && h.lease.Epoch == l.Epoch {
			h.lease, h.deadline = l, deadline
		}
	}
	n := 0
	for _, l := range lost {
		if h := k.held[l.Key]; h != nil && h.lease.Epoch == l.Epoch {
			delete(k.held, l.Key)
			k.lose(h.lease, errors.New("a renewal found it ended: expired, or taken by another owner"))
			n++
		}
	}
	if n > 0 {
		k.countHeld()
		k.log.Warn("leases lost: a renewal found them ended", "leases", n)
	}
}

// lose queues the loss of l, and wakes Run to deliver it. k.mu is held.
func (k *Keeper) lose(l Lease, why error) {
	err := fmt.Errorf("lease %q at epoch %d: %w: %w", l.Key, l.Epoch, ErrLost, why)
	k.pending = append(k.pending, Loss{Lease: l, Err: err})
	k.metrics.LeasesLost(1)
	k.poke()
}

// countHeld tells the metrics how many leases the keeper holds: none once
// it has stopped, since nothing renews them. k.mu is held, so that the
// counts arrive in the order of the changes.
func (k *Keeper) countHeld() {
	n := len(k.held)
	if k.stopped {
		n = 0
	}
	k.metrics.LeasesHeld(n)
}
