// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads for `make bench` (not a test: it asserts nothing, it measures).
 *
 *   dyntext_bench kallsyms N1 N2 ...   full /proc/kallsyms read, best of 3,
 *                                      with N1, N2, ... programs loaded
 *   dyntext_bench load COUNT           BPF program load+unload rate
 *   dyntext_bench recstart N PERF      perf record start-up with N programs
 *   dyntext_bench hold N               N programs loaded until a line on
 *                                      stdin
 *   dyntext_bench replay N [PAGES]     PERF_EVENT_IOC_KSYMBOL_REPLAY with N
 *                                      trivial programs loaded: time (best
 *                                      of 5), records and bytes
 *   dyntext_bench lookup KO CALLS N1 N2 ...
 *                                      ns per kernel_text_address() and
 *                                      kallsyms_lookup() call on an address
 *                                      in each kind of text, with N1, N2, ...
 *                                      programs loaded, timed in the kernel
 *                                      by the module KO (bench_module/ of the selftests)
 *   dyntext_bench modfuncs KO CALLS FKO1 FKO2 ...
 *                                      for each module FKO with generated
 *                                      functions (funcs_module/ of the
 *                                      selftests): the read of
 *                                      available_filter_functions (best of
 *                                      3), ns per kallsyms_lookup() of an
 *                                      address in it (KO, as lookup), and
 *                                      the size of its text symbol index
 *                                      (8 + 8 per distinct address)
 *   dyntext_bench modload KO COUNT [listen]
 *                                      module load+unload rate of KO
 *                                      (finit_module, delete_module), with
 *                                      listen while a side-band event of
 *                                      its own is open
 *   dyntext_bench stale N COUNT [open] BPF program load+unload rate (COUNT)
 *                                      with N replays left unfinished, each
 *                                      on an event of its own (-ENOSPC in
 *                                      a one-page buffer, never resumed);
 *                                      with open, the same N events
 *                                      without a replay
 *   dyntext_bench spin SECS            a BPF program run in a loop for SECS,
 *                                      between lines read from stdin: its
 *                                      rate (runs per second)
 *   dyntext_bench latency N STALE      what each registry operation costs
 *                                      others with N programs loaded and
 *                                      STALE replays left unfinished: the
 *                                      longest hold of each lock (lock_stat)
 *                                      and the longest stretch with
 *                                      preemption or interrupts off (the
 *                                      preemptirqsoff tracer); needs a
 *                                      kernel with configs/latency.config.
 *                                      With DYNTEXT_LATENCY_FUNCTIONS=PHASE
 *                                      the tracer records the functions of
 *                                      that phase's longest stretch (left
 *                                      in the tracefs trace file)
 *
 * Results are printed as "name,param,value,unit" lines; lines starting
 * with "#" are notes.
 */
#define _GNU_SOURCE	/* sched_setaffinity(); 6.1's lib.mk does not define it */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "records.h"
#include "bpf_run.h"
#include "ksym_abi.skel.h"
#include "bpf_images.skel.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int load_trivial(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts);

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "bench", "GPL",
			     insns, 2, &opts);
}

/* Read all of /proc/kallsyms; returns seconds, lines in *lines. */
static double read_kallsyms(long *lines)
{
	static char buf[1 << 16];
	double t0 = now();
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t n;
	long nl = 0;

	if (!f)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		for (size_t i = 0; i < n; i++)
			nl += buf[i] == '\n';
	fclose(f);
	*lines = nl;
	return now() - t0;
}

static int bench_kallsyms(int argc, char **argv)
{
	struct rlimit rl = { 200000, 200000 };
	int *fds, loaded = 0, i, r;
	long max = 0, lines = 0;

	for (i = 0; i < argc; i++)
		if (atol(argv[i]) > max)
			max = atol(argv[i]);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("setrlimit");
	fds = calloc(max + 1, sizeof(*fds));
	for (i = 0; i < argc; i++) {
		long want = atol(argv[i]);
		double best = 1e9, t;

		while (loaded < want) {
			fds[loaded] = load_trivial();
			if (fds[loaded] < 0) {
				fprintf(stderr, "load %d: %s\n", loaded,
					strerror(errno));
				return 1;
			}
			loaded++;
		}
		for (r = 0; r < 3; r++) {
			t = read_kallsyms(&lines);
			if (t < best)
				best = t;
		}
		printf("kallsyms_read_ms,%ld,%.3f,ms\n", want, best * 1e3);
		printf("kallsyms_lines,%ld,%ld,lines\n", want, lines);
		fflush(stdout);
	}
	for (i = 0; i < loaded; i++)
		close(fds[i]);
	return 0;
}

static int bench_load(long count)
{
	double t0, t;
	long i;
	int fd;

	/* Warm up (allocator, JIT pack) before timing. */
	for (i = 0; i < 100; i++)
		close(load_trivial());
	t0 = now();
	for (i = 0; i < count; i++) {
		fd = load_trivial();
		if (fd < 0) {
			perror("load");
			return 1;
		}
		close(fd);
	}
	t = now() - t0;
	printf("bpf_load_unload_per_s,%ld,%.1f,ops/s\n", count, count / t);
	return 0;
}

/* Bytes and records the ring buffers hold after a replay. */
static void count_stream(struct rec_stream *s, long *recs, long *bytes)
{
	size_t i;

	*recs = 0;
	*bytes = 0;
	for (i = 0; i < s->nr; i++) {
		const struct rec *r = &s->recs[i];

		(*recs)++;
		/* header, body, sample_id (time, cpu) as the kernel wrote it */
		if (r->type == PERF_RECORD_KSYMBOL)
			*bytes += 8 + 16 + ((strlen(r->name) + 8) & ~7UL) + 16;
		else
			*bytes += 8 + 8 + BPF_TAG_SIZE + 16;
	}
}

