// Package rpc owns the shape of the method table that every face of the
// API serves: a Method is the scope a caller needs and the Handler that
// answers, and a request's Notifier is how a handler pushes notifications
// back on the caller's connection. It knows no method by name and no
// framing: the edge frames requests and looks methods up, the handler
// packages fill the table.
package rpc
