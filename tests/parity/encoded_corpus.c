// SPDX-License-Identifier: GPL-2.0
/*
 * encoded_corpus: the programs make parity runs on the series' kernel and
 * on Debian's 6.1 kernel, whose output must match line by line (see
 * docs/testing.md). Every line starts with a key naming the case; the
 * rest is what the kernel did: return value, errno, every field of the
 * argument that a read returns, and hashes of the bytes.
 *
 *   encoded_corpus gen SEED SIZE          SIZE bytes of compressible text
 *   encoded_corpus clone SRC SOFF DST DOFF LEN   FICLONERANGE
 *   encoded_corpus write DIR              encoded writes, good and bad
 *   encoded_corpus write -r DIR           the good ones with RWF_ENCODED
 *                                         (the ioctl where the kernel
 *                                         has no RWF_ENCODED)
 *   encoded_corpus dump [-r] DIR          every file's extents, as encoded
 *                                         reads return them (-r: with
 *                                         RWF_ENCODED, not the ioctl)
 *   encoded_corpus args FILE              the read ioctl's argument checks
 *
 * Only the btrfs ioctls are sent to a kernel that is not the series'
 * (RWF_ENCODED is only for kernels that have encoded I/O); "dump -r"
 * refuses to run unless open() keeps O_ALLOW_ENCODED.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/btrfs.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "scratch_btrfs.h"
#include "btrfs_codec.h"

#ifndef O_ALLOW_ENCODED
#define O_ALLOW_ENCODED 040000000
#endif

static unsigned char data[DATA_BUF_SIZE], plain[BTRFS_MAX_UNCOMPRESSED];
static unsigned char payload[DATA_BUF_SIZE];

/* FNV-1a, 64 bits: a stable name for a run of bytes. */
static uint64_t hash(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

/* Deterministic text: lines of words from a small generator. */
static void gen(unsigned char *p, size_t n, unsigned int seed)
{
	static const char *const words[] = {
		"extent", "btrfs", "encoded", "stream", "send", "receive",
		"inline", "hole", "zstd", "zlib", "lzo", "sector", "\n",
	};
	uint32_t x = seed * 2654435761u + 1;
	size_t i = 0;

	while (i < n) {
		const char *w;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		w = words[x % 13];
		while (*w && i < n)
			p[i++] = *w++;
		if (i < n)
			p[i++] = ' ';
	}
}

/* A line: "KEY: RESULT ...", RESULT the return value or "-1 ERRNAME". */
static void put_res(const char *key, long ret, int err)
{
	if (ret < 0)
		printf("%s: -1 %s", key, strerrorname_np(err));
	else
		printf("%s: %ld", key, ret);
}

/* The bytes, by their hash, or "zero" if they all are. */
static void put_bytes(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && !p[i]; i++)
		;
	if (i == n)
		printf(" bytes=zero");
	else
		printf(" bytes=%016llx", (unsigned long long)hash(p, n));
}

/* The fields a read fills in. */
static void put_args(const struct btrfs_ioctl_encoded_io_args *a)
{
	printf(" len=%llu unencoded_len=%llu unencoded_offset=%llu compression=%u encryption=%u",
	       (unsigned long long)a->len, (unsigned long long)a->unencoded_len,
	       (unsigned long long)a->unencoded_offset, a->compression, a->encryption);
}

static long corpus_read(int fd, struct btrfs_ioctl_encoded_io_args *a, int rwf)
{
	struct encoded_iov e;
	struct iovec iov[2];
	long ret;

	if (!rwf)
		return ioctl(fd, BTRFS_IOC_ENCODED_READ, a);
	memset(&e, 0, sizeof(e));
	iov[0].iov_base = &e;
	iov[0].iov_len = sizeof(e);
	iov[1] = a->iov[0];
	ret = preadv2(fd, iov, 2, a->offset, RWF_ENCODED);
	if (ret >= 0) {
		a->len = e.len;
		a->unencoded_len = e.unencoded_len;
		a->unencoded_offset = e.unencoded_offset;
		a->compression = e.compression;
		a->encryption = e.encryption;
	}
	return ret;
}

