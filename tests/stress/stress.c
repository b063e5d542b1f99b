// SPDX-License-Identifier: GPL-2.0
/*
 * stress: encoded and ordinary I/O racing on one btrfs, every result
 * checked against an oracle.
 *
 *   stress -D DEV [-M MNT] [-s SEED] [-t SECONDS] [-n OPS] [-p PROCS]
 *          [-j THREADS] [-f FILES] [-c CYCLES] [-o OPTS]... [-l OPLOG]
 *          [-R DEV2] [-X] [-S] [-w OP=WEIGHT,...]
 *
 * For each mount option string OPTS (default: "compress-force=zstd", then
 * "" for no compression) it makes a btrfs on DEV (mkfs.btrfs -f), mounts
 * it on MNT and runs CYCLES cycles: PROCS processes of THREADS threads
 * each draw operations at random on FILES files for their share of
 * SECONDS, then stop; every file is checked whole, the file system is
 * unmounted and mounted again and every file is checked whole again.
 * After the last cycle `btrfs scrub` and `btrfs check` must be clean, and
 * once every file is deleted the data space used must be what it was
 * after mkfs, with no data space left reserved.
 *
 * The operations: encoded writes (zlib, zstd and LZO payloads made here,
 * whole or part of their extent, at, inside and past the end of file),
 * encoded reads (decoded here), buffered and direct reads and writes,
 * mmap writes, truncate, fallocate (punch hole, preallocate), reflink
 * (FICLONERANGE), dedupe (FIDEDUPERANGE), fsync and fdatasync, unlink,
 * rename, NOCOW files, and groups of concurrent writes to one file at
 * disjoint ranges (extending it, or inside it) with a concurrent reader and
 * fsync.  The oracle: each file's content and size are kept in shared
 * memory; an operation holds the file's lock (two files: both, in order),
 * so its outcome is defined, and everything it reads, encoded (decoded) or
 * not, is compared with the oracle, as is the size after it.
 *
 * Races (op_race()): two to four operations, an encoded write among them,
 * on overlapping ranges of one file at once: encoded, buffered and direct
 * writes, mmap stores, reflinks, punched holes, truncates. Their result is
 * judged by an oracle that accepts any order they could have taken (see
 * op_race()).
 *
 * With -R DEV2, each cycle also snapshots the files (all locks held, so
 * the snapshot is a defined state), sends it (v1, and v2 with compressed
 * data, incremental from the previous cycle's) into a btrfs on DEV2 and
 * compares the received files with the oracle's copy.
 *
 * Every operation is numbered and logged with its arguments (and the seed
 * of its data) to OPLOG; the last operations on a file are printed with
 * any failure.  The same seed draws the same operations in each thread;
 * with -p 1 -j 1 -n OPS a run is replayed exactly.
 *
 * -w changes how often operations are drawn (OP is a name of the operation
 * counts printed at the end; "nocow=0" leaves out NOCOW files).
 *
 * -S calls fsync after every operation, so that an error it reports is
 * charged to the operation that left it.
 *
 * -X flips a bit of the oracle after the first cycle: the whole-file check
 * must then fail (a check of the checks).
 *
 * -B leaves encoded writes out of the races (buffered writes instead), to
 * tell what 5.10 does by itself from what the series does.
 *
 * -m: the kernel is the mainline series' (Linux 7.2), whose btrfs keeps
 * mainline's check of an encoded write's payload: smaller than the data it
 * stands for, not only within its sectors.
 *
 * Power cuts: "-W DIR -C CYCLE" runs the operations (no unlink, rename,
 * snapshot or NOCOW) on files in DIR of a mounted btrfs until the host
 * kills the machine; now and then a file is fsynced and reported as
 * "acked CYCLE NAME SIZE CRC" and never touched again. "-W DIR -V ACKED",
 * after the reboot, checks every file in the ACKED lines.
 *
 * Prints one line per check ("ok"/"FAIL"), the operations by kind, and
 * "N passed, N failed"; exits 1 if a check failed, 2 on a setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/btrfs.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <lzo/lzo1x.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "../lib/enc_iov.h"
#include "../lib/rng.h"

#ifndef O_ALLOW_ENCODED
#define O_ALLOW_ENCODED 040000000
#endif
#define X_RWF_ENCODED	0x200

#define C_NONE	0
#define C_ZLIB	1
#define C_ZSTD	2
#define C_LZO	3	/* LZO, 4 KiB pages */

#define KIB		1024L
#define SECTOR		4096L
#define MAXSIZE		(2048 * KIB)	/* no file grows beyond this */
#define MAXFILES	32
#define MAX_UNENC	(128 * KIB)
#define IOBUF		(512 * KIB)
#define HIST		24
#define HISTLEN		1024
#define PRINT_PER_KIND	3
#define MAXGROUP	5

#define ALIGN_UP(x, a)	(((x) + (a) - 1) / (a) * (a))
#define ALIGN_DN(x, a)	((x) / (a) * (a))
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

#define OPS(X) \
	X(EWRITE, "ewrite", 18) X(EREAD, "eread", 10) X(EWALK, "ewalk", 3) \
	X(READ, "read", 8) X(DREAD, "dread", 4) X(WRITE, "write", 10) \
	X(DWRITE, "dwrite", 5) X(MMAP, "mmap", 4) X(TRUNC, "trunc", 4) \
	X(PUNCH, "punch", 3) X(PREALLOC, "prealloc", 3) X(CLONE, "clone", 5) \
	X(DEDUPE, "dedupe", 2) X(FSYNC, "fsync", 3) X(FDATASYNC, "fdatasync", 3) \
	X(UNLINK, "unlink", 1) X(RENAME, "rename", 2) X(NOCOW, "nocow", 1) \
	X(GROUP, "group", 8) X(SNAPSHOT, "snapshot", 1) X(FREEZE, "freeze", 0) \
	X(RACE, "race", 6)

#define X_ENUM(id, name, w) OP_##id,
enum { OPS(X_ENUM) NR_OPS };
#define X_NAME(id, name, w) name,
static const char *const opname[NR_OPS] = { OPS(X_NAME) };
#define X_W(id, name, w) w,
static unsigned int opweight[NR_OPS] = { OPS(X_W) };

struct ofile {
	pthread_mutex_t lock;
	int64_t size;
	int exists;
	int nocow;
	unsigned int gen;	/* power cuts: the file's generation */
	unsigned int hist_next;
	char hist[HIST][HISTLEN];
};

#define NR_KINDS 64
struct shared {
	uint64_t seq;
	uint64_t failures;
	uint64_t ops[NR_OPS];		/* done */
	uint64_t expected_err[NR_OPS];	/* refused as the oracle predicted */
	uint64_t bytes_enc_written, bytes_enc_read;
	uint64_t sub_ops;		/* the writes of groups */
	uint64_t dio_collisions;	/* fsync EIO from 5.10's DIO/buffered race */
	uint64_t races;			/* op_race() */
	uint64_t races_reordered;	/* explained only by another order */
	uint64_t race_kinds[8];		/* the racers, by kind */
	int stop;
	pthread_mutex_t print_lock;
	pthread_mutex_t log_lock;
	int snap_taken;			/* this cycle */
	int nsnaps;
	int64_t snap_size[MAXFILES];
	int snap_exists[MAXFILES];
	uint64_t kind_key[NR_KINDS];
	uint64_t kind_count[NR_KINDS];
	struct ofile f[MAXFILES];
};

static struct shared *sh;
static unsigned char *content;	/* MAXFILES * MAXSIZE, shared */
static unsigned char *snapshot_content;	/* the oracle at the last snapshot, shared */

static uint64_t seed = 1;
static long long seconds = 120;
static uint64_t op_limit, op_total;
static int nprocs = 2, nthreads = 2, nfiles = 12, ncycles = 2;
static const char *dev, *dev2, *mnt = "/mnt/stress", *oplog_path;
static const char *mnt2 = "/mnt/stress-recv";
static const char *modes[8];
static int nmodes;
static int logfd = -1;
static long long deadline_ns;
static int passed, failed;
static bool sync_each;	/* -S: fsync after every operation */
static bool inject;	/* -X: corrupt the oracle once, to show the checks fail */
static bool race_base;	/* -B: races without encoded writes (5.10's own behaviour) */
static bool mainline;	/* -m: mainline btrfs' payload check */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Random numbers: struct rng, rng_next(), below(), chance() in rng.h.  */

/*
 * The data of an operation, from its own seed (logged): stretches of
 * text, runs of one byte, zeroes and (seldom) random bytes, so that most
 * of it compresses and some does not.
 */
static void gen_data(uint64_t dseed, unsigned char *buf, size_t len)
{
	static const char *const words[] = {
		"extent ", "btrfs ", "encoded ", "stress ", "sector ", "inode ",
		"zstd ", "zlib ", "lzo ", "page ", "cache ", "ordered ",
	};
	struct rng r = { dseed };
	size_t pos = 0;

	while (pos < len) {
		size_t seg = 256 + below(&r, 16 * KIB);
		unsigned int kind = below(&r, 20);
		size_t i = 0;

		/* Not in MIN(), which would draw twice and could overrun. */
		seg = MIN(seg, len - pos);

		if (kind < 11) {
			while (i < seg) {
				const char *w = words[below(&r, 12)];
				char num[24];
				size_t n = strlen(w);

				if (chance(&r, 20)) {
					snprintf(num, sizeof(num), "%u ",
						 (unsigned int)below(&r, 100000));
					w = num;
					n = strlen(num);
				}
				n = MIN(n, seg - i);
				memcpy(buf + pos + i, w, n);
				i += n;
			}
		} else if (kind < 15) {
			memset(buf + pos, (int)below(&r, 256), seg);
		} else if (kind < 19) {
			memset(buf + pos, 0, seg);
		} else {
			for (; i < seg; i++)
				buf[pos + i] = (unsigned char)rng_next(&r);
		}
		pos += seg;
	}
}

/* ------------------------------------------------------------------ */
/* btrfs' compressed extents in user space (as the selftests' codec).  */

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint32_t get_le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * btrfs' LZO framing: a le32 total length, then for each sector of input
 * a le32 segment length and the lzo1x data; a segment header never
 * straddles a sector boundary (fewer than 4 bytes left: zero padding).
 */
static long encode_lzo(const unsigned char *in, size_t len, unsigned char *out, size_t cap)
{
	unsigned char wrkmem[LZO1X_1_MEM_COMPRESS];
	unsigned char seg[SECTOR + SECTOR / 16 + 64 + 3];
	size_t pos = 4, done = 0, left;

	while (done < len) {
		size_t chunk = MIN(len - done, (size_t)SECTOR);
		lzo_uint seg_len = sizeof(seg);

		if (lzo1x_1_compress(in + done, chunk, seg, &seg_len, wrkmem) != LZO_E_OK)
			return -1;
		if (pos + 4 + seg_len + 4 > cap)
			return -1;
		put_le32(out + pos, seg_len);
		memcpy(out + pos + 4, seg, seg_len);
		pos += 4 + seg_len;
		done += chunk;
		left = SECTOR - pos % SECTOR;
		if (left < 4) {
			memset(out + pos, 0, left);
			pos += left;
		}
	}
	put_le32(out, pos);
	return pos;
}

static long encode(uint32_t comp, const unsigned char *in, size_t len, unsigned char *out,
		   size_t cap)
{
	if (comp == C_ZLIB) {
		uLongf n = cap;

		return compress2(out, &n, in, len, 3) == Z_OK ? (long)n : -1;
	}
	if (comp == C_ZSTD) {
		size_t n = ZSTD_compress(out, cap, in, len, 3);

		return ZSTD_isError(n) ? -1 : (long)n;
	}
	return encode_lzo(in, len, out, cap);
}

/* Decode into @out (@cap bytes); the decoded size or -1 (@why says why). */
static long decode_raw(uint32_t comp, const unsigned char *in, size_t in_len, unsigned char *out,
		       size_t cap, const char **why)
{
	*why = "";
	if (comp == C_ZLIB) {
		z_stream zs;
		int zret;
		long ret;

		memset(&zs, 0, sizeof(zs));
		if (inflateInit(&zs) != Z_OK)
			return -1;
		zs.next_in = (Bytef *)in;
		zs.avail_in = in_len;
		zs.next_out = out;
		zs.avail_out = cap;
		do {
			zret = inflate(&zs, Z_NO_FLUSH);
		} while (zret == Z_OK);
		ret = zs.total_out;
		inflateEnd(&zs);
		if (zret != Z_STREAM_END) {
			*why = "zlib stream does not end";
			return -1;
		}
		return ret;
	}
	if (comp == C_ZSTD) {
		size_t frame = ZSTD_findFrameCompressedSize(in, in_len), n;

		if (ZSTD_isError(frame)) {
			*why = "no zstd frame";
			return -1;
		}
		n = ZSTD_decompress(out, cap, in, frame);
		if (ZSTD_isError(n)) {
			*why = ZSTD_getErrorName(n);
			return -1;
		}
		return n;
	}
	if (comp == C_LZO) {
		size_t total, pos = 4, produced = 0;

		if (in_len < 4)
			return -1;
		total = get_le32(in);
		if (total < 4 || total > in_len) {
			*why = "lzo: bad total length";
			return -1;
		}
		while (pos < total && produced < cap) {
			lzo_uint seg_out;
			size_t seg;

			if (SECTOR - pos % SECTOR < 4)
				pos += SECTOR - pos % SECTOR;
			if (pos >= total)
				break;
			if (total - pos < 4) {
				*why = "lzo: truncated segment header";
				return -1;
			}
			seg = get_le32(in + pos);
			pos += 4;
			if (!seg || seg > total - pos) {
				*why = "lzo: bad segment length";
				return -1;
			}
			seg_out = MIN(cap - produced, (size_t)SECTOR);
			if (lzo1x_decompress_safe(in + pos, seg, out + produced, &seg_out,
						  NULL) != LZO_E_OK) {
				*why = "lzo: segment does not decode";
				return -1;
			}
			produced += seg_out;
			pos += seg;
		}
		return produced;
	}
	*why = "unknown compression";
	return -1;
}

/*
 * decode_raw(), then zeroes for the rest of @out. The last extent of a file
 * may decode to fewer bytes than unencoded_len, and zeroes stand for the
 * rest; but a decoder may have written there (libzstd may leave bytes
 * anywhere past the end of what it produced), so the rest is zeroed after
 * decoding, not before.
 */
