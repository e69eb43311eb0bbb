// SPDX-License-Identifier: GPL-2.0
/*
 * Dynamic text registry.
 *
 * Every region of executable text that the kernel generates at run time is
 * registered here: one entry per region with its range, name and owner.
 * Lookups by address are lock-free and NMI-safe (latch trees, as the
 * module and BPF trees used before, one per kind of text); /proc/kallsyms
 * walks one list per kallsyms rank (in the order of sections it has always
 * used, each in the order its producer's own list kept) with a cursor, so
 * a full read is linear.  Adding and deleting are the only way in and out,
 * and both announce the region to perf with a PERF_RECORD_KSYMBOL record
 * from here, just after dropping the registry's lock (see
 * dyntext_announce()), so that every register record has exactly one
 * unregister record.
 *
 * See Documentation/core-api/dyntext.rst.
 */
#define pr_fmt(fmt) "dyntext: " fmt

#include <linux/buildid.h>
#include <linux/debugfs.h>
#include <linux/dyntext.h>
#include <linux/fault-inject.h>
#include <linux/init.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <asm/sections.h>
#include <kunit/visibility.h>

#include "dyntext_internal.h"

/*
 * Writers (add, delete, the walk) take it with bottom halves disabled: BPF
 * programs are released from softirq context.
 */
VISIBLE_IF_KUNIT DEFINE_SPINLOCK(dyntext_lock);

/* The regions of each kallsyms rank, in the order /proc/kallsyms lists them. */
static struct list_head dyntext_lists[] = {
	LIST_HEAD_INIT(dyntext_lists[DYNTEXT_KALLSYMS_FTRACE]),
	LIST_HEAD_INIT(dyntext_lists[DYNTEXT_KALLSYMS_BPF]),
	LIST_HEAD_INIT(dyntext_lists[DYNTEXT_KALLSYMS_KPROBES]),
	LIST_HEAD_INIT(dyntext_lists[DYNTEXT_KALLSYMS_OPTPROBES]),
};

static_assert(ARRAY_SIZE(dyntext_lists) == DYNTEXT_KALLSYMS_NR_RANKS);

/*
 * Ranks listed newest first: ftrace and kprobes added their trampolines
 * and pages at the head of their own lists.
 */
#define DYNTEXT_NEWEST_FIRST	(BIT(DYNTEXT_KALLSYMS_FTRACE) |		\
				 BIT(DYNTEXT_KALLSYMS_KPROBES) |	\
				 BIT(DYNTEXT_KALLSYMS_OPTPROBES))

/* One latch tree per ksymbol type: see struct dyntext_tree. */
#define DYNTEXT_TREE_INIT	{ .lo = ULONG_MAX, .hi = 0 }
VISIBLE_IF_KUNIT struct dyntext_tree dyntext_trees[DYNTEXT_NR_TREES] __cacheline_aligned = {
	[DYNTEXT_TREE_MODULE]	= DYNTEXT_TREE_INIT,
	[DYNTEXT_TREE_OOL]	= DYNTEXT_TREE_INIT,
	[DYNTEXT_TREE_BPF]	= DYNTEXT_TREE_INIT,
};

/* The last address a region of tree @t covers, plus one. */
static __always_inline unsigned long dyntext_tree_end(int t,
						      const struct dyntext *dt)
{
	return t == DYNTEXT_TREE_BPF ? dt->end + 1 : dt->end;
}

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

/* Compare @key with the region at @n: [start, end). */
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

/*
 * A region of tree @t containing @addr; a range check first.  In the BPF
 * tree, an address in no region may be the end of one (see above): a
 * second walk, only for addresses between BPF regions.
 */
static __always_inline struct dyntext *
dyntext_tree_find(int t, unsigned long addr)
{
	struct dyntext_tree *tree = &dyntext_trees[t];
	struct latch_tree_node *n;

	if (addr < READ_ONCE(tree->lo) || addr >= READ_ONCE(tree->hi))
		return NULL;
	n = latch_tree_find((void *)addr, &tree->root, &dyntext_tree_ops);
	if (!n && t == DYNTEXT_TREE_BPF)
		n = latch_tree_find((void *)(addr - 1), &tree->root,
				    &dyntext_tree_ops);
	return n ? dyntext_from_tnode(n) : NULL;
}

/* Bumped on every delete: a kallsyms cursor taken before is stale. */
static unsigned long dyntext_gen;
static unsigned int dyntext_nr;
/* Registration order: the list is sorted by it. */
static u64 dyntext_seq;
/*
 * The entries by sequence number, where a walk resumes (struct
 * dyntext_cursor keeps the number of the entry it visits next, not a
 * pointer): O(log n) per batch, and nothing for a delete to update, so
 * what a delete costs does not depend on the walks other users left
 * behind.  Writer side only, under dyntext_lock.
 */
