package suggest_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/suggest"
)

func TestNearestSuggestsAnExtensionOrATypo(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"visit", []string{"other.default", "visit.default", "visit.default.long"}, "visit.default"},
		{"comand", []string{"args", "command", "env"}, "command"},
		{"input.ur", []string{"input.url", "input.user_agent"}, "input.url"},
		{"Demo.default", []string{"demo.default"}, "demo.default"},
		{"caunter", []string{"counter", "echo"}, "counter"},
		{"tarnsport", []string{"transport"}, "transport"},
	} {
		got, ok := suggest.Nearest(c.name, c.candidates)
		is.True(ok)           // a near candidate is found
		is.Equal(got, c.want) // the nearest
	}
	_, ok := suggest.Nearest("zzz", []string{"counter", "echo"})
	is.True(!ok) // nothing near: no suggestion
	is.Equal(suggest.DidYouMean("visit", []string{"visit.default"}), `; did you mean "visit.default"?`)
	is.Equal(suggest.DidYouMean("x", nil), "")
}
