// SPDX-License-Identifier: GPL-2.0
/*
 * encoded_read: reading a compressed btrfs file as stored against reading
 * it with read(), from a cold page cache.
 *
 *   encoded_read -w FILE MIB        write MIB MiB of log-like text to FILE
 *   encoded_read LABEL FILE RUNS    measure, RUNS times each way
 *
 * Before each read the caches are dropped (root only). The methods:
 *
 *   read        read() in 1 MiB chunks;
 *   encoded     preadv2(RWF_ENCODED) on a descriptor opened with
 *               O_ALLOW_ENCODED, one extent per call into a struct
 *               encoded_iov and a 128 KiB buffer, advancing by len until 0;
 *   ioctl       the same with BTRFS_IOC_ENCODED_READ (mainline's ioctl,
 *               which Debian's stock kernels have too);
 *   encoded_x4, ioctl_x4
 *               the same with 4 threads, so that 4 reads are in flight:
 *               the extents FIEMAP lists (listed inside the timing, as a
 *               tool would), each taken by the next free thread and read
 *               from its start to the next one's; the lengths must add up
 *               to the file's size.
 *
 * A method the kernel lacks (O_ALLOW_ENCODED does not stick, the ioctl
 * fails) is left out with an "info missing" line. For each it
 * measures the wall time, the CPU time of the process (getrusage, all
 * threads), the busy CPU time of the whole machine (/proc/stat: btrfs
 * decompresses and checks data in kernel workers, which the process's
 * rusage does not see), the bytes copied to the process and the calls
 * made. Prints (see bench.h for the format):
 *
 *   encoded LABEL METHOD METRIC RUNS MIN P10 MEDIAN P90 P99 MAX
 *
 * with METRIC wall_ns, cpu_ns, busy_ns, bytes or calls.
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <linux/btrfs.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include "bench.h"

/* Not in glibc's <fcntl.h>; the asm-generic value, as on x86. */
#ifndef O_ALLOW_ENCODED
#define O_ALLOW_ENCODED 040000000
#endif

#define CHUNK (1024 * 1024)
#define EXTENT_MAX (128 * 1024)
#define THREADS 4

enum { READ, ENCODED, ENCODED_X4, IOCTL, IOCTL_X4, NR_METHODS };
enum { WALL, CPU, BUSY, BYTES, CALLS, NR_METRICS };

static const char * const method_name[NR_METHODS] = {
	"read", "encoded", "encoded_x4", "ioctl", "ioctl_x4",
};
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

/*
 * One encoded read of the extent at @off into @buf, through the ioctl or
 * RWF_ENCODED: the bytes it returned (0 at the end of the file, -errno),
 * and in *@len and *@uoff the part of the file it stands for.
 */
static ssize_t read_extent(int fd, bool use_ioctl, off_t off, char *buf,
			   unsigned long long *len, unsigned long long *uoff)
{
	struct encoded_iov enc;
	ssize_t n;

	if (use_ioctl) {
		struct iovec iov = { .iov_base = buf, .iov_len = EXTENT_MAX };
		struct btrfs_ioctl_encoded_io_args a = {
			.iov = &iov, .iovcnt = 1, .offset = off,
		};

		n = ioctl(fd, BTRFS_IOC_ENCODED_READ, &a);
		*len = a.len;
		*uoff = a.unencoded_offset;
	} else {
		struct iovec iov[2] = {
			{ .iov_base = &enc, .iov_len = sizeof(enc) },
			{ .iov_base = buf, .iov_len = EXTENT_MAX },
		};

		n = preadv2(fd, iov, 2, off, RWF_ENCODED);
		*len = enc.len;
		*uoff = enc.unencoded_offset;
	}
	return n < 0 ? -errno : n;
}

/*
 * The ranges the readers share: [start[i], start[i + 1]) for i < n, with
 * start[n] the file's size; next is the first range no reader took yet.
 */
struct ranges {
	off_t *start;
	int n;
	int next;
};

