// SPDX-License-Identifier: GPL-2.0
/*
 * BPF trampolines and the XDP dispatcher: their PERF_RECORD_KSYMBOL
 * records on attach and detach, and their /proc/kallsyms lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "../kselftest_harness.h"
#include "records.h"
#include "bpf_images.skel.h"
#include "text_read.h"

#define IMAGE_LEN 4096	/* a dispatcher takes one page */

/* The lowest /proc/kallsyms address above *(arg): ULLONG_MAX if none. */
static int next_addr(const struct ksym_line *l, void *arg)
{
	unsigned long long *a = arg;

	if (l->addr > a[0] && l->addr < a[1])
		a[1] = l->addr;
	return 0;
}

/*
 * A trampoline took one page until Linux 6.8; since then x86 packs
 * trampolines back to back into bpf_prog_pack chunks, each of its own
 * size (arch_bpf_trampoline_size()).  The registry announces that size;
 * before, it announced a page, over whatever followed in the pack.
 */
static void check_tramp_len(struct __test_metadata *_metadata, __u64 addr,
			    __u32 len)
{
	unsigned long long a[2] = { addr, ULLONG_MAX };

	if (!kernel_at_least(6, 8)) {
		EXPECT_EQ(IMAGE_LEN, len);
		return;
	}
	EXPECT_GT(len, 0);
	EXPECT_LT(len, IMAGE_LEN);
	/* No other symbol starts inside it. */
	ASSERT_EQ(0, kallsyms_for_each(next_addr, a));
	EXPECT_LE(addr + len, a[1]);
}

static int kallsyms_line(__u64 addr, const char *name)
{
	char line[KSYM_NAME_LEN + 64];

	snprintf(line, sizeof(line), "%016llx t %s\t[bpf]\n",
		 (unsigned long long)addr, name);
	return kallsyms_count_line(line);
}

/* How many [bpf] lines of /proc/kallsyms carry name (any address). */
static int kallsyms_name_count(const char *name)
{
	return kallsyms_sym_count(name, "bpf", 0, NULL, NULL);
}

FIXTURE(images) {
	struct rec_stream s;
	struct bpf_images *skel;
};

FIXTURE_SETUP(images)
{
	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
	self->skel = bpf_images__open_and_load();
	ASSERT_NE(NULL, self->skel);
}

FIXTURE_TEARDOWN(images)
{
	bpf_images__destroy(self->skel);
	rec_stream_close(&self->s);
}

TEST_F(images, trampoline)
{
	char name[KSYM_NAME_LEN];
	const struct rec *reg, *unreg;
	struct bpf_link *link;
	size_t reg_idx;
	__u64 addr;
	__u32 len;

	ASSERT_EQ(0, bpf_trampoline_name("bpf_fentry_test1", name, sizeof(name)));
	ASSERT_EQ(0, kallsyms_name_count(name));

	link = bpf_program__attach(self->skel->progs.images_fentry);
	ASSERT_NE(NULL, link);
	reg = rec_wait_name(&self->s, name, 0);
	if (!reg) {
		size_t i;

		for (i = 0; i < self->s.nr; i++)
			if (self->s.recs[i].type == PERF_RECORD_KSYMBOL)
				TH_LOG("seen: %s", self->s.recs[i].name);
	}
	ASSERT_NE(NULL, reg) TH_LOG("no register record for %s", name);
	addr = reg->addr;
	len = reg->len;
	reg_idx = reg - self->s.recs;
	check_tramp_len(_metadata, addr, len);
	EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_BPF, reg->ksym_type);
	EXPECT_EQ(1, rec_count_ksym(&self->s, addr, 0, name));
	EXPECT_EQ(1, kallsyms_line(addr, name));
	EXPECT_EQ(1, kallsyms_name_count(name));

	bpf_link__destroy(link);
	unreg = rec_wait_name(&self->s, name, PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
	ASSERT_NE(NULL, unreg) TH_LOG("no unregister record for %s", name);
	EXPECT_EQ(addr, unreg->addr);
	EXPECT_EQ(len, unreg->len);
	EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_BPF, unreg->ksym_type);
	EXPECT_EQ(1, rec_count_ksym(&self->s, addr, 0, name));
	EXPECT_EQ(1, rec_count_ksym(&self->s, addr,
				    PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER, name));
	EXPECT_GT((size_t)(unreg - self->s.recs), reg_idx);
	EXPECT_EQ(0, kallsyms_name_count(name));
	EXPECT_EQ(0, self->s.lost);
}

