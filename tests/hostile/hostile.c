// SPDX-License-Identifier: GPL-2.0
/*
 * hostile: random and boundary arguments for the interfaces of the series,
 * every result checked against what the documentation (the manual pages in
 * man/ and the series' Documentation/filesystems/encoded_io.rst) allows.
 *
 *   hostile [-m] [-s SEED] [-t SECONDS] [-n CALLS] [-v] [DIR]
 *   hostile -T                     print the table of allowed results
 *
 * It calls epoll_pwait2() (raw system call 441), close_range() and
 * open/openat/openat2, fcntl(F_SETFL), preadv2() and pwritev2() with
 * O_ALLOW_ENCODED and RWF_ENCODED, with arguments drawn from a generator
 * seeded by SEED: the same seed gives the same sequence of arguments
 * (threads and timers make the interleaving, and so a few results, vary).
 * It stops after SECONDS (default 60) or CALLS calls, whichever comes first.
 *
 * Each call's arguments select rules from the table below (rules[]): a
 * "must" rule is an error the call has to fail with (when several apply,
 * any of their errors will do, unless the documentation fixes the order),
 * a "may" rule an error it is allowed to fail with. A call to which no
 * "must" rule applies has to succeed, and its result is checked too: the
 * events epoll returns and the time it waited, the descriptors close_range
 * closed or marked, the struct encoded_iov and data of an encoded read,
 * the file after an encoded write, and that a failed call changed nothing.
 *
 * The encoded I/O runs on a scratch btrfs that it makes (a sparse image in
 * a new directory under /tmp, mkfs.btrfs, mount -o loop,compress-force=zstd)
 * or, given DIR, in a directory of a mounted btrfs; and on other files:
 * tmpfs, the root file system, /proc, /dev/null, a pipe, a socket, a
 * directory. Needs root.
 *
 * -m: the kernel is the mainline series' (Linux 7.2): the RWF_ flags Linux
 * gained since 5.10 are known there (rules marked -m), and btrfs' own check
 * of the payload size is mainline's (smaller than unencoded_len).
 *
 * Prints the calls per system call with their results, and each violation
 * as "VIOLATION seed=S call=N ..." (the first few of each kind); exits 1 if
 * there was any, 2 on a usage or setup error, and 3 if no encoded read or
 * no encoded write succeeded: a kernel without encoded I/O, or without
 * btrfs encoded writes, makes every encoded call fail as the rules allow
 * and must not pass for that (nor a run too short to get one through).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../lib/enc_iov.h"
#include "../lib/rng.h"

/* The interface under test (x86 values; <linux/fs.h> of the series agrees). */
#ifndef O_ALLOW_ENCODED
#define O_ALLOW_ENCODED 040000000
#endif
#define HOST_RWF_HIPRI		0x01
#define HOST_RWF_DSYNC		0x02
#define HOST_RWF_SYNC		0x04
#define HOST_RWF_NOWAIT		0x08
#define HOST_RWF_APPEND		0x10
#define HOST_RWF_ENCODED	0x200
/* Flags Linux 5.10 does not have; the mainline series' kernel does (-m). */
#define HOST_RWF_NOAPPEND	0x20
#define HOST_RWF_ATOMIC		0x40
#define HOST_RWF_DONTCACHE	0x80
#define HOST_RWF_NOSIGNAL	0x100
#define RWF_KNOWN_5_10		(0x1f | HOST_RWF_ENCODED)
#define RWF_KNOWN_MAINLINE	(RWF_KNOWN_5_10 | HOST_RWF_NOAPPEND | HOST_RWF_ATOMIC | \
				 HOST_RWF_DONTCACHE | HOST_RWF_NOSIGNAL)
#define CLOSE_RANGE_UNSHARE_F	(1U << 1)
#define CLOSE_RANGE_CLOEXEC_F	(1U << 2)
#define NR_EPOLL_PWAIT2		441
#define NR_CLOSE_RANGE		436
#define NR_OPENAT2		437

#define ENC_NONE	0
#define ENC_ZLIB	1
#define ENC_ZSTD	2
#define ENC_LZO_4K	3
#define ENC_TYPES	7	/* the highest compression value */

#define KIB		1024ULL
#define BTRFS_MAX_UNCOMPRESSED	(128 * KIB)
#define SECTOR		4096ULL
#define MAX_LFS		((uint64_t)LLONG_MAX)
#define EP_MAX_EVENTS	((int)(INT_MAX / sizeof(struct epoll_event)))
#define FSIZE_LIMIT	(64 * KIB * KIB)	/* RLIMIT_FSIZE during the run */
#define KERNEL_PTR	((void *)0xffff888000000000UL)
#define IOV_SLOTS	1100
#define DATA_ROOM	(256 * KIB)
#define MAX_TEMPLATES	24

/* ------------------------------------------------------------------ */
/* The table of allowed results.                                       */

enum sysno { S_EPOLL, S_CLOSE_RANGE, S_PREADV2, S_PWRITEV2, S_OPEN, S_OPENAT,
	     S_OPENAT2, S_FCNTL, NR_SYS };
static const char *const sysname[NR_SYS] = {
	"epoll_pwait2", "close_range", "preadv2", "pwritev2", "open", "openat",
	"openat2", "fcntl",
};

#define RULES(R) \
	R(EP_TIMEOUT_FAULT, "epoll_pwait2", EFAULT, "timeout not NULL and not readable (checked before anything else)") \
	R(EP_TIMEOUT_INVAL, "epoll_pwait2", EINVAL, "timeout tv_sec < 0 or tv_nsec outside 0..999999999 (checked before anything else)") \
	R(EP_SIGSETSIZE, "epoll_pwait2", EINVAL, "sigmask not NULL and sigsetsize != 8") \
	R(EP_SIGMASK_FAULT, "epoll_pwait2", EFAULT, "sigmask not NULL and not readable") \
	R(EP_MAXEVENTS, "epoll_pwait2", EINVAL, "maxevents <= 0 or > INT_MAX / sizeof(struct epoll_event)") \
	R(EP_EVENTS_KERNEL, "epoll_pwait2", EFAULT, "events not a user address") \
	R(EP_EVENTS_FAULT, "epoll_pwait2", EFAULT, "(may) events not writable for maxevents elements") \
	R(EP_BADF, "epoll_pwait2", EBADF, "epfd not an open descriptor") \
	R(EP_NOT_EPOLL, "epoll_pwait2", EINVAL, "epfd not an epoll descriptor") \
	R(EP_EINTR, "epoll_pwait2", EINTR, "(may) a signal handler ran during the wait") \
	R(CR_FLAGS, "close_range", EINVAL, "a flag other than CLOSE_RANGE_UNSHARE and CLOSE_RANGE_CLOEXEC") \
	R(CR_RANGE, "close_range", EINVAL, "first > last") \
	R(CR_NOMEM, "close_range", ENOMEM, "(may) CLOSE_RANGE_UNSHARE: no memory for the copy") \
	R(CR_MFILE, "close_range", EMFILE, "(may) CLOSE_RANGE_UNSHARE: the copy would exceed nr_open") \
	R(OP_CLOEXEC, "open*", EINVAL, "O_ALLOW_ENCODED without O_CLOEXEC (open/openat: unless O_PATH)") \
	R(OP_PATH2, "openat2", EINVAL, "O_PATH with O_ALLOW_ENCODED") \
	R(OP_SAME, "open*", 0, "otherwise: the same result as without O_ALLOW_ENCODED (root)") \
	R(FC_PATH, "fcntl", EBADF, "F_SETFL on an O_PATH descriptor") \
	R(RW_BADF, "preadv2/pwritev2", EBADF, "fd not open, O_PATH, or not open for reading/writing") \
	R(RW_SPIPE, "preadv2/pwritev2", ESPIPE, "an offset other than -1 on a pipe or socket, or (pwritev2) a /proc seq_file") \
	R(RW_IOVCNT, "preadv2/pwritev2", EINVAL, "iovcnt < 0 or > IOV_MAX") \
	R(RW_IOVLEN, "preadv2/pwritev2", EINVAL, "an iov_len > SSIZE_MAX") \
	R(RW_IOV_ARRAY, "preadv2/pwritev2", EFAULT, "the iovec array not readable") \
	R(RW_BUF_FAULT, "preadv2/pwritev2", EFAULT, "(may) iov[0] or a data buffer not accessible") \
	R(RW_OFFSET, "preadv2/pwritev2", EINVAL, "offset < -1, or (not RWF_ENCODED) offset + total length beyond LLONG_MAX") \
	R(RW_FLAGS, "preadv2/pwritev2", EOPNOTSUPP, "an unknown RWF_ flag") \
	R(RW_FLAG_FS, "preadv2/pwritev2", EOPNOTSUPP, "(-m) RWF_ATOMIC on a read or a file without atomic writes (btrfs), RWF_DONTCACHE on a file system without it (btrfs; may elsewhere)") \
	R(RW_NOAPPEND, "preadv2/pwritev2", EINVAL, "(-m) RWF_APPEND with RWF_NOAPPEND") \
	R(ENC_NOFLAG, "preadv2/pwritev2", EPERM, "RWF_ENCODED, file without O_ALLOW_ENCODED") \
	R(ENC_NOTSUPP, "preadv2/pwritev2", EOPNOTSUPP, "RWF_ENCODED, file without encoded I/O (not a btrfs regular file)") \
	R(ENC_IOV0, "preadv2/pwritev2", EINVAL, "RWF_ENCODED, no iov[0], iovcnt 1 (no buffer for the data), or iov[0].iov_len < 32 or > PAGE_SIZE") \
	R(ENC_NOWAIT, "preadv2/pwritev2", EOPNOTSUPP, "RWF_ENCODED with RWF_NOWAIT, btrfs file with O_ALLOW_ENCODED: encoded I/O may always block") \
	R(R_NOBUFS, "preadv2", ENOBUFS, "(may) buffers after iov[0] smaller than 128 KiB and than the extent") \
	R(W_NOT_IMPL, "pwritev2", EOPNOTSUPP, "btrfs encoded write on a kernel without them (found at start)") \
	R(W_IOV0_FAULT, "pwritev2", EFAULT, "iov[0] not readable") \
	R(W_E2BIG, "pwritev2", E2BIG, "iov[0] longer than 32 bytes with a non-zero byte past 32") \
	R(W_META, "pwritev2", EINVAL, "compression and encryption NONE, unknown values, unencoded_offset > unencoded_len or len > unencoded_len - unencoded_offset") \
	R(W_APPEND, "pwritev2", EINVAL, "O_APPEND or RWF_APPEND (-m: O_APPEND not lifted by RWF_NOAPPEND)") \
	R(W_FBIG, "pwritev2", EFBIG, "offset + len beyond RLIMIT_FSIZE or the largest file size") \
	R(W_RANGE, "pwritev2", EINVAL, "the file range, len bytes from offset, ends past LLONG_MAX") \
	R(W_ALIGN, "pwritev2", EINVAL, "btrfs: offset not sector-aligned, or len not a multiple of the sector size short of i_size") \
	R(W_LIMITS, "pwritev2", EINVAL, "btrfs, len not 0: unencoded_len > 128 KiB, payload > unencoded_len rounded up to sectors (-m: payload >= unencoded_len, as mainline's btrfs), LZO variant not 4K, unencoded_offset not sector-aligned") \
	R(W_EMPTY, "pwritev2", EINVAL, "btrfs, len not 0: no encoded bytes") \
	R(W_NOSPC, "pwritev2", ENOSPC, "(may) the scratch file system is full") \
	R(W_POISON_EIO, "pwritev2", EIO, "(may) the file has an extent written with undecodable data, which extending the file may have to read")

#define R_ENUM(id, sys, err, text) R_##id,
enum rule_id { RULES(R_ENUM) NR_RULES };

struct rule {
	const char *name;
	const char *sys;
	int err;
	const char *text;
};

#define R_TABLE(id, sys, err, text) { #id, sys, err, text },
static const struct rule rules[NR_RULES] = { RULES(R_TABLE) };

/* The rules that apply to one call. */
struct allow {
	unsigned int n;
	uint8_t id[NR_RULES];
	bool must[NR_RULES];
	bool exclusive;		/* the first must rule alone decides */
	const char *kind;	/* names a violation by success, if not the default */
};

static void allow_add(struct allow *a, enum rule_id id, bool must)
{
	if (a->exclusive)
		return;
	a->id[a->n] = id;
	a->must[a->n] = must;
	a->n++;
}