/* One encoded read at @off into a buffer of @room bytes, printed. */
static long read_one(const char *key, int fd, long long off, size_t room, int rwf)
{
	struct btrfs_ioctl_encoded_io_args a;
	struct iovec iov = { data, room };
	char at[PATH_MAX + 32];
	long ret;

	memset(&a, 0, sizeof(a));
	a.iov = &iov;
	a.iovcnt = 1;
	a.offset = off;
	snprintf(at, sizeof(at), "%s@%lld", key, off);
	ret = corpus_read(fd, &a, rwf);
	put_res(at, ret, errno);
	if (ret > 0) {
		put_args(&a);
		put_bytes(data, ret);
	}
	printf("\n");
	return ret > 0 ? (long)a.len : ret;
}

/* The plain contents of @fd and its size. */
static void put_contents(const char *key, int fd)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	long long size = 0;
	ssize_t n;

	while ((n = pread(fd, data, sizeof(data), size)) > 0) {
		h ^= hash(data, n);
		h *= 0x100000001b3ULL;
		size += n;
	}
	printf("%s contents: size=%lld hash=%016llx\n", key, size, (unsigned long long)h);
}

/*
 * Walk a file extent by extent from offset 0: each encoded extent on a
 * line, each run of plain data (however many reads it took, which is up to
 * the kernel) on one line: where it starts, its length, and its bytes.
 */
static void walk_extents(const char *key, int fd, int rwf)
{
	static unsigned char run[1 << 24];
	long long off = 0, size = lseek(fd, 0, SEEK_END), run_start = -1;
	size_t run_len = 0;
	long ret;
	int i;

	for (i = 0; i < 4096 && off <= size; i++) {
		struct btrfs_ioctl_encoded_io_args a;
		struct iovec iov = { data, DATA_BUF_SIZE };

		memset(&a, 0, sizeof(a));
		a.iov = &iov;
		a.iovcnt = 1;
		a.offset = off;
		ret = off < size ? corpus_read(fd, &a, rwf) : 0;
		if (ret > 0 && a.compression == 0 && run_len + ret <= sizeof(run)) {
			if (run_start < 0)
				run_start = off;
			memcpy(run + run_len, data, ret);
			run_len += ret;
			off += a.len;
			continue;
		}
		if (run_start >= 0) {
			printf("%s plain@%lld: len=%zu", key, run_start, run_len);
			put_bytes(run, run_len);
			printf("\n");
			run_start = -1;
			run_len = 0;
		}
		if (ret <= 0) {
			if (ret < 0)
				printf("%s walk@%lld: -1 %s\n", key, off, strerrorname_np(errno));
			break;
		}
		printf("%s extent@%lld: %ld", key, off, ret);
		put_args(&a);
		put_bytes(data, ret);
		printf("\n");
		off += a.len;
	}
}

/*
 * The whole file's extents; then single reads at offsets inside extents
 * and around the end of the file, as they come.
 */
static void dump_file(const char *key, int fd, int rwf)
{
	long long size = lseek(fd, 0, SEEK_END);

	put_contents(key, fd);
	walk_extents(key, fd, rwf);
	read_one(key, fd, 1000, DATA_BUF_SIZE, rwf);
	read_one(key, fd, 4096 + 100, DATA_BUF_SIZE, rwf);
	read_one(key, fd, 65536 + 4096, DATA_BUF_SIZE, rwf);
	read_one(key, fd, size, DATA_BUF_SIZE, rwf);
	read_one(key, fd, size + 4096, DATA_BUF_SIZE, rwf);
	read_one(key, fd, LLONG_MAX - 4096, DATA_BUF_SIZE, rwf);
}

static int cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void dump_dir(const char *dir, const char *rel, int rwf)
{
	struct dirent **ents;
	char path[PATH_MAX], key[PATH_MAX];
	int n, i;

	n = scandir(dir, &ents, NULL, cmp_names);
	if (n < 0)
		err(1, "%s", dir);
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		struct stat st;

		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		snprintf(key, sizeof(key), "%s%s%s", rel, *rel ? "/" : "", name);
		if (lstat(path, &st))
			err(1, "%s", path);
		if (S_ISDIR(st.st_mode)) {
			dump_dir(path, key, rwf);
		} else if (S_ISREG(st.st_mode)) {
			int fd = open(path, O_RDONLY | O_CLOEXEC | (rwf ? O_ALLOW_ENCODED : 0));

			if (fd < 0)
				err(1, "%s", path);
			dump_file(key, fd, rwf);
			close(fd);
		}
		free(ents[i]);
	}
	free(ents);
}

