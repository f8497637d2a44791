#!/usr/bin/env bash
#
# provision-neo4j.sh - start the Neo4j servers Cairn's test suite runs
# against, and print how to reach them.
#
# Usage:
#   eval "$(scripts/provision-neo4j.sh)"      # start, export the variables
#   scripts/provision-neo4j.sh --stop         # stop what it started
#   scripts/provision-neo4j.sh --kill         # the same, without waiting
#
# What it does:
#   * If CAIRN_TEST_NEO4J_URI is already set, nothing is started: the
#     variables are echoed back as they are (a server of your own).
#   * Otherwise it resolves Neo4j Community Edition (the version pinned in
#     scripts/neo4j/pom.xml, 5.26 LTS) from Maven Central with Maven, which
#     verifies every jar's checksum (-C) and keeps them in the local
#     repository (~/.m2). The class path is cached under the state
#     directory, keyed on the pom's hash, so a warm start runs no Maven.
#   * It starts CAIRN_TEST_NEO4J_SERVERS servers (default 3) on loopback,
#     each on a free Bolt port from 17687 up, with a scratch data directory,
#     authentication on (user neo4j, a password generated for this run),
#     HTTP off, and memory for a 2-core machine (heap 384 MB, page cache
#     128 MB; CAIRN_TEST_NEO4J_HEAP and CAIRN_TEST_NEO4J_PAGECACHE change
#     them). Neo4j Community Edition has one database per server, and the
#     conformance suite needs a second empty store while it holds a first:
#     so the suite gets several servers, each used by one test at a time
#     (graph/neo4j/neo4jtest hands them out across test binaries).
#   * It waits until each server's Bolt port answers (at most 120 s).
#   * --stop stops the servers a previous run started (SIGTERM, then SIGKILL
#     after 15 s) and removes their scratch directories. Servers left by a
#     run whose shell died are stopped by the next start. --kill does the
#     same with SIGKILL at once: the data is scratch, and a clean shutdown
#     (a checkpoint of each store) took scripts/test 12 s at its end.
#
# Environment:
#   CAIRN_TEST_NEO4J_URI      use this server (or comma-separated servers)
#                             instead of starting any; with _USER (default
#                             neo4j) and _PASSWORD.
#   CAIRN_TEST_NEO4J_SERVERS  how many servers to start (default 3).
#   CAIRN_TEST_NEO4J_VERSION  another Neo4j release to start instead of the
#                             pinned one (e.g. 2026.08.1, which needs Java
#                             21 or newer: set JAVA_HOME); its artifacts are
#                             resolved the same way, checksums verified.
#   CAIRN_TEST_NEO4J_JAVA_OPTS the JVM's garbage collector and compiler
#                             flags (default -XX:+UseG1GC, the server's
#                             own; scripts/test sets -XX:+UseSerialGC
#                             -XX:TieredStopAtLevel=1, which starts in half
#                             the time and spends a third less CPU over
#                             the suite, but runs long benchmarks slower).
#   CAIRN_TEST_NEO4J_STATE    the state directory (default
#                             ${XDG_CACHE_HOME:-~/.cache}/cairn/neo4j-test).
#   JAVA_HOME                 the JDK to run (default: java on PATH); Neo4j
#                             5.26 needs Java 17 or 21.
#   CI                        if "true" (or "1"), every failure is fatal.
#                             Otherwise a failure prints one line saying the
#                             Neo4j tests will skip, prints nothing on
#                             stdout and exits 0.
#
# Output contract:
#   stdout: on success exactly three lines for eval:
#             export CAIRN_TEST_NEO4J_URI=bolt://127.0.0.1:17687,bolt://…
#             export CAIRN_TEST_NEO4J_USER=neo4j
#             export CAIRN_TEST_NEO4J_PASSWORD=<generated>
#           Nothing at all otherwise (and nothing for --stop).
#   stderr: progress and diagnostics, prefixed "provision-neo4j:".
#   exit:   0 on success and on "skipped" outside CI; non-zero on failure
#           in CI.

