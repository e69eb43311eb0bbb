// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit tests of the address index of module symbols
 * (kernel/module/kallsyms.c; what they call of it is VISIBLE_IF_KUNIT).
 * Built in: they need struct module and the module loader's internals.
 *
 * Each case writes a symtab and a strtab by hand, as add_kallsyms()
 * would leave them, and hangs them on a struct module of its own that no
 * list or tree holds.  Its regions are plain address ranges: lookups
 * only compare addresses and never read the text.  Every case checks
 * the answers it knows, then compares find_kallsyms_symbol() with the
 * index and without it (the scan, on a twin of the symtab whose index
 * slots are NULL) at every byte of every region and just around them.
 */
#include <kunit/test.h>
#include <linux/elf.h>
#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include "internal.h"

/* Far from the test's own memory, aligned, and below 4 GiB for 32-bit. */
#define MKI_BASE	0x40000000UL
#define MKI_GAP		0x1000
#define MKI_TEXT_SIZE	0x400
#define MKI_INIT_SIZE	0x100
#define MKI_DATA_SIZE	0x100

/* Where a test symbol's value lies. */
enum mki_region {
	MKI_TEXT,	/* MOD_TEXT */
	MKI_INIT,	/* MOD_INIT_TEXT */
	MKI_DATA,	/* MOD_DATA: only CONFIG_KALLSYMS_ALL looks there */
	MKI_NR_REGIONS,
	MKI_NOWHERE = MKI_NR_REGIONS,	/* value = off, outside of all */
};

static const enum mod_mem_type mki_mem_type[MKI_NR_REGIONS] = {
	[MKI_TEXT] = MOD_TEXT,
	[MKI_INIT] = MOD_INIT_TEXT,
	[MKI_DATA] = MOD_DATA,
};

struct mki_sym {
	const char	*name;
	u8		region;	/* enum mki_region */
	u8		type;	/* STT_* */
	u8		bind;	/* STB_* */
	u16		shndx;	/* 0: a section of the module */
	bool		undef;	/* SHN_UNDEF (shndx ignored) */
	unsigned int	off;	/* from the region's base */
};

#define MKI_SYM(n, r, o, t, b) \
	{ .name = (n), .region = (r), .off = (o), .type = (t), .bind = (b) }
#define MKI_FUNC(n, r, o)	MKI_SYM(n, r, o, STT_FUNC, STB_GLOBAL)
#define MKI_LFUNC(n, r, o)	MKI_SYM(n, r, o, STT_FUNC, STB_LOCAL)
#define MKI_LABEL(n, r, o)	MKI_SYM(n, r, o, STT_NOTYPE, STB_LOCAL)
#define MKI_OBJ(n, r, o)	MKI_SYM(n, r, o, STT_OBJECT, STB_LOCAL)
#define MKI_SHN(n, r, o, ndx) \
	{ .name = (n), .region = (r), .off = (o), .shndx = (ndx) }
#define MKI_UNDEF(n, r, o) \
	{ .name = (n), .region = (r), .off = (o), .undef = true }

struct mki_ctx {
	struct module		*mod;
	struct mod_kallsyms	*init_ks;
	unsigned long		base[MKI_NR_REGIONS];
	unsigned int		size[MKI_NR_REGIONS];
};

static void mki_free_indices(void *mod)
{
	module_ksym_index_free(mod);
}

static struct mki_ctx *mki_ctx(struct kunit *test, unsigned int text_size,
			       unsigned int init_size)
{
	struct mki_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned long base = MKI_BASE;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->mod = kunit_kzalloc(test, sizeof(*c->mod), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->mod);

	c->size[MKI_TEXT] = text_size;
	c->size[MKI_INIT] = init_size;
	c->size[MKI_DATA] = MKI_DATA_SIZE;
	for (int r = 0; r < MKI_NR_REGIONS; r++) {
		struct module_memory *mem = &c->mod->mem[mki_mem_type[r]];

		c->base[r] = base;
		mem->base = (void *)base;
		mem->size = c->size[r];
		base += c->size[r] + MKI_GAP;
	}
	return c;
}

