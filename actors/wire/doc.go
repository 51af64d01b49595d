// Package wire owns how mcpflow's actor messages cross from one node to
// another. On one node a message is a plain Go struct that hollywood hands
// over as it is, never encoded. Sent to an actor on another node, it
// travels as one protobuf Envelope (the only kind of message hollywood's
// remote layer carries), holding the target actor, the message's kind and
// its JSON encoding: Remote wraps hollywood's remote to do so, and a
// gateway actor on the receiving node decodes the envelope and delivers
// the message itself to its target, so that no actor ever sees an
// envelope. Kinds lists every message type that may cross, and the few
// that must not (node-local ones, which Encode refuses).
package wire

// The generator is protoc-gen-go of the google.golang.org/protobuf version
// in go.mod (built into the build cache), run by protoc (Debian's
// protobuf-compiler, 3.21.12 generated the committed code).
//go:generate sh -c "go build -o \"$(go env GOCACHE)/mcpflow-protoc-gen-go\" google.golang.org/protobuf/cmd/protoc-gen-go && protoc --plugin=protoc-gen-go=\"$(go env GOCACHE)/mcpflow-protoc-gen-go\" --go_out=. --go_opt=paths=source_relative wire.proto"
