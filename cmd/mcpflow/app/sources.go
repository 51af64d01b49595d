package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// authDigest digests the auth record each connection binds (the one
// credentials.Ref names), so that the supervisor gives a connection a
// fresh session when its record changed. It reads every record at once.
// The digests never leave the process and are never logged.
func authDigest(records store.AuthRecords) supervisor.AuthHash {
	return func(ctx context.Context, conns []config.Connection) map[string]string {
		out := make(map[string]string, len(conns))
		all, err := records.ListAuth(ctx)
		if err != nil {
			slog.Warn("auth records unreadable for the session fingerprints", "err", err)
			for _, c := range conns {
				out[c.ID] = "unreadable"
			}
			return out
		}
		byID := make(map[string]store.AuthRecord, len(all))
		for _, rec := range all {
			byID[rec.ID] = rec
		}
		for _, c := range conns {
			ref, _ := credentials.Ref(c)
			if rec, ok := byID[ref]; ok {
				out[c.ID] = digest(credentials.Identity(rec)) // a refresh's rotation replaces no session
			}
		}
		return out
	}
}

// digest is the SHA-256 of rec's JSON.
func digest(rec store.AuthRecord) string {
	data, err := json.Marshal(rec)
	if err != nil {
		return "unreadable"
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
