package service

import (
	"errors"

	"github.com/mcpflow/mcpflow/actors/records"
)

// recordsErr maps a failure of the records rules (artifacts, deployments): a malformed request
// is invalid params, another refusal a ValueError, a store failure what
// storeErr makes of it; anything else passes as it is, and nil is nil.
func recordsErr(err error) error {
	var refusal *records.Error
	var stored *records.StoreError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &refusal) && refusal.Malformed:
		return invalidParams("invalid params: %s", refusal.Message)
	case errors.As(err, &refusal):
		return invalid("%s", refusal.Message)
	case errors.As(err, &stored):
		return storeErr(stored.Err, stored.What)
	default:
		return err
	}
}
