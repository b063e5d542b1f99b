// SPDX-License-Identifier: GPL-2.0
/*
 * timeout: how long a wait with a short timeout really lasts, when nothing
 * becomes ready, for four ways an event loop can wait:
 *
 *   epoll_pwait2   epoll_pwait2() with a nanosecond timespec (one syscall)
 *   ppoll          ppoll() on a never-ready fd: the same timer path
 *   epoll_wait_ms  epoll_wait() with the timeout rounded up to whole
 *                  milliseconds, so that it never returns early
 *   timerfd        a one-shot relative timerfd in the epoll set, then
 *                  epoll_wait(-1); the timerfd is read (outside the timed
 *                  part) to clear it: three syscalls per wait
 *
 * at the default timer slack and at PR_SET_TIMERSLACK 1. Methods take turns
 * wait by wait, so that all see the same conditions. For each method and
 * requested timeout it prints the overshoot (actual - requested, ns; see
 * bench.h for the line format):
 *
 *   timeout SLACK METHOD REQUESTED_NS N MIN P10 MEDIAN P90 P99 MAX
 *
 * Usage: timeout [SCALE]   SCALE multiplies the number of waits (1.0).
 */
#define _GNU_SOURCE
#include <err.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <linux/time_types.h>
#include "bench.h"

#define NSEC_PER_SEC 1000000000LL
#define NSEC_PER_MSEC 1000000LL

enum { PWAIT2, PPOLL, EPOLL_MS, TIMERFD, NR_METHODS };

static const char * const method_name[NR_METHODS] = {
	"epoll_pwait2", "ppoll", "epoll_wait_ms", "timerfd",
};
static const int method_syscalls[NR_METHODS] = { 1, 1, 1, 3 };

static const long long requested_ns[] = {
	10000, 20000, 50000, 100000, 200000, 500000,
	1000000, 2000000, 5000000, 10000000,
};

struct waiter {
	int idle;	/* an eventfd that never becomes readable */
	int ep;		/* epoll set with only @idle */
	int tfd;	/* the timerfd of the workaround */
	int tep;	/* epoll set with @idle and @tfd */
};

static void waiter_init(struct waiter *w)
{
	struct epoll_event ev = { .events = EPOLLIN };

	w->idle = eventfd(0, EFD_CLOEXEC);
	w->ep = epoll_create1(EPOLL_CLOEXEC);
	w->tep = epoll_create1(EPOLL_CLOEXEC);
	w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (w->idle < 0 || w->ep < 0 || w->tep < 0 || w->tfd < 0)
		err(1, "eventfd/epoll_create1/timerfd_create");
	ev.data.fd = w->idle;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->idle, &ev) ||
	    epoll_ctl(w->tep, EPOLL_CTL_ADD, w->idle, &ev))
		err(1, "epoll_ctl");
	ev.data.fd = w->tfd;
	if (epoll_ctl(w->tep, EPOLL_CTL_ADD, w->tfd, &ev))
		err(1, "epoll_ctl");
}

/* One wait of @req ns by @method; returns its overshoot in ns. */
static long long wait_once(const struct waiter *w, int method, long long req)
{
	struct __kernel_timespec kts = {
		.tv_sec = req / NSEC_PER_SEC, .tv_nsec = req % NSEC_PER_SEC,
	};
	struct timespec ts = { .tv_sec = kts.tv_sec, .tv_nsec = kts.tv_nsec };
	struct itimerspec its = { .it_value = ts };
	struct pollfd pfd = { .fd = w->idle, .events = POLLIN };
	struct epoll_event ev;
	long long t0, t1;
	uint64_t ticks;
	long ret;

	t0 = now_ns();
	switch (method) {
	case PWAIT2:
		ret = syscall(__NR_epoll_pwait2, w->ep, &ev, 1, &kts, NULL, 8);
		break;
	case PPOLL:
		ret = ppoll(&pfd, 1, &ts, NULL);
		break;
	case EPOLL_MS:
		ret = epoll_wait(w->ep, &ev, 1,
				 (req + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
		break;
	default:
		if (timerfd_settime(w->tfd, 0, &its, NULL))
			err(1, "timerfd_settime");
		ret = epoll_wait(w->tep, &ev, 1, -1);
		if (ret == 1 && ev.data.fd == w->tfd)
			ret = 0;
		break;
	}
	t1 = now_ns();
	if (ret != 0)
		err(1, "%s returned %ld", method_name[method], ret);
	if (method == TIMERFD && read(w->tfd, &ticks, sizeof(ticks)) < 0)
		err(1, "read timerfd");
	return t1 - t0 - req;
}

/* How many waits for a timeout: 500, and about one second at most. */
static int waits_for(long long req, double scale)
{
	long long n = NSEC_PER_SEC / req;
	int reps;

	if (n > 500)
		n = 500;
	reps = n * scale;
	return reps < 10 ? 10 : reps;
}

static void measure(const struct waiter *w, const char *slack, double scale)
{
	long long *v[NR_METHODS];
	unsigned int t;
	int i, m, n;
	char req[32];

	for (t = 0; t < ARRAY_SIZE(requested_ns); t++) {
		n = waits_for(requested_ns[t], scale);
		for (m = 0; m < NR_METHODS; m++) {
			v[m] = calloc(n, sizeof(long long));
			if (!v[m])
				err(1, "calloc");
		}
		/* Warm up: the first waits after a change are slower. */
		for (i = 0; i < 5; i++)
			for (m = 0; m < NR_METHODS; m++)
				wait_once(w, m, requested_ns[t]);
		for (i = 0; i < n; i++)
			for (m = 0; m < NR_METHODS; m++)
				v[m][i] = wait_once(w, m, requested_ns[t]);
		snprintf(req, sizeof(req), "%lld", requested_ns[t]);
		for (m = 0; m < NR_METHODS; m++) {
			summary("timeout", slack, method_name[m], req, v[m], n);
			free(v[m]);
		}
	}
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	struct waiter w;
	int m;

	waiter_init(&w);
	for (m = 0; m < NR_METHODS; m++)
		info("syscalls\t%s\t%d", method_name[m], method_syscalls[m]);

	/* 0 restores the default slack (normally 50 us). */
	if (prctl(PR_SET_TIMERSLACK, 0))
		err(1, "PR_SET_TIMERSLACK");
	info("timerslack\tdefault\t%d", prctl(PR_GET_TIMERSLACK));
	measure(&w, "default", scale);

	if (prctl(PR_SET_TIMERSLACK, 1))
		err(1, "PR_SET_TIMERSLACK");
	info("timerslack\t1ns\t%d", prctl(PR_GET_TIMERSLACK));
	measure(&w, "1ns", scale);
	return 0;
}
