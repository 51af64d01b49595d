// Package hooks is the face of signed webhooks: POST /hooks/<id> on the
// serve listener. A delivery's signature is its credential (no bearer
// token): the handler finds the webhook, bounds its rate and its body,
// checks the signature (actors/webhooks), takes its delivery id once
// (durably, in the store), maps the body to the workflow's input and
// starts the run through the method table, as the webhook's principal
// (started_by "webhook:<id>"). Every refusal is counted, and those of a
// known webhook within its rate recorded as admin events; every delivery
// to a known webhook (one refusal per token of a flood past its rate) is
// kept in the webhook's log of recent deliveries, which
// workflow.webhooks.inspect shows. Nothing of a body, of a header's
// value but a verified delivery id, or of a secret is logged or kept.
// docs/triggers.md.
package hooks

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/webhooks"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// Pattern is where the handler is mounted.
const Pattern = "POST /hooks/{id}"

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultRate         = 10 // deliveries per second per hook
	DefaultBurst        = 20
	// DefaultDedupWindow is how long a delivery id is remembered.
	DefaultDedupWindow = 24 * time.Hour
	// MaxDeliveryIDLen bounds a delivery id, which the store keeps.
	MaxDeliveryIDLen = 200
	// logTimeout bounds the write of a delivery to the webhook's log,
	// which outlives a sender that hung up.
	logTimeout = 5 * time.Second
)

// Store is what the handler reads and writes: the webhooks, their
// delivery ids and logs, and the admin event log.
type Store interface {
	GetWebhook(ctx context.Context, id string) (store.Webhook, error)
	ClaimDelivery(ctx context.Context, hook, delivery string, now, expires time.Time) (bool, error)
	ReleaseDelivery(ctx context.Context, hook, delivery string) error
	RecordDelivery(ctx context.Context, hook string, d store.WebhookDelivery) error
	store.Events
}

// Caller is the method table acting for one principal (edge.Local).
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// Options configure the handler. Zero values take the defaults.
type Options struct {
	Store Store
	// As returns the method table acting for p.
	As func(p access.Principal) Caller
	// Metrics counts deliveries by outcome; nil counts nothing.
	Metrics *metrics.Metrics
	// MaxBodyBytes bounds a body (beyond it: 413): the edge's bound.
	MaxBodyBytes int64
	// Rate and Burst bound each hook's deliveries (beyond: 429), counted
	// before the body is read, signed or not.
	Rate  float64
	Burst int
	// Tolerance bounds the generic signature's timestamp.
	Tolerance time.Duration
	// DedupWindow is how long a delivery id is remembered.
	DedupWindow time.Duration
	// BodyTimeout bounds reading a body (the edge's); none when zero.
	BodyTimeout time.Duration
	Now         func() time.Time
}

// Handler serves POST /hooks/{id}.
type Handler struct {
	opts   Options
	verify webhooks.Verifier
	rates  *limiters
}

// New returns the handler of opts.
func New(opts Options) *Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Rate <= 0 {
		opts.Rate = DefaultRate
	}
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	if opts.DedupWindow <= 0 {
		opts.DedupWindow = DefaultDedupWindow
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Handler{opts: opts, verify: webhooks.Verifier{Tolerance: opts.Tolerance}, rates: newLimiters(opts.Rate, opts.Burst)}
}

// Outcomes of a delivery: the metric's label and the admin event's.
const (
	OutcomeStarted      = "started"
	OutcomeReplayed     = "replayed"
	OutcomeUnsigned     = "unsigned"
	OutcomeBadSignature = "bad_signature"
	OutcomeStale        = "stale"
	OutcomeUnknownHook  = "unknown_hook"
	OutcomeTooLarge     = "too_large"
	OutcomeRateLimited  = "rate_limited"
	OutcomeBadRequest   = "bad_request"
	OutcomeStartFailed  = "start_failed"
)

// refusal is a delivery refused: its status, outcome and message (which
// never holds anything of the body or of a secret).
type refusal struct {
	status  int
	outcome string
	msg     string
	// recorded is the admin event's reason where msg may quote the body
	// (a schema's complaint about the input); msg when empty.
	recorded string
	// unlogged keeps the refusal out of the webhook's log: there is no
	// webhook, the store failed to read it, or a flood past the rate
	// was logged already.
	unlogged bool
}

