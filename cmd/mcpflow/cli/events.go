package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// eventsQueue bounds the admin events waiting to be printed by `events
// --follow`; a fuller queue subscribes again after the last one printed.
const eventsQueue = 256

// maxEventResubscribes bounds the subscriptions `events --follow` makes
// again in a row without printing an event in between.
const maxEventResubscribes = 20

func newEventsCommand(r *remote) *cobra.Command {
	var (
		follow      bool
		waitTimeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show the admin event log (workflow.admin.events.list; --follow: .subscribe)",
		Long: `Show the admin event log the server keeps, oldest first: connections
registered and changed, catalogs refreshed, auth records saved, artifacts
and deployments saved, runs started and ended.

--follow prints the kept events, then each new one as it comes, until
interrupted (Ctrl-C) or --wait-timeout. With -o json: the list result, or
with --follow one JSON object per event and line.`,
		Example: `  mcpflow events
  mcpflow events --follow
  mcpflow events --follow -o json | jq -r .kind`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !follow {
				return r.do(cmd, func(ctx context.Context, c *conn) error {
					_, err := callShow(ctx, c, p.MethodAdminEventsList, p.Empty{}, func(t *table, res p.ListAdminEventsResult) {
						eventHeader(t)
						for _, e := range res.Events {
							eventRow(t, e)
						}
					})
					return err
				})
			}
			if waitTimeout <= 0 {
				return errors.New("--wait-timeout must be positive")
			}
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				ctx, cancel := context.WithTimeout(ctx, waitTimeout)
				defer cancel()
				err := followEvents(ctx, c)
				if ctx.Err() != nil {
					return nil // interrupted or the wait is over: the end of following
				}
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&follow, "follow", false, "print the kept events, then new ones as they come")
	cmd.Flags().DurationVar(&waitTimeout, "wait-timeout", defaultWaitTimeout, "with --follow: how long to follow")
	return cmd
}

func eventHeader(t *table) { t.row("TIME", "KIND", "CONNECTION", "CAPABILITY", "WORKFLOW", "PAYLOAD") }

func eventRow(t *table, e p.AdminEvent) {
	at := time.UnixMilli(e.TimestampEpochMs).UTC().Format(time.RFC3339Nano)
	t.row(at, e.Kind, e.ConnectionID, e.CapabilityID, e.WorkflowName, clip(cell(e.Payload), 80))
}

// followEvents prints the kept admin events, then live ones, until ctx
// ends, the connection is lost or the server refuses. A subscription
// that lagged, or whose events overflowed the queue, is made again after
// the last event printed.
func followEvents(ctx context.Context, c *conn) error {
	if !c.json() {
		t := newTable(c.out)
		eventHeader(t)
		if err := t.flush(); err != nil {
			return err
		}
	}
	var last int64
	for again := 0; ; {
		queue := make(chan json.RawMessage, eventsQueue)
		lost := make(chan struct{}, 1)
		sctx, cancel := context.WithCancel(ctx)
		after := last
		err := c.Subscribe(sctx, p.MethodAdminEventsSubscribe, p.SubscribeAdminEventsParams{AfterSequence: &after}, nil,
			func(method string, params json.RawMessage) {
				if method == p.NotifyAdminLagged {
					params = nil // the subscription has ended: subscribe again
				}
				select {
				case queue <- params:
				default:
					select {
					case lost <- struct{}{}:
					default:
					}
				}
			})
		if err != nil {
			cancel()
			return fmt.Errorf("follow admin events: subscribe after event %d: %w", last, err)
		}
		var printed bool
		var printErr error
		last, printed, printErr = printEvents(sctx, c, queue, lost, last)
		cancel()
		if printErr != nil || ctx.Err() != nil {
			return printErr
		}
		if printed {
			again = 0
		}
		if again++; again > maxEventResubscribes {
			return fmt.Errorf("follow admin events: subscribed %d times in a row after event %d without getting further", maxEventResubscribes, last)
		}
	}
}

// printEvents prints the events of one subscription after last until it
// lags, overflows or ctx ends; it returns the last event printed and
// whether any was.
func printEvents(ctx context.Context, c *conn, queue <-chan json.RawMessage, lost <-chan struct{}, last int64) (int64, bool, error) {
	printed := false
	for {
		select {
		case <-ctx.Done():
			return last, printed, nil
		case <-c.Done():
			return last, printed, fmt.Errorf("follow admin events: the connection was lost after event %d", last)
		case <-lost:
			return last, printed, nil
		case params := <-queue:
			if params == nil {
				return last, printed, nil
			}
			var e p.AdminEventNotification
			if err := json.Unmarshal(params, &e); err != nil {
				return last, printed, fmt.Errorf("follow admin events: decode %s: %w", p.NotifyAdminEvent, err)
			}
			if e.Sequence <= last {
				continue
			}
			last, printed = e.Sequence, true
			if err := printEvent(c, e); err != nil {
				return last, printed, err
			}
		}
	}
}

// printEvent prints one followed event: a JSON line, or a table row.
func printEvent(c *conn, e p.AdminEventNotification) error {
	if c.json() {
		data, err := json.Marshal(struct {
			Sequence int64 `json:"sequence"`
			p.AdminEvent
		}{e.Sequence, e.AdminEvent})
		if err != nil {
			return fmt.Errorf("print event: %w", err)
		}
		_, err = fmt.Fprintf(c.out, "%s\n", data)
		return err
	}
	t := newTable(c.out)
	eventRow(t, e.AdminEvent)
	return t.flush()
}
