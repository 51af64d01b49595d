package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// secrets are the payload values of secretRecord: none may be printed or
// logged.
var secrets = []string{"tok-3f9a7c", "hdr-81b2e4", "424242"}

func secretRecord() store.AuthRecord {
	return store.AuthRecord{
		ID:     "github.acme",
		Scheme: "bearer",
		Payload: map[string]any{
			"access_token": "tok-3f9a7c",
			"headers":      map[string]any{"X-Api-Key": "hdr-81b2e4"},
			"pin":          424242.0,
		},
		Metadata: map[string]any{"owner": "ops"},
	}
}

// checkRedacted asserts that out shows the record's id, scheme, metadata
// and payload key names, and no payload value.
func checkRedacted(t *testing.T, what, out string) {
	t.Helper()
	is := is.NewRelaxed(t)
	is.Helper()
	for _, secret := range secrets {
		if strings.Contains(out, secret) {
			t.Logf("%s shows the payload value %q: %s", what, secret, out)
			is.Fail() // no payload value is shown
		}
	}
	for _, shown := range []string{"github.acme", "bearer", "owner", "ops", "access_token", "headers", "pin"} {
		if !strings.Contains(out, shown) {
			t.Logf("%s does not show %q: %s", what, shown, out)
			is.Fail() // id, scheme, metadata and payload keys are shown
		}
	}
}

func TestAuthRecordFormatting(t *testing.T) {
	is := is.NewRelaxed(t)
	rec := secretRecord()
	type holder struct{ Auth store.AuthRecord }
	args := map[string]any{
		"value":       rec,
		"pointer":     &rec,
		"slice":       []store.AuthRecord{rec},
		"in a struct": holder{rec},
		"in a map":    map[string]store.AuthRecord{"k": rec},
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%t", "%10.3v"} {
		for name, arg := range args {
			checkRedacted(t, verb+" of a "+name, fmt.Sprintf(verb, arg))
		}
	}
	for _, verb := range []string{"%x", "%X", "%q"} { // encodings of the text
		for name, arg := range args {
			out := fmt.Sprintf(verb, arg)
			for _, secret := range secrets {
				for _, encoded := range []string{secret, fmt.Sprintf("%x", secret), fmt.Sprintf("%X", secret)} {
					if strings.Contains(out, encoded) {
						t.Logf("%s of a %s shows the payload value %q: %s", verb, name, secret, out)
						is.Fail() // no encoding of a payload value is shown
					}
				}
			}
		}
	}
	checkRedacted(t, "String", rec.String())
	checkRedacted(t, "GoString", rec.GoString())
	checkRedacted(t, "Sprint", fmt.Sprint(rec, &rec))
	checkRedacted(t, "Sprintln", fmt.Sprintln(rec))
}

func TestAuthRecordLogging(t *testing.T) {
	is := is.New(t)
	rec := secretRecord()
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	logger.Info("saved", "auth", rec)
	logger.Info("saved", "auth", &rec)
	logger.Info("saved", slog.Any("auth", rec))
	logger.With("auth", rec).Info("bound")
	logger.WithGroup("g").Info("saved", slog.Group("inner", "auth", rec))
	checkRedacted(t, "slog JSON", buf.String())

	for line := range strings.Lines(buf.String()) {
		var entry map[string]any
		is.NoErr(json.Unmarshal([]byte(line), &entry))
		auth, ok := entry["auth"].(map[string]any)
		if !ok {
			continue // the grouped one
		}
		is.Equal(auth, map[string]any{
			"id":           "github.acme",
			"scheme":       "bearer",
			"metadata":     map[string]any{"owner": "ops"},
			"payload_keys": []any{"access_token", "headers", "pin"},
		}) // the summary, and nothing else
	}

	buf.Reset()
	logger = slog.New(slog.NewTextHandler(&buf, nil))
	logger.Info("saved", "auth", rec, "list", []store.AuthRecord{rec})
	checkRedacted(t, "slog text", buf.String())
}

// TestAuthRecordJSON pins down that JSON keeps the payload: the form the
// stores write, and why a record is never logged as JSON.
func TestAuthRecordJSON(t *testing.T) {
	is := is.New(t)
	rec := secretRecord()
	b, err := json.Marshal(rec)
	is.NoErr(err)
	is.True(strings.Contains(string(b), "tok-3f9a7c")) // the whole record
	var back store.AuthRecord
	is.NoErr(json.Unmarshal(b, &back))
	is.Equal(back, rec)
}

func TestValidAuthID(t *testing.T) {
	is := is.New(t)
	for _, id := range []string{"a", "_", "9", "github.com-acme_1", "x.."} {
		is.True(store.ValidAuthID(id)) // valid
	}
	for _, id := range []string{"", ".x", "-x", "a/b", "a b", "é", "a\n"} {
		is.True(!store.ValidAuthID(id)) // invalid
	}
}

func TestOptions(t *testing.T) {
	is := is.New(t)
	is.Equal(store.NewOptions().MaxEvents, store.MaxEvents)
	is.Equal(store.MaxEvents, 10_000)
	is.Equal(store.NewOptions(store.WithMaxEvents(5)).MaxEvents, 5)
	defer func() { is.True(recover() != nil) }() // a store keeps at least one event
	store.WithMaxEvents(0)
}
