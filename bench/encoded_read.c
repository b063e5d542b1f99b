// SPDX-License-Identifier: GPL-2.0
/*
 * encoded_read: reading a compressed btrfs file as stored, with
 * preadv2(RWF_ENCODED), against reading it with read(), from a cold page
 * cache.
 *
 *   encoded_read -w FILE MIB        write MIB MiB of log-like text to FILE
 *   encoded_read LABEL FILE RUNS    measure, RUNS times each way
 *
 * Before each read the caches are dropped (root only). "read" reads the
 * file in 1 MiB chunks; "encoded" opens it with O_ALLOW_ENCODED and reads
 * one extent per call into a struct encoded_iov and a 128 KiB buffer,
 * advancing by encoded_iov.len until 0. For both it measures the wall
 * time, the CPU time of the process (getrusage), the busy CPU time of the
 * whole machine (/proc/stat: btrfs decompresses and checks data in kernel
 * workers, which the process's rusage does not see), the bytes copied to
 * the process and the calls made. Prints (see bench.h for the format):
 *
 *   encoded LABEL METHOD METRIC RUNS MIN P10 MEDIAN P90 P99 MAX
 *
 * with METRIC wall_ns, cpu_ns, busy_ns, bytes or calls.
 */
#define _GNU_SOURCE
#include <err.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include <linux/fs.h>
#include "bench.h"

/* Not in glibc's <fcntl.h>; the asm-generic value, as on x86. */
#ifndef O_ALLOW_ENCODED
#define O_ALLOW_ENCODED 040000000
#endif

#define CHUNK (1024 * 1024)
#define EXTENT_MAX (128 * 1024)

enum { READ, ENCODED, NR_METHODS };
enum { WALL, CPU, BUSY, BYTES, CALLS, NR_METRICS };

static const char * const method_name[NR_METHODS] = { "read", "encoded" };
static const char * const metric_name[NR_METRICS] = {
	"wall_ns", "cpu_ns", "busy_ns", "bytes", "calls",
};

/* Web server access log lines: compressible about as much as real ones. */
static void write_data(const char *path, long mib)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		err(1, "%s", path);
	write_logs(fd, mib * CHUNK, path);
	if (fsync(fd) || close(fd))
		err(1, "fsync %s", path);
}

/* Read all of @fd with read(); the bytes and calls go to @m. */
static void read_plain(int fd, long long *m, long long *file_bytes)
{
	static char buf[CHUNK];
	ssize_t n;

	do {
		n = read(fd, buf, sizeof(buf));
		if (n < 0)
			err(1, "read");
		m[BYTES] += n;
		m[CALLS]++;
	} while (n > 0);
	*file_bytes = m[BYTES];
}

/* Read all of @fd with RWF_ENCODED, one extent per call. */
static void read_encoded(int fd, long long *m, long long *file_bytes)
{
	static char buf[EXTENT_MAX];
	struct encoded_iov enc;
	struct iovec iov[2] = {
		{ .iov_base = &enc, .iov_len = sizeof(enc) },
		{ .iov_base = buf, .iov_len = sizeof(buf) },
	};
	off_t off = 0;
	ssize_t n;

	for (;;) {
		n = preadv2(fd, iov, 2, off, RWF_ENCODED);
		if (n < 0)
			err(1, "preadv2(RWF_ENCODED) at %lld", (long long)off);
		m[CALLS]++;
		if (!n)
			break;
		m[BYTES] += n;
		off += enc.len;
	}
	*file_bytes = off;
}

/* One cold read of @path by @method; fills @m[NR_METRICS]. */
static long long measure(const char *path, int method, long long *m)
{
	long long t, cpu, busy, file_bytes;
	int fd;

	drop_caches();
	fd = open(path, O_RDONLY | O_CLOEXEC |
		  (method == ENCODED ? O_ALLOW_ENCODED : 0));
	if (fd < 0)
		err(1, "open %s", path);
	m[BYTES] = m[CALLS] = 0;
	busy = busy_ns();
	cpu = cpu_ns();
	t = now_ns();
	if (method == ENCODED)
		read_encoded(fd, m, &file_bytes);
	else
		read_plain(fd, m, &file_bytes);
	m[WALL] = now_ns() - t;
	m[CPU] = cpu_ns() - cpu;
	m[BUSY] = busy_ns() - busy;
	close(fd);
	return file_bytes;
}

int main(int argc, char **argv)
{
	long long *v[NR_METHODS][NR_METRICS], m[NR_METRICS], size[NR_METHODS];
	const char *label, *path;
	int runs, i, j, k;

	if (argc == 4 && !strcmp(argv[1], "-w")) {
		write_data(argv[2], atol(argv[3]));
		return 0;
	}
	if (argc != 4)
		errx(2, "usage: encoded_read -w FILE MIB | LABEL FILE RUNS");
	label = argv[1];
	path = argv[2];
	runs = atoi(argv[3]);
	if (runs < 1)
		errx(2, "RUNS must be at least 1");

	for (j = 0; j < NR_METHODS; j++)
		for (k = 0; k < NR_METRICS; k++) {
			v[j][k] = calloc(runs, sizeof(long long));
			if (!v[j][k])
				err(1, "calloc");
		}
	for (i = 0; i < runs; i++) {
		for (j = 0; j < NR_METHODS; j++) {
			size[j] = measure(path, j, m);
			for (k = 0; k < NR_METRICS; k++)
				v[j][k][i] = m[k];
		}
		if (size[READ] != size[ENCODED])
			errx(1, "read saw %lld bytes, encoded reads covered %lld",
			     size[READ], size[ENCODED]);
	}
	info("filesize\t%s\t%lld", label, size[READ]);
	for (j = 0; j < NR_METHODS; j++)
		for (k = 0; k < NR_METRICS; k++)
			summary("encoded", label, method_name[j],
				metric_name[k], v[j][k], runs);
	return 0;
}
