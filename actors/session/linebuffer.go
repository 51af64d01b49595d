package session

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

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
