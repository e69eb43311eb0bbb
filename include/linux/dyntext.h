/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dynamic text registry: one list of the executable regions the kernel
 * creates at run time (JITed BPF programs, trampolines, ...), one lookup
 * for them, and one place that announces them to perf.
 *
 * See Documentation/core-api/dyntext.rst.
 */
#ifndef _LINUX_DYNTEXT_H
#define _LINUX_DYNTEXT_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/rbtree_latch.h>

struct perf_event;
struct dyntext;

/**
 * enum dyntext_kallsyms_rank - where /proc/kallsyms lists a class's regions
 * @DYNTEXT_KALLSYMS_FTRACE: ftrace trampolines, "[__builtin__ftrace]",
 *		newest first
 * @DYNTEXT_KALLSYMS_BPF: BPF programs, trampolines, dispatchers, "[bpf]", in
 *		registration order, a program's subprograms before it
 *		(dyntext_add_before())
 * @DYNTEXT_KALLSYMS_KPROBES: kprobe instruction pages,
 *		"[__builtin__kprobes]", newest first
 * @DYNTEXT_KALLSYMS_OPTPROBES: optprobe instruction pages, newest first,
 *		after every kprobe instruction page
 * @DYNTEXT_KALLSYMS_NR_RANKS: the number of ranks
 *
 * The registry's lines come after the modules' symbols, rank by rank, in
 * the order of sections /proc/kallsyms has always used (see
 * update_iter_mod()) and, within each rank, in the order the producers'
 * own lists kept, so that /proc/kallsyms shows the same lines in the same
 * order for the same objects.
 */
enum dyntext_kallsyms_rank {
	DYNTEXT_KALLSYMS_FTRACE,
	DYNTEXT_KALLSYMS_BPF,
	DYNTEXT_KALLSYMS_KPROBES,
	DYNTEXT_KALLSYMS_OPTPROBES,
	DYNTEXT_KALLSYMS_NR_RANKS
};

/**
 * struct dyntext_class - what all regions of one producer have in common
 * @owner:	tag shown in brackets in /proc/kallsyms ("bpf", ...)
 * @ksym_type:	PERF_RECORD_KSYMBOL_TYPE_* of the records for these regions
 * @sym_type:	symbol type letter shown in /proc/kallsyms ('t')
 * @kallsyms_rank: where /proc/kallsyms lists the regions (enum
 *		dyntext_kallsyms_rank)
 * @not_in_kallsyms: /proc/kallsyms never lists these regions (a module's
 *		text, whose own symbols it lists instead; BPF programs loaded
 *		without CAP_BPF)
 * @not_text:	the regions are announced to perf and no other region may
 *		overlap them, but lookups do not find them: dyntext_find(),
 *		is_dyntext_address() and dyntext_address_lookup() answer as if
 *		they were not registered, so kernel_text_address(), %pS and
 *		bpf_arch_text_poke() do not take them for kernel text (BPF
 *		programs loaded without CAP_BPF, which were never text there)
 * @listed:	optional; /proc/kallsyms lists the regions only while it
 *		returns true (BPF: net.core.bpf_jit_kallsyms and
 *		net.core.bpf_jit_harden, asked when the file is read)
 * @replay:	optional; writes the replay records of a region to @event
 *		itself (PERF_EVENT_IOC_KSYMBOL_REPLAY), for producers that
 *		add records of their own (BPF: PERF_RECORD_BPF_EVENT).  Called
 *		with the walk's @end on the event's CPU, interrupts disabled,
 *		while the walk holds the registry's lock; returns 0 or a
 *		negative error.
 *
 * What /proc/kallsyms lists does not change what perf is told: every
 * registered region is announced with PERF_RECORD_KSYMBOL at add and at
 * delete, to the perf events whose owner may see kernel addresses.
 */
struct dyntext_class {
	const char	*owner;
	u16		ksym_type;
	char		sym_type;
	u8		kallsyms_rank;
	bool		not_in_kallsyms;
	bool		not_text;
	bool		(*listed)(void);
	int		(*replay)(const struct dyntext *dt, u64 end,
				  struct perf_event *event);
};

/**
 * struct dyntext - one registered region of run-time generated text
 * @start:	first byte of the region
 * @end:	one past the last byte
 * @name:	symbol name; the storage belongs to the caller and must stay
 *		unchanged while the region is registered
 * @class:	the producer's class
 * @text_len:	how many bytes from @start hold code when dyntext_add() is
 *		called, which dyntext_add() sends to the perf events that ask
 *		for code (attr.ksymbol_text); 0, the default, for text written
 *		after it (dyntext_set_text_len())
 * @build_id:	the build-id of the file the text was loaded from, which the
 *		register record carries (dyntext_set_build_id()), or NULL;
 *		the storage belongs to the caller, as @name's
 * @build_id_size: its length in bytes
 * @seq:	registration sequence number (unique), set by the registry
 * @tnode:	latch tree node (lock-free lookup), registry-private
 * @lnode:	list node (iteration in registration order), registry-private
 * @snode:	node in the index by @seq (where walks resume),
 *		registry-private
 *
 * Embed it in zeroed memory of the producer's object and prepare it with
 * dyntext_init().  After dyntext_del(), the entry must stay valid for an
 * RCU grace period; the text, read only while it is registered, need not.
 */
struct dyntext {
	unsigned long			start;
	unsigned long			end;
	const char			*name;
	const struct dyntext_class	*class;
	u32				text_len;
	u8				build_id_size;
	const unsigned char		*build_id;
	u64				seq;
	struct latch_tree_node		tnode;
	struct list_head		lnode;
	struct rb_node			snode;
};

