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
 *               to the file's size;
 *   encoded_uring, ioctl_uring
 *               the same ranges with one thread and io_uring (liburing)
 *               keeping 4 reads in flight, with IOSQE_ASYNC (see
 *               queue_read()): IORING_OP_READV with RWF_ENCODED, or
 *               IORING_OP_URING_CMD with the ioctl's command (mainline's
 *               btrfs since 6.12).
 *
 * A method the kernel lacks (O_ALLOW_ENCODED does not stick, the ioctl
 * or the io_uring request fails) is left out with an "info missing"
 * line. For each it
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
#include <liburing.h>
#include "bench.h"

/* Not in glibc's <fcntl.h>; the asm-generic value, as on x86. */
#ifndef O_ALLOW_ENCODED
#define O_ALLOW_ENCODED 040000000
#endif

#define CHUNK (1024 * 1024)
#define EXTENT_MAX (128 * 1024)
#define IN_FLIGHT 4

enum { WALL, CPU, BUSY, BYTES, CALLS, NR_METRICS };

/* How a method reads: read(), encoded reads by threads or by io_uring. */
enum { PLAIN, THREADS, URING };

static const struct method {
	const char *name;
	int how;
	bool ioctl;	/* BTRFS_IOC_ENCODED_READ, else preadv2(RWF_ENCODED) */
	int depth;	/* reads in flight */
} methods[] = {
	{ "read", PLAIN, false, 1 },
	{ "encoded", THREADS, false, 1 },
	{ "encoded_x4", THREADS, false, IN_FLIGHT },
	{ "encoded_uring", URING, false, IN_FLIGHT },
	{ "ioctl", THREADS, true, 1 },
	{ "ioctl_x4", THREADS, true, IN_FLIGHT },
	{ "ioctl_uring", URING, true, IN_FLIGHT },
};
#define NR_METHODS ARRAY_SIZE(methods)
#define READ 0
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

/* What one reader (a thread, or the io_uring loop) did, and what it found. */
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

/* Take the next range no reader took yet into [*@off, *@end): false if none. */
static bool take_range(struct reader *r, off_t *off, off_t *end)
{
	int i = __atomic_fetch_add(&r->ranges->next, 1, __ATOMIC_RELAXED);

	if (i >= r->ranges->n)
		return false;
	*off = r->ranges->start[i];
	*end = r->ranges->start[i + 1];
	return true;
}

/*
 * Account one encoded read at *@off of the range ending at *@end: it
 * returned @n (bytes, or -errno) standing for @len bytes of the file.
 * Returns NULL with *@off advanced by @len, or what is wrong: reads
 * advance by len exactly to the range's end (the next extent FIEMAP
 * listed), but for the one range of a single reader, which ends where a
 * read returns 0 (the end of the file).
 */
static const char *advance(struct reader *r, off_t *off, off_t *end,
			   ssize_t n, unsigned long long len)
{
	r->calls++;
	if (n < 0) {
		r->err = -n;
		return "read failed";
	}
	if (!n) {
		if (r->ranges->n > 1)
			return "end of file inside a range";
		*end = *off;
		return NULL;
	}
	if (!len)
		return "data with a len of 0";
	r->bytes += n;
	r->covered += len;
	*off += len;
	if (*off > *end)
		return "a read past the next extent's start";
	return NULL;
}

static void fail_at(struct reader *r, off_t off, const char *what)
{
	r->error = what;
	r->error_at = off;
}

/* A reader thread: takes ranges until none is left, reads each extent by extent. */
static void *reader(void *arg)
{
	static __thread char buf[EXTENT_MAX];
	struct reader *r = arg;
	unsigned long long len, uoff;
	const char *what;
	off_t off, end;
	ssize_t n;

	while (take_range(r, &off, &end)) {
		while (off < end) {
			n = read_extent(r->fd, r->use_ioctl, off, buf, &len, &uoff);
			what = advance(r, &off, &end, n, len);
			if (what) {
				fail_at(r, off, what);
				return NULL;
			}
		}
	}
	return NULL;
}

