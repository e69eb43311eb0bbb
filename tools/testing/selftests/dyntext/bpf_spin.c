// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_spin SECONDS: load the ksym_abi program and keep a CPU inside it
 * (BPF_PROG_TEST_RUN in a loop) for SECONDS, so that a profiler sees it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ksym_abi.skel.h"

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	unsigned char pkt[64] = { [12] = 0x08 };
	struct timespec t0, t;
	struct ksym_abi *skel;
	unsigned long runs = 0;
	int fd;

	skel = ksym_abi__open_and_load();
	if (!skel) {
		fprintf(stderr, "bpf_spin: cannot load the BPF program\n");
		return 1;
	}
	fd = bpf_program__fd(skel->progs.ksym_abi_main);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			    .data_in = pkt,
			    .data_size_in = sizeof(pkt),
			    .repeat = 10000);

		if (bpf_prog_test_run_opts(fd, &opts)) {
			perror("bpf_spin: BPF_PROG_TEST_RUN");
			ksym_abi__destroy(skel);
			return 1;
		}
		runs += opts.repeat;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("bpf_spin: ran ksym_abi_main %lu times in %.1f s\n", runs, secs);
	ksym_abi__destroy(skel);
	return 0;
}
