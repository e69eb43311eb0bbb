/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run a loaded BPF program for a while: BPF_PROG_TEST_RUN of a socket
 * filter program on a small packet (an IPv4 Ethernet frame), so that perf
 * samples land in it, or a trampoline or probe on the way sees it.
 */
#ifndef DYNTEXT_BPF_RUN_H
#define DYNTEXT_BPF_RUN_H

#include <linux/types.h>

struct bpf_run {
	double secs;		/* run until then; at least one call */
	__u32 repeat;		/* runs per BPF_PROG_TEST_RUN call */
	/* After every call, if set: a non-zero return stops with it. */
	int (*between)(void *arg);
	void *arg;
	/* Out: runs done, and seconds taken (as of the last check). */
	unsigned long runs;
	double elapsed;
};

/*
 * Run the program fd, r->repeat times per call, until r->secs seconds have
 * passed (one call if r->secs <= 0).  Returns 0, -errno of the call that
 * failed, or what r->between() returned.
 */
int bpf_run(int fd, struct bpf_run *r);

/* bpf_run() for secs seconds, 10,000 runs per call, nothing between. */
int bpf_run_for(int fd, double secs);

#endif
