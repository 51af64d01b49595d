package cli

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sync"
)

// callbackResult is what the login's redirect brought: a code, or why
// there is none.
type callbackResult struct {
	code string
	err  error
}

// callback serves the login's loopback redirect: the first request to
// /callback whose state is the login's ends the wait; one with another
// state is refused and waited past (it is not the login's own).
type callback struct {
	state, issuer string
	once          sync.Once
	done          chan callbackResult // gets one result
}

func newCallback(state, issuer string) *callback {
	return &callback{state: state, issuer: issuer, done: make(chan callbackResult, 1)}
}

// oauthCode is an OAuth error code safe to quote (RFC 6749 §4.1.2.1).
var oauthCode = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

func (cb *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if q.Get("state") != cb.state {
		http.Error(w, "this is not the redirect of the login in progress (state differs)", http.StatusBadRequest)
		return
	}
	var res callbackResult
	switch {
	case q.Get("error") != "":
		code := "an error"
		if oauthCode.MatchString(q.Get("error")) {
			code = q.Get("error")
		}
		res.err = fmt.Errorf("the authorization server refused the login: %s", code)
	case q.Get("iss") != "" && q.Get("iss") != cb.issuer:
		res.err = errors.New("the redirect names another issuer than the source's authorization server (RFC 9207): refused")
	case q.Get("code") == "":
		res.err = errors.New("the redirect brought no code")
	default:
		res.code = q.Get("code")
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if res.err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "mcpflow: login failed: %v\n", res.err)
	} else {
		fmt.Fprintln(w, "mcpflow: login received; you may close this window.")
	}
	cb.once.Do(func() { cb.done <- res })
}
