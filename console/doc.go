// Package console is Cairn's web console: a single-page application, built
// by Vite from web/ into dist/app and embedded in the binary, served under
// /console, and the few owner-only HTTP endpoints it needs that the tools
// do not offer (agents and keys, a preview of consent rules).
//
// Everything the console shows about the user's data comes through the
// REST facade of the tools (POST /mcp/call/{tool}) with the key the user
// signed in with, so a key sees in the console exactly what its agent may
// read through MCP. The pages themselves hold no data and are served
// without a key; the API under /console/api/ needs one, and its owner
// routes the owner's.
//
// A binary built without the front end (a plain go build before
// scripts/build-console.sh) serves a page that says how to build it.
package console
