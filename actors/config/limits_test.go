package config

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestLimitsKeepTheirDefaultsUnlessSet(t *testing.T) {
	is := is.New(t)
	var none *Limits
	is.Equal(none.StepCeiling(), DefaultMaxSteps)
	is.Equal(none.ResultBytes(), int64(DefaultMaxResultBytes))
	set := &Limits{MaxSteps: 500, MaxResultBytes: 1 << 10}
	is.Equal(set.StepCeiling(), 500)
	is.Equal(set.ResultBytes(), int64(1<<10))
	is.NoErr(set.Validate())
}

func TestNegativeLimitsAreRefusedByName(t *testing.T) {
	is := is.New(t)
	err := (&Limits{MaxSteps: -1, MaxResultBytes: -1}).Validate()
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "max_steps"))
	is.True(strings.Contains(err.Error(), "max_result_bytes"))
}
