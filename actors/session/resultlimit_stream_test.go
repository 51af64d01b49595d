package session

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestAnEventOverTheLimitIsReplacedByTheAnswerToItsCallAndTheStreamGoesOn(t *testing.T) {
	is := is.New(t)
	big := strings.Repeat("x", 300)
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + big + "\"}}\n\n" +
		// An answer over the limit, its data over two lines, its id last.
		"id: 4\r\ndata: {\"jsonrpc\":\"2.0\",\"result\":{\"text\":\"" + big + "\"},\r\ndata: \"id\":\"call-9\"}\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{}}\n\n"
	r := newMessageReader(io.NopCloser(strings.NewReader(stream)), 200, true, false, slog.Default(), nil)
	out, err := io.ReadAll(r)
	is.NoErr(err)
	is.Equal(string(out), "data: "+string(tooLargeAnswer([]byte(`"call-9"`), 200))+"\n\n"+ // the notification is dropped
		"data: {\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{}}\n\n") // the next event comes as it came
}

func TestTheStreamOfAPostEndsAfterTheAnswerMadeForItsCall(t *testing.T) {
	is := is.New(t)
	stream := "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":\"" + strings.Repeat("x", 300) + "\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"never/read\"}\n\n"
	r := newMessageReader(io.NopCloser(strings.NewReader(stream)), 200, true, true, slog.Default(), nil)
	out, err := io.ReadAll(r)
	is.NoErr(err)
	is.Equal(string(out), "data: "+string(tooLargeAnswer([]byte("3"), 200))+"\n\n")
}

func TestTheIDOfAMessageIsFoundWhereverItIs(t *testing.T) {
	for _, tc := range []struct {
		msg, id string // id "" when the message answers no call
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"id":2}}`, "1"},
		{`{"result":{"id":2,"s":"\"id\":3"},"jsonrpc":"2.0","id":"a\"b"}`, `"a\"b"`},
		{`{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}`, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, ""},
		{`{"jsonrpc":"2.0","idx":7,"result":{}}`, ""},
	} {
		is := is.New(t)
		var s idScan
		for i := range len(tc.msg) { // a byte at a time, as pieces may come
			s.feed([]byte{tc.msg[i]})
		}
		id, ok := s.answerID()
		is.Equal(ok, tc.id != "") // an answer, or none
		is.Equal(string(id), tc.id)
	}
}
