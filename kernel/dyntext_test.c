// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the dynamic text registry.  They check its internal
 * state too (the trees, the lock, the overlap check), which
 * kernel/dyntext_internal.h declares for them.  Built in, not a module:
 * they check what kernel_text_address(), kallsyms_lookup() and
 * kallsyms_lookup_size_offset() answer, which modules cannot call.
 *
 * The regions registered here are ranges of a vmalloc'ed buffer: the
 * registry never executes or reads the text, and a real allocation keeps
 * the ranges clear of anything else in the address space.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/buildid.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/dyntext.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <asm/sections.h>

#include "dyntext_internal.h"

#define DT_TEST_OWNER "dyntext_kunit"

static bool dt_test_listed_flag = true;

static bool dt_test_listed(void)
{
	return READ_ONCE(dt_test_listed_flag);
}

static const struct dyntext_class dt_test_class = {
	.owner		= DT_TEST_OWNER,
	.kallsyms_rank	= DYNTEXT_KALLSYMS_BPF,
	.ksym_type	= PERF_RECORD_KSYMBOL_TYPE_OOL,
	.sym_type	= 't',
	.listed		= dt_test_listed,
};

/* The same with BPF's ksymbol type: its regions go to BPF's tree. */
static const struct dyntext_class dt_test_bpf_class = {
	.owner		= DT_TEST_OWNER,
	.kallsyms_rank	= DYNTEXT_KALLSYMS_BPF,
	.ksym_type	= PERF_RECORD_KSYMBOL_TYPE_BPF,
	.sym_type	= 't',
	.listed		= dt_test_listed,
};

/* A module's text: its own symbols name it, /proc/kallsyms lists those. */
static const struct dyntext_class dt_test_module_class = {
	.owner		= DT_TEST_OWNER,
	.ksym_type	= PERF_RECORD_KSYMBOL_TYPE_MODULE,
	.sym_type	= 't',
	.not_in_kallsyms = true,
};

/*
 * BPF programs loaded without CAP_BPF: announced and holding their range,
 * but not kernel text for lookups.
 */
static const struct dyntext_class dt_test_not_text_class = {
	.owner		= DT_TEST_OWNER,
	.ksym_type	= PERF_RECORD_KSYMBOL_TYPE_BPF,
	.sym_type	= 't',
	.not_in_kallsyms = true,
	.not_text	= true,
};

/* No tree for it: refused. */
static const struct dyntext_class dt_test_untyped_class = {
	.owner		= DT_TEST_OWNER,
	.ksym_type	= PERF_RECORD_KSYMBOL_TYPE_UNKNOWN,
	.sym_type	= 't',
};

struct dt_test_region {
	struct dyntext	dt;
	char		name[32];
};

struct dt_test_ctx {
	unsigned char		*buf;
	size_t			size;
	struct dt_test_region	*r;
	unsigned int		nr;
	unsigned int		base_nr;
};

static int dt_test_init(struct kunit *test)
{
	struct dt_test_ctx *ctx;
	unsigned int i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->nr = 10000;
	ctx->size = PAGE_SIZE * 64;
	ctx->buf = vmalloc(ctx->size);
	KUNIT_ASSERT_NOT_NULL(test, ctx->buf);
	ctx->r = vzalloc(sizeof(*ctx->r) * ctx->nr);
	KUNIT_ASSERT_NOT_NULL(test, ctx->r);
	for (i = 0; i < ctx->nr; i++)
		INIT_LIST_HEAD(&ctx->r[i].dt.lnode);
	KUNIT_ASSERT_EQ(test, 0, dyntext_check(&ctx->base_nr));
	test->priv = ctx;
	return 0;
}

static void dt_test_exit(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	unsigned int i, nr;

	for (i = 0; i < ctx->nr; i++)
		if (dyntext_registered(&ctx->r[i].dt))
			dyntext_del(&ctx->r[i].dt);
	synchronize_rcu();
	KUNIT_EXPECT_EQ(test, 0, dyntext_check(&nr));
	KUNIT_EXPECT_EQ(test, ctx->base_nr, nr);
	vfree(ctx->r);
	vfree(ctx->buf);
	WRITE_ONCE(dt_test_listed_flag, true);
}

/* Region @i covers [buf + off, buf + off + len). */
static struct dyntext *dt_test_region(struct dt_test_ctx *ctx, unsigned int i,
				      size_t off, size_t len)
{
	struct dt_test_region *r = &ctx->r[i];

	snprintf(r->name, sizeof(r->name), "dyntext_kunit_%u", i);
	dyntext_init(&r->dt, (unsigned long)ctx->buf + off, len, r->name,
		     &dt_test_class);
	return &r->dt;
}

static void dt_test_consistent(struct kunit *test, unsigned int expect_nr)
{
	struct dt_test_ctx *ctx = test->priv;
	unsigned int nr;

	KUNIT_EXPECT_EQ(test, 0, dyntext_check(&nr));
	KUNIT_EXPECT_EQ(test, ctx->base_nr + expect_nr, nr);
}

static void dyntext_test_boundaries(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	unsigned long start = (unsigned long)ctx->buf + 256;
	char namebuf[KSYM_NAME_LEN];
	unsigned long size, off;
	struct dyntext *dt;

	dt = dt_test_region(ctx, 0, 256, 64);
	KUNIT_EXPECT_FALSE(test, dyntext_registered(dt));
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(dt));
	KUNIT_EXPECT_TRUE(test, dyntext_registered(dt));

	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, dt, dyntext_find(start));
	KUNIT_EXPECT_PTR_EQ(test, dt, dyntext_find(start + 63));
	KUNIT_EXPECT_NULL(test, dyntext_find(start + 64));
	KUNIT_EXPECT_NULL(test, dyntext_find(start - 1));
	rcu_read_unlock();
	KUNIT_EXPECT_TRUE(test, is_dyntext_address(start));
	KUNIT_EXPECT_TRUE(test, is_dyntext_address(start + 63));
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(start + 64));
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(start - 1));

	KUNIT_ASSERT_EQ(test, 15, dyntext_address_lookup(start + 63, &size,
							 &off, namebuf));
	KUNIT_EXPECT_STREQ(test, "dyntext_kunit_0", namebuf);
	KUNIT_EXPECT_EQ(test, 64UL, size);
	KUNIT_EXPECT_EQ(test, 63UL, off);
	KUNIT_EXPECT_EQ(test, 0, dyntext_address_lookup(start + 64, &size,
							&off, namebuf));

	/* What unwinders and %pS see. */
	KUNIT_EXPECT_TRUE(test, kernel_text_address(start));
	KUNIT_EXPECT_TRUE(test, kernel_text_address(start + 63));
	KUNIT_EXPECT_FALSE(test, kernel_text_address(start + 64));
	sprint_symbol(namebuf, start + 63);
	KUNIT_EXPECT_STREQ(test, "dyntext_kunit_0+0x3f/0x40", namebuf);
	dt_test_consistent(test, 1);

	KUNIT_EXPECT_EQ(test, 0, dyntext_del(dt));
	KUNIT_EXPECT_FALSE(test, dyntext_registered(dt));
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(start));
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(start + 63));
	dt_test_consistent(test, 0);
}

