package service

import (
	"context"
	"strconv"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// authMethods are workflow.admin.auth.*: list, inspect, save and delete
// the auth records.
func (s *Service) authMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodAuthList:    forAdmin(s.listAuth),
		protocol.MethodAuthInspect: forAdmin(s.inspectAuth),
		protocol.MethodAuthSave:    forAdmin(s.saveAuth),
		protocol.MethodAuthDelete:  forAdmin(s.deleteAuth),
	}
}

// The admin auth records (reference §3.3). No answer, error or event ever
// holds a payload value: records are shown as {id, scheme, metadata,
// payload_keys}.

func (s *Service) listAuth(ctx context.Context, _ protocol.Empty) (protocol.ListAuthRecordsResult, error) {
	recs, err := s.Store.ListAuth(ctx)
	if err != nil {
		return protocol.ListAuthRecordsResult{}, storeErr(err, "auth records")
	}
	out := make([]protocol.AuthRecordSummary, 0, len(recs))
	for _, r := range recs {
		out = append(out, authSummary(r))
	}
	return protocol.ListAuthRecordsResult{AuthRecords: out, Total: len(out)}, nil
}

func (s *Service) inspectAuth(ctx context.Context, p protocol.AuthRefParams) (protocol.AuthRecordSummary, error) {
	if err := checkAuthID(p.AuthRef); err != nil {
		return protocol.AuthRecordSummary{}, err
	}
	r, err := s.Store.GetAuth(ctx, p.AuthRef)
	if err != nil {
		return protocol.AuthRecordSummary{}, storeErr(err, authWhat(p.AuthRef))
	}
	return authSummary(r), nil
}

// saveAuth stores a record, replacing any with the same id. A payload
// that lacks what a bound scheme (bearer, headers, env,
// oauth_refresh_token) needs is refused; other schemes are kept as they
// are (opaque) and bind to no transport. Sessions opened from now on use
// the record; open ones keep the credentials they opened with.
func (s *Service) saveAuth(ctx context.Context, p protocol.SaveAuthParams) (protocol.AuthRecordSummary, error) {
	if err := checkAuthID(p.AuthRef); err != nil {
		return protocol.AuthRecordSummary{}, err
	}
	if p.Scheme == "" {
		return protocol.AuthRecordSummary{}, invalid("auth scheme must be non-empty")
	}
	rec := store.AuthRecord{ID: p.AuthRef, Scheme: p.Scheme, Payload: p.Payload, Metadata: p.Metadata}
	if rec.Payload == nil {
		rec.Payload = map[string]any{}
	}
	if rec.Metadata == nil {
		rec.Metadata = map[string]any{}
	}
	if err := credentials.Validate(rec); err != nil {
		return protocol.AuthRecordSummary{}, invalid("%v", err)
	}
	if err := s.Store.SaveAuth(ctx, rec); err != nil {
		return protocol.AuthRecordSummary{}, storeErr(err, authWhat(p.AuthRef))
	}
	summary := authSummary(rec)
	s.record(ctx, audit.Event{Kind: audit.AuthSaved, Payload: protocol.Object{
		"auth_ref": summary.ID, "scheme": summary.Scheme, "payload_keys": summary.PayloadKeys,
	}})
	return summary, nil
}

func (s *Service) deleteAuth(ctx context.Context, p protocol.AuthRefParams) (protocol.DeleteAuthRecordResult, error) {
	if err := checkAuthID(p.AuthRef); err != nil {
		return protocol.DeleteAuthRecordResult{}, err
	}
	deleted, err := s.Store.DeleteAuth(ctx, p.AuthRef)
	if err != nil {
		return protocol.DeleteAuthRecordResult{}, storeErr(err, authWhat(p.AuthRef))
	}
	return protocol.DeleteAuthRecordResult{ID: p.AuthRef, Deleted: deleted}, nil
}

// authSummary shows r without its payload values.
func authSummary(r store.AuthRecord) protocol.AuthRecordSummary {
	meta := r.Metadata
	if meta == nil {
		meta = protocol.Object{}
	}
	keys := r.PayloadKeys()
	if keys == nil {
		keys = []string{}
	}
	return protocol.AuthRecordSummary{ID: r.ID, Scheme: r.Scheme, Metadata: meta, PayloadKeys: keys}
}

// checkAuthID refuses an id that is no valid auth id, with the reference's
// message.
func checkAuthID(id string) error {
	if !store.ValidAuthID(id) {
		return invalid("auth id must start with alphanumeric or underscore and contain only [A-Za-z0-9_.-]")
	}
	return nil
}

func authWhat(id string) string { return "auth record " + strconv.Quote(id) }
