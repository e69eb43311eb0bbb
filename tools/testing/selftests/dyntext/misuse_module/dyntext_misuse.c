// SPDX-License-Identifier: GPL-2.0
/*
 * Misuse of the dynamic text registry by a module, the ways a producer can
 * get it wrong: overlapping regions, double adds, deletes of entries that
 * are not registered, bad names and bad ranges.  Each must be refused with
 * its exact error code, announce nothing and leave the registry
 * consistent (dyntext_check()).
 *
 * Opening /sys/kernel/debug/dyntext_misuse/run runs every case once; the
 * file then reads as one TAP line per check ("ok N - what" or
 * "not ok N - what: got X, want Y") followed by "# adds A" (the number of
 * successful adds, each announced and deleted again) and "1..N".  The
 * cases may run while other producers change the registry; with exact=1
 * the number of registered regions is also checked, which needs a quiet
 * system.  The regions are ranges of a vmalloc'ed buffer, named
 * dyntext_misuse_<n> with the owner tag "dyntext_misuse_text".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/dyntext.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

/* kzalloc_obj() came in 7.0; this module also builds for 6.12 and 6.1. */
#ifndef kzalloc_obj
#define kzalloc_obj(p, gfp)	kzalloc(sizeof(p), gfp)
#endif

static bool exact;
module_param(exact, bool, 0400);
MODULE_PARM_DESC(exact, "Also check the registry's size (quiet system only)");

#define MISUSE_BUF_SIZE		(4 * PAGE_SIZE)
#define MISUSE_NR		6
#define MISUSE_OUT_SIZE		16384

static const struct dyntext_class misuse_class = {
	.owner		= "dyntext_misuse_text",
	.ksym_type	= PERF_RECORD_KSYMBOL_TYPE_OOL,
	.sym_type	= 't',
};

struct misuse_region {
	struct dyntext	dt;
	char		name[32];
};

struct misuse_run {
	char		*out;
	size_t		len;
	unsigned int	n;
	unsigned int	failed;
	unsigned int	adds;
	unsigned int	base_nr;
	unsigned int	live;
};

static DEFINE_MUTEX(misuse_mutex);
static unsigned long misuse_buf;
static struct misuse_region *misuse_r;
static char *misuse_longname;
static struct dentry *misuse_dir;
/* Under misuse_mutex. */
static char misuse_sym[KSYM_SYMBOL_LEN];

static __printf(2, 3) void misuse_out(struct misuse_run *run,
				      const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	run->len += vscnprintf(run->out + run->len, MISUSE_OUT_SIZE - run->len,
			       fmt, args);
	va_end(args);
}

static void misuse_expect(struct misuse_run *run, const char *what, long got,
			  long want)
{
	run->n++;
	if (got == want) {
		misuse_out(run, "ok %u - %s\n", run->n, what);
		return;
	}
	run->failed++;
	misuse_out(run, "not ok %u - %s: got %ld, want %ld\n", run->n, what,
		   got, want);
}

/* Region @i covers [misuse_buf + off, misuse_buf + off + len). */
static struct dyntext *misuse_region(unsigned int i, unsigned long off,
				     unsigned long len)
{
	struct misuse_region *r = &misuse_r[i];

	snprintf(r->name, sizeof(r->name), "dyntext_misuse_%u", i);
	dyntext_init(&r->dt, misuse_buf + off, len, r->name, &misuse_class);
	return &r->dt;
}

static void misuse_add(struct misuse_run *run, const char *what,
		       struct dyntext *dt, int want)
{
	int ret = dyntext_add(dt);

	if (!ret) {
		run->adds++;
		run->live++;
	}
	misuse_expect(run, what, ret, want);
}

/* Deleted entries are reused only after a grace period (lock-free readers). */
static void misuse_del(struct misuse_run *run, const char *what,
		       struct dyntext *dt, int want)
{
	int ret = dyntext_del(dt);

	if (!ret) {
		run->live--;
		synchronize_rcu();
	}
	misuse_expect(run, what, ret, want);
}

static void misuse_consistent(struct misuse_run *run, const char *what)
{
	unsigned int nr = 0;
	char buf[64];

	snprintf(buf, sizeof(buf), "%s: dyntext_check()", what);
	misuse_expect(run, buf, dyntext_check(&nr), 0);
	if (!exact)
		return;
	snprintf(buf, sizeof(buf), "%s: regions registered", what);
	misuse_expect(run, buf, nr, run->base_nr + run->live);
}

/* Is @dt the region a lock-free lookup finds at @addr? */
static bool misuse_found(struct dyntext *dt, unsigned long addr)
{
	bool ret;

	rcu_read_lock();
	ret = dyntext_find(addr) == dt;
	rcu_read_unlock();
	return ret;
}