static void dyntext_test_misuse(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	unsigned long base = (unsigned long)ctx->buf;
	char *longname;
	struct dyntext *a, *b;

	a = dt_test_region(ctx, 0, 1024, 256);
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(a));

	/* Double add of the same entry. */
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(a));

	/* Overlaps: same range, left, right, inside, around. */
	b = dt_test_region(ctx, 1, 1024, 256);
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(b));
	b = dt_test_region(ctx, 1, 1024 - 16, 17);
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(b));
	b = dt_test_region(ctx, 1, 1024 + 255, 16);
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(b));
	b = dt_test_region(ctx, 1, 1024 + 8, 8);
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(b));
	b = dt_test_region(ctx, 1, 512, 2048);
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(b));
	KUNIT_EXPECT_FALSE(test, dyntext_registered(b));
	dt_test_consistent(test, 1);

	/* Adjacent on both sides is fine. */
	b = dt_test_region(ctx, 1, 1024 - 16, 16);
	KUNIT_EXPECT_EQ(test, 0, dyntext_add(b));
	b = dt_test_region(ctx, 2, 1024 + 256, 16);
	KUNIT_EXPECT_EQ(test, 0, dyntext_add(b));
	dt_test_consistent(test, 3);

	/* Empty and wrapping ranges. */
	b = dt_test_region(ctx, 3, 4096, 0);
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(b));
	b = dt_test_region(ctx, 3, 4096, 0);
	b->start = ULONG_MAX - 15;
	b->end = b->start + 32;
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(b));

	/* More code bytes than the region holds; all of it is fine. */
	b = dt_test_region(ctx, 3, 4096, 16);
	dyntext_set_text_len(b, 17);
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(b));
	KUNIT_EXPECT_FALSE(test, dyntext_registered(b));
	dyntext_set_text_len(b, 16);
	KUNIT_EXPECT_EQ(test, 0, dyntext_add(b));
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(b));

	/* A build-id too long or without bytes; the longest allowed works. */
	b = dt_test_region(ctx, 3, 4096, 16);
	dyntext_set_build_id(b, ctx->buf, BUILD_ID_SIZE_MAX + 1);
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(b));
	dyntext_set_build_id(b, NULL, BUILD_ID_SIZE_MAX);
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(b));
	KUNIT_EXPECT_FALSE(test, dyntext_registered(b));
	dyntext_set_build_id(b, ctx->buf, BUILD_ID_SIZE_MAX);
	KUNIT_EXPECT_EQ(test, 0, dyntext_add(b));
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(b));

	/* Names: NULL, empty, too long; the longest allowed works. */
	b = dt_test_region(ctx, 3, 4096, 16);
	b->name = NULL;
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(b));
	b->name = "";
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(b));
	longname = kunit_kzalloc(test, KSYM_NAME_LEN + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, longname);
	memset(longname, 'x', KSYM_NAME_LEN);
	b->name = longname;
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(b));
	longname[KSYM_NAME_LEN - 1] = '\0';
	KUNIT_EXPECT_EQ(test, 0, dyntext_add(b));
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(b));
	b->class = NULL;
	b->name = "dyntext_kunit_noclass";
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(b));
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(NULL));

	/* Deleting what is not registered, or twice. */
	b = dt_test_region(ctx, 4, 8192, 16);
	KUNIT_EXPECT_EQ(test, -ENOENT, dyntext_del(b));
	KUNIT_EXPECT_EQ(test, -ENOENT, dyntext_del(NULL));
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(a));
	KUNIT_EXPECT_EQ(test, -ENOENT, dyntext_del(a));
	dt_test_consistent(test, 2);
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(base + 1024));
	KUNIT_EXPECT_TRUE(test, is_dyntext_address(base + 1024 - 16));
	KUNIT_EXPECT_TRUE(test, is_dyntext_address(base + 1024 + 256));
}

/* Walk /proc/kallsyms' view and collect this test's regions in order. */
static unsigned int dt_test_walk(struct kunit *test, struct dyntext_iter *it,
				 unsigned long *addrs, unsigned int max)
{
	unsigned int symnum, n = 0;
	unsigned long value;
	char type, owner[64];
	char *name;

	name = kunit_kmalloc(test, KSYM_NAME_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, name);
	for (symnum = 0; ; symnum++) {
		if (dyntext_get_kallsym(it, symnum, &value, &type, name,
					owner, sizeof(owner)))
			break;
		if (strcmp(owner, DT_TEST_OWNER))
			continue;
		KUNIT_EXPECT_EQ(test, 't', type);
		if (n < max)
			addrs[n] = value;
		n++;
	}
	return n;
}

static void dyntext_test_iteration(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	struct dyntext_iter it = {};
	unsigned long addrs[8], value;
	unsigned int i, symnum;
	char type, owner[64];
	struct dyntext *dt;
	char *name;
	int ret;

	name = kunit_kmalloc(test, KSYM_NAME_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, name);

	/* Registration order, not address order. */
	for (i = 0; i < 5; i++) {
		dt = dt_test_region(ctx, i, (4 - i) * 64, 32);
		KUNIT_ASSERT_EQ(test, 0, dyntext_add(dt));
	}
	KUNIT_EXPECT_EQ(test, 5U, dt_test_walk(test, &it, addrs, 8));
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, (unsigned long)ctx->buf + (4 - i) * 64,
				addrs[i]);

	/* A delete mid-walk invalidates the cursor; the walk restarts. */
	memset(&it, 0, sizeof(it));
	for (symnum = 0; ; symnum++) {
		ret = dyntext_get_kallsym(&it, symnum, &value, &type, name,
					  owner, sizeof(owner));
		KUNIT_ASSERT_EQ(test, 0, ret);
		if (!strcmp(owner, DT_TEST_OWNER))
			break;
	}
	KUNIT_EXPECT_STREQ(test, "dyntext_kunit_0", name);
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(&ctx->r[1].dt));
	ret = dyntext_get_kallsym(&it, symnum + 1, &value, &type, name,
				  owner, sizeof(owner));
	KUNIT_ASSERT_EQ(test, 0, ret);
	KUNIT_EXPECT_STREQ(test, "dyntext_kunit_2", name);
	ret = dyntext_get_kallsym(&it, symnum, &value, &type, name, owner,
				  sizeof(owner));
	KUNIT_ASSERT_EQ(test, 0, ret);
	KUNIT_EXPECT_STREQ(test, "dyntext_kunit_0", name);

	/* An added region shows up at the end of a walk in progress. */
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(dt_test_region(ctx, 5, 4096, 8)));
	KUNIT_EXPECT_EQ(test, 5U, dt_test_walk(test, &it, addrs, 8));
	KUNIT_EXPECT_EQ(test, (unsigned long)ctx->buf + 4096, addrs[4]);

	/* Unlisted classes are not walked but are still found. */
	WRITE_ONCE(dt_test_listed_flag, false);
	memset(&it, 0, sizeof(it));
	KUNIT_EXPECT_EQ(test, 0U, dt_test_walk(test, &it, addrs, 8));
	KUNIT_EXPECT_TRUE(test, is_dyntext_address((unsigned long)ctx->buf));
	WRITE_ONCE(dt_test_listed_flag, true);
	dt_test_consistent(test, 5);
}

/*
 * Calls dyntext_get_kallsym() as a /proc/kallsyms read does, from index
 * @from until -ERANGE or @to: each index twice, as seq_file shows the line
 * that did not fit in one read() again at the start of the next.  Returns
 * the first index not walked.
 */
static unsigned int dt_test_read(struct kunit *test, struct dyntext_iter *it,
				 unsigned int from, unsigned int to)
{
	unsigned int symnum;
	unsigned long value;
	char type, owner[64];
	char *name;

	name = kunit_kmalloc(test, KSYM_NAME_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, name);
	for (symnum = from; symnum < to; symnum++) {
		if (dyntext_get_kallsym(it, symnum, &value, &type, name,
					owner, sizeof(owner)))
			break;
		KUNIT_ASSERT_EQ(test, 0,
				dyntext_get_kallsym(it, symnum, &value, &type,
						    name, owner,
						    sizeof(owner)));
	}
	return symnum;
}

/*
 * A full /proc/kallsyms walk takes one list step per listed region: each
 * call resumes from the region the call before returned.  Counted in
 * steps, not time, so that a walk restarting from the head for every line
 * (the same output, but quadratic, as bpf_get_kallsym() used to walk the
 * BPF list) fails here.  A delete during the walk restarts it once.
 */
static void dyntext_test_kallsyms_linear(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	const size_t len = ctx->size / ctx->nr;
	struct dyntext_iter it = {};
	unsigned int i, listed, half;
	struct dyntext *dt;

	for (i = 0; i < ctx->nr; i++) {
		dt = dt_test_region(ctx, i, i * len, len);
		KUNIT_ASSERT_EQ(test, 0, dyntext_add(dt));
	}

	listed = dt_test_read(test, &it, 0, UINT_MAX);
	KUNIT_EXPECT_GE(test, listed, ctx->nr);
	/* One step to the first region, one per index after it, one past. */
	KUNIT_EXPECT_EQ(test, (unsigned long)listed + 1, it.steps);

	memset(&it, 0, sizeof(it));
	half = dt_test_read(test, &it, 0, listed / 2);
	KUNIT_EXPECT_EQ(test, listed / 2, half);
	KUNIT_ASSERT_EQ(test, 0, dyntext_del(&ctx->r[0].dt));
	KUNIT_EXPECT_EQ(test, listed - 1, dt_test_read(test, &it, half,
						       UINT_MAX));
	/* The restart walks the first half again (half + 1 steps). */
	KUNIT_EXPECT_EQ(test, (unsigned long)listed + half, it.steps);
	dt_test_consistent(test, ctx->nr - 1);
}

/* Classes of each kallsyms rank, and one past the last rank. */
#define DT_TEST_RANK_CLASS(type, rank) {		\
	.owner		= DT_TEST_OWNER,		\
	.ksym_type	= PERF_RECORD_KSYMBOL_TYPE_##type,	\
	.sym_type	= 't',				\
	.kallsyms_rank	= rank,				\
}

