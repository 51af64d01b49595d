// Package console owns mcpflow's web console: the built single-page
// application under web/dist, embedded in the binary, and the handler
// that serves it at /console with a strict Content-Security-Policy. The
// page's sources are in web/ (TypeScript, React, Vite); its typed API
// client, web/src/api/generated.ts, is generated from the contract's
// manifest by ./gen. The console holds no data of its own: the page talks
// to the API over /ws like any browser client, with the token the user
// types.
package console

//go:generate go run ./gen -out web/src/api/generated.ts
