// SPDX-License-Identifier: GPL-2.0
/*
 * A socket filter of 32 functions whose names (bpf_prog_<tag>_group_main,
 * bpf_prog_<tag>_group_sNN) make each ksymbol record without a sample_id
 * 64 bytes: the program's replay group is exactly 2,048 bytes, half of a
 * one-page ring buffer.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define SUB(n)								\
	__noinline int group_s##n(int x)				\
	{								\
		return x * 3 + (1##n - 100);				\
	}

SUB(00) SUB(01) SUB(02) SUB(03) SUB(04) SUB(05) SUB(06) SUB(07)
SUB(08) SUB(09) SUB(10) SUB(11) SUB(12) SUB(13) SUB(14) SUB(15)
SUB(16) SUB(17) SUB(18) SUB(19) SUB(20) SUB(21) SUB(22) SUB(23)
SUB(24) SUB(25) SUB(26) SUB(27) SUB(28) SUB(29) SUB(30)

SEC("socket")
int group_main(struct __sk_buff *skb)
{
	int x = skb->len;

	x = group_s00(x); x = group_s01(x); x = group_s02(x); x = group_s03(x);
	x = group_s04(x); x = group_s05(x); x = group_s06(x); x = group_s07(x);
	x = group_s08(x); x = group_s09(x); x = group_s10(x); x = group_s11(x);
	x = group_s12(x); x = group_s13(x); x = group_s14(x); x = group_s15(x);
	x = group_s16(x); x = group_s17(x); x = group_s18(x); x = group_s19(x);
	x = group_s20(x); x = group_s21(x); x = group_s22(x); x = group_s23(x);
	x = group_s24(x); x = group_s25(x); x = group_s26(x); x = group_s27(x);
	x = group_s28(x); x = group_s29(x); x = group_s30(x);
	return x & 1;
}

char LICENSE[] SEC("license") = "GPL";