static long decode(uint32_t comp, const unsigned char *in, size_t in_len, unsigned char *out,
		   size_t cap, const char **why)
{
	long n = decode_raw(comp, in, in_len, out, cap, why);

	if (n >= 0)
		memset(out + n, 0, cap - n);
	return n;
}

static const char *compname(uint32_t c)
{
	static const char *const n[] = { "none", "zlib", "zstd", "lzo4k" };

	return c < 4 ? n[c] : "?";
}

/* ------------------------------------------------------------------ */
/* Per-thread context, the operation log and failures.                 */

struct ctx {
	struct rng r;
	int id;
	uint64_t op;		/* number of the current operation */
	unsigned char *data, *zbuf, *rbuf, *dec;
	size_t loglen;
	char logbuf[64 * 1024];
	char line[2048];
	size_t linelen;
};

static void log_flush(struct ctx *c)
{
	if (!c->loglen)
		return;
	if (logfd >= 0) {
		pthread_mutex_lock(&sh->log_lock);
		if (write(logfd, c->logbuf, c->loglen) < 0)
			perror("stress: op log");
		pthread_mutex_unlock(&sh->log_lock);
	}
	c->loglen = 0;
}

/* Start the log line of a new operation. */
static void op_begin(struct ctx *c, int op, int fi)
{
	c->op = __atomic_add_fetch(&sh->seq, 1, __ATOMIC_RELAXED);
	c->linelen = snprintf(c->line, sizeof(c->line), "#%" PRIu64 " w%d %s f%02d", c->op,
			      c->id, opname[op], fi);
}

