// SPDX-License-Identifier: GPL-2.0
/*
 * cloexec: the time to mark every descriptor above stderr close-on-exec,
 * with N of them open, three ways:
 *
 *   close_range  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC): one syscall
 *   fcntl        fcntl(fd, F_SETFD, FD_CLOEXEC) for each known descriptor
 *   proc_scan    what container runtimes did: read /proc/self/fd, parse
 *                each name, F_GETFD and F_SETFD where the flag is missing
 *
 * Each call is timed in a freshly forked child, as a runtime marks its
 * descriptors in the child it is about to exec: the child starts with no
 * flag set and a cold /proc/self/fd of its own. Methods take turns run by
 * run. Prints, in ns per call (see bench.h for the line format):
 *
 *   cloexec METHOD N - N_RUNS MIN P10 MEDIAN P90 P99 MAX
 *
 * Usage: cloexec [RUNS [RUNS_AT_1M]]   (11 and 5). Needs root to raise
 * fs.nr_open.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <err.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>
#include "bench.h"

#define FIRST_FD 3
#define MAX_N 1000000

enum { CLOSE_RANGE, FCNTL_LOOP, PROC_SCAN, NR_METHODS };

static const char * const method_name[NR_METHODS] = {
	"close_range", "fcntl", "proc_scan",
};

static const int sizes[] = { 100, 10000, 100000, MAX_N };

static void cloexec_close_range(int last)
{
	if (syscall(__NR_close_range, FIRST_FD, ~0U, CLOSE_RANGE_CLOEXEC))
		err(1, "close_range(CLOSE_RANGE_CLOEXEC)");
}

static void cloexec_fcntl(int last)
{
	int fd;

	for (fd = FIRST_FD; fd <= last; fd++)
		if (fcntl(fd, F_SETFD, FD_CLOEXEC))
			err(1, "F_SETFD %d", fd);
}

static void cloexec_proc_scan(int last)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	char *end;
	long fd;
	int fl;

	if (!dir)
		err(1, "/proc/self/fd");
	while ((de = readdir(dir))) {
		fd = strtol(de->d_name, &end, 10);
		if (end == de->d_name || *end || fd < FIRST_FD ||
		    fd == dirfd(dir))
			continue;
		fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && !(fl & FD_CLOEXEC) &&
		    fcntl(fd, F_SETFD, fl | FD_CLOEXEC))
			err(1, "F_SETFD %ld", fd);
	}
	closedir(dir);
}

static void (*const method_fn[NR_METHODS])(int last) = {
	cloexec_close_range, cloexec_fcntl, cloexec_proc_scan,
};

static int has_cloexec(int fd)
{
	return fcntl(fd, F_GETFD) & FD_CLOEXEC;
}

/* Time @method over descriptors FIRST_FD..@last in a new child, in ns. */
static long long time_in_child(int method, int last)
{
	long long t;
	int pfd[2], st;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		err(1, "pipe2");
	pid = fork();
	if (pid < 0)
		err(1, "fork");
	if (!pid) {
		close(pfd[0]);
		t = now_ns();
		method_fn[method](last);
		t = now_ns() - t;
		if (!has_cloexec(FIRST_FD) || !has_cloexec(last) ||
		    !has_cloexec((FIRST_FD + last) / 2))
			errx(1, "%s left a descriptor without FD_CLOEXEC",
			     method_name[method]);
		if (write(pfd[1], &t, sizeof(t)) != sizeof(t))
			err(1, "write");
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &t, sizeof(t)) != sizeof(t))
		t = -1;
	close(pfd[0]);
	if (waitpid(pid, &st, 0) != pid || st || t < 0)
		errx(1, "%s: the child failed", method_name[method]);
	return t;
}

/* Let this process hold @n descriptors: fs.nr_open first, then the rlimit. */
static void raise_nofile(long n)
{
	struct rlimit rl = { .rlim_cur = n, .rlim_max = n };
	long cur = 0;
	FILE *f;

	f = fopen("/proc/sys/fs/nr_open", "r+");
	if (!f || fscanf(f, "%ld", &cur) != 1)
		err(1, "/proc/sys/fs/nr_open");
	if (cur < n) {
		rewind(f);
		fprintf(f, "%ld\n", n);
	}
	if (fclose(f))
		err(1, "writing /proc/sys/fs/nr_open");
	if (setrlimit(RLIMIT_NOFILE, &rl))
		err(1, "setrlimit(RLIMIT_NOFILE, %ld)", n);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 11;
	int runs_big = argc > 2 ? atoi(argv[2]) : 5;
	int open_last = FIRST_FD, last, fd, i, m, n, s;
	long long *v[NR_METHODS];
	char nstr[32];

	raise_nofile(1100000);
	/* Nothing inherited above stderr: descriptor 3 is the /dev/null. */
	syscall(__NR_close_range, FIRST_FD, ~0U, 0);
	if (open("/dev/null", O_RDONLY) != FIRST_FD)
		err(1, "/dev/null as descriptor %d", FIRST_FD);

	for (s = 0; s < (int)ARRAY_SIZE(sizes); s++) {
		last = FIRST_FD + sizes[s] - 1;
		for (fd = open_last + 1; fd <= last; fd++)
			if (dup2(FIRST_FD, fd) != fd)
				err(1, "dup2 to %d", fd);
		open_last = last;

		n = sizes[s] >= MAX_N ? runs_big : runs;
		for (m = 0; m < NR_METHODS; m++) {
			v[m] = calloc(n, sizeof(long long));
			if (!v[m])
				err(1, "calloc");
		}
		for (i = 0; i < n; i++)
			for (m = 0; m < NR_METHODS; m++)
				v[m][i] = time_in_child(m, last);
		snprintf(nstr, sizeof(nstr), "%d", sizes[s]);
		for (m = 0; m < NR_METHODS; m++) {
			summary("cloexec", method_name[m], nstr, "-", v[m], n);
			free(v[m]);
		}
	}
	return 0;
}
