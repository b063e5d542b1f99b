// SPDX-License-Identifier: GPL-2.0
/*
 * encoded_dump: list every extent of files as an encoded read returns it,
 * through both interfaces, so that the same image read on a big-endian and
 * a little-endian kernel can be compared line by line.
 *
 *	encoded_dump FILE...
 *
 * For each FILE, from offset 0 to the end of the file: preadv2(RWF_ENCODED)
 * on a descriptor opened with O_ALLOW_ENCODED, and BTRFS_IOC_ENCODED_READ at
 * the same offset; both must return the same extent (fields and bytes), or
 * the program fails. Prints one line per extent:
 *
 *	FILE OFFSET LEN UNENCODED_LEN UNENCODED_OFFSET COMPRESSION ENCRYPTION
 *	BYTES HASH
 *
 * with HASH the FNV-1a hash of the bytes read. The fields are the native
 * struct encoded_iov's and the ioctl's, decoded by this program for the
 * architecture it was built for: a kernel that filled them in the wrong
 * byte order prints other numbers than the other architecture's.
 */
#define _GNU_SOURCE
/* First: glibc's <sys/uio.h> then quietly redefines the RWF_* flags it shares. */
#include <linux/fs.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/btrfs.h>

#ifndef O_ALLOW_ENCODED
#define O_ALLOW_ENCODED 040000000	/* as on x86 and s390 */
#endif

/* Larger than any btrfs extent, compressed or not, that a read returns. */
#define BUF_SIZE (1024 * 1024)

static char buf_rwf[BUF_SIZE], buf_ioctl[BUF_SIZE];

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Dump @path; returns 0, or 1 after a message if anything was wrong. */
static int dump(const char *path)
{
	struct btrfs_ioctl_encoded_io_args args;
	struct encoded_iov enc;
	struct iovec iov[2], iov_ioctl;
	ssize_t n, m;
	off_t off = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_ALLOW_ENCODED);
	if (fd < 0) {
		warn("%s", path);
		return 1;
	}
	if (!(fcntl(fd, F_GETFL) & O_ALLOW_ENCODED)) {
		warnx("%s: the kernel has no O_ALLOW_ENCODED", path);
		close(fd);
		return 1;
	}
	for (;;) {
		memset(&enc, 0xa5, sizeof(enc));
		iov[0] = (struct iovec){ .iov_base = &enc, .iov_len = sizeof(enc) };
		iov[1] = (struct iovec){ .iov_base = buf_rwf, .iov_len = BUF_SIZE };
		n = preadv2(fd, iov, 2, off, RWF_ENCODED);
		if (n < 0) {
			warn("%s: preadv2(RWF_ENCODED) at %lld", path, (long long)off);
			break;
		}

		memset(&args, 0, sizeof(args));
		iov_ioctl = (struct iovec){ .iov_base = buf_ioctl, .iov_len = BUF_SIZE };
		args.iov = &iov_ioctl;
		args.iovcnt = 1;
		args.offset = off;
		m = ioctl(fd, BTRFS_IOC_ENCODED_READ, &args);
		if (m < 0) {
			warn("%s: BTRFS_IOC_ENCODED_READ at %lld", path, (long long)off);
			break;
		}
		if (!n && !m) {
			close(fd);
			return 0;
		}
		if (n != m || enc.len != args.len ||
		    enc.unencoded_len != args.unencoded_len ||
		    enc.unencoded_offset != args.unencoded_offset ||
		    enc.compression != args.compression ||
		    enc.encryption != args.encryption ||
		    memcmp(buf_rwf, buf_ioctl, n)) {
			warnx("%s at %lld: RWF_ENCODED and the ioctl differ", path,
			      (long long)off);
			break;
		}
		printf("%s %lld %llu %llu %llu %u %u %zd %016" PRIx64 "\n", path,
		       (long long)off, (unsigned long long)enc.len,
		       (unsigned long long)enc.unencoded_len,
		       (unsigned long long)enc.unencoded_offset,
		       enc.compression, enc.encryption, n, fnv1a(buf_rwf, n));
		if (!enc.len) {
			warnx("%s at %lld: an extent of length 0", path, (long long)off);
			break;
		}
		off += enc.len;
	}
	close(fd);
	return 1;
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	if (argc < 2)
		errx(2, "usage: encoded_dump FILE...");
	for (i = 1; i < argc; i++)
		ret |= dump(argv[i]);
	return ret;
}
