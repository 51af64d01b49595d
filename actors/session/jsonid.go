package session

import (
	"bytes"
	"encoding/json"
)

// maxIDBytes bounds the id idScan keeps: a JSON-RPC id is a number or a
// short string, and a longer one is not taken for one.
const maxIDBytes = 256

// idScan finds, in the bytes of one JSON-RPC message fed to it piece by
// piece, its top-level "id" and whether it has a top-level "method",
// keeping nothing else: it reads a message too large to hold (the id of
// a tool's answer may come after its result, as the TypeScript SDK
// writes it) to learn which call it answers. It checks no syntax; bytes
// that are not a JSON object give no id.
type idScan struct {
	depth        int
	inString     bool
	escaped      bool
	expectKey    bool   // at depth 1, the next string is a key
	inKey        bool   // reading a depth-1 key
	key          []byte // the first bytes of the depth-1 key being read or last read
	keyLen       int    // its length
	capturing    bool   // reading the value of the top-level "id"
	id           []byte
	idDone, long bool
	method       bool
}

// feed scans the next bytes of the message.
func (s *idScan) feed(p []byte) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if s.inString {
			if !s.capturing && !s.inKey && !s.escaped {
				// The bulk of a large message is the text of a string:
				// skip to its next quote or backslash at once.
				next := stringStop(p[i:])
				if next < 0 {
					return
				}
				i += next
				c = p[i]
			}
			s.stringByte(c)
			continue
		}
		switch c {
		case '"':
			s.inString = true
			if s.depth == 1 && s.expectKey {
				s.inKey, s.expectKey, s.keyLen = true, false, 0
				if s.key == nil {
					s.key = make([]byte, 0, len("method"))
				}
				s.key = s.key[:0]
			} else {
				s.keep(c)
			}
		case '{', '[':
			s.keep(c)
			s.depth++
			if s.depth == 1 && c == '{' {
				s.expectKey = true
			}
		case '}', ']':
			if s.depth == 1 {
				s.endValue()
			} else {
				s.keep(c)
			}
			s.depth--
		case ':':
			if s.depth != 1 {
				s.keep(c)
				break
			}
			switch {
			case s.isKey("id") && !s.idDone:
				s.capturing, s.id, s.long = true, s.id[:0], false
			case s.isKey("method"):
				s.method = true
			}
		case ',':
			if s.depth == 1 {
				s.endValue()
				s.expectKey = true
			} else {
				s.keep(c)
			}
		case ' ', '\t', '\r', '\n':
		default:
			s.keep(c)
		}
	}
}

// stringStop is the index in p of the first quote or backslash, -1 when
// it has none.
func stringStop(p []byte) int {
	end := bytes.IndexByte(p, '"')
	if end < 0 {
		end = len(p)
	}
	if b := bytes.IndexByte(p[:end], '\\'); b >= 0 {
		return b
	}
	if end == len(p) {
		return -1
	}
	return end
}

// stringByte takes byte c of a string.
func (s *idScan) stringByte(c byte) {
	closing := !s.escaped && c == '"'
	switch {
	case s.escaped:
		s.escaped = false
	case c == '\\':
		s.escaped = true
	}
	s.keep(c) // an id's closing quote is the id's too
	if closing {
		s.inString, s.inKey = false, false
		return
	}
	if s.inKey {
		s.keyLen++
		if len(s.key) < cap(s.key) {
			s.key = append(s.key, c)
		}
	}
}

// isKey reports whether the last depth-1 key read is k.
func (s *idScan) isKey(k string) bool { return s.keyLen == len(k) && string(s.key) == k }

// keep adds c to the id being read, if one is.
func (s *idScan) keep(c byte) {
	if !s.capturing {
		return
	}
	if len(s.id) >= maxIDBytes {
		s.long = true
		return
	}
	s.id = append(s.id, c)
}

// endValue ends the value of a top-level member.
func (s *idScan) endValue() {
	if s.capturing {
		s.capturing, s.idDone = false, true
	}
}

// answerID is the id of the message when it answers a call: it has an
// id, which is not null, and no method (a request of the server's has
// both). ok is false otherwise.
func (s *idScan) answerID() (id json.RawMessage, ok bool) {
	if !s.idDone || s.long || s.method || len(s.id) == 0 || string(s.id) == "null" || !json.Valid(s.id) {
		return nil, false
	}
	return json.RawMessage(s.id), true
}

// requestID is the id of a request, scanned up to the end of its id.
func (s *idScan) requestID() (id json.RawMessage, ok bool) {
	if !s.idDone || s.long || len(s.id) == 0 || !json.Valid(s.id) {
		return nil, false
	}
	return json.RawMessage(s.id), true
}
