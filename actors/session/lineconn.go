package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// lineConn is the mcp.Connection of a session over newline-delimited
// JSON-RPC (a stdio server's pipes), which the session reads itself:
// go-sdk's own (IOTransport) would read the lines mcpflow's
// messageReader already bounded and cut into a decoder of its own, decode
// each message twice (as a batch first), and hand it over from a
// goroutine of its own. Here go-sdk's reading goroutine reads the next
// line and decodes it once, where it is (decodeMessage); each progress
// or log notification goes to the notice hook before go-sdk gets it
// (noticeread.go). Writes encode each message and write it, with its
// newline, in one write.
//
// As go-sdk's, it takes a batch (a JSON array of messages, which MCP
// before 2025-06-18 allowed) one message at a time; it answers each
// request of one on its own line. As go-sdk's, it takes a message spread
// over several lines (which MCP's stdio transport does not allow), up to
// the bound in all.
type lineConn struct {
	lines   *messageReader
	notices *noticeHook
	queue   []jsonrpc.Message // the rest of a batch; Read is never concurrent
	// spread is a message begun on an earlier line and not whole yet;
	// nest follows its nesting.
	spread []byte
	nest   nesting

	writeMu sync.Mutex
	w       io.WriteCloser
	out     []byte // a write's buffer, kept between writes up to keptBuffer

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// newLineConn reads the messages of lines, handing the notifications to
// notices, and writes to w, which closing the connection closes.
func newLineConn(lines *messageReader, notices *noticeHook, w io.WriteCloser) *lineConn {
	return &lineConn{lines: lines, notices: notices, w: w}
}

// Read returns the next message, or the error that ended the stream
// (io.EOF once the connection is closed).
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	for {
		line, err := c.lines.message()
		if err != nil {
			if c.closed.Load() {
				return nil, io.EOF
			}
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 && len(c.spread) == 0 {
			continue // between messages, as a JSON decoder skips it
		}
		msg, err := c.whole(line)
		if err != nil {
			return nil, err
		}
		if msg == nil {
			continue // the message goes on on the next line
		}
		if msg[0] == '[' {
			return c.batch(msg)
		}
		m, err := decodeNested(msg) // whole checked its nesting
		if err != nil {
			return nil, err
		}
		c.notices.hand(m)
		return m, nil
	}
}

// whole returns the message line ends, nil while it goes on.
func (c *lineConn) whole(line []byte) ([]byte, error) {
	if len(c.spread) == 0 {
		c.nest = nesting{}
	}
	if err := c.nest.feed(line); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if len(c.spread) == 0 && !c.nest.open() {
		return line, nil // the usual case: a message on one line
	}
	if int64(len(c.spread)+len(line)) > c.lines.limit {
		return nil, fmt.Errorf("a message over several lines of more than %d bytes (max_result_bytes)", c.lines.limit)
	}
	c.spread = append(append(c.spread, line...), '\n')
	if c.nest.open() {
		return nil, nil
	}
	msg := c.spread
	c.spread = c.spread[:0]
	if cap(c.spread) > keptBuffer {
		c.spread = nil
	}
	return msg, nil
}

// batch returns the first message of a batch, and queues the others.
func (c *lineConn) batch(line []byte) (jsonrpc.Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, err
		}
		c.notices.hand(m)
		msgs = append(msgs, m)
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// Write writes msg and its newline at once.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.out = append(append(c.out[:0], data...), '\n')
	_, err = c.w.Write(c.out)
	if cap(c.out) > keptBuffer {
		c.out = nil
	}
	return err
}

// Close closes the writer, once; a Read waiting ends when the reader
// does (the stdio transport closes both).
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.closeErr = c.w.Close()
	})
	return c.closeErr
}

// SessionID is "": a stream has no session id.
func (c *lineConn) SessionID() string { return "" }
