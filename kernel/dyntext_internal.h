/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dynamic text registry: the lock-free lookup, shared by kernel/dyntext.c
 * and kernel_text_address() in kernel/extable.c, which inlines it (the
 * unwinders call kernel_text_address() for every frame).  Nothing outside
 * kernel/ includes this; everyone else uses <linux/dyntext.h>.
 */
#ifndef _KERNEL_DYNTEXT_INTERNAL_H
#define _KERNEL_DYNTEXT_INTERNAL_H

#include <linux/dyntext.h>
#include <linux/rbtree_latch.h>
#include <linux/rcupdate.h>

#ifdef CONFIG_DYNTEXT
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
 * across both.  Empty: lo = ULONG_MAX, hi = 0.  Written only by
 * kernel/dyntext.c, under its lock.
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

extern struct dyntext_tree dyntext_trees[DYNTEXT_NR_TREES];

static __always_inline struct dyntext *
dyntext_from_tnode(struct latch_tree_node *n)
{
	return container_of(n, struct dyntext, tnode);
}

static __always_inline bool dyntext_tree_less(struct latch_tree_node *a,
					      struct latch_tree_node *b)
{
	return dyntext_from_tnode(a)->start < dyntext_from_tnode(b)->start;
}

static __always_inline int dyntext_tree_comp(void *key,
					     struct latch_tree_node *n)
{
	unsigned long addr = (unsigned long)key;
	const struct dyntext *dt = dyntext_from_tnode(n);

	if (addr < dt->start)
		return -1;
	if (addr >= dt->end)
		return 1;
	return 0;
}

static const struct latch_tree_ops dyntext_tree_ops = {
	.less	= dyntext_tree_less,
	.comp	= dyntext_tree_comp,
};

/* A region of tree @t containing @addr; a range check first. */
static __always_inline struct dyntext *
dyntext_tree_find(struct dyntext_tree *t, unsigned long addr)
{
	struct latch_tree_node *n;

	if (addr < READ_ONCE(t->lo) || addr >= READ_ONCE(t->hi))
		return NULL;
	n = latch_tree_find((void *)addr, &t->root, &dyntext_tree_ops);
	return n ? dyntext_from_tnode(n) : NULL;
}

/*
 * dyntext_find() without the call.  The caller is in an RCU read-side
 * critical section.
 */
static __always_inline struct dyntext *__dyntext_find(unsigned long addr)
{
	struct dyntext *dt;

	BUILD_BUG_ON(DYNTEXT_NR_TREES != 3);
	dt = dyntext_tree_find(&dyntext_trees[DYNTEXT_TREE_MODULE], addr);
	if (!dt)
		dt = dyntext_tree_find(&dyntext_trees[DYNTEXT_TREE_OOL], addr);
	if (!dt)
		dt = dyntext_tree_find(&dyntext_trees[DYNTEXT_TREE_BPF], addr);
	return dt;
}

/* is_dyntext_address() without the call. */
static __always_inline bool __is_dyntext_address(unsigned long addr)
{
	bool ret;

	rcu_read_lock();
	ret = __dyntext_find(addr);
	rcu_read_unlock();
	return ret;
}
#else
static __always_inline bool __is_dyntext_address(unsigned long addr)
{
	return false;
}
#endif /* CONFIG_DYNTEXT */

#endif /* _KERNEL_DYNTEXT_INTERNAL_H */