/* One of the reads io_uring keeps in flight: where it is, and its buffers. */
struct slot {
	off_t off, end;
	struct encoded_iov enc;
	struct iovec iov[2];
	struct btrfs_ioctl_encoded_io_args args;
	char buf[EXTENT_MAX];
};

/*
 * Queue the encoded read at @s->off: the args of a uring_cmd are read
 * when the kernel issues it and written back when it completes, so each
 * slot has its own. IOSQE_ASYNC, as a tool should set it: an encoded read
 * may block, so it ends up in an io-wq worker anyway (RWF_ENCODED always,
 * the uring_cmd when it would wait); without the flag, io-wq starts
 * another worker for a file's reads only while none is running, and reads
 * that keep a CPU busy (under TCG, all of them) went one at a time: no
 * faster than one preadv2() after another.
 */
static void queue_read(struct io_uring *ring, int fd, bool use_ioctl,
		       struct slot *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		errx(1, "io_uring: no free SQE");
	s->iov[0] = (struct iovec){ .iov_base = &s->enc, .iov_len = sizeof(s->enc) };
	s->iov[1] = (struct iovec){ .iov_base = s->buf, .iov_len = EXTENT_MAX };
	if (use_ioctl) {
		s->args = (struct btrfs_ioctl_encoded_io_args){
			.iov = &s->iov[1], .iovcnt = 1, .offset = s->off,
		};
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, &s->args, 0, 0);
		sqe->cmd_op = BTRFS_IOC_ENCODED_READ;
	} else {
		io_uring_prep_readv(sqe, fd, s->iov, 2, s->off);
		sqe->rw_flags = RWF_ENCODED;
	}
	io_uring_sqe_set_data(sqe, s);
	sqe->flags |= IOSQE_ASYNC;
}

/* Wait for a completion: its slot, and the read's result in *@n. */
static struct slot *reap_read(struct io_uring *ring, ssize_t *n)
{
	struct io_uring_cqe *cqe;
	struct slot *s;
	int ret;

	ret = io_uring_submit_and_wait(ring, 1);
	if (ret >= 0)
		ret = io_uring_peek_cqe(ring, &cqe);
	if (ret < 0) {
		errno = -ret;
		err(1, "io_uring");
	}
	s = io_uring_cqe_get_data(cqe);
	*n = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return s;
}

/*
 * The io_uring reader: one thread keeping @depth reads in flight, each
 * slot reading a range extent by extent, as a reader thread does, then
 * taking the next range.
 */
static void read_uring(struct reader *r, int depth)
{
	static struct slot slot[IN_FLIGHT];
	struct io_uring ring;
	const char *what;
	int busy = 0, i;
	struct slot *s;
	ssize_t n;

	i = io_uring_queue_init(depth, &ring, 0);
	if (i) {
		errno = -i;
		err(1, "io_uring_queue_init");
	}
	for (i = 0; i < depth && take_range(r, &slot[i].off, &slot[i].end); i++) {
		queue_read(&ring, r->fd, r->use_ioctl, &slot[i]);
		busy++;
	}
	while (busy && !r->error) {
		s = reap_read(&ring, &n);
		what = advance(r, &s->off, &s->end,
			       n, r->use_ioctl ? s->args.len : s->enc.len);
		if (what)
			fail_at(r, s->off, what);
		else if (s->off < s->end || take_range(r, &s->off, &s->end))
			queue_read(&ring, r->fd, r->use_ioctl, s);
		else
			busy--;
	}
	io_uring_queue_exit(&ring);
}

/*
 * The ranges of @fd for @depth reads in flight: for one, from 0 to
 * wherever the reads find the end of the file; else one per extent
 * FIEMAP lists (each also takes any hole after its extent), found as a
 * tool would before it hands them out, the last ending at the file's size.
 */
static void file_ranges(int fd, int depth, struct ranges *rg)
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
	while (depth > 1 && q.fm.fm_start < (__u64)size) {
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
	rg->start[rg->n] = depth > 1 ? size : LLONG_MAX;
}

