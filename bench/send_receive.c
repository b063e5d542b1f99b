// SPDX-License-Identifier: GPL-2.0
/*
 * send_receive: the data set and the measurements of the btrfs send and
 * receive benchmark; scripts/bench-guest sets up the file systems and runs
 * btrfs send and receive through it.
 *
 *   send_receive -g DIR MIB        write a data set of MIB MiB into DIR
 *   send_receive -t K1 K2 CMD...   run CMD once, print its samples
 *   send_receive -s                summarise the samples read on stdin
 *
 * The data set (fixed seed, the same bytes every time): 40 % web server
 * logs in 16 MiB files (log/), 30 % generated English-like text in files
 * of 256 KiB to 4 MiB (doc/), 15 % small text files of 1 to 32 KiB in
 * 16 directories (src/), and 15 % random bytes in 4 MiB files (bin/),
 * which do not compress.
 *
 * -t drops the caches (so that send reads the extents from the file
 * system), runs CMD, waits for it and calls sync() (so that the data a
 * receive wrote is compressed and on disk), and prints one line a metric,
 *
 *   K1 K2 METRIC VALUE
 *
 * with METRIC wall_ns (command and sync), user_ns and sys_ns (CMD and its
 * children, wait4), busy_ns (the whole guest's busy CPU time, /proc/stat:
 * btrfs compresses in kernel workers that CMD's rusage does not see).
 * -s groups such lines (from any number of -t runs, and lines the caller
 * adds, like stream sizes) by K1 K2 METRIC in the order they first came
 * and prints a bench.h summary line "send K1 K2 METRIC N MIN ... MAX" for
 * each.
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "bench.h"

#define MIB (1LL << 20)

/* Output to a file through a 1 MiB buffer. */
struct out {
	int fd;
	const char *name;
	long long len, total;
	char buf[1 << 20];
};

static void flush(struct out *o)
{
	if (o->len && write(o->fd, o->buf, o->len) != o->len)
		err(1, "write %s", o->name);
	o->len = 0;
}

static void put(struct out *o, const char *s, long long n)
{
	while (n > 0) {
		long long k = sizeof(o->buf) - o->len;

		if (k > n)
			k = n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		o->total += k;
		s += k;
		n -= k;
		if (o->len == sizeof(o->buf))
			flush(o);
	}
}

/*
 * English-like text: words of a 4096-word vocabulary made of syllables,
 * the frequent ones chosen far more often (roughly Zipf), in sentences and
 * paragraphs wrapped at 72 columns. zstd compresses it about 3:1.
 */
#define WORDS 4096
static char vocab[WORDS][24];

static void make_vocab(void)
{
	static const char * const syl[] = {
		"a", "an", "ar", "be", "ca", "con", "de", "di", "en", "er",
		"es", "for", "ga", "in", "is", "la", "le", "ma", "men", "mo",
		"na", "ne", "o", "on", "per", "pro", "ra", "re", "ri", "ro",
		"sa", "se", "si", "ta", "te", "ter", "ti", "to", "tion", "u",
		"un", "ver", "vi", "at", "ex", "com", "sto", "pa",
	};
	int i, k, n;

	for (i = 0; i < WORDS; i++) {
		vocab[i][0] = '\0';
		/* Frequent words are short. */
		n = 1 + (i > 64) + (i > 512) + rnd(2);
		for (k = 0; k < n; k++)
			strcat(vocab[i], syl[rnd(ARRAY_SIZE(syl))]);
	}
}

static void write_text(struct out *o, long long bytes)
{
	long long end = o->total + bytes;
	int col = 0, words = 0, sentences = 0, n, cap = 1;
	char w[32];

	while (o->total < end) {
		/* rnd(rnd(N) + 1): index i has weight ~ log(N / i). */
		strcpy(w, vocab[rnd(rnd(WORDS) + 1)]);
		if (cap)
			w[0] -= 'a' - 'A';
		cap = 0;
		n = strlen(w);
		if (++words >= 4 + (int)rnd(15)) {
			w[n++] = rnd(10) ? '.' : '?';
			words = 0;
			cap = 1;
		} else if (!rnd(9)) {
			w[n++] = ',';
		}
		if (col && col + 1 + n > 72) {
			put(o, "\n", 1);
			col = 0;
		} else if (col) {
			put(o, " ", 1);
			col++;
		}
		put(o, w, n);
		col += n;
		if (cap && ++sentences >= 3 + (int)rnd(5)) {
			put(o, "\n\n", 2);
			col = sentences = 0;
		}
	}
}

/* Incompressible bytes (xorshift64*, its own seed). */
static void write_random(struct out *o, long long bytes)
{
	static uint64_t x = 0x2545f4914f6cdd1dULL;
	uint64_t v;

	for (; bytes > 0; bytes -= sizeof(v)) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		v = x * 0x2545f4914f6cdd1dULL;
		put(o, (const char *)&v, bytes < 8 ? bytes : 8);
	}
}

enum kind { LOGS, TEXT, RANDOM };

