// SPDX-License-Identifier: GPL-2.0
/*
 * faults [-t SECONDS]: allocation failures injected into the paths that
 * register dynamic text, which must fail cleanly and leave nothing behind.
 *
 * Needs CONFIG_FAULT_INJECTION with failslab, fail_page_alloc and
 * fail_dyntext (CONFIG_FAIL_DYNTEXT) in debugfs (the debug configuration).
 * Five operations, each a single system call: BPF_PROG_LOAD of a program
 * with two subprograms (three JITed images), finit_module of the test
 * module, finit_module of it with fail_init=1 (init fails after its text
 * was registered), attaching an fentry program (a BPF trampoline), and
 * BPF_BTF_LOAD (the parser a module's BTF goes through, on its own);
 * and, for refused registrations only, opening kprobes until the kprobe
 * cache needs a new instruction page, and starting the function tracer of
 * a tracing instance (an ftrace trampoline), which must go on without the
 * trampoline rather than use text the kernel does not know, and loading
 * and attaching a struct_ops map.
 *
 * Registration refused: fail_dyntext makes dyntext_add() fail from its
 * k-th call in the operation on (space k, probability 100), for every k
 * up to the regions the operation registers; the operation must then
 * fail with that error and leave the registry as it was (a producer that
 * went on without its text being found would leave the call successful).
 *
 * Systematic pass: /proc/thread-self/fail-nth makes the N-th allocation
 * of the call fail (failslab and fail_page_alloc, sleeping allocations
 * included, and fail_dyntext: dyntext_add() refuses the region).  The
 * number of allocations of a clean call is counted first; then the points
 * at a stride of 2^k, 2^(k-1), ..., 1 are tried, as far as the time
 * allows, so that a short run covers the whole call coarsely.  Random
 * pass: the three with probability 1%, interval 1, no limit on times,
 * task-filter on and /proc/self/make-it-fail set for this task only.
 *
 * After every call: a failed call returned an error the operation may
 * return for lack of memory or a refused registration (no other errno,
 * no success without the operation's result), a call that succeeded is
 * undone, and the registry (/sys/kernel/debug/dyntext/check, "ok N") is
 * back at its size before; at the end the dynamic lines of /proc/kallsyms
 * are the ones there were.
 *
 * TAP on stdout; the numbers as "# " lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

#include "records.h"
#include "ksym_abi.skel.h"
#include "bpf_images.skel.h"
#include "struct_ops_cc.skel.h"

#define DBG		"/sys/kernel/debug"
/* Kernel-internal error 524 (not a SUSV4 code): a program the JIT failed. */
#define KERNEL_ENOTSUPP	524
#define MAX_ERRNO	8
/* What dyntext_add() returns when fail_dyntext fails it: an overlap. */
#define REFUSED		(-EEXIST)
#define FAIL_DYNTEXT	DBG "/fail_dyntext"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* The operations                                                      */

static char bindir[PATH_MAX];
static int mod_fd = -1;

/* ksym_abi_main, loaded once by libbpf, reloaded raw. */
static struct {
	struct ksym_abi *skel;
	const struct bpf_insn *insns;
	size_t cnt;
	int btf_fd;
	void *func_info;
	__u32 func_info_cnt, func_info_rec_size;
	int fd;
} prog = { .btf_fd = -1, .fd = -1 };

static struct {
	struct bpf_images *skel;
	int prog_fd, link_fd;
} fentry = { .link_fd = -1 };

static int prog_setup(void)
{
	struct bpf_prog_info info = { };
	__u32 len = sizeof(info);
	struct bpf_program *p;
	int fd;

	prog.skel = ksym_abi__open_and_load();
	if (!prog.skel)
		return -errno;
	p = prog.skel->progs.ksym_abi_main;
	fd = bpf_program__fd(p);
	prog.insns = bpf_program__insns(p);
	prog.cnt = bpf_program__insn_cnt(p);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	prog.func_info_cnt = info.nr_func_info;
	prog.func_info_rec_size = info.func_info_rec_size;
	prog.func_info = calloc(info.nr_func_info, info.func_info_rec_size);
	if (!prog.func_info)
		return -ENOMEM;
	memset(&info, 0, sizeof(info));
	info.nr_func_info = prog.func_info_cnt;
	info.func_info_rec_size = prog.func_info_rec_size;
	info.func_info = (__u64)(unsigned long)prog.func_info;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	prog.btf_fd = bpf_btf_get_fd_by_id(info.btf_id);
	if (prog.btf_fd < 0)
		return -errno;
	return prog.cnt && prog.func_info_cnt == 3 ? 0 : -EINVAL;
}