/* What one reader thread does, and what it found. */
struct reader {
	pthread_t thread;
	int fd;
	bool use_ioctl;
	struct ranges *ranges;
	long long bytes, calls, covered;
	const char *error;	/* what went wrong, with err (an errno) or not */
	int err;
	off_t error_at;
};

static void *fail_at(struct reader *r, off_t off, const char *what, int err)
{
	r->error = what;
	r->err = err;
	r->error_at = off;
	return NULL;
}

/*
 * Take ranges until none is left and read each from its start, extent by
 * extent, advancing by len: up to the end of the file (a read returning
 * 0) for the one range of a single reader, else exactly to the start of
 * the next range (the next extent FIEMAP listed). The lens add up to what
 * the reads covered.
 */
static void *reader(void *arg)
{
	struct reader *r = arg;
	static __thread char buf[EXTENT_MAX];
	unsigned long long len, uoff;
	off_t off, end;
	ssize_t n;
	int i;

	while ((i = __atomic_fetch_add(&r->ranges->next, 1, __ATOMIC_RELAXED)) <
	       r->ranges->n) {
		off = r->ranges->start[i];
		end = r->ranges->start[i + 1];
		while (off < end) {
			n = read_extent(r->fd, r->use_ioctl, off, buf, &len, &uoff);
			r->calls++;
			if (n < 0)
				return fail_at(r, off, "read failed", -n);
			if (!n) {
				if (r->ranges->n > 1)
					return fail_at(r, off, "end of file inside a range", 0);
				return NULL;
			}
			if (!len)
				return fail_at(r, off, "data with a len of 0", 0);
			r->bytes += n;
			r->covered += len;
			off += len;
		}
		if (off != end)
			return fail_at(r, off, "a read past the next extent's start", 0);
	}
	return NULL;
}

/*
 * The ranges of @fd for @threads readers: for one, from 0 to wherever the
 * reads find the end of the file; else one per extent FIEMAP lists (each
 * also takes any hole after its extent), found as a tool would before it
 * hands them out, the last ending at the file's size.
 */
static void file_ranges(int fd, int threads, struct ranges *rg)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent fe[256];
	} q;
	off_t size = lseek(fd, 0, SEEK_END);
	int cap = 16, i;

	rg->start = malloc(cap * sizeof(off_t));
	rg->n = rg->next = 0;
	if (!rg->start || size < 0)
		err(1, "file_ranges");
	rg->start[rg->n++] = 0;
	memset(&q, 0, sizeof(q));
	q.fm.fm_length = size;
	while (threads > 1 && q.fm.fm_start < (__u64)size) {
		q.fm.fm_extent_count = ARRAY_SIZE(q.fe);
		q.fm.fm_mapped_extents = 0;
		if (ioctl(fd, FS_IOC_FIEMAP, &q.fm))
			err(1, "FIEMAP");
		for (i = 0; i < (int)q.fm.fm_mapped_extents; i++) {
			off_t at = q.fe[i].fe_logical;

			if (at <= rg->start[rg->n - 1] || at >= size)
				continue;
			if (rg->n + 1 >= cap) {
				cap *= 2;
				rg->start = realloc(rg->start, cap * sizeof(off_t));
				if (!rg->start)
					err(1, "realloc");
			}
			rg->start[rg->n++] = at;
		}
		if (q.fm.fm_mapped_extents < q.fm.fm_extent_count ||
		    q.fe[q.fm.fm_mapped_extents - 1].fe_flags & FIEMAP_EXTENT_LAST)
			break;
		i = q.fm.fm_mapped_extents - 1;
		q.fm.fm_start = q.fe[i].fe_logical + q.fe[i].fe_length;
		q.fm.fm_length = size - q.fm.fm_start;
	}
	rg->start[rg->n] = threads > 1 ? size : LLONG_MAX;
}

