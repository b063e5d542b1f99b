// SPDX-License-Identifier: GPL-2.0
/*
 * powercut: the guest side of scripts/powercut.
 *
 *   powercut write CYCLE DIR    encoded writes + fsync until killed
 *   powercut verify ACKED DIR   check what survived the kill
 *
 * "write" stores 128 KiB records as zstd and zlib encoded extents (some of
 * them only part of their extent, at a non-zero unencoded_offset), each
 * followed by fsync(), and prints "acked CYCLE SEQ" once fsync() returned:
 * the host keeps the console, so the lines that reached it are the records
 * the kernel promised to keep.  The host kills the guest at a random
 * moment.
 *
 * "verify" runs after a reboot and mount (log replay).  Every record listed
 * in the ACKED file ("acked CYCLE SEQ" lines) must read back exactly.  The
 * records after the last acked one of each cycle were in flight: each must
 * read back whole or not at all (zeroes or beyond the end of the file),
 * never a mix and never EIO.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/fs.h>
#include <zlib.h>
#include <zstd.h>

#ifndef O_ALLOW_ENCODED
#define O_ALLOW_ENCODED 040000000
#endif

#define RECORD (128 * 1024)
#define FILES 4
/* Records after the last acked one that may have reached the disk. */
#define IN_FLIGHT 2

static char data[RECORD], zbuf[RECORD * 2], rbuf[RECORD];

static void die(const char *what)
{
	fprintf(stderr, "powercut: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* The record: compressible text that names its cycle and sequence number. */
static void fill(int cycle, int seq)
{
	unsigned int x = cycle * 1000003u + seq;
	int i, n = 0;

	while (n < RECORD) {
		x = x * 1103515245u + 12345u;
		n += snprintf(data + n, RECORD - n,
			      "cycle %d record %d line %d value %u\n",
			      cycle, seq, n / 40, (x >> 8) % 1000);
	}
	for (i = 0; i < 64; i++) {	/* some bytes that do not repeat */
		x += 7919;
		data[(x >> 3) % RECORD] ^= (char)x;
	}
}

/* Where a record lives: file and offset, and how much of it is written. */
static void place(const char *dir, int cycle, int seq, char *path,
		  off_t *off, size_t *len, size_t *skip)
{
	snprintf(path, 256, "%s/c%d-f%d", dir, cycle, seq % FILES);
	*off = (off_t)(seq / FILES) * RECORD;
	/* Every third record keeps only the middle of its extent. */
	*skip = seq % 3 == 2 ? 32 * 1024 : 0;
	*len = seq % 3 == 2 ? 64 * 1024 : RECORD;
}

static int do_write(int cycle, const char *dir)
{
	int fds[FILES] = { -1, -1, -1, -1 };
	char path[256];
	int seq;

	printf("writing cycle %d\n", cycle);
	fflush(stdout);
	for (seq = 0;; seq++) {
		struct encoded_iov enc = { .unencoded_len = RECORD };
		struct iovec iov[2];
		size_t len, skip, zlen;
		off_t off;
		int fd;

		fill(cycle, seq);
		place(dir, cycle, seq, path, &off, &len, &skip);
		fd = fds[seq % FILES];
		if (fd < 0) {
			fd = open(path, O_RDWR | O_CREAT | O_ALLOW_ENCODED |
				  O_CLOEXEC, 0644);
			if (fd < 0)
				die(path);
			fds[seq % FILES] = fd;
		}
		if (seq % 2) {
			uLongf zl = sizeof(zbuf);

			if (compress2((Bytef *)zbuf, &zl, (Bytef *)data,
				      RECORD, 6) != Z_OK)
				die("compress2");
			zlen = zl;
			enc.compression = ENCODED_IOV_COMPRESSION_BTRFS_ZLIB;
		} else {
			zlen = ZSTD_compress(zbuf, sizeof(zbuf), data, RECORD, 3);
			if (ZSTD_isError(zlen))
				die("ZSTD_compress");
			enc.compression = ENCODED_IOV_COMPRESSION_BTRFS_ZSTD;
		}
		enc.len = len;
		enc.unencoded_offset = skip;
		iov[0].iov_base = &enc;
		iov[0].iov_len = sizeof(enc);
		iov[1].iov_base = zbuf;
		iov[1].iov_len = zlen;
		if (pwritev2(fd, iov, 2, off, RWF_ENCODED) != (ssize_t)zlen)
			die("pwritev2");
		if (fsync(fd))
			die("fsync");
		printf("acked %d %d\n", cycle, seq);
		fflush(stdout);
	}
	return 0;
}

/* 0: the record reads back whole; 1: it is absent; -1: anything else. */
static int check(const char *dir, int cycle, int seq)
{
	size_t len, skip, i;
	char path[256];
	off_t off;
	ssize_t n;
	int fd;

	fill(cycle, seq);
	place(dir, cycle, seq, path, &off, &len, &skip);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 1 : -1;
	n = pread(fd, rbuf, len, off);
	close(fd);
	if (n < 0) {
		fprintf(stderr, "cycle %d record %d: read: %s\n", cycle, seq,
			strerror(errno));
		return -1;
	}
	if ((size_t)n == len && !memcmp(rbuf, data + skip, len))
		return 0;
	for (i = 0; i < (size_t)n; i++)
		if (rbuf[i])
			break;
	if (i == (size_t)n)
		return 1;
	fprintf(stderr, "cycle %d record %d: %zd bytes, not the record\n",
		cycle, seq, n);
	return -1;
}

static int do_verify(const char *acked, const char *dir)
{
	int last[1024], cycle, seq, bad = 0, kept = 0, lost = 0, landed = 0;
	FILE *f = fopen(acked, "r");
	char line[128];

	if (!f)
		die(acked);
	memset(last, -1, sizeof(last));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "acked %d %d", &cycle, &seq) != 2 ||
		    cycle < 0 || cycle >= 1024)
			continue;
		if (seq > last[cycle])
			last[cycle] = seq;
	}
	fclose(f);
	for (cycle = 0; cycle < 1024; cycle++) {
		for (seq = 0; seq <= last[cycle]; seq++) {
			if (check(dir, cycle, seq)) {
				fprintf(stderr, "cycle %d record %d was acked\n",
					cycle, seq);
				bad++;
			} else {
				kept++;
			}
		}
		if (last[cycle] < 0)
			continue;
		for (; seq <= last[cycle] + IN_FLIGHT; seq++) {
			int r = check(dir, cycle, seq);

			if (r < 0)
				bad++;
			else if (r)
				lost++;
			else
				landed++;
		}
	}
	printf("verify: %d acked records intact, %d in flight landed whole, %d absent, %d bad\n",
	       kept, landed, lost, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "write"))
		return do_write(atoi(argv[2]), argv[3]);
	if (argc == 4 && !strcmp(argv[1], "verify"))
		return do_verify(argv[2], argv[3]);
	fprintf(stderr, "usage: powercut write CYCLE DIR | verify ACKED DIR\n");
	return 2;
}
