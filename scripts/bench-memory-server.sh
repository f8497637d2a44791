#!/usr/bin/env bash
#
# scripts/bench-memory-server.sh - measure Cairn side by side with the
# reference MCP memory server (@modelcontextprotocol/server-memory), both over
# stdio, driven by the official TypeScript SDK client, same data, in
# interleaved rounds; print a Markdown table of each figure for both and
# Cairn's advantage (above 1: Cairn ahead). What it measures and how each
# side computes it: docs/performance.md, "Side by side with the reference
# memory server"; the client is cmd/cairn/testdata/node/bench-memory-server.mjs.
#
#   scripts/bench-memory-server.sh [--entities N] [--rounds R] [--samples S]
#       [--relationships N] [--cairn PATH] [--no-install] [--json FILE]
#       [--update-docs]
#
#   --entities N       entities to load, 3 facts each (default 10000)
#   --rounds R         interleaved rounds, each on fresh storage (default 3)
#   --samples S        timed calls per read measure and round (default 100)
#   --relationships N  relationships to create (default: as many as entities)
#   --cairn PATH       run this cairn binary instead of building one
#   --no-install       do not run scripts/provision-node.sh (the npm
#                      packages must already be installed)
#   --json FILE        also write every figure of every round to FILE
#   --update-docs      write the table into docs/performance.md, between the
#                      bench-memory-server markers of its side-by-side section
#
# Needs Go, Node.js 20+ and npm. At N = 10,000 and 3 rounds it takes about
# as long as Cairn needs to store 30,000 entities and create 30,000
# relationships, plus a minute; `--entities 1000 --rounds 1` is a quick look.
# Exit status 1 when a server fails a call or answers the wrong entities.
set -euo pipefail
cd "$(dirname "$0")/.."

entities=10000 rounds=3 samples=100 relationships="" cairn="" install=1 json="" update_docs=0
while (($#)); do
	case $1 in
	--entities | --rounds | --samples | --relationships | --cairn | --json)
		if (($# < 2)); then
			echo "bench-memory-server: $1 needs a value" >&2
			exit 2
		fi
		name=${1#--}
		printf -v "$name" '%s' "$2"
		shift 2
		;;
	--no-install) install=0 && shift ;;
	--update-docs) update_docs=1 && shift ;;
	-h | --help)
		sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "bench-memory-server: unknown argument $1 (see --help)" >&2
		exit 2
		;;
	esac
done

if ((install)); then
	scripts/provision-node.sh
fi
node_dir=cmd/cairn/testdata/node
if [[ ! -f $node_dir/node_modules/@modelcontextprotocol/server-memory/package.json ]]; then
	echo "bench-memory-server: @modelcontextprotocol/server-memory is not installed; run scripts/provision-node.sh" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
label=""
if [[ -z $cairn ]]; then
	echo "bench-memory-server: go build ./cmd/cairn" >&2
	go build -o "$work/cairn" ./cmd/cairn
	cairn=$work/cairn
	if rev=$(git rev-parse --short HEAD 2>/dev/null); then
		# The label names the build: uncommitted changes to the Go code show.
		[[ -z $(git status --porcelain -- '*.go' go.mod go.sum migrations 2>/dev/null) ]] || rev+="+changes"
		label="Cairn $rev"
	fi
fi
cairn=$(cd "$(dirname "$cairn")" && pwd)/$(basename "$cairn")

args=(--cairn "$cairn" --entities "$entities" --rounds "$rounds" --samples "$samples" --markdown "$work/table.md" --label "$label")
[[ -z $relationships ]] || args+=(--relationships "$relationships")
[[ -z $json ]] || args+=(--json "$(cd "$(dirname "$json")" && pwd)/$(basename "$json")")
(cd "$node_dir" && node bench-memory-server.mjs "${args[@]}")

if ((update_docs)); then
	doc=docs/performance.md
	begin='<!-- bench-memory-server:begin -->'
	end='<!-- bench-memory-server:end -->'
	if ! grep -qF "$begin" "$doc" || ! grep -qF "$end" "$doc"; then
		echo "bench-memory-server: $doc has no $begin … $end markers" >&2
		exit 1
	fi
	awk -v begin="$begin" -v end="$end" -v table="$work/table.md" '
		$0 == begin { print; while ((getline line < table) > 0) print line; skip = 1; next }
		$0 == end { skip = 0 }
		!skip { print }
	' "$doc" >"$work/doc.md"
	cp "$work/doc.md" "$doc"
	echo "bench-memory-server: wrote the table into $doc" >&2
fi
