// SPDX-License-Identifier: GPL-2.0
/*
 * Dynamic text registry.
 *
 * Every region of executable text that the kernel generates at run time is
 * registered here: one entry per region with its range, name and owner.
 * Lookups by address are lock-free and NMI-safe (latch trees, as the
 * module and BPF trees used before, one per kind of text: see
 * dyntext_internal.h, which kernel_text_address() includes to inline the
 * lookup); /proc/kallsyms walks a list in registration order with a
 * cursor, so a full read is linear.  Adding and
 * deleting are the only way in and out, and both announce the region to
 * perf with a PERF_RECORD_KSYMBOL record from here, under the registry's
 * lock, so that the records of one region are ordered like the registry's
 * own changes.
 *
 * See Documentation/core-api/dyntext.rst.
 */
#define pr_fmt(fmt) "dyntext: " fmt

#include <linux/debugfs.h>
#include <linux/dyntext.h>
#include <linux/init.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <asm/sections.h>

#include "dyntext_internal.h"

static DEFINE_SPINLOCK(dyntext_lock);
static LIST_HEAD(dyntext_list);

#define DYNTEXT_TREE_INIT	{ .lo = ULONG_MAX, .hi = 0 }
struct dyntext_tree dyntext_trees[DYNTEXT_NR_TREES] __cacheline_aligned = {
	[DYNTEXT_TREE_MODULE]	= DYNTEXT_TREE_INIT,
	[DYNTEXT_TREE_OOL]	= DYNTEXT_TREE_INIT,
	[DYNTEXT_TREE_BPF]	= DYNTEXT_TREE_INIT,
};

/* Bumped on every delete: a cursor taken before is no longer valid. */
static unsigned long dyntext_gen;
static unsigned int dyntext_nr;
/* Registration order: the list is sorted by it. */
static u64 dyntext_seq;
/* Regions dyntext_walk() handles per hold of the lock. */
#define DYNTEXT_WALK_BATCH	32

/* The tree for regions of ksymbol type @ksym_type, NULL if none. */
static struct dyntext_tree *dyntext_tree_for(u16 ksym_type)
{
	switch (ksym_type) {
	case PERF_RECORD_KSYMBOL_TYPE_MODULE:
		return &dyntext_trees[DYNTEXT_TREE_MODULE];
	case PERF_RECORD_KSYMBOL_TYPE_OOL:
		return &dyntext_trees[DYNTEXT_TREE_OOL];
	case PERF_RECORD_KSYMBOL_TYPE_BPF:
		return &dyntext_trees[DYNTEXT_TREE_BPF];
	default:
		return NULL;
	}
}

static struct dyntext_tree *dyntext_tree_of(const struct dyntext *dt)
{
	return dyntext_tree_for(dt->class->ksym_type);
}

/* Writer side: the bounds of @t from what it holds now. */
static void dyntext_tree_shrink(struct dyntext_tree *t)
{
	struct rb_node *first = rb_first(&t->root.tree[0]);
	struct rb_node *last = rb_last(&t->root.tree[0]);

	lockdep_assert_held(&dyntext_lock);
	if (!first) {
		WRITE_ONCE(t->lo, ULONG_MAX);
		WRITE_ONCE(t->hi, 0);
		return;
	}
	WRITE_ONCE(t->lo, container_of(first, struct dyntext,
				       tnode.node[0])->start);
	WRITE_ONCE(t->hi, container_of(last, struct dyntext,
				       tnode.node[0])->end);
}

static bool dyntext_listed(const struct dyntext *dt)
{
	return !dt->class->listed || dt->class->listed();
}

static void dyntext_announce(const struct dyntext *dt, bool unregister)
{
	if (!dyntext_listed(dt))
		return;
	perf_event_ksymbol(dt->class->ksym_type, dt->start,
			   dt->end - dt->start, unregister, dt->name);
}

/*
 * Regions are disjoint and a tree is sorted by start, hence also by end:
 * a walk that goes left when the new range lies below a node and right
 * when it lies above meets every region it overlaps.  All trees, as
 * regions of every kind share one address space.  Writer side only.
 */
static struct dyntext *dyntext_overlap(unsigned long start, unsigned long end)
{
	struct rb_node *n;
	int t;