/* Drop CAP_SYS_ADMIN from every set of this process. */
static void drop_sys_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		err(1, "capget");
	d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	d[CAP_SYS_ADMIN / 32].permitted &= ~(1u << (CAP_SYS_ADMIN % 32));
	if (syscall(SYS_capset, &h, d))
		err(1, "capset");
}

/* A read ioctl with arguments changed by @how, printed. */
static void read_case(const char *key, int fd, int how)
{
	struct btrfs_ioctl_encoded_io_args a;
	struct iovec iov[2] = { { data, DATA_BUF_SIZE }, { payload, DATA_BUF_SIZE } };
	char name[64];
	long ret;

	memset(&a, 0x5a, sizeof(a));	/* output fields left uninitialised */
	a.iov = iov;
	a.iovcnt = 1;
	a.offset = 0;
	a.flags = 0;
	switch (how) {
	case 0: break;
	case 1: a.flags = 1; break;
	case 2: a.flags = 1ULL << 63; break;
	case 3: a.iovcnt = 0; break;
	case 4: a.iovcnt = 1025; break;
	case 5: a.iov = NULL; break;
	case 6: iov[0].iov_len = 4096; break;
	case 7: iov[0].iov_len = 4096; a.iovcnt = 2; break;
	case 8: a.offset = -1; break;
	case 9: a.offset = -4096; break;
	case 10: a.offset = LLONG_MAX; break;
	case 11: a.offset = LLONG_MAX - 65536; break;
	case 12: iov[0].iov_base = (void *)16; break;
	case 13: iov[0].iov_len = 0; break;
	}
	snprintf(name, sizeof(name), "%s read-arg-%d", key, how);
	ret = ioctl(fd, BTRFS_IOC_ENCODED_READ, &a);
	put_res(name, ret, errno);
	if (ret > 0) {
		put_args(&a);
		put_bytes(data, ret);
	}
	printf("\n");
}

