#!/usr/bin/env bash
#
# scripts/build-console.sh - build the web console's front end (console/web:
# TypeScript, Vite, Cytoscape.js) into console/dist/app, which `go build`
# embeds in the cairn binary and `cairn serve` serves under /console.
#
# The npm packages are installed with `npm ci --prefer-offline` exactly as
# console/web/package-lock.json pins them (versions and integrity hashes),
# from the npm cache when it has them (scripts/npm-ci.sh). The build is skipped, in well under a
# second, when the hash of the sources (package-lock.json, index.html, the
# configuration and src/) matches the stamp the last build left in
# console/dist/app/.cairn-build.sha256; in a second or two when a build of
# the same sources is in the machine's cache (${CAIRN_CACHE_DIR:-
# ~/.cache/cairn}/console, the latest build only), as its node_modules is
# (scripts/npm-ci.sh). The same install brings
# playwright-core, which the console's browser test drives Chromium with.
#
# Needs Node.js 18 or newer and npm (Debian: apt-get install nodejs npm;
# the browser test's playwright-core wants 20).
# Exit status 1, with one line on stderr, when they are missing or the
# install or the build fails; a cairn built without the console serves a
# page that says how to build it.
set -euo pipefail
cd "$(dirname "$0")/.."
web=console/web
out=console/dist/app
stamp=$out/.cairn-build.sha256

hash_sources() {
	(cd "$web" && find package-lock.json package.json index.html tsconfig.json vite.config.ts src -type f -print0 |
		LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
}

want=$(hash_sources)
if [[ -f $stamp && $(<"$stamp") == "$want" && -f $out/index.html ]]; then
	exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "build-console: node and npm are needed (Node.js 18 or newer; Debian: apt-get install nodejs npm)" >&2
	exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if ((major < 18)); then
	echo "build-console: Node.js $(node --version) is too old; 18 or newer is needed (Vite 6)" >&2
	exit 1
fi

if ! scripts/npm-ci.sh "$web" build-console; then
	exit 1
fi
# A build of the same sources on this machine (another clone, an earlier
# run) is copied rather than made again: tsc and Vite take 10 s of CPU.
. scripts/dircache.sh
if dircache_restore console dist "$want" "$out"; then
	echo "build-console: $out copied from the cache of its sources ($(dircache_entry console dist "$want"))" >&2
	exit 0
fi
echo "build-console: building $out" >&2
if ! (cd "$web" && node_modules/.bin/tsc --noEmit >&2 && node_modules/.bin/vite build --logLevel warn >&2); then
	echo "build-console: the build failed (see above)" >&2
	exit 1
fi
echo "$want" >"$stamp"
# Kept for the next clone, in place of the build of older sources.
dircache_save console dist "$want" "$out"