static struct rb_root dyntext_by_seq = RB_ROOT;

/* The tree for regions of ksymbol type @ksym_type, -1 if none. */
static int dyntext_tree_for(u16 ksym_type)
{
	switch (ksym_type) {
	case PERF_RECORD_KSYMBOL_TYPE_MODULE:
		return DYNTEXT_TREE_MODULE;
	case PERF_RECORD_KSYMBOL_TYPE_OOL:
		return DYNTEXT_TREE_OOL;
	case PERF_RECORD_KSYMBOL_TYPE_BPF:
		return DYNTEXT_TREE_BPF;
	default:
		return -1;
	}
}

VISIBLE_IF_KUNIT int dyntext_tree_of(const struct dyntext *dt)
{
	return dyntext_tree_for(dt->class->ksym_type);
}

/* Writer side: the bounds of tree @t from what it holds now. */
static void dyntext_tree_shrink(int t)
{
	struct dyntext_tree *tree = &dyntext_trees[t];
	struct rb_node *first = rb_first(&tree->root.tree[0]);
	struct rb_node *last = rb_last(&tree->root.tree[0]);
	struct dyntext *last_dt;

	lockdep_assert_held(&dyntext_lock);
	if (!first) {
		WRITE_ONCE(tree->lo, ULONG_MAX);
		WRITE_ONCE(tree->hi, 0);
		return;
	}
	WRITE_ONCE(tree->lo, container_of(first, struct dyntext,
					  tnode.node[0])->start);
	last_dt = container_of(last, struct dyntext, tnode.node[0]);
	WRITE_ONCE(tree->hi, dyntext_tree_end(t, last_dt));
}

/* Listed in /proc/kallsyms now (the class may follow a sysctl). */
static bool dyntext_listed(const struct dyntext *dt)
{
	return !dt->class->not_in_kallsyms &&
	       (!dt->class->listed || dt->class->listed());
}

/*
 * Every region is announced, at add and at delete alike: what
 * /proc/kallsyms lists does not change what perf is told, so the two
 * records of a region always pair up.  Who receives them is the perf
 * event's business (its owner's right to see kernel addresses).
 *
 * Called after dyntext_lock is dropped, as BPF used to send its records
 * outside bpf_lock: a record visits every side-band event of this CPU
 * (perf_iterate_sb()), as many as users chose to open, and no other CPU's
 * add or delete may wait for that with bottom halves off.  The order still
 * holds: a region is announced once it can be looked up, and its
 * unregister record is written after its removal, so after any replay
 * record of it (written under the lock, while it was registered), and
 * before the caller may free or reuse its range.
 */
static void dyntext_announce(const struct dyntext *dt, bool unregister)
{
	if (!unregister && dt->build_id_size)
		perf_event_ksymbol_build_id(dt->class->ksym_type, dt->start,
					    dt->end - dt->start, dt->name,
					    dt->build_id, dt->build_id_size);
	else
		perf_event_ksymbol(dt->class->ksym_type, dt->start,
				   dt->end - dt->start, unregister, dt->name);
}

/*
 * Regions are disjoint and a tree is sorted by start, hence also by end:
 * a walk that goes left when the new range lies below a node and right
 * when it lies above meets every region it overlaps.  All trees, as
 * regions of every kind share one address space.  Writer side only.
 */
VISIBLE_IF_KUNIT struct dyntext *dyntext_overlap(unsigned long start,
						 unsigned long end)
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

static bool dyntext_seq_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct dyntext, snode)->seq <
	       rb_entry(b, struct dyntext, snode)->seq;
}

/* The registered entry with the lowest sequence number >= @seq, or NULL. */
static struct dyntext *dyntext_seq_ceil(u64 seq)
{
	struct rb_node *n = dyntext_by_seq.rb_node;
	struct dyntext *found = NULL;

