package config_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestSupervisionReadsTheStartAndListenSettings(t *testing.T) {
	is := is.New(t)
	var s config.Supervision
	is.NoErr(json.Unmarshal([]byte(`{"max_concurrent_refreshes": 6, "warm_up_ms": 0, "listen": false}`), &s))
	is.NoErr(s.Validate())
	is.Equal(s.MaxConcurrentRefreshes, 6)
	is.True(s.WarmUpMS != nil && *s.WarmUpMS == 0) // 0 is said, not absent: serve at once
	is.True(s.Listen != nil && !*s.Listen)
	var absent config.Supervision
	is.NoErr(json.Unmarshal([]byte(`{}`), &absent))
	is.True(absent.WarmUpMS == nil && absent.Listen == nil) // absent keeps the defaults
}

func TestSupervisionRefusesNegativeStartSettings(t *testing.T) {
	is := is.New(t)
	negative := -1
	err := (&config.Supervision{MaxConcurrentRefreshes: -2, WarmUpMS: &negative}).Validate()
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "max_concurrent_refreshes must not be negative"))
	is.True(strings.Contains(err.Error(), "warm_up_ms must not be negative"))
}

func TestSupervisionReadsTheProvedAfterTime(t *testing.T) {
	is := is.New(t)
	var s config.Supervision
	is.NoErr(json.Unmarshal([]byte(`{"proved_after_ms": 5000, "stable_period_ms": 60000}`), &s))
	is.NoErr(s.Validate())
	is.Equal(s.ProvedAfterMS, 5000)
	is.Equal(s.StablePeriodMS, 60000) // the former name is still read
	err := (&config.Supervision{ProvedAfterMS: -1}).Validate()
	is.True(err != nil && strings.Contains(err.Error(), "proved_after_ms must not be negative"))
}