	lockdep_assert_held(&dyntext_lock);
	for (t = 0; t < ARRAY_SIZE(dyntext_trees); t++) {
		n = dyntext_trees[t].root.tree[0].rb_node;
		while (n) {
			struct dyntext *dt = container_of(n, struct dyntext,
							  tnode.node[0]);

			if (end <= dt->start)
				n = n->rb_left;
			else if (start >= dt->end)
				n = n->rb_right;
			else
				return dt;
		}
	}
	return NULL;
}

static bool dyntext_in_core_text(unsigned long start, unsigned long end)
{
	return (start < (unsigned long)_etext &&
		end > (unsigned long)_stext) ||
	       (start < (unsigned long)_einittext &&
		end > (unsigned long)_sinittext);
}

/**
 * dyntext_init - prepare a region for dyntext_add()
 * @dt:		the entry, embedded in the producer's object
 * @start:	first byte of the text
 * @size:	length of the text in bytes
 * @name:	symbol name (stays owned by the caller, must not change while
 *		the region is registered)
 * @class:	the producer's class (owner tag, ksymbol type)
 *
 * Does not register anything; dyntext_add() checks the values.
 */
void dyntext_init(struct dyntext *dt, unsigned long start, unsigned long size,
		  const char *name, const struct dyntext_class *class)
{
	dt->start = start;
	dt->end = start + size;
	dt->name = name;
	dt->class = class;
	INIT_LIST_HEAD(&dt->lnode);
}
EXPORT_SYMBOL_GPL(dyntext_init);

/**
 * dyntext_registered - is this entry currently in the registry?
 * @dt: an entry prepared with dyntext_init()
 *
 * The caller must serialise against its own dyntext_add() and
 * dyntext_del() of @dt.  An entry in zeroed memory counts as prepared.
 *
 * Return: true between a successful dyntext_add() and dyntext_del().
 */
bool dyntext_registered(const struct dyntext *dt)
{
	/* Zeroed memory counts as never registered, too. */
	return dt->lnode.next && !list_empty(&dt->lnode) &&
	       dt->lnode.prev != LIST_POISON2;
}
EXPORT_SYMBOL_GPL(dyntext_registered);

/**
 * dyntext_add - register a region of run-time generated text
 * @dt: an entry prepared with dyntext_init()
 *
 * Makes the region visible to address lookups (kernel_text_address(),
 * kallsyms_lookup(), %pS), to /proc/kallsyms, and announces it with a
 * PERF_RECORD_KSYMBOL register record to every perf event whose owner may
 * see it.  May be called from any context, including softirq and with
 * interrupts disabled.
 *
 * Return: 0 on success; -EINVAL for a missing, empty or over-long name, a
 * missing class or one whose ksymbol type is not BPF, OOL or MODULE, or an
 * empty or wrapping range; -EEXIST if @dt is already
 * registered or the range overlaps a registered region or the core
 * kernel's text.  On error nothing is registered or announced.
 */
