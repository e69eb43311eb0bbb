// SPDX-License-Identifier: GPL-2.0
/*
 * Address lookup benchmark for `make bench`: the cost of one call of
 * kernel_text_address() and of kallsyms_lookup() on a given address.  It
 * does not depend on the dynamic text registry: the same source builds
 * against stock 6.1 and against the patched tree, so that both kernels run
 * the same code.
 *
 * Neither function is exported to modules.  The benchmark driver
 * (dyntext_bench lookup) passes their addresses from /proc/kallsyms as
 * text_addr= and lookup_addr=, and module_init checks with sprint_symbol()
 * that each of them is the start of the function of that name.
 *
 * Writing "CALLS ADDR [ADDR...]" to
 * /sys/module/dyntext_lookup_bench/parameters/run calls each function CALLS
 * times, on the addresses in turn, in batches of CALLS / 10 with preemption
 * enabled, timed with ktime_get_ns().  Several addresses average out what
 * depends on where a symbol is in kallsyms' tables.  Reading the parameter
 * returns the last run as "TEXT_PS LOOKUP_PS TEXT_NR NAME": picoseconds per
 * call in the fastest batch of each function, for how many of the addresses
 * kernel_text_address() returned true, and what kallsyms_lookup() made of
 * the first address, as "name+0xoff/0xsize [module]" ("[module]" only if it
 * named one), or "-" if it found nothing.
 *
 * With name_addr= (the address of kallsyms_lookup_name()), writing
 * "CALLS NAME" to .../parameters/run_name times CALLS calls of
 * kallsyms_lookup_name(NAME) the same way ("module:symbol" included);
 * reading it returns "PS ADDRESS": picoseconds per call in the fastest
 * batch and what the last call returned.
 */
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#define LOOKUP_BENCH_BATCHES	10
#define LOOKUP_BENCH_MAX_CALLS	10000000U
#define LOOKUP_BENCH_MAX_ADDRS	200

typedef int (*text_address_fn)(unsigned long addr);
typedef unsigned long (*lookup_name_fn)(const char *name);
typedef const char *(*lookup_fn)(unsigned long addr, unsigned long *symbolsize,
				 unsigned long *offset, char **modname,
				 char *namebuf);

static unsigned long text_addr;
module_param(text_addr, ulong, 0400);
MODULE_PARM_DESC(text_addr, "Address of kernel_text_address() (/proc/kallsyms)");

static unsigned long lookup_addr;
module_param(lookup_addr, ulong, 0400);
MODULE_PARM_DESC(lookup_addr, "Address of kallsyms_lookup() (/proc/kallsyms)");

static unsigned long name_addr;
module_param(name_addr, ulong, 0400);
MODULE_PARM_DESC(name_addr, "Address of kallsyms_lookup_name() (/proc/kallsyms), optional");

static text_address_fn lookup_bench_text;
static lookup_name_fn lookup_bench_lookup_name;
static lookup_fn lookup_bench_lookup;

/* The addresses of the last run. */
static unsigned long lookup_bench_addrs[LOOKUP_BENCH_MAX_ADDRS];
static unsigned int lookup_bench_nr;

/* The last run; parameter reads and writes are serialised by the module. */
static u64 result_text_ps, result_lookup_ps;
static unsigned int result_text_nr;
static char result_name[KSYM_NAME_LEN + MODULE_NAME_LEN + 64];

static unsigned long lookup_bench_sink;

/* Picoseconds per call in the fastest batch. */
static noinline u64 lookup_bench_time_text(unsigned int per_batch)
{
	u64 best = U64_MAX, t;
	unsigned long sink = 0;
	unsigned int b, i, j;

	for (b = 0; b < LOOKUP_BENCH_BATCHES; b++) {
		t = ktime_get_ns();
		for (i = 0, j = 0; i < per_batch; i++) {
			sink += lookup_bench_text(lookup_bench_addrs[j]);
			if (++j == lookup_bench_nr)
				j = 0;
		}
		t = ktime_get_ns() - t;
		best = min(best, t);
		cond_resched();
	}
	WRITE_ONCE(lookup_bench_sink, sink);
	return div_u64(best * 1000, per_batch);
}

static noinline u64 lookup_bench_time_lookup(unsigned int per_batch)
{
	char namebuf[KSYM_NAME_LEN];
	unsigned long size, off, sink = 0;
	u64 best = U64_MAX, t;
	unsigned int b, i, j;
	char *modname;

	for (b = 0; b < LOOKUP_BENCH_BATCHES; b++) {
		t = ktime_get_ns();
		for (i = 0, j = 0; i < per_batch; i++) {
			sink += (unsigned long)
				lookup_bench_lookup(lookup_bench_addrs[j], &size,
						    &off, &modname, namebuf);
			if (++j == lookup_bench_nr)
				j = 0;
		}
		t = ktime_get_ns() - t;
		best = min(best, t);
		cond_resched();
	}
	WRITE_ONCE(lookup_bench_sink, sink);
	return div_u64(best * 1000, per_batch);
}

/* What kallsyms_lookup() makes of addr, as described at the top. */
static void lookup_bench_name(unsigned long addr)
{
	char namebuf[KSYM_NAME_LEN];
	unsigned long size = 0, off = 0;
	char *modname = NULL;
	const char *name;

	name = lookup_bench_lookup(addr, &size, &off, &modname, namebuf);
	if (!name)
		strscpy(result_name, "-", sizeof(result_name));
	else if (modname)
		snprintf(result_name, sizeof(result_name), "%s+%#lx/%#lx [%s]",
			 name, off, size, modname);
	else
		snprintf(result_name, sizeof(result_name), "%s+%#lx/%#lx",
			 name, off, size);
}