static const struct dyntext_class dt_test_rank_class[] = {
	DT_TEST_RANK_CLASS(OOL, DYNTEXT_KALLSYMS_FTRACE),
	DT_TEST_RANK_CLASS(BPF, DYNTEXT_KALLSYMS_BPF),
	DT_TEST_RANK_CLASS(OOL, DYNTEXT_KALLSYMS_KPROBES),
	DT_TEST_RANK_CLASS(OOL, DYNTEXT_KALLSYMS_OPTPROBES),
	DT_TEST_RANK_CLASS(OOL, DYNTEXT_KALLSYMS_NR_RANKS),
};

/*
 * /proc/kallsyms lists the regions rank by rank in the order it has always
 * used (ftrace trampolines, BPF, kprobe pages, optprobe pages; see
 * update_iter_mod()), ftrace trampolines and both kinds of kprobe pages
 * newest first, BPF in registration order but for a region added with
 * dyntext_add_before() (a subprogram before its program); with the cursor
 * and without it.
 */
static void dyntext_test_kallsyms_order(struct kunit *test)
{
	static const unsigned int rank_of[] = { 2, 0, 1, 0, 2, 1, 3, 3, 1 };
	static const unsigned int want[] = { 3, 1, 2, 8, 5, 4, 0, 7, 6 };
	static const unsigned int after_del[] = { 1, 2, 8, 5, 4, 0, 7, 6 };
	struct dt_test_ctx *ctx = test->priv;
	struct dyntext_iter it = {};
	unsigned long addrs[12];
	unsigned int i, n;
	struct dt_test_region *r;

	for (i = 0; i < ARRAY_SIZE(rank_of); i++) {
		r = &ctx->r[i];
		snprintf(r->name, sizeof(r->name), "dyntext_kunit_%u", i);
		dyntext_init(&r->dt, (unsigned long)ctx->buf + i * 64, 32,
			     r->name, &dt_test_rank_class[rank_of[i]]);
		/* Region 8 is listed before region 5, which came before. */
		if (i == 8) {
			/* Not before a region of another rank. */
			KUNIT_EXPECT_EQ(test, -EINVAL,
					dyntext_add_before(&r->dt, &ctx->r[4].dt));
			KUNIT_ASSERT_EQ(test, 0,
					dyntext_add_before(&r->dt, &ctx->r[5].dt));
		} else {
			KUNIT_ASSERT_EQ(test, 0, dyntext_add(&r->dt));
		}
	}
	n = dt_test_walk(test, &it, addrs, ARRAY_SIZE(addrs));
	KUNIT_EXPECT_EQ(test, (unsigned int)ARRAY_SIZE(want), n);
	for (i = 0; i < ARRAY_SIZE(want) && i < n; i++)
		KUNIT_EXPECT_EQ(test, (unsigned long)ctx->buf + want[i] * 64,
				addrs[i]);

	/* A delete invalidates the cursor: the count restarts, same order. */
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(&ctx->r[3].dt));
	n = dt_test_walk(test, &it, addrs, ARRAY_SIZE(addrs));
	KUNIT_EXPECT_EQ(test, (unsigned int)ARRAY_SIZE(after_del), n);
	for (i = 0; i < ARRAY_SIZE(after_del) && i < n; i++)
		KUNIT_EXPECT_EQ(test,
				(unsigned long)ctx->buf + after_del[i] * 64,
				addrs[i]);

	/* A rank past the last is refused; so is listing before nothing. */
	r = &ctx->r[10];
	snprintf(r->name, sizeof(r->name), "dyntext_kunit_10");
	dyntext_init(&r->dt, (unsigned long)ctx->buf + 1024, 32, r->name,
		     &dt_test_rank_class[4]);
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(&r->dt));
	dyntext_init(&r->dt, (unsigned long)ctx->buf + 1024, 32, r->name,
		     &dt_test_rank_class[1]);
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add_before(&r->dt, &ctx->r[3].dt));
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add_before(&r->dt, NULL));
	dt_test_consistent(test, 8);
}

/*
 * Each ksymbol type has a tree of its own, with bounds: lookups, overlap
 * checks, the walk and the consistency check must still see one registry.
 */
/*
 * Module text is text (unwinders, kernel_text_address()), but only the
 * module's symbols name it (module_address_lookup()): where it has none,
 * %pS prints a bare address and kallsyms_lookup_size_offset() fails, so
 * kprobes refuse the address, as before module text was registered.
 */
static void dyntext_test_module_unnamed(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	unsigned long start = (unsigned long)ctx->buf + 512;
	char namebuf[KSYM_NAME_LEN], expect[32];
	unsigned long size = 1, off = 2;
	struct dyntext *dt;

	dt = dt_test_region(ctx, 0, 512, 128);
	dt->class = &dt_test_module_class;
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(dt));
	KUNIT_EXPECT_EQ(test, DYNTEXT_TREE_MODULE, dyntext_tree_of(dt));
	KUNIT_EXPECT_TRUE(test, is_dyntext_address(start + 64));
	KUNIT_EXPECT_TRUE(test, kernel_text_address(start + 64));

	KUNIT_EXPECT_EQ(test, 0, dyntext_address_lookup(start + 64, &size,
							&off, namebuf));
	KUNIT_EXPECT_EQ(test, 1UL, size);
	KUNIT_EXPECT_EQ(test, 2UL, off);
	KUNIT_EXPECT_EQ(test, 0,
			kallsyms_lookup_size_offset(start + 64, &size, &off));
	sprint_symbol(namebuf, start + 64);
	snprintf(expect, sizeof(expect), "0x%lx", start + 64);
	KUNIT_EXPECT_STREQ(test, expect, namebuf);
	dt_test_consistent(test, 1);
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(dt));
}

static void dyntext_test_not_text(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	unsigned long start = (unsigned long)ctx->buf + 512;
	char namebuf[KSYM_NAME_LEN], expect[32];
	struct dyntext *dt, *found;

	dt = dt_test_region(ctx, 0, 512, 128);
	dt->class = &dt_test_not_text_class;
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(dt));
	KUNIT_EXPECT_TRUE(test, dyntext_registered(dt));
	KUNIT_EXPECT_EQ(test, DYNTEXT_TREE_BPF, dyntext_tree_of(dt));

	/* No lookup finds it: first byte, last byte, BPF's end address. */
	rcu_read_lock();
	KUNIT_EXPECT_NULL(test, dyntext_find(start));
	KUNIT_EXPECT_NULL(test, dyntext_find(start + 127));
	KUNIT_EXPECT_NULL(test, dyntext_find(start + 128));
	KUNIT_EXPECT_PTR_EQ(test, dt, dyntext_find_any(start + 127));
	rcu_read_unlock();
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(start + 64));
	KUNIT_EXPECT_FALSE(test, kernel_text_address(start + 64));
	KUNIT_EXPECT_EQ(test, 0, dyntext_address_lookup(start + 64, NULL,
							NULL, namebuf));
	sprint_symbol(namebuf, start + 64);
	snprintf(expect, sizeof(expect), "0x%lx", start + 64);
	KUNIT_EXPECT_STREQ(test, expect, namebuf);

	/*
	 * Its range is still its own: dyntext_add() refuses what
	 * dyntext_overlap() finds (asked directly here, as a refused add
	 * prints a rate-limited warning).  And the registry is consistent.
	 */
	spin_lock_bh(&dyntext_lock);
	found = dyntext_overlap(start + 64, start + 192);
	spin_unlock_bh(&dyntext_lock);
	KUNIT_EXPECT_PTR_EQ(test, dt, found);
	dt_test_consistent(test, 1);

	KUNIT_EXPECT_EQ(test, 0, dyntext_del(dt));
	dt_test_consistent(test, 0);
}

