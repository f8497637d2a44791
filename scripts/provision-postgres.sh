#!/usr/bin/env bash
#
# provision-postgres.sh - make a PostgreSQL server with the pgvector `vector`
# extension available for Cairn's test suite, and print its connection URL.
#
# Usage:
#   CAIRN_TEST_DATABASE_URL=$(scripts/provision-postgres.sh)
#
# What it does:
#   * If CAIRN_TEST_DATABASE_URL is set, nothing is installed: the script only
#     checks that the server answers and that the `vector` extension is
#     available there, then echoes the URL back. Failure exits non-zero.
#   * Otherwise it targets a local server at 127.0.0.1:5432, user `postgres`,
#     no password. If that server already answers and offers `vector`, it only
#     verifies that the extension loads (no apt-get, well under a second).
#     Otherwise, on Debian/Ubuntu, as root or with passwordless sudo, it:
#       - installs the `postgresql` package if no server is installed,
#       - creates/starts the cluster on port 5432 (pg_ctlcluster, no systemd),
#       - if needed, adds a `trust` line for postgres@127.0.0.1 to pg_hba.conf,
#       - if `vector` is missing, builds pgvector (>= 0.8) from Debian trixie's
#         `pgvector` *source* package against the installed server
#         (postgresql-server-dev-<major>, make, make install). The deb-src
#         line lives in /etc/apt/sources.list.d/cairn-pgvector-src.sources;
#         a deb-src line never changes installed binary packages.
#     Finally it runs CREATE EXTENSION vector in a scratch database
#     (cairn_provision_check, created and dropped) to prove it really loads.
#
# Environment:
#   CAIRN_TEST_DATABASE_URL  use this server instead of provisioning one.
#   CI                       if "true" (or "1"), every failure is fatal.
#                            Otherwise, when provisioning is impossible or
#                            fails, one line explains that Postgres tests will
#                            be skipped and the script exits 0 printing nothing
#                            on stdout.
#
# Output contract:
#   stdout: on success exactly one line, the connection URL (for the local
#           server: postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable,
#           the admin database; tests create their own databases from it).
#           Nothing at all otherwise.
#   stderr: progress and diagnostics, prefixed "provision-postgres:".
#   exit:   0 on success, and on "skipped" outside CI; non-zero on failure in
#           CI, and whenever an explicit CAIRN_TEST_DATABASE_URL is unusable.

set -euo pipefail

readonly PROG=provision-postgres
readonly PORT=5432
readonly LOCAL_URL="postgres://postgres@127.0.0.1:${PORT}/postgres?sslmode=disable"
readonly SCRATCH_DB=cairn_provision_check
readonly SCRATCH_URL="postgres://postgres@127.0.0.1:${PORT}/${SCRATCH_DB}?sslmode=disable"
readonly SRC_SUITE=trixie            # Debian release carrying pgvector 0.8.x
readonly MIN_PGVECTOR=0.8
readonly SRC_LIST=/etc/apt/sources.list.d/cairn-pgvector-src.sources
readonly HBA_MARK="# cairn provision-postgres: passwordless TCP access for tests"
readonly SKIP_HINT="Postgres tests will be skipped; to enable them set CAIRN_TEST_DATABASE_URL to a PostgreSQL server with pgvector, or run scripts/provision-postgres.sh on Debian/Ubuntu as root (or with passwordless sudo)"

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }

in_ci() {
	case "${CI:-}" in
	true | TRUE | True | 1) return 0 ;;
	*) return 1 ;;
	esac
}

# fail REASON: provisioning is impossible or failed. Fatal in CI; otherwise
# one line saying the tests will be skipped, nothing on stdout, exit 0.
fail() {
	if in_ci; then
		log "error: $*"
		exit 1
	fi
	log "$*; $SKIP_HINT"
	exit 0
}

