# dircache.sh - directories a script makes once a machine (installed npm
# packages, the console's build), kept for the next clone by what they
# were made from. Sourced by npm-ci.sh and build-console.sh.
#
# An entry is ${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/cairn}/KIND/
# GROUP-KEY: GROUP names what is kept (a folder of the clone; letters,
# digits and underscores), KEY what it was made from (a lockfile's hash,
# the sources' hash). An entry appears only complete: copied under a
# temporary name, then renamed. Saving an entry drops the group's others,
# so a group holds the latest only. What a run killed while copying left
# half-made is removed by a later run.

# dircache_entry KIND GROUP KEY: the entry's path.
dircache_entry() {
	printf '%s/%s/%s-%s\n' "${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}" "$1" "$2" "$3"
}

# dircache_restore KIND GROUP KEY DEST: replace DEST with a copy of the
# entry. Fails, leaving DEST as it was, when there is no such entry or the
# copy fails.
dircache_restore() {
	local entry dest=$4
	entry=$(dircache_entry "$1" "$2" "$3")
	[[ -d $entry ]] || return 1
	rm -rf "$dest".cairn-tmp.* # half a copy, from a run killed while copying
	if ! cp -a "$entry" "$dest.cairn-tmp.$$"; then
		rm -rf "$dest.cairn-tmp.$$"
		return 1
	fi
	rm -rf "$dest" && mv "$dest.cairn-tmp.$$" "$dest"
}

# dircache_save KIND GROUP KEY SRC: keep a copy of SRC as the entry, and
# drop the group's other entries and the half-made copies of runs killed
# more than an hour ago. Best effort: a failure (a full disk, say) costs
# the next clone an install or a build, nothing else.
dircache_save() {
	local entry kind_dir src=$4 old
	entry=$(dircache_entry "$1" "$2" "$3")
	kind_dir=$(dirname "$entry")
	mkdir -p "$kind_dir" 2>/dev/null || return 0
	find "$kind_dir" -maxdepth 1 -name "$2-*.tmp.*" -mmin +60 -exec rm -rf {} + 2>/dev/null
	rm -rf "$entry.tmp.$$"
	if cp -a "$src" "$entry.tmp.$$" 2>/dev/null && { [[ -e $entry ]] || mv -T "$entry.tmp.$$" "$entry" 2>/dev/null; }; then
		for old in "$kind_dir/$2"-*; do
			[[ $old == "$entry" || $old == *.tmp.* ]] || rm -rf "$old"
		done
	fi
	rm -rf "$entry.tmp.$$"
	return 0
}