static void misuse_valid(struct misuse_run *run, struct dyntext *a)
{
	misuse_add(run, "add a region", a, 0);
	misuse_expect(run, "registered after add", dyntext_registered(a), true);
	misuse_expect(run, "found at its first byte", misuse_found(a, a->start),
		      true);
	misuse_expect(run, "found at its last byte",
		      misuse_found(a, a->end - 1), true);
	misuse_expect(run, "not found past its end", misuse_found(a, a->end),
		      false);
	misuse_expect(run, "not found before its start",
		      misuse_found(a, a->start - 1), false);
	misuse_expect(run, "is_dyntext_address()",
		      is_dyntext_address(a->end - 1), true);
	snprintf(misuse_sym, sizeof(misuse_sym), "%pS",
		 (void *)(a->start + 0x3f));
	misuse_expect(run, "%pS names it",
		      strcmp(misuse_sym, "dyntext_misuse_0+0x3f/0x100"), 0);
	misuse_consistent(run, "after add");
}

/* @a covers [1024, 1280) of the buffer. */
static void misuse_overlaps(struct misuse_run *run, struct dyntext *a)
{
	static const struct {
		const char *what;
		unsigned long off, len;
	} cases[] = {
		{ "overlap: same range", 1024, 256 },
		{ "overlap: left edge", 1024 - 16, 17 },
		{ "overlap: right edge", 1024 + 255, 16 },
		{ "overlap: inside", 1024 + 8, 8 },
		{ "overlap: around", 512, 2048 },
	};
	struct dyntext *b;
	unsigned int i;

	misuse_add(run, "double add", a, -EEXIST);
	misuse_expect(run, "still registered after double add",
		      dyntext_registered(a), true);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		b = misuse_region(1, cases[i].off, cases[i].len);
		misuse_add(run, cases[i].what, b, -EEXIST);
		misuse_expect(run, "refused region not registered",
			      dyntext_registered(b), false);
	}
	misuse_expect(run, "lookups still find the first region",
		      misuse_found(a, a->start + 8), true);
	misuse_consistent(run, "after overlaps");

	b = misuse_region(1, 1024 - 16, 16);
	misuse_add(run, "adjacent below", b, 0);
	b = misuse_region(2, 1024 + 256, 16);
	misuse_add(run, "adjacent above", b, 0);
	misuse_consistent(run, "after adjacent adds");
}

static void misuse_ranges(struct misuse_run *run)
{
	unsigned long core = (unsigned long)dyntext_add;
	unsigned long mod = (unsigned long)misuse_ranges;
	struct dyntext *b;

	b = misuse_region(3, 4096, 0);
	misuse_add(run, "empty range", b, -EINVAL);
	b = misuse_region(3, 4096, 16);
	b->start = ULONG_MAX - 15;
	b->end = b->start + 32;
	misuse_add(run, "wrapping range", b, -EINVAL);
	b = misuse_region(3, 4096, 16);
	b->end = b->start - 16;
	misuse_add(run, "end before start", b, -EINVAL);

	/*
	 * Run-time text lies in the module or vmalloc area, outside the
	 * kernel image; this module's own text is registered already.
	 */
	b = misuse_region(3, 0, 16);
	b->start = core;
	b->end = core + 16;
	misuse_add(run, "inside core kernel text", b, -EINVAL);
	b->start = PAGE_SIZE;
	b->end = 2 * PAGE_SIZE;
	misuse_add(run, "at a user address", b, -EINVAL);
	/* x86-64: the image lies between the vmalloc and the module area. */
	b->start = misuse_buf;
	b->end = mod + 16;
	misuse_add(run, "from the vmalloc area over the kernel image", b, -EINVAL);
	b->start = mod;
	b->end = mod + 16;
	misuse_add(run, "inside a module's text", b, -EEXIST);
	misuse_expect(run, "refused ranges not registered",
		      dyntext_registered(b), false);
	misuse_consistent(run, "after bad ranges");
}

static void misuse_names(struct misuse_run *run)
{
	struct dyntext *b = misuse_region(3, 4096, 16);

	b->name = NULL;
	misuse_add(run, "NULL name", b, -EINVAL);
	b->name = "";
	misuse_add(run, "empty name", b, -EINVAL);
	memset(misuse_longname, 'x', KSYM_NAME_LEN);
	misuse_longname[KSYM_NAME_LEN] = '\0';
	b->name = misuse_longname;
	misuse_add(run, "name of KSYM_NAME_LEN characters", b, -EINVAL);
	misuse_longname[KSYM_NAME_LEN - 1] = '\0';
	misuse_add(run, "name of KSYM_NAME_LEN - 1 characters", b, 0);
	misuse_del(run, "delete it", b, 0);

	b = misuse_region(3, 4096, 16);
	b->class = NULL;
	misuse_add(run, "NULL class", b, -EINVAL);
	misuse_add(run, "NULL entry", NULL, -EINVAL);
	misuse_consistent(run, "after bad names");
}