static int op_prog(void)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .prog_btf_fd = prog.btf_fd,
		    .func_info = prog.func_info,
		    .func_info_cnt = prog.func_info_cnt,
		    .func_info_rec_size = prog.func_info_rec_size);

	prog.fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "ksym_abi_main",
				"GPL", prog.insns, prog.cnt, &opts);
	return prog.fd < 0 ? prog.fd : 0;
}

static void undo_prog(void)
{
	close(prog.fd);
	prog.fd = -1;
}

static int op_module(const char *params)
{
	return syscall(SYS_finit_module, mod_fd, params, 0) ? -errno : 0;
}

static int op_mod(void)
{
	return op_module("");
}

static int op_mod_fail(void)
{
	return op_module("fail_init=1");
}

static void undo_mod(void)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (!syscall(SYS_delete_module, "dyntext_test", O_NONBLOCK) ||
		    (errno != EAGAIN && errno != EBUSY))
			return;
		usleep(10000);
	}
}

/*
 * BPF_BTF_LOAD of a BTF of BTF_NR types: type 1 points to the last one,
 * the others are ints.  A module's BTF goes through the same parser on
 * finit_module; here its allocations fail without a module around them.
 * The parser's array of types grows twice on the way (16, 32 entries),
 * and a growth that fails must fail the load with -ENOMEM: a type
 * dropped instead would leave type 1 pointing past the last one
 * (-EINVAL), and a module's distilled-base relocation reading past its
 * id map.
 */
#define BTF_NR		40

static struct {
	void *raw;
	__u32 size;
	int fd;
} btfl = { .fd = -1 };

static int btf_setup(void)
{
	struct btf *b = btf__new_empty();
	const void *raw;
	int i, err = 0;

	if (!b)
		return -errno;
	if (btf__add_ptr(b, BTF_NR) < 0)
		err = -EINVAL;
	for (i = 2; i <= BTF_NR && !err; i++)
		if (btf__add_int(b, "u32", 4, 0) < 0)
			err = -EINVAL;
	raw = err ? NULL : btf__raw_data(b, &btfl.size);
	btfl.raw = raw ? malloc(btfl.size) : NULL;
	if (btfl.raw)
		memcpy(btfl.raw, raw, btfl.size);
	else if (!err)
		err = -ENOMEM;
	btf__free(b);
	return err;
}

static int op_btf(void)
{
	btfl.fd = bpf_btf_load(btfl.raw, btfl.size, NULL);
	return btfl.fd < 0 ? -errno : 0;
}

static void undo_btf(void)
{
	close(btfl.fd);
	btfl.fd = -1;
}

static int fentry_setup(void)
{
	fentry.skel = bpf_images__open_and_load();
	if (!fentry.skel)
		return -errno;
	fentry.prog_fd = bpf_program__fd(fentry.skel->progs.images_fentry);
	return 0;
}

static int op_fentry(void)
{
	fentry.link_fd = bpf_link_create(fentry.prog_fd, 0, BPF_TRACE_FENTRY,
					 NULL);
	return fentry.link_fd < 0 ? fentry.link_fd : 0;
}

static void undo_fentry(void)
{
	close(fentry.link_fd);
	fentry.link_fd = -1;
}

/*
 * A struct_ops map: loading its three programs (three regions) and
 * updating the map (6.12: a trampoline per member, three more).  The map
 * of a struct_ops cannot be updated again once deleted, so each call loads
 * the skeleton anew.
 */
static struct {
	struct struct_ops_cc *skel;
	struct bpf_link *link;
} sto;

static int op_struct_ops(void)
{
	int err;

	sto.skel = struct_ops_cc__open_and_load();
	if (!sto.skel)
		return -errno;
	sto.link = bpf_map__attach_struct_ops(sto.skel->maps.dyntext_cc);
	if (sto.link)
		return 0;
	err = -errno;
	struct_ops_cc__destroy(sto.skel);
	sto.skel = NULL;
	return err;
}

