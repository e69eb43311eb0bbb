// SPDX-License-Identifier: GPL-2.0
/*
 * Programs whose attachment makes the kernel generate BPF images: an fentry
 * program (a BPF trampoline) and an XDP program (the XDP dispatcher).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("fentry/bpf_fentry_test1")
int images_fentry(void *ctx)
{
	return 0;
}

SEC("xdp")
int images_xdp(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
