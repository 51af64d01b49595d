package credentials

import (
	"cmp"
	"slices"
	"strings"
)

// Redacted replaces a secret value wherever one would be shown.
const Redacted = "[redacted]"

// Redactor replaces known secret values in text.
type Redactor struct {
	r *strings.Replacer
}

// NewRedactor redacts every non-empty value of secrets (longest first, so
// a secret that contains another is redacted whole).
func NewRedactor(secrets ...string) *Redactor {
	vals := slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return s == "" })
	if len(vals) == 0 {
		return &Redactor{}
	}
	slices.SortFunc(vals, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	vals = slices.Compact(vals)
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, Redacted)
	}
	return &Redactor{r: strings.NewReplacer(pairs...)}
}

// Redact returns s with every secret replaced by Redacted.
func (r *Redactor) Redact(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// redactedError is an error whose message held a secret. It unwraps to
// its cause, so errors.Is still sees a cancelled context or a deadline.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }

// redactErr returns err, or an error of the same chain whose message has
// every secret redacted if it showed one.
func redactErr(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := NewRedactor(secrets...).Redact(msg)
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, cause: err}
}
