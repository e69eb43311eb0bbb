// SPDX-License-Identifier: GPL-2.0
/*
 * A program whose JITed image is larger than the 32 KiB that one record of
 * its code holds (attr.ksymbol_text): about 10 bytes of x86 code a step.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("socket")
int text_big(struct __sk_buff *skb)
{
	__u64 v = skb->len;
	int i;

#pragma clang loop unroll(full)
	for (i = 0; i < 4096; i++) {
		v = v * 7 + i;
		asm volatile("" : "+r"(v));
	}
	return v;
}

char LICENSE[] SEC("license") = "GPL";
