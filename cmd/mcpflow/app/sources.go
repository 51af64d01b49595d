package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// authDigest digests the auth record a connection binds (the one
// credentials.Ref names), so that the supervisor gives a connection a
// fresh session when its record changed. The digest never leaves the
// process and is never logged.
func authDigest(records store.AuthRecords) supervisor.AuthHash {
	return func(ctx context.Context, conn config.Connection) string {
		ref, _ := credentials.Ref(conn)
		rec, err := records.GetAuth(ctx, ref)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return ""
		case err != nil:
			slog.Warn("auth record unreadable for the session fingerprint", "connection", conn.ID, "auth_ref", ref, "err", err)
			return "unreadable"
		}
		data, err := json.Marshal(rec)
		if err != nil {
			return "unreadable"
		}
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:])
	}
}