static void dyntext_test_trees(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	unsigned long base = (unsigned long)ctx->buf;
	struct dyntext_iter it = {};
	unsigned long addrs[4];
	struct dyntext *few, *many, *b;
	struct dyntext_tree *bpf;

	few = dt_test_region(ctx, 0, 1024, 256);
	many = dt_test_region(ctx, 1, 1024 + 256, 256);
	many->class = &dt_test_bpf_class;
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(many));
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(few));
	KUNIT_EXPECT_EQ(test, DYNTEXT_TREE_BPF, dyntext_tree_of(many));
	KUNIT_EXPECT_EQ(test, DYNTEXT_TREE_OOL, dyntext_tree_of(few));
	bpf = &dyntext_trees[DYNTEXT_TREE_BPF];
	dt_test_consistent(test, 2);

	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, few, dyntext_find(base + 1024 + 255));
	KUNIT_EXPECT_PTR_EQ(test, many, dyntext_find(base + 1024 + 256));
	KUNIT_EXPECT_PTR_EQ(test, many, dyntext_find(base + 1024 + 511));
	/* A BPF region answers for its end address. */
	KUNIT_EXPECT_PTR_EQ(test, many, dyntext_find(base + 1024 + 512));
	KUNIT_EXPECT_NULL(test, dyntext_find(base + 1024 + 513));
	rcu_read_unlock();
	KUNIT_EXPECT_TRUE(test, kernel_text_address(base + 1024 + 300));

	/* Overlaps across the trees, either way round. */
	b = dt_test_region(ctx, 2, 1024 + 128, 256);
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(b));
	b->class = &dt_test_bpf_class;
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(b));
	b = dt_test_region(ctx, 2, 1024 + 500, 16);
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(b));
	KUNIT_EXPECT_FALSE(test, dyntext_registered(b));
	dt_test_consistent(test, 2);

	/* One walk, in registration order, over both trees' regions. */
	KUNIT_EXPECT_EQ(test, 2U, dt_test_walk(test, &it, addrs, 4));
	KUNIT_EXPECT_EQ(test, base + 1024 + 256, addrs[0]);
	KUNIT_EXPECT_EQ(test, base + 1024, addrs[1]);

	/* The bounds follow adds and deletes at either end. */
	b = dt_test_region(ctx, 2, 8192, 64);
	b->class = &dt_test_bpf_class;
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(b));
	if (bpf->lo >= base && bpf->hi <= base + ctx->size) {
		/* Only this test's BPF regions: exact values. */
		KUNIT_EXPECT_EQ(test, base + 1024 + 256, bpf->lo);
		/* A BPF region answers for its end address. */
		KUNIT_EXPECT_EQ(test, base + 8192 + 65, bpf->hi);
	}
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, b, dyntext_find(base + 8192 + 64));
	KUNIT_EXPECT_NULL(test, dyntext_find(base + 8192 + 65));
	rcu_read_unlock();
	dt_test_consistent(test, 3);
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(b));
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(base + 8192));
	dt_test_consistent(test, 2);

	KUNIT_EXPECT_EQ(test, 0, dyntext_del(many));
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(base + 1024 + 256));
	KUNIT_EXPECT_TRUE(test, is_dyntext_address(base + 1024));
	dt_test_consistent(test, 1);

	/* A class with a ksymbol type that has no tree. */
	b = dt_test_region(ctx, 3, 4096, 16);
	b->class = &dt_test_untyped_class;
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(b));
	KUNIT_EXPECT_FALSE(test, dyntext_registered(b));
	dt_test_consistent(test, 1);
}

/*
 * Text pokes inside BPF and out-of-line regions reach perf's code streams;
 * inside module text (perf reads the file) and outside any region they do
 * not, nor after the region is gone.
 */
static void dyntext_test_code_streamed(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	unsigned long base = (unsigned long)ctx->buf;
	struct dyntext *ool, *bpf, *mod;

	ool = dt_test_region(ctx, 0, 0, 256);
	bpf = dt_test_region(ctx, 1, 512, 256);
	bpf->class = &dt_test_bpf_class;
	mod = dt_test_region(ctx, 2, 1024, 256);
	mod->class = &dt_test_module_class;
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(ool));
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(bpf));
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(mod));

	KUNIT_EXPECT_EQ(test, PERF_RECORD_KSYMBOL_TYPE_OOL, dyntext_code_streamed(base));
	KUNIT_EXPECT_EQ(test, PERF_RECORD_KSYMBOL_TYPE_OOL, dyntext_code_streamed(base + 255));
	KUNIT_EXPECT_EQ(test, 0, dyntext_code_streamed(base + 256));
	KUNIT_EXPECT_EQ(test, PERF_RECORD_KSYMBOL_TYPE_BPF,
			dyntext_code_streamed(base + 512 + 100));
	KUNIT_EXPECT_EQ(test, 0, dyntext_code_streamed(base + 1024));
	KUNIT_EXPECT_EQ(test, 0, dyntext_code_streamed(base + 1024 + 100));
	KUNIT_EXPECT_TRUE(test, is_dyntext_address(base + 1024 + 100));

	KUNIT_EXPECT_EQ(test, 0, dyntext_del(bpf));
	KUNIT_EXPECT_EQ(test, 0, dyntext_code_streamed(base + 512 + 100));
	dt_test_consistent(test, 2);
}

static void dyntext_test_many(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	const size_t len = ctx->size / ctx->nr;
	struct dyntext_iter it = {};
	char namebuf[KSYM_NAME_LEN];
	unsigned long addrs[1], size, off, a;
	unsigned int i, bad = 0;
	struct dyntext *dt;

	KUNIT_ASSERT_GE(test, len, (size_t)4);
	/*
	 * Interleave the order: even slots first, then odd ones, which go
	 * to the other tree: every lookup below crosses between the two.
	 */
	/* len - 1 bytes each: a gap where each BPF region ends. */
	for (i = 0; i < ctx->nr; i += 2) {
		dt = dt_test_region(ctx, i, i * len, len - 1);
		KUNIT_ASSERT_EQ(test, 0, dyntext_add(dt));
	}
	for (i = 1; i < ctx->nr; i += 2) {
		dt = dt_test_region(ctx, i, i * len, len - 1);
		dt->class = &dt_test_bpf_class;
		KUNIT_ASSERT_EQ(test, 0, dyntext_add(dt));
	}
	dt_test_consistent(test, ctx->nr);
	KUNIT_EXPECT_EQ(test, ctx->nr, dt_test_walk(test, &it, addrs, 1));
	KUNIT_EXPECT_EQ(test, (unsigned long)ctx->buf, addrs[0]);

	for (i = 0; i < ctx->nr; i++) {
		a = (unsigned long)ctx->buf + i * len;
		if (!dyntext_address_lookup(a + len - 2, &size, &off,
					    namebuf) ||
		    strcmp(namebuf, ctx->r[i].name) || size != len - 1 ||
		    off != len - 2)
			bad++;
	}
	KUNIT_EXPECT_EQ(test, 0U, bad);

	for (i = 0; i < ctx->nr; i += 3)
		KUNIT_ASSERT_EQ(test, 0, dyntext_del(&ctx->r[i].dt));
	dt_test_consistent(test, ctx->nr - (ctx->nr + 2) / 3);
	for (i = 0, bad = 0; i < ctx->nr; i++) {
		a = (unsigned long)ctx->buf + i * len;
		if (is_dyntext_address(a) != !!(i % 3))
			bad++;
	}
	KUNIT_EXPECT_EQ(test, 0U, bad);
}

struct dt_test_reader {
	struct dt_test_ctx	*ctx;
	unsigned int		slots;
	size_t			len;
	atomic_t		stop;
	unsigned long		lookups;
	unsigned long		hits;
	unsigned long		bad;
	struct completion	started;
	struct completion	done;
};

static int dt_test_reader_fn(void *arg)
{
	struct dt_test_reader *rd = arg;
	unsigned long a, seed = 1;
	struct dyntext *dt;
	unsigned int slot;

	while (!atomic_read(&rd->stop)) {
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		slot = (seed >> 33) % rd->slots;
		a = (unsigned long)rd->ctx->buf + slot * rd->len +
		    (seed >> 13) % rd->len;
		rcu_read_lock();
		dt = dyntext_find(a);
		if (dt) {
			rd->hits++;
			if (dt != &rd->ctx->r[slot].dt || a < dt->start ||
			    a >= dt->end)
				rd->bad++;
		}
		rcu_read_unlock();
		if (!rd->lookups++)
			complete(&rd->started);
		if (!(rd->lookups & 1023))
			cond_resched();
	}
	complete(&rd->done);
	return 0;
}

/* Start @fn(@arg) in a kthread on another CPU than this one, if any. */
static int dt_test_run_elsewhere(int (*fn)(void *arg), void *arg,
				 const char *name)
{
	struct task_struct *t = kthread_create(fn, arg, "%s", name);
	int cpu;

	if (IS_ERR(t))
		return PTR_ERR(t);
	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	if (cpu < nr_cpu_ids)
		kthread_bind(t, cpu);
	wake_up_process(t);
	return 0;
}

