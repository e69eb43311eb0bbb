// SPDX-License-Identifier: GPL-2.0
/*
 * An fentry program on the test module's dyntext_test_tick(): its BPF
 * trampoline runs at every call of the module's tick loop.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("fentry/dyntext_test_tick")
int tick_fentry(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