static void undo_struct_ops(void)
{
	bpf_link__destroy(sto.link);
	sto.link = NULL;
	struct_ops_cc__destroy(sto.skel);
	sto.skel = NULL;
}

/*
 * A kprobe instruction page: kprobe_slots_fill() (records.h) until the
 * cache needs a new page, whose registration is the operation's one.  A
 * refused page fails the open that needed it with -ENOMEM
 * (get_insn_slot() has no other error).
 */
static struct kprobe_slots kp;

static void undo_kprobe(void)
{
	kprobe_slots_release(&kp);
}

static bool registry_grew(void *before)
{
	return registry_nr() > *(long *)before;
}

static int op_kprobe(void)
{
	long before = registry_nr();

	return kprobe_slots_fill(&kp, registry_grew, &before);
}

/*
 * An ftrace trampoline: the function tracer of a tracing instance, with one
 * function in its filter, gets an ops of its own and (on x86) a trampoline
 * (one registration).  A refused trampoline is not used: the ops is called
 * through the list function.  enabled_functions then shows no trampoline
 * for the function (a trampoline in use is shown with %pS: a bare address
 * is one the kernel does not know), and the function is still traced.
 */
#define FT_INSTANCE	TRACING "/instances/dyntext_faults"
#define FT_FUNC		"vfs_read"

static int ftrace_setup(void)
{
	if (mkdir(FT_INSTANCE, 0755) && errno != EEXIST)
		return -errno;
	return write_str(FT_INSTANCE "/set_ftrace_filter", FT_FUNC, O_TRUNC);
}

static void ftrace_cleanup(void)
{
	write_str(FT_INSTANCE "/current_tracer", "nop", O_TRUNC);
	rmdir(FT_INSTANCE);
}

static int op_ftrace(void)
{
	write_str(FT_INSTANCE "/trace", "", O_TRUNC);
	return write_str(FT_INSTANCE "/current_tracer", "function", O_TRUNC);
}

static void undo_ftrace(void)
{
	write_str(FT_INSTANCE "/current_tracer", "nop", O_TRUNC);
}

static const char *check_ftrace(void)
{
	char buf[64];
	int fd = open("/proc/self/stat", O_RDONLY);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf)) < 0)
			perror("read");
		close(fd);
	}
	if (file_wait_line(TRACING "/enabled_functions", FT_FUNC " ", "tramp: 0x", 0))
		return "a trampoline the kernel does not know is in use";
	if (!file_wait_line(FT_INSTANCE "/trace", FT_FUNC, NULL, 0))
		return FT_FUNC " not traced";
	return NULL;
}

struct target {
	const char *name;
	int (*op)(void);
	void (*undo)(void);
	int clean;		/* what the call returns without injection */
	/* What it may return for lack of memory or a refused registration. */
	int allowed[4];
	int regions;		/* dyntext_add() calls of a clean call */
	/*
	 * A refused registration: the call fails with this (0: REFUSED), or
	 * with degrades set, succeeds without the text (nothing registered)
	 * and check() finds nothing wrong while it is in effect.
	 */
	int refused;
	bool degrades;
	const char *(*check)(void);
	/* Results. */
	long calls;
	unsigned long attempts, injected, failed, tolerated, not_reached,
		      bad, leftovers, random_attempts, random_failed;
	int err[MAX_ERRNO], err_n[MAX_ERRNO], nr_err;
	char first_bad[200];
};

#define NR_TARGETS 8
/*
 * The first NR_SWEPT targets also get fail-nth and random failures; the
 * kprobe, ftrace and struct_ops ones only the refused registration (each
 * call makes hundreds or thousands of allocations in code that is not the
 * registry's).
 */
#define NR_SWEPT 5