	lockdep_assert_held(&dyntext_lock);
	while (n) {
		struct dyntext *dt = rb_entry(n, struct dyntext, snode);

		if (dt->seq >= seq) {
			found = dt;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return found;
}

/**
 * dyntext_init - prepare a region for dyntext_add()
 * @dt:		the entry, embedded in the producer's object: zeroed memory
 *		or an entry that dyntext_del() removed
 * @start:	first byte of the text
 * @size:	length of the text in bytes
 * @name:	symbol name (stays owned by the caller, must not change while
 *		the region is registered)
 * @class:	the producer's class (owner tag, ksymbol type)
 *
 * Does not register anything; dyntext_add() checks the values.  On an
 * entry that is registered it changes nothing, with a warning, so that
 * the dyntext_add() that follows fails with -EEXIST and the registered
 * region stays intact.  The caller serialises it against its own
 * dyntext_add() and dyntext_del() of @dt.
 */
void dyntext_init(struct dyntext *dt, unsigned long start, unsigned long size,
		  const char *name, const struct dyntext_class *class)
{
	if (dyntext_registered(dt)) {
		pr_warn_ratelimited("%pS: %s initialised while registered\n",
				    __builtin_return_address(0), dt->name);
		return;
	}
	dt->start = start;
	dt->end = start + size;
	dt->name = name;
	dt->class = class;
	dt->text_len = 0;
	dt->build_id = NULL;
	dt->build_id_size = 0;
	INIT_LIST_HEAD(&dt->lnode);
}
EXPORT_SYMBOL_GPL(dyntext_init);

/**
 * dyntext_registered - is this entry currently in the registry?
 * @dt: zeroed memory, or an entry prepared with dyntext_init()
 *
 * The caller must serialise against its own dyntext_add() and
 * dyntext_del() of @dt.
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
 * dyntext_set_text_len - say how much of a region is code when it is added
 * @dt:		an entry prepared with dyntext_init(), not registered
 * @len:	bytes from the region's start that hold code when the region
 *		is added (at most its size)
 *
 * dyntext_add() then sends those bytes to the perf events that asked for
 * the code of new text, and a replay (PERF_EVENT_IOC_KSYMBOL_REPLAY) sends
 * what they hold then.  Only for code the producer wrote itself: nothing
 * the allocator left behind.  The producer sends later changes of them as
 * text pokes (perf_event_text_poke()) after the write, or before it with
 * text_mutex held across both: a replay reads the text under text_mutex.
 * On an entry that is registered it changes nothing, with a warning, as
 * dyntext_init(): a replay must never read past the registered region.
 * The caller serialises it against its own dyntext_add() and
 * dyntext_del() of @dt.
 */
void dyntext_set_text_len(struct dyntext *dt, u32 len)
{
	if (dyntext_registered(dt)) {
		pr_warn_ratelimited("%pS: code length of %s set while registered\n",
				    __builtin_return_address(0), dt->name);
		return;
	}
	dt->text_len = len;
}

/**
 * dyntext_set_build_id - name the file a region's text was loaded from
 * @dt:		an entry prepared with dyntext_init(), not registered
 * @id:		the file's build-id, which must stay unchanged while the region
 *		is registered
 * @size:	its length in bytes, at most BUILD_ID_SIZE_MAX
 *
 * The region's register records (live and replayed) then carry it
 * (PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID), so that a profiler can find the
 * file, and the functions in it, after the text is gone.  For text that
 * is a copy of a file's, as module text is.  On an entry that is
 * registered it changes nothing, with a warning, as dyntext_init().
 */
void dyntext_set_build_id(struct dyntext *dt, const unsigned char *id,
			  u8 size)
{
	if (dyntext_registered(dt)) {
		pr_warn_ratelimited("%pS: build-id of %s set while registered\n",
				    __builtin_return_address(0), dt->name);
		return;
	}
	dt->build_id = id;
	dt->build_id_size = size;
}

#ifdef CONFIG_FAIL_DYNTEXT
/* /sys/kernel/debug/fail_dyntext: refuse regions, for producers' tests. */
static DECLARE_FAULT_ATTR(fail_dyntext);

static int __init fail_dyntext_debugfs(void)
{
	return PTR_ERR_OR_ZERO(fault_create_debugfs_attr("fail_dyntext", NULL,
							 &fail_dyntext));
}
late_initcall(fail_dyntext_debugfs);

static bool dyntext_should_fail(void)
{
	return should_fail(&fail_dyntext, 1);
}
#else
static inline bool dyntext_should_fail(void)
{
	return false;
}
#endif

/*
 * Where run-time text can be: both ends in the module or vmalloc area
 * (execmem allocates from them), nothing of the kernel image in between
 * (on x86-64 the image lies between the vmalloc and the module area; on
 * arm64 inside the vmalloc area).  Catches a caller that passes a kernel
 * function, a user address or a length that runs past its allocation.
 */
static bool dyntext_range_allowed(unsigned long start, unsigned long end)
{
	return is_vmalloc_or_module_addr((void *)start) &&
	       is_vmalloc_or_module_addr((void *)(end - 1)) &&
	       (end <= (unsigned long)_text || start >= (unsigned long)_end);
}

/* dyntext_add(), and dyntext_add_before() with @next. */
static int __dyntext_add(struct dyntext *dt, struct dyntext *next)
{
	struct list_head *head;
	struct dyntext_tree *tree;
	int t;

	if (!dt || !dt->class || !dt->name || !dt->name[0] ||
	    strnlen(dt->name, KSYM_NAME_LEN) == KSYM_NAME_LEN ||
	    dt->class->kallsyms_rank >= DYNTEXT_KALLSYMS_NR_RANKS) {
		pr_warn_ratelimited("%pS: bad name or class\n",
				    __builtin_return_address(0));
		return -EINVAL;
	}
	t = dyntext_tree_of(dt);
	if (t < 0) {
		pr_warn_ratelimited("%pS: %s has ksymbol type %u\n",
				    __builtin_return_address(0), dt->name,
				    dt->class->ksym_type);
		return -EINVAL;
	}
	/* A BPF region answers for its end address: that must not wrap. */
	if (dt->end <= dt->start || dyntext_tree_end(t, dt) < dt->end ||
	    !dyntext_range_allowed(dt->start, dt->end) ||
	    dt->text_len > dt->end - dt->start) {
		pr_warn_ratelimited("%pS: bad range or code length for %s\n",
				    __builtin_return_address(0), dt->name);
		return -EINVAL;
	}
	if (dt->build_id_size > BUILD_ID_SIZE_MAX ||
	    (dt->build_id_size && !dt->build_id)) {
		pr_warn_ratelimited("%pS: bad build-id for %s\n",
				    __builtin_return_address(0), dt->name);
		return -EINVAL;
	}

	/* As if it overlapped a registered region. */
	if (dyntext_should_fail())
		return -EEXIST;

	/* The code goes to the CPU buffers its register record went to. */
	migrate_disable();
	spin_lock_bh(&dyntext_lock);
	if (dyntext_registered(dt)) {
		spin_unlock_bh(&dyntext_lock);
		migrate_enable();
		pr_warn_ratelimited("%pS: %s added twice\n",
				    __builtin_return_address(0), dt->name);
		return -EEXIST;
	}
	if (next && (!dyntext_registered(next) ||
		     next->class->kallsyms_rank != dt->class->kallsyms_rank)) {
		spin_unlock_bh(&dyntext_lock);
		migrate_enable();
		pr_warn_ratelimited("%pS: %s listed before a region of another rank or not registered\n",
				    __builtin_return_address(0), dt->name);
		return -EINVAL;
	}
	if (dyntext_overlap(dt->start, dt->end)) {
		spin_unlock_bh(&dyntext_lock);
		migrate_enable();
		pr_warn_ratelimited("%pS: %s overlaps a registered region\n",
				    __builtin_return_address(0), dt->name);
		return -EEXIST;
	}
	dt->seq = ++dyntext_seq;
	tree = &dyntext_trees[t];
	if (dt->start < tree->lo)
		WRITE_ONCE(tree->lo, dt->start);
	if (dyntext_tree_end(t, dt) > tree->hi)
		WRITE_ONCE(tree->hi, dyntext_tree_end(t, dt));
	latch_tree_insert(&dt->tnode, &tree->root, &dyntext_tree_ops);
	head = &dyntext_lists[dt->class->kallsyms_rank];
	if (next)
		list_add_tail_rcu(&dt->lnode, &next->lnode);
	else if (BIT(dt->class->kallsyms_rank) & DYNTEXT_NEWEST_FIRST)
		list_add_rcu(&dt->lnode, head);
	else
		list_add_tail_rcu(&dt->lnode, head);
	rb_add(&dt->snode, &dyntext_by_seq, dyntext_seq_less);
	dyntext_nr++;
	spin_unlock_bh(&dyntext_lock);
	dyntext_announce(dt, false);
	/*
	 * The code (up to megabytes for a large BPF program) is copied
	 * without the lock, so that no other add or delete, and no bottom
	 * half on this CPU, waits for it.  The region stays registered and
	 * its code final meanwhile: the caller serialises its own add and
	 * delete, and writes the text only after this returns.  Records of
	 * other regions (and a replay's) may come between the register
	 * record and the code; its unregister record cannot.
	 */
	if (dt->text_len)
		perf_event_ksymbol_text(dt->class->ksym_type,
					(void *)dt->start, dt->text_len);
	migrate_enable();
	return 0;
}

/**
 * dyntext_add - register a region of run-time generated text
 * @dt: an entry prepared with dyntext_init()
 *
 * Makes the region visible to address lookups (kernel_text_address(),
 * kallsyms_lookup(), %pS), to /proc/kallsyms (unless its class hides it),
 * at the end of its rank, or at its head for the ranks listed newest first
 * (enum dyntext_kallsyms_rank), and announces it with a PERF_RECORD_KSYMBOL
 * register record (with the
 * build-id of dyntext_set_build_id(), if any) to every perf event whose
 * owner may see kernel addresses, followed (on the same CPU, once the
 * registry's lock is dropped) by the first @dt->text_len bytes of code
 * for those that asked for it.  Process or softirq context, not with
 * interrupts disabled (the lock is taken with bottom halves disabled; on
 * PREEMPT_RT it may sleep).
 *
 * The range must lie where run-time text is allocated (the module and
 * vmalloc areas, from which execmem allocates) and must not overlap the
 * kernel image, whose symbols are kallsyms' own.
 *
 * Return: 0 on success; -EINVAL for a missing, empty or over-long name, a
 * missing class, one whose ksymbol type is not BPF, OOL or MODULE or whose
 * kallsyms rank is out of range, an empty or wrapping range, one that
 * begins or ends outside the module and vmalloc areas or overlaps the
 * kernel image, more code
 * bytes (dyntext_set_text_len()) than the range holds, or a build-id
 * longer than BUILD_ID_SIZE_MAX or without bytes; -EEXIST if
 * @dt is already registered or the range overlaps a registered region.
 * On error nothing is registered or announced.
 */
int dyntext_add(struct dyntext *dt)
{
	return __dyntext_add(dt, NULL);
}
EXPORT_SYMBOL_GPL(dyntext_add);

/**
 * dyntext_add_before - register a region listed just before another
 * @dt:		an entry prepared with dyntext_init()
 * @next:	a registered region of the same kallsyms rank
 *
 * As dyntext_add(), but /proc/kallsyms lists @dt just before @next: a BPF
 * program's subprograms, registered after the program so that their
 * ksymbol records come in the order perf has always seen, are listed
 * before it, as /proc/kallsyms has always listed them.  Lookups and the
 * replay do not depend on it.
 *
 * Return: 0, -EINVAL if @next is not registered or of another rank, or an
 * error of dyntext_add().
 */
int dyntext_add_before(struct dyntext *dt, struct dyntext *next)
{
	if (!next)
		return -EINVAL;
	return __dyntext_add(dt, next);
}

/* The entry after @dt in registration order, NULL at the end; lock held. */
static struct dyntext *dyntext_next(struct dyntext *dt)
{
	struct rb_node *n;

	lockdep_assert_held(&dyntext_lock);
	n = rb_next(&dt->snode);
	return n ? rb_entry(n, struct dyntext, snode) : NULL;
}

/**
 * dyntext_del - unregister a region
 * @dt: a registered entry
 *
 * Removes the region from lookups and /proc/kallsyms and announces it with
 * a PERF_RECORD_KSYMBOL unregister record.  Lock-free readers may still
 * see the entry until an RCU grace period has passed: the entry (not the
 * text, read only while registered) must stay valid until then (free
 * it with kfree_rcu(), call_rcu() or after synchronize_rcu()).  Process or
 * softirq context, as dyntext_add().
 *
 * Return: 0 on success, -ENOENT if @dt is not registered.
 */
int dyntext_del(struct dyntext *dt)
{
	int t;

	spin_lock_bh(&dyntext_lock);
	if (!dt || !dyntext_registered(dt)) {
		spin_unlock_bh(&dyntext_lock);
		pr_warn_ratelimited("%pS: deleting an unregistered region\n",
				    __builtin_return_address(0));
		return -ENOENT;
	}
	WRITE_ONCE(dyntext_gen, dyntext_gen + 1);
	t = dyntext_tree_of(dt);
	latch_tree_erase(&dt->tnode, &dyntext_trees[t].root, &dyntext_tree_ops);
	dyntext_tree_shrink(t);
	list_del_rcu(&dt->lnode);
	rb_erase(&dt->snode, &dyntext_by_seq);
	dyntext_nr--;
	spin_unlock_bh(&dyntext_lock);
	dyntext_announce(dt, true);
	return 0;
}
EXPORT_SYMBOL_GPL(dyntext_del);

/* Any registered region at @addr, not_text included; under RCU. */
static __always_inline struct dyntext *__dyntext_find_any(unsigned long addr)
{
	struct dyntext *dt;

	BUILD_BUG_ON(DYNTEXT_NR_TREES != 3);
	dt = dyntext_tree_find(DYNTEXT_TREE_MODULE, addr);
	if (!dt)
		dt = dyntext_tree_find(DYNTEXT_TREE_OOL, addr);
	if (!dt)
		dt = dyntext_tree_find(DYNTEXT_TREE_BPF, addr);
	return dt;
}

/*
 * The same out of line, for dyntext_check() and the KUnit tests: the
 * lookups below inline __dyntext_find_any(), as they run in the function
 * tracer's, kprobes' and the unwinders' paths.
 */
VISIBLE_IF_KUNIT struct dyntext *dyntext_find_any(unsigned long addr)
{
	return __dyntext_find_any(addr);
}

/* dyntext_find() without the call; the caller is in an RCU section. */
static __always_inline struct dyntext *__dyntext_find(unsigned long addr)
{
	struct dyntext *dt = __dyntext_find_any(addr);

	return dt && !dt->class->not_text ? dt : NULL;
}

/**
 * dyntext_find - the registered region that contains an address
 * @addr: the address
 *
 * Lock-free and safe in any context, NMI included.  The caller must be in
 * an RCU read-side critical section (preemption or interrupts disabled
 * count) and may use the entry only inside it.
 *
 * Return: the entry with start <= @addr < end (<= end for BPF regions),
 * or NULL; never one of a class that sets not_text.
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
 * Return: true if a registered region contains @addr, not counting
 * regions of a class that sets not_text.
 */
bool is_dyntext_address(unsigned long addr)
{
	bool ret;

	rcu_read_lock();
	ret = __dyntext_find(addr);
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(is_dyntext_address);

/**
 * dyntext_code_streamed - is the code at an address sent to perf?
 * @addr: the address of a change of text
 *
 * Perf takes the code of BPF and out-of-line regions (BPF programs,
 * trampolines and dispatchers, ftrace trampolines, kprobe pages), which
 * have no file, from the stream: attr.ksymbol_text events get their code
 * when they are added, or as their producer writes it, and must get every
 * later change of it too.  Which events may have it depends on the kind
 * of text.  Module text is read from the module's file.  Safe in any
 * context in which RCU is watching.
 *
 * Return: PERF_RECORD_KSYMBOL_TYPE_OOL or PERF_RECORD_KSYMBOL_TYPE_BPF if a
 * registered region of that type contains @addr, else 0
 * (PERF_RECORD_KSYMBOL_TYPE_UNKNOWN).
 */
u16 dyntext_code_streamed(unsigned long addr)
{
	u16 ret = PERF_RECORD_KSYMBOL_TYPE_UNKNOWN;

	rcu_read_lock();
	if (dyntext_tree_find(DYNTEXT_TREE_OOL, addr))
		ret = PERF_RECORD_KSYMBOL_TYPE_OOL;
	else if (dyntext_tree_find(DYNTEXT_TREE_BPF, addr))
		ret = PERF_RECORD_KSYMBOL_TYPE_BPF;
	rcu_read_unlock();
	return ret;
}

/**
 * dyntext_address_lookup - name, size and offset of a dynamic text address
 * @addr:	the address
 * @size:	if not NULL, receives the region's length
 * @off:	if not NULL, receives @addr's offset in the region
 * @namebuf:	receives the region's name, KSYM_NAME_LEN bytes
 *
 * Module text is left to module_address_lookup(), which names it by the
 * module's own symbols: where a module has none, the address stays
 * unnamed (a bare address for %pS, and kprobes refuse it), as it was
 * before modules were registered.
 *
 * Return: the length of the name written to @namebuf if a registered
 * region other than module text or not_text contains @addr, else 0 (the
 * kallsyms lookup convention).
 */
int dyntext_address_lookup(unsigned long addr, unsigned long *size,
			   unsigned long *off, char *namebuf)
{
	const struct dyntext *dt;
	int ret = 0;

	rcu_read_lock();
	dt = dyntext_tree_find(DYNTEXT_TREE_OOL, addr);
	if (!dt)
		dt = dyntext_tree_find(DYNTEXT_TREE_BPF, addr);
	if (dt && !dt->class->not_text) {
		ret = strscpy(namebuf, dt->name, KSYM_NAME_LEN);
		if (ret < 0)
			ret = KSYM_NAME_LEN - 1;
		if (size)
			*size = dt->end - dt->start;
		if (off)
			*off = addr - dt->start;
	}
	rcu_read_unlock();
	return ret;
}

/* The next listed entry of kallsyms rank @rank after @dt (NULL: the head). */
static struct dyntext *dyntext_next_listed(struct dyntext *dt,
					   unsigned int rank)
{
	struct list_head *head = &dyntext_lists[rank];
	struct list_head *p = dt ? &dt->lnode : head;

	for (p = rcu_dereference(list_next_rcu(p)); p != head;
	     p = rcu_dereference(list_next_rcu(p))) {
		dt = list_entry(p, struct dyntext, lnode);
		if (dyntext_listed(dt))
			return dt;
	}
	return NULL;
}

/* The listed entry after @dt in /proc/kallsyms order; *@rank follows it. */
static struct dyntext *dyntext_next_kallsym(struct dyntext *dt,
					    unsigned int *rank)
{
	dt = dyntext_next_listed(dt, *rank);
	while (!dt && ++*rank < DYNTEXT_KALLSYMS_NR_RANKS)
		dt = dyntext_next_listed(NULL, *rank);
	return dt;
}

#ifdef CONFIG_DYNTEXT_KUNIT_TEST
static void dyntext_iter_step(struct dyntext_iter *it)
{
	it->steps++;
}
#else
static void dyntext_iter_step(struct dyntext_iter *it)
{
}
#endif

/**
 * dyntext_get_kallsym - the @symnum-th listed region, for /proc/kallsyms
 * @it:		cursor, zeroed before the first call of a walk
 * @symnum:	index among the listed regions, in /proc/kallsyms order: by
 *		the class's kallsyms rank, then in registration order
 * @value:	receives the start address
 * @type:	receives the symbol type letter
 * @name:	receives the name, KSYM_NAME_LEN bytes
 * @owner:	receives the owner tag
 * @owner_len:	size of @owner
 *
 * A walk with increasing @symnum goes over the list once per rank
 * (%DYNTEXT_KALLSYMS_NR_RANKS): the cursor remembers the last entry (whose
 * class gives the rank), and stays valid until a region is deleted, which restarts the
 * count from the head of the list.
 *
 * Return: 0, or -ERANGE past the last listed region.
 */
int dyntext_get_kallsym(struct dyntext_iter *it, unsigned int symnum,
			unsigned long *value, char *type, char *name,
			char *owner, size_t owner_len)
{
	struct dyntext *dt;
	unsigned int idx, rank;
	unsigned long gen;
	int ret = -ERANGE;

	rcu_read_lock();
	gen = READ_ONCE(dyntext_gen);
	if (it->cur && it->gen == gen && it->idx <= symnum) {
		dt = it->cur;
		idx = it->idx;
		rank = dt->class->kallsyms_rank;
	} else {
		rank = 0;
		dt = dyntext_next_kallsym(NULL, &rank);
		idx = 0;
		dyntext_iter_step(it);
	}
	while (dt && idx < symnum) {
		dt = dyntext_next_kallsym(dt, &rank);
		idx++;
		dyntext_iter_step(it);
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

/**
 * dyntext_cursor_start - start a walk over the registry
 * @c: the walk's cursor, owned by the caller
 *
 * The walk covers the regions registered now (@c->end is the registry's
 * sequence number: see dyntext_in_walk()); regions added later are
 * announced by their own register records.  The cursor holds no reference
 * into the registry: the caller may drop it at any time, and an
 * unfinished walk costs the registry nothing.  Process context.
 */
void dyntext_cursor_start(struct dyntext_cursor *c)
{
	spin_lock_bh(&dyntext_lock);
	c->end = dyntext_seq;
	spin_unlock_bh(&dyntext_lock);
	c->next_seq = 0;
	c->active = true;
}

/**
 * dyntext_cursor_stop - end a walk before it is complete
 * @c: a cursor, active or not
 *
 * Only marks the cursor inactive, so that dyntext_cursor_walk() refuses
 * it: the registry keeps nothing of a walk.
 */
void dyntext_cursor_stop(struct dyntext_cursor *c)
{
	c->active = false;
}

/**
 * dyntext_cursor_walk - call a function for every region a walk covers
 * @c:		a cursor that dyntext_cursor_start() started
 * @ops:	what to call (struct dyntext_walk_ops)
 * @arg:	passed to @ops' functions
 *
 * Visits the regions in registration order, a small batch per hold of the
 * lock, so that a large registry does not keep bottom halves disabled for
 * long: a hold steps over at most %DYNTEXT_WALK_BATCH entries, and finds
 * where the walk stopped by its sequence number in O(log n), whatever was
 * deleted in between.  Each hold ends with @ops->flush, if any, still
 * under the lock.  When @ops->visit or @ops->flush returns an error, the
 * walk stops and the cursor stays on the region @ops->visit failed on, or
 * on the one @ops->flush names: the next call starts with it.  When
 * @ops->flush returns %DYNTEXT_WALK_HOLD_FULL, the hold ends and the next
 * one starts with the region it names.  The walk is
 * consistent with concurrent add and delete:
 *
 * - @ops sees a region only while it is registered, so its unregister
 *   record (written once a delete removed it under the same lock) comes
 *   after whatever @ops emitted, while its register record (written once
 *   the add dropped the lock) may come before or after;
 * - a region registered before the walk started and still registered when
 *   it ends is visited exactly once (once successfully, if the walk stopped
 *   on it and was resumed); one deleted during the walk at most once, and
 *   then before its unregister record;
 * - a region added after the walk started is not visited: its register
 *   record announces it.
 *
 * Every region is visited, whether /proc/kallsyms lists it or not, as
 * every region is announced.  Process context only; the caller's fatal
 * signals stop the walk between holds.
 *
 * Return: 0 once the walk is complete (the cursor is then stopped), the
 * first error @ops returned, or -EINTR if a fatal signal stopped the walk;
 * the cursor stays active on error.
 */
int dyntext_cursor_walk(struct dyntext_cursor *c,
			const struct dyntext_walk_ops *ops, void *arg)
{
	struct dyntext *dt;
	unsigned int n;
	int ret = 0, err;
	bool more;

	might_sleep();
	if (WARN_ON_ONCE(!c->active))
		return -EINVAL;
	spin_lock_bh(&dyntext_lock);
	for (;;) {
		/* Where the last batch stopped, whatever was deleted since. */
		dt = dyntext_seq_ceil(c->next_seq);
		for (n = 0; !ret && n < DYNTEXT_WALK_BATCH; n++) {
			if (!dt || !dyntext_in_walk(dt, c->end))
				break;
			ret = ops->visit(dt, c->end, arg);
			/* A region @visit failed on is its first on resume. */
			if (!ret) {
				c->next_seq = dt->seq + 1;
				dt = dyntext_next(dt);
			}
		}
		more = false;
		if (ops->flush) {
			/* May move c->next_seq back, to a region of this hold. */
			err = ops->flush(arg, &c->next_seq);
			if (err == DYNTEXT_WALK_HOLD_FULL)
				more = true;
			else if (err)
				ret = err;
		}
		if (ret || (!more && (!dt || !dyntext_in_walk(dt, c->end))))
			break;
		spin_unlock_bh(&dyntext_lock);
		if (fatal_signal_pending(current))
			ret = -EINTR;
		cond_resched();
		spin_lock_bh(&dyntext_lock);
		if (ret)
			break;
	}
	spin_unlock_bh(&dyntext_lock);
	if (!ret)
		c->active = false;
	return ret;
}

/**
 * dyntext_check - verify the registry's internal consistency
 * @nr: if not NULL, receives the number of registered regions
 *
 * Walks the list, both copies of each latch tree and the index by sequence
 * number under the lock: the same number of entries in the list and in
 * each copy, every entry in the tree of its ksymbol type and inside that
 * tree's bounds, trees sorted and disjoint, every entry found by a lookup
 * of its first and last byte, the index in the list's order.  For
 * tests and debugging (also behind /sys/kernel/debug/dyntext/check);
 * O(n log n).
 *
 * Return: 0 if consistent, -EUCLEAN otherwise.
 */
int dyntext_check(unsigned int *nr)
{
	unsigned int n_list = 0, n_tree[2] = { 0, 0 }, n_seq = 0;
	unsigned long prev_end;
	u64 prev_seq = 0;
	struct dyntext *dt;
	struct rb_node *rb;
	int ret = 0, i, t;

	spin_lock_bh(&dyntext_lock);
	for (i = 0; i < ARRAY_SIZE(dyntext_lists); i++) {
		list_for_each_entry(dt, &dyntext_lists[i], lnode) {
			n_list++;
			if (dt->end <= dt->start ||
			    dt->class->kallsyms_rank != i ||
			    dyntext_find_any(dt->start) != dt ||
			    dyntext_find_any(dt->end - 1) != dt)
				ret = -EUCLEAN;
		}
	}
	for (t = 0; t < ARRAY_SIZE(dyntext_trees); t++) {
		struct dyntext_tree *tree = &dyntext_trees[t];

		for (i = 0; i < 2; i++) {
			unsigned long lo = ULONG_MAX, hi = 0;

			prev_end = 0;
			rb = rb_first(&tree->root.tree[i]);
			for (; rb; rb = rb_next(rb)) {
				dt = container_of(rb, struct dyntext,
						  tnode.node[i]);
				if (dt->start < prev_end ||
				    !dyntext_registered(dt) ||
				    dyntext_tree_of(dt) != t)
					ret = -EUCLEAN;
				lo = min(lo, dt->start);
				prev_end = dt->end;
				hi = dyntext_tree_end(t, dt);
				n_tree[i]++;
			}
			/* The bounds are exactly those of what it holds. */
			if (tree->lo != lo || tree->hi != hi)
				ret = -EUCLEAN;
		}
	}
	/* The index by sequence number: every entry, in registration order. */
	for (rb = rb_first(&dyntext_by_seq); rb; rb = rb_next(rb), n_seq++) {
		dt = rb_entry(rb, struct dyntext, snode);
		if (dt->seq <= prev_seq || dt->seq > dyntext_seq ||
		    !dyntext_registered(dt))
			ret = -EUCLEAN;
		prev_seq = dt->seq;
	}
	if (n_list != dyntext_nr || n_tree[0] != dyntext_nr ||
	    n_tree[1] != dyntext_nr || n_seq != dyntext_nr)
		ret = -EUCLEAN;
	if (nr)
		*nr = dyntext_nr;
	spin_unlock_bh(&dyntext_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(dyntext_check);

#ifdef CONFIG_DYNTEXT_DEBUGFS
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
