// SPDX-License-Identifier: GPL-2.0
/*
 * encoded_write: writing data that is already compressed, as btrfs
 * stores it, with pwritev2(RWF_ENCODED), against ordinary writes that
 * btrfs compresses itself (compress-force) and against uncompressed
 * writes.
 *
 *   encoded_write -w SRC MIB                   write MIB MiB of log lines
 *   encoded_write COMPRESSION METHOD SRC FILE RUNS
 *
 * The data, SRC (on tmpfs), is written to FILE RUNS times, FILE deleted
 * before each run, in 128 KiB pieces:
 *
 *   write    pwrite() of each piece; with COMPRESSION none on a file
 *            system mounted without compression, with zstd or zlib on one
 *            mounted compress-force=COMPRESSION (the caller mounts)
 *   encoded  each piece compressed here first, as btrfs would (zstd level
 *            3 with libzstd, or zlib level 3), then pwritev2(RWF_ENCODED)
 *            of one extent per piece: offset a multiple of 128 KiB,
 *            len = unencoded_len = the piece, unencoded_offset 0,
 *            compression ENCODED_IOV_COMPRESSION_BTRFS_ZSTD or _ZLIB. A
 *            piece whose compressed form does not save a 4 KiB sector is
 *            written with pwrite(), as btrfs does. The file is opened
 *            with O_ALLOW_ENCODED | O_CLOEXEC (root only).
 *
 * A run is timed from the open to the end of fsync(). Prints (bench.h):
 *
 *   encwrite COMPRESSION METHOD METRIC RUNS MIN P10 MEDIAN P90 P99 MAX
 *
 * with METRIC wall_ns, cpu_ns (user + system of the process), busy_ns
 * (the whole guest, /proc/stat: btrfs compresses in kernel workers) and
 * space (bytes of free space the file took, statvfs after sync), and
 *
 *   info compress_ns COMPRESSION NS   CPU time of the user-space compression
 *   info payload COMPRESSION BYTES    what the encoded method writes
 *   info stored COMPRESSION-METHOD BYTES    stored bytes (RWF_ENCODED reads)
 *   info written COMPRESSION-METHOD identical|differs    read back, compared
 *   info unsupported encoded_write-COMPRESSION REASON
 *
 * The compression is done once, before the runs, and is not part of the
 * runs' times (the data is "pre-compressed", as in a received send stream
 * or a backup); its CPU time is the compress_ns line. Where the kernel has no
 * encoded writes (EOPNOTSUPP) the encoded method prints the unsupported
 * line and nothing else, and exits 0.
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <linux/fs.h>
#include <zlib.h>
#include <zstd.h>
#include "bench.h"

/* Not in glibc's <fcntl.h>; the asm-generic value, as on x86. */
#ifndef O_ALLOW_ENCODED
#define O_ALLOW_ENCODED 040000000
#endif

#define PIECE (128 * 1024)	/* BTRFS_MAX_UNCOMPRESSED */
#define SECTOR 4096
#define LEVEL 3			/* btrfs' default for zstd and zlib */

enum { WALL, CPU, BUSY, SPACE, NR_METRICS };

static const char * const metric_name[NR_METRICS] = {
	"wall_ns", "cpu_ns", "busy_ns", "space",
};

static const char *data;	/* the source, mapped */
static long long size;
static int compression;		/* ENCODED_IOV_COMPRESSION_* */
static int encoded;

/* The pieces compressed: payload[i], plen[i] (0: written plainly). */
static char **payload;
static size_t *plen;

static long long pieces(void)
{
	return (size + PIECE - 1) / PIECE;
}

static long long piece_len(long long i)
{
	return size - i * PIECE < PIECE ? size - i * PIECE : PIECE;
}

static size_t round_sector(size_t n)
{
	return (n + SECTOR - 1) / SECTOR * SECTOR;
}