static void __attribute__((format(printf, 2, 3))) op_add(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->linelen >= sizeof(c->line) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(c->line + c->linelen, sizeof(c->line) - c->linelen, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->linelen = MIN(c->linelen + n, sizeof(c->line) - 1);
}

/* End the line: into the files' histories and the log. */
static void op_end(struct ctx *c, int fa, int fb)
{
	struct ofile *f;

	size_t n = MIN(c->linelen, HISTLEN - 1);

	f = &sh->f[fa];
	memcpy(f->hist[f->hist_next % HIST], c->line, n);
	f->hist[f->hist_next++ % HIST][n] = '\0';
	if (fb >= 0 && fb != fa) {
		f = &sh->f[fb];
		memcpy(f->hist[f->hist_next % HIST], c->line, n);
		f->hist[f->hist_next++ % HIST][n] = '\0';
	}
	if (c->loglen + c->linelen + 2 > sizeof(c->logbuf))
		log_flush(c);
	memcpy(c->logbuf + c->loglen, c->line, c->linelen);
	c->loglen += c->linelen;
	c->logbuf[c->loglen++] = '\n';
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h | 1;
}

/* Failures of one kind are printed a few times, then only counted. */
static bool first_of_kind(const char *kind)
{
	uint64_t key = hash_str(kind);
	int i;

	for (i = 0; i < NR_KINDS; i++) {
		uint64_t zero = 0;

		if (__atomic_compare_exchange_n(&sh->kind_key[i], &zero, key, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
		    zero == key)
			return __atomic_add_fetch(&sh->kind_count[i], 1, __ATOMIC_RELAXED) <=
			       PRINT_PER_KIND;
	}
	return false;
}

static void resync(struct ctx *c, int fi);

/*
 * The oracle and the file disagree: count it, print it with the file's
 * history (the first few of a kind), and take the file as it is now so
 * that one fault is not reported over and over.
 */
static void __attribute__((format(printf, 4, 5)))
fail(struct ctx *c, int fi, const char *kind, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	unsigned int i;

	__atomic_add_fetch(&sh->failures, 1, __ATOMIC_RELAXED);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	op_add(c, " FAIL(%s)", kind);
	if (first_of_kind(kind)) {
		struct ofile *f = &sh->f[fi];

		log_flush(c);
		pthread_mutex_lock(&sh->print_lock);
		printf("FAIL seed=%" PRIu64 " op=%" PRIu64 " f%02d %s: %s\n", seed, c->op, fi,
		       kind, msg);
		printf("  this op: %s\n", c->line);
		printf("  last ops on f%02d (oldest first):\n", fi);
		for (i = f->hist_next > HIST ? f->hist_next - HIST : 0; i < f->hist_next; i++)
			printf("    %s\n", f->hist[i % HIST]);
		fflush(stdout);
		pthread_mutex_unlock(&sh->print_lock);
	}
	if (fi >= 0)
		resync(c, fi);
}

/* ------------------------------------------------------------------ */
/* The oracle.                                                          */

static unsigned char *fdata(int fi)
{
	return content + (size_t)fi * MAXSIZE;
}

static void run_proc(int p, int cycle, int mode);

/* Power cuts (-W): the cycle that writes, or -1. */
static int pc_cycle = -1;
static const char *pc_dir, *pc_acked;

static void fpath(int fi, char *buf, size_t len)
{
	if (pc_dir)
		snprintf(buf, len, "%s/c%d-f%02d-g%u", pc_dir, pc_cycle, fi, sh->f[fi].gen);
	else
		snprintf(buf, len, "%s/d/f%02d", mnt, fi);
}

static void set_size(int fi, int64_t size)
{
	struct ofile *f = &sh->f[fi];

	if (size < f->size)
		memset(fdata(fi) + size, 0, f->size - size);
	f->size = size;
}

/* A write of @len bytes at @off: the oracle's view. */
static void apply(int fi, int64_t off, const unsigned char *buf, size_t len)
{
	struct ofile *f = &sh->f[fi];

	memcpy(fdata(fi) + off, buf, len);
	if (off + (int64_t)len > f->size)
		f->size = off + len;
}

static void resync(struct ctx *c, int fi)
{
	struct ofile *f = &sh->f[fi];
	char path[256];
	struct stat st;
	ssize_t n;
	int fd;

	(void)c;
	fpath(fi, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		f->exists = 0;
		set_size(fi, 0);
		return;
	}
	f->exists = 1;
	memset(fdata(fi), 0, MAXSIZE);
	f->size = 0;
	if (fstat(fd, &st) == 0) {
		f->size = MIN(st.st_size, MAXSIZE);
		n = pread(fd, fdata(fi), f->size, 0);
		if (n >= 0 && n < f->size)
			memset(fdata(fi) + n, 0, f->size - n);
	}
	close(fd);
}

static int open_file(struct ctx *c, int fi, int flags)
{
	struct ofile *f = &sh->f[fi];
	char path[256];
	int fd;

	fpath(fi, path, sizeof(path));
	fd = open(path, flags | O_CLOEXEC | O_CREAT, 0644);
	if (fd < 0) {
		op_add(c, " open:%s", strerror(errno));
		fail(c, fi, "open", "open %s: %s", path, strerror(errno));
		return -1;
	}
	if (!f->exists) {
		f->exists = 1;
		set_size(fi, 0);
		f->nocow = 0;
	}
	return fd;
}

/* The size after an operation must be the oracle's. */
static void check_size(struct ctx *c, int fi, int fd, const char *what)
{
	struct stat st;
	char kind[64];

	if (fstat(fd, &st)) {
		fail(c, fi, "fstat", "fstat: %s", strerror(errno));
		return;
	}
	if (st.st_size != sh->f[fi].size) {
		snprintf(kind, sizeof(kind), "size after %s", what);
		fail(c, fi, kind, "size %jd, oracle %jd", (intmax_t)st.st_size,
		     (intmax_t)sh->f[fi].size);
	}
}

static long first_diff(const unsigned char *a, const unsigned char *b, size_t len)
{
	size_t i;

	if (!memcmp(a, b, len))
		return -1;
	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

/* Data read at @off must be the oracle's. Returns false if not. */
static bool check_data(struct ctx *c, int fi, const char *what, const unsigned char *buf,
		       int64_t off, size_t len)
{
	long d = first_diff(buf, fdata(fi) + off, len);
	char kind[64];

	if (d < 0)
		return true;
	snprintf(kind, sizeof(kind), "data of %s", what);
	fail(c, fi, kind, "%zu bytes at %jd differ from offset %jd: read %02x, oracle %02x",
	     len, (intmax_t)off, (intmax_t)(off + d), buf[d], fdata(fi)[off + d]);
	return false;
}

/*
 * One encoded read at @pos (sector-aligned) into the context's buffers,
 * checked against the oracle for the bytes in [@pos, @limit) (the rest of
 * the extent may belong to a range others are writing). Returns the file
 * bytes it covered (0 at end of file), or -1 after a failure.
 */
static int64_t enc_read_check(struct ctx *c, int fi, int fd, int64_t pos, int64_t limit,
			      const char *what)
{
	struct enc_iov enc;
	struct iovec iov[2];
	int64_t size = sh->f[fi].size;
	const char *why;
	ssize_t ret;
	long dlen;
	size_t n, cap;
	uint64_t i;

	memset(&enc, 0xa5, sizeof(enc));
	iov[0].iov_base = &enc;
	iov[0].iov_len = sizeof(enc);
	iov[1].iov_base = c->rbuf;
	iov[1].iov_len = IOBUF;
	ret = preadv2(fd, iov, 2, pos, X_RWF_ENCODED);
	if (ret < 0) {
		fail(c, fi, "encoded read error", "%s at %jd: %s", what, (intmax_t)pos,
		     strerror(errno));
		return -1;
	}
	if (ret)
		op_add(c, " [%jd:%s len=%" PRIu64 " ulen=%" PRIu64 " uoff=%" PRIu64 " ret=%zd]",
		       (intmax_t)pos, compname(enc.compression), enc.len, enc.unencoded_len,
		       enc.unencoded_offset, ret);
	else
		op_add(c, " [%jd:eof]", (intmax_t)pos);
	if (pos >= size) {
		if (ret)
			fail(c, fi, "encoded read past EOF", "%s at %jd, size %jd: returned %zd",
			     what, (intmax_t)pos, (intmax_t)size, ret);
		return ret ? -1 : 0;
	}
	if (!ret || !enc.len || enc.encryption || pos + (int64_t)enc.len > size) {
		fail(c, fi, "encoded read result", "%s at %jd, size %jd: ret %zd, len %" PRIu64
		     ", encryption %u", what, (intmax_t)pos, (intmax_t)size, ret, enc.len,
		     enc.encryption);
		return -1;
	}
	__atomic_add_fetch(&sh->bytes_enc_read, ret, __ATOMIC_RELAXED);
	n = MIN((int64_t)enc.len, limit - pos);
	if (enc.compression == C_NONE) {
		if ((uint64_t)ret != enc.len || enc.unencoded_len != enc.len ||
		    enc.unencoded_offset) {
			fail(c, fi, "encoded read of plain data",
			     "%s at %jd: ret %zd, len %" PRIu64 ", unencoded_len %" PRIu64
			     ", offset %" PRIu64, what, (intmax_t)pos, ret, enc.len,
			     enc.unencoded_len, enc.unencoded_offset);
			return -1;
		}
		return check_data(c, fi, what, c->rbuf, pos, n) ? (int64_t)enc.len : -1;
	}
	if (enc.compression > C_LZO || !enc.unencoded_len || enc.unencoded_len > MAX_UNENC ||
	    enc.unencoded_offset >= enc.unencoded_len ||
	    enc.len > enc.unencoded_len - enc.unencoded_offset) {
		fail(c, fi, "encoded read metadata", "%s at %jd: compression %u len %" PRIu64
		     " unencoded_len %" PRIu64 " unencoded_offset %" PRIu64, what,
		     (intmax_t)pos, enc.compression, enc.len, enc.unencoded_len,
		     enc.unencoded_offset);
		return -1;
	}
	/*
	 * Mainline's btrfs compresses an inline extent's whole sector: its
	 * stream may decode past unencoded_len, into zeroes only.
	 */
	cap = mainline ? ALIGN_UP(enc.unencoded_len, SECTOR) : enc.unencoded_len;
	dlen = decode(enc.compression, c->rbuf, ret, c->dec, cap, &why);
	if (dlen < 0) {
		fail(c, fi, "encoded read undecodable", "%s at %jd: %s extent of %zd bytes: %s",
		     what, (intmax_t)pos, compname(enc.compression), ret, why);
		return -1;
	}
	for (i = enc.unencoded_len; i < (uint64_t)dlen; i++) {
		if (c->dec[i]) {
			fail(c, fi, "encoded read decodes past unencoded_len",
			     "%s at %jd: byte %" PRIu64 " of %ld is not zero", what,
			     (intmax_t)pos, i, dlen);
			return -1;
		}
	}
	if ((uint64_t)dlen != enc.unencoded_len)
		op_add(c, " decoded=%ld", dlen);
	return check_data(c, fi, what, c->dec + enc.unencoded_offset, pos, n) ?
	       (int64_t)enc.len : -1;
}

/* The whole file by encoded reads, extent by extent. */
static bool enc_walk(struct ctx *c, int fi, int fd, const char *what)
{
	int64_t pos = 0, size = sh->f[fi].size, got;

	while (pos < size) {
		got = enc_read_check(c, fi, fd, pos, size, what);
		if (got < 0)
			return false;
		if (!got) {
			fail(c, fi, "encoded walk", "%s: 0 at %jd, size %jd", what,
			     (intmax_t)pos, (intmax_t)size);
			return false;
		}
		pos += got;
	}
	return enc_read_check(c, fi, fd, pos, size, what) == 0;
}

/* Read [off, off + len), short at EOF, against the oracle, in pieces. */
static bool read_check(struct ctx *c, int fi, int fd, int64_t off, size_t len,
		       const char *what)
{
	int64_t size = sh->f[fi].size;
	size_t done = 0;

	do {
		size_t piece = MIN(len - done, (size_t)IOBUF);
		int64_t at = off + done;
		size_t want = at >= size ? 0 : MIN((int64_t)piece, size - at);
		ssize_t n = pread(fd, c->rbuf, piece, at);

		if (n < 0) {
			fail(c, fi, "read error", "%s %zu at %jd: %s", what, piece,
			     (intmax_t)at, strerror(errno));
			return false;
		}
		if ((size_t)n != want) {
			fail(c, fi, "read length", "%s %zu at %jd, size %jd: %zd bytes, want %zu",
			     what, piece, (intmax_t)at, (intmax_t)size, n, want);
			return false;
		}
		if (!check_data(c, fi, what, c->rbuf, at, n))
			return false;
		done += piece;
		if (want < piece)
			break;
	} while (done < len);
	return true;
}

/* ------------------------------------------------------------------ */
/* Operations. Each runs with its file's lock held.                    */

/* An encoded write's arguments, drawn from the file's state. */
struct ewrite {
	uint32_t comp;
	uint64_t dseed;
	int64_t off;
	uint64_t ulen, uoff, len;
	long zlen;
	bool expect_einval;
	const char *why;
};

/* Encode @w's data into @c->zbuf; set what the kernel must answer. */
static void ewrite_prepare(struct ctx *c, int fi, struct ewrite *w, unsigned char *data,
			   unsigned char *zbuf, int64_t size_now)
{
	gen_data(w->dseed, data, w->ulen);
	w->zlen = encode(w->comp, data, w->ulen, zbuf, 2 * MAX_UNENC);
	w->expect_einval = false;
	w->why = "";
	if (w->zlen < 0) {
		/* The encoder gave up (LZO's worst case): send raw bytes. */
		w->zlen = w->ulen;
		memcpy(zbuf, data, w->ulen);
	}
	if (mainline ? w->zlen >= (int64_t)w->ulen :
	    ALIGN_UP(w->zlen, SECTOR) > ALIGN_UP((int64_t)w->ulen, SECTOR)) {
		w->expect_einval = true;
		w->why = "payload larger than data";
	} else if ((w->off + w->len) % SECTOR && w->off + (int64_t)w->len < size_now) {
		w->expect_einval = true;
		w->why = "unaligned end inside file";
	} else if (sh->f[fi].nocow) {
		w->expect_einval = true;
		w->why = "NOCOW file";
	}
	(void)c;
}

static ssize_t ewrite_do(int fd, const struct ewrite *w, unsigned char *zbuf)
{
	struct enc_iov enc = {
		.len = w->len,
		.unencoded_len = w->ulen,
		.unencoded_offset = w->uoff,
		.compression = w->comp,
	};
	struct iovec iov[2] = {
		{ &enc, sizeof(enc) },
		{ zbuf, (size_t)w->zlen },
	};

	return pwritev2(fd, iov, 2, w->off, X_RWF_ENCODED);
}

/* Draw the extent's shape: unencoded length, offset into it, length. */
static void ewrite_shape(struct rng *r, struct ewrite *w)
{
	w->comp = 1 + below(r, 3);
	w->dseed = rng_next(r);
	if (chance(r, 65))
		w->ulen = SECTOR * (1 + below(r, MAX_UNENC / SECTOR));
	else
		w->ulen = 1 + below(r, MAX_UNENC);
	w->uoff = 0;
	if (w->ulen > SECTOR && chance(r, 30))
		w->uoff = SECTOR * below(r, (w->ulen - 1) / SECTOR + 1);
	if (w->uoff >= w->ulen)
		w->uoff = 0;
	w->len = w->ulen - w->uoff;
	if (chance(r, 40))
		w->len = 1 + below(r, w->len);
}

static void op_ewrite(struct ctx *c, int fi)
{
	struct rng *r = &c->r;
	int64_t size = sh->f[fi].size;
	struct ewrite w;
	const char *where;
	ssize_t ret;
	int fd;

	ewrite_shape(r, &w);
	switch (below(r, 4)) {
	case 0:
		where = "eof";
		w.off = ALIGN_UP(size, SECTOR);
		break;
	case 1:
		where = "inside";
		w.off = ALIGN_DN((int64_t)below(r, size + 1), SECTOR);
		break;
	case 2:
		where = "past";
		w.off = ALIGN_UP(size, SECTOR) + SECTOR * (1 + below(r, 64));
		break;
	default:
		where = "zero";
		w.off = 0;
		break;
	}
	if (w.off + (int64_t)w.len > MAXSIZE)
		w.off = ALIGN_DN((int64_t)below(r, MAXSIZE - w.len), SECTOR);
	/* Most writes ending inside the file end on a sector boundary. */
	if ((w.off + w.len) % SECTOR && w.off + (int64_t)w.len < size && chance(r, 90)) {
		w.len = ALIGN_DN(w.len, SECTOR);
		if (!w.len)
			w.len = MIN(w.ulen - w.uoff, (uint64_t)SECTOR);
	}
	fd = open_file(c, fi, O_RDWR | O_ALLOW_ENCODED);
	if (fd < 0)
		return;
	ewrite_prepare(c, fi, &w, c->data, c->zbuf, size);
	op_add(c, " %s off=%jd len=%" PRIu64 " ulen=%" PRIu64 " uoff=%" PRIu64 " %s zlen=%ld dseed=%" PRIx64 " size=%jd",
	       where, (intmax_t)w.off, w.len, w.ulen, w.uoff, compname(w.comp), w.zlen, w.dseed,
	       (intmax_t)size);
	ret = ewrite_do(fd, &w, c->zbuf);
	op_add(c, " -> %zd%s%s", ret, ret < 0 ? " " : "", ret < 0 ? strerror(errno) : "");
	if (w.expect_einval) {
		if (ret >= 0) {
			char kind[80];

			snprintf(kind, sizeof(kind), "encoded write accepted (%s)", w.why);
			fail(c, fi, kind, "returned %zd, want EINVAL (%s)", ret, w.why);
		} else if (errno != EINVAL) {
			fail(c, fi, "encoded write errno", "%s, want EINVAL (%s)",
			     strerror(errno), w.why);
		} else {
			__atomic_add_fetch(&sh->expected_err[OP_EWRITE], 1, __ATOMIC_RELAXED);
			check_size(c, fi, fd, "refused encoded write");
		}
		close(fd);
		return;
	}
	if (ret != w.zlen) {
		fail(c, fi, "encoded write failed", "returned %zd (%s), want %ld", ret,
		     ret < 0 ? strerror(errno) : "short", w.zlen);
		close(fd);
		return;
	}
	__atomic_add_fetch(&sh->bytes_enc_written, w.zlen, __ATOMIC_RELAXED);
	apply(fi, w.off, c->data + w.uoff, w.len);
	check_size(c, fi, fd, "encoded write");
	if (chance(r, 30))
		read_check(c, fi, fd, w.off, w.len, "read after encoded write");
	else if (chance(r, 30))
		enc_read_check(c, fi, fd, w.off, w.off + w.len, "encoded read after encoded write");
	close(fd);
}

static void op_eread(struct ctx *c, int fi)
{
	int64_t size = sh->f[fi].size;
	int64_t pos = ALIGN_DN((int64_t)below(&c->r, size + 2 * SECTOR), SECTOR);
	int fd = open_file(c, fi, O_RDONLY | O_ALLOW_ENCODED);

	if (fd < 0)
		return;
	op_add(c, " size=%jd", (intmax_t)size);
	enc_read_check(c, fi, fd, pos, size, "encoded read");
	close(fd);
}

static void op_ewalk(struct ctx *c, int fi)
{
	int fd = open_file(c, fi, O_RDONLY | O_ALLOW_ENCODED);

	if (fd < 0)
		return;
	op_add(c, " size=%jd", (intmax_t)sh->f[fi].size);
	enc_walk(c, fi, fd, "encoded walk");
	close(fd);
}

static void op_read(struct ctx *c, int fi, bool direct)
{
	struct rng *r = &c->r;
	int64_t size = sh->f[fi].size, off;
	size_t len;
	int fd;

	if (direct) {
		off = ALIGN_DN((int64_t)below(r, size + SECTOR), SECTOR);
		len = SECTOR * (1 + below(r, 64));
	} else {
		off = below(r, size + SECTOR);
		len = 1 + below(r, 256 * KIB);
	}
	fd = open_file(c, fi, O_RDONLY | (direct ? O_DIRECT : 0));
	if (fd < 0)
		return;
	op_add(c, " off=%jd len=%zu size=%jd", (intmax_t)off, len, (intmax_t)size);
	read_check(c, fi, fd, off, len, direct ? "direct read" : "read");
	close(fd);
}

static void op_write(struct ctx *c, int fi, bool direct)
{
	struct rng *r = &c->r;
	int64_t size = sh->f[fi].size, off;
	uint64_t dseed = rng_next(r);
	size_t len;
	ssize_t n;
	int fd;

	if (direct) {
		len = SECTOR * (1 + below(r, 32));
		off = ALIGN_DN((int64_t)below(r, MIN(size + 64 * KIB, MAXSIZE - (int64_t)len) + 1),
			       SECTOR);
	} else {
		len = 1 + below(r, 128 * KIB);
		off = below(r, MIN(size + 64 * KIB, MAXSIZE - (int64_t)len) + 1);
	}
	fd = open_file(c, fi, O_RDWR | (direct ? O_DIRECT : 0));
	if (fd < 0)
		return;
	gen_data(dseed, c->data, len);
	op_add(c, " off=%jd len=%zu dseed=%" PRIx64 " size=%jd", (intmax_t)off, len, dseed,
	       (intmax_t)size);
	n = pwrite(fd, c->data, len, off);
	op_add(c, " -> %zd", n);
	if (n != (ssize_t)len) {
		fail(c, fi, direct ? "direct write failed" : "write failed", "%zd (%s), want %zu",
		     n, n < 0 ? strerror(errno) : "short", len);
		close(fd);
		return;
	}
	apply(fi, off, c->data, len);
	check_size(c, fi, fd, direct ? "direct write" : "write");
	close(fd);
}

/*
 * Linux 5.10's direct I/O (iomap) sets EIO on the mapping when it cannot
 * invalidate page cache that a concurrent buffered read brought in over
 * the range it wrote ("Page cache invalidation failure on direct I/O" in
 * the kernel log); the next fsync or msync reports it although the data
 * on disk is right (the whole-file checks verify that). It happens without encoded
 * I/O, on the base kernel's btrfs as on any iomap file system, so such an
 * EIO is counted, not failed. Any other error fails.
 */
static bool dio_collision_logged(void)
{
	static const char msg[] = "Page cache invalidation failure on direct I/O";
	char rec[4096];
	bool found = false;
	ssize_t n;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (!found) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		found = strstr(rec, msg) != NULL;
	}
	close(fd);
	return found;
}

static void sync_failed(struct ctx *c, int fi, const char *kind, int err)
{
	if (err == EIO && dio_collision_logged()) {
		__atomic_add_fetch(&sh->dio_collisions, 1, __ATOMIC_RELAXED);
		op_add(c, " EIO(dio collision)");
		return;
	}
	fail(c, fi, kind, "%s", strerror(err));
}

static void op_mmap(struct ctx *c, int fi)
{
	struct rng *r = &c->r;
	int64_t size = sh->f[fi].size, off, moff;
	uint64_t dseed = rng_next(r);
	size_t len, mlen;
	unsigned char *m;
	int fd;

	if (!size) {
		op_write(c, fi, false);
		return;
	}
	off = below(r, size);
	len = 1 + below(r, MIN(size - off, 64 * KIB));
	moff = ALIGN_DN(off, SECTOR);
	mlen = off + len - moff;
	fd = open_file(c, fi, O_RDWR);
	if (fd < 0)
		return;
	gen_data(dseed, c->data, len);
	op_add(c, " off=%jd len=%zu dseed=%" PRIx64 " size=%jd", (intmax_t)off, len, dseed,
	       (intmax_t)size);
	m = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, moff);
	if (m == MAP_FAILED) {
		fail(c, fi, "mmap", "mmap %zu at %jd: %s", mlen, (intmax_t)moff, strerror(errno));
		close(fd);
		return;
	}
	memcpy(m + (off - moff), c->data, len);
	if (chance(r, 50) && msync(m, mlen, MS_SYNC))
		sync_failed(c, fi, "msync", errno);
	munmap(m, mlen);
	apply(fi, off, c->data, len);
	check_size(c, fi, fd, "mmap write");
	close(fd);
}

static void op_trunc(struct ctx *c, int fi)
{
	struct rng *r = &c->r;
	int64_t size = sh->f[fi].size, nsize;
	int fd;

	if (chance(r, 50))
		nsize = below(r, size + 1);
	else
		nsize = size + below(r, MIN(MAXSIZE - size, 256 * KIB) + 1);
	if (chance(r, 30))
		nsize = ALIGN_DN(nsize, SECTOR);
	fd = open_file(c, fi, O_RDWR);
	if (fd < 0)
		return;
	op_add(c, " %jd -> %jd", (intmax_t)size, (intmax_t)nsize);
	if (ftruncate(fd, nsize)) {
		fail(c, fi, "truncate", "%s", strerror(errno));
	} else {
		set_size(fi, nsize);
		check_size(c, fi, fd, "truncate");
		if (nsize && chance(r, 50))
			read_check(c, fi, fd, ALIGN_DN(nsize - 1, SECTOR), 2 * SECTOR,
				   "read after truncate");
	}
	close(fd);
}

static void op_falloc(struct ctx *c, int fi, bool punch)
{
	struct rng *r = &c->r;
	int64_t size = sh->f[fi].size, off, len;
	int mode, fd;

	if (punch) {
		off = below(r, size + 1);
		len = 1 + below(r, 256 * KIB);
		mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	} else {
		off = below(r, MIN(size + 64 * KIB, MAXSIZE - 1));
		len = 1 + below(r, MIN(256 * KIB, MAXSIZE - off));
		mode = chance(r, 50) ? FALLOC_FL_KEEP_SIZE : 0;
	}
	fd = open_file(c, fi, O_RDWR);
	if (fd < 0)
		return;
	op_add(c, " mode=%d off=%jd len=%jd size=%jd", mode, (intmax_t)off, (intmax_t)len,
	       (intmax_t)size);
	if (fallocate(fd, mode, off, len)) {
		fail(c, fi, punch ? "punch" : "prealloc", "%s", strerror(errno));
		close(fd);
		return;
	}
	if (punch) {
		if (off < size)
			memset(fdata(fi) + off, 0, MIN(len, size - off));
	} else if (!mode && off + len > size) {
		set_size(fi, off + len);
	}
	check_size(c, fi, fd, punch ? "punch" : "prealloc");
	if (chance(r, 40))
		read_check(c, fi, fd, ALIGN_DN(off, SECTOR), len + 2 * SECTOR,
			   punch ? "read after punch" : "read after prealloc");
	close(fd);
}

/* The source of a clone or dedupe read-only, its destination read-write. */
static bool open_pair(struct ctx *c, int fa, int fb, int *fda, int *fdb)
{
	*fda = open_file(c, fa, O_RDONLY);
	if (*fda < 0)
		return false;
	*fdb = open_file(c, fb, O_RDWR);
	if (*fdb < 0) {
		close(*fda);
		return false;
	}
	return true;
}

/* @fa and @fb locked (the same file: once). */
static void op_clone(struct ctx *c, int fa, int fb)
{
	struct rng *r = &c->r;
	int64_t sa = sh->f[fa].size, sb = sh->f[fb].size, soff, doff, len;
	struct file_clone_range fcr;
	bool to_eof = false;
	int fda, fdb;

	if (sa < SECTOR) {
		op_add(c, " f%02d too small", fb);
		return;
	}
	soff = ALIGN_DN((int64_t)below(r, sa), SECTOR);
	if (chance(r, 30)) {
		to_eof = true;
		len = sa - soff;
	} else {
		len = SECTOR * (1 + below(r, (ALIGN_DN(sa, SECTOR) - soff) / SECTOR));
		if (soff + len > sa)
			len = ALIGN_DN(sa - soff, SECTOR);
		if (!len) {
			to_eof = true;
			len = sa - soff;
		}
	}
	if (to_eof && len % SECTOR) {
		/* A clone of an unaligned tail must reach the end of the destination. */
		doff = ALIGN_UP(MAX(sb - len, 0), SECTOR);
	} else {
		doff = ALIGN_DN((int64_t)below(r, MIN(sb + 64 * KIB, MAXSIZE - len) + 1), SECTOR);
	}
	if (doff + len > MAXSIZE ||
	    (fa == fb && doff < soff + ALIGN_UP(len, SECTOR) && soff < doff + ALIGN_UP(len, SECTOR))) {
		op_add(c, " f%02d no room", fb);
		return;
	}
	if (!open_pair(c, fa, fb, &fda, &fdb))
		return;
	op_add(c, " -> f%02d soff=%jd len=%jd doff=%jd sizes=%jd,%jd", fb, (intmax_t)soff,
	       (intmax_t)len, (intmax_t)doff, (intmax_t)sa, (intmax_t)sb);
	fcr.src_fd = fda;
	fcr.src_offset = soff;
	fcr.src_length = len;
	fcr.dest_offset = doff;
	if (ioctl(fdb, FICLONERANGE, &fcr)) {
		int err = errno;

		op_add(c, " -> %s", strerror(err));
		if (!(sh->f[fa].nocow != sh->f[fb].nocow && err == EINVAL))
			fail(c, fb, "clone", "%s", strerror(err));
		else
			__atomic_add_fetch(&sh->expected_err[OP_CLONE], 1, __ATOMIC_RELAXED);
	} else {
		if (sh->f[fa].nocow != sh->f[fb].nocow)
			fail(c, fb, "clone between NOCOW and COW accepted", "want EINVAL");
		memmove(fdata(fb) + doff, fdata(fa) + soff, len);
		if (doff + len > sh->f[fb].size)
			sh->f[fb].size = doff + len;
		check_size(c, fb, fdb, "clone");
		if (chance(r, 50))
			read_check(c, fb, fdb, doff, len, "read after clone");
	}
	close(fda);
	close(fdb);
}

static void op_dedupe(struct ctx *c, int fa, int fb)
{
	struct rng *r = &c->r;
	int64_t sa = sh->f[fa].size, sb = sh->f[fb].size, soff, doff, len;
	struct {
		struct file_dedupe_range h;
		struct file_dedupe_range_info i;
	} d;
	bool same;
	int fda, fdb;

	if (sa < SECTOR || sb < SECTOR) {
		op_add(c, " f%02d too small", fb);
		return;
	}
	len = SECTOR * (1 + below(r, MIN(ALIGN_DN(sa, SECTOR), ALIGN_DN(sb, SECTOR)) / SECTOR));
	len = MIN(len, 256 * KIB);
	soff = ALIGN_DN((int64_t)below(r, ALIGN_DN(sa, SECTOR) - len + 1), SECTOR);
	doff = ALIGN_DN((int64_t)below(r, ALIGN_DN(sb, SECTOR) - len + 1), SECTOR);
	if (fa == fb && doff < soff + len && soff < doff + len) {
		op_add(c, " overlap");
		return;
	}
	if (!open_pair(c, fa, fb, &fda, &fdb))
		return;
	op_add(c, " -> f%02d soff=%jd len=%jd doff=%jd", fb, (intmax_t)soff, (intmax_t)len,
	       (intmax_t)doff);
	if (chance(r, 60)) {
		/* Make the ranges equal first, by an ordinary write. */
		memcpy(c->data, fdata(fa) + soff, len);
		if (pwrite(fdb, c->data, len, doff) != len) {
			fail(c, fb, "write failed", "dedupe's write: %s", strerror(errno));
			goto out;
		}
		apply(fb, doff, c->data, len);
		op_add(c, " copied");
	}
	same = !memcmp(fdata(fa) + soff, fdata(fb) + doff, len);
	memset(&d, 0, sizeof(d));
	d.h.src_offset = soff;
	d.h.src_length = len;
	d.h.dest_count = 1;
	d.i.dest_fd = fdb;
	d.i.dest_offset = doff;
	if (ioctl(fda, FIDEDUPERANGE, &d)) {
		fail(c, fb, "dedupe", "%s", strerror(errno));
		goto out;
	}
	op_add(c, " -> status %d bytes %llu", d.i.status, (unsigned long long)d.i.bytes_deduped);
	if (sh->f[fa].nocow != sh->f[fb].nocow) {
		/* btrfs refuses to share extents between NOCOW and COW files. */
		if (d.i.status != -EINVAL && d.i.status != FILE_DEDUPE_RANGE_DIFFERS)
			fail(c, fb, "dedupe NOCOW with COW", "status %d", d.i.status);
	} else if (same && (d.i.status != FILE_DEDUPE_RANGE_SAME ||
			    d.i.bytes_deduped != (uint64_t)len)) {
		fail(c, fb, "dedupe of equal ranges", "status %d, %llu bytes", d.i.status,
		     (unsigned long long)d.i.bytes_deduped);
	} else if (!same && d.i.status != FILE_DEDUPE_RANGE_DIFFERS) {
		fail(c, fb, "dedupe of different ranges", "status %d", d.i.status);
	}
	check_size(c, fb, fdb, "dedupe");
	if (chance(r, 50))
		read_check(c, fb, fdb, doff, len, "read after dedupe");
out:
	close(fda);
	close(fdb);
}

static void op_sync(struct ctx *c, int fi, bool data_only)
{
	int fd = open_file(c, fi, chance(&c->r, 50) ? O_RDWR : O_RDONLY);

	if (fd < 0)
		return;
	if (data_only ? fdatasync(fd) : fsync(fd))
		sync_failed(c, fi, data_only ? "fdatasync" : "fsync", errno);
	close(fd);
}

static void op_unlink(struct ctx *c, int fi)
{
	struct ofile *f = &sh->f[fi];
	char path[256];

	fpath(fi, path, sizeof(path));
	if (unlink(path)) {
		op_add(c, " -> %s", strerror(errno));
		if (errno != ENOENT || f->exists)
			fail(c, fi, "unlink", "%s", strerror(errno));
		return;
	}
	if (!f->exists)
		fail(c, fi, "unlink of a file that is not there", "succeeded");
	f->exists = 0;
	f->nocow = 0;
	set_size(fi, 0);
}

static void op_rename(struct ctx *c, int fa, int fb)
{
	struct ofile *a = &sh->f[fa], *b = &sh->f[fb];
	char pa[256], pb[256];

	fpath(fa, pa, sizeof(pa));
	fpath(fb, pb, sizeof(pb));
	op_add(c, " -> f%02d", fb);
	if (rename(pa, pb)) {
		op_add(c, " -> %s", strerror(errno));
		if (errno != ENOENT || a->exists)
			fail(c, fa, "rename", "%s", strerror(errno));
		return;
	}
	if (!a->exists)
		fail(c, fa, "rename of a file that is not there", "succeeded");
	memcpy(fdata(fb), fdata(fa), MAXSIZE);
	b->size = a->size;
	b->nocow = a->nocow;
	b->exists = 1;
	a->exists = 0;
	a->nocow = 0;
	set_size(fa, 0);
}

/* Make an empty file NOCOW (chattr +C): encoded writes must be refused. */
static void op_nocow(struct ctx *c, int fi)
{
	struct ofile *f = &sh->f[fi];
	int fd, flags;

	if (f->exists && f->size) {
		op_add(c, " not empty");
		return;
	}
	fd = open_file(c, fi, O_RDWR);
	if (fd < 0)
		return;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
		fail(c, fi, "getflags", "%s", strerror(errno));
	} else {
		flags |= FS_NOCOW_FL;
		if (ioctl(fd, FS_IOC_SETFLAGS, &flags))
			fail(c, fi, "setflags NOCOW", "%s", strerror(errno));
		else
			f->nocow = 1;
	}
	close(fd);
}

