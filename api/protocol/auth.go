package protocol

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
)

// Method names: the admin auth records (reference §3.3).
const (
	MethodAuthList    = "workflow.admin.auth.list"
	MethodAuthInspect = "workflow.admin.auth.inspect"
	MethodAuthSave    = "workflow.admin.auth.save"
	MethodAuthDelete  = "workflow.admin.auth.delete"
)

// AuthRefParams are the params of workflow.admin.auth.inspect and
// workflow.admin.auth.delete.
type AuthRefParams struct {
	AuthRef string `json:"auth_ref"`
}

// SaveAuthParams are the params of workflow.admin.auth.save. Payload holds
// the secret values; it is stored and never answered.
type SaveAuthParams struct {
	AuthRef  string `json:"auth_ref"`
	Scheme   string `json:"scheme"`
	Payload  Object `json:"payload,omitempty"`
	Metadata Object `json:"metadata,omitempty"`
}

// AuthRecordSummary is the manifest's AuthRecordSummaryPayload: an auth
// record without its payload values, only the names of its payload keys.
type AuthRecordSummary struct {
	ID          string   `json:"id"`
	Scheme      string   `json:"scheme"`
	Metadata    Object   `json:"metadata"`
	PayloadKeys []string `json:"payload_keys"`
}

// ListAuthRecordsResult answers workflow.admin.auth.list: every record's
// summary, sorted by id.
type ListAuthRecordsResult struct {
	AuthRecords []AuthRecordSummary `json:"auth_records"`
	Total       int                 `json:"total"`
}

// DeleteAuthRecordResult answers workflow.admin.auth.delete.
type DeleteAuthRecordResult struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// String describes p without its payload values, so that printing or
// logging params never shows a secret.
func (p SaveAuthParams) String() string {
	return fmt.Sprintf("SaveAuthParams{AuthRef:%q Scheme:%q Metadata:%v PayloadKeys:%q}",
		p.AuthRef, p.Scheme, p.Metadata, slices.Sorted(maps.Keys(p.Payload)))
}

// GoString is String, for %#v.
func (p SaveAuthParams) GoString() string { return p.String() }

// Format makes every verb print p as String does.
func (p SaveAuthParams) Format(f fmt.State, _ rune) { fmt.Fprint(f, p.String()) }

// LogValue logs p without its payload values.
func (p SaveAuthParams) LogValue() slog.Value { return slog.StringValue(p.String()) }
