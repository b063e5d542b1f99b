# Shared paths and helpers for the scripts; sourced, never run.
# Every script works from the repository root, whatever the caller's cwd.

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# BUILD and TREE can be given: a second worktree of this repository builds
# in the main one's build/ (BUILD=...), and sparse-check configures and
# builds the pristine base worktree with the same scripts (TREE=...).
BUILD=${BUILD:-$ROOT/build}
TREE=${TREE:-$BUILD/linux}
PATCHES=$ROOT/patches
BASE_VERSION=5.10.262

# git's view of the base: the tree of the unpacked tarball. A second pin
# beside the tarball's sha256, so a base commit that was edited by hand is
# caught before anything is checked against it.
BASE_TREE=4f628892011645b312a76ff2a5993cba300bce50

die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

note() {
	echo "${0##*/}: $*" >&2
}

# The series, in order: non-comment lines of patches/series.
series_patches() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$PATCHES/series"
}

# git with settings pinned, so that a user's configuration cannot change
# what export writes or how am applies.
tgit() {
	git -C "$TREE" -c core.abbrev=12 -c diff.algorithm=myers \
		-c diff.noprefix=false -c diff.mnemonicPrefix=false \
		-c diff.renames=true -c format.signature= \
		-c am.threeWay=false -c core.autocrlf=false "$@"
}

# private_apt DIR LINE...: set "$@"-style options in PAPT for an apt with its
# own sources list (the LINEs), lists, cache and status under DIR, so that the
# system's apt state is never touched. Debug::NoLocking lets it run while
# the system apt is busy.
private_apt() {
	papt_dir=$1
	shift
	mkdir -p "$papt_dir/lists/partial" "$papt_dir/archives/partial" \
		"$papt_dir/parts"
	: > "$papt_dir/status"
	printf '%s\n' "$@" > "$papt_dir/sources.list"
	PAPT="-o Dir::Etc::SourceList=$papt_dir/sources.list
		-o Dir::Etc::SourceParts=$papt_dir/parts
		-o Dir::State::Lists=$papt_dir/lists
		-o Dir::State::Status=$papt_dir/status
		-o Dir::Cache=$papt_dir
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root"
}

# apt_mirror SUFFIX: the URI of the configured repository whose suite ends
# in SUFFIX ("-security", or "" for the main archive). Repository host names
# are never written in this repository: they come from the system's apt.
apt_mirror() {
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' |
		awk -v s="$1" 's == "" && $2 !~ /-/ || s != "" && $2 ~ s "$" {
			print $1; exit }'
}

CACHE=${KSERIES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/linux-5.10-series}