/*
 * Power cuts: fsync the file and tell the host (on the console) its name,
 * size and CRC; it is never touched again, and the slot takes a new file.
 * After the cut and a reboot every file told about must read back whole.
 */
static void op_freeze(struct ctx *c, int fi)
{
	struct ofile *f = &sh->f[fi];
	char path[256];
	uLong crc;
	int fd;

	fd = open_file(c, fi, O_RDWR);
	if (fd < 0)
		return;
	if (fsync(fd)) {
		fail(c, fi, "fsync", "%s", strerror(errno));
		close(fd);
		return;
	}
	close(fd);
	fpath(fi, path, sizeof(path));
	crc = crc32(0, fdata(fi), f->size);
	op_add(c, " %s size=%jd crc=%08lx", strrchr(path, '/') + 1, (intmax_t)f->size, crc);
	pthread_mutex_lock(&sh->print_lock);
	printf("acked %d %s %jd %08lx\n", pc_cycle, strrchr(path, '/') + 1, (intmax_t)f->size,
	       crc);
	fflush(stdout);
	pthread_mutex_unlock(&sh->print_lock);
	f->gen++;
	f->exists = 0;
	f->nocow = 0;
	set_size(fi, 0);
}

/* After the cut: every acked file whole. */
static int pc_verify(void)
{
	unsigned char *buf = malloc(MAXSIZE);
	int intact = 0, bad = 0, cycle;
	FILE *in = fopen(pc_acked, "r");
	char line[512], name[256];
	unsigned long want;
	intmax_t size;

	if (!in || !buf) {
		perror(pc_acked);
		return 2;
	}
	while (fgets(line, sizeof(line), in)) {
		char path[600];
		struct stat st;
		ssize_t n;
		int fd;

		if (sscanf(line, "acked %d %255s %jd %lx", &cycle, name, &size, &want) != 4)
			continue;
		snprintf(path, sizeof(path), "%s/%s", pc_dir, name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			printf("verify: cycle %d: %s: %s\n", cycle, name, strerror(errno));
			bad++;
			continue;
		}
		n = fstat(fd, &st) ? -1 : pread(fd, buf, MAXSIZE, 0);
		close(fd);
		if (n < 0 || st.st_size != size || n != size) {
			printf("verify: cycle %d: %s: size %jd (read %zd), acked %jd\n", cycle,
			       name, (intmax_t)st.st_size, n, size);
			bad++;
		} else if (crc32(0, buf, n) != want) {
			printf("verify: cycle %d: %s: CRC %08lx, acked %08lx\n", cycle, name,
			       crc32(0, buf, n), want);
			bad++;
		} else {
			intact++;
		}
	}
	fclose(in);
	printf("verify: %d acked files intact, %d bad\n", intact, bad);
	return bad ? 1 : 0;
}

