// SPDX-License-Identifier: GPL-2.0
/*
 * kallsyms_dump: create run-time text of every kind, then print all of
 * /proc/kallsyms, in order, for a comparison between kernels (make check
 * compares the patched kernel's output with stock 6.1's: scripts/report).
 *
 * The workload: a BPF program with two subprograms, an fentry program (a
 * BPF trampoline), an XDP program on lo (the XDP dispatcher), a function
 * tracer in a tracefs instance (an ftrace trampoline), a kprobe past a
 * function's ftrace call site (a kprobe instruction page) and the test
 * module.  Two parts of a line differ between boots and kernels by design
 * and are printed symbolically: the address ("<addr>", or "<zero>" when
 * /proc/kallsyms hides it) and the BTF type id in a BPF trampoline's name
 * (it depends on vmlinux's BTF).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/libbpf.h>

#include "records.h"
#include "ksym_abi.skel.h"
#include "bpf_images.skel.h"

#define INSTANCE TRACING "/instances/kallsyms_dump"
#define PROBE "p:dyntext/kallsyms_dump " KPROBE_OOL_SITE "\n"
#define MOD "dyntext_test"

static char tramp[128];

static int print_line(const struct ksym_line *l, void *arg)
{
	const char *name = l->name;

	if (!strcmp(l->mod, "bpf") && !strcmp(name, tramp))
		name = "bpf_trampoline_<bpf_fentry_test1>";
	printf("<%s> %c %s%s%s%s\n", l->addr ? "addr" : "zero", l->type, name,
	       l->mod[0] ? "\t[" : "", l->mod, l->mod[0] ? "]" : "");
	return 0;
}

static int step(const char *what, int err)
{
	if (err)
		fprintf(stderr, "kallsyms_dump: %s failed\n", what);
	return err;
}

int main(void)
{
	struct ksym_abi *abi = ksym_abi__open_and_load();
	struct bpf_images *img = bpf_images__open_and_load();
	int ifindex = if_nametoindex("lo"), err;
	struct bpf_link *link = NULL;

	if (step("BPF load", !abi || !img || !ifindex))
		return 1;
	link = bpf_program__attach(img->progs.images_fentry);
	err = step("fentry attach", !link) ||
	      step("XDP attach",
		   bpf_xdp_attach(ifindex, bpf_program__fd(img->progs.images_xdp),
				  XDP_FLAGS_SKB_MODE, NULL)) ||
	      step("trampoline name", bpf_trampoline_name("bpf_fentry_test1",
							  tramp, sizeof(tramp))) ||
	      step("tracefs instance", mkdir(INSTANCE, 0755)) ||
	      step("ftrace filter", write_str(INSTANCE "/set_ftrace_filter",
					      "vfs_read", O_TRUNC)) ||
	      step("function tracer", write_str(INSTANCE "/current_tracer",
						"function", O_TRUNC)) ||
	      step("kprobe event", write_str(TRACING "/kprobe_events", PROBE,
					     O_APPEND)) ||
	      step("kprobe enable",
		   write_str(TRACING "/events/dyntext/kallsyms_dump/enable",
			     "1", O_TRUNC)) ||
	      step("module load", test_module_load(MOD, "")) ||
	      step("/proc/kallsyms", kallsyms_for_each(print_line, NULL));

	test_module_unload(MOD);
	write_str(TRACING "/events/dyntext/kallsyms_dump/enable", "0", O_TRUNC);
	write_str(TRACING "/kprobe_events", "-:dyntext/kallsyms_dump\n",
		  O_APPEND);
	write_str(INSTANCE "/current_tracer", "nop", O_TRUNC);
	rmdir(INSTANCE);
	bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, NULL);
	bpf_link__destroy(link);
	bpf_images__destroy(img);
	ksym_abi__destroy(abi);
	return err ? 1 : 0;
}