/* Compress piece @i into payload[i]; plen[i] stays 0 if it does not pay. */
static void compress_piece(long long i)
{
	const char *src = data + i * PIECE;
	size_t n = piece_len(i), bound, len;
	uLongf zlen;
	char *dst;

	bound = compression == ENCODED_IOV_COMPRESSION_BTRFS_ZSTD ?
		ZSTD_compressBound(n) : compressBound(n);
	dst = malloc(bound);
	if (!dst)
		err(1, "malloc");
	if (compression == ENCODED_IOV_COMPRESSION_BTRFS_ZSTD) {
		/* One frame; a window of at most 128 KiB, as btrfs reads. */
		len = ZSTD_compress(dst, bound, src, n, LEVEL);
		if (ZSTD_isError(len))
			errx(1, "ZSTD_compress: %s", ZSTD_getErrorName(len));
	} else {
		zlen = bound;
		if (compress2((Bytef *)dst, &zlen, (const Bytef *)src, n,
			      LEVEL) != Z_OK)
			errx(1, "compress2 failed");
		len = zlen;
	}
	payload[i] = dst;
	plen[i] = round_sector(len) < round_sector(n) ? len : 0;
}

static void write_plain(int fd, long long i)
{
	if (pwrite(fd, data + i * PIECE, piece_len(i), i * PIECE) !=
	    piece_len(i))
		err(1, "pwrite at %lld", i * PIECE);
}

/*
 * Piece @i as one encoded extent, or plainly. Returns 0, or the errno of
 * a failed pwritev2.
 */
static int write_piece(int fd, long long i)
{
	struct encoded_iov enc = {
		.len = piece_len(i),
		.unencoded_len = piece_len(i),
		.unencoded_offset = 0,
		.compression = compression,
		.encryption = ENCODED_IOV_ENCRYPTION_NONE,
	};
	struct iovec iov[2] = { { .iov_base = &enc, .iov_len = sizeof(enc) } };
	ssize_t n;

	if (!encoded || !plen[i]) {
		write_plain(fd, i);
		return 0;
	}
	iov[1].iov_base = payload[i];
	iov[1].iov_len = plen[i];
	n = pwritev2(fd, iov, 2, i * PIECE, RWF_ENCODED);
	if (n < 0)
		return errno;
	if ((size_t)n != plen[i])
		errx(1, "pwritev2(RWF_ENCODED) at %lld wrote %zd of %zu",
		     i * PIECE, n, plen[i]);
	return 0;
}

static int open_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
		      (encoded ? O_ALLOW_ENCODED : 0), 0644);

	if (fd < 0)
		err(1, "open %s", path);
	return fd;
}

/*
 * Does this kernel take encoded writes? One piece written at offset 0 of
 * @path; the runs start over with a new file.
 */
static int probe(const char *path)
{
	long long i;
	int fd, e;

	for (i = 0; i < pieces() && !plen[i]; i++)
		;
	if (i == pieces())
		errx(1, "no piece of the data compresses");
	fd = open_file(path);
	e = write_piece(fd, i);
	close(fd);
	return e;
}

static long long free_bytes(const char *path)
{
	struct statvfs st;

	sync();
	if (statvfs(path, &st))
		err(1, "statvfs %s", path);
	return (long long)st.f_bfree * st.f_frsize;
}

/* One run: @m[NR_METRICS]. */
static void run(const char *path, const char *dir, long long *m)
{
	long long t, cpu, busy, space, i;
	int fd;

	if (unlink(path) && errno != ENOENT)
		err(1, "unlink %s", path);
	space = free_bytes(dir);
	busy = busy_ns();
	cpu = cpu_ns();
	t = now_ns();
	fd = open_file(path);
	for (i = 0; i < pieces(); i++) {
		errno = write_piece(fd, i);
		if (errno)
			err(1, "pwritev2(RWF_ENCODED) at %lld", i * PIECE);
	}
	if (fsync(fd) || close(fd))
		err(1, "fsync %s", path);
	m[WALL] = now_ns() - t;
	m[CPU] = cpu_ns() - cpu;
	m[BUSY] = busy_ns() - busy;
	m[SPACE] = space - free_bytes(dir);
}

/*
 * After the first run: the file read back with read() against the data,
 * and its stored size, the sum of what RWF_ENCODED reads return.
 */
