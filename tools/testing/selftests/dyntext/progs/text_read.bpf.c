// SPDX-License-Identifier: GPL-2.0
/*
 * Reads kernel text the way /proc/kcore does (copy_from_kernel_nofault()),
 * for kernels built without /proc/kcore: the test sets read_addr and
 * read_len and runs the program with BPF_PROG_TEST_RUN.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define TEXT_READ_MAX 4096

__u64 read_addr;
__u32 read_len;
long read_err;
__u8 read_buf[TEXT_READ_MAX];

SEC("syscall")
int text_read(void *ctx)
{
	__u32 n = read_len;

	if (n > TEXT_READ_MAX)
		n = TEXT_READ_MAX;
	read_err = bpf_probe_read_kernel(read_buf, n, (void *)read_addr);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