/* n trivial programs, loaded; their fds, or NULL. */
static int *load_many(long n)
{
	struct rlimit rl = { 200000, 200000 };
	int *fds, i;

	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("setrlimit");
	fds = calloc(n + 1, sizeof(*fds));
	for (i = 0; fds && i < n; i++) {
		fds[i] = load_trivial();
		if (fds[i] < 0) {
			perror("bench: load");
			return NULL;
		}
	}
	return fds;
}

static int bench_replay(long n, long pages)
{
	double best = 1e9, t;
	long recs = 0, bytes = 0, ret = 0;
	unsigned int calls = 0;
	int *fds, i;

	fds = load_many(n);
	if (!fds)
		return 1;
	for (i = 0; i < 5; i++) {
		struct rec_stream s;

		if (rec_stream_open(&s, pages)) {
			perror("bench: perf event");
			return 1;
		}
		t = now();
		ret = rec_replay(&s, 0, &calls, NULL);
		t = now() - t;
		if (ret < 0) {
			perror("bench: replay");
			return 1;
		}
		if (t < best)
			best = t;
		rec_stream_drain(&s);
		count_stream(&s, &recs, &bytes);
		rec_stream_close(&s);
	}
	printf("replay_ms,%ld@%ldp,%.2f,ms\n", n, pages, best * 1e3);
	printf("replay_calls,%ld@%ldp,%u,calls\n", n, pages, calls);
	printf("replay_regions,%ld,%ld,regions\n", n, ret);
	printf("replay_records,%ld,%ld,records\n", n, recs);
	printf("replay_bytes,%ld,%ld,bytes\n", n, bytes);
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

/*
 * A replay left unfinished: a CPU event with a one-page ring buffer whose
 * first replay call stops with -ENOSPC (half a page of records), and is
 * never resumed.  Its fd, or -errno.  The event is disabled, so that the
 * live side-band records pass it by after a state test: between N such
 * events with and without a replay, what differs is what the registry does
 * with the replays left behind.
 */
static int stale_replay(bool replay)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.ksymbol = 1,
		.bpf_event = 1,
		.disabled = 1,
	};
	struct perf_ksymbol_replay arg = { .size = sizeof(arg) };
	long page = sysconf(_SC_PAGESIZE);
	int fd, err = 0;
	void *rb;

	fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, 0);
	if (fd < 0)
		return -errno;
	rb = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (rb == MAP_FAILED)
		err = -errno;
	else if (replay && ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &arg) >= 0)
		err = -EALREADY;	/* complete: nothing left behind */
	else if (replay && errno != ENOSPC)
		err = -errno;
	/*
	 * The replay stays with the event, which needs its buffer no more:
	 * unmapped, it goes away when its fd is closed (a mapping holds
	 * the event), and 100,000 of them need no 100,000 mappings.
	 */
	if (rb != MAP_FAILED)
		munmap(rb, 2 * page);
	if (!err)
		return fd;
	close(fd);
	return err;
}

static int bench_stale(long n, long count, bool replay)
{
	int *fds, *stale, i;
	long made = 0;

	/* Enough regions that a replay fills half a page: ~20 per call. */
	fds = load_many(200);
	stale = calloc(n + 1, sizeof(*stale));
	if (!fds || !stale)
		return 1;
	for (i = 0; i < n; i++) {
		stale[i] = stale_replay(replay);
		if (stale[i] < 0) {
			fprintf(stderr, "bench: stale replay %d: %s\n", i,
				strerror(-stale[i]));
			return 1;
		}
		made++;
	}
	printf("# %ld events, %s\n", made,
	       replay ? "each with a replay left unfinished" : "no replay");
	printf("%s,%ld,%ld,events\n", replay ? "stale_replays" : "idle_events",
	       n, made);
	if (bench_load(count))
		return 1;
	for (i = 0; i < n; i++)
		close(stale[i]);
	for (i = 0; i < 200; i++)
		close(fds[i]);
	free(stale);
	free(fds);
	return 0;
}

/*
 * Address lookups (workload 2).  The kinds of text an address can be in;
 * everything but the BPF program is set up once, before any program is
 * loaded, and found in /proc/kallsyms then (reading it is slow on stock
 * kernels with many programs loaded).  Each address is a symbol's start
 * plus LOOKUP_OFF, so that kallsyms_lookup() has an offset to compute.
 *
 * Core text is the exception: kallsyms_lookup() finds a core symbol's name
 * by skipping from the last of every 256 symbols to it, so its cost
 * depends on the symbol's position in its group of 256, which differs
 * between the two kernels (the patched one has more symbols).  Its
 * addresses are the starts of the text symbols at the even positions of
 * the group that holds vfs_read, looked up in turn: 0 to 254 in either
 * kernel.
 */
#define LOOKUP_OFF	8
#define LOOKUP_MAX	128
#define LOOKUP_PASSES	3
#define LOOKUP_MOD	"dyntext_lookup_bench"
#define TRACEFS		"/sys/kernel/tracing"
#define LOOKUP_INST	TRACEFS "/instances/dyntext_bench"
#define LOOKUP_RUN	"/sys/module/" LOOKUP_MOD "/parameters/run"

enum {
	LK_CORE, LK_MODULE, LK_BPF_PROG, LK_BPF_TRAMP, LK_FTRACE, LK_KPROBE,
	LK_NR
};