# show_tail FILE: last lines of a build/apt log, indented, on stderr.
show_tail() {
	[[ -s $1 ]] || return 0
	log "last lines of $1:"
	tail -n 25 "$1" | sed 's/^/    /' >&2
}

# oneline TEXT: squeeze a multi-line psql error into one line.
oneline() { tr -s '\n\t' '  ' <<<"$1" | sed 's/ *$//'; }

have() { command -v "$1" >/dev/null 2>&1; }

redact() { sed -E 's#(://[^:/@]*):[^@/]*@#\1:***@#' <<<"$1"; }

# sql URL QUERY: run QUERY, print unaligned tuples-only output.
sql() {
	PGCONNECT_TIMEOUT=5 PGOPTIONS='-c client_min_messages=warning' \
		psql -X -w -q -At -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}

vector_available() {
	[[ $(sql "$1" "select 1 from pg_available_extensions where name = 'vector'" 2>/dev/null) == 1 ]]
}

# ---------------------------------------------------------------------------
# Mode 1: an explicit server. Never installs anything; any problem is fatal.
# ---------------------------------------------------------------------------
check_given_url() {
	local url=$1 shown out
	shown=$(redact "$url")
	if ! have psql; then
		log "error: CAIRN_TEST_DATABASE_URL is set but psql is not installed (needed to check the server)"
		exit 1
	fi
	if ! out=$(sql "$url" 'select 1' 2>&1); then
		log "error: cannot connect to CAIRN_TEST_DATABASE_URL ($shown): $(oneline "$out")"
		exit 1
	fi
	if ! vector_available "$url"; then
		log "error: the server at CAIRN_TEST_DATABASE_URL ($shown) does not offer the pgvector 'vector' extension; install pgvector there or unset CAIRN_TEST_DATABASE_URL"
		exit 1
	fi
	log "using CAIRN_TEST_DATABASE_URL ($shown); 'vector' is available"
	printf '%s\n' "$url"
}

# ---------------------------------------------------------------------------
# Mode 2: the local server at 127.0.0.1:5432.
# ---------------------------------------------------------------------------

# verify_vector_loads: CREATE EXTENSION in a scratch database, then drop it.
verify_vector_loads() {
	local out version
	if ! out=$(sql "$LOCAL_URL" "drop database if exists $SCRATCH_DB" 2>&1) ||
		! out=$(sql "$LOCAL_URL" "create database $SCRATCH_DB template template0" 2>&1); then
		fail "cannot create scratch database $SCRATCH_DB: $(oneline "$out")"
	fi
	# The DO block loads plpgsql, which the migrations use: it fails when the
	# running server is older than its installed libraries (see below).
	if ! version=$(sql "$SCRATCH_URL" "do \$\$ begin perform 1; end \$\$;
		create extension if not exists vector;
		select '[1,2,3]'::vector <-> '[3,2,1]'::vector;
		select extversion from pg_extension where extname = 'vector'" 2>&1); then
		sql "$LOCAL_URL" "drop database if exists $SCRATCH_DB" >/dev/null 2>&1 || true
		fail "CREATE EXTENSION vector (or plpgsql) failed: $(oneline "$version"); if the PostgreSQL packages were upgraded, restart the cluster"
	fi
	sql "$LOCAL_URL" "drop database if exists $SCRATCH_DB" >/dev/null 2>&1 || true
	PGVECTOR_VERSION=${version##*$'\n'}
}

local_server_ready() {
	have psql && sql "$LOCAL_URL" 'select 1' >/dev/null 2>&1
}

SUDO=""
# as_root CMD...: run CMD as root (directly, or via non-interactive sudo).
as_root() {
	if [[ -n $SUDO ]]; then
		sudo -n "$@"
	else
		"$@"
	fi
}

require_debian() {
	local id="" id_like=""
	if [[ -r /etc/os-release ]]; then
		# shellcheck disable=SC1091
		id=$(. /etc/os-release && printf '%s' "${ID:-}")
		# shellcheck disable=SC1091
		id_like=$(. /etc/os-release && printf '%s' "${ID_LIKE:-}")
	fi
	case " $id $id_like " in
	*" debian "* | *" ubuntu "*) ;;
	*) fail "cannot provision PostgreSQL here (not Debian/Ubuntu: '${id:-unknown}')" ;;
	esac
	have apt-get || fail "cannot provision PostgreSQL here (apt-get not found)"
}

