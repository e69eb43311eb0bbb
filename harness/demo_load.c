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
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_run.h"
#include "ksym_abi.skel.h"
#include "demo.skel.h"

struct io {
	int zero, null;
	unsigned long reads;
};

/* Between two test runs: 200 one-byte reads and writes; 1 if one failed. */
static int read_write(void *arg)
{
	struct io *io = arg;
	int i;
	char c;

	for (i = 0; i < 200; i++) {
		io->reads += read(io->zero, &c, 1) == 1;
		if (write(io->null, &c, 1) != 1)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct io io = { };
	struct bpf_run run = {
		.secs = argc > 1 ? atof(argv[1]) : 1.0,
		.repeat = 2000,
		.between = read_write,
		.arg = &io,
	};
	struct ksym_abi *prog = NULL;
	struct demo *tramp = NULL;
	int ret = 1, err;

	io.zero = open("/dev/zero", O_RDONLY);
	io.null = open("/dev/null", O_WRONLY);
	prog = ksym_abi__open_and_load();
	tramp = demo__open_and_load();
	if (io.zero < 0 || io.null < 0 || !prog || !tramp || demo__attach(tramp)) {
		fprintf(stderr, "demo_load: cannot set up the BPF programs\n");
		goto out;
	}
	err = bpf_run(bpf_program__fd(prog->progs.ksym_abi_main), &run);
	if (err < 0)
		fprintf(stderr, "demo_load: BPF_PROG_TEST_RUN: %s\n",
			strerror(-err));
	if (err)
		goto out;
	printf("demo_load: %lu runs of ksym_abi_main, %lu reads and writes",
	       run.runs, io.reads);
	printf(" (%llu reads seen by fentry)\n",
	       (unsigned long long)tramp->bss->reads);
	ret = 0;
out:
	demo__destroy(tramp);
	ksym_abi__destroy(prog);
	if (io.zero >= 0)
		close(io.zero);
	if (io.null >= 0)
		close(io.null);
	return ret;
}
