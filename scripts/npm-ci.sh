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
# The cache is ${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/cairn}/npm,
# one directory per DIR and lockfile; delete it to start afresh. Nothing
# in it is shared between lockfiles, and an entry appears only complete
# (copied under a temporary name, then renamed).
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
cache_root=${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}/npm
slug=$(tr '/' '_' <<<"${dir%/}")
entry=$cache_root/$slug-$want-node$major-$(uname -m)

if [[ -f $entry/.cairn-lock.sha256 && $(<"$entry/.cairn-lock.sha256") == "$want" ]]; then
	tmp=$dir/node_modules.cairn-tmp.$$
	rm -rf "$tmp"
	if cp -a "$entry" "$tmp"; then
		rm -rf "$dir/node_modules"
		mv "$tmp" "$dir/node_modules"
		echo "$prog: $dir/node_modules copied from the cache of its lockfile ($entry)" >&2
		exit 0
	fi
	rm -rf "$tmp"
	echo "$prog: copying $entry failed; installing with npm ci" >&2
fi

echo "$prog: installing $dir from package-lock.json" >&2
if ! (cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2); then
	echo "$prog: npm ci failed in $dir (see above)" >&2
	exit 1
fi
mkdir -p "$dir/node_modules" # npm ci makes none for a lockfile without packages
echo "$want" >"$stamp"

# Keep a copy for the next clone. A failure here (a full disk, say) costs
# the next run an npm ci, nothing else.
if mkdir -p "$cache_root" 2>/dev/null; then
	tmp=$entry.tmp.$$
	rm -rf "$tmp"
	if cp -a "$dir/node_modules" "$tmp" 2>/dev/null && { [[ -e $entry ]] || mv -T "$tmp" "$entry" 2>/dev/null; }; then
		for old in "$cache_root/$slug"-*; do
			[[ $old == "$entry" || $old == *.tmp.* ]] || rm -rf "$old"
		done
	fi
	rm -rf "$tmp"
fi