struct lookup_target {
	const char *kind;
	unsigned long long addr[LOOKUP_MAX];
	int nr;
	unsigned int off;		/* of addr[0] in sym */
	char sym[KSYM_NAME_LEN];	/* what kallsyms_lookup() should name */
	const char *mod;		/* the [module] it should name, or "" */
};

/* The start of name in module mod ("" for the core kernel) + LOOKUP_OFF. */
static int lookup_sym(struct lookup_target *t, const char *name,
		      const char *mod)
{
	unsigned long long addr = 0;
	int n = kallsyms_sym_count(name, mod, 0, &addr, NULL);

	if (n <= 0 || !addr) {
		fprintf(stderr, "lookup: no %s [%s] in /proc/kallsyms\n",
			name, mod);
		return -1;
	}
	t->addr[0] = addr + LOOKUP_OFF;
	t->nr = 1;
	t->off = LOOKUP_OFF;
	snprintf(t->sym, sizeof(t->sym), "%s", name);
	return 0;
}

struct core_group {
	long idx;		/* of the line in /proc/kallsyms */
	long first;		/* of the group of 256 that holds vfs_read */
	struct lookup_target *t;
};

static int core_find_fn(const struct ksym_line *l, void *arg)
{
	struct core_group *c = arg;

	if (!l->mod[0] && !strcmp(l->name, "vfs_read")) {
		c->first = c->idx & ~255L;
		return 1;
	}
	c->idx++;
	return 0;
}

static int core_pick_fn(const struct ksym_line *l, void *arg)
{
	struct core_group *c = arg;
	long pos = c->idx++ - c->first;

	if (pos >= 256 || l->mod[0])
		return 1;
	if (pos < 0 || pos % 2 || (l->type != 't' && l->type != 'T') ||
	    c->t->nr == LOOKUP_MAX)
		return 0;
	if (!c->t->nr)
		snprintf(c->t->sym, sizeof(c->t->sym), "%s", l->name);
	c->t->addr[c->t->nr++] = l->addr;
	return 0;
}

static int lookup_core(struct lookup_target *t)
{
	struct core_group c = { .first = -1, .t = t };

	t->nr = 0;
	t->off = 0;
	if (kallsyms_for_each(core_find_fn, &c) || c.first < 0)
		return -1;
	c.idx = 0;
	if (kallsyms_for_each(core_pick_fn, &c) || t->nr < 64) {
		fprintf(stderr, "lookup: %d core text symbols around vfs_read\n",
			t->nr);
		return -1;
	}
	return 0;
}

/* The image of the program behind fd, its expected name, + LOOKUP_OFF. */
static int lookup_prog(struct lookup_target *t, int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	__u64 ksym = 0;
	char tag[17];

	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (__u64)(unsigned long)&ksym;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !ksym ||
	    info.jited_prog_len <= LOOKUP_OFF) {
		fprintf(stderr, "lookup: no JITed image in bpf_prog_info\n");
		return -1;
	}
	tag_hex(info.tag, tag);
	t->addr[0] = ksym + LOOKUP_OFF;
	t->nr = 1;
	t->off = LOOKUP_OFF;
	snprintf(t->sym, sizeof(t->sym), "bpf_prog_%s_%s", tag, info.name);
	return 0;
}

/*
 * Time CALLS calls of both functions on t's addresses in the kernel.  The
 * module says for how many addresses kernel_text_address() was true, and
 * what kallsyms_lookup() named the first one.
 */
static int lookup_run(const struct lookup_target *t, long calls,
		      unsigned long long *text_ps, unsigned long long *lookup_ps,
		      int *text_nr, char *name, size_t name_len)
{
	char cmd[LOOKUP_MAX * 20 + 32], res[1024], got[1024];
	size_t n;
	FILE *f;
	int i, ok;

	n = snprintf(cmd, sizeof(cmd), "%ld", calls);
	for (i = 0; i < t->nr; i++)
		n += snprintf(cmd + n, sizeof(cmd) - n, " %#llx", t->addr[i]);
	snprintf(cmd + n, sizeof(cmd) - n, "\n");
	if (write_str(LOOKUP_RUN, cmd, 0)) {
		perror("lookup: " LOOKUP_RUN);
		return -1;
	}
	f = fopen(LOOKUP_RUN, "r");
	if (!f)
		return -1;
	ok = fgets(res, sizeof(res), f) &&
	     sscanf(res, "%llu %llu %d %1000[^\n]", text_ps, lookup_ps,
		    text_nr, got) == 4;
	fclose(f);
	if (!ok) {
		fprintf(stderr, "lookup: cannot read %s\n", LOOKUP_RUN);
		return -1;
	}
	snprintf(name, name_len, "%s", got);
	return 0;
}

/* Does name (from the module) say t->sym+t->off [t->mod]? */
static bool lookup_named(const struct lookup_target *t, const char *name)
{
	char want[KSYM_NAME_LEN + 32];
	const char *mod;

	snprintf(want, sizeof(want), "%s+0x%x/", t->sym, t->off);
	if (strncmp(name, want, strlen(want)))
		return false;
	mod = strchr(name, ' ');
	if (!t->mod[0])
		return !mod;
	return mod && mod[1] == '[' && !strncmp(mod + 2, t->mod, strlen(t->mod)) &&
	       !strcmp(mod + 2 + strlen(t->mod), "]");
}