int dyntext_add(struct dyntext *dt)
{
	struct dyntext_tree *tree;
	struct dyntext *other;
	unsigned long flags;

	if (!dt || !dt->class || !dt->name || !dt->name[0] ||
	    strnlen(dt->name, KSYM_NAME_LEN) == KSYM_NAME_LEN) {
		pr_warn_ratelimited("%pS: bad name or class\n",
				    __builtin_return_address(0));
		return -EINVAL;
	}
	if (!dyntext_tree_for(dt->class->ksym_type)) {
		pr_warn_ratelimited("%pS: %s has ksymbol type %u\n",
				    __builtin_return_address(0), dt->name,
				    dt->class->ksym_type);
		return -EINVAL;
	}
	if (dt->end <= dt->start) {
		pr_warn_ratelimited("%pS: empty or wrapping range for %s\n",
				    __builtin_return_address(0), dt->name);
		return -EINVAL;
	}
	if (dyntext_in_core_text(dt->start, dt->end)) {
		pr_warn_ratelimited("%pS: %s overlaps the kernel's text\n",
				    __builtin_return_address(0), dt->name);
		return -EEXIST;
	}

	spin_lock_irqsave(&dyntext_lock, flags);
	if (dyntext_registered(dt)) {
		spin_unlock_irqrestore(&dyntext_lock, flags);
		pr_warn_ratelimited("%pS: %s added twice\n",
				    __builtin_return_address(0), dt->name);
		return -EEXIST;
	}
	other = dyntext_overlap(dt->start, dt->end);
	if (other) {
		spin_unlock_irqrestore(&dyntext_lock, flags);
		pr_warn_ratelimited("%pS: %s overlaps a registered region\n",
				    __builtin_return_address(0), dt->name);
		return -EEXIST;
	}
	dt->seq = ++dyntext_seq;
	tree = dyntext_tree_of(dt);
	if (dt->start < tree->lo)
		WRITE_ONCE(tree->lo, dt->start);
	if (dt->end > tree->hi)
		WRITE_ONCE(tree->hi, dt->end);
	latch_tree_insert(&dt->tnode, &tree->root, &dyntext_tree_ops);
	list_add_tail_rcu(&dt->lnode, &dyntext_list);
	dyntext_nr++;
	dyntext_announce(dt, false);
	spin_unlock_irqrestore(&dyntext_lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(dyntext_add);

/**
 * dyntext_del - unregister a region
 * @dt: a registered entry
 *
 * Removes the region from lookups and /proc/kallsyms and announces it with
 * a PERF_RECORD_KSYMBOL unregister record.  Lock-free readers may still
 * see the entry until an RCU grace period has passed: free the entry and
 * the text only after one (call_rcu(), synchronize_rcu() or a stronger
 * flavour).  May be called from any context.
 *
 * Return: 0 on success, -ENOENT if @dt is not registered.
 */
int dyntext_del(struct dyntext *dt)
{
	struct dyntext_tree *tree;
	unsigned long flags;

	spin_lock_irqsave(&dyntext_lock, flags);
	if (!dt || !dyntext_registered(dt)) {
		spin_unlock_irqrestore(&dyntext_lock, flags);
		pr_warn_ratelimited("%pS: deleting an unregistered region\n",
				    __builtin_return_address(0));
		return -ENOENT;
	}
	WRITE_ONCE(dyntext_gen, dyntext_gen + 1);
	tree = dyntext_tree_of(dt);
	latch_tree_erase(&dt->tnode, &tree->root, &dyntext_tree_ops);
	dyntext_tree_shrink(tree);
	list_del_rcu(&dt->lnode);
	dyntext_nr--;
	dyntext_announce(dt, true);
	spin_unlock_irqrestore(&dyntext_lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(dyntext_del);

/**
 * dyntext_find - the registered region that contains an address
 * @addr: the address
 *
 * Lock-free and safe in any context, NMI included.  The caller must be in
 * an RCU read-side critical section (preemption or interrupts disabled
 * count) and may use the entry only inside it.
 *
 * Return: the entry with start <= @addr < end, or NULL.
 */
struct dyntext *dyntext_find(unsigned long addr)
{
	return __dyntext_find(addr);
}
EXPORT_SYMBOL_GPL(dyntext_find);
/* Unwinders call it from kprobe handlers: never probe it. */
NOKPROBE_SYMBOL(dyntext_find);

/**
 * is_dyntext_address - is this address inside registered dynamic text?
 * @addr: the address
 *
 * Safe in any context in which RCU is watching (see kernel_text_address()).
 *
 * Return: true if a registered region contains @addr.
 */
bool is_dyntext_address(unsigned long addr)
{
	return __is_dyntext_address(addr);
}
EXPORT_SYMBOL_GPL(is_dyntext_address);

/**
 * dyntext_address_lookup - name, size and offset of a dynamic text address
 * @addr:	the address
 * @size:	if not NULL, receives the region's length
 * @off:	if not NULL, receives @addr's offset in the region
 * @namebuf:	receives the region's name, KSYM_NAME_LEN bytes
 *
 * Return: @namebuf if a registered region contains @addr, else NULL.
 */
const char *dyntext_address_lookup(unsigned long addr, unsigned long *size,
				   unsigned long *off, char *namebuf)
{
	const struct dyntext *dt;
	const char *ret = NULL;

	rcu_read_lock();
	dt = dyntext_find(addr);
	if (dt) {
		strscpy(namebuf, dt->name, KSYM_NAME_LEN);
		if (size)
			*size = dt->end - dt->start;
		if (off)
			*off = addr - dt->start;
		ret = namebuf;
	}
	rcu_read_unlock();
	return ret;
}

static struct dyntext *dyntext_next_listed(struct dyntext *dt)
{
	struct list_head *p = dt ? &dt->lnode : &dyntext_list;

	for (p = rcu_dereference(list_next_rcu(p)); p != &dyntext_list;
	     p = rcu_dereference(list_next_rcu(p))) {
		dt = list_entry(p, struct dyntext, lnode);
		if (!dt->class->not_in_kallsyms && dyntext_listed(dt))
			return dt;
	}
	return NULL;
}

/**
 * dyntext_get_kallsym - the @symnum-th listed region, for /proc/kallsyms
 * @it:		cursor, zeroed before the first call of a walk
 * @symnum:	index among the listed regions, in registration order
 * @value:	receives the start address
 * @type:	receives the symbol type letter
 * @name:	receives the name, KSYM_NAME_LEN bytes
 * @owner:	receives the owner tag
 * @owner_len:	size of @owner
 *
 * A walk with increasing @symnum costs O(1) per entry: the cursor remembers
 * the last entry and stays valid until a region is deleted, which restarts
 * the count from the head of the list.
 *
 * Return: 0, or -ERANGE past the last listed region.
 */
int dyntext_get_kallsym(struct dyntext_iter *it, unsigned int symnum,
			unsigned long *value, char *type, char *name,
			char *owner, size_t owner_len)
{
	struct dyntext *dt;
	unsigned long gen;
	unsigned int idx;
	int ret = -ERANGE;

	rcu_read_lock();
	gen = READ_ONCE(dyntext_gen);
	if (it->cur && it->gen == gen && it->idx <= symnum) {
		dt = it->cur;
		idx = it->idx;
	} else {
		dt = dyntext_next_listed(NULL);
		idx = 0;
	}
	while (dt && idx < symnum) {
		dt = dyntext_next_listed(dt);
		idx++;
	}
	if (dt) {
		*value = dt->start;
		*type = dt->class->sym_type;
		strscpy(name, dt->name, KSYM_NAME_LEN);
		strscpy(owner, dt->class->owner, owner_len);
		it->cur = dt;
		it->idx = idx;
		it->gen = gen;
		ret = 0;
	} else {
		it->cur = NULL;
	}
	rcu_read_unlock();
	return ret;
}

/* The first announced entry after @dt (or the first of all), lock held. */
static struct dyntext *dyntext_next_announced(struct dyntext *dt)
{
	lockdep_assert_held(&dyntext_lock);
	dt = list_prepare_entry(dt, &dyntext_list, lnode);
	list_for_each_entry_continue(dt, &dyntext_list, lnode) {
		if (dyntext_listed(dt))
			return dt;
	}
	return NULL;
}

/**
 * dyntext_walk - call a function for every region the registry announces
 * @fn:		called with the registry's lock held (interrupts disabled):
 *		must not sleep; returns 0 to go on, anything else to stop.
 *		Its @end tells dyntext_in_walk() which regions the walk covers.
 * @arg:	passed to @fn
 *
 * Visits the regions in registration order, a small batch per hold of the
 * lock, so that a large registry does not keep interrupts disabled for
 * long.  The walk is consistent with concurrent add and delete:
 *
 * - @fn sees a region only while it is registered, so its unregister
 *   record (emitted under the same lock) comes after whatever @fn emitted;
 * - a region registered before the walk started and still registered when
 *   it ends is visited exactly once; one deleted during the walk at most
 *   once, and then before its unregister record;
 * - a region added after the walk started is not visited: its register
 *   record announces it.
 *
 * Regions of a class whose listed() returns false are not visited, as they
 * are not announced.  Process context only.
 *
 * Return: 0 once every region was visited, the first non-zero value @fn
 * returned, or -EINTR if a fatal signal stopped the walk.
 */
int dyntext_walk(int (*fn)(const struct dyntext *dt, u64 end, void *arg),
		 void *arg)
{
	struct dyntext *dt, *cur = NULL;
	unsigned long flags, gen = 0;
	u64 last = 0, end = 0;
	int ret = 0, n;

	might_sleep();
	for (;;) {
		spin_lock_irqsave(&dyntext_lock, flags);
		/* Regions added from now on are announced by their own records. */
		if (!end)
			end = dyntext_seq;
		if (cur && gen == dyntext_gen) {
			/* Nothing was deleted: cur is still in the list. */
			dt = dyntext_next_announced(cur);
		} else {
			/* Find the place again by registration order. */
			dt = dyntext_next_announced(NULL);
			while (dt && dt->seq <= last)
				dt = dyntext_next_announced(dt);
		}
		if (dt && !dyntext_in_walk(dt, end))
			dt = NULL;
		for (n = 0; dt && n < DYNTEXT_WALK_BATCH; n++) {
			ret = fn(dt, end, arg);
			last = dt->seq;
			cur = dt;
			if (ret)
				break;
			dt = dyntext_next_announced(dt);
			if (dt && !dyntext_in_walk(dt, end))
				dt = NULL;
		}
		gen = dyntext_gen;
		spin_unlock_irqrestore(&dyntext_lock, flags);
		if (ret || !dt)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
}

/**
 * dyntext_check - verify the registry's internal consistency
 * @nr: if not NULL, receives the number of registered regions
 *
 * Walks the list and both copies of each latch tree under the lock: the
 * same number of entries in the list and in each copy, every entry in the
 * tree of its ksymbol type and inside that tree's bounds, trees sorted and
 * disjoint, every entry found by a lookup of its first and last byte.  For
 * tests and debugging (also behind /sys/kernel/debug/dyntext/check);
 * O(n log n).
 *
 * Return: 0 if consistent, -EUCLEAN otherwise.
 */
int dyntext_check(unsigned int *nr)
{
	unsigned int n_list = 0, n_tree[2] = { 0, 0 };
	unsigned long flags, prev_end;
	struct dyntext *dt;
	struct rb_node *rb;
	int ret = 0, i, t;

	spin_lock_irqsave(&dyntext_lock, flags);
	list_for_each_entry(dt, &dyntext_list, lnode) {
		n_list++;
		if (dt->end <= dt->start ||
		    dyntext_find(dt->start) != dt ||
		    dyntext_find(dt->end - 1) != dt)
			ret = -EUCLEAN;
	}
	for (t = 0; t < ARRAY_SIZE(dyntext_trees); t++) {
		struct dyntext_tree *tree = &dyntext_trees[t];

		for (i = 0; i < 2; i++) {
			unsigned long lo = ULONG_MAX;

			prev_end = 0;
			rb = rb_first(&tree->root.tree[i]);
			for (; rb; rb = rb_next(rb)) {
				dt = container_of(rb, struct dyntext,
						  tnode.node[i]);
				if (dt->start < prev_end ||
				    !dyntext_registered(dt) ||
				    dyntext_tree_of(dt) != tree)
					ret = -EUCLEAN;
				lo = min(lo, dt->start);
				prev_end = dt->end;
				n_tree[i]++;
			}
			/* The bounds are exactly those of what it holds. */
			if (tree->lo != lo || tree->hi != prev_end)
				ret = -EUCLEAN;
		}
	}
	if (n_list != dyntext_nr || n_tree[0] != dyntext_nr ||
	    n_tree[1] != dyntext_nr)
		ret = -EUCLEAN;
	if (nr)
		*nr = dyntext_nr;
	spin_unlock_irqrestore(&dyntext_lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(dyntext_check);

#ifdef CONFIG_DEBUG_FS
/*
 * /sys/kernel/debug/dyntext/check: "ok N" (N regions registered) if
 * dyntext_check() finds the list and the trees in agreement; otherwise
 * the read fails with -EUCLEAN.
 */
static int dyntext_check_show(struct seq_file *m, void *unused)
{
	unsigned int nr;
	int ret = dyntext_check(&nr);

	if (ret) {
		pr_err("registry inconsistent (%u regions)\n", nr);
		return ret;
	}
	seq_printf(m, "ok %u\n", nr);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dyntext_check);

static int __init dyntext_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("dyntext", NULL);

	debugfs_create_file("check", 0400, dir, NULL, &dyntext_check_fops);
	return 0;
}
late_initcall(dyntext_debugfs_init);
#endif

#ifdef CONFIG_DYNTEXT_KUNIT_TEST
#include "dyntext_test.c"
#endif