set -euo pipefail

readonly PROG=provision-neo4j
ROOT=$(cd "$(dirname "$0")/.." && pwd)
readonly ROOT
readonly POM=$ROOT/scripts/neo4j/pom.xml
readonly STATE=${CAIRN_TEST_NEO4J_STATE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/neo4j-test}
readonly RUNNING=$STATE/running # one line per server: pid owner-pid scratch-dir
readonly FIRST_PORT=17687
VERSION=${CAIRN_TEST_NEO4J_VERSION:-$(grep -o '<neo4j.version>[^<]*' "$POM" | cut -d'>' -f2)}
readonly VERSION
# The community server's entry point (the class the neo4j script starts):
# renamed in the calendar-versioned releases.
case $VERSION in
5.*) ENTRY_POINT=org.neo4j.server.CommunityEntryPoint ;;
*) ENTRY_POINT=org.neo4j.server.Neo4jCommunity ;;
esac
readonly ENTRY_POINT
readonly SKIP_HINT="the Neo4j tests will skip; set CAIRN_TEST_NEO4J_URI to a Neo4j 5 server, or install Java 17 and Maven and run scripts/provision-neo4j.sh"

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }

in_ci() {
	case "${CI:-}" in
	true | TRUE | True | 1) return 0 ;;
	*) return 1 ;;
	esac
}

fail() {
	if in_ci; then
		log "error: $*"
		exit 1
	fi
	log "$*; $SKIP_HINT"
	exit 0
}

have() { command -v "$1" >/dev/null 2>&1; }