static void misuse_deletes(struct misuse_run *run, struct dyntext *a)
{
	struct dyntext *b, zeroed = { };

	b = misuse_region(4, 8192, 16);
	misuse_del(run, "delete a region never added", b, -ENOENT);
	misuse_del(run, "delete a zeroed entry", &zeroed, -ENOENT);
	misuse_del(run, "delete NULL", NULL, -ENOENT);
	misuse_del(run, "delete the first region", a, 0);
	misuse_expect(run, "not registered after delete",
		      dyntext_registered(a), false);
	misuse_expect(run, "not found after delete",
		      misuse_found(a, a->start), false);
	misuse_del(run, "delete it twice", a, -ENOENT);
	misuse_consistent(run, "after deletes");

	/* An entry can be added again after a grace period. */
	misuse_add(run, "add the deleted region again", a, 0);
	misuse_expect(run, "found again", misuse_found(a, a->end - 1), true);
	misuse_del(run, "delete it again", a, 0);
	misuse_del(run, "delete the region below", &misuse_r[1].dt, 0);
	misuse_del(run, "delete the region above", &misuse_r[2].dt, 0);
	misuse_consistent(run, "at the end");
}

static void misuse_all(struct misuse_run *run)
{
	struct dyntext *a;
	unsigned int i;

	for (i = 0; i < MISUSE_NR; i++)
		INIT_LIST_HEAD(&misuse_r[i].dt.lnode);
	misuse_expect(run, "consistent at the start", dyntext_check(&run->base_nr),
		      0);
	a = misuse_region(0, 1024, 256);
	misuse_valid(run, a);
	misuse_overlaps(run, a);
	misuse_ranges(run);
	misuse_names(run);
	misuse_deletes(run, a);

	/* Whatever failed above: leave nothing behind. */
	for (i = 0; i < MISUSE_NR; i++)
		if (dyntext_registered(&misuse_r[i].dt))
			dyntext_del(&misuse_r[i].dt);
	synchronize_rcu();
	misuse_out(run, "# adds %u\n1..%u\n", run->adds, run->n);
}

static int misuse_open(struct inode *inode, struct file *file)
{
	struct misuse_run *run;

	run = kzalloc_obj(*run, GFP_KERNEL);
	if (!run)
		return -ENOMEM;
	run->out = kzalloc(MISUSE_OUT_SIZE, GFP_KERNEL);
	if (!run->out) {
		kfree(run);
		return -ENOMEM;
	}
	mutex_lock(&misuse_mutex);
	misuse_all(run);
	mutex_unlock(&misuse_mutex);
	if (run->failed)
		pr_err("%u of %u checks failed\n", run->failed, run->n);
	file->private_data = run;
	return 0;
}

static ssize_t misuse_read(struct file *file, char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	struct misuse_run *run = file->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, run->out, run->len);
}

static int misuse_release(struct inode *inode, struct file *file)
{
	struct misuse_run *run = file->private_data;

	kfree(run->out);
	kfree(run);
	return 0;
}

static const struct file_operations misuse_fops = {
	.owner		= THIS_MODULE,
	.open		= misuse_open,
	.read		= misuse_read,
	.release	= misuse_release,
	.llseek		= default_llseek,
};

static int __init misuse_init(void)
{
	misuse_buf = (unsigned long)vmalloc(MISUSE_BUF_SIZE);
	misuse_r = kcalloc(MISUSE_NR, sizeof(*misuse_r), GFP_KERNEL);
	misuse_longname = kzalloc(KSYM_NAME_LEN + 1, GFP_KERNEL);
	if (!misuse_buf || !misuse_r || !misuse_longname) {
		kfree(misuse_longname);
		kfree(misuse_r);
		vfree((void *)misuse_buf);
		return -ENOMEM;
	}
	misuse_dir = debugfs_create_dir("dyntext_misuse", NULL);
	debugfs_create_file("run", 0400, misuse_dir, NULL, &misuse_fops);
	return 0;
}

static void __exit misuse_exit(void)
{
	debugfs_remove_recursive(misuse_dir);
	/* Every run deletes its regions and waits for a grace period. */
	kfree(misuse_longname);
	kfree(misuse_r);
	vfree((void *)misuse_buf);
}

module_init(misuse_init);
module_exit(misuse_exit);
MODULE_DESCRIPTION("Misuse of the dynamic text registry, checked");
MODULE_LICENSE("GPL");