/* Whether add_kallsyms() keeps @s in a normal module's core symtab. */
static bool mki_is_core(const struct mki_sym *s)
{
	return s->name[0] && !s->undef && !s->shndx && s->region != MKI_INIT &&
	       s->region != MKI_NOWHERE;
}

/*
 * A symtab of @syms in their order, behind the null symbol 0: all of
 * them (@core false), or those of the core symtab.
 */
static struct mod_kallsyms *mki_symtab(struct kunit *test, struct mki_ctx *c,
				       const struct mki_sym *syms,
				       unsigned int n, bool core)
{
	struct mod_kallsyms *ks = kunit_kzalloc(test, sizeof(*ks), GFP_KERNEL);
	size_t len, strsize = 1;
	unsigned int i, nsym = 1;
	char *s;

	KUNIT_ASSERT_NOT_NULL(test, ks);
	for (i = 0; i < n; i++)
		strsize += strlen(syms[i].name) + 1;
	ks->symtab = kunit_kcalloc(test, n + 1, sizeof(*ks->symtab), GFP_KERNEL);
	ks->strtab = kunit_kzalloc(test, strsize, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ks->symtab);
	KUNIT_ASSERT_NOT_NULL(test, ks->strtab);

	s = ks->strtab + 1;
	for (i = 0; i < n; i++) {
		const struct mki_sym *src = &syms[i];
		Elf_Sym *dst = &ks->symtab[nsym];

		if (core && !mki_is_core(src))
			continue;
		len = strlen(src->name) + 1;
		dst->st_name = len > 1 ? s - ks->strtab : 0;
		memcpy(s, src->name, len);
		s += len;
		dst->st_info = (src->bind << 4) | src->type;
		dst->st_shndx = src->undef ? SHN_UNDEF : src->shndx ?: 1;
		dst->st_value = src->off;
		if (src->region < MKI_NR_REGIONS)
			dst->st_value += c->base[src->region];
		nsym++;
	}
	ks->num_symtab = nsym;
	return ks;
}

/*
 * Hang the symtabs on the module as add_kallsyms() does: the full one as
 * mod->kallsyms, the core one as mod->core_kallsyms.  The indices built
 * from them are freed at the end of the test, before the symtabs.
 */
static void mki_publish(struct kunit *test, struct mki_ctx *c,
			struct mod_kallsyms *init_ks,
			struct mod_kallsyms *core_ks)
{
	c->init_ks = init_ks;
	c->mod->core_kallsyms = *core_ks;
	rcu_assign_pointer(c->mod->kallsyms, init_ks);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, mki_free_indices,
						  c->mod));
}

/* Load @syms (a livepatch module keeps all in its core symtab) and index. */
static void mki_load(struct kunit *test, struct mki_ctx *c,
		     const struct mki_sym *syms, unsigned int n,
		     bool livepatch)
{
	mki_publish(test, c, mki_symtab(test, c, syms, n, false),
		    mki_symtab(test, c, syms, n, !livepatch));
	module_ksym_index_build(c->mod);
}

static struct mod_ksym_index *mki_index(struct mod_kallsyms *ks, int slot)
{
	return rcu_dereference_protected(ks->text_index[slot], 1);
}

/* The number of addresses in an index, -1 without one. */
static int mki_nr(struct mod_kallsyms *ks, int slot)
{
	struct mod_ksym_index *idx = mki_index(ks, slot);

	return idx ? idx->nr : -1;
}

/* Room for "r%u" or "dyntext_func_%05u" names, n of them. */
#define MKI_NAME_LEN	24

static char *mki_names(struct kunit *test, unsigned int n)
{
	char *names = kunit_kmalloc_array(test, n, MKI_NAME_LEN, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, names);
	return names;
}

struct mki_answer {
	bool		found;
	const char	*sym;		/* compared, never read */
	char		name[64];	/* the tests' names are shorter */
	unsigned long	size, offset;
};

