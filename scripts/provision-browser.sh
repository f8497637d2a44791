#!/usr/bin/env bash
#
# scripts/provision-browser.sh - install Debian's Chromium (/usr/bin/chromium)
# for the console's end-to-end tests (console/e2e, driven by playwright-core).
#
# When /usr/bin/chromium is already there it does nothing. Otherwise, as
# root, it runs apt-get install chromium (apt-get update first when the
# package is unknown). The browser tests look for /usr/bin/chromium
# (or CAIRN_CHROMIUM) and skip with one line when it is missing.
#
# Exit status 1, with one line on stderr, when the install fails or is not
# possible (not root, no apt-get).
set -euo pipefail
bin=${CAIRN_CHROMIUM:-/usr/bin/chromium}
if [[ -x $bin ]]; then
	exit 0
fi
if ! command -v apt-get >/dev/null; then
	echo "provision-browser: $bin is missing and there is no apt-get to install Debian's chromium" >&2
	exit 1
fi
if ((EUID != 0)); then
	echo "provision-browser: $bin is missing; as root: apt-get install -y chromium" >&2
	exit 1
fi
echo "provision-browser: installing Debian's chromium with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show chromium >/dev/null 2>&1; then
	apt-get update -qq >&2 || true
fi
if ! apt-get install -y -qq --no-install-recommends chromium >&2; then
	echo "provision-browser: apt-get install chromium failed (see above)" >&2
	exit 1
fi
if [[ ! -x $bin ]]; then
	echo "provision-browser: chromium installed but $bin is not there" >&2
	exit 1
fi
