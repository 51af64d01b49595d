package console

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
)

// Path is where the console is served.
const Path = "/console"

// ContentSecurityPolicy is sent with every page and asset: scripts and
// styles from the console itself only (no inline script, no eval), the
// API reached over the same origin's /ws only ('self' covers ws: and
// wss: of the page's host), nothing framed, no form posted anywhere.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed all:web/dist
var dist embed.FS

// AuthPath answers whether the API needs a token: {"token_required":
// bool}. The page reads it first, so that it connects at once to a
// server without tokens and asks for one only where the API would answer
// 401 (a refused upgrade or POST would show as an error in the browser's
// console). It tells no more than that 401 would.
const AuthPath = Path + "/auth.json"

// Handler serves the built console under Path: index.html at Path/, the
// bundle under Path/assets/ and AuthPath. It needs no token: the assets
// hold no data, and the page asks for the token, when tokenRequired,
// before it calls the API.
func Handler(tokenRequired bool) http.Handler {
	root, err := fs.Sub(dist, "web/dist")
	if err != nil {
		panic("console: embedded dist missing: " + err.Error()) // the embed pattern guarantees it
	}
	files := http.FileServerFS(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-cache")
		rest := strings.TrimPrefix(r.URL.Path, Path)
		switch {
		case rest == "":
			http.Redirect(w, r, Path+"/", http.StatusMovedPermanently)
			return
		case rest == strings.TrimPrefix(AuthPath, Path):
			h.Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, "{\"token_required\":%t}\n", tokenRequired)
			return
		case rest == "/" || rest == "/index.html":
			// Served directly: the file server would redirect
			// index.html to the folder.
			http.ServeFileFS(w, r, root, "index.html")
			return
		case !strings.HasPrefix(rest, "/assets/"):
			http.NotFound(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = rest
		files.ServeHTTP(w, r2)
	})
}