/* One file of @bytes of @kind, exactly. */
static void write_file(const char *path, enum kind kind, long long bytes)
{
	static struct out o;

	o.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	o.name = path;
	o.len = o.total = 0;
	if (o.fd < 0)
		err(1, "%s", path);
	if (kind == LOGS)
		write_logs(o.fd, bytes, path);
	else if (kind == TEXT)
		write_text(&o, bytes);
	else
		write_random(&o, bytes);
	/* write_text ends with a whole word: cut it to size. */
	flush(&o);
	if (ftruncate(o.fd, bytes) || close(o.fd))
		err(1, "close %s", path);
}

static void mkdir_p(const char *dir)
{
	if (mkdir(dir, 0755) && errno != EEXIST)
		err(1, "mkdir %s", dir);
}

static void generate(const char *dir, long long mib)
{
	long long total = mib * MIB, left, size;
	char path[4096];
	int i;

	make_vocab();
	mkdir_p(dir);
	snprintf(path, sizeof(path), "%s/log", dir);
	mkdir_p(path);
	for (left = total * 40 / 100, i = 0; left > 0; left -= size, i++) {
		size = left < 16 * MIB ? left : 16 * MIB;
		snprintf(path, sizeof(path), "%s/log/web-%02d.log", dir, i);
		write_file(path, LOGS, size);
	}
	snprintf(path, sizeof(path), "%s/doc", dir);
	mkdir_p(path);
	for (left = total * 30 / 100, i = 0; left > 0; left -= size, i++) {
		size = (256 << 10) << rnd(5);
		size = left < size ? left : size;
		snprintf(path, sizeof(path), "%s/doc/chapter-%03d.txt", dir, i);
		write_file(path, TEXT, size);
	}
	snprintf(path, sizeof(path), "%s/src", dir);
	mkdir_p(path);
	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "%s/src/d%02d", dir, i);
		mkdir_p(path);
	}
	for (left = total * 15 / 100, i = 0; left > 0; left -= size, i++) {
		size = 1024 + rnd(31 * 1024);
		size = left < size ? left : size;
		snprintf(path, sizeof(path), "%s/src/d%02d/f%05d.txt", dir,
			 i % 16, i);
		write_file(path, TEXT, size);
	}
	snprintf(path, sizeof(path), "%s/bin", dir);
	mkdir_p(path);
	/* The rest: the percentages add up to 100 % of MIB exactly. */
	left = total - total * 40 / 100 - total * 30 / 100 - total * 15 / 100;
	for (i = 0; left > 0; left -= size, i++) {
		size = left < 4 * MIB ? left : 4 * MIB;
		snprintf(path, sizeof(path), "%s/bin/blob-%02d", dir, i);
		write_file(path, RANDOM, size);
	}
}

static long long tv_ns(struct timeval tv)
{
	return tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
}

static void timed(const char *k1, const char *k2, char **cmd)
{
	long long t, busy;
	struct rusage ru;
	int status;
	pid_t pid;

	drop_caches();
	busy = busy_ns();
	t = now_ns();
	pid = fork();
	if (pid < 0)
		err(1, "fork");
	if (!pid) {
		execvp(cmd[0], cmd);
		err(127, "%s", cmd[0]);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		err(1, "wait4");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		errx(1, "%s failed (wait status %#x)", cmd[0], status);
	sync();
	t = now_ns() - t;
	busy = busy_ns() - busy;
	printf("%s\t%s\twall_ns\t%lld\n", k1, k2, t);
	printf("%s\t%s\tuser_ns\t%lld\n", k1, k2, tv_ns(ru.ru_utime));
	printf("%s\t%s\tsys_ns\t%lld\n", k1, k2, tv_ns(ru.ru_stime));
	printf("%s\t%s\tbusy_ns\t%lld\n", k1, k2, busy);
}

/* Samples of one key, in the order the keys first came. */
struct series {
	char key[128];
	long long *v;
	int n, size;
};

static void summarise(FILE *in)
{
	static struct series s[64];
	char line[256], k1[40], k2[40], k3[40];
	int ns = 0, i;
	long long x;

	while (fgets(line, sizeof(line), in)) {
		if (sscanf(line, "%39s %39s %39s %lld", k1, k2, k3, &x) != 4)
			errx(1, "not a sample: %s", line);
		snprintf(line, sizeof(line), "%s\t%s\t%s", k1, k2, k3);
		for (i = 0; i < ns && strcmp(s[i].key, line); i++)
			;
		if (i == ns) {
			if (ns == ARRAY_SIZE(s))
				errx(1, "too many keys");
			strcpy(s[ns++].key, line);
		}
		if (s[i].n == s[i].size) {
			s[i].size = s[i].size * 2 + 8;
			s[i].v = realloc(s[i].v, s[i].size * sizeof(x));
			if (!s[i].v)
				err(1, "realloc");
		}
		s[i].v[s[i].n++] = x;
	}
	for (i = 0; i < ns; i++) {
		sscanf(s[i].key, "%39s %39s %39s", k1, k2, k3);
		summary("send", k1, k2, k3, s[i].v, s[i].n);
	}
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "-g"))
		generate(argv[2], atoll(argv[3]));
	else if (argc >= 5 && !strcmp(argv[1], "-t"))
		timed(argv[2], argv[3], argv + 4);
	else if (argc == 2 && !strcmp(argv[1], "-s"))
		summarise(stdin);
	else
		errx(2, "usage: send_receive -g DIR MIB | -t K1 K2 CMD... | -s");
	return 0;
}