static void lookup_teardown(void)
{
	syscall(SYS_delete_module, LOOKUP_MOD, O_NONBLOCK);
	write_str(TRACEFS "/events/dyntext_bench/probe/enable", "0", 0);
	write_str(TRACEFS "/kprobe_events", "-:dyntext_bench/probe\n", O_APPEND);
	write_str(LOOKUP_INST "/current_tracer", "nop", 0);
	rmdir(LOOKUP_INST);
}

static int bench_lookup(const char *ko, long calls, int argc, char **argv)
{
	struct lookup_target t[LK_NR] = {
		[LK_CORE] = { "core", .mod = "" },
		[LK_MODULE] = { "module", .mod = LOOKUP_MOD },
		[LK_BPF_PROG] = { "bpf_prog", .mod = "" },
		[LK_BPF_TRAMP] = { "bpf_trampoline", .mod = "" },
		[LK_FTRACE] = { "ftrace_trampoline", .mod = "" },
		[LK_KPROBE] = { "kprobe_page", .mod = "" },
	};
	unsigned long long best_text[LK_NR], best_lookup[LK_NR];
	unsigned long long text = 0, lookup = 0, ps_text, ps_lookup;
	struct rlimit rl = { 200000, 200000 };
	struct bpf_images *img = NULL;
	struct bpf_link *link = NULL;
	int *fds = NULL, loaded = 0, ret = 1, fd, i, k, pass;
	char params[128], tramp[128], name[LK_NR][1100];
	int text_nr[LK_NR];
	long max = 0;

	for (i = 0; i < argc; i++)
		if (atol(argv[i]) > max)
			max = atol(argv[i]);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("setrlimit");
	fds = calloc(max + 1, sizeof(*fds));
	lookup_teardown();

	/* A BPF trampoline, an ftrace trampoline, kprobe instruction pages. */
	img = bpf_images__open_and_load();
	link = img ? bpf_program__attach(img->progs.images_fentry) : NULL;
	if (!link || bpf_trampoline_name("bpf_fentry_test1", tramp, sizeof(tramp))) {
		fprintf(stderr, "lookup: cannot attach the fentry program\n");
		goto out;
	}
	if (mkdir(LOOKUP_INST, 0755) ||
	    write_str(LOOKUP_INST "/set_ftrace_filter", "vfs_write", 0) ||
	    write_str(LOOKUP_INST "/current_tracer", "function", 0) ||
	    write_str(TRACEFS "/kprobe_events", "p:dyntext_bench/probe " KPROBE_OOL_SITE "\n",
		      O_APPEND) ||
	    write_str(TRACEFS "/events/dyntext_bench/probe/enable", "1", 0)) {
		perror("lookup: tracefs");
		goto out;
	}
	/* Give the kprobe optimizer time to run (it waits a few jiffies). */
	usleep(200000);

	if (kallsyms_sym_count("kernel_text_address", "", 'T', &text, NULL) != 1 ||
	    kallsyms_sym_count("kallsyms_lookup", "", 'T', &lookup, NULL) != 1) {
		fprintf(stderr, "lookup: no kernel_text_address or kallsyms_lookup\n");
		goto out;
	}
	snprintf(params, sizeof(params), "text_addr=%#llx lookup_addr=%#llx",
		 text, lookup);
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, params, 0)) {
		fprintf(stderr, "lookup: cannot load %s: %s\n", ko, strerror(errno));
		goto out;
	}
	close(fd);
	if (lookup_core(&t[LK_CORE]) ||
	    lookup_sym(&t[LK_MODULE], "lookup_bench_time_text", LOOKUP_MOD) ||
	    lookup_sym(&t[LK_BPF_TRAMP], tramp, "bpf") ||
	    lookup_sym(&t[LK_FTRACE], "ftrace_trampoline", "__builtin__ftrace"))
		goto out;
	if (lookup_sym(&t[LK_KPROBE], "kprobe_insn_page", "__builtin__kprobes") &&
	    lookup_sym(&t[LK_KPROBE], "kprobe_optinsn_page", "__builtin__kprobes"))
		goto out;

	for (i = 0; i < argc; i++) {
		long want = atol(argv[i]);

		while (loaded < want) {
			fds[loaded] = load_trivial();
			if (fds[loaded] < 0) {
				fprintf(stderr, "load %d: %s\n", loaded,
					strerror(errno));
				goto out;
			}
			loaded++;
		}
		/* One program out of the middle of those loaded. */
		if (!loaded || lookup_prog(&t[LK_BPF_PROG], fds[loaded / 2]))
			goto out;
		/*
		 * LOOKUP_PASSES passes over the kinds, the fastest of each
		 * kept: a slow moment of the host does not hit one kind only.
		 */
		for (k = 0; k < LK_NR; k++) {
			best_text[k] = ~0ULL;
			best_lookup[k] = ~0ULL;
		}
		for (pass = 0; pass < LOOKUP_PASSES; pass++) {
			for (k = 0; k < LK_NR; k++) {
				if (lookup_run(&t[k], calls, &ps_text, &ps_lookup,
					       &text_nr[k], name[k], sizeof(name[k])))
					goto out;
				if (ps_text < best_text[k])
					best_text[k] = ps_text;
				if (ps_lookup < best_lookup[k])
					best_lookup[k] = ps_lookup;
			}
		}
		for (k = 0; k < LK_NR; k++) {
			bool named = lookup_named(&t[k], name[k]);

			printf("# lookup %s, %ld programs: %#llx%s: ", t[k].kind,
			       want, t[k].addr[0], t[k].nr > 1 ? " ..." : "");
			printf("kernel_text_address() true for %d of %d, ",
			       text_nr[k], t[k].nr);
			printf("kallsyms_lookup() = %s%s\n", name[k],
			       named ? "" : " (not the expected name)");
			printf("kernel_text_address_ns,%s@%ld,%.1f,ns\n",
			       t[k].kind, want, best_text[k] / 1e3);
			printf("kallsyms_lookup_ns,%s@%ld,%.1f,ns\n",
			       t[k].kind, want, best_lookup[k] / 1e3);
			if (i == argc - 1) {
				printf("kernel_text_address_true,%s,%d,1=yes\n",
				       t[k].kind, text_nr[k] == t[k].nr);
				printf("kallsyms_lookup_named,%s,%d,1=yes\n",
				       t[k].kind, named);
			}
		}
		fflush(stdout);
	}
	ret = 0;