// delivery is what deliver learnt of one delivery: the run it started,
// or its refusal, and its delivery id once its signature verified.
type delivery struct {
	runID    string
	id       string
	refusal  *refusal
	received time.Time
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if h.opts.BodyTimeout > 0 {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.opts.BodyTimeout))
	}
	d := delivery{received: h.opts.Now()}
	d.runID, d.refusal = h.deliver(w, r, id, &d.id)
	if ref := d.refusal; ref != nil {
		h.opts.Metrics.WebhookDelivery(ref.outcome)
		if ref.outcome != OutcomeUnknownHook && ref.outcome != OutcomeRateLimited {
			h.reject(r, id, ref) // past the rate: a flood writes at most the rate's events
		}
		if !ref.unlogged {
			h.log(r, id, d)
		}
		writeJSON(w, ref.status, map[string]any{"error": ref.msg, "outcome": ref.outcome})
		return
	}
	h.opts.Metrics.WebhookDelivery(OutcomeStarted)
	h.log(r, id, d)
	writeJSON(w, http.StatusAccepted, map[string]any{"run_id": d.runID})
}

// deliver takes one delivery as far as the run it starts, setting
// *verified to its delivery id once its signature verified.
func (h *Handler) deliver(w http.ResponseWriter, r *http.Request, id string, verified *string) (string, *refusal) {
	ctx := r.Context()
	hook, err := h.opts.Store.GetWebhook(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		ref := refuse(http.StatusNotFound, OutcomeUnknownHook, "no such webhook")
		ref.unlogged = true // a flood of made-up ids buys no store write
		return "", ref
	}
	if err != nil {
		slog.Warn("webhook delivery: the store failed", "webhook", id, "err", err)
		ref := refuse(http.StatusServiceUnavailable, OutcomeStartFailed, "the webhook could not be read; retry later")
		ref.unlogged = true
		return "", ref
	}
	if !h.rates.allow(id, h.opts.Now()) {
		ref := refuse(http.StatusTooManyRequests, OutcomeRateLimited, "too many deliveries to this webhook; retry later")
		ref.unlogged = !h.rates.noteRefusal(id)
		return "", ref
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
		return "", refuse(http.StatusRequestEntityTooLarge, OutcomeTooLarge, fmt.Sprintf("the body is larger than %d bytes", h.opts.MaxBodyBytes))
	}
	if err != nil {
		return "", refuse(http.StatusBadRequest, OutcomeBadRequest, "the body could not be read")
	}
	now := h.opts.Now()
	if err := h.verify.Verify(r.Header, body, hook.Secrets, now); err != nil {
		return "", signatureRefusal(err)
	}
	delivery := webhooks.DeliveryID(r.Header)
	if len(delivery) > MaxDeliveryIDLen {
		return "", refuse(http.StatusBadRequest, OutcomeBadRequest, fmt.Sprintf("the delivery id is longer than %d bytes", MaxDeliveryIDLen))
	}
	*verified = delivery
	input, err := webhooks.MapInput(hook.InputMap, body, r.Header)
	if err != nil {
		return "", refuse(http.StatusBadRequest, OutcomeBadRequest, err.Error())
	}
	if delivery != "" {
		fresh, err := h.opts.Store.ClaimDelivery(ctx, id, delivery, now, now.Add(h.opts.DedupWindow))
		if err != nil {
			slog.Warn("webhook delivery: the store failed", "webhook", id, "err", err)
			return "", refuse(http.StatusServiceUnavailable, OutcomeStartFailed, "the delivery could not be recorded; retry later")
		}
		if !fresh {
			return "", refuse(http.StatusConflict, OutcomeReplayed, "this delivery id was taken already: its run was started once")
		}
	}
	runID, err := h.start(ctx, hook, input, delivery)
	if err != nil {
		if delivery != "" {
			if rerr := h.opts.Store.ReleaseDelivery(context.WithoutCancel(ctx), id, delivery); rerr != nil {
				slog.Warn("webhook delivery: its id could not be released; a retry will be taken as a replay", "webhook", id, "err", rerr)
			}
		}
		return "", startRefusal(err)
	}
	return runID, nil
}

