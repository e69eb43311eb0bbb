// SPDX-License-Identifier: GPL-2.0
/*
 * demo_load SECONDS: the BPF part of `make run`.  Loads the ksym_abi
 * program (two subprograms) and an fentry program on vfs_read (a BPF
 * trampoline), then for SECONDS alternates BPF_PROG_TEST_RUN of the first
 * with one-byte reads of /dev/zero and writes to /dev/null, which go
 * through the trampoline and whatever else traces vfs_read and vfs_write
 * (an ftrace instance, a kprobe).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ksym_abi.skel.h"
#include "demo.skel.h"

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	unsigned char pkt[64] = { [12] = 0x08 };
	unsigned long runs = 0, reads = 0;
	struct ksym_abi *prog = NULL;
	struct demo *tramp = NULL;
	struct timespec t0;
	int ret = 1, zero, null, i;
	char c;

	zero = open("/dev/zero", O_RDONLY);
	null = open("/dev/null", O_WRONLY);
	prog = ksym_abi__open_and_load();
	tramp = demo__open_and_load();
	if (zero < 0 || null < 0 || !prog || !tramp || demo__attach(tramp)) {
		fprintf(stderr, "demo_load: cannot set up the BPF programs\n");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (since(&t0) < secs) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
			    .data_size_in = sizeof(pkt), .repeat = 2000);

		if (bpf_prog_test_run_opts(bpf_program__fd(prog->progs.ksym_abi_main),
					   &opts)) {
			perror("demo_load: BPF_PROG_TEST_RUN");
			goto out;
		}
		runs += opts.repeat;
		for (i = 0; i < 200; i++) {
			reads += read(zero, &c, 1) == 1;
			if (write(null, &c, 1) != 1)
				goto out;
		}
	}
	printf("demo_load: %lu runs of ksym_abi_main, %lu reads and writes",
	       runs, reads);
	printf(" (%llu reads seen by fentry)\n",
	       (unsigned long long)tramp->bss->reads);
	ret = 0;
out:
	demo__destroy(tramp);
	ksym_abi__destroy(prog);
	if (zero >= 0)
		close(zero);
	if (null >= 0)
		close(null);
	return ret;
}