static struct target targets[NR_TARGETS] = {
	{ "BPF_PROG_LOAD, 2 subprograms", op_prog, undo_prog, 0,
	  { -ENOMEM, -KERNEL_ENOTSUPP, REFUSED }, 3 },
	/* Core and init text. */
	{ "finit_module", op_mod, undo_mod, 0, { -ENOMEM, REFUSED }, 2 },
	{ "finit_module fail_init=1", op_mod_fail, NULL, -EINVAL,
	  { -ENOMEM, -EINVAL, REFUSED } },
	/*
	 * Linux 6.1 can turn a failed allocation into -EINVAL here:
	 * register_fentry() ignores the error of ftrace_set_filter_ip(), and
	 * register_ftrace_direct_multi() refuses the empty filter with it.
	 */
	{ "fentry attach", op_fentry, undo_fentry, 0,
	  { -ENOMEM, -EINVAL, REFUSED }, 1 },
	{ "BPF_BTF_LOAD, 40 types", op_btf, undo_btf, 0,
	  { -ENOMEM } },
	{ "kprobe needing a new instruction page", op_kprobe, undo_kprobe, 0,
	  { -ENOMEM }, 1, -ENOMEM },
	{ "function tracer instance (ftrace trampoline)", op_ftrace,
	  undo_ftrace, 0, { }, 1, .degrades = true, .check = check_ftrace },
	/*
	 * Registrations: counted (see main()): the programs, from 6.12 on
	 * their trampolines, and the programs of libbpf's feature probes.
	 */
	{ "struct_ops map (3 programs, their trampolines)", op_struct_ops,
	  undo_struct_ops, 0, { }, -1 },
};

/* ------------------------------------------------------------------ */
/* Fault injection knobs                                               */

static int nth_fd = -1, mif_fd = -1;
static long base_nr;

static int knob(const char *attr, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), DBG "/%s/%s", attr, file);
	return write_str(path, val, O_TRUNC);
}

static int knobs(int probability)
{
	static const char * const attrs[] = { "failslab", "fail_page_alloc" };
	char p[16];
	int i, err = 0;

	snprintf(p, sizeof(p), "%d", probability);
	for (i = 0; i < 2; i++) {
		err |= knob(attrs[i], "verbose", "0");
		err |= knob(attrs[i], "ignore-gfp-wait", "N");
		err |= knob(attrs[i], "task-filter", "Y");
		err |= knob(attrs[i], "interval", "1");
		err |= knob(attrs[i], "times", "-1");
		err |= knob(attrs[i], "space", "0");
		err |= knob(attrs[i], "probability", p);
	}
	/* And dyntext_add() (fail-nth counts its calls too). */
	err |= knob("fail_dyntext", "verbose", "0");
	err |= knob("fail_dyntext", "task-filter", "Y");
	err |= knob("fail_dyntext", "interval", "1");
	err |= knob("fail_dyntext", "times", "-1");
	err |= knob("fail_dyntext", "space", "0");
	err |= knob("fail_dyntext", "probability", p);
	/*
	 * Order 0 and highmem too (vmalloc asks for __GFP_HIGHMEM pages): this
	 * task's memory is locked, it takes no page faults.
	 */
	err |= knob("fail_page_alloc", "min-order", "0");
	err |= knob("fail_page_alloc", "ignore-gfp-highmem", "N");
	return err;
}

static int set_nth(unsigned long n)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%lu", n);

	return pwrite(nth_fd, buf, len, 0) == len ? 0 : -errno;
}