require_privilege() {
	if [[ $(id -u) -eq 0 ]]; then
		SUDO=""
	elif have sudo && sudo -n true 2>/dev/null; then
		SUDO=sudo
		log "not root; using sudo for privileged steps"
	else
		fail "cannot provision PostgreSQL (not root and no passwordless sudo)"
	fi
}

WORKDIR=""
# shellcheck disable=SC2317  # invoked via trap
cleanup() {
	if [[ -n $WORKDIR && -d $WORKDIR ]]; then
		rm -rf "$WORKDIR" 2>/dev/null || as_root rm -rf "$WORKDIR" || true
	fi
}

workdir() {
	if [[ -z $WORKDIR ]]; then
		WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/cairn-provision.XXXXXX")
		trap cleanup EXIT
	fi
}

# apt_get ARGS...: quiet, non-interactive apt-get; fatal (via fail) on error.
apt_get() {
	workdir
	local logf="$WORKDIR/apt.log"
	if ! as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get -qq -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=120 "$@" >"$logf" 2>&1; then
		show_tail "$logf"
		fail "apt-get $1 failed (no network, or apt misconfigured?)"
	fi
}

APT_UPDATED=""
apt_update_once() {
	if [[ -z $APT_UPDATED ]]; then
		log "apt-get update ..."
		apt_get update
		APT_UPDATED=1
	fi
}

pkg_installed() {
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

# apt_install PKG...: install only the packages that are not installed yet
# (never upgrades already-installed ones).
apt_install() {
	local missing=() p
	for p in "$@"; do
		pkg_installed "$p" || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	apt_update_once
	log "installing ${missing[*]} ..."
	apt_get install -y --no-install-recommends "${missing[@]}"
}

ensure_server_installed() {
	if have psql && have pg_lsclusters && compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
		return 0
	fi
	apt_install postgresql
	hash -r
	if ! have pg_lsclusters || ! have psql; then
		fail "PostgreSQL installation did not provide pg_lsclusters/psql"
	fi
}

CL_VER="" CL_NAME=""
# ensure_cluster_running: find (or create) the cluster on port 5432; start it.
ensure_cluster_running() {
	local ver name port status _rest latest
	CL_VER="" CL_NAME=""
	while read -r ver name port status _rest; do
		if [[ $port == "$PORT" ]]; then
			CL_VER=$ver CL_NAME=$name
			break
		fi
	done < <(pg_lsclusters -h 2>/dev/null)

	if [[ -z $CL_VER ]]; then
		latest=$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/postgres' 2>/dev/null |
			awk -F/ '{print $5}' | sort -V | tail -n 1)
		[[ -n $latest ]] || fail "no PostgreSQL server binaries found under /usr/lib/postgresql"
		if [[ -d /etc/postgresql/$latest/main ]]; then
			fail "cluster $latest/main exists but does not use port $PORT; no cluster listens on $PORT"
		fi
		log "creating PostgreSQL cluster $latest/main on port $PORT ..."
		as_root pg_createcluster "$latest" main --port "$PORT" >/dev/null ||
			fail "pg_createcluster $latest main failed"
		CL_VER=$latest CL_NAME=main
	fi

	status=$(pg_lsclusters -h "$CL_VER" "$CL_NAME" 2>/dev/null | awk '{print $4}')
	if [[ $status != online* ]]; then
		log "starting PostgreSQL cluster $CL_VER/$CL_NAME ..."
		if ! as_root pg_ctlcluster --skip-systemctl-redirect "$CL_VER" "$CL_NAME" start >&2; then
			local pglog="/var/log/postgresql/postgresql-$CL_VER-$CL_NAME.log"
			as_root tail -n 20 "$pglog" 2>/dev/null | sed 's/^/    /' >&2 || true
			fail "cannot start PostgreSQL cluster $CL_VER/$CL_NAME"
		fi
	fi

	local i
	for ((i = 0; i < 30; i++)); do
		pg_isready -q -h 127.0.0.1 -p "$PORT" && return 0
		sleep 1
	done
	fail "PostgreSQL cluster $CL_VER/$CL_NAME does not accept connections on 127.0.0.1:$PORT"
}

