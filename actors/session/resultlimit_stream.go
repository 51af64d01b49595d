package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
)

// messageReader hands out a stream of JSON-RPC messages, each whole once
// it has come, and only when it is at most limit bytes as it came: the
// lines of a stdio server's stdout, or the events of an event stream
// (sse: each ends at a blank line, its lines counted with their field
// names). A message of more than limit bytes is read to its end without
// being kept, scanned for the id of the call it answers; in its place
// comes tooLargeAnswer to that call, or nothing when it answers none.
// With endAfterAnswer (the event stream a POST opened, which ends with
// its call's answer) the stream ends after that answer, unread further.
type messageReader struct {
	src            io.Closer
	in             *lineBuffer
	limit          int64
	sse            bool
	endAfterAnswer bool
	log            *slog.Logger
	// notices gets each message read whole, in order, before the next
	// one is read (noticeread.go); nil: nobody.
	notices *noticeHook

	msg []byte // the message being read, then handed out
	off int    // how much of msg was handed out
	err error  // the source's error, handed out after the last message
}

// Buffers a messageReader holds while it waits for a message (see
// lineBuffer): an event stream's body comes through the HTTP
// connection's own buffer, which a small one only copies from; a
// pipe's reads cost a system call each.
const (
	idleEventBuffer = 512
	idlePipeBuffer  = 4 << 10
)

// newMessageReader reads the messages of src.
func newMessageReader(src io.ReadCloser, limit int64, sse, endAfterAnswer bool, log *slog.Logger, notices *noticeHook) *messageReader {
	idle := idlePipeBuffer
	if sse {
		idle = idleEventBuffer
	}
	return &messageReader{src: src, in: newLineBuffer(src, idle), limit: limit, sse: sse, endAfterAnswer: endAfterAnswer, log: log, notices: notices}
}

func (m *messageReader) Read(p []byte) (int, error) {
	for m.off >= len(m.msg) {
		if m.err != nil {
			return 0, m.err
		}
		m.next()
	}
	n := copy(p, m.msg[m.off:])
	m.off += n
	return n, nil
}

func (m *messageReader) Close() error { return m.src.Close() }

// message returns the next message whole (what Read would hand out of
// it), valid until the next call, or the error that ended the stream.
// Not to be mixed with Read.
func (m *messageReader) message() ([]byte, error) {
	for {
		if m.off < len(m.msg) {
			msg := m.msg[m.off:]
			m.off = len(m.msg)
			return msg, nil
		}
		if m.err != nil {
			return nil, m.err
		}
		m.next()
	}
}

// keptBuffer is the largest buffer a messageReader keeps between
// messages.
const keptBuffer = 64 << 10

// next reads the next message into m.msg, or the error that ends the
// stream into m.err.
func (m *messageReader) next() {
	if cap(m.msg) > keptBuffer {
		m.msg = nil // a large message's buffer is not kept for the stream's life
	}
	m.msg, m.off = m.msg[:0], 0
	inLine := false // the last line read is not whole yet
	for {
		line, err := m.in.ReadSlice()
		if int64(len(m.msg)+len(line)) > m.limit {
			m.oversize(line, err, inLine)
			return
		}
		m.msg = append(m.msg, line...)
		began := !inLine // line is a whole line, not the end of a long one
		inLine = errors.Is(err, bufio.ErrBufferFull)
		switch {
		case inLine:
			continue // the rest of a long line
		case err != nil:
			m.err = err
			return
		case !m.sse:
			m.notices.observe(m.msg) // a line
			return
		case began && len(bytes.TrimRight(line, "\r\n")) == 0:
			m.notices.observe(eventData(m.msg)) // an event's blank line
			return
		}
	}
}

// oversize reads the rest of a message that passed the limit (line,
// read with err, is the part that did; inLine, it continues a line begun
// before it), scanning it, and puts the answer that replaces it into
// m.msg.
func (m *messageReader) oversize(line []byte, err error, inLine bool) {
	var scan interface {
		feed([]byte)
		answerID() (json.RawMessage, bool)
	} = &idScan{}
	if m.sse {
		scan = &sseData{}
	}
	scan.feed(m.msg)
	scan.feed(line)
	lineLen := len(bytes.TrimRight(line, "\r\n"))
	if inLine {
		lineLen++ // not a blank line, whatever this part holds
	}
	// The message goes on to the end of a line (stdio), or of an event
	// (to a blank line).
	for errors.Is(err, bufio.ErrBufferFull) || m.sse && err == nil && lineLen > 0 {
		if err == nil {
			lineLen = 0 // a new line starts
		}
		line, err = m.in.ReadSlice()
		scan.feed(line)
		lineLen += len(bytes.TrimRight(line, "\r\n"))
	}
	m.msg = m.msg[:0]
	if err != nil {
		m.err = err
	}
	id, ok := scan.answerID()
	if !ok {
		m.log.Warn("dropped an upstream message of more than max_result_bytes that answers no call", "limit", m.limit)
		return
	}
	if m.sse {
		m.msg = append(m.msg, "data: "...)
	}
	m.msg = append(m.msg, tooLargeAnswer(id, m.limit)...)
	m.msg = append(m.msg, '\n')
	if m.sse {
		m.msg = append(m.msg, '\n')
	}
	if m.endAfterAnswer {
		_ = m.src.Close() // read no further
		m.err = io.EOF
	}
}