static long get_nth(void)
{
	char buf[32] = "";
	ssize_t n = pread(nth_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

static void set_make_it_fail(bool on)
{
	if (pwrite(mif_fd, on ? "1" : "0", 1, 0) != 1)
		perror("make-it-fail");
}

/* ------------------------------------------------------------------ */

static void note_errno(struct target *t, int err)
{
	int i;

	for (i = 0; i < t->nr_err && t->err[i] != err; i++)
		;
	if (i == t->nr_err) {
		if (t->nr_err == MAX_ERRNO)
			return;
		t->err[t->nr_err++] = err;
	}
	t->err_n[i]++;
}

static bool allowed(const struct target *t, int err)
{
	int i;

	for (i = 0; i < 4 && t->allowed[i]; i++)
		if (t->allowed[i] == err)
			return true;
	return false;
}

static void bad(struct target *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->bad++) {
		va_start(ap, fmt);
		vsnprintf(t->first_bad, sizeof(t->first_bad), fmt, ap);
		va_end(ap);
	}
}

/* The registry back at its size (trampolines go after RCU-tasks periods). */
static bool settled(void)
{
	double t0 = now_s();
	long nr;

	do {
		nr = registry_nr();
		if (nr == base_nr)
			return true;
		usleep(2000);
	} while (now_s() - t0 < 10);
	return false;
}

/* One call with the n-th allocation failing (n = 0: none). */
static void attempt(struct target *t, unsigned long n, bool random)
{
	long left = 0;
	int ret;

	if (n)
		set_nth(n);
	if (random)
		set_make_it_fail(true);
	ret = t->op();
	if (random)
		set_make_it_fail(false);
	if (n) {
		left = get_nth();
		set_nth(0);
	}
	if (random) {
		t->random_attempts++;
	} else {
		t->attempts++;
		if (left == 0)
			t->injected++;
		else
			t->not_reached++;
	}
	if (ret == 0 && t->undo)
		t->undo();
	if (ret != t->clean) {
		if (random)
			t->random_failed++;
		else
			t->failed++;
		note_errno(t, ret);
		if (!allowed(t, ret))
			bad(t, "%s#%lu: returned %d (%s)", random ? "random" : "nth",
			    n, ret, strerror(-ret));
		if (!random && left != 0)
			bad(t, "nth#%lu: returned %d without an injected failure",
			    n, ret);
	} else if (!random && left == 0 && t->clean == 0) {
		t->tolerated++;
	}
	if (!settled()) {
		t->leftovers++;
		bad(t, "%s#%lu: registry holds %ld regions, %ld before",
		    random ? "random" : "nth", n, registry_nr(), base_nr);
		base_nr = registry_nr();
	}
}

static int fail_dyntext_knob(const char *file, long val)
{
	char v[32];

	snprintf(v, sizeof(v), "%ld", val);
	return knob("fail_dyntext", file, v);
}

/*
 * dyntext_add() refused from its k-th call in the operation on, for each
 * k up to t->regions, and then from the call after the last (the
 * operation succeeds).  Returns how many refusals failed the operation
 * cleanly; a refusal that the operation survived, or that left regions
 * behind, is bad.
 */
static int refuse(struct target *t)
{
	int k, ret, clean = 0;

	if (knobs(0) || fail_dyntext_knob("probability", 100)) {
		bad(t, "fail_dyntext not set up");
		return 0;
	}
	for (k = 1; k <= t->regions + 1; k++) {
		bool refused = k <= t->regions;
		const char *wrong = NULL;

		fail_dyntext_knob("space", k);
		set_make_it_fail(true);
		ret = t->op();
		set_make_it_fail(false);
		if (refused && t->degrades && !ret) {
			if (registry_nr() != base_nr)
				wrong = "registered anyway";
			else if (t->check)
				wrong = t->check();
		}
		if (ret == 0 && t->undo)
			t->undo();
		if (!refused || t->degrades ? ret != 0 :
		    ret != (t->refused ?: REFUSED))
			bad(t, "registration %d of %d refused: returned %d (%s)",
			    k, t->regions, ret, strerror(-ret));
		else if (wrong)
			bad(t, "registration %d of %d refused: %s",
			    k, t->regions, wrong);
		else if (refused)
			clean++;
		if (!settled()) {
			t->leftovers++;
			bad(t, "registration %d refused: registry holds %ld regions, %ld before",
			    k, registry_nr(), base_nr);
			base_nr = registry_nr();
		}
	}
	knobs(0);
	return clean;
}

/*
 * How many times a clean call calls dyntext_add() (transient regions too:
 * libbpf's feature probes load programs): fail_dyntext's space counts them
 * down.
 */
static int count_adds(struct target *t)
{
	const int big = 1000000;
	int ret, left;

	if (knobs(0) || fail_dyntext_knob("probability", 100) ||
	    fail_dyntext_knob("space", big))
		return -1;
	set_make_it_fail(true);
	ret = t->op();
	set_make_it_fail(false);
	if (ret == 0 && t->undo)
		t->undo();
	left = sysctl_get(FAIL_DYNTEXT "/space");
	knobs(0);
	settled();
	return ret || left < 0 ? -1 : big - left;
}

/* How many allocations a clean call makes. */
static long count_calls(struct target *t)
{
	const unsigned long big = 1000000000UL;
	long left;
	int ret;

	set_nth(big);
	ret = t->op();
	left = get_nth();
	set_nth(0);
	if (ret == 0 && t->undo)
		t->undo();
	settled();
	if (ret != t->clean || left <= 0)
		return -1;
	return big - left;
}

static void sweep(struct target *t, double budget)
{
	double t0 = now_s();
	unsigned long n, stride, c;
	char *done;

	t->calls = count_calls(t);
	if (t->calls <= 0)
		return;
	c = t->calls;
	done = calloc(c + 1, 1);
	/* Coarse first, over the whole call, then finer while time allows. */
	for (stride = 1; stride * 2 <= c; stride *= 2)
		;
	for (; stride >= 1 && now_s() - t0 < budget; stride /= 2)
		for (n = stride; n <= c && now_s() - t0 < budget; n += stride)
			if (!done[n]) {
				attempt(t, n, false);
				done[n] = 1;
			}
	free(done);
}

/* Touch the stack now, so that it does not grow while allocations fail. */
static void grow_stack(void)
{
	char buf[256 * 1024];

	memset(buf, 1, sizeof(buf));
	/* Keep the compiler from dropping the stores. */
	__asm__ __volatile__("" : : "r"(buf) : "memory");
}

struct dyn_lines {
	char **l;
	size_t n;
};

static int dyn_line_fn(const struct ksym_line *k, void *arg)
{
	struct dyn_lines *d = arg;
	char *s;

	if (strcmp(k->mod, "bpf") && strncmp(k->mod, "__builtin__", 11))
		return 0;
	if (asprintf(&s, "%llx %c %s [%s]", k->addr, k->type, k->name, k->mod) < 0)
		return -ENOMEM;
	d->l = realloc(d->l, (d->n + 1) * sizeof(*d->l));
	d->l[d->n++] = s;
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

static int dyn_lines(struct dyn_lines *d)
{
	memset(d, 0, sizeof(*d));
	if (kallsyms_for_each(dyn_line_fn, d))
		return -1;
	qsort(d->l, d->n, sizeof(*d->l), str_cmp);
	return 0;
}

int main(int argc, char **argv)
{
	double secs = 60, t0, share;
	struct dyn_lines before, after;
	char path[PATH_MAX + 32];
	int opt, i, ret;
	size_t j;
	bool same;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt == 't')
			secs = atof(optarg);
		else
			return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (geteuid() || access(DYNTEXT_CHECK, R_OK) || access(DBG "/failslab", F_OK) ||
	    access(DBG "/fail_page_alloc", F_OK) || access(FAIL_DYNTEXT, F_OK)) {
		printf("1..0 # SKIP needs root, %s and failslab/fail_page_alloc/fail_dyntext\n",
		       DYNTEXT_CHECK);
		return 4;
	}
	ret = readlink("/proc/self/exe", bindir, sizeof(bindir) - 1);
	if (ret < 0)
		return 1;
	bindir[ret] = 0;
	*strrchr(bindir, '/') = 0;
	snprintf(path, sizeof(path), "%s/dyntext_test.ko", bindir);
	mod_fd = open(path, O_RDONLY | O_CLOEXEC);
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	mif_fd = open("/proc/self/make-it-fail", O_RDWR | O_CLOEXEC);
	libbpf_set_print(NULL);
	undo_mod();
	/* Before the dynamic lines are read: it may add kprobes' first page. */
	ret = kprobe_slots_init(&kp);
	if (!ret)
		ret = ftrace_setup();
	if (ret) {
		printf("1..0 # SKIP kprobe or ftrace setup failed: %s\n",
		       strerror(-ret));
		return 1;
	}
	if (dyn_lines(&before)) {
		tap(false, "/proc/kallsyms readable");
		return 1;
	}
	ret = prog_setup();
	if (!ret)
		ret = fentry_setup();
	if (!ret)
		ret = btf_setup();
	if (mod_fd < 0 || nth_fd < 0 || mif_fd < 0 || ret) {
		printf("1..0 # SKIP setup failed: %s\n", strerror(ret ? -ret : errno));
		return 1;
	}
	/*
	 * Since 6.9 (BPF tokens) bpf_prog_load() answers a failed
	 * bpf_prog_alloc() with -EINVAL, not -ENOMEM (kernel/bpf/syscall.c
	 * of 6.12: "err = -EINVAL; goto put_token;").  The registry adds
	 * nothing that allocates on that path, so only that code can return
	 * it there.
	 */
	if (kernel_at_least(6, 9))
		targets[0].allowed[3] = -EINVAL;
	/* No page faults of this task while allocations fail. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("mlockall");
	grow_stack();
	if (knobs(0)) {
		tap(false, "fault injection knobs");
		return 1;
	}
	base_nr = registry_nr();
	if (base_nr < 0) {
		tap(false, "registry readable");
		return 1;
	}
	for (i = 0; i < NR_TARGETS; i++) {
		int ret = targets[i].op();

		if (!ret && targets[i].undo)
			targets[i].undo();
		tap(ret == targets[i].clean && settled(),
		    "%s without injection: %d", targets[i].name, ret);
		if (targets[i].regions < 0) {
			targets[i].regions = count_adds(&targets[i]);
			printf("# %s: %d dyntext_add() calls\n", targets[i].name,
			       targets[i].regions);
		}
	}

	for (i = 0; i < NR_TARGETS; i++) {
		struct target *t = &targets[i];
		unsigned long was_bad = t->bad;
		int clean;

		if (!t->regions)
			continue;
		clean = refuse(t);
		tap(clean == t->regions && t->bad == was_bad,
		    "%s: each of its %d registrations refused fails the call cleanly (%d did)",
		    t->name, t->regions, clean);
		if (t->bad != was_bad)
			printf("#   first: %s\n", t->first_bad);
		t->bad = was_bad;
	}

	t0 = now_s();
	share = secs * 0.75 / NR_SWEPT;
	for (i = 0; i < NR_SWEPT; i++)
		sweep(&targets[i], share);
	if (knobs(1)) {
		tap(false, "fault injection knobs, probability 1%%");
	} else {
		double r0 = now_s();

		while (now_s() - t0 < secs && now_s() - r0 < secs * 0.25 + 1)
			for (i = 0; i < NR_SWEPT; i++)
				attempt(&targets[i], 0, true);
	}
	knobs(0);
	printf("# fault injection ran %.1f s\n", now_s() - t0);

	for (i = 0; i < NR_SWEPT; i++) {
		struct target *t = &targets[i];
		char errs[256] = "";
		int k, len = 0;

		for (k = 0; k < t->nr_err; k++)
			len += snprintf(errs + len, sizeof(errs) - len, "%s%d x%d",
					k ? ", " : "", t->err[k], t->err_n[k]);
		tap(t->calls > 0 && t->attempts > 0 && !t->bad && !t->leftovers,
		    "%s: every failure clean, nothing left behind", t->name);
		printf("#   %ld allocations per call; fail-nth: %lu calls,\n"
		       "#   %lu failed as injected, %lu succeeded anyway, %lu past the last allocation;\n"
		       "#   random 1%%: %lu calls, %lu failed;\n"
		       "#   errors returned (errno x times): %s; leftovers %lu\n",
		       t->calls, t->attempts, t->failed, t->tolerated,
		       t->not_reached, t->random_attempts, t->random_failed,
		       errs[0] ? errs : "none", t->leftovers);
		if (t->bad)
			printf("#   %lu bad, first: %s\n", t->bad, t->first_bad);
	}

	undo_prog();
	ftrace_cleanup();
	ksym_abi__destroy(prog.skel);
	bpf_images__destroy(fentry.skel);
	close(prog.btf_fd);
	prog.btf_fd = -1;
	/* Deferred frees: give them a moment. */
	for (i = 0; i < 50; i++) {
		same = !dyn_lines(&after) && after.n == before.n;
		for (j = 0; same && j < after.n; j++)
			same = !strcmp(after.l[j], before.l[j]);
		if (same)
			break;
		usleep(200000);
	}
	tap(same, "/proc/kallsyms: %zu dynamic lines before, %zu after",
	    before.n, after.n);
	if (!same)
		for (j = 0; j < after.n; j++)
			printf("#   %s\n", after.l[j]);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
