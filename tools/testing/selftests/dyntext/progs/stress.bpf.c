// SPDX-License-Identifier: GPL-2.0
/*
 * For the stress test: an fentry program (a BPF trampoline) on a function
 * only the worker that attaches it calls, so that no other CPU runs the
 * call site while it is patched.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

__u64 calls;

SEC("fentry/__x64_sys_getpgid")
int stress_fentry_getpgid(void *ctx)
{
	__sync_fetch_and_add(&calls, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
