package credentials

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// saveTimeout bounds one write of a record's tokens.
const saveTimeout = 10 * time.Second

// persister writes what a token source learns back to its auth record:
// the tokens of a refresh (a rotated refresh token above all: the one
// before it no longer works) and, for an oauth record, a login that is
// needed again. The store seals them at rest.
type persister struct {
	records store.AuthRecords // nil: nothing is written
	id      string
	scheme  string
}

func (b *Binder) persister(c Credential) *persister {
	return &persister{records: b.Records, id: c.ID, scheme: c.Scheme}
}

// refreshed stores the tokens a refresh returned (refresh is "" when the
// endpoint did not rotate it).
func (p *persister) refreshed(access, refresh string, expiry time.Time) {
	if p.scheme == SchemeOAuthRefreshToken && refresh == "" {
		return // nothing the record holds changed
	}
	p.update("rotated tokens", func(rec store.AuthRecord) store.AuthRecord {
		if p.scheme == SchemeOAuth {
			return withTokens(rec, access, refresh, expiry, false)
		}
		out := rec
		out.Payload = clonePayload(rec.Payload)
		out.Payload["refresh_token"] = refresh
		return out
	})
}

// loginLost drops an oauth record's tokens: its refresh was refused for
// good, and only a new login helps.
func (p *persister) loginLost(why string) {
	if p.scheme != SchemeOAuth {
		return
	}
	p.update("a login that is needed again", func(rec store.AuthRecord) store.AuthRecord { return withoutLogin(rec, why) })
}

// update reads the record, changes it and saves it, if it still has the
// scheme it had.
func (p *persister) update(what string, change func(store.AuthRecord) store.AuthRecord) {
	if p == nil || p.records == nil {
		slog.Warn("oauth tokens kept in memory only: no store to save them in", "auth", p.id, "what", what)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	err := func() error {
		rec, err := p.records.GetAuth(ctx, p.id)
		if err != nil {
			return err
		}
		if rec.Scheme != p.scheme {
			return fmt.Errorf("its scheme is %q now", rec.Scheme)
		}
		return p.records.SaveAuth(ctx, change(rec))
	}()
	if err != nil {
		slog.Error("oauth tokens not saved", "auth", p.id, "what", what, "err", err)
		return
	}
	slog.Info("oauth auth record saved", "auth", p.id, "what", what)
}
