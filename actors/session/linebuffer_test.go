package session

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/matryer/is"
)

func TestALineBufferHandsOutLinesLongerThanItsOwnBufferWhole(t *testing.T) {
	is := is.New(t)
	long := strings.Repeat("y", 5000) + "\n"
	// One byte a read, as the slowest pipe gives them.
	b := newLineBuffer(iotest.OneByteReader(strings.NewReader("a\n"+long+"b\n")), 16)
	line, err := b.ReadSlice()
	is.NoErr(err)
	is.Equal(string(line), "a\n")
	line, err = b.ReadSlice()
	is.NoErr(err)
	is.Equal(string(line), long) // read on in a borrowed buffer
	line, err = b.ReadSlice()
	is.NoErr(err)
	is.Equal(string(line), "b\n")
	line, err = b.ReadSlice()
	is.Equal(err, io.EOF)
	is.Equal(len(line), 0)
	is.True(b.large == nil) // the borrowed buffer is back once nothing is left in it
}

func TestALineBufferHandsOutALineLongerThanTheLargeBufferInParts(t *testing.T) {
	is := is.New(t)
	long := strings.Repeat("z", largeLine+100)
	b := newLineBuffer(strings.NewReader(long+"\nrest"), 512)
	var got []byte
	parts := 0
	for {
		line, err := b.ReadSlice()
		got = append(got, line...)
		parts++
		if !errors.Is(err, bufio.ErrBufferFull) {
			is.NoErr(err)
			break
		}
	}
	is.Equal(parts, 2) // a full large buffer, then the rest of the line
	is.Equal(string(got), long+"\n")
	line, err := b.ReadSlice()
	is.Equal(err, io.EOF) // what comes before the end, with the end
	is.Equal(string(line), "rest")
}

func TestAnIdleMessageReaderHoldsOnlyItsSmallBuffer(t *testing.T) {
	is := is.New(t)
	src, w := io.Pipe()
	defer w.Close()
	r := newMessageReader(src, 1<<20, true, false, slog.Default(), nil)
	event, next := "data: "+strings.Repeat("x", 3000)+"\n\n", "data: {}\n\n"
	for _, e := range []string{event, next} { // one after the other
		go func() { _, _ = io.WriteString(w, e) }()
		got := make([]byte, len(e))
		_, err := io.ReadFull(r, got)
		is.NoErr(err)
		is.Equal(string(got), e)
	}
	is.Equal(cap(r.in.buf), idleEventBuffer) // once a long message is read, the large buffer is given back...
	is.True(r.in.large == nil)
	is.True(cap(r.msg) <= keptBuffer) // ...and the message's is bounded
}

func TestAnEventWhoseLineEndsAtTheEndOfAPartIsNotCutThere(t *testing.T) {
	is := is.New(t)
	// The data line fills the large buffer exactly: its '\n' comes alone,
	// in a part of its own, and is not the event's blank line.
	data := strings.Repeat("d", largeLine-len("data: "))
	stream := "data: " + data + "\ndata: more\n\n"
	r := newMessageReader(io.NopCloser(strings.NewReader(stream)), 1<<20, true, false, slog.Default(), nil)
	out, err := io.ReadAll(r)
	is.NoErr(err)
	is.Equal(string(out), stream) // one event, as it came
	is.Equal(string(eventData(out)), data+"\nmore")
}
