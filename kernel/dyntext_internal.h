/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dynamic text registry: what kernel/dyntext.c shares with its KUnit
 * tests (kernel/dyntext_test.c) and with nothing else.  The data and
 * functions are static unless CONFIG_KUNIT is set (VISIBLE_IF_KUNIT).
 */
#ifndef _KERNEL_DYNTEXT_INTERNAL_H
#define _KERNEL_DYNTEXT_INTERNAL_H

#include <linux/dyntext.h>
#include <linux/rbtree_latch.h>
#include <linux/spinlock_types.h>

/*
 * One latch tree per PERF_RECORD_KSYMBOL type, searched in this order:
 * module text, out-of-line code (ftrace trampolines, kprobe pages), BPF.
 * Each tree keeps bounds [lo, hi) that cover every region it holds, and a
 * lookup skips the trees whose bounds do not contain the address.  So the
 * few long-lived regions are found in a few steps however many BPF
 * programs (often thousands) are loaded, and an address in BPF text costs
 * the range checks of the others and one walk of its own tree.
 *
 * The bounds grow before a region is inserted and shrink after one is
 * erased, so they always cover every registered region; a reader that
 * mixes the bounds of two updates still covers every region registered
 * across both.  Empty: lo = ULONG_MAX, hi = 0.
 *
 * A BPF region also answers for its end address: a BPF image can end with
 * a call, whose return address is then the end (commit 66d9111f3517,
 * "bpf: Detect IP == ksym.end as part of BPF program").  Its tree's hi is
 * one past that.  Regions are [start, end) in the trees, so another region
 * may start at a BPF region's end (struct_ops trampolines are packed back
 * to back, a FineIBT prefix ends where its program starts): the address
 * then belongs to the region that starts there, and to the BPF region that
 * ends there only when nothing starts there.
 */
struct dyntext_tree {
	struct latch_tree_root	root;
	unsigned long		lo;
	unsigned long		hi;
};

enum {
	DYNTEXT_TREE_MODULE,	/* PERF_RECORD_KSYMBOL_TYPE_MODULE */
	DYNTEXT_TREE_OOL,	/* PERF_RECORD_KSYMBOL_TYPE_OOL */
	DYNTEXT_TREE_BPF,	/* PERF_RECORD_KSYMBOL_TYPE_BPF */
	DYNTEXT_NR_TREES
};

#if IS_ENABLED(CONFIG_KUNIT)
/* Writers (add, delete, the walk) take it with bottom halves disabled. */
extern spinlock_t dyntext_lock;
extern struct dyntext_tree dyntext_trees[DYNTEXT_NR_TREES];

/* The tree of @dt's ksymbol type (DYNTEXT_TREE_*), -1 if none. */
int dyntext_tree_of(const struct dyntext *dt);
/* A registered region overlapping [@start, @end), or NULL; lock held. */
struct dyntext *dyntext_overlap(unsigned long start, unsigned long end);
/*
 * Any registered region at @addr, not_text included; under RCU.  Out of
 * line: the lookups that the function tracer, kprobes and the unwinders
 * call (dyntext_find(), is_dyntext_address()) inline __dyntext_find_any().
 */
struct dyntext *dyntext_find_any(unsigned long addr);
#endif

#endif /* _KERNEL_DYNTEXT_INTERNAL_H */
