package console

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// dist holds dist/README.md, always, and dist/app, the Vite build, when
// scripts/build-console.sh ran before go build. The pattern names the
// directory, so the embed compiles with or without app/ (files whose
// names start with a dot, such as the build's stamp, are left out).
//
//go:embed dist
var dist embed.FS

// placeholder is the page of a binary built without the front end.
//
//go:embed placeholder.html
var placeholder []byte

// Prefix is the path the console is served under.
const Prefix = "/console/"

// ContentSecurityPolicy is sent with every page and asset of the console:
// scripts, styles, images and requests only from the console's own origin,
// no inline script or style element, no plugins, no framing. Style
// attributes that scripts set through the CSSOM (Cytoscape sizes its canvas
// so) are not covered by style-src.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Built reports whether the binary carries the built front end.
func Built() bool {
	_, err := fs.Stat(dist, "dist/app/index.html")
	return err == nil
}

// Assets returns the handler of the console's pages and assets, under
// Prefix. Paths that name no file get index.html, so that the
// application's own routes load it. It needs no key: the pages hold no
// data. Every answer carries the Content-Security-Policy and headers that
// keep the page from being framed, sniffed or cached with a key in it.
func Assets() http.Handler {
	app, err := fs.Sub(dist, "dist/app")
	built := err == nil && Built()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if !built {
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-store")
			_, _ = w.Write(placeholder)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(Prefix, "/"))), "/")
		if name == "" || !fileExists(app, name) {
			name = "index.html"
		}
		if strings.HasPrefix(name, "assets/") {
			// Vite names assets by their content's hash.
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		http.ServeFileFS(w, r, app, name)
	})
}

func fileExists(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && !st.IsDir()
}