/* Read all of @fd with encoded reads, by @threads threads. */
static void read_encoded(int fd, bool use_ioctl, int threads, long long *m,
			 long long *file_bytes)
{
	struct reader r[THREADS] = { 0 };
	struct ranges rg;
	int t;

	file_ranges(fd, threads, &rg);
	for (t = 0; t < threads; t++) {
		r[t].fd = fd;
		r[t].use_ioctl = use_ioctl;
		r[t].ranges = &rg;
		if (threads > 1) {
			errno = pthread_create(&r[t].thread, NULL, reader, &r[t]);
			if (errno)
				err(1, "pthread_create");
		} else {
			reader(&r[t]);
		}
	}
	*file_bytes = 0;
	for (t = 0; t < threads; t++) {
		if (threads > 1)
			pthread_join(r[t].thread, NULL);
		if (r[t].error)
			errx(1, "%s at %lld: %s%s%s", use_ioctl ?
			     "BTRFS_IOC_ENCODED_READ" : "preadv2(RWF_ENCODED)",
			     (long long)r[t].error_at, r[t].error,
			     r[t].err ? ": " : "",
			     r[t].err ? strerror(r[t].err) : "");
		m[BYTES] += r[t].bytes;
		m[CALLS] += r[t].calls;
		*file_bytes += r[t].covered;
	}
	free(rg.start);
}

/* Whether the kernel has @method for the file at @path. */
static bool have(const char *path, int method)
{
	unsigned long long len, uoff;
	static char buf[EXTENT_MAX];
	bool ok;
	int fd;

	if (method == READ)
		return true;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_ALLOW_ENCODED);
	if (fd < 0)
		err(1, "open %s", path);
	if (method == IOCTL || method == IOCTL_X4)
		ok = read_extent(fd, true, 0, buf, &len, &uoff) >= 0;
	else
		ok = fcntl(fd, F_GETFL) & O_ALLOW_ENCODED;
	close(fd);
	return ok;
}

/* One cold read of @path by @method; fills @m[NR_METRICS]. */
static long long measure(const char *path, int method, long long *m)
{
	long long t, cpu, busy, file_bytes;
	int fd;

	drop_caches();
	fd = open(path, O_RDONLY | O_CLOEXEC |
		  (method == ENCODED || method == ENCODED_X4 ? O_ALLOW_ENCODED : 0));
	if (fd < 0)
		err(1, "open %s", path);
	m[BYTES] = m[CALLS] = 0;
	busy = busy_ns();
	cpu = cpu_ns();
	t = now_ns();
	if (method == READ)
		read_plain(fd, m, &file_bytes);
	else
		read_encoded(fd, method == IOCTL || method == IOCTL_X4,
			     method == ENCODED_X4 || method == IOCTL_X4 ?
			     THREADS : 1, m, &file_bytes);
	m[WALL] = now_ns() - t;
	m[CPU] = cpu_ns() - cpu;
	m[BUSY] = busy_ns() - busy;
	close(fd);
	return file_bytes;
}

int main(int argc, char **argv)
{
	long long *v[NR_METHODS][NR_METRICS], m[NR_METRICS], size[NR_METHODS];
	bool on[NR_METHODS];
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

	for (j = 0; j < NR_METHODS; j++) {
		on[j] = have(path, j);
		if (!on[j])
			info("missing\t%s\t%s", label, method_name[j]);
		for (k = 0; k < NR_METRICS; k++) {
			v[j][k] = calloc(runs, sizeof(long long));
			if (!v[j][k])
				err(1, "calloc");
		}
	}
	for (i = 0; i < runs; i++) {
		for (j = 0; j < NR_METHODS; j++) {
			if (!on[j])
				continue;
			size[j] = measure(path, j, m);
			for (k = 0; k < NR_METRICS; k++)
				v[j][k][i] = m[k];
			if (size[j] != size[READ])
				errx(1, "read saw %lld bytes, %s covered %lld",
				     size[READ], method_name[j], size[j]);
		}
	}
	info("filesize\t%s\t%lld", label, size[READ]);
	for (j = 0; j < NR_METHODS; j++)
		for (k = 0; on[j] && k < NR_METRICS; k++)
			summary("encoded", label, method_name[j],
				metric_name[k], v[j][k], runs);
	return 0;
}