# ensure_trust_auth: postgres@127.0.0.1 must connect without a password.
ensure_trust_auth() {
	local out hba="/etc/postgresql/$CL_VER/$CL_NAME/pg_hba.conf"
	out=$(sql "$LOCAL_URL" 'select 1' 2>&1) && return 0
	if ! as_root test -f "$hba"; then
		fail "cannot connect as postgres@127.0.0.1:$PORT ($(oneline "$out")) and $hba not found"
	fi
	if as_root grep -qF "$HBA_MARK" "$hba"; then
		fail "cannot connect as postgres@127.0.0.1:$PORT although $hba has trust configured: $(oneline "$out")"
	fi
	log "configuring trust auth for postgres@127.0.0.1 (first lines of $hba) and reloading"
	as_root sed -i "1i $HBA_MARK\\
host    all    postgres    127.0.0.1/32    trust" "$hba" ||
		fail "cannot edit $hba"
	as_root pg_ctlcluster --skip-systemctl-redirect "$CL_VER" "$CL_NAME" reload >&2 ||
		fail "cannot reload PostgreSQL cluster $CL_VER/$CL_NAME"
	sleep 1
	out=$(sql "$LOCAL_URL" 'select 1' 2>&1) ||
		fail "still cannot connect as postgres@127.0.0.1:$PORT: $(oneline "$out")"
}

# add_pgvector_deb_src: a deb-src entry (only) for the release carrying 0.8.
add_pgvector_deb_src() {
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg want
	[[ -f $keyring ]] || apt_install debian-archive-keyring
	want="# Added by cairn scripts/provision-postgres.sh: source packages only
# (deb-src), used to build pgvector. Never changes installed binary packages.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $SRC_SUITE
Components: main
Signed-By: $keyring"
	if [[ -f $SRC_LIST ]] && [[ $(<"$SRC_LIST") == "$want" ]]; then
		return 0
	fi
	log "adding deb-src for Debian $SRC_SUITE in $SRC_LIST"
	printf '%s\n' "$want" | as_root tee "$SRC_LIST" >/dev/null || fail "cannot write $SRC_LIST"
	APT_UPDATED="" # the new entry needs an apt-get update
}