static void dyntext_test_concurrent(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	struct dt_test_reader rd = {
		.ctx = ctx,
		.slots = 64,
		.len = 64,
	};
	unsigned int round, slot, ops = 0;
	struct dyntext *dt;

	init_completion(&rd.started);
	init_completion(&rd.done);
	KUNIT_ASSERT_EQ(test, 0, dt_test_run_elsewhere(dt_test_reader_fn, &rd,
						       "dyntext_kunit_rd"));
	/*
	 * The writer starts once the reader runs: its CPU may be slow to run
	 * it (a vCPU of a busy host, an emulator running its vCPUs in turn),
	 * and 200 rounds could otherwise end before its first lookup.
	 */
	if (!wait_for_completion_timeout(&rd.started, 10 * HZ)) {
		atomic_set(&rd.stop, 1);
		wait_for_completion(&rd.done);
		KUNIT_FAIL(test, "the reader did not run in 10 s");
		return;
	}

	for (round = 0; round < 200; round++) {
		for (slot = round & 1; slot < rd.slots; slot += 2, ops++) {
			dt = dt_test_region(ctx, slot, slot * rd.len, rd.len);
			KUNIT_ASSERT_EQ(test, 0, dyntext_add(dt));
		}
		for (slot = round & 1; slot < rd.slots; slot += 2, ops++)
			KUNIT_ASSERT_EQ(test, 0, dyntext_del(&ctx->r[slot].dt));
		/* Entries are reused: let readers finish with them first. */
		synchronize_rcu();
		cond_resched();
	}
	atomic_set(&rd.stop, 1);
	wait_for_completion(&rd.done);
	kunit_info(test, "%u adds/deletes against %lu lookups (%lu hits)\n",
		   ops, rd.lookups, rd.hits);
	KUNIT_EXPECT_EQ(test, 0UL, rd.bad);
	KUNIT_EXPECT_GT(test, rd.lookups, 0UL);
	dt_test_consistent(test, 0);
}

/* An entry of its own allocation, freed after a grace period. */
struct dt_test_dyn {
	struct dyntext	dt;
	char		name[32];
};

struct dt_test_looker {
	unsigned long		start;
	size_t			span;
	atomic_t		stop;
	unsigned long		lookups;
	unsigned long		named;
	unsigned long		walked;
	unsigned long		bad;
	struct completion	done;
};

/* kallsyms_lookup() of @a named region @n, @off into it: is it right? */
static bool dt_test_named_right(struct dt_test_looker *lk, unsigned long a,
				const char *name, unsigned long size,
				unsigned long off, const char *modname)
{
	unsigned int n;

	return sscanf(name, "dyntext_kunit_%u", &n) == 1 &&
	       n % 64 == (a - lk->start) / 64 && off == (a - lk->start) % 64 &&
	       size == 64 && !modname;
}

/*
 * What unwinders, printk and /proc/kallsyms do, while another CPU deletes
 * and frees the regions they find: kernel_text_address(), kallsyms_lookup()
 * and %pS by address, and a /proc/kallsyms walk whose cursor
 * (struct dyntext_iter) is kept across sleeps, as seq_file keeps it between
 * reads.  What they name must be the region at that address.
 */
static int dt_test_looker_fn(void *arg)
{
	struct dt_test_looker *lk = arg;
	char *name, *sym, *modname, owner[64], type;
	unsigned long a, size, off, value, seed = 7;
	struct dyntext_iter it = {};
	unsigned int symnum = 0;

	/* Not on the stack: KASAN's redzones make the frame too large. */
	name = kmalloc(KSYM_NAME_LEN + KSYM_SYMBOL_LEN, GFP_KERNEL);
	sym = name ? name + KSYM_NAME_LEN : NULL;
	while (name && !atomic_read(&lk->stop)) {
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		a = lk->start + (seed >> 17) % lk->span;
		kernel_text_address(a);
		if (kallsyms_lookup(a, &size, &off, &modname, name)) {
			lk->named++;
			if (!dt_test_named_right(lk, a, name, size, off, modname))
				lk->bad++;
		}
		snprintf(sym, KSYM_SYMBOL_LEN, "%pS", (void *)a);
		if (strncmp(sym, "dyntext_kunit_", 14) && strncmp(sym, "0x", 2))
			lk->bad++;
		if (dyntext_get_kallsym(&it, symnum++, &value, &type, name,
					owner, sizeof(owner))) {
			symnum = 0;
			memset(&it, 0, sizeof(it));
		} else if (!strcmp(owner, DT_TEST_OWNER)) {
			lk->walked++;
			if (strncmp(name, "dyntext_kunit_", 14))
				lk->bad++;
		}
		lk->lookups++;
		if (!(lk->lookups & 63))
			cond_resched();
	}
	kfree(name);
	complete(&lk->done);
	return 0;
}

/*
 * Lookups racing with deletes whose entries (and names) are freed right
 * after the grace period, as BPF frees its programs: with KASAN the freed
 * memory is poisoned at once, so a lookup or a kallsyms cursor that
 * touched an entry after its grace period would be reported as a
 * use-after-free.
 */
static void dyntext_test_lookup_vs_free(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	struct dt_test_looker lk = {
		.start	= (unsigned long)ctx->buf,
		.span	= 64 * 64,
	};
	struct dt_test_dyn *d[64];
	const unsigned int rounds = 100;
	unsigned int round, i, n, ops = 0;
	unsigned long seen;

	init_completion(&lk.done);
	KUNIT_ASSERT_EQ(test, 0, dt_test_run_elsewhere(dt_test_looker_fn, &lk,
						       "dyntext_kunit_lk"));

	for (round = 0; round < rounds; round++) {
		for (n = 0; n < ARRAY_SIZE(d); n++) {
			d[n] = kunit_kzalloc(test, sizeof(*d[n]), GFP_KERNEL);
			if (!d[n])
				break;
			snprintf(d[n]->name, sizeof(d[n]->name),
				 "dyntext_kunit_%u", round * 64 + n);
			dyntext_init(&d[n]->dt, lk.start + n * 64, 64,
				     d[n]->name, &dt_test_class);
			if (dyntext_add(&d[n]->dt)) {
				kunit_kfree(test, d[n]);
				break;
			}
			ops++;
		}
		/*
		 * Let the looker find them, then take them away: wait for
		 * 64 lookups (at most about 20 ms), as the looker's CPU
		 * may be slow to run it (a vCPU thread of a busy host); the
		 * first round waits until it has named a region and walked
		 * one (at most 10 s), so that what is checked below does
		 * not depend on how soon its CPU ran it.
		 */
		seen = READ_ONCE(lk.lookups);
		for (i = 0; i < 20 && READ_ONCE(lk.lookups) - seen < 64; i++)
			usleep_range(1000, 2000);
		for (i = 0; !round && i < 5000 &&
		     !(READ_ONCE(lk.named) && READ_ONCE(lk.walked)); i++)
			usleep_range(1000, 2000);
		for (i = 0; i < n; i++)
			dyntext_del(&d[i]->dt);
		synchronize_rcu();
		for (i = 0; i < n; i++)
			kunit_kfree(test, d[i]);
	}
	atomic_set(&lk.stop, 1);
	wait_for_completion(&lk.done);
	kunit_info(test, "%u regions added and freed against %lu lookups (%lu named, %lu walked)\n",
		   ops, lk.lookups, lk.named, lk.walked);
	KUNIT_EXPECT_EQ(test, rounds * (unsigned int)ARRAY_SIZE(d), ops);
	KUNIT_EXPECT_EQ(test, 0UL, lk.bad);
	KUNIT_EXPECT_GT(test, lk.named, 0UL);
	KUNIT_EXPECT_GT(test, lk.walked, 0UL);
	dt_test_consistent(test, 0);
}

/* A whole walk with a cursor of its own, as the replay does it. */
static int dyntext_walk(int (*fn)(const struct dyntext *dt, u64 end,
				  void *arg),
			void *arg)
{
	const struct dyntext_walk_ops ops = { .visit = fn };
	struct dyntext_cursor c = {};
	int ret;

	dyntext_cursor_start(&c);
	ret = dyntext_cursor_walk(&c, &ops, arg);
	dyntext_cursor_stop(&c);
	return ret;
}

/* dyntext_walk() callback: record the test's regions, stop at @stop_at. */
struct dt_test_walk_state {
	struct dt_test_ctx	*ctx;
	unsigned int		seen;
	unsigned int		stop_at;
	unsigned int		out_of_order;
	unsigned long		prev;
	u64			end;
};

static int dt_test_walk_fn(const struct dyntext *dt, u64 end, void *arg)
{
	struct dt_test_walk_state *w = arg;

	lockdep_assert_held(&dyntext_lock);
	w->end = end;
	if (dt->class != &dt_test_class)
		return 0;
	/* Registered in address order below: the walk keeps that order. */
	if (dt->start <= w->prev)
		w->out_of_order++;
	w->prev = dt->start;
	if (++w->seen == w->stop_at)
		return -E2BIG;
	return 0;
}

/*
 * dyntext_walk(): every region once, in registration order, across many
 * batches; a callback's error stops it; regions /proc/kallsyms does not
 * list are visited too (they are announced); regions registered later are
 * outside the walk's @end.
 */
