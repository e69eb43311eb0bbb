// SPDX-License-Identifier: GPL-2.0
/* For the demo: an fentry program on vfs_read (a BPF trampoline) that counts. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

__u64 reads;

SEC("fentry/vfs_read")
int demo_fentry_vfs_read(void *ctx)
{
	__sync_fetch_and_add(&reads, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