build_pgvector() {
	local major=$1 pg_config srcver upstream srcdir logf
	pg_config=/usr/lib/postgresql/$major/bin/pg_config

	add_pgvector_deb_src
	apt_update_once
	apt_install build-essential dpkg-dev "postgresql-server-dev-$major"
	[[ -x $pg_config ]] || fail "$pg_config missing after installing postgresql-server-dev-$major"

	srcver=$(apt-cache showsrc --only-source pgvector 2>/dev/null |
		awk '/^Version:/ {print $2}' | sort -V | tail -n 1)
	[[ -n $srcver ]] || fail "apt-cache showsrc pgvector found no source package (deb-src for $SRC_SUITE not usable?)"
	upstream=${srcver#*:}
	upstream=${upstream%%-*}
	if ! dpkg --compare-versions "$upstream" ge "$MIN_PGVECTOR"; then
		fail "pgvector source $srcver is older than $MIN_PGVECTOR"
	fi

	workdir
	log "fetching pgvector source $srcver ..."
	logf="$WORKDIR/source.log"
	# apt-get source needs no root; it downloads into the current directory.
	if ! (cd "$WORKDIR" && apt-get -qq source --only-source "pgvector=$srcver") >"$logf" 2>&1; then
		show_tail "$logf"
		fail "apt-get source pgvector=$srcver failed"
	fi
	srcdir=$(find "$WORKDIR" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)
	[[ -n $srcdir ]] || fail "apt-get source pgvector did not unpack a source tree"

	log "building pgvector $upstream against PostgreSQL $major ..."
	logf="$WORKDIR/build.log"
	# OPTFLAGS= : no -march=native, like Debian's own build (portable binary).
	if ! make -C "$srcdir" -j"$(nproc 2>/dev/null || echo 2)" \
		PG_CONFIG="$pg_config" OPTFLAGS= >"$logf" 2>&1; then
		show_tail "$logf"
		fail "building pgvector $upstream failed"
	fi
	log "installing pgvector $upstream into PostgreSQL $major ..."
	if ! as_root make -C "$srcdir" install PG_CONFIG="$pg_config" OPTFLAGS= >>"$logf" 2>&1; then
		show_tail "$logf"
		fail "make install of pgvector $upstream failed"
	fi
}

provision_local() {
	local major out

	# Fast path: everything already in place; no apt, no root needed.
	if local_server_ready && vector_available "$LOCAL_URL"; then
		verify_vector_loads
		log "PostgreSQL at 127.0.0.1:$PORT ready, pgvector $PGVECTOR_VERSION loads"
		printf '%s\n' "$LOCAL_URL"
		return 0
	fi

	require_debian
	require_privilege
	ensure_server_installed
	ensure_cluster_running
	ensure_trust_auth

	out=$(sql "$LOCAL_URL" "select current_setting('server_version_num')::int / 10000" 2>&1) ||
		fail "cannot query server version: $(oneline "$out")"
	major=$out
	if [[ $major != "$CL_VER" ]]; then
		fail "server on port $PORT is PostgreSQL $major, but cluster $CL_VER/$CL_NAME is configured for it"
	fi

	if ! vector_available "$LOCAL_URL"; then
		build_pgvector "$major"
		# Installing postgresql-server-dev-<major> can upgrade the server's
		# package to a newer minor release under the running cluster, whose
		# old binary then fails to load the new libraries (plpgsql: "undefined
		# symbol"). A restart runs the binary that matches them.
		log "restarting PostgreSQL cluster $CL_VER/$CL_NAME on the installed binaries ..."
		as_root pg_ctlcluster --skip-systemctl-redirect "$CL_VER" "$CL_NAME" restart >&2 ||
			fail "cannot restart PostgreSQL cluster $CL_VER/$CL_NAME"
		local i
		for ((i = 0; i < 30; i++)); do
			pg_isready -q -h 127.0.0.1 -p "$PORT" && break
			sleep 1
		done
		vector_available "$LOCAL_URL" || fail "'vector' still not available to PostgreSQL $major after installing pgvector"
	fi

	verify_vector_loads
	log "PostgreSQL $major at 127.0.0.1:$PORT ready, pgvector $PGVECTOR_VERSION loads"
	printf '%s\n' "$LOCAL_URL"
}

main() {
	if [[ -n ${CAIRN_TEST_DATABASE_URL:-} ]]; then
		check_given_url "$CAIRN_TEST_DATABASE_URL"
	else
		provision_local
	fi
}

# Run main in a subshell so that an unexpected error (set -e) still honours
# the contract: fatal in CI or with an explicit URL, "skipped" (exit 0,
# empty stdout) otherwise. Deliberate failures already exit via fail().
set +e
(
	set -e
	main "$@"
)
rc=$?
set -e
if ((rc != 0)) && [[ -z ${CAIRN_TEST_DATABASE_URL:-} ]] && ! in_ci; then
	log "unexpected failure (exit $rc); $SKIP_HINT"
	exit 0
fi
exit "$rc"
