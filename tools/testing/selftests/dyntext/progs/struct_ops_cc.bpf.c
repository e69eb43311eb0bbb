// SPDX-License-Identifier: GPL-2.0
/*
 * A struct_ops map whose update makes the kernel generate a trampoline per
 * member (a TCP congestion control with the three members it needs).  Only
 * the members used are declared: libbpf matches them by name in the
 * kernel's BTF.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

struct sock;

struct tcp_congestion_ops {
	__u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, __u32 ack, __u32 acked);
	__u32 (*undo_cwnd)(struct sock *sk);
	char name[16];
};

SEC("struct_ops/dyntext_ssthresh")
__u32 dyntext_ssthresh(unsigned long long *ctx)
{
	return 2;
}

SEC("struct_ops/dyntext_cong_avoid")
void dyntext_cong_avoid(unsigned long long *ctx)
{
}

SEC("struct_ops/dyntext_undo_cwnd")
__u32 dyntext_undo_cwnd(unsigned long long *ctx)
{
	return 2;
}

SEC(".struct_ops")
struct tcp_congestion_ops dyntext_cc = {
	.ssthresh	= (void *)dyntext_ssthresh,
	.cong_avoid	= (void *)dyntext_cong_avoid,
	.undo_cwnd	= (void *)dyntext_undo_cwnd,
	.name		= "dyntext_faults",
};

char LICENSE[] SEC("license") = "GPL";
