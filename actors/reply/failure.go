package reply

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Failure is an error as an answer carries it: its message, and the code
// of the sentinel error it wraps, if any is registered (Register). Err
// turns it back into an error that wraps the same sentinel, so that a
// caller's errors.Is holds on either side of a process boundary. A nil
// *Failure is no failure.
type Failure struct {
	// Code names the most specific registered sentinel the error wrapped
	// ("" for none).
	Code string `json:"code,omitempty"`
	// Message is the error's text. It never holds a secret: errors that
	// may (an upstream's) are redacted where they are made.
	Message string `json:"message"`
}

// codes are the registered sentinels, by code, in registration order.
var codes = struct {
	sync.RWMutex
	byCode map[string]error
	order  []string
}{byCode: map[string]error{}}

// Register gives sentinel its code, and returns it, so that a package can
// declare its sentinels as
//
//	var ErrLost = reply.Register("lost", errors.New("lost"))
//
// Registering one code twice panics: codes are part of the messages.
func Register(code string, sentinel error) error {
	codes.Lock()
	defer codes.Unlock()
	if code == "" || sentinel == nil {
		panic("reply: Register needs a code and a sentinel")
	}
	if _, taken := codes.byCode[code]; taken {
		panic(fmt.Sprintf("reply: failure code %q registered twice", code))
	}
	codes.byCode[code] = sentinel
	codes.order = append(codes.order, code)
	return sentinel
}

// Codes of the context's errors.
const (
	CodeDeadlineExceeded = "deadline_exceeded"
	CodeCanceled         = "canceled"
)

func init() {
	Register(CodeDeadlineExceeded, context.DeadlineExceeded)
	Register(CodeCanceled, context.Canceled)
}

// Fail turns err into a Failure; nil for nil. When err wraps several
// registered sentinels, the code is the most specific: that of a sentinel
// that wraps the others (a degraded connection is also unavailable), else
// the first registered.
func Fail(err error) *Failure {
	if err == nil {
		return nil
	}
	f := &Failure{Message: err.Error()}
	codes.RLock()
	defer codes.RUnlock()
	var best error
	for _, code := range codes.order {
		s := codes.byCode[code]
		if errors.Is(err, s) && (best == nil || (s != best && errors.Is(s, best))) {
			best, f.Code = s, code
		}
	}
	return f
}

// Err is the failure as an error: its message, wrapping the sentinel of
// its code (none for an unknown code); nil for a nil Failure.
func (f *Failure) Err() error {
	if f == nil {
		return nil
	}
	codes.RLock()
	sentinel := codes.byCode[f.Code]
	codes.RUnlock()
	return &failed{message: f.Message, sentinel: sentinel}
}

// failed is a Failure turned back into an error.
type failed struct {
	message  string
	sentinel error
}

func (e *failed) Error() string { return e.message }
func (e *failed) Unwrap() error { return e.sentinel }