/* Until the host cuts the power. */
static int pc_write(void)
{
	int p;

	opweight[OP_UNLINK] = opweight[OP_RENAME] = opweight[OP_SNAPSHOT] = 0;
	opweight[OP_NOCOW] = 0;
	opweight[OP_RACE] = 0;
	opweight[OP_FREEZE] = 6;
	printf("writing cycle %d\n", pc_cycle);
	fflush(stdout);
	deadline_ns = now_ns() + 3600 * 1000000000LL;
	for (p = 0; p < nprocs; p++) {
		if (!fork()) {
			run_proc(p, pc_cycle, 0);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Groups: concurrent writes to one file at disjoint ranges.           */

enum { SUB_ENC, SUB_BUF, SUB_DIO, SUB_READ, SUB_FSYNC };
static const char *const subname[] = { "enc", "buf", "dio", "read", "fsync" };

struct sub {
	int kind;
	int fi;
	int64_t off;
	size_t len;
	uint64_t dseed;
	struct ewrite w;
	pthread_barrier_t *bar;
	ssize_t ret;
	int err;
	unsigned char *data, *zbuf;
	unsigned char *rbuf;	/* SUB_READ: what it read */
};

static void *sub_run(void *arg)
{
	struct sub *s = arg;
	char path[256];
	int fd, flags = O_RDWR | O_CLOEXEC;

	if (s->kind == SUB_ENC)
		flags |= O_ALLOW_ENCODED;
	if (s->kind == SUB_DIO)
		flags |= O_DIRECT;
	fpath(s->fi, path, sizeof(path));
	fd = open(path, flags);
	pthread_barrier_wait(s->bar);
	if (fd < 0) {
		s->ret = -1;
		s->err = errno;
		return NULL;
	}
	switch (s->kind) {
	case SUB_ENC:
		s->ret = ewrite_do(fd, &s->w, s->zbuf);
		break;
	case SUB_BUF:
	case SUB_DIO:
		s->ret = pwrite(fd, s->data, s->len, s->off);
		break;
	case SUB_READ:
		s->ret = pread(fd, s->rbuf, s->len, s->off);
		break;
	case SUB_FSYNC:
		s->ret = fsync(fd);
		break;
	}
	s->err = errno;
	close(fd);
	return NULL;
}

/*
 * Start @fn on each of the @n structs of @size bytes at @args, one thread
 * each, all released at once by a barrier whose address goes into each
 * struct at @bar_off; return when all are done.
 */
static void run_together(void *(*fn)(void *), void *args, size_t size, size_t bar_off, int n)
{
	pthread_t th[MAXGROUP + 2];
	pthread_barrier_t bar;
	int i;

	pthread_barrier_init(&bar, NULL, n);
	for (i = 0; i < n; i++) {
		char *arg = (char *)args + i * size;

		*(pthread_barrier_t **)(arg + bar_off) = &bar;
		if (pthread_create(&th[i], NULL, fn, arg)) {
			fprintf(stderr, "stress: pthread_create failed\n");
			exit(2);
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
}

static void op_group(struct ctx *c, int fi, bool force_extend)
{
	struct rng *r = &c->r;
	int64_t size = sh->f[fi].size, cur, top = 0;
	struct sub subs[MAXGROUP + 2];
	int nw = 2 + below(r, MAXGROUP - 1), n, i, hi = 0, fd;
	bool extend = force_extend || chance(r, 65);
	unsigned char *bufs;

	fd = open_file(c, fi, O_RDWR);
	if (fd < 0)
		return;
	if (extend && ALIGN_UP(size, SECTOR) + 800 * KIB > MAXSIZE) {
		int64_t ns = ALIGN_DN((int64_t)below(r, MAXSIZE / 2), SECTOR) + below(r, SECTOR);

		op_add(c, " truncate %jd->%jd;", (intmax_t)size, (intmax_t)ns);
		if (ftruncate(fd, ns)) {
			fail(c, fi, "truncate", "%s", strerror(errno));
			close(fd);
			return;
		}
		set_size(fi, ns);
		size = ns;
	}
	if (!extend && size < 256 * KIB)
		extend = true;
	op_add(c, " %s size=%jd", extend ? "extend" : "inside", (intmax_t)size);
	cur = extend ? ALIGN_UP(size, SECTOR) + SECTOR * below(r, 4) :
		       ALIGN_DN((int64_t)below(r, size / 2), SECTOR);
	/* Aligned for O_DIRECT. */
	if (posix_memalign((void **)&bufs, SECTOR, (size_t)(MAXGROUP + 2) * 4 * MAX_UNENC)) {
		close(fd);
		return;
	}
	for (n = 0; n < nw; n++) {
		struct sub *s = &subs[n];
		unsigned int k = below(r, 10);

		memset(s, 0, sizeof(*s));
		s->fi = fi;
		s->data = bufs + (size_t)n * 4 * MAX_UNENC;
		s->zbuf = s->data + 2 * MAX_UNENC;
		s->kind = k < 7 ? SUB_ENC : k < 9 ? SUB_BUF : SUB_DIO;
		s->off = cur;
		if (s->kind == SUB_ENC) {
			ewrite_shape(r, &s->w);
			s->w.len = ALIGN_DN(s->w.len, SECTOR);
			if (!s->w.len) {
				s->w.ulen = ALIGN_UP(s->w.ulen, SECTOR);
				s->w.uoff = 0;
				s->w.len = s->w.ulen;
			}
			s->w.off = cur;
			s->len = s->w.len;
		} else {
			s->len = SECTOR * (1 + below(r, 32));
			s->dseed = rng_next(r);
		}
		if (cur + (int64_t)s->len > MAXSIZE)
			break;
		cur += s->len + SECTOR * below(r, 3);
		if (s->off + (int64_t)s->len >= top) {
			top = s->off + s->len;
			hi = n;
		}
	}
	nw = n;
	if (nw < 2) {
		op_add(c, " no room");
		free(bufs);
		close(fd);
		return;
	}
	/* The highest write may end short of a sector boundary. */
	if (top >= size && subs[hi].kind != SUB_DIO && chance(r, 40)) {
		struct sub *s = &subs[hi];
		size_t cut = 1 + below(r, SECTOR - 1);

		if (s->kind == SUB_ENC && s->w.len > (uint64_t)cut) {
			s->w.len -= cut;
			s->len = s->w.len;
		} else if (s->kind == SUB_BUF && s->len > cut) {
			s->len -= cut;
		}
		top = s->off + s->len;
	}
	for (i = 0; i < nw; i++) {
		struct sub *s = &subs[i];

		if (s->kind == SUB_ENC)
			ewrite_prepare(c, fi, &s->w, s->data, s->zbuf, size);
		else
			gen_data(s->dseed, s->data, s->len);
	}
	n = nw;
	/* A reader of what was there, and an fsync, alongside. */
	if (size && chance(r, 50)) {
		struct sub *s = &subs[n++];

		memset(s, 0, sizeof(*s));
		s->kind = SUB_READ;
		s->fi = fi;
		s->off = 0;
		s->len = MIN(size, extend ? size : subs[0].off);
		s->rbuf = bufs + (size_t)nw * 4 * MAX_UNENC;
		if (s->len > 4 * MAX_UNENC) {
			s->off = s->len - 4 * MAX_UNENC;
			s->len = 4 * MAX_UNENC;
		}
		if (!s->len)
			n--;
	}
	if (chance(r, 50)) {
		struct sub *s = &subs[n++];

		memset(s, 0, sizeof(*s));
		s->kind = SUB_FSYNC;
		s->fi = fi;
	}
	for (i = 0; i < n; i++) {
		struct sub *s = &subs[i];

		if (s->kind == SUB_ENC)
			op_add(c, " {enc off=%jd len=%" PRIu64 " ulen=%" PRIu64 " uoff=%" PRIu64 " %s zlen=%ld dseed=%" PRIx64 "%s}",
			       (intmax_t)s->w.off, s->w.len, s->w.ulen, s->w.uoff,
			       compname(s->w.comp), s->w.zlen, s->w.dseed,
			       s->w.expect_einval ? " EINVAL" : "");
		else
			op_add(c, " {%s off=%jd len=%zu dseed=%" PRIx64 "}", subname[s->kind],
			       (intmax_t)s->off, s->len, s->dseed);
	}
	run_together(sub_run, subs, sizeof(subs[0]), offsetof(struct sub, bar), n);
	__atomic_add_fetch(&sh->sub_ops, n, __ATOMIC_RELAXED);

	/* Every write landed (or was refused as predicted): apply them all. */
	for (i = 0; i < n; i++) {
		struct sub *s = &subs[i];

		op_add(c, " %s:%zd", subname[s->kind], s->ret);
		if (s->kind == SUB_ENC) {
			if (s->w.expect_einval) {
				if (s->ret >= 0)
					fail(c, fi, "encoded write accepted (group)",
					     "returned %zd, want EINVAL (%s)", s->ret, s->w.why);
				else if (s->err != EINVAL)
					fail(c, fi, "encoded write errno", "%s, want EINVAL",
					     strerror(s->err));
				continue;
			}
			if (s->ret != s->w.zlen) {
				fail(c, fi, "encoded write failed (group)", "off %jd: %zd (%s)",
				     (intmax_t)s->w.off, s->ret,
				     s->ret < 0 ? strerror(s->err) : "short");
				continue;
			}
			__atomic_add_fetch(&sh->bytes_enc_written, s->w.zlen, __ATOMIC_RELAXED);
			apply(fi, s->w.off, s->data + s->w.uoff, s->w.len);
		} else if (s->kind == SUB_BUF || s->kind == SUB_DIO) {
			if (s->ret != (ssize_t)s->len) {
				fail(c, fi, "write failed (group)", "%s off %jd: %zd (%s)",
				     subname[s->kind], (intmax_t)s->off, s->ret,
				     s->ret < 0 ? strerror(s->err) : "short");
				continue;
			}
			apply(fi, s->off, s->data, s->len);
		} else if (s->kind == SUB_FSYNC && s->ret) {
			sync_failed(c, fi, "fsync (group)", s->err);
		}
	}
	/* The reader saw the data that was there before (no write touched it). */
	for (i = 0; i < n; i++) {
		struct sub *s = &subs[i];

		if (s->kind != SUB_READ)
			continue;
		if (s->ret != (ssize_t)s->len)
			fail(c, fi, "read during group", "%zu at %jd: %zd (%s)", s->len,
			     (intmax_t)s->off, s->ret, s->ret < 0 ? strerror(s->err) : "short");
		else
			check_data(c, fi, "read during group", s->rbuf, s->off, s->len);
	}
	check_size(c, fi, fd, extend ? "extending group" : "group");
	/* Read the whole written span back, in both ways. */
	if (sh->f[fi].size) {
		int64_t from = MIN(subs[0].off, ALIGN_DN(size, SECTOR));
		int efd;

		for (i = 0; i < nw; i++)
			from = MIN(from, subs[i].off);
		read_check(c, fi, fd, from, MIN(top - from + SECTOR, IOBUF), "read after group");
		efd = open_file(c, fi, O_RDONLY | O_ALLOW_ENCODED);
		if (efd >= 0 && chance(r, 50)) {
			int64_t pos = ALIGN_DN(from, SECTOR), got;

			while (pos < sh->f[fi].size && pos < top) {
				got = enc_read_check(c, fi, efd, pos, sh->f[fi].size,
						     "encoded read after group");
				if (got <= 0)
					break;
				pos += got;
			}
		}
		if (efd >= 0)
			close(efd);
	}
	free(bufs);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* Races: operations on the same bytes of one file at once.            */

/*
 * Two to four operations on overlapping ranges of one file start together
 * (a barrier): always an encoded write, and encoded or buffered or direct
 * writes, an mmap store, a reflink from elsewhere in the file, a punched
 * hole or a truncate. The writes, reflinks, punches and truncates take the
 * inode lock, so they happen one after the other in some order. Two do
 * not, and their bytes may land before, between or after those: the mmap
 * store, a memcpy into a shared mapping, and a direct write inside the
 * file, for which 5.10's btrfs drops the inode lock (it then writes extent
 * by extent, each under the extent lock). One of the two at most takes
 * part in a race: 5.10's direct I/O keeps a page that an mmap store
 * brought in over the range it wrote, a known 5.10 limitation without
 * encoded I/O (op_race() names the other pairs left out, and why; -B
 * runs the races without encoded writes, to see what 5.10 does alone).
 *
 * The oracle tries every order of the locked operations from the state
 * before: an order explains the result when each operation's return value
 * is what it would return at that point (a reflink of a range that a
 * truncate cut off before it fails with EINVAL) and the file afterwards is
 * the state that order leaves, except that a byte the unlocked operation
 * wrote may hold its value instead, and must hold it where no locked
 * operation wrote. A result no order explains fails: a mix inside one
 * locked operation's range, bytes nobody wrote, a lost store or direct
 * write, a wrong size. So that the unlocked operations stay unlocked and
 * inside the file (a store past its end is SIGBUS), they do not race
 * truncates, and a direct write stays inside the file.
 */
enum { R_ENC, R_BUF, R_DIO, R_MMAP, R_CLONE, R_PUNCH, R_TRUNC, NR_RKINDS };
_Static_assert(NR_RKINDS <= sizeof(((struct shared *)0)->race_kinds) / sizeof(uint64_t),
	       "struct shared counts every kind of racer");
static const char *const rname[NR_RKINDS] = {
	"enc", "buf", "dio", "mmap", "clone", "punch", "trunc"
};
#define MAXRACE 4

struct racer {
	int kind;
	int fd;
	int64_t off;		/* trunc: the new size */
	int64_t soff;		/* clone: the source, in the same file */
	size_t len;
	struct ewrite w;
	unsigned char *data, *zbuf;
	unsigned char *map;	/* mmap: the mapping, mlen bytes from moff */
	int64_t moff;
	size_t mlen;
	pthread_barrier_t *bar;
	ssize_t ret;
	int err;
};

static void *racer_run(void *arg)
{
	struct racer *x = arg;
	struct file_clone_range fcr;

	pthread_barrier_wait(x->bar);
	errno = 0;
	switch (x->kind) {
	case R_ENC:
		x->ret = ewrite_do(x->fd, &x->w, x->zbuf);
		break;
	case R_BUF:
	case R_DIO:
		x->ret = pwrite(x->fd, x->data, x->len, x->off);
		break;
	case R_MMAP:
		memcpy(x->map + (x->off - x->moff), x->data, x->len);
		x->ret = 0;
		break;
	case R_CLONE:
		fcr.src_fd = x->fd;
		fcr.src_offset = x->soff;
		fcr.src_length = x->len;
		fcr.dest_offset = x->off;
		x->ret = ioctl(x->fd, FICLONERANGE, &fcr);
		break;
	case R_PUNCH:
		x->ret = fallocate(x->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, x->off,
				   x->len);
		break;
	case R_TRUNC:
		x->ret = ftruncate(x->fd, x->off);
		break;
	}
	x->err = errno;
	return NULL;
}

/* What @x returns on success. */
static ssize_t racer_success(const struct racer *x)
{
	switch (x->kind) {
	case R_ENC:
		return x->w.zlen;
	case R_BUF:
	case R_DIO:
		return x->len;
	default:
		return 0;
	}
}

/*
 * Run @x on the state (@buf, *@size) as if it ran alone: 0, or the errno it
 * would fail with. @touched marks the bytes it writes or zeroes.
 */
static int racer_apply(const struct racer *x, unsigned char *buf, int64_t *size,
		       unsigned char *touched)
{
	int64_t end;

	switch (x->kind) {
	case R_ENC:
		end = x->w.off + x->w.len;
		if (x->w.expect_einval || (end % SECTOR && end < *size))
			return EINVAL;
		memcpy(buf + x->w.off, x->data + x->w.uoff, x->w.len);
		memset(touched + x->w.off, 1, x->w.len);
		*size = MAX(*size, end);
		return 0;
	case R_BUF:
	case R_DIO:
		memcpy(buf + x->off, x->data, x->len);
		memset(touched + x->off, 1, x->len);
		*size = MAX(*size, x->off + (int64_t)x->len);
		return 0;
	case R_CLONE:
		/* generic_remap_checks(): the source range must be in the file. */
		if (x->soff + (int64_t)x->len > *size)
			return EINVAL;
		memmove(buf + x->off, buf + x->soff, x->len);
		memset(touched + x->off, 1, x->len);
		*size = MAX(*size, x->off + (int64_t)x->len);
		return 0;
	case R_PUNCH:
		if (x->off < *size) {
			end = MIN(x->off + (int64_t)x->len, *size);
			memset(buf + x->off, 0, end - x->off);
			memset(touched + x->off, 1, end - x->off);
		}
		return 0;
	case R_TRUNC:
		if (x->off < *size) {
			memset(buf + x->off, 0, *size - x->off);
			memset(touched + x->off, 1, *size - x->off);
		}
		*size = x->off;
		return 0;
	}
	return 0;
}

/* The next permutation of @p[0..n) in lexicographic order; false after the last. */
static bool next_perm(int *p, int n)
{
	int i = n - 2, j, t;

	while (i >= 0 && p[i] >= p[i + 1])
		i--;
	if (i < 0)
		return false;
	for (j = n - 1; p[j] <= p[i]; j--)
		;
	t = p[i], p[i] = p[j], p[j] = t;
	for (i++, j = n - 1; i < j; i++, j--)
		t = p[i], p[i] = p[j], p[j] = t;
	return true;
}

/*
 * Does running the locked racers @xs in the order @perm explain the result
 * (@actual, @asize), given the store @m (or NULL)? @work and @touched are
 * MAXSIZE bytes of scratch.
 */
static bool race_explained(const struct racer *xs, const int *perm, int n,
			   const struct racer *m, const unsigned char *before, int64_t size0,
			   const unsigned char *actual, int64_t asize, unsigned char *work,
			   unsigned char *touched)
{
	int64_t size = size0, i;
	int k, e;

	memcpy(work, before, MAXSIZE);
	memset(touched, 0, MAXSIZE);
	for (k = 0; k < n; k++) {
		const struct racer *x = &xs[perm[k]];

		e = racer_apply(x, work, &size, touched);
		if (e ? x->ret != -1 || x->err != e : x->ret != racer_success(x))
			return false;
	}
	if (size != asize || (m && m->kind == R_DIO && m->ret != (ssize_t)m->len))
		return false;
	if (!m)
		return !memcmp(work, actual, MAXSIZE);
	if (memcmp(work, actual, m->off) ||
	    memcmp(work + m->off + m->len, actual + m->off + m->len,
		   MAXSIZE - m->off - m->len))
		return false;
	for (i = 0; i < (int64_t)m->len; i++) {
		unsigned char a = actual[m->off + i], s = m->data[i];

		/* The unlocked operation's byte, or a later locked one's. */
		if (a != s && (!touched[m->off + i] || a != work[m->off + i]))
			return false;
	}
	return true;
}

/* The byte racer @x gives offset @i of the file (@i inside its range). */
static unsigned char racer_byte(const struct racer *x, const unsigned char *before, int64_t i)
{
	switch (x->kind) {
	case R_ENC:
		return x->data[x->w.uoff + (i - x->w.off)];
	case R_CLONE:
		return before[x->soff + (i - x->off)];
	case R_PUNCH:
	case R_TRUNC:
		return 0;
	default:
		return x->data[i - x->off];
	}
}

static bool racer_covers(const struct racer *x, int64_t i)
{
	int64_t off = x->kind == R_ENC ? x->w.off : x->off;
	int64_t len = x->kind == R_ENC ? (int64_t)x->w.len : (int64_t)x->len;

	if (x->kind == R_TRUNC)
		return i >= x->off;
	return i >= off && i < off + len;
}

/*
 * A race no order explains: the first byte the start order cannot explain
 * (the unlocked operation's bytes allowed as race_explained() allows
 * them), and how many bytes of its sector each racer's data, the old data
 * and the start order's result account for.
 */
static void race_diagnose(char *out, size_t outlen, const struct racer *xs, int n,
			  const int *order, int nl, const struct racer *m,
			  const unsigned char *before, int64_t size0, const unsigned char *actual,
			  unsigned char *work, unsigned char *touched)
{
	int64_t size = size0, i, b, j;
	size_t len;
	int k, same, printed = 0;

	memcpy(work, before, MAXSIZE);
	memset(touched, 0, MAXSIZE);
	for (k = 0; k < nl; k++)
		racer_apply(&xs[order[k]], work, &size, touched);
	for (i = 0; i < MAXSIZE; i++) {
		if (actual[i] == work[i] && !(m && racer_covers(m, i) && !touched[i]))
			continue;
		if (m && racer_covers(m, i) && actual[i] == racer_byte(m, before, i))
			continue;
		break;
	}
	if (i == MAXSIZE) {
		snprintf(out, outlen, "the start order explains the bytes (size %jd)",
			 (intmax_t)size);
		return;
	}
	b = ALIGN_DN(i, SECTOR);
	len = snprintf(out, outlen, "start order: size %jd; byte %jd: file %02x, order %02x; of its sector (%jd) the file matches: old",
		       (intmax_t)size, (intmax_t)i, actual[i], work[i], (intmax_t)b);
	for (same = 0, j = b; j < b + SECTOR; j++)
		same += actual[j] == before[j];
	len += snprintf(out + len, outlen - len, " %d, order", same);
	for (same = 0, j = b; j < b + SECTOR; j++)
		same += actual[j] == work[j];
	len += snprintf(out + len, outlen - len, " %d", same);
	for (k = 0; k < n && len < outlen; k++) {
		for (same = 0, j = b; j < b + SECTOR; j++)
			same += racer_covers(&xs[k], j) && actual[j] == racer_byte(&xs[k], before, j);
		len += snprintf(out + len, outlen - len, ", racer %d (%s) %d", k,
				rname[xs[k].kind], same);
	}
	/*
	 * Sector by sector, whose bytes the file holds: o the old ones, a
	 * digit racer N's (all the bytes of the sector it writes), ? nobody's.
	 */
	len += snprintf(out + len, outlen - len, "; sectors");
	for (b = 0; b < MAXSIZE && len + 16 < outlen; b += SECTOR) {
		bool any = false, hit;

		for (k = 0; k < n && !any; k++)
			for (j = b; j < b + SECTOR && !any; j++)
				any = racer_covers(&xs[k], j) && j < size0 + 2 * MAXSIZE &&
				      xs[k].kind != R_TRUNC;
		if (!any)
			continue;
		if (!printed++)
			len += snprintf(out + len, outlen - len, " from %jd:", (intmax_t)b);
		out[len++] = ' ';
		if (!memcmp(actual + b, before + b, SECTOR))
			out[len++] = 'o';
		for (k = 0; k < n && len + 2 < outlen; k++) {
			int covered = 0;

			hit = true;
			for (j = b; j < b + SECTOR; j++) {
				if (!racer_covers(&xs[k], j))
					continue;
				covered++;
				hit &= actual[j] == racer_byte(&xs[k], before, j);
			}
			if (covered && hit)
				out[len++] = '0' + k;
		}
		if (out[len - 1] == ' ')
			out[len++] = '?';
		out[len] = '\0';
	}
}

/* Draw racer @x of kind @kind on the window [@base, @base + @win). */
static void racer_draw(struct rng *r, struct racer *x, int kind, int64_t base, int64_t win,
		       int64_t size)
{
	x->kind = kind;
	switch (kind) {
	case R_ENC:
		ewrite_shape(r, &x->w);
		x->w.len = ALIGN_DN(MIN(x->w.len, (uint64_t)win), SECTOR);
		if (!x->w.len) {
			x->w.ulen = ALIGN_UP(x->w.ulen, SECTOR);
			x->w.uoff = 0;
			x->w.len = ALIGN_DN(MIN(x->w.ulen, (uint64_t)win), SECTOR);
		}
		x->w.off = base + ALIGN_DN((int64_t)below(r, win - x->w.len + 1), SECTOR);
		break;
	case R_BUF:
		x->off = base + below(r, win);
		x->len = 1 + below(r, base + win - x->off);
		break;
	case R_DIO:
		x->off = base + SECTOR * below(r, MIN(win, ALIGN_DN(size, SECTOR) - base) / SECTOR);
		x->len = SECTOR * (1 + below(r, (base + win - x->off) / SECTOR));
		break;
	case R_MMAP:
		/* Inside the file: a store past its end is SIGBUS. */
		x->off = base + below(r, MIN(base + win, size) - base);
		x->len = 1 + below(r, MIN(base + win, size) - x->off);
		break;
	case R_CLONE:
		x->len = SECTOR * (1 + below(r, win / SECTOR));
		x->off = base + SECTOR * below(r, (win - x->len) / SECTOR + 1);
		x->soff = SECTOR * below(r, ALIGN_DN(size, SECTOR) / SECTOR + 1);
		break;
	case R_PUNCH:
		x->off = base + below(r, win);
		x->len = 1 + below(r, win);
		break;
	case R_TRUNC:
		x->off = base + below(r, win + 1);
		break;
	}
	x->data = NULL;
}

static void op_race(struct ctx *c, int fi)
{
	static const int kinds[] = { R_ENC, R_ENC, R_BUF, R_DIO, R_MMAP, R_MMAP, R_CLONE,
				     R_PUNCH, R_TRUNC };
	struct rng *r = &c->r;
	int64_t size = sh->f[fi].size, base, win, asize;
	struct racer xs[MAXRACE], *m = NULL;
	int n = 2 + below(r, MAXRACE - 1), nl = 0, i, k, fd, tries;
	int perm[MAXRACE], order[MAXRACE];
	unsigned char *bufs, *before, *actual, *work, *touched;
	bool have_mmap = false, have_dio = false, have_trunc = false, ok = false;
	bool have_buf = false, have_punch = false, have_clone = false;
	struct stat st;

	/* Encoded writes refuse NOCOW files; that is tested elsewhere. */
	if (sh->f[fi].nocow) {
		op_add(c, " nocow");
		return;
	}
	win = SECTOR * (1 + below(r, 32));
	/* (MIN() evaluates its arguments twice: no below() inside.) */
	base = ALIGN_DN((int64_t)below(r, size + 1), SECTOR);
	base = MIN(base, MAXSIZE - win);
	op_add(c, " size=%jd window=%jd+%jd", (intmax_t)size, (intmax_t)base, (intmax_t)win);
	if (posix_memalign((void **)&bufs, SECTOR, (size_t)MAXRACE * 4 * MAX_UNENC))
		return;
	before = malloc(4 * (size_t)MAXSIZE);
	if (!before) {
		free(bufs);
		return;
	}
	actual = before + MAXSIZE;
	work = actual + MAXSIZE;
	touched = work + MAXSIZE;
	memcpy(before, fdata(fi), MAXSIZE);

	for (i = 0; i < n; i++) {
		struct racer *x = &xs[i];

		memset(x, 0, sizeof(*x));
		/*
		 * Left out, because 5.10 gets them wrong without encoded I/O
		 * (-B shows it): a hole punch racing a buffered write or an
		 * mmap store (5.10 waits for ordered extents before it takes
		 * the inode lock, then skips what the extent maps show as
		 * holes, so data put in the page cache in between is not
		 * punched; mainline waits under the lock); a reflink racing
		 * an mmap store (the store's page can keep data from before
		 * the reflink, or lose part of the store, where no operation
		 * wrote after it); a direct write inside the file racing a
		 * reflink or a hole punch, which do not wait for it (5.10
		 * drops the inode lock for it; seen: a WARNING in
		 * unpin_extent_cache() and a checksum error on the direct
		 * write's block; mainline keeps the lock, shared).
		 */
		for (tries = 0; tries < 50; tries++) {
			k = i || race_base ? kinds[below(r, sizeof(kinds) / sizeof(kinds[0]))] :
					     R_ENC;
			if ((k == R_ENC && race_base) ||
			    (k == R_MMAP && (have_mmap || have_dio || have_trunc || have_punch ||
					     have_clone || size <= base)) ||
			    (k == R_DIO && (have_mmap || have_dio || have_trunc || have_clone ||
					    have_punch || ALIGN_DN(size, SECTOR) < base + SECTOR)) ||
			    (k == R_TRUNC && (have_mmap || have_dio)) ||
			    (k == R_PUNCH && (have_buf || have_mmap || have_dio)) ||
			    (k == R_BUF && have_punch) || (k == R_CLONE && (have_mmap || have_dio)))
				continue;
			racer_draw(r, x, k, base, win, size);
			/*
			 * A reflink's source lies outside the window, where only
			 * locked operations (punches, truncates) may change it.
			 */
			if (k == R_CLONE && x->soff < base + win && base < x->soff + (int64_t)x->len)
				continue;
			break;
		}
		if (tries == 50)
			break;
		if (k == R_DIO) {
			/* Inside the file, where 5.10 drops the inode lock. */
			x->len = MIN((int64_t)x->len, ALIGN_DN(size, SECTOR) - x->off);
			m = x;
		}
		have_mmap |= k == R_MMAP;
		have_dio |= k == R_DIO;
		have_trunc |= k == R_TRUNC;
		have_buf |= k == R_BUF;
		have_punch |= k == R_PUNCH;
		have_clone |= k == R_CLONE;
		x->data = bufs + (size_t)i * 4 * MAX_UNENC;
		x->zbuf = x->data + 2 * MAX_UNENC;
		if (k == R_ENC)
			/* Whether an unaligned end is inside the file depends on the order. */
			ewrite_prepare(c, fi, &x->w, x->data, x->zbuf, 0);
		else
			gen_data(rng_next(r), x->data, x->len);
	}
	n = i;
	if (n < 2) {
		op_add(c, " no second racer");
		goto out;
	}

	for (i = 0; i < n; i++) {
		struct racer *x = &xs[i];
		int flags = O_RDWR;

		if (x->kind == R_ENC)
			flags |= O_ALLOW_ENCODED;
		else if (x->kind == R_DIO)
			flags |= O_DIRECT;
		x->fd = open_file(c, fi, flags);
		if (x->fd < 0) {
			while (i--)
				close(xs[i].fd);
			goto out;
		}
		if (x->kind == R_ENC)
			op_add(c, " {enc off=%jd len=%" PRIu64 " ulen=%" PRIu64 " uoff=%" PRIu64 " %s zlen=%ld%s}",
			       (intmax_t)x->w.off, x->w.len, x->w.ulen, x->w.uoff,
			       compname(x->w.comp), x->w.zlen, x->w.expect_einval ? " EINVAL" : "");
		else if (x->kind == R_CLONE)
			op_add(c, " {clone soff=%jd len=%zu off=%jd}", (intmax_t)x->soff, x->len,
			       (intmax_t)x->off);
		else if (x->kind == R_TRUNC)
			op_add(c, " {trunc %jd}", (intmax_t)x->off);
		else
			op_add(c, " {%s off=%jd len=%zu}", rname[x->kind], (intmax_t)x->off, x->len);
		if (x->kind == R_MMAP) {
			x->moff = ALIGN_DN(x->off, SECTOR);
			x->mlen = x->off + x->len - x->moff;
			x->map = mmap(NULL, x->mlen, PROT_READ | PROT_WRITE, MAP_SHARED, x->fd,
				      x->moff);
			if (x->map == MAP_FAILED) {
				fail(c, fi, "mmap", "mmap %zu at %jd: %s", x->mlen,
				     (intmax_t)x->moff, strerror(errno));
				for (; i >= 0; i--)
					close(xs[i].fd);
				goto out;
			}
			m = x;
		}
	}

	run_together(racer_run, xs, sizeof(xs[0]), offsetof(struct racer, bar), n);
	for (i = 0; i < n; i++) {
		struct racer *x = &xs[i];

		op_add(c, " %s:%zd%s%s", rname[x->kind], x->ret, x->ret < 0 ? " " : "",
		       x->ret < 0 ? strerror(x->err) : "");
		if (x->kind == R_MMAP)
			munmap(x->map, x->mlen);
		close(x->fd);
		__atomic_add_fetch(&sh->race_kinds[x->kind], 1, __ATOMIC_RELAXED);
		if (x != m)
			order[nl++] = i;
	}
	__atomic_add_fetch(&sh->races, 1, __ATOMIC_RELAXED);

	/* The file as it is now, through the page cache. */
	fd = open_file(c, fi, O_RDONLY);
	if (fd < 0)
		goto out;
	memset(actual, 0, MAXSIZE);
	if (fstat(fd, &st) || st.st_size > MAXSIZE ||
	    pread(fd, actual, st.st_size, 0) != st.st_size) {
		fail(c, fi, "read after race", "size %jd: %s", (intmax_t)st.st_size,
		     strerror(errno));
		close(fd);
		goto out;
	}
	asize = st.st_size;
	for (i = 0; i < nl; i++)
		perm[i] = order[i];
	do {
		ok = race_explained(xs, perm, nl, m, before, size, actual, asize, work, touched);
	} while (!ok && next_perm(perm, nl));
	if (!ok) {
		char why[900];

		race_diagnose(why, sizeof(why), xs, n, order, nl, m, before, size, actual, work,
			      touched);
		fail(c, fi, "race: no order explains the result", "size %jd (before %jd); %s",
		     (intmax_t)asize, (intmax_t)size, why);
		close(fd);
		goto out;
	}
	for (i = 0; i < nl && perm[i] == order[i]; i++)
		;
	if (i < nl)
		__atomic_add_fetch(&sh->races_reordered, 1, __ATOMIC_RELAXED);
	op_add(c, " order");
	for (i = 0; i < nl; i++)
		op_add(c, " %s", rname[xs[perm[i]].kind]);
	/* The result is the file's state now. */
	memcpy(fdata(fi), actual, MAXSIZE);
	sh->f[fi].size = asize;
	close(fd);
	/* What is on disk decodes to the same bytes. */
	fd = open_file(c, fi, O_RDONLY | O_ALLOW_ENCODED);
	if (fd >= 0) {
		int64_t pos = base, got;

		while (pos < sh->f[fi].size && pos < base + win) {
			got = enc_read_check(c, fi, fd, pos, sh->f[fi].size, "encoded read after race");
			if (got <= 0)
				break;
			pos += got;
		}
		close(fd);
	}
out:
	free(before);
	free(bufs);
}

/* ------------------------------------------------------------------ */
/* Workers.                                                             */

static void lock2(int a, int b)
{
	if (a == b) {
		pthread_mutex_lock(&sh->f[a].lock);
		return;
	}
	pthread_mutex_lock(&sh->f[MIN(a, b)].lock);
	pthread_mutex_lock(&sh->f[MAX(a, b)].lock);
}

static void unlock2(int a, int b)
{
	pthread_mutex_unlock(&sh->f[a].lock);
	if (a != b)
		pthread_mutex_unlock(&sh->f[b].lock);
}

static void lock_all(void);
static void unlock_all(void);

/*
 * A read-only snapshot of the files' subvolume, with every file's lock
 * held: no operation is between its call and its oracle update, so the
 * snapshot must hold the oracle's state, which is kept for the checks.
 */
static bool take_snapshot(struct ctx *c)
{
	struct btrfs_ioctl_vol_args_v2 args;
	char dir[256];
	int dfd, sfd, ret, err;

	snprintf(dir, sizeof(dir), "%s/d", mnt);
	lock_all();
	op_begin(c, OP_SNAPSHOT, 0);
	dfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	memset(&args, 0, sizeof(args));
	args.fd = sfd;
	args.flags = BTRFS_SUBVOL_RDONLY;
	snprintf(args.name, sizeof(args.name), "snap%d", sh->nsnaps + 1);
	ret = dfd < 0 || sfd < 0 ? -1 : ioctl(dfd, BTRFS_IOC_SNAP_CREATE_V2, &args);
	err = errno;
	op_add(c, " %s -> %d", args.name, ret);
	if (!ret) {
		int fi;

		sh->nsnaps++;
		for (fi = 0; fi < nfiles; fi++) {
			sh->snap_size[fi] = sh->f[fi].size;
			sh->snap_exists[fi] = sh->f[fi].exists;
		}
		memcpy(snapshot_content, content, (size_t)nfiles * MAXSIZE);
	} else {
		fail(c, 0, "snapshot", "%s", strerror(err));
	}
	op_end(c, 0, -1);
	unlock_all();
	if (dfd >= 0)
		close(dfd);
	if (sfd >= 0)
		close(sfd);
	return !ret;
}

static int pick_op(struct rng *r)
{
	static unsigned int total;
	unsigned int x, i;

	if (!total)
		for (i = 0; i < NR_OPS; i++)
			total += opweight[i];
	x = below(r, total);
	for (i = 0; i < NR_OPS; i++) {
		if (x < opweight[i])
			return i;
		x -= opweight[i];
	}
	return 0;
}

static bool stop_now(void)
{
	if (__atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
		return true;
	if (op_limit && __atomic_load_n(&sh->seq, __ATOMIC_RELAXED) >= op_limit)
		return true;
	return now_ns() >= deadline_ns;
}

static void *worker(void *arg)
{
	struct ctx *c = arg;

	while (!stop_now()) {
		int op = pick_op(&c->r);
		int fa = below(&c->r, nfiles), fb = below(&c->r, nfiles);
		bool two = op == OP_CLONE || op == OP_DEDUPE || op == OP_RENAME;

		if (op == OP_SNAPSHOT) {
			/* One per cycle, while the others run. */
			if (!__atomic_exchange_n(&sh->snap_taken, 1, __ATOMIC_RELAXED)) {
				take_snapshot(c);
				__atomic_add_fetch(&sh->ops[op], 1, __ATOMIC_RELAXED);
				continue;
			}
			op = OP_FSYNC;
		}

		if (op == OP_RENAME && fa == fb)
			fb = (fa + 1) % nfiles;
		if (!two)
			fb = fa;
		lock2(fa, fb);
		op_begin(c, op, fa);
		switch (op) {
		case OP_EWRITE: op_ewrite(c, fa); break;
		case OP_EREAD: op_eread(c, fa); break;
		case OP_EWALK: op_ewalk(c, fa); break;
		case OP_READ: op_read(c, fa, false); break;
		case OP_DREAD: op_read(c, fa, true); break;
		case OP_WRITE: op_write(c, fa, false); break;
		case OP_DWRITE: op_write(c, fa, true); break;
		case OP_MMAP: op_mmap(c, fa); break;
		case OP_TRUNC: op_trunc(c, fa); break;
		case OP_PUNCH: op_falloc(c, fa, true); break;
		case OP_PREALLOC: op_falloc(c, fa, false); break;
		case OP_CLONE: op_clone(c, fa, fb); break;
		case OP_DEDUPE: op_dedupe(c, fa, fb); break;
		case OP_FSYNC: op_sync(c, fa, false); break;
		case OP_FDATASYNC: op_sync(c, fa, true); break;
		case OP_UNLINK: op_unlink(c, fa); break;
		case OP_RENAME: op_rename(c, fa, fb); break;
		case OP_NOCOW: op_nocow(c, fa); break;
		case OP_GROUP: op_group(c, fa, false); break;
		case OP_FREEZE: op_freeze(c, fa); break;
		case OP_RACE: op_race(c, fa); break;
		}
		if (sync_each) {
			/* Which operation leaves an error for fsync to report. */
			int i;

			for (i = 0; i < (two && fb != fa ? 2 : 1); i++) {
				int f = i ? fb : fa, fd;
				char path[256];

				fpath(f, path, sizeof(path));
				fd = open(path, O_RDONLY | O_CLOEXEC);
				if (fd < 0)
					continue;
				if (fsync(fd))
					sync_failed(c, f, "fsync after the operation", errno);
				close(fd);
			}
		}
		op_end(c, fa, two ? fb : -1);
		unlock2(fa, fb);
		__atomic_add_fetch(&sh->ops[op], 1, __ATOMIC_RELAXED);
	}
	log_flush(c);
	return NULL;
}

static struct ctx *new_ctx(int id, uint64_t s)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (!c || posix_memalign((void **)&c->data, SECTOR, 2 * MAX_UNENC + SECTOR) ||
	    posix_memalign((void **)&c->zbuf, SECTOR, 4 * MAX_UNENC) ||
	    posix_memalign((void **)&c->rbuf, SECTOR, IOBUF) ||
	    posix_memalign((void **)&c->dec, SECTOR, MAX_UNENC + SECTOR)) {
		fprintf(stderr, "stress: out of memory\n");
		exit(2);
	}
	c->id = id;
	c->r.s = s;
	return c;
}

/* One process: its threads until the time is up. */
static void run_proc(int p, int cycle, int mode)
{
	pthread_t th[64];
	struct ctx *cs[64];
	int t;

	for (t = 0; t < nthreads; t++) {
		int id = p * nthreads + t;

		cs[t] = new_ctx(id, seed * 1000003ULL + (uint64_t)mode * 7919 +
				(uint64_t)cycle * 104729 + id * 15485863ULL);
		if (pthread_create(&th[t], NULL, worker, cs[t])) {
			fprintf(stderr, "stress: pthread_create failed\n");
			exit(2);
		}
	}
	for (t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
}

/* ------------------------------------------------------------------ */
/* The checks between and after the runs.                               */

static void result(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
}

/* Every file whole: existence, size, data by pread and by encoded reads. */
static bool check_all(struct ctx *c, const char *what)
{
	uint64_t before = sh->failures;
	int fi;

	for (fi = 0; fi < nfiles; fi++) {
		struct ofile *f = &sh->f[fi];
		char path[256];
		int fd;

		fpath(fi, path, sizeof(path));
		op_begin(c, OP_EWALK, fi);
		op_add(c, " whole-file check (%s) size=%jd", what, (intmax_t)f->size);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_ALLOW_ENCODED);
		if (fd < 0) {
			if (errno != ENOENT || f->exists)
				fail(c, fi, "file missing", "%s: %s", what, strerror(errno));
		} else if (!f->exists) {
			fail(c, fi, "file not deleted", "%s", what);
		} else {
			check_size(c, fi, fd, what);
			if (read_check(c, fi, fd, 0, f->size, what))
				enc_walk(c, fi, fd, what);
			close(fd);
		}
		op_end(c, fi, -1);
	}
	log_flush(c);
	return sh->failures == before;
}

static int run_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run_cmd(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	printf("# %s\n", cmd);
	fflush(stdout);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static bool do_mount(const char *d, const char *m, const char *opts)
{
	if (mount(d, m, "btrfs", 0, opts)) {
		printf("stress: mount %s on %s (%s): %s\n", d, m, opts, strerror(errno));
		return false;
	}
	return true;
}

static bool do_umount(const char *m)
{
	int i;

	for (i = 0; i < 50; i++) {
		if (!umount(m))
			return true;
		if (errno != EBUSY)
			break;
		usleep(100000);
	}
	printf("stress: umount %s: %s\n", m, strerror(errno));
	return false;
}

/* The data space of the file system on @m, from sysfs: used, may_use, reserved. */
static bool data_space(const char *m, uint64_t *used, uint64_t *may_use, uint64_t *reserved)
{
	struct btrfs_ioctl_fs_info_args fsi;
	const char *names[3] = { "bytes_used", "bytes_may_use", "bytes_reserved" };
	uint64_t *vals[3] = { used, may_use, reserved };
	char path[256], uuid[40];
	int fd, i;
	FILE *f;

	fd = open(m, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	memset(&fsi, 0, sizeof(fsi));
	if (ioctl(fd, BTRFS_IOC_FS_INFO, &fsi)) {
		close(fd);
		return false;
	}
	close(fd);
	snprintf(uuid, sizeof(uuid),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 fsi.fsid[0], fsi.fsid[1], fsi.fsid[2], fsi.fsid[3], fsi.fsid[4], fsi.fsid[5],
		 fsi.fsid[6], fsi.fsid[7], fsi.fsid[8], fsi.fsid[9], fsi.fsid[10], fsi.fsid[11],
		 fsi.fsid[12], fsi.fsid[13], fsi.fsid[14], fsi.fsid[15]);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/sys/fs/btrfs/%s/allocation/data/%s", uuid,
			 names[i]);
		f = fopen(path, "r");
		if (!f || fscanf(f, "%" SCNu64, vals[i]) != 1) {
			if (f)
				fclose(f);
			return false;
		}
		fclose(f);
	}
	return true;
}

static void sync_fs(const char *m)
{
	int fd = open(m, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		syncfs(fd);
		close(fd);
	}
}

/* Lock every file: no operation is in flight (the snapshot sees the oracle). */
static void lock_all(void)
{
	int i;

	for (i = 0; i < nfiles; i++)
		pthread_mutex_lock(&sh->f[i].lock);
}

static void unlock_all(void)
{
	int i;

	for (i = nfiles - 1; i >= 0; i--)
		pthread_mutex_unlock(&sh->f[i].lock);
}

/*
 * A read-only snapshot of the files, sent to the second file system (v1 in
 * full; v2 with compressed data, incremental from the last one), received,
 * and compared with the oracle as it was when the snapshot was taken.
 */

static bool compare_tree(struct ctx *c, const char *dir, const char *what)
{
	unsigned char *buf = c->rbuf;
	bool ok = true;
	int fi;

	for (fi = 0; fi < nfiles; fi++) {
		char path[512];
		struct stat st;
		int fd;

		snprintf(path, sizeof(path), "%s/f%02d", dir, fi);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			if (sh->snap_exists[fi]) {
				printf("stress: %s: f%02d missing: %s\n", what, fi, strerror(errno));
				ok = false;
			}
			continue;
		}
		if (!sh->snap_exists[fi]) {
			printf("stress: %s: f%02d should not exist\n", what, fi);
			ok = false;
		} else if (fstat(fd, &st) || st.st_size != sh->snap_size[fi]) {
			printf("stress: %s: f%02d size %jd, want %jd\n", what, fi,
			       (intmax_t)st.st_size, (intmax_t)sh->snap_size[fi]);
			ok = false;
		} else {
			int64_t pos;

			for (pos = 0; pos < sh->snap_size[fi]; pos += IOBUF) {
				size_t n = MIN(IOBUF, sh->snap_size[fi] - pos);
				long d;

				if (pread(fd, buf, n, pos) != (ssize_t)n) {
					printf("stress: %s: f%02d short read at %jd\n", what, fi,
					       (intmax_t)pos);
					ok = false;
					break;
				}
				d = first_diff(buf, snapshot_content + (size_t)fi * MAXSIZE + pos, n);
				if (d >= 0) {
					printf("stress: %s: f%02d differs at %jd\n", what, fi,
					       (intmax_t)(pos + d));
					ok = false;
					break;
				}
			}
		}
		close(fd);
	}
	return ok;
}

static void snapshot_and_send(struct ctx *c, const char *mname, int cycle)
{
	char snap[256], path[512];
	int rc, n;

	/* Taken by a worker during the cycle, or now. */
	if (!sh->snap_taken && !take_snapshot(c)) {
		result(false, "%s, cycle %d: snapshot", mname, cycle);
		return;
	}
	n = sh->nsnaps;
	snprintf(snap, sizeof(snap), "%s/snap%d", mnt, n);
	result(compare_tree(c, snap, "snapshot"), "%s, cycle %d: snapshot %d holds the oracle's files (taken %s)",
	       mname, cycle, n, sh->snap_taken ? "while the workers ran" : "between runs");
	if (!dev2)
		return;
	rc = run_cmd("mkdir -p %s/v1 %s/v2 && btrfs -q send %s | btrfs -q receive %s/v1",
		     mnt2, mnt2, snap, mnt2);
	snprintf(path, sizeof(path), "%s/v1/snap%d", mnt2, n);
	result(!rc && compare_tree(c, path, "send v1"),
	       "%s, cycle %d: send v1 of snapshot %d received whole", mname, cycle, n);
	if (n > 1)
		rc = run_cmd("btrfs -q send --proto 2 --compressed-data -p %s/snap%d %s | btrfs -q receive %s/v2",
			     mnt, n - 1, snap, mnt2);
	else
		rc = run_cmd("btrfs -q send --proto 2 --compressed-data %s | btrfs -q receive %s/v2",
			     snap, mnt2);
	snprintf(path, sizeof(path), "%s/v2/snap%d", mnt2, n);
	result(!rc && compare_tree(c, path, "send v2"),
	       "%s, cycle %d: send v2 --compressed-data%s of snapshot %d received whole", mname,
	       cycle, n > 1 ? " (incremental)" : "", n);
}

static void print_counts(long long start_ns, uint64_t seq0)
{
	uint64_t total = 0;
	int i;

	printf("operations:");
	for (i = 0; i < NR_OPS; i++) {
		printf(" %s %" PRIu64, opname[i], sh->ops[i]);
		if (sh->expected_err[i])
			printf(" (%" PRIu64 " refused as predicted)", sh->expected_err[i]);
		total += sh->ops[i];
		printf(i + 1 < NR_OPS ? "," : "\n");
	}
	printf("  %" PRIu64 " operations (%" PRIu64 " numbered), %" PRIu64 " concurrent writes in groups, %" PRIu64 " KiB written encoded, %" PRIu64 " KiB read encoded, %.0f s\n",
	       total, sh->seq - seq0, sh->sub_ops, sh->bytes_enc_written / 1024,
	       sh->bytes_enc_read / 1024, (now_ns() - start_ns) / 1e9);
	if (sh->races) {
		printf("  %" PRIu64 " races, %" PRIu64 " of them explained only by an order other than the start order; racers:",
		       sh->races, sh->races_reordered);
		for (i = 0; i < NR_RKINDS; i++)
			printf(" %s %" PRIu64 "%s", rname[i], sh->race_kinds[i],
			       i + 1 < NR_RKINDS ? "," : "\n");
	}
}

static void run_mode(int mode, long long secs)
{
	const char *opts = modes[mode];
	const char *mname = *opts ? opts : "no compression";
	struct ctx *c = new_ctx(999, seed);
	uint64_t used0 = 0, may0, res0, used, may, res, f0;
	long long start = now_ns();
	char dir[256];
	int cycle, fi, p, i;
	bool ok;

	printf("== mode %d: mount -o '%s'\n", mode, opts);
	fflush(stdout);
	if (run_cmd("mkfs.btrfs -q -f %s >/dev/null", dev) || !do_mount(dev, mnt, opts)) {
		result(false, "%s: mkfs and mount", mname);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/d", mnt);
	if (run_cmd("btrfs -q subvolume create %s", dir)) {
		result(false, "%s: subvolume", mname);
		do_umount(mnt);
		return;
	}
	if (dev2 && (run_cmd("mkfs.btrfs -q -f %s >/dev/null", dev2) ||
		     !do_mount(dev2, mnt2, opts))) {
		result(false, "%s: mkfs and mount of the receiving file system", mname);
		dev2 = NULL;
	}
	sh->nsnaps = 0;
	sync_fs(mnt);
	if (!data_space(mnt, &used0, &may0, &res0))
		printf("stress: no data space figures in sysfs\n");
	printf("stress: data space after mkfs: used %" PRIu64 "\n", used0);

	for (fi = 0; fi < MAXFILES; fi++) {
		sh->f[fi].size = 0;
		sh->f[fi].exists = 0;
		sh->f[fi].nocow = 0;
		sh->f[fi].hist_next = 0;
	}
	memset(content, 0, (size_t)MAXFILES * MAXSIZE);
	memset(sh->ops, 0, sizeof(sh->ops));
	memset(sh->expected_err, 0, sizeof(sh->expected_err));
	sh->sub_ops = sh->bytes_enc_read = sh->bytes_enc_written = 0;
	sh->races = sh->races_reordered = 0;
	memset(sh->race_kinds, 0, sizeof(sh->race_kinds));

	for (cycle = 0; cycle < ncycles; cycle++) {
		long long cstart = now_ns();
		uint64_t seq0 = sh->seq;
		pid_t pids[64];
		bool crashed = false;

		f0 = sh->failures;
		deadline_ns = cstart + secs * 1000000000LL / ncycles;
		sh->stop = 0;
		sh->snap_taken = 0;
		if (op_total)
			op_limit = sh->seq + op_total / (nmodes * ncycles) + 1;
		fflush(stdout);
		for (p = 0; p < nprocs; p++) {
			pids[p] = fork();
			if (pids[p] < 0) {
				perror("stress: fork");
				exit(2);
			}
			if (!pids[p]) {
				run_proc(p, cycle, mode);
				fflush(stdout);
				_exit(0);
			}
		}
		for (p = 0; p < nprocs; p++) {
			int st;

			waitpid(pids[p], &st, 0);
			if (!WIFEXITED(st) || WEXITSTATUS(st)) {
				printf("stress: worker process %d ended with status 0x%x\n", p, st);
				crashed = true;
				sh->stop = 1;
			}
		}
		printf("%s, cycle %d: %" PRIu64 " operations in %.0f s\n", mname, cycle + 1,
		       sh->seq - seq0, (now_ns() - cstart) / 1e9);
		result(sh->failures == f0 && !crashed,
		       "%s, cycle %d: every operation's result as the oracle says (%" PRIu64 " failures)",
		       mname, cycle + 1, sh->failures - f0);
		/*
		 * The last operation on every file: concurrent writes extending
		 * it, so that the sizes they leave are what the remount sees.
		 */
		f0 = sh->failures;
		for (fi = 0; fi < nfiles; fi++) {
			pthread_mutex_lock(&sh->f[fi].lock);
			op_begin(c, OP_GROUP, fi);
			op_group(c, fi, true);
			op_end(c, fi, -1);
			pthread_mutex_unlock(&sh->f[fi].lock);
		}
		log_flush(c);
		result(sh->failures == f0,
		       "%s, cycle %d: a last group of extending writes on every file", mname,
		       cycle + 1);
		if (inject && !cycle) {
			for (fi = 0; fi < nfiles && !sh->f[fi].size; fi++)
				;
			if (fi < nfiles) {
				fdata(fi)[sh->f[fi].size / 2] ^= 0x40;
				printf("stress: -X: flipped a bit of the oracle of f%02d at %jd\n", fi,
				       (intmax_t)(sh->f[fi].size / 2));
			}
		}
		result(check_all(c, "whole-file check"), "%s, cycle %d: every file whole",
		       mname, cycle + 1);
		snapshot_and_send(c, mname, cycle + 1);
		ok = do_umount(mnt) && do_mount(dev, mnt, opts);
		result(ok && check_all(c, "whole-file check after remount"),
		       "%s, cycle %d: every file whole after umount and mount", mname, cycle + 1);
		if (!ok)
			break;
	}
	print_counts(start, 0);

	result(!run_cmd("btrfs scrub start -B %s", mnt), "%s: btrfs scrub", mname);
	ok = do_umount(mnt);
	result(ok && !run_cmd("btrfs check --readonly %s", dev), "%s: btrfs check", mname);
	if (!ok || !do_mount(dev, mnt, opts))
		return;

	/* Everything deleted: the data space is as after mkfs, none reserved. */
	for (fi = 0; fi < nfiles; fi++) {
		char path[256];

		fpath(fi, path, sizeof(path));
		unlink(path);
	}
	for (i = 1; i <= sh->nsnaps; i++)
		run_cmd("btrfs -q subvolume delete %s/snap%d", mnt, i);
	run_cmd("btrfs -q subvolume delete %s", dir);
	used = may = res = ~0ULL;
	for (i = 0; i < 60; i++) {
		run_cmd("btrfs -q subvolume sync %s >/dev/null 2>&1", mnt);
		sync_fs(mnt);
		if (data_space(mnt, &used, &may, &res) && used == used0 && !may && !res)
			break;
		sleep(1);
	}
	printf("stress: data space after deleting everything: used %" PRIu64 ", may_use %" PRIu64 ", reserved %" PRIu64 "\n",
	       used, may, res);
	result(used == used0 && !may && !res,
	       "%s: data space back to %" PRIu64 " bytes used, nothing reserved", mname, used0);
	do_umount(mnt);
	result(!run_cmd("btrfs check --readonly %s", dev), "%s: btrfs check after deleting everything",
	       mname);
	if (dev2) {
		do_umount(mnt2);
		result(!run_cmd("btrfs check --readonly %s", dev2),
		       "%s: btrfs check of the receiving file system", mname);
	}
	free(c);
}

static void usage(void)
{
	fprintf(stderr, "usage: stress -D DEV [-M MNT] [-s SEED] [-t SECONDS] [-n OPS] [-p PROCS] [-j THREADS] [-f FILES] [-c CYCLES] [-o OPTS]... [-l OPLOG] [-R DEV2] [-X] [-B] [-m] [-S] [-w OP=WEIGHT,...]\n"
			"       stress -W DIR -C CYCLE [-s SEED] [-p PROCS] [-j THREADS]   (power cuts: write)\n"
			"       stress -W DIR -V ACKED                                      (power cuts: verify)\n");
	exit(2);
}

static void set_weights(char *arg)
{
	char *tok, *save = NULL;
	int i;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			usage();
		*eq = '\0';
		for (i = 0; i < NR_OPS; i++)
			if (!strcmp(opname[i], tok))
				break;
		if (i == NR_OPS) {
			fprintf(stderr, "stress: no operation %s\n", tok);
			usage();
		}
		opweight[i] = atoi(eq + 1);
	}
}

int main(int argc, char **argv)
{
	pthread_mutexattr_t ma;
	long long start;
	int opt, i;

	while ((opt = getopt(argc, argv, "D:M:s:t:n:p:j:f:c:o:l:R:Xw:SW:C:V:Bm")) != -1) {
		switch (opt) {
		case 'D': dev = optarg; break;
		case 'M': mnt = optarg; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': seconds = strtoll(optarg, NULL, 0); break;
		case 'n': op_total = strtoull(optarg, NULL, 0); break;
		case 'p': nprocs = atoi(optarg); break;
		case 'j': nthreads = atoi(optarg); break;
		case 'f': nfiles = atoi(optarg); break;
		case 'c': ncycles = atoi(optarg); break;
		case 'o':
			if (nmodes < 8)
				modes[nmodes++] = optarg;
			break;
		case 'l': oplog_path = optarg; break;
		case 'R': dev2 = optarg; break;
		case 'X': inject = true; break;
		case 'B': race_base = true; break;
		case 'm': mainline = true; break;
		case 'S': sync_each = true; break;
		case 'W': pc_dir = optarg; break;
		case 'C': pc_cycle = atoi(optarg); break;
		case 'V': pc_acked = optarg; break;
		case 'w': set_weights(optarg); break;
		default: usage();
		}
	}
	if ((!dev && !pc_dir) || (pc_dir && pc_cycle < 0 && !pc_acked) || nprocs < 1 || nprocs > 64 || nthreads < 1 || nthreads > 64 ||
	    nfiles < 2 || nfiles > MAXFILES || ncycles < 1)
		usage();
	if (!nmodes) {
		modes[nmodes++] = "compress-force=zstd";
		modes[nmodes++] = "";
	}
	if (lzo_init() != LZO_E_OK) {
		fprintf(stderr, "stress: lzo_init failed\n");
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	content = mmap(NULL, (size_t)MAXFILES * MAXSIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	snapshot_content = mmap(NULL, (size_t)MAXFILES * MAXSIZE, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || content == MAP_FAILED || snapshot_content == MAP_FAILED) {
		perror("stress: memory");
		return 2;
	}
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&sh->print_lock, &ma);
	pthread_mutex_init(&sh->log_lock, &ma);
	for (i = 0; i < MAXFILES; i++)
		pthread_mutex_init(&sh->f[i].lock, &ma);
	if (oplog_path) {
		logfd = open(oplog_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
		if (logfd < 0) {
			perror(oplog_path);
			return 2;
		}
	}
	if (pc_dir && pc_acked)
		return pc_verify();
	if (pc_dir)
		return pc_write();
	mkdir(mnt, 0755);
	if (dev2)
		mkdir(mnt2, 0755);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("stress: weights:");
	for (i = 0; i < NR_OPS; i++)
		printf(" %s=%u", opname[i], opweight[i]);
	printf("\n");
	printf("stress: seed %" PRIu64 ", %lld s, %" PRIu64 " operations at most (0: no limit), %d processes x %d threads, %d files, %d cycles per mode, op log %s\n",
	       seed, seconds, op_total, nprocs, nthreads, nfiles, ncycles,
	       oplog_path ? oplog_path : "(none)");
	start = now_ns();
	for (i = 0; i < nmodes; i++)
		run_mode(i, seconds / nmodes);
	printf("stress: %" PRIu64 " operations in %.0f s, seed %" PRIu64 "\n", sh->seq,
	       (now_ns() - start) / 1e9, seed);
	if (sh->dio_collisions)
		printf("note: %" PRIu64 " fsync EIO from 5.10's direct I/O and buffered read race (not failed)\n",
		       sh->dio_collisions);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