static void dyntext_test_walk(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	struct dt_test_walk_state w = { .ctx = ctx };
	const unsigned int nr = 200;
	struct dyntext *late;
	unsigned int i;

	for (i = 0; i < nr; i++)
		KUNIT_ASSERT_EQ(test, 0,
				dyntext_add(dt_test_region(ctx, i, i * 64, 32)));
	KUNIT_EXPECT_EQ(test, 0, dyntext_walk(dt_test_walk_fn, &w));
	KUNIT_EXPECT_EQ(test, nr, w.seen);
	KUNIT_EXPECT_EQ(test, 0U, w.out_of_order);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_TRUE(test, dyntext_in_walk(&ctx->r[i].dt, w.end));

	late = dt_test_region(ctx, nr, nr * 64, 32);
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(late));
	KUNIT_EXPECT_FALSE(test, dyntext_in_walk(late, w.end));

	memset(&w, 0, sizeof(w));
	w.stop_at = 77;
	KUNIT_EXPECT_EQ(test, -E2BIG, dyntext_walk(dt_test_walk_fn, &w));
	KUNIT_EXPECT_EQ(test, 77U, w.seen);

	/* Deletes between walks: the survivors, once each, still in order. */
	for (i = 0; i < nr; i += 3)
		KUNIT_EXPECT_EQ(test, 0, dyntext_del(&ctx->r[i].dt));
	memset(&w, 0, sizeof(w));
	KUNIT_EXPECT_EQ(test, 0, dyntext_walk(dt_test_walk_fn, &w));
	KUNIT_EXPECT_EQ(test, nr + 1 - (nr + 2) / 3, w.seen);
	KUNIT_EXPECT_EQ(test, 0U, w.out_of_order);

	WRITE_ONCE(dt_test_listed_flag, false);
	memset(&w, 0, sizeof(w));
	KUNIT_EXPECT_EQ(test, 0, dyntext_walk(dt_test_walk_fn, &w));
	KUNIT_EXPECT_EQ(test, nr + 1 - (nr + 2) / 3, w.seen);
	WRITE_ONCE(dt_test_listed_flag, true);
	dt_test_consistent(test, nr + 1 - (nr + 2) / 3);
}

/*
 * A double add through the producers' own call pattern, dyntext_init()
 * then dyntext_add(), with the same range and with a new one: refused,
 * and the registered entry is left as it was, in the list and the trees.
 */
static void dyntext_test_double_add(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	unsigned long base = (unsigned long)ctx->buf;
	struct dyntext *dt = &ctx->r[0].dt;

	dyntext_init(dt, base + 1024, 64, "dyntext_kunit_twice", &dt_test_class);
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(dt));
	dyntext_init(dt, base + 1024, 64, "dyntext_kunit_twice", &dt_test_class);
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(dt));
	dyntext_init(dt, base + 8192, 64, "dyntext_kunit_moved", &dt_test_class);
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(dt));
	KUNIT_EXPECT_TRUE(test, dyntext_registered(dt));
	KUNIT_EXPECT_EQ(test, base + 1024, dt->start);
	KUNIT_EXPECT_STREQ(test, "dyntext_kunit_twice", dt->name);
	KUNIT_EXPECT_TRUE(test, is_dyntext_address(base + 1024));
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(base + 8192));
	/* Nor do the code length and build-id of a registered entry change. */
	dyntext_set_text_len(dt, 4096);
	dyntext_set_build_id(dt, ctx->buf, BUILD_ID_SIZE_MAX);
	KUNIT_EXPECT_EQ(test, 0U, dt->text_len);
	KUNIT_EXPECT_NULL(test, dt->build_id);
	KUNIT_EXPECT_EQ(test, 0, dt->build_id_size);
	dt_test_consistent(test, 1);
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(dt));
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(base + 1024));
	dt_test_consistent(test, 0);
}

/*
 * A return address equal to the end of a BPF image belongs to it (commit
 * 66d9111f3517), unless another region starts there: regions may be
 * adjacent (struct_ops trampolines packed back to back, a FineIBT prefix
 * ending where its program starts), and an address belongs first to the
 * region that starts at it.  Other kinds do not answer for their end.
 */
static void dyntext_test_bpf_end(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	unsigned long base = (unsigned long)ctx->buf;
	char namebuf[KSYM_NAME_LEN];
	unsigned long size, off;
	struct dyntext *bpf, *ool, *b, *c;

	bpf = dt_test_region(ctx, 0, 1024, 256);
	bpf->class = &dt_test_bpf_class;
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(bpf));
	ool = dt_test_region(ctx, 1, 4096, 256);
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(ool));

	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, bpf, dyntext_find(base + 1024 + 256));
	KUNIT_EXPECT_NULL(test, dyntext_find(base + 1024 + 257));
	KUNIT_EXPECT_NULL(test, dyntext_find(base + 1023));
	KUNIT_EXPECT_NULL(test, dyntext_find(base + 4096 + 256));
	rcu_read_unlock();
	KUNIT_EXPECT_TRUE(test, is_dyntext_address(base + 1024 + 256));
	KUNIT_EXPECT_TRUE(test, kernel_text_address(base + 1024 + 256));
	KUNIT_EXPECT_FALSE(test, is_dyntext_address(base + 4096 + 256));
	KUNIT_EXPECT_EQ(test, 15, dyntext_address_lookup(base + 1024 + 256,
							 &size, &off,
							 namebuf));
	KUNIT_EXPECT_STREQ(test, "dyntext_kunit_0", namebuf);
	KUNIT_EXPECT_EQ(test, 256UL, size);
	KUNIT_EXPECT_EQ(test, 256UL, off);

	/* A BPF region where the first ends: the address is its start. */
	b = dt_test_region(ctx, 2, 1024 + 256, 16);
	b->class = &dt_test_bpf_class;
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(b));
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, bpf, dyntext_find(base + 1024 + 255));
	KUNIT_EXPECT_PTR_EQ(test, b, dyntext_find(base + 1024 + 256));
	KUNIT_EXPECT_PTR_EQ(test, b, dyntext_find(base + 1024 + 272));
	KUNIT_EXPECT_NULL(test, dyntext_find(base + 1024 + 273));
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, 15, dyntext_address_lookup(base + 1024 + 256,
							 &size, &off,
							 namebuf));
	KUNIT_EXPECT_STREQ(test, "dyntext_kunit_2", namebuf);
	KUNIT_EXPECT_EQ(test, 16UL, size);
	KUNIT_EXPECT_EQ(test, 0UL, off);
	/* Overlaps are still refused, by a byte either way. */
	c = dt_test_region(ctx, 3, 1024 + 255, 2);
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(c));
	c->class = &dt_test_bpf_class;
	KUNIT_EXPECT_EQ(test, -EEXIST, dyntext_add(c));
	dt_test_consistent(test, 3);
	/* Gone again: the end answers for the first region once more. */
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(b));
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, bpf, dyntext_find(base + 1024 + 256));
	rcu_read_unlock();

	/* Other kinds may start there too, and win the address. */
	b = dt_test_region(ctx, 2, 1024 + 256, 16);
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(b));
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, b, dyntext_find(base + 1024 + 256));
	rcu_read_unlock();
	/* And a BPF region may end where another region starts. */
	c = dt_test_region(ctx, 3, 4096 - 16, 16);
	c->class = &dt_test_bpf_class;
	KUNIT_ASSERT_EQ(test, 0, dyntext_add(c));
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, c, dyntext_find(base + 4095));
	KUNIT_EXPECT_PTR_EQ(test, ool, dyntext_find(base + 4096));
	rcu_read_unlock();
	dt_test_consistent(test, 4);
}

/*
 * Run-time text comes from the module or vmalloc area and never lies in
 * the kernel image: a kernel function, a user address or a range running
 * from the vmalloc area over the image is refused, and nothing of it is
 * found or named.
 */
static void dyntext_test_core_text(struct kunit *test)
{
	unsigned long start = ALIGN((unsigned long)_stext, PAGE_SIZE) + PAGE_SIZE;
	struct dt_test_ctx *ctx = test->priv;
	struct dyntext *dt = &ctx->r[0].dt;
	char buf[KSYM_SYMBOL_LEN];

	dyntext_init(dt, start, PAGE_SIZE, "dyntext_kunit_core", &dt_test_class);
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(dt));
	KUNIT_EXPECT_FALSE(test, dyntext_registered(dt));
	rcu_read_lock();
	KUNIT_EXPECT_NULL(test, dyntext_find(start + 8));
	rcu_read_unlock();
	sprint_symbol(buf, start + 8);
	KUNIT_EXPECT_NULL(test, strstr(buf, "dyntext_kunit_core"));

	dyntext_init(dt, PAGE_SIZE, PAGE_SIZE, "dyntext_kunit_user",
		     &dt_test_class);
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(dt));

	/* Over the image where the vmalloc area lies below it (x86-64). */
	dyntext_init(dt, (unsigned long)ctx->buf,
		     (unsigned long)_end + PAGE_SIZE - (unsigned long)ctx->buf,
		     "dyntext_kunit_over", &dt_test_class);
	KUNIT_EXPECT_EQ(test, -EINVAL, dyntext_add(dt));
	KUNIT_EXPECT_FALSE(test, dyntext_registered(dt));
	dt_test_consistent(test, 0);
}

