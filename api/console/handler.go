package console

import (
	"embed"
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

// Handler serves the built console under Path: index.html at Path/ and
// the bundle under Path/assets/. It needs no token: the assets hold no
// data, and the page asks for the token before it calls the API.
func Handler() http.Handler {
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
