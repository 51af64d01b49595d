package session

import (
	"log/slog"
	"time"
)

// loginHoster is an error that says the source needs an OAuth login, and
// at which authorization host (credentials.LoginError).
type loginHoster interface {
	error
	LoginHost() string
}

// loginError is what calls to a connection that needs a login fail with:
// ErrNeedsLogin (and so ErrUnavailable), with the text that says where
// and how to log in.
type loginError struct{ msg string }

func (e loginError) Error() string { return e.msg }

func (e loginError) Is(target error) bool { return target == ErrNeedsLogin || target == ErrUnavailable }

// awaitLogin puts the connection in state needs_login for cause: calls
// fail fast with it, and no reconnect is tried (only a login helps); the
// login saves the source's tokens and replaces this actor (a registry
// apply sees its auth record changed).
func (a *Actor) awaitLogin(cause error, host string) {
	a.noteError(cause)
	a.loginHost = host
	a.loginNeeded = loginError{msg: a.lastErr} // it names the connection
	if a.retryTimer != nil {
		a.retryTimer.Stop()
	}
	a.nextTry = time.Time{}
	slog.Warn("connection needs a login", "connection", a.conn.ID, "authorization_host", host, "err", a.lastErr)
	a.setState(StateNeedsLogin)
	a.failListings(a.loginNeeded)
	a.failQueue(a.loginNeeded)
}
