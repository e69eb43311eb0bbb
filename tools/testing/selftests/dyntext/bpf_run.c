// SPDX-License-Identifier: GPL-2.0
/* Run a loaded BPF program for a while (bpf_run.h). */
#include <errno.h>
#include <time.h>
#include <bpf/bpf.h>

#include "bpf_run.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int bpf_run(int fd, struct bpf_run *r)
{
	unsigned char pkt[64] = { [12] = 0x08 };	/* ETH_P_IP */
	double t0 = now_s();
	int ret;

	r->runs = 0;
	do {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
			    .data_size_in = sizeof(pkt), .repeat = r->repeat);

		if (bpf_prog_test_run_opts(fd, &opts))
			return -errno;
		r->runs += r->repeat;
		if (r->between) {
			ret = r->between(r->arg);
			if (ret)
				return ret;
		}
		r->elapsed = now_s() - t0;
	} while (r->elapsed < r->secs);
	return 0;
}

int bpf_run_for(int fd, double secs)
{
	struct bpf_run r = { .secs = secs, .repeat = 10000 };

	return bpf_run(fd, &r);
}
