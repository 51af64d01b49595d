package mcpface

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestARequestStateOpensOnlyAsIssued(t *testing.T) {
	is := is.New(t)
	s := stateSigner{key: []byte(strings.Repeat("k", 32))}
	now := time.Unix(1_000_000, 0)
	signed := s.sign(requestState{Principal: "ci", RunID: "run_1", Interrupt: "interrupt:ask", Cursor: 4, Expires: now.Add(time.Hour).Unix()})

	st, err := s.open(signed, "ci", now)
	is.NoErr(err)
	is.Equal(st.RunID, "run_1")
	is.Equal(st.Cursor, int64(4))

	_, err = s.open(signed, "someone-else", now)
	is.True(errors.Is(err, errState)) // bound to its principal
	_, err = s.open(signed, "ci", now.Add(2*time.Hour))
	is.True(errors.Is(err, errState)) // expired
	payload, mac, _ := strings.Cut(signed, ".")
	_, err = s.open(payload[:len(payload)-2]+"xx."+mac, "ci", now)
	is.True(errors.Is(err, errState)) // altered
	other := stateSigner{key: []byte(strings.Repeat("o", 32))}
	_, err = other.open(signed, "ci", now)
	is.True(errors.Is(err, errState)) // signed with another key
	_, err = s.open("forged", "ci", now)
	is.True(errors.Is(err, errState))
}
