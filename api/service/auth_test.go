package service_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// Secret values saved by the auth tests; no answer, error or event may
// show them.
const (
	authSecret    = "auth-s3cret-bearer-d41f"
	authSecretEnv = "auth-s3cret-env-77b2"
)

// noAuthSecret fails if text shows a saved secret value.
func noAuthSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range []string{authSecret, authSecretEnv} {
		if strings.Contains(text, s) {
			t.Errorf("%s shows a secret value: %s", what, text)
		}
	}
}

// saveAuth saves a record that must be accepted and returns the answer.
func saveAuth(t *testing.T, f *fixture, params string) protocol.AuthRecordSummary {
	t.Helper()
	res := conforming[protocol.AuthRecordSummary](t, f, protocol.MethodAuthSave, params)
	noAuthSecret(t, "auth.save", jsonOf(res))
	return res
}

func TestAuthSaveAnswersASummaryWithoutValues(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := saveAuth(t, f, `{"auth_ref":"web.main","scheme":"bearer","payload":{"token":"`+authSecret+`","note":"x"},"metadata":{"owner":"search"}}`)
	is.Equal(res, protocol.AuthRecordSummary{ID: "web.main", Scheme: "bearer", Metadata: protocol.Object{"owner": "search"}, PayloadKeys: []string{"note", "token"}})

	stored, err := f.store.GetAuth(bounded(t), "web.main")
	is.NoErr(err)
	is.Equal(stored.Payload["token"], authSecret) // the store keeps the value

	// Without payload or metadata: both empty, never null.
	raw := f.raw(t, protocol.MethodAuthSave, `{"auth_ref":"plain","scheme":"custom"}`)
	is.Equal(string(raw), `{"id":"plain","scheme":"custom","metadata":{},"payload_keys":[]}`)
}

func TestAuthSaveRecordsAnEventWithoutValues(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	saveAuth(t, f, `{"auth_ref":"tool.env","scheme":"env","payload":{"env":{"API_KEY":"`+authSecretEnv+`"}}}`)
	events, err := f.store.ListEvents(bounded(t), 0, 100)
	is.NoErr(err)
	var saved []string
	for _, e := range events {
		data, err := json.Marshal(e)
		is.NoErr(err)
		noAuthSecret(t, "the event", string(data))
		if e.Kind == "auth_saved" {
			saved = append(saved, string(data))
			is.Equal(e.Payload["auth_ref"], "tool.env")
			is.Equal(e.Payload["scheme"], "env")
		}
	}
	is.Equal(len(saved), 1) // one auth_saved event
}

func TestAuthListAndInspectShowKeysOnly(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	saveAuth(t, f, `{"auth_ref":"b.two","scheme":"env","payload":{"env":{"API_KEY":"`+authSecretEnv+`"}}}`)
	saveAuth(t, f, `{"auth_ref":"a.one","scheme":"bearer","payload":{"access_token":"`+authSecret+`"}}`)

	list := conforming[protocol.ListAuthRecordsResult](t, f, protocol.MethodAuthList, `{}`)
	noAuthSecret(t, "auth.list", jsonOf(list))
	is.Equal(list.Total, 2)
	is.Equal(list.AuthRecords[0].ID, "a.one") // sorted by id
	is.Equal(list.AuthRecords[0].PayloadKeys, []string{"access_token"})
	is.Equal(list.AuthRecords[1].ID, "b.two")
	is.Equal(list.AuthRecords[1].PayloadKeys, []string{"env"})

	got := conforming[protocol.AuthRecordSummary](t, f, protocol.MethodAuthInspect, `{"auth_ref":"b.two"}`)
	noAuthSecret(t, "auth.inspect", jsonOf(got))
	is.Equal(got, protocol.AuthRecordSummary{ID: "b.two", Scheme: "env", Metadata: protocol.Object{}, PayloadKeys: []string{"env"}})

	empty := newFixture(t)
	none := conforming[protocol.ListAuthRecordsResult](t, empty, protocol.MethodAuthList, `{}`)
	is.Equal(none.Total, 0)
	is.Equal(jsonOf(none), `{"auth_records":[],"total":0}`)
}

func TestAuthInspectOfAMissingRecordIsNotFound(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	_, err := f.call(t, protocol.MethodAuthInspect, `{"auth_ref":"nope"}`)
	is.True(strings.Contains(domainError(t, err, "KeyError"), `"nope"`))
	_, err = f.call(t, protocol.MethodAuthInspect, `{"auth_ref":"../etc"}`)
	domainError(t, err, "ValueError") // not an auth id
}

func TestAuthDeleteSaysWhetherItDeleted(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	saveAuth(t, f, `{"auth_ref":"web.main","scheme":"bearer","payload":{"token":"`+authSecret+`"}}`)
	res := conforming[protocol.DeleteAuthRecordResult](t, f, protocol.MethodAuthDelete, `{"auth_ref":"web.main"}`)
	is.Equal(res, protocol.DeleteAuthRecordResult{ID: "web.main", Deleted: true})
	res = conforming[protocol.DeleteAuthRecordResult](t, f, protocol.MethodAuthDelete, `{"auth_ref":"web.main"}`)
	is.Equal(res, protocol.DeleteAuthRecordResult{ID: "web.main", Deleted: false})
	_, err := f.call(t, protocol.MethodAuthInspect, `{"auth_ref":"web.main"}`)
	domainError(t, err, "KeyError")
	_, err = f.call(t, protocol.MethodAuthDelete, `{"auth_ref":".hidden"}`)
	domainError(t, err, "ValueError")
}

func TestAuthSaveRefusesWhatCannotBindWithoutShowingValues(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	for _, params := range []string{
		`{"auth_ref":"a","scheme":"bearer","payload":{"tok":"` + authSecret + `"}}`,
		`{"auth_ref":"a","scheme":"headers","payload":{"headers":{"X-Key":1,"Y":"` + authSecret + `"}}}`,
		`{"auth_ref":"a","scheme":"env","payload":{"env":"` + authSecretEnv + `"}}`,
		`{"auth_ref":"a","scheme":"oauth_refresh_token","payload":{"client_id":"app","refresh_token":"` + authSecret + `","token_url":"not a url"}}`,
		`{"auth_ref":"a b","scheme":"bearer","payload":{"token":"` + authSecret + `"}}`,
	} {
		_, err := f.call(t, protocol.MethodAuthSave, params)
		msg := domainError(t, err, "ValueError")
		noAuthSecret(t, "the error", msg+" "+err.Error())
	}
	_, err := f.call(t, protocol.MethodAuthSave, `{"auth_ref":"a","scheme":"bearer","payload":{"token":"`+authSecret+`"},"extra":1}`)
	invalidParams(t, err)
	noAuthSecret(t, "the error", err.Error())
	list := conforming[protocol.ListAuthRecordsResult](t, f, protocol.MethodAuthList, `{}`)
	is.Equal(list.Total, 0) // nothing was saved
}

func TestSaveAuthParamsFormatWithoutValues(t *testing.T) {
	p := protocol.SaveAuthParams{AuthRef: "a", Scheme: "bearer", Payload: protocol.Object{"token": authSecret}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		noAuthSecret(t, verb, fmt.Sprintf(verb, p))
	}
}