/**
 * struct dyntext_iter - cursor of a walk over the registry
 * @cur:	the entry at @idx, valid while @gen is the registry's generation
 * @idx:	index of @cur among the listed entries
 * @gen:	registry generation when @cur was taken
 * @steps:	list steps taken by dyntext_get_kallsym() with this cursor,
 *		counted for the KUnit test that bounds a full walk
 *
 * Zero-initialise it; the walk resumes in O(1) from where it stopped as
 * long as nothing was deleted in between (a delete restarts the count).
 */
struct dyntext_iter {
	struct dyntext	*cur;
	unsigned int	idx;
	unsigned long	gen;
#ifdef CONFIG_DYNTEXT_KUNIT_TEST
	unsigned long	steps;
#endif
};

/**
 * struct dyntext_cursor - a walk over the registry that can be resumed
 * @next_seq:	registry-private: the walk goes on with the first region
 *		registered with this sequence number or a later one
 * @end:	the registry's sequence number when the walk started: the walk
 *		covers the regions registered up to then (dyntext_in_walk())
 * @active:	from dyntext_cursor_start() until the walk is complete or
 *		dyntext_cursor_stop()
 *
 * Zero-initialise it.  The registry keeps no reference to it: it may be
 * freed at any time, active or not.
 */
struct dyntext_cursor {
	u64			next_seq;
	u64			end;
	bool			active;
};

/* Regions a walk visits at most per hold of the registry's lock. */
#define DYNTEXT_WALK_BATCH	32
/* From dyntext_walk_ops' @flush: go on, with *@next_seq, in a new hold. */
#define DYNTEXT_WALK_HOLD_FULL	1

/**
 * struct dyntext_walk_ops - what dyntext_cursor_walk() calls
 * @visit:	for every region the walk covers, under the registry's lock
 *		(bottom halves disabled): must not sleep; returns 0 to go on,
 *		anything else to stop on that region.  Its @end tells
 *		dyntext_in_walk() which regions the walk covers.
 * @flush:	optional; at the end of every hold of the lock, still under
 *		it: the regions @visit accepted in this hold (at most
 *		%DYNTEXT_WALK_BATCH) are still registered.  Returns 0, or an
 *		error that stops the walk; it may then set *@next_seq back to
 *		the sequence number of one of those regions, for the walk to
 *		resume with it.  Or %DYNTEXT_WALK_HOLD_FULL with *@next_seq
 *		set so, to end the hold there and go on with that region in
 *		the next one: what one hold costs stays bounded.
 */
struct dyntext_walk_ops {
	int	(*visit)(const struct dyntext *dt, u64 end, void *arg);
	int	(*flush)(void *arg, u64 *next_seq);
};

#ifdef CONFIG_DYNTEXT
void dyntext_init(struct dyntext *dt, unsigned long start, unsigned long size,
		  const char *name, const struct dyntext_class *class);
void dyntext_set_text_len(struct dyntext *dt, u32 len);
void dyntext_set_build_id(struct dyntext *dt, const unsigned char *id,
			  u8 size);
int dyntext_add(struct dyntext *dt);
int dyntext_add_before(struct dyntext *dt, struct dyntext *next);
int dyntext_del(struct dyntext *dt);
bool dyntext_registered(const struct dyntext *dt);
struct dyntext *dyntext_find(unsigned long addr);
bool is_dyntext_address(unsigned long addr);
u16 dyntext_code_streamed(unsigned long addr);
int dyntext_address_lookup(unsigned long addr, unsigned long *size,
			   unsigned long *off, char *namebuf);
int dyntext_get_kallsym(struct dyntext_iter *it, unsigned int symnum,
			unsigned long *value, char *type, char *name,
			char *owner, size_t owner_len);
int dyntext_check(unsigned int *nr);
void dyntext_cursor_start(struct dyntext_cursor *c);
int dyntext_cursor_walk(struct dyntext_cursor *c,
			const struct dyntext_walk_ops *ops, void *arg);
void dyntext_cursor_stop(struct dyntext_cursor *c);
#else
static inline bool dyntext_registered(const struct dyntext *dt)
{
	return false;
}

static inline struct dyntext *dyntext_find(unsigned long addr)
{
	return NULL;
}

static inline bool is_dyntext_address(unsigned long addr)
{
	return false;
}

static inline u16 dyntext_code_streamed(unsigned long addr)
{
	return 0;
}

static inline int dyntext_address_lookup(unsigned long addr,
					 unsigned long *size,
					 unsigned long *off, char *namebuf)
{
	return 0;
}

static inline void dyntext_cursor_start(struct dyntext_cursor *c)
{
}

static inline int dyntext_cursor_walk(struct dyntext_cursor *c,
				      const struct dyntext_walk_ops *ops,
				      void *arg)
{
	return 0;
}

static inline void dyntext_cursor_stop(struct dyntext_cursor *c)
{
}

static inline int dyntext_get_kallsym(struct dyntext_iter *it,
				      unsigned int symnum,
				      unsigned long *value, char *type,
				      char *name, char *owner,
				      size_t owner_len)
{
	return -ERANGE;
}
#endif

/**
 * dyntext_in_walk - does a walk cover a region?
 * @dt:		a registered region, looked at under the registry's lock
 * @end:	the @end a walk's callback was given
 *
 * Return: true if @dt was registered before the walk started, so that the
 * walk visits it; false if it was registered later and its own register
 * record announces it.
 */
static inline bool dyntext_in_walk(const struct dyntext *dt, u64 end)
{
	return dt->seq <= end;
}

#endif /* _LINUX_DYNTEXT_H */
