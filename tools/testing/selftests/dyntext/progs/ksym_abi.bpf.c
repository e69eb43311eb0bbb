// SPDX-License-Identifier: GPL-2.0
/* A socket filter with two subprograms: three JITed images, three ksymbols. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

__noinline int ksym_abi_sub_one(struct __sk_buff *skb)
{
	return skb->len * 3 + 1;
}

__noinline int ksym_abi_sub_two(struct __sk_buff *skb)
{
	return skb->protocol ^ 0x5a;
}

/*
 * The loop makes a run spend its time in the program rather than in the
 * test-run loop around it (local_bh_disable()/enable() per run since
 * 6.11, expensive under lockdep), so that the perf tests find samples in
 * the main program on a debug kernel too.
 */
SEC("socket")
int ksym_abi_main(struct __sk_buff *skb)
{
	int i, v = 0;

#pragma clang loop unroll(disable)
	for (i = 0; i < 1000; i++) {
		v = v * 3 + 1;
		asm volatile("" : "+r"(v));
	}
	return v + ksym_abi_sub_one(skb) + ksym_abi_sub_two(skb);
}

char LICENSE[] SEC("license") = "GPL";