/* find_kallsyms_symbol() of @addr, with @ks as mod->kallsyms. */
static void mki_lookup(struct mki_ctx *c, struct mod_kallsyms *ks,
		       unsigned long addr, struct mki_answer *a)
{
	struct mod_kallsyms *was = rcu_dereference_protected(c->mod->kallsyms,
							     1);
	const char *name;

	/* Nothing else sees this module: swap its symtab in place. */
	rcu_assign_pointer(c->mod->kallsyms, ks);
	rcu_read_lock();
	name = find_kallsyms_symbol(c->mod, addr, &a->size, &a->offset);
	a->found = !!name;
	a->sym = name;
	if (name)
		strscpy(a->name, name, sizeof(a->name));
	rcu_read_unlock();
	rcu_assign_pointer(c->mod->kallsyms, was);
}

/* The answer of the module's current symtab, index or not. */
static void mki_expect(struct kunit *test, struct mki_ctx *c, int r,
		       unsigned int off, const char *name,
		       unsigned long size, unsigned long offset)
{
	struct mki_answer a = {};

	mki_lookup(c, rcu_dereference_protected(c->mod->kallsyms, 1),
		   c->base[r] + off, &a);
	if (!name) {
		KUNIT_EXPECT_FALSE_MSG(test, a.found, "region %d +%#x: %s",
				       r, off, a.name);
		return;
	}
	KUNIT_ASSERT_TRUE_MSG(test, a.found, "region %d +%#x: nothing", r,
			      off);
	KUNIT_EXPECT_STREQ_MSG(test, a.name, name, "region %d +%#x", r, off);
	KUNIT_EXPECT_EQ_MSG(test, a.size, size, "region %d +%#x", r, off);
	KUNIT_EXPECT_EQ_MSG(test, a.offset, offset, "region %d +%#x", r, off);
}

/*
 * The index and the scan of the module's current symtab agree on every
 * address of every region and on two bytes either side of each.
 */