out:
	lookup_teardown();
	bpf_link__destroy(link);
	bpf_images__destroy(img);
	for (i = 0; i < loaded; i++)
		close(fds[i]);
	free(fds);
	return ret;
}

/* Addresses of module t->mod's text symbols, LOOKUP_MAX spread evenly. */
struct mod_pick {
	struct lookup_target *t;
	unsigned long long *addrs;
	long nr, max;
	char last[KSYM_NAME_LEN];	/* the module's last text symbol */
	unsigned long long last_addr;
};

static int mod_pick_fn(const struct ksym_line *l, void *arg)
{
	struct mod_pick *p = arg;

	if (strcmp(l->mod, p->t->mod) || (l->type != 't' && l->type != 'T'))
		return 0;
	if (p->nr == p->max) {
		p->max = p->max ? 2 * p->max : 1024;
		p->addrs = realloc(p->addrs, p->max * sizeof(*p->addrs));
		if (!p->addrs)
			return -1;
	}
	if (!p->nr)
		snprintf(p->t->sym, sizeof(p->t->sym), "%s", l->name);
	snprintf(p->last, sizeof(p->last), "%s", l->name);
	p->last_addr = l->addr;
	p->addrs[p->nr++] = l->addr;
	return 0;
}

static int ull_cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* Read available_filter_functions: ms, and lines of module mod. */
static double aff_read(const char *mod, long *lines)
{
	char line[512], tag[128];
	double t0 = now();
	FILE *f = fopen(TRACEFS "/available_filter_functions", "r");

	if (!f)
		return -1;
	snprintf(tag, sizeof(tag), "[%s]", mod);
	*lines = 0;
	while (fgets(line, sizeof(line), f))
		*lines += !!strstr(line, tag);
	fclose(f);
	return (now() - t0) * 1e3;
}

#define LOOKUP_RUN_NAME	"/sys/module/" LOOKUP_MOD "/parameters/run_name"

/*
 * Time CALLS calls of kallsyms_lookup_name(name) in the kernel: ps per
 * call in the fastest batch, and the address the lookup returned.
 */
static int lookup_name_run(const char *name, long calls,
			   unsigned long long *ps, unsigned long long *addr)
{
	char cmd[KSYM_NAME_LEN + 96], res[128];
	FILE *f;
	int ok;

	snprintf(cmd, sizeof(cmd), "%ld %s\n", calls, name);
	if (write_str(LOOKUP_RUN_NAME, cmd, 0)) {
		perror("lookup: " LOOKUP_RUN_NAME);
		return -1;
	}
	f = fopen(LOOKUP_RUN_NAME, "r");
	if (!f)
		return -1;
	ok = fgets(res, sizeof(res), f) &&
	     sscanf(res, "%llu %llx", ps, addr) == 2;
	fclose(f);
	return ok ? 0 : -1;
}

/*
 * Workload 8: per module FKO, with it loaded: the read of
 * available_filter_functions and of /proc/kallsyms (best of 3), and
 * timed in the kernel, kallsyms_lookup() of its text, of core text and
 * kallsyms_lookup_name() of "module:its last function" (the paths the
 * module symbol index must not slow down), then the index's size.
 */