// start starts the webhook's deployment on input, as the webhook. A
// delivery with an id starts with an idempotency key of it (deliveryKey),
// so that, should its claim be released after a start whose answer was
// lost, the sender's retry answers with the run it started rather than
// starting another.
func (h *Handler) start(ctx context.Context, hook store.Webhook, input any, delivery string) (string, error) {
	as := access.NewPrincipal("webhook:"+hook.ID, []access.Scope{access.Run}, nil)
	raw, err := json.Marshal(input)
	if err != nil {
		return "", err
	}
	var res struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	params := map[string]any{"deployment_id": hook.DeploymentID, "workflow_input": json.RawMessage(raw), "wait": false}
	if delivery != "" {
		params["idempotency_key"] = deliveryKey(hook.ID, delivery)
	}
	if err := h.opts.As(as).Call(ctx, "workflow.runs.start", params, &res); err != nil {
		return "", err
	}
	if res.RunID == "" {
		return "", fmt.Errorf("the deployment cannot run (%s)", res.Status)
	}
	return res.RunID, nil
}

// deliveryKey is the idempotency key of a webhook's delivery: the hook
// and a digest of the delivery id, which bounds its length (a delivery id
// may be MaxDeliveryIDLen bytes).
func deliveryKey(hook, delivery string) string {
	sum := sha256.Sum256([]byte(delivery))
	return "webhook:" + hook + ":" + hex.EncodeToString(sum[:16])
}

// refuse is a refusal whose message may be recorded as it is.
func refuse(status int, outcome, msg string) *refusal {
	return &refusal{status: status, outcome: outcome, msg: msg}
}

// signatureRefusal is the 401 of a signature that does not verify.
func signatureRefusal(err error) *refusal {
	outcome := OutcomeBadSignature
	switch {
	case errors.Is(err, webhooks.ErrNoSignature):
		outcome = OutcomeUnsigned
	case errors.Is(err, webhooks.ErrStale):
		outcome = OutcomeStale
	}
	return refuse(http.StatusUnauthorized, outcome, err.Error())
}

// startRefusal is the answer to a start the method table refused: 422
// for what the sender's input or the deployment made impossible, 503 for
// the rest (busy, shutting down), which a retry may get past.
// The sender is told why (it knows its body); the admin event says only
// the error's code.
func startRefusal(err error) *refusal {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		return &refusal{status: http.StatusUnprocessableEntity, outcome: OutcomeStartFailed, msg: "the run could not start: " + err.Error(), recorded: "the run could not start"}
	}
	why := cmp.Or(rpcErr.Detail(), rpcErr.Message)
	recorded := fmt.Sprintf("the run could not start (%d)", rpcErr.Code)
	if rpcErr.Code == jsonrpc.Overloaded || rpcErr.Code == jsonrpc.RequestTimeout {
		return &refusal{status: http.StatusServiceUnavailable, outcome: OutcomeStartFailed, msg: "the run could not start now: " + why, recorded: recorded}
	}
	return &refusal{status: http.StatusUnprocessableEntity, outcome: OutcomeStartFailed, msg: "the run could not start: " + why, recorded: recorded}
}

// reject records a refused delivery as an admin event: the webhook, the
// outcome, the status and the delivery id, never the body. Deliveries to
// no webhook and past a webhook's rate are only counted: each event is a
// store write, which a flood of them must not buy.
func (h *Handler) reject(r *http.Request, id string, ref *refusal) {
	payload := map[string]any{"webhook_id": id, "outcome": ref.outcome, "status": ref.status, "reason": cmp.Or(ref.recorded, ref.msg)}
	if d := webhooks.DeliveryID(r.Header); d != "" && len(d) <= MaxDeliveryIDLen {
		payload["delivery_id"] = d
	}
	audit.Record(r.Context(), h.opts.Store, h.opts.Now(), audit.Event{Kind: audit.WebhookDeliveryRejected, Payload: payload})
}

// log keeps d in the webhook's log of recent deliveries: when it came,
// its outcome, status and reason, its verified delivery id and its run.
// A write that fails is logged; the delivery's answer stands.
func (h *Handler) log(r *http.Request, id string, d delivery) {
	entry := store.WebhookDelivery{ReceivedAtMs: d.received.UnixMilli(), DeliveryID: d.id, Outcome: OutcomeStarted, Status: http.StatusAccepted, RunID: d.runID}
	if ref := d.refusal; ref != nil {
		entry.Outcome, entry.Status, entry.Reason = ref.outcome, ref.status, cmp.Or(ref.recorded, ref.msg)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), logTimeout)
	defer cancel()
	if err := h.opts.Store.RecordDelivery(ctx, id, entry); err != nil {
		slog.Warn("webhook delivery: the webhook's log of deliveries could not keep it", "webhook", id, "outcome", entry.Outcome, "err", err)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