static void args_main(const char *file)
{
	int how, fd;
	pid_t pid;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		err(1, "%s", file);
	for (how = 0; how <= 13; how++)
		read_case("rdonly", fd, how);
	close(fd);
	fd = open(file, O_RDWR | O_CLOEXEC);
	read_case("rdwr", fd, 0);
	close(fd);
	fd = open(file, O_WRONLY | O_CLOEXEC);
	read_case("wronly", fd, 0);
	close(fd);
	fd = open(file, O_PATH | O_CLOEXEC);
	read_case("opath", fd, 0);
	close(fd);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	read_case("not-btrfs-dir", fd, 0);
	close(fd);
	/* Capability dropped after the open: the ioctl checks at the call. */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fd = open(file, O_RDONLY | O_CLOEXEC);
		drop_sys_admin();
		read_case("no-cap-sys-admin", fd, 0);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

struct write_case {
	const char *name;
	__u32 compression;	/* of the payload */
	long long offset;
	size_t unencoded_len;
	size_t len;
	size_t unencoded_offset;
	int open_flags;		/* besides O_CLOEXEC; 0: O_RDWR */
	int tweak;		/* see write_one() */
	/*
	 * Every kernel writes it through either interface: "write -r" does
	 * too. (The lzo inline case is not: its 103 bytes for 100 are more
	 * than the ioctl takes, and RWF_ENCODED takes them.)
	 */
	int good;
};

enum {
	T_NONE, T_FLAGS, T_RESERVED, T_ENCRYPTION, T_BAD_CODEC, T_NO_IOV,
	T_IOVCNT_0, T_IOVCNT_BIG, T_SPLIT_IOV, T_SHORT_PAYLOAD, T_BIG_PAYLOAD,
	T_GARBAGE, T_EMPTY_PAYLOAD, T_NOCOW, T_IMMUTABLE, T_APPEND_ONLY,
	T_NO_CAP, T_FSIZE, T_EXISTING, T_SWAP_CODEC,
};

#define Z ENCODED_IOV_COMPRESSION_BTRFS_ZSTD
#define ZL ENCODED_IOV_COMPRESSION_BTRFS_ZLIB
#define L4 ENCODED_IOV_COMPRESSION_BTRFS_LZO_4K
#define K(n) ((n) * 1024)

static const struct write_case write_cases[] = {
	{ "zstd-128k", Z, 0, K(128), K(128), 0, 0, T_NONE, 1 },
	{ "zlib-128k", ZL, 0, K(128), K(128), 0, 0, T_NONE, 1 },
	{ "lzo-128k", L4, 0, K(128), K(128), 0, 0, T_NONE, 1 },
	{ "zstd-at-1m", Z, K(1024), K(128), K(128), 0, 0, T_NONE, 1 },
	{ "zstd-part", Z, 0, K(128), K(64), K(4), 0, T_NONE, 1 },
	{ "zstd-tail-1000", Z, 0, K(4), 1000, 0, 0, T_NONE, 1 },
	{ "zstd-inline-2000", Z, 0, 2000, 2000, 0, 0, T_NONE, 1 },
	{ "zlib-inline-3000", ZL, 0, 3000, 3000, 0, 0, T_NONE, 1 },
	{ "lzo-inline-100", L4, 0, 100, 100, 0, 0, T_NONE },
	{ "zstd-over-existing", Z, K(64), K(128), K(128), 0, 0, T_EXISTING, 1 },
	{ "zstd-sector-in-existing", Z, K(8), K(4), K(4), 0, 0, T_EXISTING, 1 },
	{ "len-0", Z, 0, K(128), 0, 0, 0, T_NONE },
	{ "len-0-empty", Z, 0, K(128), 0, 0, 0, T_EMPTY_PAYLOAD },
	{ "flags", Z, 0, K(128), K(128), 0, 0, T_FLAGS },
	{ "reserved", Z, 0, K(128), K(128), 0, 0, T_RESERVED },
	{ "encryption", Z, 0, K(128), K(128), 0, 0, T_ENCRYPTION },
	{ "codec-8", Z, 0, K(128), K(128), 0, 0, T_BAD_CODEC },
	{ "codec-none", 0, 0, K(4), K(4), 0, 0, T_NONE },
	{ "len-gt-unencoded", Z, 0, K(64), K(128), 0, 0, T_NONE },
	{ "offset-plus-len-gt-unencoded", Z, 0, K(128), K(128), K(4), 0, T_NONE },
	{ "unencoded-256k", Z, 0, K(256), K(128), 0, 0, T_NONE },
	{ "len-256k", Z, 0, K(256), K(256), 0, 0, T_NONE },
	{ "unaligned-offset", Z, 100, K(128), K(128), 0, 0, T_NONE },
	{ "unaligned-len-not-eof", Z, 0, K(128), K(100) + 1, 0, 0, T_EXISTING },
	{ "negative-offset", Z, -K(128), K(128), K(128), 0, 0, T_NONE },
	{ "offset-near-max", Z, LLONG_MAX - K(64) + 1, K(128), K(128), 0, 0, T_NONE },
	{ "no-iov", Z, 0, K(128), K(128), 0, 0, T_NO_IOV },
	{ "iovcnt-0", Z, 0, K(128), K(128), 0, 0, T_IOVCNT_0 },
	{ "iovcnt-1025", Z, 0, K(128), K(128), 0, 0, T_IOVCNT_BIG },
	{ "split-iov", Z, 0, K(128), K(128), 0, 0, T_SPLIT_IOV, 1 },
	{ "payload-gt-unencoded", Z, 0, K(4), K(4), 0, 0, T_BIG_PAYLOAD },
	{ "payload-too-short", Z, 0, K(128), K(128), 0, 0, T_SHORT_PAYLOAD },
	{ "payload-garbage", Z, 0, K(128), K(128), 0, 0, T_GARBAGE },
	{ "payload-wrong-codec", Z, 0, K(128), K(128), 0, 0, T_SWAP_CODEC },
	{ "rdonly", Z, 0, K(128), K(128), 0, O_RDONLY, T_NONE },
	{ "append", Z, 0, K(128), K(128), 0, O_RDWR | O_APPEND, T_EXISTING },
	{ "nocow", Z, 0, K(128), K(128), 0, 0, T_NOCOW },
	{ "immutable", Z, 0, K(128), K(128), 0, 0, T_IMMUTABLE },
	{ "append-only-attr", Z, 0, K(128), K(128), 0, 0, T_APPEND_ONLY },
	{ "no-cap-sys-admin", Z, 0, K(128), K(128), 0, 0, T_NO_CAP },
	{ "rlimit-fsize", Z, K(1024), K(128), K(128), 0, 0, T_FSIZE },
};

static void set_attr(int fd, int flag, int on)
{
	int attr;

	if (ioctl(fd, FS_IOC_GETFLAGS, &attr))
		err(1, "FS_IOC_GETFLAGS");
	attr = on ? attr | flag : attr & ~flag;
	if (ioctl(fd, FS_IOC_SETFLAGS, &attr))
		err(1, "FS_IOC_SETFLAGS");
}

/*
 * pwritev2(RWF_ENCODED) of what the write ioctl's @a describes, with its
 * iovecs after the struct.
 */
static long rwf_write(int fd, const struct btrfs_ioctl_encoded_io_args *a)
{
	struct encoded_iov e;
	struct iovec iov[3];
	unsigned long i;

	memset(&e, 0, sizeof(e));
	e.len = a->len;
	e.unencoded_len = a->unencoded_len;
	e.unencoded_offset = a->unencoded_offset;
	e.compression = a->compression;
	e.encryption = a->encryption;
	iov[0].iov_base = &e;
	iov[0].iov_len = sizeof(e);
	for (i = 0; i < a->iovcnt && i < 2; i++)
		iov[i + 1] = a->iov[i];
	return pwritev2(fd, iov, i + 1, a->offset, RWF_ENCODED);
}

/*
 * One case of write_cases on a new file @path: the result, then the file.
 * With @rwf, through pwritev2(RWF_ENCODED) where the kernel has it.
 */
static void write_one(const struct write_case *c, const char *path, unsigned int seed,
		      int rwf)
{
	struct btrfs_ioctl_encoded_io_args a;
	struct iovec iov[2];
	long plen, ret;
	int fd, saved;
	pid_t pid;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | (rwf ? O_ALLOW_ENCODED : 0),
		  0644);
	if (fd >= 0 && rwf) {
		if (!(fcntl(fd, F_GETFL) & O_ALLOW_ENCODED))
			rwf = 0;
		/* Which interface wrote it, for the series' kernel to be sure. */
		fprintf(stderr, "%s: %s\n", c->name, rwf ? "RWF_ENCODED" : "ioctl");
	}
	if (fd < 0)
		err(1, "%s", path);
	if (c->tweak == T_NOCOW)
		set_attr(fd, FS_NOCOW_FL, 1);
	if (c->tweak == T_EXISTING) {
		gen(data, K(256), seed + 1000);
		if (pwrite(fd, data, K(256), 0) != K(256) || fsync(fd))
			err(1, "%s", path);
	}
	if (c->tweak == T_IMMUTABLE)
		set_attr(fd, FS_IMMUTABLE_FL, 1);
	if (c->tweak == T_APPEND_ONLY)
		set_attr(fd, FS_APPEND_FL, 1);
	if (c->open_flags) {
		close(fd);
		fd = open(path, c->open_flags | O_CLOEXEC);
		if (fd < 0)
			err(1, "%s", path);
	}

	gen(plain, sizeof(plain), seed);
	if (c->compression) {
		size_t n = c->unencoded_len < sizeof(plain) ? c->unencoded_len : sizeof(plain);

		plen = encode_extent(c->compression, plain, n, payload, sizeof(payload));
	} else {
		memcpy(payload, plain, c->unencoded_len);
		plen = c->unencoded_len;
	}
	if (plen < 0)
		errx(1, "%s: cannot encode", c->name);
	if (c->tweak == T_BIG_PAYLOAD)
		plen = K(8);
	if (c->tweak == T_SHORT_PAYLOAD)
		plen /= 2;
	if (c->tweak == T_GARBAGE)
		memset(payload, 0xa5, plen);
	if (c->tweak == T_EMPTY_PAYLOAD)
		plen = 0;

	memset(&a, 0, sizeof(a));
	iov[0].iov_base = payload;
	iov[0].iov_len = plen;
	a.iov = iov;
	a.iovcnt = 1;
	a.offset = c->offset;
	a.len = c->len;
	a.unencoded_len = c->unencoded_len;
	a.unencoded_offset = c->unencoded_offset;
	a.compression = c->compression;
	switch (c->tweak) {
	case T_FLAGS: a.flags = 1; break;
	case T_RESERVED: a.reserved[63] = 1; break;
	case T_ENCRYPTION: a.encryption = 1; break;
	case T_BAD_CODEC: a.compression = 8; break;
	case T_NO_IOV: a.iov = NULL; break;
	case T_IOVCNT_0: a.iovcnt = 0; break;
	case T_IOVCNT_BIG: a.iovcnt = 1025; break;
	case T_SPLIT_IOV:
		iov[0].iov_len = plen / 3;
		iov[1].iov_base = payload + plen / 3;
		iov[1].iov_len = plen - plen / 3;
		a.iovcnt = 2;
		break;
	case T_SWAP_CODEC: a.compression = ZL; break;
	}

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		err(1, "fork");
	if (pid == 0) {
		if (c->tweak == T_NO_CAP)
			drop_sys_admin();
		if (c->tweak == T_FSIZE) {
			struct rlimit rl = { K(1024), K(1024) };

			signal(SIGXFSZ, SIG_IGN);
			setrlimit(RLIMIT_FSIZE, &rl);
		}
		ret = rwf ? rwf_write(fd, &a) : ioctl(fd, BTRFS_IOC_ENCODED_WRITE, &a);
		saved = errno;
		printf("write ");
		put_res(c->name, ret, saved);
		printf("\n");
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	if (c->tweak == T_IMMUTABLE)
		set_attr(fd, FS_IMMUTABLE_FL, 0);
	if (c->tweak == T_APPEND_ONLY)
		set_attr(fd, FS_APPEND_FL, 0);
	close(fd);
}

static void write_main(const char *dir, int rwf)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(write_cases) / sizeof(write_cases[0]); i++) {
		if (rwf && !write_cases[i].good)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, write_cases[i].name);
		write_one(&write_cases[i], path, i + 1, rwf);
	}
}

