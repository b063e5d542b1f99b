/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench.h: what the benchmark programs share: clocks, and the lines they
 * print for scripts/bench-report.
 *
 * Each program prints tab-separated lines on stdout, of two kinds:
 *
 *   info  KEY  VALUE...                     something about the run
 *   BENCH K1 K2 K3 N MIN P10 MEDIAN P90 P99 MAX
 *
 * The second kind summarises N samples of one measurement, named by the
 * benchmark and three keys ("-" where a key is unused). Samples are
 * integers (nanoseconds or bytes); the quantiles interpolate between ranks.
 */
#ifndef BENCH_H
#define BENCH_H

#include <err.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* User plus system CPU time of this process. */
static inline long long cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

static inline int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* The p-quantile (0 <= p <= 1) of n > 0 sorted samples. */
static inline double quantile(const long long *v, int n, double p)
{
	double h = (n - 1) * p;
	int i = (int)h;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (h - i) * (v[i + 1] - v[i]);
}

/* Sort the n samples in v and print their summary line. */
static inline void summary(const char *bench, const char *k1, const char *k2,
			   const char *k3, long long *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_ll);
	printf("%s\t%s\t%s\t%s\t%d\t%lld\t%.0f\t%.0f\t%.0f\t%.0f\t%lld\n",
	       bench, k1, k2, k3, n, v[0], quantile(v, n, 0.1),
	       quantile(v, n, 0.5), quantile(v, n, 0.9), quantile(v, n, 0.99),
	       v[n - 1]);
	fflush(stdout);
}

/* An info line: "info", a tab, then the formatted fields. */
static inline void __attribute__((format(printf, 1, 2)))
info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("info\t", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
}

/*
 * Generated data sets. One fixed-seed xorshift generator, so that every
 * run (and every machine) writes the same bytes.
 */
static inline uint32_t rnd(uint32_t n)
{
	static uint64_t rng = 0x9e3779b97f4a7c15ULL;

	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng >> 11) % n;
}

/*
 * @bytes of web server access log lines to @fd (@name for errors), in
 * writes of about 1 MiB: compressible about as much as real logs (zstd
 * about 4:1).
 */
static inline void write_logs(int fd, long long bytes, const char *name)
{
	static const char * const verb[] = { "GET", "GET", "GET", "POST", "PUT" };
	static const char * const what[] = {
		"items", "users", "orders", "search", "static/css", "health",
	};
	static const int status[] = { 200, 200, 200, 200, 304, 404, 500 };
	static char buf[(1 << 20) + 512];
	static unsigned int sec;
	long long len = 0;

	while (bytes > 0) {
		sec += rnd(3);
		len += snprintf(buf + len, sizeof(buf) - len,
				"2024-05-%02u %02u:%02u:%02u.%03u web-%02u nginx[%u]: 10.%u.%u.%u - - \"%s /api/v1/%s/%u HTTP/1.1\" %d %u \"-\" \"client/%u.%u\" rt=0.%03u\n",
				1 + sec / 86400 % 28, sec / 3600 % 24,
				sec / 60 % 60, sec % 60, rnd(1000), rnd(8),
				1000 + rnd(50), rnd(4), rnd(256), rnd(256),
				verb[rnd(5)], what[rnd(6)], rnd(100000),
				status[rnd(7)], 200 + rnd(20000), 1 + rnd(3),
				rnd(10), rnd(400));
		if (len < (1 << 20) && len < bytes)
			continue;
		if (len > bytes)
			len = bytes;
		if (write(fd, buf, len) != len)
			err(1, "write %s", name);
		bytes -= len;
		len = 0;
	}
}

/* Write back and drop the page cache, dentries and inodes (root only). */
static inline void drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);

	sync();
	if (fd < 0 || write(fd, "3\n", 2) != 2)
		err(1, "/proc/sys/vm/drop_caches");
	close(fd);
}

/*
 * Busy (not idle, not iowait) CPU time of all CPUs, in ns: unlike the
 * process's rusage it counts the kernel workers (btrfs compresses,
 * decompresses and checksums data in them).
 */
static inline long long busy_ns(void)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
	FILE *f = fopen("/proc/stat", "r");

	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			 &user, &nice, &sys, &idle, &iowait, &irq, &softirq,
			 &steal) != 8)
		err(1, "/proc/stat");
	fclose(f);
	return (long long)(user + nice + sys + irq + softirq + steal) *
	       (1000000000LL / sysconf(_SC_CLK_TCK));
}

#endif