/*
 * A walk under churn, as a replay resumed after each full buffer sees it:
 * every region that stays is visited once, in order, and none after its
 * delete.  The walk stops every 50 regions (not a multiple of the batch),
 * the region it visited last and the one after it are deleted, and the
 * walk resumes.  Each hold of the lock ends with @flush, which records
 * how many regions the hold visited and how long it took since its first:
 * at most one batch, however large the registry.
 */
struct dt_test_churn {
	struct dt_test_ctx	*ctx;
	unsigned int		nr;
	unsigned int		seen;
	unsigned int		bad;
	int			last;
	unsigned int		run;
	unsigned int		in_hold;
	u64			hold_t0;
	unsigned int		max_steps;
	u64			max_ns;
	unsigned long		*visited;
	unsigned long		*deleted;
};

#define DT_TEST_CHURN_STOP	50

static int dt_test_churn_visit(const struct dyntext *dt, u64 end, void *arg)
{
	struct dt_test_churn *c = arg;
	unsigned int i;

	if (!c->in_hold++)
		c->hold_t0 = ktime_get_ns();
	if (dt->class != &dt_test_class)
		return 0;
	/* Stopped here: the next call begins with this region. */
	if (c->run == DT_TEST_CHURN_STOP)
		return -EAGAIN;
	c->run++;
	i = container_of(dt, struct dt_test_region, dt) - c->ctx->r;
	if (test_bit(i, c->deleted) || test_and_set_bit(i, c->visited))
		c->bad++;
	c->seen++;
	c->last = i;
	return 0;
}

static int dt_test_churn_flush(void *arg, u64 *next_seq)
{
	struct dt_test_churn *c = arg;

	if (c->in_hold) {
		c->max_steps = max(c->max_steps, c->in_hold);
		c->max_ns = max(c->max_ns, ktime_get_ns() - c->hold_t0);
	}
	c->in_hold = 0;
	return 0;
}

static const struct dyntext_walk_ops dt_test_churn_ops = {
	.visit = dt_test_churn_visit,
	.flush = dt_test_churn_flush,
};

/* Register @nr regions of 8 bytes, walk them under churn, check. */
static void dt_test_churn_run(struct kunit *test, unsigned int nr)
{
	struct dt_test_ctx big = {}, *ctx = &big;
	struct dt_test_churn c = { .ctx = ctx, .nr = nr, .last = -1 };
	unsigned int i, missed = 0, deleted = 0, calls = 0;
	struct dyntext_cursor cur = {};
	int ret;

	ctx->buf = vmalloc(nr * 16);
	ctx->r = vzalloc(sizeof(*ctx->r) * nr);
	c.visited = kunit_kzalloc(test, BITS_TO_LONGS(nr) * sizeof(long),
				  GFP_KERNEL);
	c.deleted = kunit_kzalloc(test, BITS_TO_LONGS(nr) * sizeof(long),
				  GFP_KERNEL);
	if (!ctx->buf || !ctx->r || !c.visited || !c.deleted) {
		KUNIT_FAIL(test, "no memory for %u regions", nr);
		goto out;
	}
	for (i = 0; i < nr; i++) {
		struct dt_test_region *r = &ctx->r[i];

		snprintf(r->name, sizeof(r->name), "dyntext_kunit_%u", i);
		dyntext_init(&r->dt, (unsigned long)ctx->buf + i * 16, 8,
			     r->name, &dt_test_class);
		if (dyntext_add(&r->dt))
			break;
	}
	KUNIT_EXPECT_EQ(test, nr, i);
	dyntext_cursor_start(&cur);
	for (;;) {
		ret = dyntext_cursor_walk(&cur, &dt_test_churn_ops, &c);
		calls++;
		if (ret != -EAGAIN || calls > nr)
			break;
		/* The region visited last and the next one go away. */
		c.run = 0;
		for (i = c.last; i < c.last + 2 && i < nr; i++)
			if (!dyntext_del(&ctx->r[i].dt))
				set_bit(i, c.deleted);
	}
	KUNIT_EXPECT_EQ(test, 0, ret);
	KUNIT_EXPECT_FALSE(test, cur.active);
	for (i = 0; i < nr; i++) {
		missed += !test_bit(i, c.deleted) && !test_bit(i, c.visited);
		deleted += test_bit(i, c.deleted);
	}
	kunit_info(test, "%u regions: %u visited, %u deleted in %u calls, longest hold %u steps, %llu ns\n",
		   nr, c.seen, deleted, calls, c.max_steps, c.max_ns);
	KUNIT_EXPECT_EQ(test, 0U, c.bad);
	KUNIT_EXPECT_EQ(test, 0U, missed);
	KUNIT_EXPECT_GT(test, deleted, nr / 40);
	KUNIT_EXPECT_LE(test, c.max_steps, DYNTEXT_WALK_BATCH);
	for (i = 0; i < nr; i++)
		if (dyntext_registered(&ctx->r[i].dt))
			dyntext_del(&ctx->r[i].dt);
	synchronize_rcu();
out:
	vfree(ctx->r);
	vfree(ctx->buf);
}

/* The longest hold does not grow with the registry: 3,000 vs 30,000. */
static void dyntext_test_walk_churn(struct kunit *test)
{
	dt_test_churn_run(test, 3000);
	dt_test_churn_run(test, 30000);
	dt_test_consistent(test, 0);
}

/* Fails with -ENOSPC on every @fail_every-th call; counts successes. */
struct dt_test_resume {
	unsigned int	calls;
	unsigned int	fail_every;
	unsigned int	ok;
	unsigned long	*done;
	struct dt_test_ctx *ctx;
	unsigned int	twice;
};

static int dt_test_resume_fn(const struct dyntext *dt, u64 end, void *arg)
{
	struct dt_test_resume *r = arg;
	unsigned int i;

	if (dt->class != &dt_test_class)
		return 0;
	if (!(++r->calls % r->fail_every))
		return -ENOSPC;
	i = container_of(dt, struct dt_test_region, dt) - r->ctx->r;
	if (test_and_set_bit(i, r->done))
		r->twice++;
	r->ok++;
	return 0;
}

static const struct dyntext_walk_ops dt_test_resume_ops = {
	.visit = dt_test_resume_fn,
};

/*
 * A flush that writes only part of what its hold visited (a ring buffer
 * with room for a few records) stops the walk and names the first region
 * it did not write: the next call resumes with it.
 */
struct dt_test_flush {
	struct dt_test_ctx	*ctx;
	const struct dyntext	*held[DYNTEXT_WALK_BATCH];
	unsigned int		nr_held;
	unsigned int		room;
	unsigned int		written;
	unsigned int		twice;
	unsigned int		overflow;
	unsigned int		holds;
	bool			hold_full;	/* go on in a new hold */
	unsigned long		*done;
};

static int dt_test_flush_visit(const struct dyntext *dt, u64 end, void *arg)
{
	struct dt_test_flush *f = arg;

	if (dt->class != &dt_test_class)
		return 0;
	if (f->nr_held == DYNTEXT_WALK_BATCH) {
		f->overflow++;
		return -E2BIG;
	}
	f->held[f->nr_held++] = dt;
	return 0;
}

static int dt_test_flush_flush(void *arg, u64 *next_seq)
{
	struct dt_test_flush *f = arg;
	unsigned int i, n = min(f->nr_held, f->room);

	f->holds++;
	for (i = 0; i < n; i++) {
		const struct dyntext *dt = f->held[i];

		if (test_and_set_bit(container_of(dt, struct dt_test_region,
						  dt) - f->ctx->r, f->done))
			f->twice++;
		f->written++;
	}
	if (n < f->nr_held) {
		*next_seq = f->held[n]->seq;
		f->nr_held = 0;
		return f->hold_full ? DYNTEXT_WALK_HOLD_FULL : -ENOSPC;
	}
	f->nr_held = 0;
	return 0;
}

static const struct dyntext_walk_ops dt_test_flush_ops = {
	.visit = dt_test_flush_visit,
	.flush = dt_test_flush_flush,
};