static int bench_modfuncs(const char *ko, long calls, int argc, char **argv)
{
	unsigned long long text = 0, lookup = 0, lname = 0, ps_text, ps_lookup;
	unsigned long long best, best_core, ps_name, got;
	char params[192], path[PATH_MAX], modname[64], name[1100], *dot;
	char qname[KSYM_NAME_LEN + 64];
	struct lookup_target t = { "module_funcs" }, core = { "core", .mod = "" };
	struct mod_pick p = { .t = &t };
	long lines = 0, ks_lines = 0, i, distinct;
	int fd, a, pass, text_nr;
	double ms, best_ms, best_ks;

	lookup_teardown();
	if (kallsyms_sym_count("kernel_text_address", "", 'T', &text, NULL) != 1 ||
	    kallsyms_sym_count("kallsyms_lookup", "", 'T', &lookup, NULL) != 1 ||
	    kallsyms_sym_count("kallsyms_lookup_name", "", 'T', &lname, NULL) != 1) {
		fprintf(stderr, "modfuncs: no kernel_text_address, kallsyms_lookup or kallsyms_lookup_name\n");
		return 1;
	}
	snprintf(params, sizeof(params),
		 "text_addr=%#llx lookup_addr=%#llx name_addr=%#llx",
		 text, lookup, lname);
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, params, 0)) {
		fprintf(stderr, "modfuncs: cannot load %s: %s\n", ko, strerror(errno));
		return 1;
	}
	close(fd);
	if (lookup_core(&core))
		core.nr = 0;
	for (a = 0; a < argc; a++) {
		snprintf(path, sizeof(path), "%s", argv[a]);
		snprintf(modname, sizeof(modname), "%s", basename(path));
		dot = strstr(modname, ".ko");
		if (dot)
			*dot = 0;
		t.mod = modname;
		syscall(SYS_delete_module, modname, O_NONBLOCK);
		fd = open(argv[a], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || syscall(SYS_finit_module, fd, "", 0)) {
			fprintf(stderr, "modfuncs: cannot load %s: %s\n", argv[a],
				strerror(errno));
			break;
		}
		close(fd);

		best_ms = -1;
		best_ks = -1;
		for (pass = 0; pass < 3; pass++) {
			ms = aff_read(modname, &lines);
			if (best_ms < 0 || ms < best_ms)
				best_ms = ms;
			ms = read_kallsyms(&ks_lines) * 1e3;
			if (best_ks < 0 || ms < best_ks)
				best_ks = ms;
		}

		p.nr = 0;
		if (kallsyms_for_each(mod_pick_fn, &p) || !p.nr) {
			fprintf(stderr, "modfuncs: no text of %s\n", modname);
			break;
		}
		qsort(p.addrs, p.nr, sizeof(*p.addrs), ull_cmp);
		for (distinct = 0, i = 0; i < p.nr; i++)
			distinct += !i || p.addrs[i] != p.addrs[i - 1];
		t.nr = p.nr < LOOKUP_MAX ? p.nr : LOOKUP_MAX;
		for (i = 0; i < t.nr; i++)
			t.addr[i] = p.addrs[i * p.nr / t.nr] + 1;
		best = ~0ULL;
		for (pass = 0; pass < LOOKUP_PASSES; pass++) {
			if (lookup_run(&t, calls, &ps_text, &ps_lookup, &text_nr,
				       name, sizeof(name)))
				break;
			if (ps_lookup < best)
				best = ps_lookup;
		}
		best_core = ~0ULL;
		for (pass = 0; core.nr && pass < LOOKUP_PASSES; pass++) {
			if (lookup_run(&core, calls, &ps_text, &ps_lookup,
				       &text_nr, qname, sizeof(qname)))
				break;
			if (ps_lookup < best_core)
				best_core = ps_lookup;
		}
		snprintf(qname, sizeof(qname), "%s:%s", modname, p.last);
		ps_name = ~0ULL;
		if (lookup_name_run(qname, calls, &ps_name, &got) ||
		    got != p.last_addr) {
			fprintf(stderr, "modfuncs: kallsyms_lookup_name(%s) = %#llx, not %#llx\n",
				qname, got, p.last_addr);
			ps_name = ~0ULL;
		}
		syscall(SYS_delete_module, modname, O_NONBLOCK);
		printf("# modfuncs %s: %ld lines in available_filter_functions, "
		       "%ld text symbols at %ld addresses, first lookup %s\n",
		       modname, lines, p.nr, distinct, name);
		printf("aff_read_ms,%s,%.1f,ms\n", modname, best_ms);
		printf("kallsyms_read_ms,%s,%.1f,ms\n", modname, best_ks);
		printf("kallsyms_lookup_ns,%s,%.1f,ns\n", modname, best / 1e3);
		if (best_core != ~0ULL)
			printf("kallsyms_lookup_core_ns,%s,%.1f,ns\n", modname,
			       best_core / 1e3);
		if (ps_name != ~0ULL)
			printf("kallsyms_lookup_name_ns,%s,%.1f,ns\n", modname,
			       ps_name / 1e3);
		printf("text_index_bytes,%s,%ld,B\n", modname, 8 + 8 * distinct);
		fflush(stdout);
	}
	free(p.addrs);
	lookup_teardown();
	return a == argc ? 0 : 1;
}

/*
 * Module load+unload (workload 4): finit_module and delete_module of KO.
 * With listen, a system-wide side-band event (ksymbol=1, bpf_event=1) of
 * this process is open and drained after every load+unload: a listener
 * that costs next to nothing itself, unlike perf record.
 */
static int bench_modload(const char *ko, long count, bool listen)
{
	char path[PATH_MAX], *name, *dot;
	struct rec_stream s;
	long i, recs = 0;
	double t0 = 0, t;
	int fd;

	snprintf(path, sizeof(path), "%s", ko);
	name = basename(path);
	dot = strstr(name, ".ko");
	if (dot)
		*dot = 0;
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(ko);
		return 1;
	}
	if (listen && rec_stream_open(&s, 64)) {
		perror("modload: perf event");
		return 1;
	}
	syscall(SYS_delete_module, name, O_NONBLOCK);
	/* Warm up (vmalloc, kernfs caches) before timing. */
	for (i = -10; i < count; i++) {
		if (!i)
			t0 = now();
		if (syscall(SYS_finit_module, fd, "", 0)) {
			perror("modload: finit_module");
			return 1;
		}
		if (syscall(SYS_delete_module, name, O_NONBLOCK)) {
			perror("modload: delete_module");
			return 1;
		}
		if (listen) {
			if (rec_stream_drain(&s))
				return 1;
			if (i >= 0)
				recs += s.nr;
			s.nr = 0;
		}
	}
	t = now() - t0;
	close(fd);
	if (listen) {
		printf("# modload: the listener got %ld records, lost %llu\n",
		       recs, (unsigned long long)s.lost);
		rec_stream_close(&s);
	}
	printf("module_load_unload_per_s,%ld,%.1f,ops/s\n", count, count / t);
	return 0;
}

/*
 * The BPF loop of workload 5: load the ksym_abi program (a program with
 * two subprograms), print a note, wait for a line on stdin, run it with
 * BPF_PROG_TEST_RUN for SECS and print its rate, then wait for another line
 * before unloading it.  The script starts and stops perf record in between,
 * so that no program is loaded or unloaded while perf records.
 */