// sseData feeds the data fields of an event's lines, fed to it as they
// come, to an idScan, as an event stream's reader joins them: each data
// line's value after "data:" and one space, a newline between two.
type sseData struct {
	scan  idScan
	head  []byte // the start of the current line, until its field is known
	field int    // 0: not known yet; 1: data; 2: another field
	lead  bool   // the space after "data:" may follow
}

func (d *sseData) feed(p []byte) {
	for len(p) > 0 {
		if d.field == 0 {
			c := p[0]
			p = p[1:]
			switch {
			case c == '\n':
				d.head = d.head[:0]
			case c == ':':
				d.field, d.lead = 2, false
				if string(d.head) == "data" {
					d.field, d.lead = 1, true
				}
				d.head = d.head[:0]
			case len(d.head) < len("data"):
				d.head = append(d.head, c)
			default:
				d.field, d.head = 2, d.head[:0]
			}
			continue
		}
		seg, rest, ended := bytes.Cut(p, []byte{'\n'})
		if d.field == 1 {
			if d.lead && len(seg) > 0 {
				seg, d.lead = bytes.TrimPrefix(seg, []byte{' '}), false
			}
			d.scan.feed(seg)
			if ended {
				d.scan.feed([]byte{'\n'})
			}
		}
		if !ended {
			return
		}
		d.field, p = 0, rest
	}
}

// answerID is the id of the call the event's data answers.
func (d *sseData) answerID() (json.RawMessage, bool) { return d.scan.answerID() }

// lineBuffer is a bufio.Reader's ReadSlice for a messageReader that is
// idle most of its life (a standing event stream, a quiet server): while
// it waits for a message it holds only a small buffer of its own; a line
// longer than that is read on in a large buffer, borrowed from a pool for
// as long as unread bytes are in it. A line longer than the large buffer
// comes in parts, the first ones with bufio.ErrBufferFull, as from
// bufio.Reader.ReadSlice.
type lineBuffer struct {
	src   io.Reader
	small []byte  // its own buffer
	large *[]byte // the borrowed one, nil when none is
	buf   []byte  // small, or *large
	r, w  int     // buf[r:w] is read from src, not handed out yet
	err   error   // src's error, handed out once buf[r:w] is
}

// largeLine is the size of the borrowed buffer, the longest part of a
// line handed out at once.
const largeLine = 64 << 10

// largeLines are the buffers lineBuffers borrow.
var largeLines = sync.Pool{New: func() any { b := make([]byte, largeLine); return &b }}

// newLineBuffer reads src with a buffer of its own of small bytes (less
// than largeLine).
func newLineBuffer(src io.Reader, small int) *lineBuffer {
	b := make([]byte, min(small, largeLine/2))
	return &lineBuffer{src: src, small: b, buf: b}
}

// ReadSlice returns the next line, with its '\n', which is valid until
// the next call; or a part of a line (bufio.ErrBufferFull), or what was
// left before src's error (with the error).
func (b *lineBuffer) ReadSlice() ([]byte, error) {
	for {
		if i := bytes.IndexByte(b.buf[b.r:b.w], '\n'); i >= 0 {
			line := b.buf[b.r : b.r+i+1]
			b.r += i + 1
			return line, nil
		}
		if b.err != nil {
			line, err := b.buf[b.r:b.w], b.err
			b.r, b.err = b.w, nil
			return line, err
		}
		if b.r == 0 && b.w == len(b.buf) {
			if b.large != nil {
				b.r = b.w
				return b.buf, bufio.ErrBufferFull
			}
			b.borrow()
		}
		b.fill()
	}
}

// fill reads once from src into the buffer's free end, first moving
// what is unread to its start; the buffer is the small one again when
// nothing is unread.
func (b *lineBuffer) fill() {
	if b.r == b.w {
		b.giveBack()
		b.r, b.w = 0, 0
	} else if b.r > 0 {
		b.w = copy(b.buf, b.buf[b.r:b.w])
		b.r = 0
	}
	for range 100 { // as bufio: a reader that reads nothing, many times, is broken
		n, err := b.src.Read(b.buf[b.w:])
		b.w += n
		if err != nil {
			b.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
}

// borrow moves the unread bytes, a whole small buffer, into a large one.
func (b *lineBuffer) borrow() {
	b.large = largeLines.Get().(*[]byte)
	b.w = copy(*b.large, b.buf[b.r:b.w])
	b.r, b.buf = 0, *b.large
}

// giveBack returns a borrowed buffer, holding nothing unread, to the pool.
func (b *lineBuffer) giveBack() {
	if b.large != nil {
		largeLines.Put(b.large)
		b.large, b.buf = nil, b.small
	}
}
