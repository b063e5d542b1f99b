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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
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

#endif