static void dyntext_test_cursor_flush(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	struct dt_test_flush f = { .ctx = ctx, .room = 5 };
	struct dyntext_cursor c = {};
	const unsigned int nr = 100;
	unsigned int i, calls = 0;
	int ret;

	f.done = kunit_kzalloc(test, BITS_TO_LONGS(ctx->nr) * sizeof(long),
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f.done);
	for (i = 0; i < nr; i++)
		KUNIT_ASSERT_EQ(test, 0,
				dyntext_add(dt_test_region(ctx, i, i * 64, 32)));
	dyntext_cursor_start(&c);
	do {
		ret = dyntext_cursor_walk(&c, &dt_test_flush_ops, &f);
		calls++;
	} while (ret == -ENOSPC && calls < 1000);
	KUNIT_EXPECT_EQ(test, 0, ret);
	KUNIT_EXPECT_FALSE(test, c.active);
	KUNIT_EXPECT_EQ(test, nr, f.written);
	KUNIT_EXPECT_EQ(test, 0U, f.twice);
	KUNIT_EXPECT_EQ(test, 0U, f.overflow);
	KUNIT_EXPECT_EQ(test, nr / f.room, calls);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_TRUE(test, test_bit(i, f.done));
	dt_test_consistent(test, nr);
}

/*
 * A flush that ends its hold early (DYNTEXT_WALK_HOLD_FULL, a replay that
 * wrote enough under one hold of the lock) lets the walk go on in the same
 * call from the region it names: every region handled once, in holds of
 * at most @room regions.
 */
static void dyntext_test_cursor_hold_full(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	struct dt_test_flush f = { .ctx = ctx, .room = 3, .hold_full = true };
	struct dyntext_cursor c = {};
	const unsigned int nr = 100;
	unsigned int i;

	f.done = kunit_kzalloc(test, BITS_TO_LONGS(ctx->nr) * sizeof(long),
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f.done);
	for (i = 0; i < nr; i++)
		KUNIT_ASSERT_EQ(test, 0,
				dyntext_add(dt_test_region(ctx, i, i * 64, 32)));
	dyntext_cursor_start(&c);
	KUNIT_EXPECT_EQ(test, 0, dyntext_cursor_walk(&c, &dt_test_flush_ops, &f));
	KUNIT_EXPECT_FALSE(test, c.active);
	KUNIT_EXPECT_EQ(test, nr, f.written);
	KUNIT_EXPECT_EQ(test, 0U, f.twice);
	KUNIT_EXPECT_EQ(test, 0U, f.overflow);
	KUNIT_EXPECT_LE(test, DIV_ROUND_UP(nr, f.room), f.holds);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_TRUE(test, test_bit(i, f.done));
	dt_test_consistent(test, nr);
}

/*
 * A walk that its callback stops (a full ring buffer) resumes on the region
 * it stopped at: every region is handled once, none twice; a region added
 * meanwhile is not visited; dyntext_cursor_stop() ends it early.
 */
static void dyntext_test_cursor_resume(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	struct dt_test_resume r = { .fail_every = 7, .ctx = ctx };
	struct dyntext_cursor c = {};
	const unsigned int nr = 100;
	unsigned int i, calls = 0;
	int ret;

	r.done = kunit_kzalloc(test, BITS_TO_LONGS(ctx->nr) * sizeof(long),
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r.done);
	for (i = 0; i < nr; i++)
		KUNIT_ASSERT_EQ(test, 0,
				dyntext_add(dt_test_region(ctx, i, i * 64, 32)));
	dyntext_cursor_start(&c);
	KUNIT_EXPECT_TRUE(test, c.active);
	KUNIT_ASSERT_EQ(test, 0,
			dyntext_add(dt_test_region(ctx, nr, nr * 64, 32)));
	do {
		ret = dyntext_cursor_walk(&c, &dt_test_resume_ops, &r);
		calls++;
	} while (ret == -ENOSPC && calls < 1000);
	KUNIT_EXPECT_EQ(test, 0, ret);
	KUNIT_EXPECT_FALSE(test, c.active);
	KUNIT_EXPECT_EQ(test, nr, r.ok);
	KUNIT_EXPECT_EQ(test, 0U, r.twice);
	KUNIT_EXPECT_FALSE(test, test_bit(nr, r.done));
	KUNIT_EXPECT_GT(test, calls, nr / 7);

	/* Stopped early: refused from then on. */
	dyntext_cursor_start(&c);
	r.fail_every = 1;
	KUNIT_EXPECT_EQ(test, -ENOSPC, dyntext_cursor_walk(&c, &dt_test_resume_ops,
							   &r));
	dyntext_cursor_stop(&c);
	KUNIT_EXPECT_FALSE(test, c.active);
	KUNIT_EXPECT_EQ(test, 0, dyntext_del(&ctx->r[0].dt));
	dt_test_consistent(test, nr);
}

/*
 * Walks left unfinished (a replay that ended in -ENOSPC, -EBUSY or
 * -EINTR and was never resumed) cost the registry nothing: it keeps no
 * reference to a cursor, so adds and deletes never touch one, however
 * many are left.  Here 1,000 of them are abandoned mid-walk and their
 * memory is poisoned, as if it had been reused; the registry neither
 * reads nor writes it.  A walk started before the deletes resumes where
 * it stopped, on the first region left after it.
 */
static void dyntext_test_cursor_abandoned(struct kunit *test)
{
	struct dt_test_ctx *ctx = test->priv;
	struct dt_test_resume r = { .fail_every = 1, .ctx = ctx };
	const unsigned int nr = 1000, regions = 64;
	struct dyntext_cursor *cs, c = {};
	unsigned int i;

	r.done = kunit_kzalloc(test, BITS_TO_LONGS(ctx->nr) * sizeof(long),
			       GFP_KERNEL);
	cs = kunit_kcalloc(test, nr, sizeof(*cs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r.done);
	KUNIT_ASSERT_NOT_NULL(test, cs);
	for (i = 0; i < regions; i++)
		KUNIT_ASSERT_EQ(test, 0,
				dyntext_add(dt_test_region(ctx, i, i * 64, 32)));
	for (i = 0; i < nr; i++) {
		dyntext_cursor_start(&cs[i]);
		r.calls = 0;
		KUNIT_EXPECT_EQ(test, -ENOSPC,
				dyntext_cursor_walk(&cs[i], &dt_test_resume_ops,
						    &r));
	}
	memset(cs, 0x6b, nr * sizeof(*cs));

	/* A walk of its own, stopped on region 0 after visiting nothing. */
	dyntext_cursor_start(&c);
	r.calls = 0;
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			dyntext_cursor_walk(&c, &dt_test_resume_ops, &r));
	for (i = 0; i < regions / 2; i++)
		KUNIT_EXPECT_EQ(test, 0, dyntext_del(&ctx->r[i].dt));
	KUNIT_ASSERT_EQ(test, 0,
			dyntext_add(dt_test_region(ctx, regions, regions * 64,
						   32)));
	dt_test_consistent(test, regions / 2 + 1);

	/* It resumes on the first region left and visits the rest once. */
	r.fail_every = 1000;
	r.calls = 0;
	r.ok = 0;
	KUNIT_EXPECT_EQ(test, 0, dyntext_cursor_walk(&c, &dt_test_resume_ops, &r));
	KUNIT_EXPECT_EQ(test, regions / 2, r.ok);
	KUNIT_EXPECT_EQ(test, 0U, r.twice);
	for (i = 0; i < regions / 2; i++)
		KUNIT_EXPECT_FALSE(test, test_bit(i, r.done));
	KUNIT_EXPECT_FALSE(test, test_bit(regions, r.done));
}

static struct kunit_case dyntext_test_cases[] = {
	KUNIT_CASE(dyntext_test_cursor_resume),
	KUNIT_CASE(dyntext_test_cursor_abandoned),
	KUNIT_CASE(dyntext_test_cursor_flush),
	KUNIT_CASE(dyntext_test_cursor_hold_full),
	KUNIT_CASE(dyntext_test_double_add),
	KUNIT_CASE(dyntext_test_bpf_end),
	KUNIT_CASE(dyntext_test_core_text),
	KUNIT_CASE(dyntext_test_walk_churn),
	KUNIT_CASE(dyntext_test_boundaries),
	KUNIT_CASE(dyntext_test_misuse),
	KUNIT_CASE(dyntext_test_iteration),
	KUNIT_CASE(dyntext_test_kallsyms_linear),
	KUNIT_CASE(dyntext_test_kallsyms_order),
	KUNIT_CASE(dyntext_test_walk),
	KUNIT_CASE(dyntext_test_trees),
	KUNIT_CASE(dyntext_test_code_streamed),
	KUNIT_CASE(dyntext_test_module_unnamed),
	KUNIT_CASE(dyntext_test_not_text),
	KUNIT_CASE(dyntext_test_many),
	KUNIT_CASE(dyntext_test_concurrent),
	/* Seconds with KASAN and lockdep: 100 rounds of frees under lookups. */
	KUNIT_CASE_SLOW(dyntext_test_lookup_vs_free),
	{}
};

static struct kunit_suite dyntext_test_suite = {
	.name		= "dyntext",
	.init		= dt_test_init,
	.exit		= dt_test_exit,
	.test_cases	= dyntext_test_cases,
};

kunit_test_suite(dyntext_test_suite);
