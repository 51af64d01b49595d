package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func get(t *testing.T, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	Handler(true).ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

func TestServesTheIndexWithAStrictPolicy(t *testing.T) {
	is := is.New(t)
	w := get(t, http.MethodGet, "/console/")
	is.Equal(w.Code, http.StatusOK)
	body := w.Body.String()
	is.True(strings.Contains(body, `<div id="root">`))                  // the page
	is.True(strings.Contains(body, `src="/console/assets/console.js"`)) // the bundle, by a fixed name
	is.True(!strings.Contains(body, "<script>"))                        // no inline script
	csp := w.Header().Get("Content-Security-Policy")
	is.True(strings.Contains(csp, "script-src 'self';"))
	is.True(strings.Contains(csp, "connect-src 'self';"))
	is.True(!strings.Contains(csp, "unsafe"))
	is.Equal(w.Header().Get("X-Content-Type-Options"), "nosniff")
}

func TestServesTheBundle(t *testing.T) {
	is := is.New(t)
	w := get(t, http.MethodGet, "/console/assets/console.js")
	is.Equal(w.Code, http.StatusOK)
	is.True(strings.HasPrefix(w.Header().Get("Content-Type"), "text/javascript"))
	is.True(w.Header().Get("Content-Security-Policy") != "")
	w = get(t, http.MethodGet, "/console/assets/index.css")
	is.Equal(w.Code, http.StatusOK)
}

func TestRedirectsAndRefuses(t *testing.T) {
	is := is.New(t)
	w := get(t, http.MethodGet, "/console")
	is.Equal(w.Code, http.StatusMovedPermanently)
	is.Equal(w.Header().Get("Location"), "/console/")
	is.Equal(get(t, http.MethodGet, "/console/package.json").Code, http.StatusNotFound)
	is.Equal(get(t, http.MethodGet, "/console/assets/nope.js").Code, http.StatusNotFound)
	is.Equal(get(t, http.MethodPost, "/console/").Code, http.StatusMethodNotAllowed)
}

func TestAnswersWhetherTheAPINeedsAToken(t *testing.T) {
	is := is.New(t)
	for _, needed := range []bool{true, false} {
		w := httptest.NewRecorder()
		Handler(needed).ServeHTTP(w, httptest.NewRequest(http.MethodGet, AuthPath, nil))
		is.Equal(w.Code, http.StatusOK)
		is.Equal(w.Header().Get("Content-Type"), "application/json")
		is.True(w.Header().Get("Content-Security-Policy") != "")
		want := `{"token_required":false}`
		if needed {
			want = `{"token_required":true}`
		}
		is.Equal(strings.TrimSpace(w.Body.String()), want) // what /ws would answer without a token, and nothing else
	}
}