# stop_pids PID...: SIGTERM to each, then SIGKILL to any still there after
# 15 s. A test server's data is scratch, so a slow shutdown is not waited
# for longer. With STOP_SIGNAL=KILL, SIGKILL at once.
STOP_SIGNAL=TERM
stop_pids() {
	local pid i alive
	(($#)) || return 0
	kill -"$STOP_SIGNAL" "$@" 2>/dev/null || true
	for ((i = 0; i < 150; i++)); do
		alive=0
		for pid; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		((alive)) || return 0
		sleep 0.1
	done
	log "server(s) $* did not stop in 15 s; killing them"
	kill -KILL "$@" 2>/dev/null || true
}

# stop_servers [stale]: stop the recorded servers (with "stale", only those
# whose owner is gone) and forget them.
stop_servers() {
	local only_stale=${1:-} pid owner dir keep=() pids=() dirs=()
	[[ -f $RUNNING ]] || return 0
	while read -r pid owner dir; do
		[[ -n $pid ]] || continue
		if [[ -n $only_stale ]] && kill -0 "$owner" 2>/dev/null; then
			keep+=("$pid $owner $dir")
			continue
		fi
		if kill -0 "$pid" 2>/dev/null; then
			[[ -n $only_stale ]] && log "stopping server $pid left by an earlier run"
			pids+=("$pid")
		fi
		dirs+=("$dir")
	done <"$RUNNING"
	if [[ -z $only_stale ]] && ((${#pids[@]})); then
		# The CPU the servers used, which the test binaries did not have
		# on a small machine (fields 14 and 15 of /proc/PID/stat, in ticks).
		local ticks=0 t
		for pid in "${pids[@]}"; do
			t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || continue
			ticks=$((ticks + t))
		done
		log "stopping ${#pids[@]} server(s), which used $((ticks / $(getconf CLK_TCK))) s of CPU"
	fi
	stop_pids "${pids[@]}"
	for dir in "${dirs[@]}"; do
		[[ $dir == "$STATE"/run.* ]] && rm -rf "$dir"
	done
	if ((${#keep[@]})); then
		printf '%s\n' "${keep[@]}" >"$RUNNING"
	else
		rm -f "$RUNNING"
	fi
}

# java_major: the major version of the java that will run the server.
JAVA=java
java_major() {
	"$JAVA" -XshowSettings:properties -version 2>&1 |
		awk -F'= ' '/java.specification.version/ {print $2}' | cut -d. -f1
}

# classpath: print the server's class path, from the cache or from Maven.
classpath() {
	local key cache cp missing=0 f logf
	key=$( (cat "$POM" && echo "${CAIRN_TEST_NEO4J_VERSION:-}") | sha256sum | cut -c1-16)
	cache=$STATE/classpath-$key
	if [[ -s $cache ]]; then
		cp=$(<"$cache")
		local IFS=:
		for f in $cp; do
			[[ -f $f ]] || {
				missing=1
				break
			}
		done
		if ((!missing)); then
			printf '%s' "$cp"
			return 0
		fi
	fi
	have mvn || fail "Maven (mvn) is not installed (Debian: apt-get install maven)"
	log "resolving Neo4j $VERSION from Maven Central ..."
	logf=$STATE/maven.log
	if ! mvn -B -q -C -f "$POM" ${CAIRN_TEST_NEO4J_VERSION:+"-Dneo4j.version=$CAIRN_TEST_NEO4J_VERSION"} dependency:build-classpath \
		-Dmdep.outputFile="$cache.tmp" -Dmdep.includeScope=runtime >"$logf" 2>&1; then
		tail -n 20 "$logf" | sed 's/^/    /' >&2
		fail "Maven could not resolve the Neo4j artifacts (see $logf)"
	fi
	mv "$cache.tmp" "$cache"
	cat "$cache"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start_server DIR PORT CP PASSWORD: set the initial password and start one
# server in the background; print its pid.
start_server() {
	local dir=$1 port=$2 cp=$3 password=$4
	mkdir -p "$dir/conf" "$dir/data" "$dir/logs" "$dir/plugins" "$dir/import" "$dir/run"
	cat >"$dir/conf/neo4j.conf" <<EOF
# Written by scripts/provision-neo4j.sh for one test run.
server.default_listen_address=127.0.0.1
server.default_advertised_address=127.0.0.1
server.bolt.listen_address=127.0.0.1:$port
server.bolt.advertised_address=127.0.0.1:$port
server.http.enabled=false
server.https.enabled=false
dbms.security.auth_enabled=true
server.directories.data=$dir/data
server.directories.logs=$dir/logs
server.directories.plugins=$dir/plugins
server.directories.import=$dir/import
server.directories.run=$dir/run
server.memory.pagecache.size=${CAIRN_TEST_NEO4J_PAGECACHE:-128m}
db.tx_log.rotation.retention_policy=2 files
db.logs.query.enabled=OFF
dbms.usage_report.enabled=false
# The servers' own housekeeping, which a scratch store of a few minutes
# does not need, polls several times a second: an idle server spent 7% of
# a core on it, three servers 130 s of CPU over a run (per-thread CPU from
# /proc, 2026-11-29): the VM pause monitor, background index sampling (the
# plans are not remade anyway, below), page-cache warm-up profiling, and
# the ID and transaction monitors at their 1 s and 2 s defaults. Without
# them an idle server spends 2%.
internal.vm_pause_monitor.enabled=false
db.index_sampling.background_enabled=false
db.memory.pagecache.warmup.enable=false
internal.db.idcontroller.maintenance_interval=30s
db.transaction.monitor.check.interval=10s
# Every test empties the database and fills it again, so the statistics a
# cached plan was made with diverge at once, and after the default 10 s
# every statement was planned anew: parsing and planning were half of the
# servers' CPU (Java Flight Recorder, 2026-11-29). Scratch data needs no
# fresher plans; graph/neo4j's tests cost two servers 180 s of CPU rather
# than 227.
dbms.cypher.min_replan_interval=1h
# Cypher compiles an expression to bytecode once a statement has run ten
# times; the suite runs hundreds of statements a few dozen times each, so
# that code generation, class loading and compiling the classes cost more
# than they saved: graph/neo4j's conformance tests took one server 139 s
# of CPU with expressions interpreted against 173 s (2026-11-29). The
# runtime stays the one a Community server runs (slotted); the interpreted
# runtime saved no more.
internal.cypher.expression_engine=INTERPRETED
# A plan is cached per statement and per size class of each string and
# list parameter (1, 2-10, 11-100... characters or items): the tests' user
# ids, entity ids and type lists of every length had one statement planned
# again and again, 1.2 s of CPU a time with the client compiler. Sizes
# only guide the planner's estimates, never what a statement returns;
# without them the conformance tests took 115 s of CPU rather than 151.
internal.cypher.use_parameter_size=false
EOF
	local heap=${CAIRN_TEST_NEO4J_HEAP:-384m} java_opts=${CAIRN_TEST_NEO4J_JAVA_OPTS:--XX:+UseG1GC}
	if ! NEO4J_HOME=$dir NEO4J_CONF=$dir/conf "$JAVA" -cp "$cp" org.neo4j.cli.AdminTool \
		dbms set-initial-password "$password" >"$dir/logs/set-password.log" 2>&1 9>&-; then
		tail -n 20 "$dir/logs/set-password.log" | sed 's/^/    /' >&2
		return 1
	fi
	# setsid and no inherited descriptors: the server outlives this script
	# and must not hold the caller's stdout (an eval "$(...)" would wait).
	NEO4J_HOME=$dir NEO4J_CONF=$dir/conf setsid "$JAVA" \
		-Xms"$heap" -Xmx"$heap" $java_opts -XX:+ExitOnOutOfMemoryError \
		-XX:-OmitStackTraceInFastThrow -Dfile.encoding=UTF-8 \
		-Dio.netty.tryReflectionSetAccessible=true -Djdk.nio.maxCachedBufferSize=1024 \
		--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
		--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
		-cp "$cp" "$ENTRY_POINT" \
		--home-dir="$dir" --config-dir="$dir/conf" \
		</dev/null >"$dir/logs/console.log" 2>&1 9>&- &
	echo $!
}

# wait_ready PID DIR PORT: until Bolt answers, the process dies or 120 s pass.
wait_ready() {
	local pid=$1 dir=$2 port=$3 i
	for ((i = 0; i < 1200; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			log "the server on port $port exited; last lines of its logs:"
			tail -n 20 "$dir/logs/console.log" "$dir/logs/neo4j.log" 2>/dev/null | sed 's/^/    /' >&2
			return 1
		fi
		if grep -q 'INFO  Started\.' "$dir/logs/neo4j.log" 2>/dev/null && ! port_free "$port"; then
			return 0
		fi
		sleep 0.1
	done
	log "the server on port $port did not start in 120 s; last lines of its log:"
	tail -n 20 "$dir/logs/neo4j.log" 2>/dev/null | sed 's/^/    /' >&2
	return 1
}

start() {
	local n=${CAIRN_TEST_NEO4J_SERVERS:-3} cp password major started=$SECONDS
	[[ $n =~ ^[1-9][0-9]?$ ]] || fail "CAIRN_TEST_NEO4J_SERVERS must be a number from 1 to 99, not '$n'"
	if [[ -n ${JAVA_HOME:-} ]]; then
		JAVA=$JAVA_HOME/bin/java
	fi
	have "$JAVA" || fail "Java is not installed (Neo4j 5.26 needs Java 17 or 21; Debian: apt-get install openjdk-17-jre-headless)"
	major=$(java_major)
	case $VERSION in
	5.*) [[ $major == 17 || $major == 21 ]] || fail "Neo4j $VERSION runs on Java 17 or 21, and $JAVA is Java ${major:-unknown} (set JAVA_HOME)" ;;
	*) [[ -n $major ]] && ((major >= 21)) || fail "Neo4j $VERSION needs Java 21 or newer, and $JAVA is Java ${major:-unknown} (set JAVA_HOME)" ;;
	esac
	mkdir -p "$STATE"
	# One provisioner at a time per state directory, from choosing ports
	# until the servers listen: two runs started together would otherwise
	# pick the same free ports. The descriptor is closed for the servers.
	exec 9>"$STATE/lock"
	if ! flock -w 300 9; then
		fail "another provision-neo4j.sh has held $STATE/lock for 5 minutes"
	fi
	stop_servers stale
	cp=$(classpath)
	password=$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')

	local pids=() dirs=() ports=() port=$FIRST_PORT i dir pid
	# abandon REASON: stop this run's servers (only those), then fail.
	abandon() {
		local mine=("${pids[@]}")
		stop_pids "${mine[@]}"
		for dir in "${dirs[@]}"; do rm -rf "$dir"; done
		if [[ -f $RUNNING ]]; then
			awk -v mine="${mine[*]}" 'BEGIN { n = split(mine, a, " "); for (i = 1; i <= n; i++) m[a[i]] = 1 } !($1 in m)' \
				"$RUNNING" >"$RUNNING.tmp"
			mv "$RUNNING.tmp" "$RUNNING"
		fi
		fail "$1"
	}
	for ((i = 0; i < n; i++)); do
		while ! port_free "$port"; do
			((port++))
			((port < FIRST_PORT + 200)) || abandon "no free port from $FIRST_PORT to $port"
		done
		dir=$(mktemp -d "$STATE/run.XXXXXX")
		dirs+=("$dir")
		if ! pid=$(start_server "$dir" "$port" "$cp" "$password"); then
			abandon "cannot start Neo4j in $dir (the initial password could not be set)"
		fi
		# The owner is the shell that called us: when it is gone, a later
		# start stops what it left.
		echo "$pid $PPID $dir" >>"$RUNNING"
		pids+=("$pid") ports+=("$port")
		((port++))
	done
	for ((i = 0; i < n; i++)); do
		if ! wait_ready "${pids[i]}" "${dirs[i]}" "${ports[i]}"; then
			abandon "Neo4j did not start"
		fi
	done
	exec 9>&-
	local uris=() rss=0 r
	for ((i = 0; i < n; i++)); do
		uris+=("bolt://127.0.0.1:${ports[i]}")
		r=$(awk '/VmRSS/ {print $2}' "/proc/${pids[i]}/status" 2>/dev/null || echo 0)
		rss=$((rss + r))
	done
	log "$n Neo4j $VERSION server(s) ready on ${ports[*]} in $((SECONDS - started)) s, $((rss / 1024)) MB resident in all; stop them with scripts/provision-neo4j.sh --stop"
	local IFS=,
	printf 'export CAIRN_TEST_NEO4J_URI=%s\n' "${uris[*]}"
	printf 'export CAIRN_TEST_NEO4J_USER=neo4j\n'
	printf 'export CAIRN_TEST_NEO4J_PASSWORD=%s\n' "$password"
}

main() {
	case "${1:-}" in
	--stop)
		stop_servers
		return 0
		;;
	--kill)
		STOP_SIGNAL=KILL
		stop_servers
		return 0
		;;
	"") ;;
	*)
		log "usage: provision-neo4j.sh [--stop | --kill]"
		exit 2
		;;
	esac
	if [[ -n ${CAIRN_TEST_NEO4J_URI:-} ]]; then
		log "using CAIRN_TEST_NEO4J_URI ($CAIRN_TEST_NEO4J_URI)"
		printf 'export CAIRN_TEST_NEO4J_URI=%q\n' "$CAIRN_TEST_NEO4J_URI"
		printf 'export CAIRN_TEST_NEO4J_USER=%q\n' "${CAIRN_TEST_NEO4J_USER:-neo4j}"
		printf 'export CAIRN_TEST_NEO4J_PASSWORD=%q\n' "${CAIRN_TEST_NEO4J_PASSWORD:-}"
		return 0
	fi
	start
}

main "$@"
