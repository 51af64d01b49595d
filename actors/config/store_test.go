package config_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestStoreSyncIsFullOrNormal(t *testing.T) {
	for _, sync := range []string{"", config.StoreSyncFull, config.StoreSyncNormal} {
		is := is.New(t)
		f, err := config.Parse([]byte(`{"version":1,"server":{"store":{"sync":"` + sync + `"}}}`))
		is.NoErr(err) // a known level, or none
		is.Equal(f.Server.Store.Sync, sync)
	}
}

func TestParseRejectsAnUnknownStoreSync(t *testing.T) {
	is := is.New(t)
	for _, sync := range []string{"off", "FULL", "extra"} {
		_, err := config.Parse([]byte(`{"version":1,"server":{"store":{"sync":"` + sync + `"}}}`))
		is.True(err != nil) // only full and normal
		is.Equal(err.Error(), `invalid config: store: sync must be "full" or "normal", got "`+sync+`"`)
	}
}