#define MUST(a, id)	allow_add(a, R_##id, true)
#define MAY(a, id)	allow_add(a, R_##id, false)

static bool allow_success(const struct allow *a)
{
	unsigned int i;

	for (i = 0; i < a->n; i++)
		if (a->must[i])
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* Shared state: children (close_range) count and report through it.   */

#define NR_ERRNO	140
#define VIOL_SLOTS	64
#define VIOL_LEN	600
#define VIOL_KINDS	64
#define PRINT_PER_KIND	5

struct shared {
	uint64_t calls;
	uint64_t count[NR_SYS];
	uint64_t ok[NR_SYS];
	uint64_t err[NR_SYS][NR_ERRNO];
	uint64_t hits[NR_RULES];
	uint64_t violations;
	uint64_t enc_read_ok;		/* encoded reads of btrfs data that succeeded */
	uint64_t enc_write_ok;		/* encoded writes that succeeded */
	uint64_t viol_head;		/* messages written */
	uint64_t viol_tail;		/* messages printed */
	char viol[VIOL_SLOTS][VIOL_LEN];
	uint64_t kind_key[VIOL_KINDS];
	uint64_t kind_count[VIOL_KINDS];
	char kind_name[VIOL_KINDS][128];
};

static struct shared *sh;
static uint64_t seed;
static uint64_t call_limit;	/* 0: none */
static long long deadline_ns;
static bool verbose;
static bool mainline;		/* -m */
static pid_t main_pid;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool finished(void)
{
	if (call_limit && __atomic_load_n(&sh->calls, __ATOMIC_RELAXED) >= call_limit)
		return true;
	return now_ns() >= deadline_ns;
}

/* Number the next call. */
static uint64_t next_call(void)
{
	return __atomic_add_fetch(&sh->calls, 1, __ATOMIC_RELAXED);
}

static void count_result(enum sysno s, long ret, int err)
{
	__atomic_add_fetch(&sh->count[s], 1, __ATOMIC_RELAXED);
	if (ret >= 0)
		__atomic_add_fetch(&sh->ok[s], 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&sh->err[s][err > 0 && err < NR_ERRNO ? err : 0], 1,
				   __ATOMIC_RELAXED);
}

/* Violations of the same kind (syscall, what) are printed a few times only. */
static bool first_of_kind(uint64_t key, const char *name)
{
	unsigned int i;

	for (i = 0; i < VIOL_KINDS; i++) {
		uint64_t k = __atomic_load_n(&sh->kind_key[i], __ATOMIC_RELAXED);

		if (!k) {
			uint64_t zero = 0;

			if (!__atomic_compare_exchange_n(&sh->kind_key[i], &zero, key, false,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED) &&
			    zero != key)
				continue;
			if (!zero)
				snprintf(sh->kind_name[i], sizeof(sh->kind_name[i]), "%s", name);
			k = key;
		}
		if (k == key)
			return __atomic_add_fetch(&sh->kind_count[i], 1, __ATOMIC_RELAXED) <=
			       PRINT_PER_KIND;
	}
	return false;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h | 1;
}

/*
 * Record a violation: @kind groups them for printing, @fmt says what
 * happened. Children cannot print (their descriptors may be closed): the
 * messages go through shared memory and the main process prints them.
 */
static void __attribute__((format(printf, 4, 5)))
violation(enum sysno s, uint64_t call, const char *kind, const char *fmt, ...)
{
	char key[128];
	uint64_t slot;
	va_list ap;
	int n;

	__atomic_add_fetch(&sh->violations, 1, __ATOMIC_RELAXED);
	snprintf(key, sizeof(key), "%s %s", sysname[s], kind);
	if (!first_of_kind(hash_str(key), key))
		return;
	slot = __atomic_fetch_add(&sh->viol_head, 1, __ATOMIC_RELAXED);
	if (slot - __atomic_load_n(&sh->viol_tail, __ATOMIC_RELAXED) >= VIOL_SLOTS)
		return;
	slot %= VIOL_SLOTS;
	n = snprintf(sh->viol[slot], VIOL_LEN, "VIOLATION seed=%" PRIu64 " call=%" PRIu64 " %s: %s: ",
		     seed, call, sysname[s], kind);
	va_start(ap, fmt);
	if (n > 0 && n < VIOL_LEN)
		vsnprintf(sh->viol[slot] + n, VIOL_LEN - n, fmt, ap);
	va_end(ap);
}

static void print_violations(void)
{
	while (sh->viol_tail < __atomic_load_n(&sh->viol_head, __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "%s\n", sh->viol[sh->viol_tail % VIOL_SLOTS]);
		sh->viol_tail++;
	}
}

static const char *errname(int err)
{
	static const struct { int err; const char *name; } names[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EINTR, "EINTR" }, { EIO, "EIO" },
		{ E2BIG, "E2BIG" }, { EBADF, "EBADF" }, { EAGAIN, "EAGAIN" },
		{ ENOMEM, "ENOMEM" }, { EACCES, "EACCES" }, { EFAULT, "EFAULT" },
		{ EEXIST, "EEXIST" }, { ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" },
		{ EINVAL, "EINVAL" }, { EMFILE, "EMFILE" }, { EFBIG, "EFBIG" },
		{ ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" }, { EROFS, "EROFS" },
		{ ENOSYS, "ENOSYS" }, { ELOOP, "ELOOP" }, { EOPNOTSUPP, "EOPNOTSUPP" },
		{ ENOBUFS, "ENOBUFS" }, { EOVERFLOW, "EOVERFLOW" }, { EUCLEAN, "EUCLEAN" },
		{ ETXTBSY, "ETXTBSY" }, { ENXIO, "ENXIO" }, { EXDEV, "EXDEV" },
	};
	static char buf[16];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

static void describe_allowed(const struct allow *a, char *out, size_t size)
{
	size_t used = 0;
	unsigned int i;

	out[0] = '\0';
	if (allow_success(a))
		used += snprintf(out, size, "success");
	for (i = 0; i < a->n && used < size; i++)
		used += snprintf(out + used, size - used, "%s%s%s (%s)", used ? ", " : "",
				 a->must[i] ? "" : "may ", errname(rules[a->id[i]].err),
				 rules[a->id[i]].name);
}

/*
 * Check the result of a call against its rules. Returns true if it is
 * allowed; an error is only allowed if a rule gives that errno.
 */
static bool check_result(enum sysno s, uint64_t call, const struct allow *a, long ret,
			 int err, const char *args)
{
	char allowed[400];
	unsigned int i;

	count_result(s, ret, err);
	for (i = 0; i < a->n; i++)
		__atomic_add_fetch(&sh->hits[a->id[i]], 1, __ATOMIC_RELAXED);
	if (ret >= 0 && allow_success(a))
		return true;
	if (ret < 0) {
		for (i = 0; i < a->n; i++)
			if (rules[a->id[i]].err == err)
				return true;
	}
	describe_allowed(a, allowed, sizeof(allowed));
	if (ret >= 0)
		violation(s, call, a->kind ? a->kind : "success where an error is required",
			  "%s returned %ld; allowed: %s", args, ret, allowed);
	else
		violation(s, call, errname(err), "%s failed with %s; allowed: %s", args,
			  errname(err), allowed);
	return false;
}

/* ------------------------------------------------------------------ */
/* Random numbers: struct rng, rng_next(), below(), chance() in rng.h.  */

static uint64_t pick(struct rng *r, const uint64_t *v, size_t n)
{
	return v[below(r, n)];
}

#define PICK(r, ...) ({ const uint64_t _v[] = { __VA_ARGS__ }; \
			pick(r, _v, sizeof(_v) / sizeof(_v[0])); })

/* ------------------------------------------------------------------ */
/* Memory of every kind: writable, read-only, inaccessible, straddling. */

static long page_size;
static char *mem_rw;		/* two pages: rw, then mem_none */
static char *mem_none;
static char *mem_ro;

enum ptr_kind { P_VALID, P_NULL, P_RO, P_NONE, P_KERNEL, P_STRADDLE, P_MISALIGNED,
		NR_PTR_KINDS };
static const char *const ptr_name[NR_PTR_KINDS] = {
	"valid", "NULL", "read-only", "unmapped", "kernel", "straddling", "misaligned",
};

/* Readable memory is valid for the kernel to read; these cannot be read. */
static bool unreadable(enum ptr_kind k)
{
	return k == P_NONE || k == P_KERNEL || k == P_STRADDLE || k == P_NULL;
}

static bool unwritable(enum ptr_kind k)
{
	return k != P_VALID && k != P_MISALIGNED;
}

/* For a write's buffers, read-only memory is as good as any. */
static bool readable_buf(enum ptr_kind k)
{
	return k == P_VALID || k == P_MISALIGNED || k == P_RO;
}

/*
 * A pointer of kind @k for an object of @size bytes whose valid contents
 * are @obj: copied where it has to be readable.
 */
static void *make_ptr(enum ptr_kind k, const void *obj, size_t size, size_t slot)
{
	char *p;

	switch (k) {
	case P_VALID:
		p = mem_rw + slot * 256;
		break;
	case P_MISALIGNED:
		p = mem_rw + slot * 256 + 3;
		break;
	case P_RO:
		/* mem_ro holds a copy of every object at the same slot. */
		return mem_ro + slot * 256;
	case P_NONE:
		return mem_none + slot * 64;
	case P_KERNEL:
		return KERNEL_PTR;
	case P_STRADDLE:
		p = mem_none - size / 2;
		if (obj)
			memcpy(p, obj, size / 2);
		return p;
	default:
		return NULL;
	}
	if (obj)
		memcpy(p, obj, size);
	return p;
}

static void set_ro(const void *obj, size_t size, size_t slot)
{
	mprotect(mem_ro, page_size, PROT_READ | PROT_WRITE);
	memcpy(mem_ro + slot * 256, obj, size);
	mprotect(mem_ro, page_size, PROT_READ);
}

static enum ptr_kind pick_ptr(struct rng *r, unsigned int valid_percent, bool may_null)
{
	enum ptr_kind k;

	if (chance(r, valid_percent))
		return chance(r, 90) ? P_VALID : P_MISALIGNED;
	k = 1 + below(r, NR_PTR_KINDS - 1);
	if (k == P_NULL && !may_null)
		k = P_NONE;
	return k;
}

/* ------------------------------------------------------------------ */
/* epoll_pwait2                                                        */

static volatile sig_atomic_t signals_seen;
static int ep_main, ep_timer, ep_tfd, ep_efd, ep_pipe[2], closed_fd;

static void on_alarm(int sig)
{
	(void)sig;
	signals_seen++;
}

static void epoll_setup(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: epoll is never restarted anyway */
	sigaction(SIGALRM, &sa, NULL);

	ep_main = epoll_create1(EPOLL_CLOEXEC);
	ep_timer = epoll_create1(EPOLL_CLOEXEC);
	ep_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	ep_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ep_main < 0 || ep_timer < 0 || ep_tfd < 0 || ep_efd < 0 ||
	    pipe2(ep_pipe, O_NONBLOCK | O_CLOEXEC)) {
		perror("hostile: epoll setup");
		exit(2);
	}
	ev.data.u64 = 1;
	epoll_ctl(ep_main, EPOLL_CTL_ADD, ep_tfd, &ev);
	epoll_ctl(ep_timer, EPOLL_CTL_ADD, ep_tfd, &ev);
	ev.data.u64 = 2;
	epoll_ctl(ep_main, EPOLL_CTL_ADD, ep_efd, &ev);
	ev.data.u64 = 3;
	epoll_ctl(ep_main, EPOLL_CTL_ADD, ep_pipe[0], &ev);
	/* A descriptor number that is not open, and never will be. */
	for (closed_fd = 999; fcntl(closed_fd, F_GETFD) >= 0; closed_fd++)
		;
}

static void arm_timerfd(long long ns)
{
	struct itimerspec its = { .it_value = { ns / 1000000000LL, ns % 1000000000LL } };

	timerfd_settime(ep_tfd, 0, &its, NULL);
}

