// SPDX-License-Identifier: GPL-2.0
/*
 * demo: what 'make' shows in the guest. Each section calls one interface of
 * the series through syscall(2) and prints what the kernel did. Built
 * against the patched tree's UAPI headers, so a missing definition there is
 * a build error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
#include <linux/close_range.h>
#include <linux/fs.h>
#include <linux/time_types.h>

/*
 * glibc's <fcntl.h> has its own O_* values and does not know this one; the
 * kernel's asm-generic value serves x86, arm64 and most others.
 */
#ifndef O_ALLOW_ENCODED
#define O_ALLOW_ENCODED 040000000
#endif

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int demo_epoll_pwait2(void)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 200000 };
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int efd = eventfd(0, EFD_CLOEXEC);
	long long t0 = 0, t1 = 0;
	long ret = 0;
	int i;

	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	prctl(PR_SET_TIMERSLACK, 1);

	/* The last of a few waits: the first ones warm up an emulated CPU. */
	for (i = 0; i < 4; i++) {
		t0 = now_ns();
		ret = syscall(__NR_epoll_pwait2, ep, &out, 1, &ts, NULL, 0);
		t1 = now_ns();
		if (ret < 0) {
			printf("epoll_pwait2: %s\n", strerror(errno));
			return 1;
		}
	}
	printf("epoll_pwait2 (syscall %d): 200 us timeout returned %ld after %lld us\n",
	       __NR_epoll_pwait2, ret, (t1 - t0) / 1000);

	for (i = 0; i < 4; i++) {
		t0 = now_ns();
		ret = epoll_wait(ep, &out, 1, 1);
		t1 = now_ns();
	}
	printf("epoll_wait: the shortest finite timeout (1 ms) returned %ld after %lld us\n",
	       ret, (t1 - t0) / 1000);
	close(efd);
	close(ep);
	return 0;
}

static int demo_close_range_cloexec(void)
{
	int fds[6], i;

	for (i = 0; i < 6; i++)
		fds[i] = open("/dev/null", O_RDONLY);
	if (syscall(__NR_close_range, fds[1], fds[4], CLOSE_RANGE_CLOEXEC)) {
		printf("close_range(CLOSE_RANGE_CLOEXEC): %s\n", strerror(errno));
		return 1;
	}
	printf("close_range(%d, %d, CLOSE_RANGE_CLOEXEC):", fds[1], fds[4]);
	for (i = 0; i < 6; i++)
		printf(" fd %d %s", fds[i],
		       fcntl(fds[i], F_GETFD) & FD_CLOEXEC ? "cloexec" : "-");
	printf("\n");
	for (i = 0; i < 6; i++)
		close(fds[i]);
	return 0;
}

/* The extents of @path as stored: one RWF_ENCODED read per extent. */
static int demo_encoded_read(const char *path)
{
	static const char * const names[] = {
		"none", "zlib", "zstd", "lzo-4k", "lzo-8k", "lzo-16k", "lzo-32k", "lzo-64k",
	};
	static char buf[128 * 1024];
	struct encoded_iov enc;
	struct iovec iov[2] = {
		{ .iov_base = &enc, .iov_len = sizeof(enc) },
		{ .iov_base = buf, .iov_len = sizeof(buf) },
	};
	off_t off = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_ALLOW_ENCODED | O_CLOEXEC);
	if (fd < 0) {
		printf("open(%s, O_ALLOW_ENCODED): %s\n", path, strerror(errno));
		return 1;
	}
	printf("preadv2(RWF_ENCODED) of %s:\n", path);
	while ((n = preadv2(fd, iov, 2, off, RWF_ENCODED)) > 0) {
		printf("  file %7lld..%-7lld %-6s %6zd bytes stored for %llu decoded\n",
		       (long long)off, (long long)(off + enc.len),
		       enc.compression < 8 ? names[enc.compression] : "?", n,
		       (unsigned long long)enc.unencoded_len);
		off += enc.len;
	}
	if (n < 0)
		printf("  preadv2: %s\n", strerror(errno));
	close(fd);
	return n < 0;
}

int main(int argc, char **argv)
{
	int bad = 0;

	bad |= demo_epoll_pwait2();
	bad |= demo_close_range_cloexec();
	if (argc > 1)
		bad |= demo_encoded_read(argv[1]);
	return bad;
}
