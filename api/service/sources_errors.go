package service

import (
	"errors"

	"github.com/mcpflow/mcpflow/actors/sources"
)

// sourcesErr maps a failure of the sources package: a malformed request
// is invalid params, an unknown entry a KeyError, a refusal a ValueError,
// and a failure of the store or the supervisor a RuntimeError.
func sourcesErr(err error) error {
	switch {
	case errors.Is(err, sources.ErrMalformed):
		return invalidParams("invalid params: %v", err)
	case errors.Is(err, sources.ErrUnknown):
		return notFound("%v", err)
	case errors.Is(err, sources.ErrRefused):
		return invalid("%v", err)
	default:
		return upstream("%v", err)
	}
}
