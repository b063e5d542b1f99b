#!/bin/sh
# The guest's half of scripts/cross-endian, run from its job directory
# (/run/job) on each architecture in turn:
#
# The disks are named by their size (the order of virtio disks differs
# between architectures): DISK is a size in MiB, /sys/block says which
# /dev/vdX it is.
#
#   guest.sh make ME SRC RECV
#	on SRC, a btrfs mounted compress-force=zstd with files compressed with
#	zstd, zlib and lzo (btrfs property), reflinked copies, random data, an
#	inline file and a sparse one; a read-only snapshot sent with
#	--compressed-data to ME.stream, its files' sums in ME.sums and
#	encoded_dump's list of their extents in ME.src.dump; received on RECV
#	(mounted without compression, so its compressed extents come from
#	encoded writes), checked against the sums and listed in ME.recv.dump.
#   guest.sh check ME OTHER OTHER_RECV NEW
#	OTHER's image OTHER_RECV (its RECV) mounted here: btrfs check clean,
#	the same files, the same extents through both encoded read interfaces
#	(its dump equal to OTHER.recv.dump); OTHER.stream received on NEW into
#	the same files and extents; the other's snapshot sent again from here
#	(encoded reads of extents the other architecture wrote) and received
#	on NEW likewise.
#
# Prints "ok: ..." or "not ok: ..." per check; exits 1 if any failed.
set -u
job=/run/job
dump=$job/encoded_dump-$2
failed=0

ok() { echo "ok: $*"; }
not_ok() { echo "not ok: $*"; failed=1; }

# expect WHAT COMMAND...: a check that COMMAND succeeds.
expect() {
	what=$1
	shift
	if "$@"; then
		ok "$what"
	else
		not_ok "$what"
	fi
}

# The sha256 sums, and the encoded_dump lines, of the files under DIR.
sums() { (cd "$1" && find . -type f | sort | xargs sha256sum); }
dumps() { (cd "$1" && find . -type f | sort | xargs "$dump"); }
dump_to() { dumps "$2" > "$1"; }

# disk MIB: the virtio disk of that size.
disk() {
	for b in /sys/block/vd*; do
		if [ "$(cat "$b/size")" = $(($1 * 2048)) ]; then
			echo "/dev/${b##*/}"
			return
		fi
	done
	echo "guest.sh: no disk of $1 MiB" >&2
	echo /dev/null
}

# same WHAT FILE COMMAND...: a check that COMMAND succeeds and prints what
# FILE holds, which is not empty.
same() {
	what=$1 file=$2
	shift 2
	if "$@" > /tmp/same.out && [ -s "$file" ] &&
		cmp -s "$file" /tmp/same.out; then
		ok "$what"
	else
		not_ok "$what"
		diff "$file" /tmp/same.out | head -n 20
	fi
}

# fsck WHAT DEVICE: a check that btrfs check finds DEVICE clean.
fsck() {
	if btrfs check "$2" > /tmp/check.out 2>&1; then
		ok "btrfs check: $1"
	else
		not_ok "btrfs check: $1"
		tail -n 20 /tmp/check.out
	fi
}

# compressed DIR: a check that each codec's files under DIR are stored in
# compressed extents (filefrag: "encoded"), as sent.
compressed() {
	for c in zstd zlib lzo; do
		n=$(filefrag -v "$1/$c/log" | grep -c encoded)
		expect "$1/$c/log: $n compressed extents" [ "$n" -gt 0 ]
	done
}

make_data() {
	for c in zstd zlib lzo; do
		mkdir "$1/$c"
		btrfs property set "$1/$c" compression $c
		seq 1 40000 | sed "s|.*|10.0.0.& - - [05/Dec/2026] \"GET /$c/& HTTP/1.1\" 200 &|" > "$1/$c/log"
		cp --reflink=always "$1/$c/log" "$1/$c/log.clone"
	done
	head -c 300000 /dev/urandom > "$1/random"
	seq 1 300 > "$1/inline"
	truncate -s 4M "$1/sparse"
	seq 1 30000 | dd of="$1/sparse" bs=64K seek=20 conv=notrunc 2> /dev/null
}

# receive_into STREAM DIR NAME: receive STREAM into DIR, then the checks of
# the snapshot it makes against ME's or OTHER's NAME.sums and NAME.recv.dump.
receive_into() {
	mkdir -p "$2"
	expect "receive $1 into $2" btrfs receive -q -f "$1" "$2"
	same "$2/snap: files identical to $3's" "$job/$3.sums" sums "$2/snap"
	compressed "$2/snap"
}

case $1 in
make)
	me=$2 src=$(disk "$3") recv=$(disk "$4")
	mkdir -p /mnt/src /mnt/recv
	mkfs.btrfs -q -f "$src" && mount -o compress-force=zstd "$src" /mnt/src ||
		{ not_ok "mount $src"; exit 1; }
	btrfs subvolume create /mnt/src/data > /dev/null
	make_data /mnt/src/data
	sync
	btrfs subvolume snapshot -r /mnt/src/data /mnt/src/snap > /dev/null
	expect "send --compressed-data" \
		btrfs send -q --compressed-data -f "$job/$me.stream" /mnt/src/snap
	# "btrfs-stream\0", then the version, little-endian on every host.
	expect "stream header: version 2, little-endian" [ \
		"$(od -An -tx1 -j13 -N4 "$job/$me.stream" | tr -d ' ')" = 02000000 ]
	sums /mnt/src/snap > "$job/$me.sums"
	compressed /mnt/src/snap
	expect "encoded reads of the source agree" \
		dump_to "$job/$me.src.dump" /mnt/src/snap
	mkfs.btrfs -q -f "$recv" && mount "$recv" /mnt/recv ||
		{ not_ok "mount $recv"; exit 1; }
	receive_into "$job/$me.stream" /mnt/recv "$me"
	expect "encoded reads of the received files agree" \
		dump_to "$job/$me.recv.dump" /mnt/recv/snap
	umount /mnt/recv /mnt/src
	fsck "$me's source" "$src"
	fsck "$me's received image" "$recv"
	;;
check)
	me=$2 other=$3 image=$(disk "$4") new=$(disk "$5")
	mkdir -p /mnt/other /mnt/new
	fsck "$other's image" "$image"
	mount -o ro "$image" /mnt/other || { not_ok "mount $other's image"; exit 1; }
	same "$other's image: files identical" "$job/$other.sums" sums /mnt/other/snap
	same "$other's image: the same extents, read on $me" \
		"$job/$other.recv.dump" dumps /mnt/other/snap
	mkfs.btrfs -q -f "$new" && mount "$new" /mnt/new ||
		{ not_ok "mount $new"; exit 1; }
	receive_into "$job/$other.stream" /mnt/new/stream "$other"
	same "$other's stream received on $me: the same extents" \
		"$job/$other.recv.dump" dumps /mnt/new/stream/snap
	expect "send $other's snapshot again from $me" \
		btrfs send -q --compressed-data -f /tmp/again.stream /mnt/other/snap
	receive_into /tmp/again.stream /mnt/new/again "$other"
	same "$other's snapshot sent again: the same extents" \
		"$job/$other.recv.dump" dumps /mnt/new/again/snap
	umount /mnt/new /mnt/other
	fsck "what $me received" "$new"
	;;
*)
	echo "usage: guest.sh make ME SRC RECV | check ME OTHER OTHER_RECV NEW" >&2
	exit 2
	;;
esac
exit $failed