/*
 * The end of a trampoline's image is never written: x86 sizes it as its
 * code plus BPF_INSN_SAFETY (64) bytes and copies all of it from a
 * scratch buffer into the executable image, which must therefore hold
 * int3 there, as the rest of a bpf_prog_pack chunk does, not what the
 * allocator left in the buffer.  Needs the record's length to be the
 * image's (images.trampoline).
 */
#define INSN_SAFETY 64
TEST_F(images, trampoline_tail_int3)
{
	char name[KSYM_NAME_LEN];
	__u8 tail[INSN_SAFETY];
	const struct rec *reg;
	struct bpf_link *link;
	struct text_read *rd;
	int i, other = 0;

#ifndef __x86_64__
	SKIP(return, "x86-64's trampoline layout");
#endif
	if (!kernel_at_least(6, 8))
		SKIP(return, "a trampoline takes a page before 6.8");
	ASSERT_EQ(0, bpf_trampoline_name("bpf_fentry_test1", name, sizeof(name)));
	rd = text_read__open_and_load();
	ASSERT_NE(NULL, rd);
	link = bpf_program__attach(self->skel->progs.images_fentry);
	ASSERT_NE(NULL, link);
	reg = rec_wait_name(&self->s, name, 0);
	ASSERT_NE(NULL, reg) TH_LOG("no register record for %s", name);
	ASSERT_LT(reg->len, IMAGE_LEN) TH_LOG("the record is not the image's size");
	ASSERT_LE(INSN_SAFETY, reg->len);
	ASSERT_EQ(0, kernel_read(rd, reg->addr + reg->len - INSN_SAFETY, tail,
				 INSN_SAFETY));
	bpf_link__destroy(link);
	text_read__destroy(rd);
	for (i = 0; i < INSN_SAFETY; i++)
		if (tail[i] != 0xcc && !other++)
			TH_LOG("byte %d of the last %d: %#x", i, INSN_SAFETY,
			       tail[i]);
	EXPECT_EQ(0, other);
}

TEST_F(images, dispatcher)
{
	const char *name = "bpf_dispatcher_xdp";
	int ifindex = if_nametoindex("lo");
	int prog = bpf_program__fd(self->skel->progs.images_xdp);
	const struct rec *reg;
	int before;

	ASSERT_NE(0, ifindex);
	before = kallsyms_name_count(name);
	ASSERT_GE(before, 0);
	ASSERT_LE(before, 1);
	ASSERT_EQ(0, bpf_xdp_attach(ifindex, prog, XDP_FLAGS_SKB_MODE, NULL));
	ASSERT_EQ(0, bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, NULL));
	/* The dispatcher's image is made on first use and kept for good. */
	EXPECT_EQ(1, kallsyms_name_count(name));
	if (before) {
		/* Made by an earlier test: not announced again, not gone. */
		ASSERT_EQ(0, rec_stream_drain(&self->s));
		EXPECT_EQ(NULL, rec_find_name(&self->s, name, 0));
		EXPECT_EQ(NULL, rec_find_name(&self->s, name,
					      PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER));
		return;
	}
	reg = rec_wait_name(&self->s, name, 0);
	ASSERT_NE(NULL, reg);
	EXPECT_EQ(IMAGE_LEN, reg->len);
	EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_BPF, reg->ksym_type);
	EXPECT_EQ(1, kallsyms_line(reg->addr, name));
	EXPECT_TRUE(!rec_find_name(&self->s, name,
				   PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER));
}

TEST_HARNESS_MAIN