/* Read all of @fd with encoded reads, as method @mt does. */
static void read_encoded(int fd, const struct method *mt, long long *m,
			 long long *file_bytes)
{
	struct reader r[IN_FLIGHT] = { 0 };
	int t, readers = mt->how == URING ? 1 : mt->depth;
	struct ranges rg;

	file_ranges(fd, mt->depth, &rg);
	for (t = 0; t < readers; t++) {
		r[t].fd = fd;
		r[t].use_ioctl = mt->ioctl;
		r[t].ranges = &rg;
		if (mt->how == URING) {
			read_uring(&r[t], mt->depth);
		} else if (readers > 1) {
			errno = pthread_create(&r[t].thread, NULL, reader, &r[t]);
			if (errno)
				err(1, "pthread_create");
		} else {
			reader(&r[t]);
		}
	}
	*file_bytes = 0;
	for (t = 0; t < readers; t++) {
		if (readers > 1)
			pthread_join(r[t].thread, NULL);
		if (r[t].error)
			errx(1, "%s at %lld: %s%s%s", mt->name,
			     (long long)r[t].error_at, r[t].error,
			     r[t].err ? ": " : "",
			     r[t].err ? strerror(r[t].err) : "");
		m[BYTES] += r[t].bytes;
		m[CALLS] += r[t].calls;
		*file_bytes += r[t].covered;
	}
	free(rg.start);
}

/*
 * Whether the kernel has method @mt for the file at @path: the
 * descriptor keeps O_ALLOW_ENCODED, and a first read at 0 that way works.
 */
static bool have(const char *path, const struct method *mt)
{
	unsigned long long len, uoff;
	static struct slot s;
	struct io_uring ring;
	ssize_t n;
	int fd;

	if (mt->how == PLAIN)
		return true;
	fd = open(path, O_RDONLY | O_CLOEXEC | (mt->ioctl ? 0 : O_ALLOW_ENCODED));
	if (fd < 0)
		err(1, "open %s", path);
	if (!mt->ioctl && !(fcntl(fd, F_GETFL) & O_ALLOW_ENCODED)) {
		n = -EINVAL;
	} else if (mt->how == URING) {
		n = io_uring_queue_init(1, &ring, 0);
		if (!n) {
			s.off = 0;
			queue_read(&ring, fd, mt->ioctl, &s);
			reap_read(&ring, &n);
			io_uring_queue_exit(&ring);
		}
	} else {
		n = read_extent(fd, mt->ioctl, 0, s.buf, &len, &uoff);
	}
	close(fd);
	return n >= 0;
}

/* One cold read of @path by method @mt; fills @m[NR_METRICS]. */
static long long measure(const char *path, const struct method *mt, long long *m)
{
	long long t, cpu, busy, file_bytes;
	int fd;

	drop_caches();
	fd = open(path, O_RDONLY | O_CLOEXEC |
		  (mt->how != PLAIN && !mt->ioctl ? O_ALLOW_ENCODED : 0));
	if (fd < 0)
		err(1, "open %s", path);
	m[BYTES] = m[CALLS] = 0;
	busy = busy_ns();
	cpu = cpu_ns();
	t = now_ns();
	if (mt->how == PLAIN)
		read_plain(fd, m, &file_bytes);
	else
		read_encoded(fd, mt, m, &file_bytes);
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
		on[j] = have(path, &methods[j]);
		if (!on[j])
			info("missing\t%s\t%s", label, methods[j].name);
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
			size[j] = measure(path, &methods[j], m);
			for (k = 0; k < NR_METRICS; k++)
				v[j][k][i] = m[k];
			if (size[j] != size[READ])
				errx(1, "read saw %lld bytes, %s covered %lld",
				     size[READ], methods[j].name, size[j]);
		}
	}
	info("filesize\t%s\t%lld", label, size[READ]);
	for (j = 0; j < NR_METHODS; j++)
		for (k = 0; on[j] && k < NR_METRICS; k++)
			summary("encoded", label, methods[j].name,
				metric_name[k], v[j][k], runs);
	return 0;
}