static void mki_sweep(struct kunit *test, struct mki_ctx *c)
{
	struct mod_kallsyms *ks = rcu_dereference_protected(c->mod->kallsyms,
							    1);
	struct mod_kallsyms twin = *ks;
	unsigned int bad = 0;

	memset(twin.text_index, 0, sizeof(twin.text_index));
	for (int r = 0; r < MKI_NR_REGIONS; r++) {
		unsigned long end = c->base[r] + c->size[r] + 2;

		for (unsigned long addr = c->base[r] - 2; addr < end; addr++) {
			struct mki_answer x = {}, y = {};

			mki_lookup(c, ks, addr, &x);
			mki_lookup(c, &twin, addr, &y);
			/* The same symtab entry, not only the same name. */
			if (x.sym == y.sym && x.size == y.size &&
			    x.offset == y.offset)
				continue;
			if (bad++ < 8)
				kunit_err(test,
					  "region %d +%#lx: index %s+%#lx/%#lx, scan %s+%#lx/%#lx\n",
					  r, addr - c->base[r],
					  x.found ? x.name : "-", x.offset,
					  x.size, y.found ? y.name : "-",
					  y.offset, y.size);
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0);
}

/* Symbols in no address order, locals before globals as in ELF. */
static const struct mki_sym mki_order_syms[] = {
	MKI_LFUNC("l_c", MKI_TEXT, 0x300),
	MKI_LFUNC("l_a", MKI_TEXT, 0x010),
	MKI_FUNC("g_d", MKI_TEXT, 0x3f0),
	MKI_FUNC("g_b", MKI_TEXT, 0x100),
	MKI_FUNC("g_e", MKI_TEXT, 0x200),
	MKI_OBJ("o_data", MKI_DATA, 0x20),
};

static void mki_test_order(struct kunit *test)
{
	struct mki_ctx *c = mki_ctx(test, MKI_TEXT_SIZE, MKI_INIT_SIZE);

	mki_load(test, c, mki_order_syms, ARRAY_SIZE(mki_order_syms), false);
	KUNIT_EXPECT_EQ(test, mki_nr(c->init_ks, 0), 5);
	KUNIT_EXPECT_EQ(test, mki_nr(&c->mod->core_kallsyms, 0), 5);
	/* No init text symbols: the shared empty index. */
	KUNIT_EXPECT_PTR_EQ(test, mki_index(c->init_ks, 1),
			    &mod_ksym_index_empty);

	mki_expect(test, c, MKI_TEXT, 0x000, NULL, 0, 0);
	mki_expect(test, c, MKI_TEXT, 0x00f, NULL, 0, 0);
	mki_expect(test, c, MKI_TEXT, 0x010, "l_a", 0xf0, 0);
	mki_expect(test, c, MKI_TEXT, 0x0ff, "l_a", 0xf0, 0xef);
	mki_expect(test, c, MKI_TEXT, 0x100, "g_b", 0x100, 0);
	mki_expect(test, c, MKI_TEXT, 0x2ff, "g_e", 0x100, 0xff);
	mki_expect(test, c, MKI_TEXT, 0x300, "l_c", 0xf0, 0);
	/* The last symbol runs to the end of the region. */
	mki_expect(test, c, MKI_TEXT, 0x3ff, "g_d", 0x10, 0xf);
	mki_expect(test, c, MKI_INIT, 0x000, NULL, 0, 0);
	if (IS_ENABLED(CONFIG_KALLSYMS_ALL))
		mki_expect(test, c, MKI_DATA, 0x30, "o_data", 0xe0, 0x10);
	else
		mki_expect(test, c, MKI_DATA, 0x30, NULL, 0, 0);
	mki_sweep(test, c);
}

/* Several names at one address: the lowest symtab index names it. */
static const struct mki_sym mki_alias_syms[] = {
	MKI_LFUNC("a_local", MKI_TEXT, 0x080),
	MKI_FUNC("b_global", MKI_TEXT, 0x100),
	MKI_FUNC("a_global", MKI_TEXT, 0x080),
	MKI_FUNC("a_global2", MKI_TEXT, 0x080),
	/* A global before a local of the same address. */
	MKI_FUNC("c_global", MKI_TEXT, 0x200),
	MKI_LFUNC("c_local", MKI_TEXT, 0x200),
	MKI_FUNC("b_alias", MKI_TEXT, 0x100),
	/* The same name at two addresses. */
	MKI_LFUNC("twice", MKI_TEXT, 0x300),
	MKI_LFUNC("twice", MKI_TEXT, 0x340),
};

static void mki_test_aliases(struct kunit *test)
{
	struct mki_ctx *c = mki_ctx(test, MKI_TEXT_SIZE, MKI_INIT_SIZE);

	mki_load(test, c, mki_alias_syms, ARRAY_SIZE(mki_alias_syms), false);
	KUNIT_EXPECT_EQ(test, mki_nr(c->init_ks, 0), 5);

	mki_expect(test, c, MKI_TEXT, 0x080, "a_local", 0x80, 0);
	mki_expect(test, c, MKI_TEXT, 0x17f, "b_global", 0x100, 0x7f);
	mki_expect(test, c, MKI_TEXT, 0x200, "c_global", 0x100, 0);
	mki_expect(test, c, MKI_TEXT, 0x33f, "twice", 0x40, 0x3f);
	mki_expect(test, c, MKI_TEXT, 0x340, "twice", 0xc0, 0);
	mki_sweep(test, c);
}

/* Labels, objects and 0-size symbols end the symbol before them. */
static const struct mki_sym mki_zero_size_syms[] = {
	MKI_FUNC("f", MKI_TEXT, 0x040),
	MKI_LABEL("f_label", MKI_TEXT, 0x050),
	MKI_OBJ("f_table", MKI_TEXT, 0x060),
	MKI_FUNC("g", MKI_TEXT, 0x080),
	MKI_LABEL("last_byte", MKI_TEXT, MKI_TEXT_SIZE - 1),
	MKI_FUNC("init_f", MKI_INIT, 0x000),
	MKI_LABEL("init_label", MKI_INIT, 0x010),
};

static void mki_test_zero_size(struct kunit *test)
{
	struct mki_ctx *c = mki_ctx(test, MKI_TEXT_SIZE, MKI_INIT_SIZE);

	mki_load(test, c, mki_zero_size_syms, ARRAY_SIZE(mki_zero_size_syms),
		 false);
	mki_expect(test, c, MKI_TEXT, 0x048, "f", 0x10, 0x8);
	mki_expect(test, c, MKI_TEXT, 0x055, "f_label", 0x10, 0x5);
	mki_expect(test, c, MKI_TEXT, 0x070, "f_table", 0x20, 0x10);
	mki_expect(test, c, MKI_TEXT, MKI_TEXT_SIZE - 2, "g",
		   MKI_TEXT_SIZE - 1 - 0x80, MKI_TEXT_SIZE - 2 - 0x80);
	mki_expect(test, c, MKI_TEXT, MKI_TEXT_SIZE - 1, "last_byte", 1, 0);
	mki_expect(test, c, MKI_INIT, 0x00f, "init_f", 0x10, 0xf);
	mki_expect(test, c, MKI_INIT, 0x010, "init_label", 0xf0, 0);
	mki_sweep(test, c);
}

/*
 * Symbols that name nothing at the address of one that does, at lower
 * indices; absolute and livepatch symbols; a symbol at the region's end.
 */
static const struct mki_sym mki_dup_syms[] = {
	MKI_LFUNC("", MKI_TEXT, 0x020),
	MKI_LABEL("$x", MKI_TEXT, 0x020),
	MKI_LABEL(".L1", MKI_TEXT, 0x020),
	MKI_LABEL("L0", MKI_TEXT, 0x020),
	MKI_UNDEF("undef", MKI_TEXT, 0x020),
	MKI_FUNC("real", MKI_TEXT, 0x020),
	/* Names nothing: 0x60 still belongs to "real". */
	MKI_LABEL("$d", MKI_TEXT, 0x060),
	/* An absolute symbol whose value lies in the region counts. */
	MKI_SHN("abs_in", MKI_TEXT, 0x090, SHN_ABS),
	MKI_SHN("abs_out", MKI_NOWHERE, 0x90, SHN_ABS),
	/* Resolved into vmlinux or another module: never in the region. */
	MKI_SHN(".klp.sym.vmlinux.printk,0", MKI_NOWHERE, 0x100,
		SHN_LIVEPATCH),
	MKI_FUNC("next", MKI_TEXT, 0x0c0),
	/* At base + size: outside the region, no end for "next". */
	MKI_FUNC("at_end", MKI_TEXT, MKI_TEXT_SIZE),
};

static void mki_test_duplicates(struct kunit *test)
{
	struct mki_ctx *c = mki_ctx(test, MKI_TEXT_SIZE, MKI_INIT_SIZE);

	mki_load(test, c, mki_dup_syms, ARRAY_SIZE(mki_dup_syms), false);
	KUNIT_EXPECT_EQ(test, mki_nr(c->init_ks, 0), 3);

	mki_expect(test, c, MKI_TEXT, 0x01f, NULL, 0, 0);
	mki_expect(test, c, MKI_TEXT, 0x020, "real", 0x70, 0);
	mki_expect(test, c, MKI_TEXT, 0x060, "real", 0x70, 0x40);
	mki_expect(test, c, MKI_TEXT, 0x0a0, "abs_in", 0x30, 0x10);
	mki_expect(test, c, MKI_TEXT, MKI_TEXT_SIZE - 1, "next",
		   MKI_TEXT_SIZE - 0xc0, MKI_TEXT_SIZE - 1 - 0xc0);
	mki_sweep(test, c);
}

/* A module's text and init text, as do_init_module() leaves them. */
static const struct mki_sym mki_init_syms[] = {
	MKI_LFUNC("init_b", MKI_INIT, 0x040),
	MKI_LFUNC("core_a", MKI_TEXT, 0x000),
	MKI_LFUNC("init_a", MKI_INIT, 0x000),
	MKI_FUNC("core_b", MKI_TEXT, 0x200),
};

static void mki_init_freed(struct kunit *test, bool livepatch)
{
	struct mki_ctx *c = mki_ctx(test, MKI_TEXT_SIZE, MKI_INIT_SIZE);
	struct mod_ksym_index *taken[MOD_KSYM_INDEX_NR];
	struct module_memory *init = &c->mod->mem[MOD_INIT_TEXT];

	mki_load(test, c, mki_init_syms, ARRAY_SIZE(mki_init_syms),
		 livepatch);
	KUNIT_ASSERT_NOT_NULL(test, mki_index(c->init_ks, 0));
	KUNIT_ASSERT_NOT_NULL(test, mki_index(c->init_ks, 1));
	KUNIT_EXPECT_EQ(test, mki_nr(c->init_ks, 1), 2);
	/* The core symtab gets no index of init text. */
	KUNIT_EXPECT_NULL(test, mki_index(&c->mod->core_kallsyms, 1));

	/* MODULE_STATE_COMING: the init symtab and its indices. */
	mki_expect(test, c, MKI_INIT, 0x050, "init_b", 0xc0, 0x10);
	mki_expect(test, c, MKI_TEXT, 0x1ff, "core_a", 0x200, 0x1ff);
	mki_sweep(test, c);

	/* do_init_module(): the indices go, then the symtab switches. */
	mutex_lock(&module_mutex);
	module_ksym_index_take_init(c->mod, taken);
	rcu_assign_pointer(c->mod->kallsyms, &c->mod->core_kallsyms);
	mutex_unlock(&module_mutex);
	KUNIT_EXPECT_NOT_NULL(test, taken[MOD_KSYM_INDEX_TEXT]);
	KUNIT_EXPECT_NOT_NULL(test, taken[MOD_KSYM_INDEX_INIT_TEXT]);
	KUNIT_EXPECT_NULL(test, mki_index(c->init_ks, 0));
	KUNIT_EXPECT_NULL(test, mki_index(c->init_ks, 1));

	/*
	 * Init text still mapped, core symtab published: init addresses
	 * are scanned, and only a livepatch module's core symtab names them.
	 */
	mki_expect(test, c, MKI_INIT, 0x050, livepatch ? "init_b" : NULL,
		   0xc0, 0x10);
	mki_expect(test, c, MKI_TEXT, 0x1ff, "core_a", 0x200, 0x1ff);
	mki_sweep(test, c);

	/* Init regions gone: nothing there, core text as before. */
	init->base = NULL;
	init->size = 0;
	mki_expect(test, c, MKI_INIT, 0x050, NULL, 0, 0);
	mki_expect(test, c, MKI_TEXT, 0x1ff, "core_a", 0x200, 0x1ff);
	mki_expect(test, c, MKI_TEXT, 0x3ff, "core_b", 0x200, 0x1ff);
	mki_sweep(test, c);

	/* do_free_init(), a grace period later. */
	synchronize_rcu();
	module_ksym_index_release(taken);
	KUNIT_EXPECT_NULL(test, taken[MOD_KSYM_INDEX_TEXT]);
	KUNIT_EXPECT_NULL(test, taken[MOD_KSYM_INDEX_INIT_TEXT]);
	/* The core symtab's index is freed with the module (test exit). */
	KUNIT_EXPECT_NOT_NULL(test, mki_index(&c->mod->core_kallsyms, 0));
}

static void mki_test_init_freed(struct kunit *test)
{
	mki_init_freed(test, false);
}

static void mki_test_init_freed_livepatch(struct kunit *test)
{
	mki_init_freed(test, true);
}

/* Init failed, or the load did after post_relocation(): all freed. */
static void mki_test_load_failed(struct kunit *test)
{
	struct mki_ctx *c = mki_ctx(test, MKI_TEXT_SIZE, MKI_INIT_SIZE);

	mki_load(test, c, mki_init_syms, ARRAY_SIZE(mki_init_syms), false);
	module_ksym_index_free(c->mod);
	for (int i = 0; i < MOD_KSYM_INDEX_NR; i++) {
		KUNIT_EXPECT_NULL(test, mki_index(c->init_ks, i));
		KUNIT_EXPECT_NULL(test, mki_index(&c->mod->core_kallsyms, i));
	}
	/* And lookups scan. */
	mki_expect(test, c, MKI_INIT, 0x050, "init_b", 0xc0, 0x10);
	mki_expect(test, c, MKI_TEXT, 0x1ff, "core_a", 0x200, 0x1ff);
}

/* No index (its allocation failed): the same answers, by the scan. */
static void mki_test_no_index(struct kunit *test)
{
	struct mki_ctx *c = mki_ctx(test, MKI_TEXT_SIZE, MKI_INIT_SIZE);

	mki_load(test, c, mki_zero_size_syms, ARRAY_SIZE(mki_zero_size_syms),
		 false);
	mod_ksym_index_put(mki_index(c->init_ks, MOD_KSYM_INDEX_TEXT));
	RCU_INIT_POINTER(c->init_ks->text_index[MOD_KSYM_INDEX_TEXT], NULL);
	mki_expect(test, c, MKI_TEXT, 0x055, "f_label", 0x10, 0x5);
	mki_expect(test, c, MKI_INIT, 0x00f, "init_f", 0x10, 0xf);
	mki_sweep(test, c);
}

#define MKI_RANDOM_SYMS	1000
#define MKI_RANDOM_TEXT	0x2000

/* Random symtabs, fixed seed: the index and the scan agree. */
static void mki_test_random(struct kunit *test)
{
	static const char * const odd[] = { "", "$x", "$d", ".Lfoo", "L0x" };
	struct mki_ctx *c = mki_ctx(test, MKI_RANDOM_TEXT, MKI_INIT_SIZE);
	char *names = mki_names(test, MKI_RANDOM_SYMS);
	struct mki_sym *syms;
	struct rnd_state rnd;
	unsigned int i;

	syms = kunit_kcalloc(test, MKI_RANDOM_SYMS, sizeof(*syms), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, syms);
	prandom_seed_state(&rnd, 39);
	for (i = 0; i < MKI_RANDOM_SYMS; i++) {
		char *name = names + i * MKI_NAME_LEN;
		struct mki_sym *s = &syms[i];
		u32 x = prandom_u32_state(&rnd);

		/* Mostly text, some init text, a few elsewhere. */
		s->region = x % 16 < 12 ? MKI_TEXT : x % 16 < 15 ? MKI_INIT :
			    MKI_DATA;
		/* Values collide: aliases; some a bit past the region. */
		s->off = prandom_u32_state(&rnd) % (c->size[s->region] + 8);
		s->bind = i < MKI_RANDOM_SYMS / 3 ? STB_LOCAL : STB_GLOBAL;
		s->type = x & 0x100 ? STT_NOTYPE : STT_FUNC;
		if (s->type == STT_FUNC)
			s->off &= ~1;	/* Thumb-2 clears bit 0 of those */
		s->undef = x % 64 == 0;
		s->shndx = x % 64 == 1 ? SHN_ABS : 0;
		snprintf(name, MKI_NAME_LEN, "r%u", i);
		s->name = x & 0x200 ? odd[(x >> 10) % ARRAY_SIZE(odd)] : name;
	}
	mki_load(test, c, syms, MKI_RANDOM_SYMS, false);
	KUNIT_ASSERT_NOT_NULL(test, mki_index(c->init_ks, 0));
	mki_sweep(test, c);
}

#define MKI_BENCH_SYMS		50000
#define MKI_BENCH_LOOKUPS	100000
#define MKI_BENCH_SCANS		100

/* Not a check: build time, lookup time and memory at 50,000 symbols. */
static void mki_test_bench(struct kunit *test)
{
	struct mki_ctx *c = mki_ctx(test, MKI_BENCH_SYMS * 16, MKI_INIT_SIZE);
	char *names = mki_names(test, MKI_BENCH_SYMS);
	unsigned int i, found = 0;
	struct mod_kallsyms *ks, twin;
	u64 t0, build, hit, scan;
	struct mki_sym *syms;
	struct rnd_state rnd;

	syms = kunit_kcalloc(test, MKI_BENCH_SYMS, sizeof(*syms), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, syms);
	prandom_seed_state(&rnd, 50000);
	for (i = 0; i < MKI_BENCH_SYMS; i++) {
		char *name = names + i * MKI_NAME_LEN;

		snprintf(name, MKI_NAME_LEN, "dyntext_func_%05u", i);
		syms[i] = (struct mki_sym)MKI_FUNC(name, MKI_TEXT, i * 16);
	}
	/* In no address order, as locals then globals would be. */
	for (i = MKI_BENCH_SYMS - 1; i > 0; i--) {
		/* swap() evaluates its arguments twice: pick j first. */
		unsigned int j = prandom_u32_state(&rnd) % (i + 1);

		swap(syms[i], syms[j]);
	}

	mki_publish(test, c, mki_symtab(test, c, syms, MKI_BENCH_SYMS, false),
		    mki_symtab(test, c, syms, MKI_BENCH_SYMS, true));
	t0 = ktime_get_ns();
	module_ksym_index_build(c->mod);
	build = ktime_get_ns() - t0;
	KUNIT_ASSERT_NOT_NULL(test, mki_index(c->init_ks, 0));
	/* One key per symbol: each has an address of its own. */
	KUNIT_EXPECT_EQ(test, MKI_BENCH_SYMS, mki_index(c->init_ks, 0)->nr);

	ks = c->init_ks;
	twin = *ks;
	memset(twin.text_index, 0, sizeof(twin.text_index));

	t0 = ktime_get_ns();
	rcu_read_lock();
	for (i = 0; i < MKI_BENCH_LOOKUPS; i++) {
		unsigned long addr = c->base[MKI_TEXT] +
			prandom_u32_state(&rnd) % c->size[MKI_TEXT];

		OPTIMIZER_HIDE_VAR(addr);
		if (find_kallsyms_symbol(c->mod, addr, NULL, NULL))
			found++;
	}
	rcu_read_unlock();
	hit = ktime_get_ns() - t0;

	rcu_assign_pointer(c->mod->kallsyms, &twin);
	t0 = ktime_get_ns();
	rcu_read_lock();
	for (i = 0; i < MKI_BENCH_SCANS; i++) {
		unsigned long addr = c->base[MKI_TEXT] +
			prandom_u32_state(&rnd) % c->size[MKI_TEXT];

		OPTIMIZER_HIDE_VAR(addr);
		if (find_kallsyms_symbol(c->mod, addr, NULL, NULL))
			found++;
	}
	rcu_read_unlock();
	scan = ktime_get_ns() - t0;
	rcu_assign_pointer(c->mod->kallsyms, ks);
	KUNIT_EXPECT_EQ(test, found, MKI_BENCH_LOOKUPS + MKI_BENCH_SCANS);

	kunit_info(test,
		   "%u symbols: build %llu us (3 indices), lookup %llu ns indexed, %llu ns scanned, index %zu bytes\n",
		   MKI_BENCH_SYMS, div_u64(build, NSEC_PER_USEC),
		   div_u64(hit, MKI_BENCH_LOOKUPS),
		   div_u64(scan, MKI_BENCH_SCANS),
		   struct_size_t(struct mod_ksym_index, key,
				 mki_index(ks, 0)->nr));
}

static struct kunit_case module_kallsyms_index_cases[] = {
	KUNIT_CASE(mki_test_order),
	KUNIT_CASE(mki_test_aliases),
	KUNIT_CASE(mki_test_zero_size),
	KUNIT_CASE(mki_test_duplicates),
	KUNIT_CASE(mki_test_init_freed),
	KUNIT_CASE(mki_test_init_freed_livepatch),
	KUNIT_CASE(mki_test_load_failed),
	KUNIT_CASE(mki_test_no_index),
	KUNIT_CASE(mki_test_random),
	KUNIT_CASE_SLOW(mki_test_bench),
	{}
};

static struct kunit_suite module_kallsyms_index_suite = {
	.name = "module_kallsyms_index",
	.test_cases = module_kallsyms_index_cases,
};

kunit_test_suite(module_kallsyms_index_suite);
