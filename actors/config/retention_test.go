package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestTheRetentionBlockParsesWithItsDefaultsAndRefusesNegativeTimes(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(`{"version":1,"server":{"sources":[]}}`))
	is.NoErr(err)
	ret := f.Server.Retention
	is.Equal(ret.Finished(), 30*24*time.Hour) // absent: 30 days
	is.Equal(ret.Tombstones(), 30*24*time.Hour)
	is.Equal(ret.Interval(), 10*time.Second)
	is.Equal(ret.IdempotencyWindow(), 24*time.Hour) // absent: a day

	f, err = config.Parse([]byte(`{"version":1,"server":{"sources":[],"retention":{"finished_seconds":2,"tombstone_seconds":60,"interval_ms":500,"idempotency_seconds":90}}}`))
	is.NoErr(err)
	ret = f.Server.Retention
	is.Equal(ret.IdempotencyWindow(), 90*time.Second)
	is.Equal(ret.Finished(), 2*time.Second)
	is.Equal(ret.Tombstones(), time.Minute)
	is.Equal(ret.Interval(), 500*time.Millisecond)

	f, err = config.Parse([]byte(`{"version":1,"server":{"sources":[],"retention":{"finished_seconds":0}}}`))
	is.NoErr(err)
	is.Equal(f.Server.Retention.Finished(), time.Duration(0)) // 0: for ever

	_, err = config.Parse([]byte(`{"version":1,"server":{"sources":[],"retention":{"finished_seconds":-1,"interval_ms":-5,"idempotency_seconds":0}}}`))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "retention: idempotency_seconds must be positive"))
	is.True(strings.Contains(err.Error(), "retention: finished_seconds must not be negative"))
	is.True(strings.Contains(err.Error(), "retention: interval_ms must not be negative"))

	_, err = config.Parse([]byte(`{"version":1,"server":{"sources":[],"retention":{"finished_days":5}}}`))
	is.True(err != nil) // unknown keys are errors
}