static void drain(int fd)
{
	char buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

struct kts {
	long long tv_sec;
	long long tv_nsec;
};

static void do_epoll(struct rng *r)
{
	struct epoll_event *events;
	struct kts ts;
	uint64_t mask, call;
	enum ptr_kind tk, mk, evk;
	void *tp, *mp;
	int epfd, maxevents, signal_us = -1, i;
	bool ts_valid, finite, efd_ready, pipe_ready;
	size_t sigsetsize;
	long long t0, elapsed, req_ns = 0, kick_ns;
	sigset_t before, after;
	struct allow a = { 0 };
	char args[300];
	int sig0, err;
	long ret;

	/* The arguments, all drawn before the call. */
	switch (below(r, 20)) {
	case 0: epfd = ep_timer; break;
	case 1: case 2: epfd = ep_pipe[0]; break;
	case 3: epfd = closed_fd; break;
	case 4: epfd = PICK(r, -1, INT_MAX, 1 << 20); break;
	default: epfd = ep_main; break;
	}
	evk = pick_ptr(r, 75, true);
	maxevents = chance(r, 75) ? (int)(1 + below(r, 16)) :
		(int)PICK(r, 0, (uint64_t)-1, (uint64_t)INT_MIN, EP_MAX_EVENTS,
			  EP_MAX_EVENTS + 1, INT_MAX, rng_next(r));
	tk = chance(r, 15) ? P_NULL : pick_ptr(r, 80, false);
	switch (below(r, 24)) {
	case 0: case 1: case 2: case 3: case 4: ts = (struct kts){ 0, 0 }; break;
	case 5: case 6: ts = (struct kts){ 0, 1 }; break;
	case 7: case 8: ts = (struct kts){ 0, 1000 }; break;
	case 9: case 10: case 11: case 12: ts = (struct kts){ 0, below(r, 2000000) }; break;
	case 13: ts = (struct kts){ 0, 999999999 }; break;
	case 14: ts = (struct kts){ LLONG_MAX, 999999999 }; break;
	case 15: ts = (struct kts){ 1 + below(r, 1000), below(r, 1000000000) }; break;
	case 16: ts = (struct kts){ -1, 0 }; break;
	case 17: ts = (struct kts){ LLONG_MIN, 0 }; break;
	case 18: ts = (struct kts){ 0, -1 }; break;
	case 19: ts = (struct kts){ 0, 1000000000 }; break;
	case 20: ts = (struct kts){ 0, LLONG_MAX }; break;
	case 21: ts = (struct kts){ 0, LLONG_MIN }; break;
	case 22: ts = (struct kts){ -(long long)below(r, 100), -(long long)below(r, 100) }; break;
	default: ts = (struct kts){ (long long)rng_next(r), (long long)rng_next(r) }; break;
	}
	mk = chance(r, 40) ? P_NULL : pick_ptr(r, 80, false);
	mask = rng_next(r);
	sigsetsize = chance(r, 85) ? 8 : PICK(r, 0, 4, 7, 9, 16, 128, SIZE_MAX, rng_next(r));
	efd_ready = chance(r, 25);
	pipe_ready = chance(r, 15);

	if (chance(r, 20))
		signal_us = below(r, 3000);
	kick_ns = 1000000 + below(r, 20000000);

	/* Where they point. */
	events = make_ptr(evk, NULL, 16 * sizeof(*events), 0);
	if (evk == P_STRADDLE)
		events = (void *)(mem_none - 6);
	set_ro(&ts, sizeof(ts), 8);
	set_ro(&mask, sizeof(mask), 10);
	tp = make_ptr(tk, &ts, sizeof(ts), 8);
	mp = make_ptr(mk, &mask, sizeof(mask), 10);

	/* What the documentation says about them. */
	ts_valid = ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec <= 999999999;
	if (tk != P_NULL && unreadable(tk)) {
		MUST(&a, EP_TIMEOUT_FAULT);
		a.exclusive = true;
	} else if (tk != P_NULL && !ts_valid) {
		MUST(&a, EP_TIMEOUT_INVAL);
		a.exclusive = true;
	}
	if (mk != P_NULL) {
		if (sigsetsize != 8)
			MUST(&a, EP_SIGSETSIZE);
		else if (unreadable(mk))
			MUST(&a, EP_SIGMASK_FAULT);
	}
	if (maxevents <= 0 || maxevents > EP_MAX_EVENTS)
		MUST(&a, EP_MAXEVENTS);
	if (evk == P_KERNEL)
		MUST(&a, EP_EVENTS_KERNEL);
	else if (unwritable(evk) || maxevents > 16)
		MAY(&a, EP_EVENTS_FAULT);
	if (epfd == closed_fd || epfd < 0 || epfd == INT_MAX || epfd == 1 << 20)
		MUST(&a, EP_BADF);
	else if (epfd == ep_pipe[0])
		MUST(&a, EP_NOT_EPOLL);
	MAY(&a, EP_EINTR);

	finite = tk != P_NULL && ts_valid && ts.tv_sec == 0 && ts.tv_nsec < 20000000;
	if (finite)
		req_ns = ts.tv_nsec;
	snprintf(args, sizeof(args),
		 "epoll_pwait2(epfd %s, events %s, maxevents %d, timeout %s {%lld, %lld}, sigmask %s, sigsetsize %zu)%s%s%s",
		 epfd == ep_main ? "epoll" : epfd == ep_timer ? "epoll(timerfd only)" :
		 epfd == ep_pipe[0] ? "pipe" : "bad", ptr_name[evk], maxevents, ptr_name[tk],
		 ts.tv_sec, ts.tv_nsec, ptr_name[mk], sigsetsize,
		 efd_ready ? " eventfd ready" : "", pipe_ready ? " pipe ready" : "",
		 signal_us >= 0 ? " SIGALRM timer" : "");

	/* Readiness, the kick that ends long waits, the interrupting signal. */
	drain(ep_efd);
	drain(ep_pipe[0]);
	drain(ep_tfd);
	if (efd_ready)
		eventfd_write(ep_efd, 1);
	if (pipe_ready && write(ep_pipe[1], "x", 1) != 1)
		pipe_ready = false;
	/* Short waits end on their own; a timeout ignored shows after 10 s. */
	arm_timerfd(finite ? req_ns + 10000000000LL : kick_ns);
	if (signal_us >= 0) {
		struct itimerval it = { .it_value = { 0, signal_us + 1 } };

		setitimer(ITIMER_REAL, &it, NULL);
	}

	/* glibc's sigset_t is larger than the kernel's: zero the rest. */
	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	sigprocmask(SIG_SETMASK, NULL, &before);
	sig0 = signals_seen;
	call = next_call();
	t0 = now_ns();
	ret = syscall(NR_EPOLL_PWAIT2, epfd, events, maxevents, tp, mp, sigsetsize);
	err = errno;
	elapsed = now_ns() - t0;
	if (signal_us >= 0) {
		struct itimerval off = { 0 };

		setitimer(ITIMER_REAL, &off, NULL);
	}
	sigprocmask(SIG_SETMASK, NULL, &after);
	arm_timerfd(0);

	if (!check_result(S_EPOLL, call, &a, ret, err, args))
		return;
	if (ret < 0 && err == EINTR && signals_seen == sig0)
		violation(S_EPOLL, call, "EINTR without a signal", "%s: EINTR but no handler ran",
			  args);
	if (memcmp(&before, &after, sizeof(before)))
		violation(S_EPOLL, call, "signal mask changed",
			  "%s: the signal mask was not restored", args);
	if (ret < 0)
		return;
	if (ret > maxevents)
		violation(S_EPOLL, call, "too many events", "%s returned %ld", args, ret);
	if (ret > 0 && unwritable(evk))
		violation(S_EPOLL, call, "events into unwritable memory",
			  "%s returned %ld events", args, ret);
	else if (ret > 0) {
		for (i = 0; i < ret && i < 16; i++) {
			struct epoll_event ev;

			memcpy(&ev, (char *)events + i * sizeof(ev), sizeof(ev));
			if (!ev.events || ev.data.u64 < 1 || ev.data.u64 > 3)
				violation(S_EPOLL, call, "bad event",
					  "%s: event %d is {%#x, %" PRIu64 "}", args, i,
					  ev.events, (uint64_t)ev.data.u64);
		}
	}
	if (ret == 0 && !finite)
		violation(S_EPOLL, call, "infinite wait returned 0",
			  "%s returned 0 after %lld ns", args, elapsed);
	if (ret == 0 && finite && elapsed < req_ns)
		violation(S_EPOLL, call, "timeout too early",
			  "%s returned 0 after %lld ns", args, elapsed);
	if (finite && elapsed > req_ns + 9000000000LL)
		violation(S_EPOLL, call, "timeout ignored",
			  "%s returned %ld after %lld ns", args, ret, elapsed);
}

/* ------------------------------------------------------------------ */
/* close_range, in forked children with threads                       */

#define CR_FDS		4096	/* RLIMIT_NOFILE in the children */
#define CR_PLACES	48

static int sys_close_range(unsigned int first, unsigned int last, unsigned int flags)
{
	return syscall(NR_CLOSE_RANGE, first, last, flags);
}

/* -1: not open, else the FD_CLOEXEC bit */
static int fd_state(int fd)
{
	int fl = fcntl(fd, F_GETFD);

	return fl < 0 ? -1 : fl & FD_CLOEXEC;
}

static void cr_args(struct rng *r, unsigned int *first, unsigned int *last, unsigned int *flags,
		    bool unshare_ok)
{
	static const uint64_t edges[] = { 0, 1, 2, 3, 63, 64, 65, 127, 128, 255, 256, 511, 512,
					  1023, 1024, 1025, 2047, 2048, 4095, 4096, 65535,
					  INT_MAX, UINT_MAX - 1, UINT_MAX };

	*first = chance(r, 60) ? below(r, 600) : pick(r, edges, sizeof(edges) / 8);
	*last = chance(r, 25) ? UINT_MAX : chance(r, 50) ? *first + below(r, 300) :
		chance(r, 50) ? pick(r, edges, sizeof(edges) / 8) : (unsigned int)rng_next(r);
	if (chance(r, 5))
		*last = *first - 1;	/* reversed */
	switch (below(r, 10)) {
	case 0: *flags = rng_next(r); break;
	case 1: *flags = 1U << below(r, 32); break;
	case 2: case 3: *flags = CLOSE_RANGE_CLOEXEC_F; break;
	case 4: *flags = CLOSE_RANGE_UNSHARE_F | CLOSE_RANGE_CLOEXEC_F; break;
	case 5: *flags = CLOSE_RANGE_UNSHARE_F; break;
	default: *flags = chance(r, 50) ? 0 : CLOSE_RANGE_CLOEXEC_F; break;
	}
	if (!unshare_ok)
		*flags &= ~CLOSE_RANGE_UNSHARE_F;
}

static void cr_rules(struct allow *a, unsigned int first, unsigned int last, unsigned int flags)
{
	if (flags & ~(CLOSE_RANGE_UNSHARE_F | CLOSE_RANGE_CLOEXEC_F))
		MUST(a, CR_FLAGS);
	if (first > last)
		MUST(a, CR_RANGE);
	if (flags & CLOSE_RANGE_UNSHARE_F) {
		MAY(a, CR_NOMEM);
		MAY(a, CR_MFILE);
	}
}

/* One call, its result checked; returns the result. */
static int cr_call(unsigned int first, unsigned int last, unsigned int flags, const char *who)
{
	struct allow a = { 0 };
	char args[160];
	uint64_t call;
	int ret, err;

	cr_rules(&a, first, last, flags);
	snprintf(args, sizeof(args), "close_range(%u, %u, %#x) %s", first, last, flags, who);
	call = next_call();
	ret = sys_close_range(first, last, flags);
	err = errno;
	check_result(S_CLOSE_RANGE, call, &a, ret, ret < 0 ? err : 0, args);
	return ret < 0 ? -err : 0;
}

/* The open descriptors of this table and their FD_CLOEXEC, tracked. */
struct fdset {
	int state[CR_FDS];
};

static void fdset_scan(struct fdset *s)
{
	int fd;

	for (fd = 0; fd < CR_FDS; fd++)
		s->state[fd] = fd_state(fd);
}

/* Put new descriptors at random places, some close-on-exec. */
static void fdset_populate(struct rng *r, struct fdset *s, int n)
{
	static const uint64_t high[] = { 63, 64, 127, 128, 511, 512, 1023, 1024, 2047, 4095 };
	int i, fd, src = -1;

	for (fd = 0; fd < CR_FDS && src < 0; fd++)
		if (s->state[fd] >= 0)
			src = fd;
	if (src < 0) {
		src = open("/dev/null", O_RDONLY);
		if (src < 0)
			return;
		s->state[src] = 0;
	}
	for (i = 0; i < n; i++) {
		int want = chance(r, 80) ? 3 + below(r, 300) : pick(r, high, 10);
		int cloexec = chance(r, 30) ? O_CLOEXEC : 0;

		if (want == src || dup3(src, want, cloexec) != want)
			continue;
		s->state[want] = cloexec ? FD_CLOEXEC : 0;
	}
}

/* Check the table against @s; @what names the situation. */
static void fdset_check(struct fdset *s, const char *what, const char *args)
{
	int fd, got;

	for (fd = 0; fd < CR_FDS; fd++) {
		if (s->state[fd] < 0 && fd > 600 && fd % 64 != 0 && fd % 64 != 63)
			continue;	/* spot checks only, far from anything */
		got = fd_state(fd);
		if (got != s->state[fd]) {
			violation(S_CLOSE_RANGE, __atomic_load_n(&sh->calls, __ATOMIC_RELAXED),
				  "descriptor state", "%s %s: fd %d is %s, expected %s", args, what,
				  fd, got < 0 ? "closed" : got ? "open, close-on-exec" : "open",
				  s->state[fd] < 0 ? "closed" : s->state[fd] ? "open, close-on-exec" :
				  "open");
			s->state[fd] = got;	/* one report per descriptor */
		}
	}
}

static void fdset_apply(struct fdset *s, unsigned int first, unsigned int last,
			unsigned int flags)
{
	int fd;

	for (fd = 0; fd < CR_FDS; fd++) {
		if ((unsigned int)fd < first || (unsigned int)fd > last || s->state[fd] < 0)
			continue;
		s->state[fd] = flags & CLOSE_RANGE_CLOEXEC_F ? FD_CLOEXEC : -1;
	}
}

struct unshare_arg {
	struct fdset *view;
	unsigned int first, last, flags;
	int ret;
};

/* A thread sharing the table: unshares it, then sees only its own change. */
static void *unshare_thread(void *p)
{
	struct unshare_arg *u = p;
	char args[160];

	u->ret = cr_call(u->first, u->last, u->flags, "(thread, shared table)");
	snprintf(args, sizeof(args), "close_range(%u, %u, %#x) in a thread sharing the table",
		 u->first, u->last, u->flags);
	if (!u->ret)
		fdset_apply(u->view, u->first, u->last, u->flags);
	fdset_check(u->view, "(the thread's new table)", args);
	return NULL;
}

struct burst_arg {
	uint64_t seed;
	int role;
};

/* Concurrent calls: results only, the table changes under their feet. */
static void *burst_thread(void *p)
{
	struct burst_arg *b = p;
	struct rng r = { b->seed };
	unsigned int first, last, flags;
	int i, fd;

	for (i = 0; i < 40 && !finished(); i++) {
		if (b->role == 0) {
			fd = dup3(0 + below(&r, 3), 3 + below(&r, 1000), chance(&r, 50) ? O_CLOEXEC : 0);
			if (fd < 0)
				fd = open("/dev/null", O_RDONLY | (chance(&r, 50) ? O_CLOEXEC : 0));
			continue;
		}
		cr_args(&r, &first, &last, &flags, b->role == 2);
		cr_call(first, last, flags, "(concurrent)");
	}
	return NULL;
}

static void close_range_child(uint64_t round_seed)
{
	struct rng r = { round_seed };
	struct rlimit rl = { CR_FDS, CR_FDS };
	struct fdset *s = malloc(sizeof(*s)), *view = malloc(sizeof(*view));
	unsigned int first, last, flags;
	char args[160];
	pthread_t th[4];
	struct burst_arg b[4];
	int i, ret;

	if (!s || !view || setrlimit(RLIMIT_NOFILE, &rl))
		_exit(3);
	fdset_scan(s);

	/* Sequential: the exact effect of each call. */
	for (i = 0; i < 24 && !finished(); i++) {
		fdset_populate(&r, s, below(&r, 12));
		cr_args(&r, &first, &last, &flags, true);
		snprintf(args, sizeof(args), "close_range(%u, %u, %#x)", first, last, flags);
		ret = cr_call(first, last, flags, "(sequential)");
		if (!ret)
			fdset_apply(s, first, last, flags);
		fdset_check(s, ret ? "(failed: nothing may change)" : "", args);
	}

	/* A thread shares the table and unshares it. */
	for (i = 0; i < 3 && !finished(); i++) {
		struct unshare_arg u;

		fdset_populate(&r, s, 4 + below(&r, 8));
		cr_args(&r, &u.first, &u.last, &u.flags, true);
		u.flags = (u.flags & CLOSE_RANGE_CLOEXEC_F) | CLOSE_RANGE_UNSHARE_F;
		if (chance(&r, 30))
			u.last = UINT_MAX;
		*view = *s;
		u.view = view;
		if (pthread_create(&th[0], NULL, unshare_thread, &u))
			break;
		pthread_join(th[0], NULL);
		snprintf(args, sizeof(args), "close_range(%u, %u, %#x) in another thread",
			 u.first, u.last, u.flags);
		fdset_check(s, "(the unshared original table, unchanged)", args);
	}

	/* Concurrent: two closers, an unsharer and a descriptor maker. */
	for (i = 0; i < 4; i++) {
		b[i].seed = rng_next(&r);
		b[i].role = i < 2 ? 1 : i == 2 ? 2 : 0;
		if (pthread_create(&th[i], NULL, burst_thread, &b[i]))
			_exit(4);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static void do_close_range_round(struct rng *r)
{
	uint64_t round_seed = rng_next(r), call = __atomic_load_n(&sh->calls, __ATOMIC_RELAXED);
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0)
		close_range_child(round_seed);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		violation(S_CLOSE_RANGE, call, "child failed",
			  "the close_range child (round seed %#" PRIx64 ") %s %d", round_seed,
			  WIFEXITED(status) ? "exited with" : "was killed by signal",
			  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* ------------------------------------------------------------------ */
/* Files for encoded I/O                                               */

enum fkind { K_BTRFS, K_BTRFS_DIR, K_TMPFS, K_ROOTFS, K_PROC, K_DEV, K_PIPE, K_SOCKET };

struct pfile {
	const char *name;
	char path[PATH_MAX];
	enum fkind kind;
	bool source;		/* holds data that templates come from: never written */
	bool poisoned;		/* has an extent written with undecodable data */
	uint64_t size;		/* at the start */
};

struct pfd {
	int fd;
	struct pfile *file;
	int open_flags;
	char desc[96];
};

#define MAX_FILES 24
#define MAX_FDS 64

static struct pfile files[MAX_FILES];
static int nfiles;
static struct pfd fds[MAX_FDS];
static int nfds;
static bool have_btrfs, writes_supported, encoded_kernel;
static char workdir[256], mntdir[PATH_MAX], imgpath[PATH_MAX];
static bool mounted;

struct template {
	struct enc_iov enc;
	unsigned char *data;
	size_t size;		/* encoded bytes */
	struct pfile *src;
	uint64_t src_off;
};

static struct template templates[MAX_TEMPLATES];
static int ntemplates;

static int run(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void cleanup(void)
{
	if (getpid() != main_pid)
		return;
	if (mounted) {
		int i;

		for (i = 0; i < nfds; i++)
			close(fds[i].fd);
		if (umount2(mntdir, 0))
			umount2(mntdir, MNT_DETACH);
		rmdir(mntdir);
		unlink(imgpath);
	}
	if (workdir[0]) {
		char p[PATH_MAX + 16];

		snprintf(p, sizeof(p), "%s/tmpfs_file", workdir);
		unlink(p);
		rmdir(workdir);
	}
}

static void fill_text(unsigned char *buf, size_t len, uint64_t s)
{
	static const char *const w[] = { "amber", "basil", "cedar", "delta", "ember",
					 "fable", "garnet", "harbor", "indigo", "juniper" };
	struct rng r = { s };
	size_t pos = 0;
	char line[128];

	while (pos < len) {
		int n = snprintf(line, sizeof(line), "%08zu: %s %s %s\n", pos, w[below(&r, 10)],
				 w[below(&r, 10)], w[below(&r, 10)]);
		size_t take = len - pos < (size_t)n ? len - pos : (size_t)n;

		memcpy(buf + pos, line, take);
		pos += take;
	}
}

static struct pfile *add_file(const char *name, const char *path, enum fkind kind)
{
	struct pfile *f = &files[nfiles++];

	f->name = name;
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->kind = kind;
	return f;
}

/* A btrfs file: @comp the btrfs.compression property (NULL: the mount's). */
static struct pfile *make_btrfs_file(const char *name, const char *comp, size_t size, int how)
{
	char path[PATH_MAX + 64];
	unsigned char *buf = malloc(size ? size : 1);
	struct pfile *f;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", mntdir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !buf) {
		perror(path);
		exit(2);
	}
	if (comp && fsetxattr(fd, "btrfs.compression", comp, strlen(comp), 0))
		fprintf(stderr, "hostile: btrfs.compression=%s on %s: %s\n", comp, name,
			strerror(errno));
	if (how == 0) {
		fill_text(buf, size, size + strlen(name));
	} else {
		struct rng r = { size };

		for (i = 0; i < size; i++)
			buf[i] = rng_next(&r);
	}
	if (how == 2) {
		/* data, a hole, preallocated space, more data */
		if (pwrite(fd, buf, 4096, 0) != 4096 ||
		    pwrite(fd, buf, 4096, 1024 * KIB) != 4096 ||
		    fallocate(fd, 0, 512 * KIB, 64 * KIB))
			perror("hostile: holes file");
		if (ftruncate(fd, size))
			perror("hostile: holes file size");
	} else if (size && pwrite(fd, buf, size, 0) != (ssize_t)size) {
		perror("hostile: writing a btrfs file");
		exit(2);
	}
	fsync(fd);
	close(fd);
	free(buf);
	f = add_file(name, path, K_BTRFS);
	f->size = size;
	return f;
}

static void add_fd(struct pfile *f, int flags)
{
	struct pfd *p;
	int fd;

	if (nfds >= MAX_FDS)
		return;
	if (f->kind == K_PIPE || f->kind == K_SOCKET) {
		int pair[2];

		if (f->kind == K_PIPE ? pipe2(pair, O_CLOEXEC | O_NONBLOCK) :
		    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair))
			return;
		fds[nfds] = (struct pfd){ pair[0], f, O_RDONLY, "" };
		snprintf(fds[nfds].desc, sizeof(fds[nfds].desc), "%s read end", f->name);
		nfds++;
		if (nfds < MAX_FDS) {
			fds[nfds] = (struct pfd){ pair[1], f, O_WRONLY, "" };
			snprintf(fds[nfds].desc, sizeof(fds[nfds].desc), "%s write end", f->name);
			nfds++;
		}
		return;
	}
	fd = open(f->path, flags);
	if (fd < 0) {
		if (verbose)
			fprintf(stderr, "hostile: open %s %#x: %s\n", f->path, flags, strerror(errno));
		return;
	}
	p = &fds[nfds++];
	p->fd = fd;
	p->file = f;
	p->open_flags = flags;
	snprintf(p->desc, sizeof(p->desc), "%s %s%s%s%s", f->name,
		 (flags & O_ACCMODE) == O_RDONLY ? "O_RDONLY" :
		 (flags & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : "O_RDWR",
		 flags & O_ALLOW_ENCODED ? "|O_ALLOW_ENCODED" : "",
		 flags & O_APPEND ? "|O_APPEND" : "", flags & O_PATH ? "|O_PATH" : "");
}

static ssize_t raw_preadv2(int fd, const struct iovec *iov, long cnt, long long off, int flags)
{
	return syscall(SYS_preadv2, fd, iov, cnt, (unsigned long)off, 0UL, flags);
}

static ssize_t raw_pwritev2(int fd, const struct iovec *iov, long cnt, long long off, int flags)
{
	return syscall(SYS_pwritev2, fd, iov, cnt, (unsigned long)off, 0UL, flags);
}

/* An encoded read into @enc and @buf (@room bytes), -errno on failure. */
static ssize_t enc_read(int fd, struct enc_iov *enc, void *buf, size_t room, long long off)
{
	struct iovec iov[2] = { { enc, sizeof(*enc) }, { buf, room } };
	ssize_t ret = raw_preadv2(fd, iov, 2, off, HOST_RWF_ENCODED);

	return ret < 0 ? -errno : ret;
}

static void collect_templates(struct pfile *f)
{
	struct enc_iov enc;
	unsigned char *buf = malloc(DATA_ROOM);
	uint64_t off;
	ssize_t ret;
	int fd = open(f->path, O_RDONLY | O_ALLOW_ENCODED | O_CLOEXEC);

	if (fd < 0 || !buf)
		return;
	for (off = 0; off < f->size && ntemplates < MAX_TEMPLATES; off += 128 * KIB + 4096) {
		ret = enc_read(fd, &enc, buf, DATA_ROOM, off);
		if (ret <= 0 || enc.compression == ENC_NONE)
			continue;
		templates[ntemplates] = (struct template){ enc, malloc(ret), ret, f, off };
		memcpy(templates[ntemplates].data, buf, ret);
		ntemplates++;
	}
	close(fd);
	free(buf);
}

static bool setup_btrfs(const char *dir)
{
	char size[32];
	struct statfs sfs;
	int fd;

	if (dir) {
		snprintf(mntdir, sizeof(mntdir), "%s", dir);
	} else {
		char *mkfs[] = { "mkfs.btrfs", "-q", "-f", imgpath, NULL };
		char *mount[] = { "mount", "-t", "btrfs", "-o", "loop,compress-force=zstd",
				  imgpath, mntdir, NULL };

		snprintf(imgpath, sizeof(imgpath), "%s/btrfs.img", workdir);
		snprintf(mntdir, sizeof(mntdir), "%s/mnt", workdir);
		fd = open(imgpath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, 1024 * KIB * KIB)) {
			perror("hostile: image");
			return false;
		}
		close(fd);
		if (mkdir(mntdir, 0755) || run(mkfs)) {
			fprintf(stderr, "hostile: mkfs.btrfs failed: no encoded I/O on btrfs\n");
			unlink(imgpath);
			return false;
		}
		if (run(mount)) {
			fprintf(stderr, "hostile: mount -o loop of a btrfs failed\n");
			unlink(imgpath);
			rmdir(mntdir);
			return false;
		}
		mounted = true;
	}
	if (statfs(mntdir, &sfs) || sfs.f_type != 0x9123683E) {
		fprintf(stderr, "hostile: %s is not a btrfs\n", mntdir);
		return false;
	}
	snprintf(size, sizeof(size), "%ld", (long)sfs.f_bsize);
	if (sfs.f_bsize != SECTOR)
		fprintf(stderr, "hostile: sector size %s; the write rules assume 4096\n", size);
	make_btrfs_file("zstd", "zstd", 1024 * KIB, 0);
	make_btrfs_file("zlib", "zlib", 1024 * KIB, 0);
	make_btrfs_file("lzo", "lzo", 1024 * KIB, 0);
	make_btrfs_file("plain", NULL, 300 * KIB, 1);
	make_btrfs_file("holes", NULL, 2048 * KIB + 100, 2);
	make_btrfs_file("inline", NULL, 100, 0);
	make_btrfs_file("empty", NULL, 0, 0);
	make_btrfs_file("scratch1", NULL, 0, 0);
	make_btrfs_file("scratch2", NULL, 0, 0);
	return true;
}

static struct pfile *file_named(const char *name)
{
	int i;

	for (i = 0; i < nfiles; i++)
		if (!strcmp(files[i].name, name))
			return &files[i];
	return NULL;
}

static void setup_files(const char *dir)
{
	const int enc = O_ALLOW_ENCODED | O_CLOEXEC;
	struct statfs sfs;
	char path[PATH_MAX + 32];
	struct pfile *f;
	int i, fd, fl;

	have_btrfs = setup_btrfs(dir);
	if (have_btrfs) {
		for (i = 0; i < nfiles; i++) {
			f = &files[i];
			f->source = !strncmp(f->name, "z", 1) || !strcmp(f->name, "lzo");
			add_fd(f, O_RDONLY | enc);
			if (!f->source) {
				add_fd(f, O_RDWR | enc);
				add_fd(f, O_WRONLY | enc);
			}
		}
		add_fd(file_named("zstd"), O_RDONLY | O_CLOEXEC);
		add_fd(file_named("scratch1"), O_RDWR | O_CLOEXEC);
		add_fd(file_named("scratch1"), O_RDWR | O_APPEND | enc);
		add_fd(file_named("scratch2"), O_RDWR | enc);
		add_fd(file_named("plain"), O_PATH | O_CLOEXEC);
		f = add_file("btrfs dir", mntdir, K_BTRFS_DIR);
		add_fd(f, O_RDONLY | O_DIRECTORY | enc);
		collect_templates(file_named("zstd"));
		collect_templates(file_named("zlib"));
		collect_templates(file_named("lzo"));
	}
	/* Other file systems. */
	snprintf(path, sizeof(path), "%s/tmpfs_file", workdir);
	if (!statfs(workdir, &sfs) && sfs.f_type == 0x01021994) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0 && write(fd, "hostile\n", 8) == 8) {
			f = add_file("tmpfs file", path, K_TMPFS);
			add_fd(f, O_RDWR | enc);
			add_fd(f, O_RDWR | O_CLOEXEC);
		}
		if (fd >= 0)
			close(fd);
	}
	/* This program's file: on the root file system (9p in the guest). */
	i = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (i > 0) {
		path[i] = '\0';
		f = add_file("root fs file", path, K_ROOTFS);
		add_fd(f, O_RDONLY | enc);
	}
	f = add_file("/proc/self/status", "/proc/self/status", K_PROC);
	add_fd(f, O_RDONLY | enc);
	f = add_file("/proc/version", "/proc/version", K_PROC);
	add_fd(f, O_RDONLY | enc);
	add_fd(f, O_RDONLY | O_CLOEXEC);
	f = add_file("/dev/null", "/dev/null", K_DEV);
	add_fd(f, O_RDWR | enc);
	add_fd(f, O_RDWR | O_CLOEXEC);
	add_fd(add_file("pipe", "", K_PIPE), 0);
	add_fd(add_file("socket", "", K_SOCKET), 0);

	/* Does this kernel have encoded I/O at all, and encoded writes? */
	encoded_kernel = false;
	for (i = 0; i < nfds; i++) {
		if (!(fds[i].open_flags & O_ALLOW_ENCODED))
			continue;
		fl = fcntl(fds[i].fd, F_GETFL);
		encoded_kernel = fl >= 0 && (fl & O_ALLOW_ENCODED);
		break;
	}
	if (!encoded_kernel)
		fprintf(stderr, "hostile: open() drops O_ALLOW_ENCODED: a kernel without encoded I/O\n");
}

/* Writes a real extent to scratch2: EOPNOTSUPP means no encoded writes. */
static void probe_writes(void)
{
	struct pfile *f = file_named("scratch2");
	struct template *t = &templates[0];
	struct iovec iov[2];
	ssize_t ret;
	int fd;

	writes_supported = false;
	if (!have_btrfs || !ntemplates || !f)
		return;
	fd = open(f->path, O_RDWR | O_ALLOW_ENCODED | O_CLOEXEC);
	if (fd < 0)
		return;
	iov[0] = (struct iovec){ &t->enc, sizeof(t->enc) };
	iov[1] = (struct iovec){ t->data, t->size };
	ret = raw_pwritev2(fd, iov, 2, 0, HOST_RWF_ENCODED);
	if (ret >= 0)
		writes_supported = true;
	else if (errno != EOPNOTSUPP)
		fprintf(stderr, "hostile: a valid encoded write of a %s extent failed: %s\n",
			t->src->name, strerror(errno));
	close(fd);
}

/* ------------------------------------------------------------------ */
/* preadv2 / pwritev2 with RWF_ENCODED                                 */

static unsigned char *iov0_buf;		/* PAGE_SIZE + 64 */
static unsigned char *data_buf;		/* DATA_ROOM + PAGE_SIZE */
static unsigned char *check_buf, *check_buf2;
static struct iovec *iovs;		/* IOV_SLOTS */

struct rw_call {
	struct pfd *p;
	int fd;
	long cnt;
	size_t iov0_len;
	enum ptr_kind iov0_kind, data_kind;
	bool data_ro_overrun;	/* the read-only buffer is longer than its page */
	bool iov_array_bad;
	size_t room;		/* bytes after iov[0] */
	size_t total;		/* all iov_len */
	bool huge_len;
	long long off;		/* -1: file position */
	long long pos;		/* where it happens */
	int flags;
	int file_flags;		/* F_GETFL before */
	uint64_t size;		/* i_size before */
};

/*
 * Mainline's btrfs stores an encoded write at offset 0 that covers the
 * whole file and fits in max_inline as an inline extent (the 5.10 series
 * writes a regular one); a read returns such an extent as stored: the
 * item's bytes, not a whole number of sectors.
 */
static bool mainline_inline(const struct rw_call *c, const struct enc_iov *enc, ssize_t ret)
{
	return mainline && c->pos >= 0 && (uint64_t)c->pos == enc->unencoded_offset &&
	       enc->unencoded_len <= SECTOR && ret < SECTOR;
}

static bool is_btrfs_file(const struct rw_call *c)
{
	return c->p && c->p->file->kind == K_BTRFS;
}

static void pick_fd(struct rng *r, struct rw_call *c, bool for_write)
{
	int tries;

	c->p = NULL;
	c->fd = closed_fd;
	if (chance(r, 3) || !nfds)
		return;
	for (tries = 0; tries < 20; tries++) {
		struct pfd *p = &fds[below(r, nfds)];

		/* Writes never reach the files the templates come from. */
		if (for_write && p->file->source && (p->open_flags & O_ACCMODE) != O_RDONLY)
			continue;
		/* Mostly files that can do encoded I/O. */
		if (tries < 10 && p->file->kind != K_BTRFS && chance(r, 60))
			continue;
		c->p = p;
		c->fd = p->fd;
		return;
	}
}

static long long pick_offset(struct rng *r, uint64_t size, bool aligned_mostly)
{
	switch (below(r, 20)) {
	case 0: case 1: case 2: case 3: return -1;
	case 4: return LLONG_MAX - below(r, 3) * SECTOR;
	case 5: return (long long)(MAX_LFS - 128 * KIB) & ~(SECTOR - 1);
	case 6: return PICK(r, -2, LLONG_MIN, -4096);
	case 7: return (long long)size + (long long)below(r, 20) - 10 > 0 ?
		(long long)size + (long long)below(r, 20) - 10 : 0;
	case 8: return FSIZE_LIMIT - below(r, 40) * SECTOR;
	case 9: return below(r, 64 * KIB * KIB);
	default:
		if (aligned_mostly && chance(r, 80))
			return below(r, (size + 512 * KIB) / SECTOR + 1) * SECTOR;
		return below(r, size + 512 * KIB);
	}
}

/* The iovecs: iov[0] at @iov0_buf, the data split over cnt - 1 buffers. */
static void build_iovs(struct rng *r, struct rw_call *c, const unsigned char *payload,
		       size_t payload_len)
{
	long i, n;
	size_t left, part;
	unsigned char *base;

	c->huge_len = false;
	c->iov_array_bad = chance(r, 1);
	switch (below(r, 40)) {
	case 0: c->cnt = 0; break;
	case 1: c->cnt = 1025; break;
	case 2: c->cnt = -1; break;
	case 3: case 4: case 5: c->cnt = 1; break;
	case 6: case 7: case 8: c->cnt = 3 + below(r, 6); break;
	default: c->cnt = 2; break;
	}
	c->iov0_kind = pick_ptr(r, 94, true);
	c->data_kind = pick_ptr(r, 96, true);
	iovs[0].iov_base = c->iov0_kind == P_VALID ? iov0_buf :
		c->iov0_kind == P_MISALIGNED ? iov0_buf + 1 :
		make_ptr(c->iov0_kind, NULL, 32, 12);
	iovs[0].iov_len = c->iov0_len;
	if (chance(r, 1)) {
		iovs[0].iov_len = (size_t)SSIZE_MAX + 1 + below(r, 10);
		c->huge_len = true;
	}
	n = c->cnt > 1 ? (c->cnt > IOV_SLOTS ? IOV_SLOTS : c->cnt) : 1;
	base = payload ? (unsigned char *)payload : data_buf;
	left = payload ? payload_len : c->room;
	c->total = iovs[0].iov_len;
	for (i = 1; i < n; i++) {
		part = i == n - 1 ? left : below(r, left + 1);
		iovs[i].iov_base = base;
		iovs[i].iov_len = part;
		base += part;
		left -= part;
		c->total += part;
	}
	if (n > 1 && c->data_kind != P_VALID && c->data_kind != P_MISALIGNED) {
		i = 1 + below(r, n - 1);
		iovs[i].iov_base = make_ptr(c->data_kind, NULL, 32, 14);
		/* Read-only memory is one page, slot 14 is 14 * 256 bytes in. */
		c->data_ro_overrun = c->data_kind == P_RO &&
				     iovs[i].iov_len > (size_t)page_size - 14 * 256;
	}
	if (c->cnt == 0)
		c->total = 0;
	c->room = c->cnt > 1 ? c->total - iovs[0].iov_len : 0;
}

static int pick_rw_flags(struct rng *r)
{
	int flags = HOST_RWF_ENCODED;

	if (chance(r, 6))
		flags |= HOST_RWF_NOWAIT;
	if (chance(r, 4))
		flags |= HOST_RWF_HIPRI;
	if (chance(r, 4))
		flags |= chance(r, 50) ? HOST_RWF_DSYNC : HOST_RWF_SYNC;
	if (chance(r, 3))
		flags |= HOST_RWF_APPEND;
	/* An unknown bit; 0x20 too, the proposal's value of RWF_ENCODED. */
	if (chance(r, 3))
		flags |= (1U << (5 + below(r, 27))) & ~HOST_RWF_ENCODED;
	return flags;
}

/* The rules common to reads and writes, up to the file system. */
static void rw_rules(struct allow *a, const struct rw_call *c, bool write)
{
	bool pipe = c->p && (c->p->file->kind == K_PIPE || c->p->file->kind == K_SOCKET);
	/* seq_file (/proc) clears FMODE_PWRITE: no pwrite at an offset. */
	bool nopwrite = write && c->p && c->p->file->kind == K_PROC;
	int acc = c->p ? c->p->open_flags & O_ACCMODE : -1;
	size_t eff = c->total > 0x7ffff000 ? 0x7ffff000 : c->total;

	if (!c->p || (c->p->open_flags & O_PATH) ||
	    (write ? acc == O_RDONLY : acc == O_WRONLY))
		MUST(a, RW_BADF);
	if ((pipe || nopwrite) && c->off != -1)
		MUST(a, RW_SPIPE);
	if (c->cnt < 0 || c->cnt > 1024)
		MUST(a, RW_IOVCNT);
	else if (c->iov_array_bad && c->cnt > 0)
		MUST(a, RW_IOV_ARRAY);
	else if (c->huge_len && c->cnt > 0)
		MUST(a, RW_IOVLEN);
	if (c->off < -1)
		MUST(a, RW_OFFSET);
	else if (!(c->flags & HOST_RWF_ENCODED) && !pipe && c->pos >= 0 && c->cnt > 0 &&
		 (unsigned long long)c->pos + eff > LLONG_MAX)
		/* An encoded call checks its file range instead (W_RANGE). */
		MUST(a, RW_OFFSET);
	if (c->flags & ~(mainline ? RWF_KNOWN_MAINLINE : RWF_KNOWN_5_10))
		MUST(a, RW_FLAGS);
	if (mainline && (c->flags & HOST_RWF_APPEND) && (c->flags & HOST_RWF_NOAPPEND))
		MUST(a, RW_NOAPPEND);
	if (mainline && (c->flags & HOST_RWF_ATOMIC) && (!write || is_btrfs_file(c)))
		MUST(a, RW_FLAG_FS);
	else if (mainline && (c->flags & HOST_RWF_ATOMIC))
		MAY(a, RW_FLAG_FS);
	if (mainline && (c->flags & HOST_RWF_DONTCACHE))
		allow_add(a, R_RW_FLAG_FS, is_btrfs_file(c));
	if (c->cnt > 0 && (write ? !readable_buf(c->iov0_kind) || !readable_buf(c->data_kind) ||
				   c->data_ro_overrun :
			   unwritable(c->iov0_kind) || unwritable(c->data_kind)))
		MAY(a, RW_BUF_FAULT);
	if (c->flags & HOST_RWF_ENCODED) {
		if (!(c->file_flags & O_ALLOW_ENCODED))
			MUST(a, ENC_NOFLAG);
		if (!is_btrfs_file(c))
			MUST(a, ENC_NOTSUPP);
		/* Refused, not EAGAIN: encoded I/O may always block. */
		else if ((c->file_flags & O_ALLOW_ENCODED) && (c->flags & HOST_RWF_NOWAIT))
			MUST(a, ENC_NOWAIT);
		if (c->cnt == 0 || c->cnt == 1 || c->iov0_len < 32 ||
		    c->iov0_len > (size_t)page_size)
			MUST(a, ENC_IOV0);
	}
}

static void rw_describe(const struct rw_call *c, const char *sys, const char *extra,
			char *out, size_t size)
{
	snprintf(out, size, "%s(%s, %siovcnt %ld, iov[0] %s %zu bytes, %zu bytes after it%s%s, offset %lld%s, flags %#x)%s",
		 sys, c->p ? c->p->desc : "closed fd",
		 c->iov_array_bad ? "iovec array unmapped, " : "", c->cnt, ptr_name[c->iov0_kind],
		 c->iov0_len, c->room, c->data_kind != P_VALID ? " one buffer " : "",
		 c->data_kind != P_VALID ? ptr_name[c->data_kind] : "", c->off,
		 c->off == -1 ? " (file position)" : "", c->flags, extra);
}

static void prepare_call(struct rng *r, struct rw_call *c)
{
	struct stat st;

	c->file_flags = c->p ? fcntl(c->fd, F_GETFL) : 0;
	if (c->file_flags < 0)
		c->file_flags = 0;
	c->size = c->p && !fstat(c->fd, &st) ? st.st_size : 0;
	c->pos = c->off;
	if (c->off == -1 && c->p && c->p->file->kind != K_PIPE && c->p->file->kind != K_SOCKET &&
	    !(c->p->open_flags & O_PATH)) {
		off_t want = (off_t)(chance(r, 70) ? below(r, c->size / SECTOR + 2) * SECTOR :
				     below(r, c->size + 1000));

		c->pos = lseek(c->fd, want, SEEK_SET);
	}
}

static void do_enc_read(struct rng *r)
{
	struct rw_call c = { 0 };
	struct allow a = { 0 };
	struct enc_iov enc;
	unsigned char *b0;
	char args[400];
	uint64_t call;
	off_t pos_after;
	ssize_t ret;
	int err;
	size_t i;

	pick_fd(r, &c, false);
	switch (below(r, 10)) {
	case 0: c.iov0_len = below(r, 32); break;
	case 1: c.iov0_len = 33 + below(r, 64); break;
	case 2: c.iov0_len = PICK(r, page_size, page_size + 1, page_size - 1); break;
	case 3: c.iov0_len = below(r, page_size + 2); break;
	default: c.iov0_len = 32; break;
	}
	c.room = PICK(r, DATA_ROOM, DATA_ROOM, DATA_ROOM, 128 * KIB, below(r, 128 * KIB),
		      1 + below(r, 4096), 0);
	c.off = pick_offset(r, c.p ? c.p->file->size : 0, false);
	c.flags = pick_rw_flags(r);
	if (chance(r, 3))
		c.flags &= ~HOST_RWF_ENCODED;
	build_iovs(r, &c, NULL, 0);
	prepare_call(r, &c);

	rw_rules(&a, &c, false);
	if (!c.total)
		a.kind = "no bytes to transfer: 0 instead of an error";
	if ((c.flags & HOST_RWF_ENCODED) && is_btrfs_file(&c) &&
	    c.pos >= 0 && (uint64_t)c.pos < c.size && c.room < 128 * KIB)
		MAY(&a, R_NOBUFS);
	rw_describe(&c, "preadv2", "", args, sizeof(args));

	memset(iov0_buf, 0xa5, page_size + 64);
	call = next_call();
	ret = raw_preadv2(c.fd, c.iov_array_bad ? (void *)mem_none : iovs, c.cnt, c.off, c.flags);
	err = errno;
	if (!(c.flags & HOST_RWF_ENCODED)) {
		/* A plain read: only that it behaves like one. */
		count_result(S_PREADV2, ret, err);
		return;
	}
	if (!check_result(S_PREADV2, call, &a, ret, err, args))
		return;
	pos_after = c.p && c.off == -1 ? lseek(c.fd, 0, SEEK_CUR) : -1;
	if (ret < 0) {
		if (err == EFAULT)
			return;
		if (c.iov0_kind == P_VALID || c.iov0_kind == P_MISALIGNED) {
			for (i = 0; i < (size_t)page_size + 64; i++)
				if (iov0_buf[i] != 0xa5)
					break;
			if (i < (size_t)page_size + 64)
				violation(S_PREADV2, call, "failed read wrote iov[0]",
					  "%s failed with %s but changed iov[0] at byte %zu", args,
					  errname(err), i);
		}
		if (c.off == -1 && is_btrfs_file(&c) && pos_after != c.pos)
			violation(S_PREADV2, call, "failed read moved the position",
				  "%s: position %lld -> %lld", args, c.pos, (long long)pos_after);
		return;
	}
	if (!is_btrfs_file(&c))
		return;	/* zero-length transfers: already judged by the rules */

	/* A successful encoded read of a btrfs file. */
	if (ret > 0)
		__atomic_add_fetch(&sh->enc_read_ok, 1, __ATOMIC_RELAXED);
	if (c.pos >= 0 && (uint64_t)c.pos >= c.size) {
		if (ret != 0)
			violation(S_PREADV2, call, "data past EOF", "%s at/after EOF (size %" PRIu64 ") returned %zd",
				  args, c.size, ret);
		return;
	}
	if (ret == 0) {
		violation(S_PREADV2, call, "0 before EOF", "%s returned 0 before EOF (size %" PRIu64 ")",
			  args, c.size);
		return;
	}
	if (c.iov0_kind != P_VALID && c.iov0_kind != P_MISALIGNED)
		return;
	b0 = iovs[0].iov_base;
	memcpy(&enc, b0, sizeof(enc));
	if ((size_t)ret > c.room)
		violation(S_PREADV2, call, "more than the buffers", "%s returned %zd", args, ret);
	if (enc.encryption || enc.compression > ENC_TYPES || !enc.len ||
	    enc.len > c.size - c.pos)
		violation(S_PREADV2, call, "bad encoded_iov",
			  "%s: len %" PRIu64 " unencoded_len %" PRIu64 " unencoded_offset %" PRIu64 " compression %u encryption %u (size %" PRIu64 ")",
			  args, (uint64_t)enc.len, (uint64_t)enc.unencoded_len,
			  (uint64_t)enc.unencoded_offset, enc.compression, enc.encryption, c.size);
	if (enc.compression == ENC_NONE) {
		if ((uint64_t)ret != enc.len || enc.unencoded_len != enc.len || enc.unencoded_offset)
			violation(S_PREADV2, call, "bad plain encoded_iov",
				  "%s returned %zd: len %" PRIu64 " unencoded_len %" PRIu64 " unencoded_offset %" PRIu64,
				  args, ret, (uint64_t)enc.len, (uint64_t)enc.unencoded_len,
				  (uint64_t)enc.unencoded_offset);
		else if (c.cnt == 2 && c.data_kind == P_VALID &&
			 pread(c.fd, check_buf, ret, c.pos) == ret && memcmp(check_buf, data_buf, ret))
			violation(S_PREADV2, call, "plain data differs",
				  "%s: the bytes differ from pread()'s", args);
	} else if (enc.unencoded_len > BTRFS_MAX_UNCOMPRESSED ||
		   enc.unencoded_offset >= enc.unencoded_len ||
		   enc.len > enc.unencoded_len - enc.unencoded_offset ||
		   ret > (ssize_t)BTRFS_MAX_UNCOMPRESSED ||
		   (ret % SECTOR && !mainline_inline(&c, &enc, ret))) {
		violation(S_PREADV2, call, "bad compressed encoded_iov",
			  "%s returned %zd: len %" PRIu64 " unencoded_len %" PRIu64 " unencoded_offset %" PRIu64 " compression %u",
			  args, ret, (uint64_t)enc.len, (uint64_t)enc.unencoded_len,
			  (uint64_t)enc.unencoded_offset, enc.compression);
	}
	for (i = sizeof(enc); i < c.iov0_len; i++)
		if (b0[i])
			break;
	if (i < c.iov0_len)
		violation(S_PREADV2, call, "iov[0] tail not zeroed", "%s: byte %zu is %#x", args, i,
			  b0[i]);
	for (i = b0 - iov0_buf + c.iov0_len; i < (size_t)page_size + 64; i++)
		if (iov0_buf[i] != 0xa5)
			break;
	if (i < (size_t)page_size + 64)
		violation(S_PREADV2, call, "wrote past iov[0]", "%s: byte %zu", args, i);
	if (c.off == -1 && pos_after != c.pos + (off_t)enc.len)
		violation(S_PREADV2, call, "position", "%s: position %lld -> %lld, len %" PRIu64,
			  args, c.pos, (long long)pos_after, (uint64_t)enc.len);
}

static unsigned char *wpayload;		/* DATA_ROOM + 4096 */
static unsigned char *wstage;		/* iov[0] of a write, PAGE_SIZE + 64 */
static unsigned char *mem_ro2;		/* two read-only pages for it */

/* Put the prepared iov[0] of a write where iovs[0] points, if it can. */
static void place_iov0(struct rw_call *c)
{
	size_t n = page_size + 2;

	if (c->iov0_kind == P_VALID || c->iov0_kind == P_MISALIGNED) {
		memcpy(iovs[0].iov_base, wstage, n);
	} else if (c->iov0_kind == P_RO) {
		mprotect(mem_ro2, 2 * page_size, PROT_READ | PROT_WRITE);
		memcpy(mem_ro2, wstage, n);
		mprotect(mem_ro2, 2 * page_size, PROT_READ);
		iovs[0].iov_base = mem_ro2;
	}
}

static void do_enc_write(struct rng *r)
{
	struct rw_call c = { 0 };
	struct allow a = { 0 };
	struct template *t = ntemplates ? &templates[below(r, ntemplates)] : NULL;
	struct enc_iov enc = { 0 };
	bool real, tail_dirty = false, meta_ok, verify = false;
	size_t payload_len = 0, i, tail_at = 0;
	uint64_t call, pos, len, end, before_len = 0;
	char args[600], extra[200];
	struct stat st;
	ssize_t ret;
	int err;

	pick_fd(r, &c, true);
	/* The description: a real extent, bent or not, or made up. */
	real = t && chance(r, 60);
	if (real) {
		enc = t->enc;
		payload_len = t->size;
		memcpy(wpayload, t->data, t->size);
	} else {
		enc.compression = below(r, 4);
		enc.unencoded_len = PICK(r, 4096, 128 * KIB, below(r, 200 * KIB));
		enc.len = below(r, 3) ? enc.unencoded_len : below(r, enc.unencoded_len + 1);
		payload_len = PICK(r, 4096, 8192, below(r, 64 * KIB));
		for (i = 0; i < payload_len; i++)
			wpayload[i] = rng_next(r);
	}
	if (chance(r, 20))
		enc.compression = PICK(r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, UINT32_MAX, rng_next(r));
	if (chance(r, 8))
		enc.encryption = PICK(r, 1, 2, UINT32_MAX, rng_next(r));
	if (chance(r, 15))
		enc.unencoded_len = PICK(r, 0, enc.len - 1, 128 * KIB, 128 * KIB + 1, 132 * KIB,
					 256 * KIB, 1ULL << 63, UINT64_MAX, rng_next(r));
	if (chance(r, 15))
		enc.unencoded_offset = PICK(r, enc.unencoded_len, enc.unencoded_len + 1,
					    UINT64_MAX, below(r, enc.unencoded_len + 1));
	if (chance(r, 15))
		enc.len = PICK(r, 0, 1, 4095, 4096, 128 * KIB, MAX_LFS + 1, UINT64_MAX, rng_next(r),
			       enc.unencoded_len - enc.unencoded_offset + 1);
	if (chance(r, 15)) {
		payload_len = PICK(r, 0, 1, 4096, payload_len ? payload_len - 1 : 0,
				   payload_len + 4096, 128 * KIB, 128 * KIB + 4096, DATA_ROOM);
		for (i = real ? t->size : 0; i < payload_len; i++)
			wpayload[i] = rng_next(r);
	}
	if (real && chance(r, 15)) {
		/* Undecodable data that says it is compressed. */
		for (i = 0; i < payload_len; i++)
			wpayload[i] = rng_next(r);
		real = false;
	}
	switch (below(r, 10)) {
	case 0: c.iov0_len = below(r, page_size + 2); break;
	case 1: c.iov0_len = PICK(r, 31, 33, 64, page_size, page_size + 1); break;
	default: c.iov0_len = 32; break;
	}
	if (c.iov0_len > 32 && chance(r, 50)) {
		tail_at = 32 + below(r, c.iov0_len - 32);
		tail_dirty = true;
	}
	c.off = pick_offset(r, c.p ? c.p->file->size : 0, true);
	c.flags = pick_rw_flags(r);
	build_iovs(r, &c, wpayload, payload_len);
	memset(wstage, 0, page_size + 64);
	memcpy(wstage, &enc, sizeof(enc));
	if (tail_dirty)
		wstage[tail_at] = 1 + below(r, 255);
	place_iov0(&c);
	prepare_call(r, &c);

	/* The rules. */
	rw_rules(&a, &c, true);
	if (!c.total)
		a.kind = "no bytes to transfer: 0 instead of an error";
	pos = c.pos;
	len = enc.len;
	payload_len = c.room;
	if (is_btrfs_file(&c) && c.p->file->poisoned)
		MAY(&a, W_POISON_EIO);
	if (is_btrfs_file(&c) && (c.file_flags & O_ALLOW_ENCODED) && c.cnt > 0 &&
	    !readable_buf(c.iov0_kind)) {
		if (!writes_supported)
			MUST(&a, W_NOT_IMPL);
		MUST(&a, W_IOV0_FAULT);
	} else if (is_btrfs_file(&c) && (c.file_flags & O_ALLOW_ENCODED) && c.cnt > 0) {
		if (!writes_supported)
			MUST(&a, W_NOT_IMPL);
		if (c.iov0_len > 32 && tail_dirty && c.iov0_len <= (size_t)page_size)
			MUST(&a, W_E2BIG);
		meta_ok = !(enc.compression == ENC_NONE && enc.encryption == 0) &&
			enc.compression <= ENC_TYPES && enc.encryption == 0 &&
			enc.unencoded_offset <= enc.unencoded_len &&
			enc.len <= enc.unencoded_len - enc.unencoded_offset;
		if (!meta_ok)
			MUST(&a, W_META);
		if ((c.flags & HOST_RWF_APPEND) ||
		    ((c.file_flags & O_APPEND) &&
		     !(mainline && (c.flags & HOST_RWF_NOAPPEND))))
			MUST(&a, W_APPEND);
		if (len > MAX_LFS)
			MUST(&a, W_FBIG);
		if (c.pos >= 0) {
			end = pos + len;
			if (len > MAX_LFS - pos)
				MUST(&a, W_RANGE);
			if (len && (pos >= FSIZE_LIMIT || end > FSIZE_LIMIT || end < pos ||
				    end > MAX_LFS))
				MUST(&a, W_FBIG);
			if (len && (pos % SECTOR || (len % SECTOR && end < c.size)))
				MUST(&a, W_ALIGN);
		}
		/* btrfs' own limits; a write of len 0 returns 0 whatever it carries. */
		if (len && (enc.unencoded_len > BTRFS_MAX_UNCOMPRESSED ||
			    (mainline ? payload_len >= enc.unencoded_len :
			     payload_len > ((enc.unencoded_len + SECTOR - 1) & ~(SECTOR - 1))) ||
			    (enc.compression > ENC_LZO_4K && enc.compression <= ENC_TYPES) ||
			    enc.unencoded_offset % SECTOR))
			MUST(&a, W_LIMITS);
		if (len && !payload_len)
			MUST(&a, W_EMPTY);
		MAY(&a, W_NOSPC);
		verify = real && c.cnt >= 2 && c.data_kind == P_VALID && c.iov0_kind == P_VALID &&
			 !c.iov_array_bad && payload_len == t->size &&
			 !memcmp(&enc, &t->enc, sizeof(enc));
	}
	snprintf(extra, sizeof(extra),
		 " with {len %" PRIu64 ", unencoded_len %" PRIu64 ", unencoded_offset %" PRIu64 ", compression %u, encryption %u}%s%s",
		 (uint64_t)enc.len, (uint64_t)enc.unencoded_len, (uint64_t)enc.unencoded_offset,
		 enc.compression, enc.encryption, tail_dirty ? ", iov[0] tail not zero" : "",
		 real ? ", a real extent" : "");
	rw_describe(&c, "pwritev2", extra, args, sizeof(args));

	/* What is there now, to see that a failure changes nothing. */
	if (is_btrfs_file(&c) && c.pos >= 0 && (uint64_t)c.pos < c.size) {
		before_len = c.size - c.pos < 128 * KIB ? c.size - c.pos : 128 * KIB;
		if (pread(c.fd, check_buf, before_len, c.pos) != (ssize_t)before_len)
			before_len = 0;
	}

	call = next_call();
	ret = raw_pwritev2(c.fd, c.iov_array_bad ? (void *)mem_none : iovs, c.cnt, c.off,
			   c.flags);
	err = errno;
	if (!check_result(S_PWRITEV2, call, &a, ret, err, args) || !is_btrfs_file(&c))
		return;
	if (fstat(c.fd, &st))
		return;
	c.p->file->size = st.st_size;
	if (ret < 0) {
		if ((uint64_t)st.st_size != c.size)
			violation(S_PWRITEV2, call, "failed write changed the size",
				  "%s failed with %s; size %" PRIu64 " -> %lld", args, errname(err),
				  c.size, (long long)st.st_size);
		if (before_len && (c.p->open_flags & O_ACCMODE) != O_WRONLY &&
		    (pread(c.fd, check_buf2, before_len, c.pos) != (ssize_t)before_len ||
		     memcmp(check_buf, check_buf2, before_len)))
			violation(S_PWRITEV2, call, "failed write changed the data",
				  "%s failed with %s but the data at the offset changed", args,
				  errname(err));
		return;
	}
	if (!(c.flags & HOST_RWF_ENCODED) || c.total == 0)
		return;
	/* A successful encoded write. */
	if (!len) {
		/* Replaces no part of the file: 0, and nothing changed. */
		if (ret != 0)
			violation(S_PWRITEV2, call, "len 0 returned bytes", "%s returned %zd",
				  args, ret);
		if ((uint64_t)st.st_size != c.size)
			violation(S_PWRITEV2, call, "len 0 changed the size",
				  "%s: size %" PRIu64 " -> %lld", args, c.size,
				  (long long)st.st_size);
		if (c.off == -1 && lseek(c.fd, 0, SEEK_CUR) != (off_t)pos)
			violation(S_PWRITEV2, call, "position", "%s: len 0 moved the position",
				  args);
		return;
	}
	if (ret > 0)
		__atomic_add_fetch(&sh->enc_write_ok, 1, __ATOMIC_RELAXED);
	if (!real || c.data_kind != P_VALID)
		c.p->file->poisoned = true;
	if ((size_t)ret != payload_len)
		violation(S_PWRITEV2, call, "short write", "%s wrote %zd of %zu bytes", args, ret,
			  payload_len);
	if ((uint64_t)st.st_size < pos + len)
		violation(S_PWRITEV2, call, "size too small", "%s: size %lld after the write",
			  args, (long long)st.st_size);
	if (c.off == -1 && lseek(c.fd, 0, SEEK_CUR) != (off_t)(pos + len))
		violation(S_PWRITEV2, call, "position", "%s: position not advanced by len", args);
	if (verify && (c.p->open_flags & O_ACCMODE) != O_WRONLY && len <= 128 * KIB) {
		/* The file now reads as the source did there. */
		ssize_t n = pread(c.fd, check_buf, len, pos);
		int sfd = open(t->src->path, O_RDONLY | O_CLOEXEC);

		if (sfd >= 0 && pread(sfd, check_buf2, len, t->src_off) == (ssize_t)len &&
		    (n != (ssize_t)len || memcmp(check_buf, check_buf2, len)))
			violation(S_PWRITEV2, call, "written extent reads wrong",
				  "%s: pread() after the write gives %zd bytes, not the %" PRIu64 " of %s at %" PRIu64,
				  args, n, len, t->src->name, t->src_off);
		if (sfd >= 0)
			close(sfd);
	} else if ((c.p->open_flags & O_ACCMODE) != O_WRONLY && len) {
		/* Undecodable or bent: EIO or some bytes, never anything worse. */
		ssize_t n = pread(c.fd, check_buf, len < 128 * KIB ? len : 128 * KIB, pos);

		if (n < 0 && errno != EIO)
			violation(S_PWRITEV2, call, "reading back",
				  "%s: pread() of the new extent: %s", args, errname(errno));
	}
}

/* ------------------------------------------------------------------ */
/* open, openat, openat2 and F_SETFL with O_ALLOW_ENCODED              */

static void do_open(struct rng *r)
{
	static const int extra_flags[] = { O_NONBLOCK, O_NOATIME, O_DIRECTORY, O_NOFOLLOW,
					   O_APPEND, O_SYNC, O_PATH, O_DIRECT, O_LARGEFILE };
	struct pfile *f = nfiles ? &files[below(r, nfiles)] : NULL;
	int flags = PICK(r, O_RDONLY, O_RDONLY, O_WRONLY, O_RDWR), how_sys = below(r, 3);
	int fd1, fd2, e1, e2, fl, dfd = AT_FDCWD;
	struct allow a = { 0 };
	enum sysno s = how_sys == 0 ? S_OPEN : how_sys == 1 ? S_OPENAT : S_OPENAT2;
	char args[PATH_MAX + 200];
	struct open_how how = { 0 };
	uint64_t call;
	unsigned int i;

	if (!f || !f->path[0])
		return;
	flags |= O_ALLOW_ENCODED;
	if (chance(r, 80))
		flags |= O_CLOEXEC;
	for (i = 0; i < sizeof(extra_flags) / sizeof(extra_flags[0]); i++)
		if (chance(r, extra_flags[i] == O_PATH ? 15 : 6))
			flags |= extra_flags[i];
	if (how_sys == 2 && chance(r, 5))
		flags |= 1 << (26 + below(r, 5));	/* unknown to openat2 */
	if ((flags & O_PATH) && chance(r, 50))
		flags &= ~O_ACCMODE;

	if (!(flags & O_CLOEXEC) && !(how_sys != 2 && (flags & O_PATH)))
		MUST(&a, OP_CLOEXEC);
	if (how_sys == 2 && (flags & O_PATH))
		MUST(&a, OP_PATH2);
	snprintf(args, sizeof(args), "%s(%s, %#x)", sysname[s], f->path, flags);

	call = next_call();
	how.flags = flags;
	if (how_sys == 0)
		fd1 = open(f->path, flags);
	else if (how_sys == 1)
		fd1 = openat(dfd, f->path, flags);
	else
		fd1 = syscall(NR_OPENAT2, dfd, f->path, &how, sizeof(how));
	e1 = errno;
	if (a.n) {
		if (fd1 >= 0)
			close(fd1);
		check_result(s, call, &a, fd1, e1, args);
		return;
	}
	/* Root: as the same open without the flag (OP_SAME). */
	MAY(&a, OP_SAME);
	how.flags = flags & ~O_ALLOW_ENCODED;
	if (how_sys == 0)
		fd2 = open(f->path, flags & ~O_ALLOW_ENCODED);
	else if (how_sys == 1)
		fd2 = openat(dfd, f->path, flags & ~O_ALLOW_ENCODED);
	else
		fd2 = syscall(NR_OPENAT2, dfd, f->path, &how, sizeof(how));
	e2 = errno;
	count_result(s, fd1, e1);
	sh->hits[R_OP_SAME]++;
	if ((fd1 < 0) != (fd2 < 0) || (fd1 < 0 && e1 != e2))
		violation(s, call, "differs from the open without the flag",
			  "%s: %s with O_ALLOW_ENCODED, %s without", args,
			  fd1 < 0 ? errname(e1) : "success", fd2 < 0 ? errname(e2) : "success");
	if (fd1 >= 0) {
		fl = fcntl(fd1, F_GETFL);
		if (!(flags & O_PATH) && !(fl & O_ALLOW_ENCODED))
			violation(s, call, "F_GETFL lacks the flag", "%s: F_GETFL %#x", args, fl);
		if ((flags & O_PATH) && (fl & O_ALLOW_ENCODED))
			violation(s, call, "O_PATH kept the flag", "%s: F_GETFL %#x", args, fl);
		close(fd1);
	}
	if (fd2 >= 0)
		close(fd2);
}

static void do_fcntl(struct rng *r)
{
	struct pfd *p = nfds ? &fds[below(r, nfds)] : NULL;
	struct allow a = { 0 };
	int fl, want, got, ret, err;
	char args[200];
	uint64_t call;

	if (!p)
		return;
	fl = fcntl(p->fd, F_GETFL);
	want = fl < 0 ? O_ALLOW_ENCODED : fl;
	if (chance(r, 60))
		want ^= O_ALLOW_ENCODED;
	if (chance(r, 20) && p->file->kind == K_BTRFS && !p->file->source)
		want ^= O_APPEND;
	/*
	 * Pipes and sockets stay non-blocking: the program reads and writes
	 * them itself, and a read of an empty pipe (or a write to a full one)
	 * on a blocking descriptor would wait forever.
	 */
	if (chance(r, 20) && p->file->kind != K_PIPE && p->file->kind != K_SOCKET)
		want ^= O_NONBLOCK;
	if (p->open_flags & O_PATH)
		MUST(&a, FC_PATH);
	snprintf(args, sizeof(args), "fcntl(%s, F_SETFL, %#x) (F_GETFL was %#x)", p->desc, want, fl);
	call = next_call();
	ret = fcntl(p->fd, F_SETFL, want);
	err = errno;
	if (!check_result(S_FCNTL, call, &a, ret, err, args) || ret < 0)
		return;
	got = fcntl(p->fd, F_GETFL);
	if ((got & (O_ALLOW_ENCODED | O_APPEND | O_NONBLOCK)) !=
	    (want & (O_ALLOW_ENCODED | O_APPEND | O_NONBLOCK)))
		violation(S_FCNTL, call, "F_GETFL after F_SETFL", "%s: F_GETFL %#x", args, got);
}

/* ------------------------------------------------------------------ */

static void print_table(void)
{
	int i;

	printf("%-18s %-18s %-11s %s\n", "rule", "system call", "error", "when");
	for (i = 0; i < NR_RULES; i++)
		printf("%-18s %-18s %-11s %s\n", rules[i].name, rules[i].sys,
		       rules[i].err ? errname(rules[i].err) : "-", rules[i].text);
}

static void report(long long start)
{
	int s, e, i, used = 0;

	print_violations();
	printf("hostile: seed %" PRIu64 ", %.1f s, %" PRIu64 " calls\n", seed,
	       (now_ns() - start) / 1e9, sh->calls);
	printf("%-13s %8s %8s  %s\n", "system call", "calls", "success", "errors");
	for (s = 0; s < NR_SYS; s++) {
		char line[600];
		size_t n = 0;

		line[0] = '\0';
		for (e = 0; e < NR_ERRNO; e++)
			if (sh->err[s][e] && n < sizeof(line))
				n += snprintf(line + n, sizeof(line) - n, "%s%s %" PRIu64,
					      n ? ", " : "", e ? errname(e) : "other", sh->err[s][e]);
		printf("%-13s %8" PRIu64 " %8" PRIu64 "  %s\n", sysname[s], sh->count[s], sh->ok[s],
		       line);
	}
	for (i = 0; i < NR_RULES; i++)
		used += sh->hits[i] != 0;
	printf("rules exercised: %d of %d%s\n", used, NR_RULES, verbose ? ":" : "");
	for (i = 0; verbose && i < NR_RULES; i++)
		printf("  %-18s %" PRIu64 "\n", rules[i].name, sh->hits[i]);
	printf("btrfs: %s; encoded writes: %s; %d extents as write templates\n",
	       have_btrfs ? mntdir : "none", writes_supported ? "supported" :
	       "not supported (EOPNOTSUPP)", ntemplates);
	printf("successful encoded calls: %" PRIu64 " reads, %" PRIu64 " writes\n",
	       sh->enc_read_ok, sh->enc_write_ok);
	printf("violations: %" PRIu64 "\n", sh->violations);
	for (i = 0; i < VIOL_KINDS; i++)
		if (sh->kind_key[i])
			printf("  %6" PRIu64 "  %s\n", sh->kind_count[i], sh->kind_name[i]);
}

static void usage(void)
{
	fprintf(stderr, "usage: hostile [-m] [-s SEED] [-t SECONDS] [-n CALLS] [-v] [DIR]\n"
		"       hostile -T\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct rlimit fsize = { FSIZE_LIMIT, FSIZE_LIMIT };
	long long start, seconds = 60;
	struct rng r;
	int opt;

	while ((opt = getopt(argc, argv, "ms:t:n:vT")) != -1) {
		switch (opt) {
		case 'm': mainline = true; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': seconds = strtoll(optarg, NULL, 0); break;
		case 'n': call_limit = strtoull(optarg, NULL, 0); break;
		case 'v': verbose = true; break;
		case 'T': print_table(); return 0;
		default: usage();
		}
	}
	if (optind < argc - 1)
		usage();
	if (geteuid())
		fprintf(stderr, "hostile: not root: the rules assume CAP_SYS_ADMIN\n");

	main_pid = getpid();
	page_size = sysconf(_SC_PAGESIZE);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	mem_rw = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	mem_ro = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	iov0_buf = malloc(page_size + 64);
	data_buf = malloc(DATA_ROOM + page_size);
	check_buf = malloc(256 * KIB);
	check_buf2 = malloc(256 * KIB);
	wpayload = malloc(DATA_ROOM + 4096);
	wstage = malloc(page_size + 64);
	mem_ro2 = mmap(NULL, 2 * page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	iovs = calloc(IOV_SLOTS, sizeof(*iovs));
	if (sh == MAP_FAILED || mem_rw == MAP_FAILED || mem_ro == MAP_FAILED || !iov0_buf ||
	    !data_buf || !check_buf || !check_buf2 || !wpayload || !iovs ||
	    !wstage || mem_ro2 == MAP_FAILED) {
		perror("hostile: memory");
		return 2;
	}
	mem_none = mem_rw + page_size;
	mprotect(mem_none, page_size, PROT_NONE);

	snprintf(workdir, sizeof(workdir), "/tmp/hostile.XXXXXX");
	if (!mkdtemp(workdir)) {
		perror("hostile: mkdtemp");
		return 2;
	}
	atexit(cleanup);
	epoll_setup();
	setup_files(optind < argc ? argv[optind] : NULL);
	probe_writes();
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &fsize))
		perror("hostile: RLIMIT_FSIZE");
	printf("hostile: seed %" PRIu64 ", up to %lld s and %" PRIu64 " calls (0: no limit); btrfs %s, encoded writes %s\n",
	       seed, seconds, call_limit, have_btrfs ? "yes" : "no",
	       writes_supported ? "supported" : "not supported");
	fflush(stdout);

	r.s = seed;
	start = now_ns();
	deadline_ns = start + seconds * 1000000000LL;
	while (!finished()) {
		unsigned int op = below(&r, 100);

		if (op < 40)
			do_epoll(&r);
		else if (op < 62 && have_btrfs && encoded_kernel)
			do_enc_read(&r);
		else if (op < 80 && have_btrfs && encoded_kernel)
			do_enc_write(&r);
		else if (op < 86)
			do_open(&r);
		else if (op < 92)
			do_fcntl(&r);
		else if (op >= 96)
			do_close_range_round(&r);
		print_violations();
	}
	report(start);
	if (sh->violations)
		return 1;
	if (!sh->enc_read_ok || !sh->enc_write_ok) {
		printf("hostile: FAIL: %s succeeded (%s): encoded I/O was not exercised\n",
		       !sh->enc_read_ok && !sh->enc_write_ok ? "no encoded read or write" :
		       !sh->enc_read_ok ? "no encoded read" : "no encoded write",
		       !have_btrfs ? "no scratch btrfs" :
		       !encoded_kernel ? "open() drops O_ALLOW_ENCODED" :
		       !writes_supported ? "btrfs encoded writes not supported" :
		       "too few calls?");
		return 3;
	}
	return 0;
}
