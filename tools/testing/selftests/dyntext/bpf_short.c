// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_short SECONDS: the short-lived BPF programs of perf's shell test
 * annotate_bpf_gone.sh (PERF_TEST_DYNTEXT_BPF_SHORT).  Loads the ksym_abi
 * program, runs it (BPF_PROG_TEST_RUN) for as long as its load took, 8 ms
 * at least, and unloads it, again and again for SECONDS and at least five
 * times, then prints the program's symbol name,
 * bpf_prog_<tag>_ksym_abi_main: the same code, so the same name, every
 * time.  Running as long as the load keeps the program's share of the
 * samples near half whatever the kernel's speed: on a debug kernel
 * (lockdep, KASAN) the verifier takes hundreds of milliseconds, and 8 ms
 * runs got no sample at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_run.h"
#include "ksym_abi.skel.h"

static double secs_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct bpf_prog_info info = {};
	struct timespec t0;
	int i, n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (n = 0; n < 5 || secs_since(&t0) < secs; n++) {
		/* 100 runs a call: a call takes well under 8 ms. */
		struct bpf_run run = { .repeat = 100 };
		struct timespec t1;
		struct ksym_abi *skel;
		__u32 len = sizeof(info);
		int fd, err;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		skel = ksym_abi__open_and_load();
		run.secs = secs_since(&t1);
		if (run.secs < 0.008)
			run.secs = 0.008;

		if (!skel) {
			perror("ksym_abi__open_and_load");
			return 1;
		}
		fd = bpf_program__fd(skel->progs.ksym_abi_main);
		/* No counts from the last time: they ask for arrays. */
		memset(&info, 0, sizeof(info));
		err = bpf_obj_get_info_by_fd(fd, &info, &len) ||
		      bpf_run(fd, &run);
		ksym_abi__destroy(skel);
		if (err) {
			fprintf(stderr, "bpf_short: program %d failed\n", n);
			return 1;
		}
	}
	printf("bpf_prog_");
	for (i = 0; i < BPF_TAG_SIZE; i++)
		printf("%02x", info.tag[i]);
	printf("_ksym_abi_main\n");
	return 0;
}
