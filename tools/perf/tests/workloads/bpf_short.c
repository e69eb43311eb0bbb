// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_short [SECONDS]: short-lived BPF programs, for tests of what perf
 * keeps of text that is gone.  Loads a socket filter with a loop, runs it
 * (BPF_PROG_TEST_RUN) for as long as its load took, 8 ms at least, and
 * unloads it, again and again for SECONDS (3 by default) and at least
 * five times, then prints the program's symbol name,
 * bpf_prog_<tag>_perf_bpf_short: the same code, so the same name, every
 * time.  Running as long as the load keeps the program's share of the
 * samples near half whatever the kernel's speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include "../tests.h"

#ifdef HAVE_LIBBPF_SUPPORT
#include <linux/bpf.h>
#include <bpf/bpf.h>

static double bpf_short_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* r0 = 0; r1 = 1000; do { r0 += r1; r1 -= 1; } while (r1); return r0 & 1 */
static const struct bpf_insn bpf_short_insns[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1000 },
	{ .code = BPF_ALU64 | BPF_ADD | BPF_X, .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1 },
	{ .code = BPF_ALU64 | BPF_SUB | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
	{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_1, .off = -3, .imm = 0 },
	{ .code = BPF_ALU64 | BPF_AND | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
	{ .code = BPF_JMP | BPF_EXIT },
};

/* Run the program behind fd for secs, 100 runs a call. */
static int bpf_short_run(int fd, double secs)
{
	unsigned char pkt[64] = {};
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
			    .data_size_in = sizeof(pkt), .repeat = 100);

		if (bpf_prog_test_run_opts(fd, &opts))
			return -1;
	} while (bpf_short_since(&t0) < secs);
	return 0;
}

static int bpf_short(int argc, const char **argv)
{
	double secs = argc > 0 ? atof(argv[0]) : 3;
	struct bpf_prog_info info = {};
	struct timespec t0;
	int i, n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (n = 0; n < 5 || bpf_short_since(&t0) < secs; n++) {
		__u32 len = sizeof(info);
		struct timespec t1;
		double load;
		int fd, err;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "perf_bpf_short",
				   "GPL", bpf_short_insns,
				   ARRAY_SIZE(bpf_short_insns), NULL);
		if (fd < 0) {
			perror("bpf_prog_load");
			return 1;
		}
		load = bpf_short_since(&t1);
		memset(&info, 0, sizeof(info));
		err = bpf_obj_get_info_by_fd(fd, &info, &len) ||
		      bpf_short_run(fd, load < 0.008 ? 0.008 : load);
		close(fd);
		if (err) {
			fprintf(stderr, "%s: program %d failed\n", __func__, n);
			return 1;
		}
	}
	printf("bpf_prog_");
	for (i = 0; i < BPF_TAG_SIZE; i++)
		printf("%02x", info.tag[i]);
	printf("_perf_bpf_short\n");
	return 0;
}
#else
static int bpf_short(int argc __maybe_unused, const char **argv __maybe_unused)
{
	fprintf(stderr, "%s: perf is built without libbpf\n", __func__);
	return 1;
}
#endif

DEFINE_WORKLOAD(bpf_short);
