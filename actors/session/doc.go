// Package session owns the session actor: one long-lived go-sdk
// ClientSession per MCP source connection, opened on first use and shared by
// every run that calls the connection. The actor never blocks its inbox on
// MCP I/O: calls run in goroutines with deadlines and their results come
// back as messages carrying the caller's correlation id. Every answer of
// an upstream is bounded while its transport reads it, before go-sdk
// holds it (max_result_bytes; see resultlimit.go): one over the bound
// fails its call with ErrResultTooLarge, and the session goes on.
package session
