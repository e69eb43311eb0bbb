/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run perf record -a, perf report and perf script from a test, with the
 * perf built from the patched tree or any other perf binary.
 */
#ifndef DYNTEXT_PERF_RUN_H
#define DYNTEXT_PERF_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct perf_run {
	char perf[PATH_MAX];
	char dir[64];
	char data[128];
	pid_t pid;
	const char *event;	/* perf record -e: NULL for cpu-clock */
	int verbose;		/* perf record -v, its stderr in dir/stderr */
	bool pipe;		/* perf record -o - > data, perf report -i - < data */
};

/*
 * The perf to test: $PERF, else the tree's tools/perf/perf when this binary
 * was built in the tree (tools/testing/selftests/dyntext/), else perf in
 * $PATH.
 */
int find_perf(char *buf, size_t len);

/*
 * Start `r->perf record -a` (and the option opt, if not NULL) with its
 * events disabled and enable them through its control FIFO; return once
 * perf acknowledged, i.e. once it records.
 */
int perf_record_start(struct perf_run *r, const char *opt);
/* The lines of perf record's stderr (verbose) that contain s. */
int perf_record_log_count(struct perf_run *r, const char *s);
/* SIGINT and wait: 0 if perf record wrote its file. */
int perf_record_stop(struct perf_run *r);
/* Kill a perf record still running and remove its directory. */
void perf_run_cleanup(struct perf_run *r);

/*
 * A HOME of the test's own (perf's ~/.debug build-id cache): a new
 * directory in /tmp, set as $HOME, its path in dir; so that no test finds
 * what an earlier one cached.
 */
int perf_home_new(char *dir, size_t len);
/* rm -rf dir (nothing if dir is empty). */
void perf_dir_remove(const char *dir);

/* The shell words that give the recorded data to perf report or script. */
const char *perf_input(struct perf_run *r, char *buf, size_t len);
/* Run perf with args on the recorded data; its stdout goes to a FILE. */
FILE *perf_output(struct perf_run *r, const char *args);

struct samples {
	unsigned long long named;	/* in [lo, hi) and named as expected */
	unsigned long long other;	/* in [lo, hi) but named otherwise */
	char first_other[300];		/* "ip sym (dso)" of the first other */
};

/*
 * Count the samples `perf script -F ip,sym,dso` shows in [lo, hi): those
 * with symbol sym in dso (any dso if NULL), and the others.
 */
int count_samples(struct perf_run *r, unsigned long long lo,
		  unsigned long long hi, const char *sym, const char *dso,
		  struct samples *c);

/*
 * The same, where named as expected is named sym at the sample's offset
 * from sym_addr, sym's address (perf script -F symoff): a map that starts
 * at the wrong offset in its file may still give the function's name to
 * the samples in it, at another offset.
 */
int count_samples_at(struct perf_run *r, unsigned long long lo,
		     unsigned long long hi, const char *sym,
		     unsigned long long sym_addr, const char *dso,
		     struct samples *c);

#endif