static void clone_main(char **argv)
{
	struct file_clone_range r;
	int src, dst;

	src = open(argv[0], O_RDONLY | O_CLOEXEC);
	dst = open(argv[2], O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (src < 0 || dst < 0)
		err(1, "clone: open");
	r.src_fd = src;
	r.src_offset = strtoull(argv[1], NULL, 0);
	r.dest_offset = strtoull(argv[3], NULL, 0);
	r.src_length = strtoull(argv[4], NULL, 0);
	if (ioctl(dst, FICLONERANGE, &r))
		err(1, "FICLONERANGE");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "gen")) {
		size_t n = strtoull(argv[3], NULL, 0), done = 0;

		while (done < n) {
			size_t k = n - done < sizeof(data) ? n - done : sizeof(data);

			gen(data, k, atoi(argv[2]) + done / sizeof(data));
			if (fwrite(data, 1, k, stdout) != k)
				err(1, "gen");
			done += k;
		}
		return 0;
	}
	if (argc == 7 && !strcmp(argv[1], "clone")) {
		clone_main(argv + 2);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "write")) {
		write_main(argv[2], 0);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "write") && !strcmp(argv[2], "-r")) {
		write_main(argv[3], 1);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "args")) {
		args_main(argv[2]);
		return 0;
	}
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "dump")) {
		int rwf = argc == 4 && !strcmp(argv[2], "-r");

		if (rwf) {
			int fd = open(argv[3], O_RDONLY | O_ALLOW_ENCODED | O_CLOEXEC);

			if (fd < 0 || !(fcntl(fd, F_GETFL) & O_ALLOW_ENCODED))
				errx(1, "this kernel has no RWF_ENCODED");
			close(fd);
		}
		dump_dir(argv[argc - 1], "", rwf);
		return 0;
	}
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