static int bench_spin(double secs)
{
	struct ksym_abi *skel = ksym_abi__open_and_load();
	struct bpf_run r = { .secs = secs, .repeat = 10000 };
	char line[64];
	int fd, err;

	if (!skel) {
		fprintf(stderr, "spin: cannot load the BPF program\n");
		return 1;
	}
	fd = bpf_program__fd(skel->progs.ksym_abi_main);
	printf("# spin: loaded\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		goto err;
	err = bpf_run(fd, &r);
	if (err) {
		fprintf(stderr, "spin: BPF_PROG_TEST_RUN: %s\n", strerror(-err));
		goto err;
	}
	printf("bpf_spin_runs_per_s,%.0f,%.1f,ops/s\n", secs, r.runs / r.elapsed);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		goto err;
	ksym_abi__destroy(skel);
	return 0;
err:
	ksym_abi__destroy(skel);
	return 1;
}

/*
 * perf record start-up (workload 7): with N trivial programs loaded, the
 * wall time of "PERF record -a -e cpu-clock -- true", best of 5.  With the
 * replay ioctl perf record asks the kernel for the regions; without it
 * (stock) it synthesizes them from the program ids and /proc/kallsyms.
 */
static int bench_recstart(long n, const char *perf)
{
	double best = 1e9, t;
	char cmd[512];
	int *fds, i;

	fds = load_many(n);
	if (!fds)
		return 1;
	snprintf(cmd, sizeof(cmd),
		 "%s record -q -a -e cpu-clock -o /tmp/recstart.data -- true",
		 perf);
	for (i = 0; i < 5; i++) {
		t = now();
		if (system(cmd)) {
			fprintf(stderr, "bench: %s failed\n", cmd);
			return 1;
		}
		t = now() - t;
		if (t < best)
			best = t;
	}
	printf("record_start_ms,%ld,%.1f,ms\n", n, best * 1e3);
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

/*
 * N trivial programs held loaded between two lines: "# hold: N loaded" on
 * stdout once they are, then until a line (or end of file) on stdin, for
 * a workload the caller runs meanwhile (recfiles in scripts/guest-bench).
 */
static int bench_hold(long n)
{
	char line[64];
	int *fds, i;

	fds = load_many(n);
	if (!fds)
		return 1;
	printf("# hold: %ld loaded\n", n);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

/* write_str() with a message naming what failed. */
static int write_file(const char *path, const char *val)
{
	int err = write_str(path, val, O_TRUNC);

	if (err)
		fprintf(stderr, "bench: write %s to %s: %s\n", val, path,
			strerror(-err));
	return err;
}

/* Clear lock_stat and the tracer's maximum before a phase. */
static int latency_reset(const char *phase)
{
	const char *funcs = getenv("DYNTEXT_LATENCY_FUNCTIONS");

	return write_file(TRACEFS "/options/function-trace",
			  funcs && !strcmp(funcs, phase) ? "1" : "0") ||
	       write_file("/proc/lock_stat", "0") ||
	       write_file(TRACEFS "/tracing_max_latency", "0");
}

/*
 * After a phase: how long the locks of the registry and the replay were
 * held at most, the tracer's maximum (us) and where that stretch began and
 * ended, and the LATENCY_LOCKS classes of lock_stat that held longest.
 * A lock_stat class line is "NAME: " and 12 numbers, holdtime-max the 10th.
 */
#define LATENCY_LOCKS 5
static int latency_report(const char *phase, long param)
{
	struct { char name[128]; double max; long acq; } top[LATENCY_LOCKS] = {};
	char line[1024], where[2][256] = { "?", "?" };
	FILE *f;
	int i;

	/* lock_stat first: reading the trace takes locks of its own. */
	f = fopen("/proc/lock_stat", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		double v[12];
		char name[128];
		int j;

		if (sscanf(line, " %127[^:]: %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf",
			   name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7], &v[8], &v[9], &v[10], &v[11]) != 13 || !v[7])
			continue;
		/* The registry's lock, text_mutex, the replay's own. */
		if (strstr(name, "dyntext") || !strcmp(name, "text_mutex") ||
		    strstr(name, "replay") || !strcmp(name, "&st->lock"))
			printf("latency_%s_hold_us,%s,%.1f,us\n", phase, name,
			       v[9]);
		for (i = 0; i < LATENCY_LOCKS && top[i].max >= v[9]; i++)
			;
		if (i == LATENCY_LOCKS)
			continue;
		for (j = LATENCY_LOCKS - 1; j > i; j--)
			top[j] = top[j - 1];
		snprintf(top[i].name, sizeof(top[i].name), "%s", name);
		top[i].max = v[9];
		top[i].acq = v[7];
	}
	fclose(f);
	f = fopen(TRACEFS "/tracing_max_latency", "r");
	if (!f || !fgets(line, sizeof(line), f))
		return 1;
	fclose(f);
	printf("latency_%s_max_us,%ld,%ld,us\n", phase, param, atol(line));
	f = fopen(TRACEFS "/trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *start = strstr(line, "=> started at: ");
		char *end = strstr(line, "=> ended at:   ");

		if (start)
			snprintf(where[0], sizeof(where[0]), "%s", start + 15);
		if (end)
			snprintf(where[1], sizeof(where[1]), "%s", end + 15);
	}
	if (f)
		fclose(f);
	where[0][strcspn(where[0], "\n")] = 0;
	where[1][strcspn(where[1], "\n")] = 0;
	printf("# %s: longest stretch from %s to %s\n", phase, where[0],
	       where[1]);

	for (i = 0; i < LATENCY_LOCKS && top[i].acq; i++)
		printf("# %s: %s held %.1f us at most (%ld acquisitions)\n",
		       phase, top[i].name, top[i].max, top[i].acq);
	return 0;
}

static int latency_discard(void *arg)
{
	struct rec_stream *s = arg;

	if (rec_stream_drain(s))
		return -1;
	s->nr = 0;
	return 0;
}

/* A whole replay of the types in the mask, optionally with code. */
static int latency_replay(__u32 types, bool text)
{
	struct rec_stream s;
	long ret;

	if (text ? rec_stream_open_ksymbol_text(&s, 256, false) :
		   rec_stream_open(&s, 256)) {
		perror("bench: perf event");
		return 1;
	}
	ret = ksym_replay(rec_stream_fd(&s), types, latency_discard, &s,
			  NULL, NULL);
	rec_stream_close(&s);
	if (ret < 0) {
		fprintf(stderr, "bench: replay: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

#define LATENCY_UNLOADS	200
static int bench_latency(long n, long nstale)
{
	struct rlimit rl = { 300000, 300000 };
	int *fds, *stale, i;
	cpu_set_t cpu0;
	long lines;

	/* Each phase's lines as they come: a run can take an hour. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/*
	 * On CPU 0, with the unfinished replays' events (stale_replay()):
	 * every record written on this CPU visits each of them.
	 */
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0))
		perror("sched_setaffinity");
	if (write_file("/proc/sys/kernel/lock_stat", "1") ||
	    write_file(TRACEFS "/current_tracer", "preemptirqsoff"))
		return 1;

	latency_reset("load");
	fds = load_many(n);
	if (!fds)
		return 1;
	/* The programs' fds and the replays' (load_many() sets 200,000). */
	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("setrlimit");
	if (latency_report("load", n))
		return 1;

	latency_reset("kallsyms");
	if (read_kallsyms(&lines) < 0 || latency_report("kallsyms", n))
		return 1;

	latency_reset("replay");
	if (latency_replay(0, false) || latency_report("replay", n))
		return 1;

	/* Out-of-line text only: a handful of regions among n programs. */
	latency_reset("replay_ool_only");
	if (latency_replay(1U << PERF_RECORD_KSYMBOL_TYPE_OOL, false) ||
	    latency_report("replay_ool_only", n))
		return 1;

	latency_reset("replay_text");
	if (latency_replay(0, true) || latency_report("replay_text", n))
		return 1;

	latency_reset("stale_replays");
	stale = calloc(nstale + 1, sizeof(*stale));
	for (i = 0; stale && i < nstale; i++) {
		stale[i] = stale_replay(true);
		if (stale[i] < 0) {
			fprintf(stderr, "bench: stale replay %d: %s\n", i,
				strerror(-stale[i]));
			return 1;
		}
	}
	if (!stale || latency_report("stale_replays", nstale))
		return 1;

	/*
	 * Deletes with the replays left: close() of a program's last fd
	 * deletes its text before it returns.  A few hundred: each costs
	 * seconds where deletes walk every replay left behind.
	 */
	latency_reset("unload_with_stale");
	for (i = 0; i < n && i < LATENCY_UNLOADS; i++)
		close(fds[i]);
	if (latency_report("unload_with_stale", nstale))
		return 1;

	latency_reset("close_all");
	for (i = 0; i < nstale; i++)
		close(stale[i]);
	for (i = LATENCY_UNLOADS; i < n; i++)
		close(fds[i]);
	sleep(2);	/* the rest of the frees follow RCU grace periods */
	if (latency_report("close_all", n))
		return 1;
	free(stale);
	free(fds);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "kallsyms"))
		return bench_kallsyms(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "load"))
		return bench_load(atol(argv[2]));
	/* PAGES per CPU; 2048 (8 MiB) by default: room for 10,000s. */
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "replay"))
		return bench_replay(atol(argv[2]), argc == 4 ? atol(argv[3]) : 2048);
	if (argc == 4 && !strcmp(argv[1], "recstart"))
		return bench_recstart(atol(argv[2]), argv[3]);
	if (argc == 3 && !strcmp(argv[1], "hold"))
		return bench_hold(atol(argv[2]));
	if (argc >= 5 && !strcmp(argv[1], "lookup"))
		return bench_lookup(argv[2], atol(argv[3]), argc - 4, argv + 4);
	if ((argc == 4 || (argc == 5 && !strcmp(argv[4], "open"))) &&
	    !strcmp(argv[1], "stale"))
		return bench_stale(atol(argv[2]), atol(argv[3]), argc == 4);
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return bench_spin(atof(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "latency"))
		return bench_latency(atol(argv[2]), atol(argv[3]));
	if (argc >= 5 && !strcmp(argv[1], "modfuncs"))
		return bench_modfuncs(argv[2], atol(argv[3]), argc - 4, argv + 4);
	if ((argc == 4 || (argc == 5 && !strcmp(argv[4], "listen"))) &&
	    !strcmp(argv[1], "modload"))
		return bench_modload(argv[2], atol(argv[3]), argc == 5);
	fprintf(stderr, "usage: %s kallsyms N... | load COUNT | replay N [PAGES] |\n"
		"       recstart N PERF | hold N |\n"
		"       lookup KO CALLS N... | modload KO COUNT [listen] |\n"
		"       modfuncs KO CALLS FKO... |\n"
		"       stale N COUNT [open] | spin SECS | latency N STALE\n",
		argv[0]);
	return 2;
}
