# Shared paths and helpers for the scripts; sourced, never run.
# Every script works from the repository root, whatever the caller's cwd.

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# BUILD and TREE can be given: a second worktree of this repository builds
# in the main one's build/ (BUILD=...), and sparse-check configures and
# builds the pristine base worktree with the same scripts (TREE=...).
#
# SERIES picks the patch queue: 5.10 (the default: patches/ on Linux
# 5.10.262, in build/) or mainline (patches-mainline/ on Debian unstable's
# Linux 7.2, in build/mainline/). Each has its base pinned here: Debian's
# source package version and suite, the orig tarball's sha256 and size, and
# git's view of the unpacked tarball (BASE_TREE, a second pin beside the
# sha256, so a base commit that was edited by hand is caught before
# anything is checked against it).
SERIES=${SERIES:-5.10}
case $SERIES in
5.10)
	BUILD=${BUILD:-$ROOT/build}
	PATCHES=$ROOT/patches
	BASE_VERSION=5.10.262
	BASE_DEBVER=5.10.262-1
	BASE_SUITE=bullseye-security
	BASE_SHA256=e03766e4b2c246a20c9e2770aa599ee25c336d33b31c0980950230634e195339
	BASE_SIZE=122205276
	BASE_TREE=4f628892011645b312a76ff2a5993cba300bce50
	;;
mainline)
	BUILD=${BUILD:-$ROOT/build/mainline}
	PATCHES=$ROOT/patches-mainline
	BASE_VERSION=7.2.8
	BASE_DEBVER=7.2.8-1
	BASE_SUITE=unstable
	BASE_SHA256=08f058f9de8d487e32a5c9e2855ee7e35bee1a047e77d37ba797d734c0cc07b3
	BASE_SIZE=163638868
	BASE_TREE=7b8fdee85adbdab7104214cb827143ef53dd92b1
	;;
*)
	echo "${0##*/}: SERIES=$SERIES: not 5.10 or mainline" >&2
	exit 1
	;;
esac
TREE=${TREE:-$BUILD/linux}

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

# debian_kernel [-s unstable]: a Debian kernel package to boot in the guest
# (make parity, make bench-peers): fetched and unpacked by
# scripts/fetch-debian-kernel, with an initramfs that loads its virtio and
# 9p modules (scripts/module-initramfs, made again when that script
# changes). Sets DEB_KDIR (the unpacked package), DEB_KVER, DEB_KERNEL (its
# vmlinuz), DEB_INITRD and DEB_APPEND (the kernel arguments that make the
# guest load modules from DEB_KDIR: scripts/guest-init).
debian_kernel() {
	DEB_KDIR=$("$ROOT/scripts/fetch-debian-kernel" "$@")
	DEB_KVER=$(ls "$DEB_KDIR/lib/modules")
	DEB_KERNEL=$DEB_KDIR/boot/vmlinuz-$DEB_KVER
	DEB_INITRD=$BUILD/debian-initrd/$DEB_KVER.gz
	DEB_APPEND=guest.modules=$DEB_KDIR
	mkdir -p "$BUILD/debian-initrd"
	[ "$DEB_INITRD" -nt "$ROOT/scripts/module-initramfs" ] ||
		"$ROOT/scripts/module-initramfs" "$DEB_KDIR" "$DEB_INITRD"
}
