// SPDX-License-Identifier: GPL-2.0
/*
 * An iter/ksym program written against stock 6.1's struct kallsym_iter (the
 * fields the upstream selftest bpf_iter_ksym reads): CO-RE relocates each
 * field by name, so the program loads only if every one of them is still
 * there (pos_arch_end only where it exists: Linux 6.2 removed it with the
 * arch section).  One line per symbol: address, type, name, [module], and
 * the section of /proc/kallsyms the iterator's positions put it in.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char _license[] SEC("license") = "GPL";

#define KSYM_NAME_LEN		512
#define MODULE_NAME_LEN		(64 - sizeof(unsigned long))

struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
} __attribute__((preserve_access_index));

struct kallsym_iter {
	long long pos;
	long long pos_arch_end;
	long long pos_mod_end;
	long long pos_ftrace_mod_end;
	long long pos_bpf_end;
	unsigned long value;
	char type;
	char name[KSYM_NAME_LEN];
	char module_name[MODULE_NAME_LEN];
	int exported;
	int show_value;
} __attribute__((preserve_access_index));

struct bpf_iter__ksym {
	struct bpf_iter_meta *meta;
	struct kallsym_iter *ksym;
} __attribute__((preserve_access_index));

SEC("iter/ksym")
int ksym_iter_dump(struct bpf_iter__ksym *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct kallsym_iter *iter = ctx->ksym;
	unsigned long value;

	if (!iter)
		return 0;
	value = iter->show_value ? iter->value : 0;
	BPF_SEQ_PRINTF(seq, "%lx %c %s [%s] ", value, iter->type, iter->name,
		       iter->module_name);
	if (bpf_core_field_exists(iter->pos_arch_end) ?
	    !iter->pos_arch_end || iter->pos_arch_end > iter->pos :
	    !iter->module_name[0])
		BPF_SEQ_PRINTF(seq, "CORE\n");
	else if (!iter->pos_mod_end || iter->pos_mod_end > iter->pos)
		BPF_SEQ_PRINTF(seq, "MOD\n");
	else if (!iter->pos_ftrace_mod_end ||
		 iter->pos_ftrace_mod_end > iter->pos)
		BPF_SEQ_PRINTF(seq, "FTRACE_MOD\n");
	else if (!iter->pos_bpf_end || iter->pos_bpf_end > iter->pos)
		BPF_SEQ_PRINTF(seq, "BPF\n");
	else
		BPF_SEQ_PRINTF(seq, "KPROBE\n");
	return 0;
}
