package hooks

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestEachHookHasItsOwnBucket(t *testing.T) {
	is := is.New(t)
	l := newLimiters(10, 20)
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	for range 20 {
		is.True(l.allow("a", now)) // the burst
	}
	is.True(!l.allow("a", now))                           // past it
	is.True(l.allow("b", now))                            // another hook is not held back
	is.True(l.allow("a", now.Add(100*time.Millisecond)))  // a token a tenth of a second
	is.True(!l.allow("a", now.Add(100*time.Millisecond))) // and one only
	for range 20 {
		is.True(l.allow("a", now.Add(10*time.Second))) // refilled to the burst, no more
	}
	is.True(!l.allow("a", now.Add(10*time.Second)))
}

// TestAFloodNotesOneRefusalPerToken: of the refusals past the rate, only
// the first since the bucket last gave a token is noted (logged).
func TestAFloodNotesOneRefusalPerToken(t *testing.T) {
	is := is.New(t)
	l := newLimiters(10, 1)
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	is.True(l.allow("a", now))
	is.True(!l.allow("a", now))
	is.True(l.noteRefusal("a"))  // the first refusal
	is.True(!l.noteRefusal("a")) // not the next ones
	is.True(!l.noteRefusal("b")) // a hook without a bucket was never refused
	is.True(l.allow("a", now.Add(100*time.Millisecond)))
	is.True(!l.allow("a", now.Add(100*time.Millisecond)))
	is.True(l.noteRefusal("a")) // after a token given, again the first
}

func TestIdleBucketsAreForgottenPastTheBound(t *testing.T) {
	is := is.New(t)
	l := newLimiters(10, 20)
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	for i := range maxLimiters {
		l.allow(fmt.Sprint("hook-", i), now)
	}
	is.Equal(len(l.buckets), maxLimiters)
	l.allow("one-more", now.Add(time.Minute)) // the others have refilled: forgotten
	is.Equal(len(l.buckets), 1)
}