/*
 * The CALLS word of a parameter write: *p moves on to what follows it,
 * NULL if nothing does.
 */
static int lookup_bench_calls(char **p, unsigned int *calls)
{
	int ret = kstrtouint(strsep(p, " "), 0, calls);

	if (ret)
		return ret;
	if (*calls < LOOKUP_BENCH_BATCHES || *calls > LOOKUP_BENCH_MAX_CALLS)
		return -ERANGE;
	return 0;
}

static int run_set(const char *val, const struct kernel_param *kp)
{
	unsigned int calls, nr = 0, i;
	char *buf, *p, *tok;
	int ret;

	buf = kstrdup(val, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	p = strim(buf);
	ret = lookup_bench_calls(&p, &calls);
	if (ret)
		goto out;
	while ((tok = strsep(&p, " "))) {
		if (!*tok)
			continue;
		if (nr == LOOKUP_BENCH_MAX_ADDRS) {
			ret = -E2BIG;
			goto out;
		}
		ret = kstrtoul(tok, 0, &lookup_bench_addrs[nr]);
		if (ret)
			goto out;
		nr++;
	}
	if (!nr) {
		ret = -EINVAL;
		goto out;
	}
	lookup_bench_nr = nr;

	result_text_nr = 0;
	for (i = 0; i < nr; i++)
		result_text_nr += !!lookup_bench_text(lookup_bench_addrs[i]);
	lookup_bench_name(lookup_bench_addrs[0]);
	calls /= LOOKUP_BENCH_BATCHES;
	result_text_ps = lookup_bench_time_text(calls);
	result_lookup_ps = lookup_bench_time_lookup(calls);
out:
	kfree(buf);
	return ret;
}

static int run_get(char *buffer, const struct kernel_param *kp)
{
	return scnprintf(buffer, PAGE_SIZE, "%llu %llu %u %s\n",
			 result_text_ps, result_lookup_ps, result_text_nr,
			 result_name);
}

static const struct kernel_param_ops run_ops = {
	.set = run_set,
	.get = run_get,
};
module_param_cb(run, &run_ops, NULL, 0600);
MODULE_PARM_DESC(run, "Write \"CALLS ADDR...\" to time lookups of the ADDRs; read the result");

/* The last run of run_name. */
static u64 result_name_ps;
static unsigned long result_name_addr;

static int run_name_set(const char *val, const struct kernel_param *kp)
{
	unsigned long sink = 0;
	unsigned int calls, per_batch, b, i;
	u64 best = U64_MAX, t;
	char *buf, *p;
	int ret;

	if (!lookup_bench_lookup_name)
		return -EOPNOTSUPP;
	buf = kstrdup(val, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	p = strim(buf);
	ret = lookup_bench_calls(&p, &calls);
	if (!ret && (!p || !*p))
		ret = -EINVAL;
	if (ret)
		goto out;
	per_batch = calls / LOOKUP_BENCH_BATCHES;
	for (b = 0; b < LOOKUP_BENCH_BATCHES; b++) {
		t = ktime_get_ns();
		for (i = 0; i < per_batch; i++)
			sink = lookup_bench_lookup_name(p);
		t = ktime_get_ns() - t;
		best = min(best, t);
		cond_resched();
	}
	result_name_addr = sink;
	result_name_ps = div_u64(best * 1000, per_batch);
out:
	kfree(buf);
	return ret;
}

static int run_name_get(char *buffer, const struct kernel_param *kp)
{
	return scnprintf(buffer, PAGE_SIZE, "%llu %#lx\n", result_name_ps,
			 result_name_addr);
}

static const struct kernel_param_ops run_name_ops = {
	.set = run_name_set,
	.get = run_name_get,
};
module_param_cb(run_name, &run_name_ops, NULL, 0600);
MODULE_PARM_DESC(run_name, "Write \"CALLS NAME\" to time kallsyms_lookup_name(NAME); read the result");

/* Is addr the start of the core kernel function name? */
static bool lookup_bench_is_func(unsigned long addr, const char *name)
{
	char buf[KSYM_SYMBOL_LEN];
	size_t len = strlen(name);

	if (!addr)
		return false;
	sprint_symbol(buf, addr);
	return !strncmp(buf, name, len) && !strncmp(buf + len, "+0x0/", 5);
}

static int __init lookup_bench_init(void)
{
	if (!lookup_bench_is_func(text_addr, "kernel_text_address") ||
	    !lookup_bench_is_func(lookup_addr, "kallsyms_lookup")) {
		pr_err("dyntext_lookup_bench: text_addr= and lookup_addr= must be the addresses of kernel_text_address and kallsyms_lookup\n");
		return -EINVAL;
	}
	if (name_addr && !lookup_bench_is_func(name_addr, "kallsyms_lookup_name")) {
		pr_err("dyntext_lookup_bench: name_addr= must be the address of kallsyms_lookup_name\n");
		return -EINVAL;
	}
	lookup_bench_lookup_name = (lookup_name_fn)name_addr;
	lookup_bench_text = (text_address_fn)text_addr;
	lookup_bench_lookup = (lookup_fn)lookup_addr;
	strscpy(result_name, "-", sizeof(result_name));
	return 0;
}

static void __exit lookup_bench_exit(void)
{
}

module_init(lookup_bench_init);
module_exit(lookup_bench_exit);
MODULE_DESCRIPTION("Address lookup benchmark (kernel_text_address, kallsyms_lookup)");
MODULE_LICENSE("GPL");
