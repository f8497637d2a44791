#!/usr/bin/env bash
#
# npm-ci.sh - install DIR/node_modules exactly as DIR/package-lock.json
# pins it, once per lockfile on a machine.
#
# Usage: scripts/npm-ci.sh DIR PROG
#   DIR   a directory with package.json and package-lock.json
#   PROG  the calling script's name, which prefixes every message
#
# What it does:
#   * Nothing when DIR/node_modules was installed from this lockfile
#     already (its stamp, node_modules/.cairn-lock.sha256, matches).
#   * Otherwise, when the machine's cache holds a node_modules installed
#     from this lockfile by the same Node.js major version on the same
#     architecture, it copies that (a second or two, against 10-15 s of
#     npm ci for the test clients, most of it unpacking).
#   * Otherwise it runs npm ci --prefer-offline (every package checked
#     against the lockfile's integrity hash), then copies the result into
#     the cache for the next clone, dropping the entries of DIR's older
#     lockfiles.
#
# The cache is ${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/cairn}/npm
# (scripts/dircache.sh), one directory per DIR, for its latest lockfile;
# delete it to start afresh.
set -euo pipefail

dir=${1:?usage: npm-ci.sh DIR PROG}
prog=${2:-npm-ci}
lock=$dir/package-lock.json
stamp=$dir/node_modules/.cairn-lock.sha256

want=$(sha256sum "$lock" | cut -d' ' -f1)
if [[ -f $stamp && $(<"$stamp") == "$want" ]]; then
	exit 0
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "$prog: node and npm are needed (Node.js 20 or newer; Debian: apt-get install nodejs npm)" >&2
	exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
. "$(dirname "${BASH_SOURCE[0]}")/dircache.sh"
group=$(tr '/-' '__' <<<"${dir%/}")
key=$want-node$major-$(uname -m)

if dircache_restore npm "$group" "$key" "$dir/node_modules"; then
	echo "$prog: $dir/node_modules copied from the cache of its lockfile ($(dircache_entry npm "$group" "$key"))" >&2
	exit 0
fi

echo "$prog: installing $dir from package-lock.json" >&2
if ! (cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2); then
	echo "$prog: npm ci failed in $dir (see above)" >&2
	exit 1
fi
mkdir -p "$dir/node_modules" # npm ci makes none for a lockfile without packages
echo "$want" >"$stamp"
dircache_save npm "$group" "$key" "$dir/node_modules"
