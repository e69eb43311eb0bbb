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

SEC("socket")
int ksym_abi_main(struct __sk_buff *skb)
{
	return ksym_abi_sub_one(skb) + ksym_abi_sub_two(skb);
}

char LICENSE[] SEC("license") = "GPL";
