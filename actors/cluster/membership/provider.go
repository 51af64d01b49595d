package membership

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/anthdm/hollywood/cluster"

	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/reply"
)

// DefaultInterval is how often a provider reads the members unless told
// otherwise.
const DefaultInterval = time.Second

// ProviderOptions configure a provider; the zero value means the
// defaults.
type ProviderOptions struct {
	// Interval is how often the members are read: DefaultInterval when
	// zero or less.
	Interval time.Duration
	// Timeout bounds each read: Interval when zero or less.
	Timeout time.Duration
	// Logger logs outages of the source: slog.Default when nil.
	Logger *slog.Logger
	// Metrics is told how many members the node sees: nothing when nil.
	Metrics *metrics.Metrics
}

// NewProvider returns a membership provider for hollywood's cluster
// (cluster.Config.WithProvider), in place of its self-managed one, whose
// mDNS discovery exits the process on errors. The provider reads the live
// members from source as it starts and every interval, and sends the
// member set to the cluster's agent, which turns each change into a
// cluster.MemberJoinEvent or cluster.MemberLeaveEvent.
//
// The set always holds the node itself (cluster.Member: its kinds, its
// region, its engine's address). Every other member is given the node's
// own kinds and region: the nodes of a cluster run one build, which
// registers the same kinds, and the database keeps neither.
//
// A read runs off the actor, in a goroutine of its own bounded by the
// timeout, whose answer comes back as a message; a tick that finds a read
// in flight starts none. A read that fails keeps the last member set, and
// an outage is logged once, when it begins. The provider never exits the
// process: it runs behind the guard, a read that panics is a read
// that failed, and it stops its reads, waiting for the one in flight, as
// it stops.
func NewProvider(source Source, opts ProviderOptions) cluster.Producer {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Timeout <= 0 {
		opts.Timeout = opts.Interval
	}
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	return func(c *cluster.Cluster) actor.Producer {
		return guard.Producer(func() actor.Receiver {
			return &provider{cluster: c, source: source, opts: opts, log: opts.Logger.With("node", c.ID())}
		}, nil)
	}
}

// provider is the actor NewProvider makes.
type provider struct {
	cluster *cluster.Cluster
	source  Source
	opts    ProviderOptions
	log     *slog.Logger

	self     *cluster.Member
	life     context.Context // the provider's reads end with it
	stop     context.CancelFunc
	ticks    *actor.SendRepeater
	reading  bool              // a read is in flight
	readDone chan struct{}     // closed when the last read's goroutine ends; nil before the first
	sent     map[string]string // the member set last sent: each member's host by id
	failing  bool              // the last read failed
}

// tick asks the provider to read the members.
type tick struct{}

// readMembers is the answer of a read.
type readMembers struct {
	members []Member
	failure *reply.Failure
}

// Receive handles the provider's messages, behind the guard its
// producer puts it: hollywood spawns it (cluster.Start) with no options
// of ours.
func (p *provider) Receive(c *actor.Context) {
	switch msg := c.Message().(type) {
	case actor.Started:
		p.start(c)
	case tick:
		if !p.reading {
			p.read(c)
		}
	case readMembers:
		p.reading = false
		p.update(msg)
	case actor.Stopped:
		p.end()
	}
}

// start sends the node alone as the member set, then reads the members,
// now and every interval.
func (p *provider) start(c *actor.Context) {
	p.self = p.cluster.Member()
	p.life, p.stop = context.WithCancel(context.Background())
	p.publish(nil)
	p.read(c)
	ticks := c.Engine().SendRepeat(c.PID(), tick{}, p.opts.Interval)
	p.ticks = &ticks
}

// read reads the members in a goroutine, within the timeout, and sends
// the answer back to the provider.
func (p *provider) read(c *actor.Context) {
	done := make(chan struct{})
	p.reading, p.readDone = true, done
	engine, self, life, source := c.Engine(), c.PID(), p.life, p.source
	ctx, cancel := context.WithTimeout(life, p.opts.Timeout)
	go func() {
		defer close(done)
		defer cancel()
		members, err := readSafely(ctx, source)
		if life.Err() != nil {
			return // the provider has stopped: nobody to tell
		}
		engine.Send(self, readMembers{members: members, failure: reply.Fail(err)})
	}()
}

// readSafely reads source, turning a panic into an error: the read runs
// outside the actor, where the guard does not reach.
func readSafely(ctx context.Context, source Source) (members []Member, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("reading the members panicked: %v", v)
		}
	}()
	return source.LiveMembers(ctx)
}

// update sends the members a read found, or keeps the last set when it
// failed.
func (p *provider) update(read readMembers) {
	if read.failure != nil {
		if !p.failing {
			p.log.Warn("cluster membership: reading the members failed; the last member set stands until a read succeeds",
				"err", read.failure.Message)
			p.failing = true
		}
		return
	}
	if p.failing {
		p.log.Info("cluster membership: the members are read again")
		p.failing = false
	}
	p.publish(read.members)
}

// publish sends the agent the node itself and members. The agent knows a
// member by its id alone, so a member that moved (another address under
// its id, a node restarted elsewhere) is first sent away, then back: it
// leaves and joins again, at its new address. The set is sent even when
// unchanged, which the agent ignores, so that an agent that lost it
// learns it again.
func (p *provider) publish(members []Member) {
	set := []*cluster.Member{p.self}
	for _, m := range members {
		if m.NodeID != p.self.ID {
			set = append(set, &cluster.Member{ID: m.NodeID, Host: m.ClusterAddress, Kinds: slices.Clone(p.self.Kinds), Region: p.self.Region})
		}
	}
	moved := func(m *cluster.Member) bool {
		host, ok := p.sent[m.ID]
		return ok && host != m.Host
	}
	if slices.ContainsFunc(set, moved) {
		p.cluster.Engine().Send(p.cluster.PID(), &cluster.Members{Members: slices.DeleteFunc(slices.Clone(set), moved)})
	}
	p.cluster.Engine().Send(p.cluster.PID(), &cluster.Members{Members: set})
	p.sent = make(map[string]string, len(set))
	for _, m := range set {
		p.sent[m.ID] = m.Host
	}
	p.opts.Metrics.ClusterMembers(len(set))
}

// end stops the ticks and the reads, and waits, within the timeout, for
// the read in flight to return.
func (p *provider) end() {
	if p.ticks != nil {
		p.ticks.Stop()
		p.ticks = nil
	}
	if p.stop != nil {
		p.stop()
	}
	if p.readDone == nil {
		return
	}
	timer := time.NewTimer(p.opts.Timeout)
	defer timer.Stop()
	select {
	case <-p.readDone:
	case <-timer.C:
		p.log.Warn("cluster membership: a read of the members did not return as the provider stopped", "within", p.opts.Timeout)
	}
}
