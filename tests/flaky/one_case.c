// SPDX-License-Identifier: GPL-2.0
/*
 * one_case: a kselftest_harness program reduced to one of its cases, so that
 * scripts/flaky-rate can run that case alone many times (5.10's harness has
 * no option to select a case). Build with -DTEST_SOURCE='"path/to/test.c"';
 * run as "one_case FIXTURE.CASE", e.g. "one_case global.epoll58". A case
 * of a fixture with variants runs once for each variant.
 */
#include "kselftest_harness.h"

/* The program's own main() would run every case. */
#undef TEST_HARNESS_MAIN
#define TEST_HARNESS_MAIN
#include TEST_SOURCE

int main(int argc, char **argv)
{
	struct __fixture_metadata *f, *keep_f = NULL;
	struct __test_metadata *t, *keep_t = NULL;
	const char *dot;

	dot = argc == 2 ? strchr(argv[1], '.') : NULL;
	if (!dot) {
		fprintf(stderr, "usage: %s FIXTURE.CASE\n", argv[0]);
		return 2;
	}
	for (f = __fixture_list; f; f = f->next) {
		if (strncmp(f->name, argv[1], dot - argv[1]) ||
		    f->name[dot - argv[1]])
			continue;
		for (t = f->tests; t; t = t->next)
			if (!strcmp(t->name, dot + 1)) {
				keep_f = f;
				keep_t = t;
			}
	}
	if (!keep_t) {
		fprintf(stderr, "%s: no case %s\n",
			argv[0], argv[1]);
		return 2;
	}
	keep_t->next = NULL;
	keep_t->prev = keep_t;
	keep_f->tests = keep_t;
	keep_f->next = NULL;
	keep_f->prev = keep_f;
	__fixture_list = keep_f;
	return test_harness_run(argc, argv);
}
