package mcpface

import (
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/secrets"
)

func TestARequestStateOpensOnlyAsIssued(t *testing.T) {
	is := is.New(t)
	keys, err := secrets.Ephemeral()
	is.NoErr(err)
	s := stateSigner{sealer: keys}
	now := time.Unix(1_000_000, 0)
	signed, err := s.sign(requestState{Principal: "ci", RunID: "run_1", Interrupt: "interrupt:ask", Cursor: 4, Expires: now.Add(time.Hour).Unix()})
	is.NoErr(err)

	st, err := s.open(signed, "ci", now)
	is.NoErr(err)
	is.Equal(st.RunID, "run_1")
	is.Equal(st.Cursor, int64(4))

	_, err = s.open(signed, "someone-else", now)
	is.True(errors.Is(err, errState)) // bound to its principal
	_, err = s.open(signed, "ci", now.Add(2*time.Hour))
	is.True(errors.Is(err, errState)) // expired
	altered := []byte(signed)
	altered[len(altered)-3] ^= 1
	_, err = s.open(string(altered), "ci", now)
	is.True(errors.Is(err, errState)) // altered
	other, err := secrets.Ephemeral()
	is.NoErr(err)
	_, err = stateSigner{sealer: other}.open(signed, "ci", now)
	is.True(errors.Is(err, errState)) // sealed under another key
	_, err = s.open("forged", "ci", now)
	is.True(errors.Is(err, errState))
	record, err := keys.Seal([]byte("auth record"), []byte(`{"p":"ci","r":"run_1","e":9999999999}`))
	is.NoErr(err)
	_, err = s.open(record, "ci", now)
	is.True(errors.Is(err, errState)) // what was sealed for another use is no state
}
