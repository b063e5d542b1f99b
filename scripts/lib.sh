# Shared paths and helpers for the scripts; sourced, never run.
# Every script works from the repository root, whatever the caller's cwd.

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
TREE=$BUILD/linux
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