static void check(const char *path, const char *label)
{
	static char buf[PIECE];
	struct encoded_iov enc;
	struct iovec iov[2] = {
		{ .iov_base = &enc, .iov_len = sizeof(enc) },
		{ .iov_base = buf, .iov_len = sizeof(buf) },
	};
	long long off = 0, stored = 0;
	int fd, same = 1;
	ssize_t n;

	drop_caches();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		err(1, "open %s", path);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (off + n > size || memcmp(buf, data + off, n))
			same = 0;
		off += n;
	}
	if (n < 0)
		err(1, "read %s", path);
	close(fd);
	info("written\t%s\t%s", label,
	     same && off == size ? "identical" : "differs");

	fd = open(path, O_RDONLY | O_CLOEXEC | O_ALLOW_ENCODED);
	if (fd < 0)
		err(1, "open %s", path);
	for (off = 0; (n = preadv2(fd, iov, 2, off, RWF_ENCODED)) > 0;
	     off += enc.len)
		stored += n;
	if (n < 0)
		err(1, "preadv2(RWF_ENCODED) %s", path);
	close(fd);
	info("stored\t%s\t%lld", label, stored);
}

static void map_source(const char *src)
{
	struct stat st;
	int fd = open(src, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st))
		err(1, "%s", src);
	size = st.st_size;
	data = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (!size || data == MAP_FAILED)
		errx(1, "%s: empty or not mappable", src);
	close(fd);
}

int main(int argc, char **argv)
{
	const char *cname, *method, *path;
	long long *v[NR_METRICS], m[NR_METRICS], i, t, bytes = 0;
	char label[64], *dir;
	int runs, r, k, e;

	if (argc == 4 && !strcmp(argv[1], "-w")) {
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			      0644);

		if (fd < 0)
			err(1, "%s", argv[2]);
		write_logs(fd, atoll(argv[3]) << 20, argv[2]);
		return close(fd);
	}
	if (argc != 6)
		errx(2, "usage: encoded_write -w SRC MIB | COMPRESSION METHOD SRC FILE RUNS");
	cname = argv[1];
	method = argv[2];
	path = argv[4];
	runs = atoi(argv[5]);
	if (!strcmp(cname, "zstd"))
		compression = ENCODED_IOV_COMPRESSION_BTRFS_ZSTD;
	else if (!strcmp(cname, "zlib"))
		compression = ENCODED_IOV_COMPRESSION_BTRFS_ZLIB;
	else if (strcmp(cname, "none"))
		errx(2, "COMPRESSION: none, zstd or zlib");
	encoded = !strcmp(method, "encoded");
	if (!encoded && strcmp(method, "write"))
		errx(2, "METHOD: write or encoded");
	if (encoded && !compression)
		errx(2, "an encoded write needs a compression");
	if (runs < 1)
		errx(2, "RUNS must be at least 1");
	snprintf(label, sizeof(label), "%s-%s", cname, method);
	dir = strdup(path);
	if (!dir)
		err(1, "strdup");
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = '\0';
	map_source(argv[3]);

	if (encoded) {
		payload = calloc(pieces(), sizeof(*payload));
		plen = calloc(pieces(), sizeof(*plen));
		if (!payload || !plen)
			err(1, "calloc");
		/* The first piece alone, to find out cheaply. */
		compress_piece(0);
		e = probe(path);
		if (e == EOPNOTSUPP) {
			info("unsupported\tencoded_write-%s\tpwritev2(RWF_ENCODED): %s",
			     cname, strerror(e));
			unlink(path);
			return 0;
		}
		errno = e;
		if (e)
			err(1, "pwritev2(RWF_ENCODED)");
		free(payload[0]);
		t = cpu_ns();
		for (i = 0; i < pieces(); i++)
			compress_piece(i);
		info("compress_ns\t%s\t%lld", cname, cpu_ns() - t);
		for (i = 0; i < pieces(); i++)
			bytes += plen[i] ? (long long)plen[i] : piece_len(i);
		info("payload\t%s\t%lld", cname, bytes);
	}
	for (k = 0; k < NR_METRICS; k++) {
		v[k] = calloc(runs, sizeof(long long));
		if (!v[k])
			err(1, "calloc");
	}
	for (r = 0; r < runs; r++) {
		run(path, dir, m);
		for (k = 0; k < NR_METRICS; k++)
			v[k][r] = m[k];
		if (!r)
			check(path, label);
	}
	unlink(path);
	for (k = 0; k < NR_METRICS; k++)
		summary("encwrite", cname, method, metric_name[k], v[k], runs);
	return 0;
}
