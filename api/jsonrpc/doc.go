// Package jsonrpc owns the JSON-RPC 2.0 wire format: envelopes, ids, error codes and frame decoding, independent of transport.
//
// A transport reads one frame (a WebSocket message or an HTTP body), hands it to [DecodeFrame],
// answers each call in [Frame.Requests], adds the ready-made responses in [Frame.Rejected],
// and writes whatever [EncodeReply] returns (nothing at all when every entry was a notification).
//
// The package never looks at what a method means: routing, parameter checking and
// handlers live elsewhere. It must not import any transport or application package.
package jsonrpc
