// SPDX-License-Identifier: GPL-2.0
/*
 * stress [-t SECONDS] [-p PERF] [-o DIR] [-k PROBES] [-F FREQ]
 *
 * Every producer of dynamic text at once, for SECONDS, while a consumer
 * checks the live PERF_RECORD_KSYMBOL stream; then the end state against
 * /proc/kallsyms, the registry (/sys/kernel/debug/dyntext/check) and the
 * producers' own views.  Run as root on a kernel with the patch set (the
 * debug configuration is the point: lockdep, KASAN, kmemleak).
 *
 * Workers (processes), each in a loop until the time is up:
 *   bpf (2)   load and unload a program with two subprograms, run it
 *   fentry    attach and detach an fentry program on getpgid() (a BPF
 *             trampoline), reload it now and then
 *   ftrace    a tracefs instance with the function tracer on getsid(),
 *             on and off (an ftrace trampoline)
 *   kprobe    PROBES kprobes past the ftrace call of as many functions,
 *             added and removed (kprobe instruction pages, both caches),
 *             the one in getppid() enabled for a moment
 *   module    load and unload the test module, load it with fail_init=1
 *             (a failed init), and run the misuse module's cases
 *   kallsyms  read /proc/kallsyms, check its dynamic lines' format
 *   check     read /sys/kernel/debug/dyntext/check (must say "ok N")
 *   perf      perf record -a -g -F FREQ (ksymbol and bpf_event are on)
 * Kept the whole time: an fentry program on bpf_fentry_test1 and a function
 * tracer instance on vfs_write, so that the end state is not empty.
 *
 * The consumer (this process) opens a system-wide dummy event with
 * ksymbol and bpf_event on CLOCK_MONOTONIC, replays the registry
 * (PERF_EVENT_IOC_KSYMBOL_REPLAY) before the workers start, and applies
 * the records in time order: a register record must not overlap a live
 * region, an unregister record must match a live region exactly (address,
 * length, name, type), PROG_LOAD and PROG_UNLOAD must pair up by id, and
 * a PROG_LOAD must follow its program's image.  At the end, with the
 * keepers still there: the consumer's regions (registered minus
 * unregistered) are the dynamic lines of /proc/kallsyms, their number is
 * the registry's, the BPF images are those of bpf_prog_info of every
 * loaded program, the BPF trampolines those of the tracing links, the
 * module regions /proc/modules, and the ftrace trampolines those there
 * were before the churn.  Without the keepers, what is left is what there
 * was before the run (kprobe instruction pages aside: a cache keeps one).
 *
 * TAP on stdout, numbers as "# " lines; exit status 0 if all passed.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/event.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <perf/threadmap.h>

#include "records.h"
#include "ksym_abi.skel.h"
#include "bpf_images.skel.h"
#include "stress.skel.h"

#define TRACING		"/sys/kernel/tracing"
#define MISUSE_RUN	"/sys/kernel/debug/dyntext_misuse/run"
#define KEEP_INST	TRACING "/instances/dyntext_stress_keep"
#define CHURN_INST	TRACING "/instances/dyntext_stress_churn"
#define KPROBE_GROUP	"dyntext_stress"
#define KPROBE_HIT	"__x64_sys_getppid"	/* the probe that is enabled */
#define UNREG		PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER
#define REPLAY		PERF_RECORD_KSYMBOL_FLAGS_REPLAY
#define REPLAY_END	PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END
#define RING_PAGES	512
#define MAX_NOTES	40

/* ------------------------------------------------------------------ */
/* Results                                                             */

struct notes {
	char *s[MAX_NOTES];
	int n, dropped;
};

/* Problems in the live stream; differences found by a comparison. */
static struct notes live, cmp;

/* A problem found: kept for the TAP output, counted past MAX_NOTES. */
static void notef(struct notes *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (b->n == MAX_NOTES) {
		b->dropped++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		b->s[b->n++] = s;
}

#define note(...)	notef(&cmp, __VA_ARGS__)
#define live_note(...)	notef(&live, __VA_ARGS__)

static void notes_clear(struct notes *b)
{
	while (b->n)
		free(b->s[--b->n]);
	b->dropped = 0;
}

static void print_notes(struct notes *b)
{
	int i;

	for (i = 0; i < b->n; i++)
		printf("#   %s\n", b->s[i]);
	if (b->dropped)
		printf("#   ... and %d more\n", b->dropped);
	notes_clear(b);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Workers                                                             */

enum kind { K_BPF, K_FENTRY, K_FTRACE, K_KPROBE, K_MODULE, K_KALLSYMS,
	    K_CHECK, NR_KINDS };

static const char * const kind_name[NR_KINDS] = {
	"bpf", "fentry", "ftrace", "kprobe", "module", "kallsyms", "check",
};

/* What each worker counts besides its errors. */
static const char * const sub_name[NR_KINDS][7] = {
	[K_BPF]		= { "loads", "unloads", "test runs" },
	[K_FENTRY]	= { "attaches", "detaches", "program reloads" },
	[K_FTRACE]	= { "tracer on", "tracer off", "instances" },
	[K_KPROBE]	= { "probes added", "probes removed", "cycles",
			    "refused sites", "probe hits", "ms adding",
			    "ms removing" },
	[K_MODULE]	= { "loads", "unloads", "failed inits",
			    "misuse runs", "misuse checks" },
	[K_KALLSYMS]	= { "reads", "lines", "dynamic lines" },
	[K_CHECK]	= { "checks", "max regions" },
};

struct worker_stats {
	unsigned long sub[7];
	unsigned long errors;
	char err[256];
};

struct shared {
	int stop;		/* read and written atomically */
	struct worker_stats w[NR_KINDS];
};

static struct shared *sh;
static char bindir[PATH_MAX];
static char **kp_sites;
static int nr_kp_sites, kp_want = 300;

static void count(enum kind k, int i, unsigned long n)
{
	__atomic_fetch_add(&sh->w[k].sub[i], n, __ATOMIC_RELAXED);
}

static void worker_error(enum kind k, const char *fmt, ...)
{
	struct worker_stats *w = &sh->w[k];
	va_list ap;

	if (__atomic_fetch_add(&w->errors, 1, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
}

static bool stopping(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED);
}

static int write_file(const char *path, const char *s)
{
	return write_str(path, s, O_TRUNC);
}

static int append_file(const char *path, const char *s)
{
	return write_str(path, s, O_APPEND);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return 0;
}

static void work_bpf(void)
{
	unsigned char pkt[64] = { [12] = 0x08 };

	while (!stopping()) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
			    .data_size_in = sizeof(pkt), .repeat = 200);
		struct ksym_abi *skel = ksym_abi__open_and_load();

		if (!skel) {
			worker_error(K_BPF, "ksym_abi load: %s", strerror(errno));
			usleep(100000);
			continue;
		}
		count(K_BPF, 0, 1);
		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ksym_abi_main),
					   &opts))
			worker_error(K_BPF, "test run: %s", strerror(errno));
		else
			count(K_BPF, 2, 1);
		ksym_abi__destroy(skel);
		count(K_BPF, 1, 1);
	}
}

/*
 * The functions whose call sites the workers patch are called by these
 * workers only: a CPU that runs a call site while another patches it can
 * keep executing the temporary int3 under QEMU's TCG (seen with vfs_read:
 * an endless int3 loop), which is not what this test is about.
 */
static void work_fentry(void)
{
	struct stress *skel = NULL;
	unsigned long n = 0;

	while (!stopping()) {
		struct bpf_link *link;
		int i;

		if (!skel) {
			skel = stress__open_and_load();
			if (!skel) {
				worker_error(K_FENTRY, "stress.bpf.o load: %s",
					     strerror(errno));
				usleep(100000);
				continue;
			}
			if (n)
				count(K_FENTRY, 2, 1);
		}
		link = bpf_program__attach(skel->progs.stress_fentry_getpgid);
		if (!link) {
			worker_error(K_FENTRY, "attach: %s", strerror(errno));
			usleep(100000);
			continue;
		}
		count(K_FENTRY, 0, 1);
		/* Go through the trampoline while it is there. */
		for (i = 0; i < 20; i++)
			syscall(SYS_getpgid, 0);
		bpf_link__destroy(link);
		count(K_FENTRY, 1, 1);
		if (++n % 8 == 0) {
			stress__destroy(skel);
			skel = NULL;
		}
	}
	stress__destroy(skel);
}

/* The function tracer on and off; the instance itself every 4th time. */
static void work_ftrace(void)
{
	unsigned long n = 0;

	while (!stopping()) {
		int i;

		if (n % 4 == 0) {
			if (mkdir(CHURN_INST, 0755)) {
				worker_error(K_FTRACE, "mkdir instance: %s",
					     strerror(errno));
				usleep(100000);
				continue;
			}
			count(K_FTRACE, 2, 1);
		}
		if (write_file(CHURN_INST "/set_ftrace_filter", "__x64_sys_getsid") ||
		    write_file(CHURN_INST "/current_tracer", "function")) {
			worker_error(K_FTRACE, "function tracer on failed");
		} else {
			count(K_FTRACE, 0, 1);
			for (i = 0; i < 20; i++)
				syscall(SYS_getsid, 0);
			if (write_file(CHURN_INST "/current_tracer", "nop"))
				worker_error(K_FTRACE, "function tracer off failed");
			else
				count(K_FTRACE, 1, 1);
		}
		if ((++n % 4 == 0 || stopping()) && rmdir(CHURN_INST))
			worker_error(K_FTRACE, "rmdir instance: %s", strerror(errno));
	}
}

/*
 * Kprobes on func+5 (past the call to __fentry__, so not ftrace-based):
 * each takes a slot of a kprobe instruction page, and one of an optimised
 * probe instruction page where the site can be optimised; more probes
 * than a page has slots make the caches add pages and free them again.
 */
static void work_kprobe(void)
{
	char *ok = calloc(nr_kp_sites, 1);
	char line[256];
	int i, added;
	bool first = true;

	while (!stopping()) {
		int *ids = calloc(nr_kp_sites, sizeof(int));
		double t = now_s();

		added = 0;
		for (i = 0; i < nr_kp_sites && added < kp_want && !stopping(); i++) {
			if (!first && !ok[i])
				continue;
			snprintf(line, sizeof(line), "p:%s/p%d %s+5\n",
				 KPROBE_GROUP, i, kp_sites[i]);
			if (append_file(TRACING "/kprobe_events", line)) {
				if (first)
					count(K_KPROBE, 3, 1);
				else
					worker_error(K_KPROBE, "%s+5 refused now", kp_sites[i]);
				continue;
			}
			ok[i] = 1;
			ids[added++] = i;
			count(K_KPROBE, 0, 1);
		}
		first = false;
		/* The first site is in getppid(): enable it for a moment. */
		if (added && ids[0] == 0) {
			const char *en = TRACING "/events/" KPROBE_GROUP "/p0/enable";

			if (write_file(en, "1")) {
				worker_error(K_KPROBE, "enable p0 failed");
			} else {
				for (i = 0; i < 50; i++)
					syscall(SYS_getppid);
				count(K_KPROBE, 4, 50);
				if (write_file(en, "0"))
					worker_error(K_KPROBE, "disable p0 failed");
			}
		}
		count(K_KPROBE, 5, (now_s() - t) * 1000);
		t = now_s();
		for (i = 0; i < added; i++) {
			snprintf(line, sizeof(line), "-:%s/p%d\n", KPROBE_GROUP,
				 ids[i]);
			if (append_file(TRACING "/kprobe_events", line))
				worker_error(K_KPROBE, "cannot remove p%d", ids[i]);
			else
				count(K_KPROBE, 1, 1);
		}
		count(K_KPROBE, 6, (now_s() - t) * 1000);
		free(ids);
		count(K_KPROBE, 2, 1);
	}
	free(ok);
}

static int module_load(const char *mod, const char *params)
{
	char path[PATH_MAX + 64];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s.ko", bindir, mod);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int module_unload(const char *mod)
{
	int i, ret = 0;

	for (i = 0; i < 500; i++) {
		ret = syscall(SYS_delete_module, mod, O_NONBLOCK) ? -errno : 0;
		if (ret != -EAGAIN && ret != -EBUSY)
			break;
		usleep(10000);
	}
	return ret;
}

/* Run the misuse module's cases; returns the number that failed. */
static int misuse_run(unsigned long *checks, char *first_bad, size_t len)
{
	char buf[16384], *line, *save;
	ssize_t n, got = 0;
	int fd = open(MISUSE_RUN, O_RDONLY), bad = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(fd);
	if (n < 0)
		return -EIO;
	buf[got] = 0;
	*checks = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "ok ", 3)) {
			(*checks)++;
		} else if (!strncmp(line, "not ok ", 7)) {
			(*checks)++;
			if (!bad++)
				snprintf(first_bad, len, "%s", line);
		}
	}
	return *checks ? bad : -ENODATA;
}

static void work_module(void)
{
	unsigned long n = 0, checks;
	char bad[256];
	int ret;

	while (!stopping()) {
		ret = module_load("dyntext_test", "");
		if (ret) {
			worker_error(K_MODULE, "load dyntext_test: %s", strerror(-ret));
			usleep(100000);
			continue;
		}
		count(K_MODULE, 0, 1);
		ret = module_unload("dyntext_test");
		if (ret)
			worker_error(K_MODULE, "unload dyntext_test: %s", strerror(-ret));
		else
			count(K_MODULE, 1, 1);

		ret = module_load("dyntext_test", "fail_init=1");
		if (ret != -EINVAL)
			worker_error(K_MODULE, "fail_init=1 load: %d, want -EINVAL", ret);
		else
			count(K_MODULE, 2, 1);

		if (n++ % 4)
			continue;
		ret = module_load("dyntext_misuse", "");
		if (ret) {
			worker_error(K_MODULE, "load dyntext_misuse: %s", strerror(-ret));
			continue;
		}
		count(K_MODULE, 0, 1);
		ret = misuse_run(&checks, bad, sizeof(bad));
		if (ret < 0)
			worker_error(K_MODULE, "misuse run: %s", strerror(-ret));
		else if (ret)
			worker_error(K_MODULE, "misuse: %d failed, first: %s", ret, bad);
		else
			count(K_MODULE, 3, 1);
		count(K_MODULE, 4, checks);
		ret = module_unload("dyntext_misuse");
		if (ret)
			worker_error(K_MODULE, "unload dyntext_misuse: %s", strerror(-ret));
		else
			count(K_MODULE, 1, 1);
	}
}

static bool dynamic_owner(const char *mod)
{
	return !strcmp(mod, "bpf") || !strncmp(mod, "__builtin__", 11) ||
	       !strcmp(mod, "dyntext_misuse_text");
}

struct read_count {
	unsigned long lines, dyn;
};

static int kallsyms_line_fn(const struct ksym_line *l, void *arg)
{
	struct read_count *c = arg;

	c->lines++;
	if (!dynamic_owner(l->mod))
		return 0;
	c->dyn++;
	if (l->type != 't' || !l->name[0] || !l->addr)
		worker_error(K_KALLSYMS, "bad line: %llx %c %s [%s]", l->addr,
			     l->type, l->name, l->mod);
	return 0;
}

static void work_kallsyms(void)
{
	while (!stopping()) {
		struct read_count c = { };
		int ret = kallsyms_for_each(kallsyms_line_fn, &c);

		if (ret) {
			worker_error(K_KALLSYMS, "read: %s", strerror(-ret));
			continue;
		}
		count(K_KALLSYMS, 0, 1);
		count(K_KALLSYMS, 1, c.lines);
		count(K_KALLSYMS, 2, c.dyn);
	}
}

static void work_check(void)
{
	unsigned long max = 0;

	while (!stopping()) {
		long nr = registry_nr();

		if (nr < 0) {
			worker_error(K_CHECK, "%s: %s", DYNTEXT_CHECK, strerror(-nr));
		} else {
			count(K_CHECK, 0, 1);
			if ((unsigned long)nr > max) {
				count(K_CHECK, 1, nr - max);
				max = nr;
			}
		}
		usleep(20000);
	}
}

static pid_t spawn(enum kind k, void (*fn)(void))
{
	pid_t pid = fork();

	if (pid)
		return pid;
	libbpf_set_print(libbpf_quiet);
	fn();
	_exit(0);
}

/* ------------------------------------------------------------------ */
/* The consumer                                                        */

struct krec {
	__u64 time, seq;
	__u32 type;
	__u64 addr;
	__u32 len;
	__u16 ksym_type, flags;
	__u16 bpf_type, bpf_flags;
	__u32 id;
	__u8 tag[BPF_TAG_SIZE];
	char *name;
};

struct region {
	__u64 addr;
	__u32 len;
	__u16 ksym_type;
	char *name;
};

static struct {
	struct perf_evlist *evlist;
	int fd;			/* the first CPU's event */
	struct krec *pend;
	size_t nr_pend, alloc_pend;
	__u64 seq;
	/* The view: live regions sorted by address; loaded program ids. */
	struct region *r;
	size_t nr, alloc;
	__u32 *ids;
	size_t nr_ids, alloc_ids;
	bool replay_done;
	/* Counts. */
	__u64 lost, records, reg[4], unreg[4], replayed, confirmed;
	__u64 prog_load, prog_unload, other;
	__u64 max_live;
	/* Problems. */
	__u64 overlap, unknown_unreg, mismatch, bad_replay, dup_id,
	      unknown_id, load_no_image, bad_record;
} c;

static int consumer_open(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
		.ksymbol = 1,
		.ksymbol_module = 1,
		.bpf_event = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.disabled = 1,
	};
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	struct perf_evsel *evsel;
	int err, *before, nbefore;

	libperf_init(NULL);
	cpus = perf_cpu_map__new(NULL);
	threads = perf_thread_map__new_dummy();
	c.evlist = perf_evlist__new();
	evsel = perf_evsel__new(&attr);
	if (!cpus || !threads || !c.evlist || !evsel)
		return -ENOMEM;
	perf_evlist__add(c.evlist, evsel);
	perf_evlist__set_maps(c.evlist, cpus, threads);
	perf_cpu_map__put(cpus);
	perf_thread_map__put(threads);
	before = perf_fds_open(&nbefore);
	err = perf_evlist__open(c.evlist);
	c.fd = err ? -1 : perf_fd_new(before, nbefore);
	free(before);
	if (!err)
		err = perf_evlist__mmap(c.evlist, RING_PAGES);
	if (!err)
		perf_evlist__enable(c.evlist);
	return err;
}

static int consumer_drain(void)
{
	struct perf_mmap *map;
	union perf_event *ev;

	perf_evlist__for_each_mmap(c.evlist, map, false) {
		if (perf_mmap__read_init(map) < 0)
			continue;
		while ((ev = perf_mmap__read_event(map)) != NULL) {
			const char *raw = (const char *)ev;
			size_t size = ev->header.size;
			struct krec *k;

			if (ev->header.type == PERF_RECORD_LOST) {
				c.lost += ev->lost.lost;
				perf_mmap__consume(map);
				continue;
			}
			if (ev->header.type != PERF_RECORD_KSYMBOL &&
			    ev->header.type != PERF_RECORD_BPF_EVENT) {
				c.other++;
				perf_mmap__consume(map);
				continue;
			}
			if (c.nr_pend == c.alloc_pend) {
				c.alloc_pend = c.alloc_pend ? 2 * c.alloc_pend : 4096;
				c.pend = realloc(c.pend, c.alloc_pend * sizeof(*c.pend));
				if (!c.pend)
					return -ENOMEM;
			}
			k = &c.pend[c.nr_pend++];
			memset(k, 0, sizeof(*k));
			k->type = ev->header.type;
			k->seq = c.seq++;
			memcpy(&k->time, raw + size - 16, 8);
			if (k->type == PERF_RECORD_KSYMBOL) {
				size_t max = size - 16 -
					offsetof(struct perf_record_ksymbol, name);

				k->addr = ev->ksymbol.addr;
				k->len = ev->ksymbol.len;
				k->ksym_type = ev->ksymbol.ksym_type;
				k->flags = ev->ksymbol.flags;
				k->name = strndup(ev->ksymbol.name, max);
			} else {
				k->bpf_type = ev->bpf.type;
				k->bpf_flags = ev->bpf.flags;
				k->id = ev->bpf.id;
				memcpy(k->tag, ev->bpf.tag, BPF_TAG_SIZE);
			}
			perf_mmap__consume(map);
		}
		perf_mmap__read_done(map);
	}
	return 0;
}

static int krec_cmp(const void *a, const void *b)
{
	const struct krec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Index of the first region with addr >= a. */
static size_t view_pos(__u64 a)
{
	size_t lo = 0, hi = c.nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c.r[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static long view_find(__u64 a)
{
	size_t i = view_pos(a);

	return i < c.nr && c.r[i].addr == a ? (long)i : -1;
}

/* A live region overlapping [a, a + len), or NULL. */
static struct region *view_overlap(__u64 a, __u32 len)
{
	size_t i = view_pos(a);

	if (i < c.nr && c.r[i].addr < a + len)
		return &c.r[i];
	if (i > 0 && c.r[i - 1].addr + c.r[i - 1].len > a)
		return &c.r[i - 1];
	return NULL;
}

static void view_insert(const struct krec *k)
{
	size_t i = view_pos(k->addr);

	if (c.nr == c.alloc) {
		c.alloc = c.alloc ? 2 * c.alloc : 256;
		c.r = realloc(c.r, c.alloc * sizeof(*c.r));
		if (!c.r)
			abort();
	}
	memmove(&c.r[i + 1], &c.r[i], (c.nr - i) * sizeof(*c.r));
	c.r[i].addr = k->addr;
	c.r[i].len = k->len;
	c.r[i].ksym_type = k->ksym_type;
	c.r[i].name = strdup(k->name);
	c.nr++;
	if (c.nr > c.max_live)
		c.max_live = c.nr;
}

static void view_remove(size_t i)
{
	free(c.r[i].name);
	memmove(&c.r[i], &c.r[i + 1], (c.nr - i - 1) * sizeof(*c.r));
	c.nr--;
}

static long id_find(__u32 id)
{
	size_t i;

	for (i = 0; i < c.nr_ids; i++)
		if (c.ids[i] == id)
			return i;
	return -1;
}

static bool image_with_tag(const __u8 *tag)
{
	char want[64];
	size_t i, n;

	strcpy(want, "bpf_prog_");
	tag_hex(tag, want + 9);
	n = strlen(want);
	for (i = 0; i < c.nr; i++)
		if (!strncmp(c.r[i].name, want, n) &&
		    (c.r[i].name[n] == 0 || c.r[i].name[n] == '_'))
			return true;
	return false;
}

static void apply_ksym(const struct krec *k)
{
	struct region *o;
	long i;

	if (k->ksym_type == PERF_RECORD_KSYMBOL_TYPE_REPLAY_MARK) {
		if (k->flags & REPLAY_END)
			c.replay_done = true;
		return;
	}
	if (!k->len || !k->name[0] || k->ksym_type == 0 || k->ksym_type > 3) {
		c.bad_record++;
		live_note("bad record: %llx len %u type %u flags %#x '%s'",
			  (unsigned long long)k->addr, k->len, k->ksym_type,
			  k->flags, k->name);
		return;
	}
	if (k->flags & UNREG) {
		c.unreg[k->ksym_type]++;
		i = view_find(k->addr);
		if (i < 0) {
			c.unknown_unreg++;
			live_note("unregister of a region not registered: %llx %u %s",
				  (unsigned long long)k->addr, k->len, k->name);
			return;
		}
		o = &c.r[i];
		if (o->len != k->len || o->ksym_type != k->ksym_type ||
		    strcmp(o->name, k->name)) {
			c.mismatch++;
			live_note("unregister %llx %u %s (type %u) of %u %s (type %u)",
				  (unsigned long long)k->addr, k->len, k->name,
				  k->ksym_type, o->len, o->name, o->ksym_type);
		}
		view_remove(i);
		return;
	}
	o = view_overlap(k->addr, k->len);
	if (k->flags & REPLAY) {
		if (!o) {
			c.replayed++;
			view_insert(k);
		} else if (o->addr == k->addr && o->len == k->len &&
			   o->ksym_type == k->ksym_type && !strcmp(o->name, k->name)) {
			c.confirmed++;
		} else {
			c.bad_replay++;
			live_note("replayed %llx %u %s overlaps %llx %u %s",
				  (unsigned long long)k->addr, k->len, k->name,
				  (unsigned long long)o->addr, o->len, o->name);
		}
		return;
	}
	c.reg[k->ksym_type]++;
	if (o) {
		c.overlap++;
		live_note("register %llx %u %s overlaps live %llx %u %s",
			  (unsigned long long)k->addr, k->len, k->name,
			  (unsigned long long)o->addr, o->len, o->name);
		return;
	}
	view_insert(k);
}

static void apply_bpf(const struct krec *k)
{
	long i = id_find(k->id);

	if (k->bpf_type == PERF_BPF_EVENT_PROG_LOAD) {
		c.prog_load++;
		if (i >= 0) {
			if (!(k->bpf_flags & PERF_BPF_EVENT_FLAGS_REPLAY)) {
				c.dup_id++;
				live_note("PROG_LOAD of id %u, loaded already", k->id);
			}
			return;
		}
		if (!image_with_tag(k->tag)) {
			char tag[2 * BPF_TAG_SIZE + 1];

			tag_hex(k->tag, tag);
			c.load_no_image++;
			live_note("PROG_LOAD of id %u before an image bpf_prog_%s",
				  k->id, tag);
		}
		if (c.nr_ids == c.alloc_ids) {
			c.alloc_ids = c.alloc_ids ? 2 * c.alloc_ids : 256;
			c.ids = realloc(c.ids, c.alloc_ids * sizeof(*c.ids));
			if (!c.ids)
				abort();
		}
		c.ids[c.nr_ids++] = k->id;
	} else if (k->bpf_type == PERF_BPF_EVENT_PROG_UNLOAD) {
		c.prog_unload++;
		if (i < 0) {
			c.unknown_id++;
			live_note("PROG_UNLOAD of id %u, not loaded", k->id);
			return;
		}
		c.ids[i] = c.ids[--c.nr_ids];
	}
}

/* Apply the pending records up to time limit, in time order. */
static int consumer_process(__u64 limit)
{
	size_t i, n;
	int err = consumer_drain();

	if (err)
		return err;
	qsort(c.pend, c.nr_pend, sizeof(*c.pend), krec_cmp);
	for (n = 0; n < c.nr_pend && c.pend[n].time <= limit; n++) {
		struct krec *k = &c.pend[n];

		c.records++;
		if (k->type == PERF_RECORD_KSYMBOL)
			apply_ksym(k);
		else
			apply_bpf(k);
		free(k->name);
	}
	memmove(c.pend, c.pend + n, (c.nr_pend - n) * sizeof(*c.pend));
	c.nr_pend -= n;
	for (i = 0; i < c.nr_pend; i++)
		c.pend[i].seq = i;
	c.seq = c.nr_pend;
	return 0;
}

/* A record is written a moment after its time stamp: keep a margin. */
#define MARGIN_NS	200000000ULL

static int consumer_step(void)
{
	return consumer_process(now_ns() - MARGIN_NS);
}

static int perf_fd(void)
{
	return c.fd;
}

/* Drain between the calls of a replay: what has arrived until now. */
static int consumer_replay_drain(void *arg)
{
	return consumer_process(now_ns());
}

static int consumer_replay(void)
{
	double t0 = now_s();
	long ret;

	ret = ksym_replay(perf_fd(), 0, consumer_replay_drain, NULL, NULL, NULL);
	if (ret < 0)
		return ret;
	while (!c.replay_done && now_s() - t0 < 20) {
		usleep(20000);
		if (consumer_process(now_ns()))
			return -EIO;
	}
	return c.replay_done ? ret : -ETIMEDOUT;
}

/* ------------------------------------------------------------------ */
/* End state                                                           */

struct line {
	__u64 addr;
	char name[KSYM_NAME_LEN];
	char mod[128];
};

struct lines {
	struct line *l;
	size_t n;
};

static int dyn_line_fn(const struct ksym_line *k, void *arg)
{
	struct lines *d = arg;

	if (!dynamic_owner(k->mod))
		return 0;
	d->l = realloc(d->l, (d->n + 1) * sizeof(*d->l));
	if (!d->l)
		return -ENOMEM;
	d->l[d->n].addr = k->addr;
	snprintf(d->l[d->n].name, sizeof(d->l[d->n].name), "%s", k->name);
	snprintf(d->l[d->n].mod, sizeof(d->l[d->n].mod), "%s", k->mod);
	d->n++;
	return 0;
}

static const char *owner_of(const struct region *r)
{
	if (r->ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF)
		return "bpf";
	if (!strcmp(r->name, "ftrace_trampoline"))
		return "__builtin__ftrace";
	if (!strncmp(r->name, "kprobe_", 7))
		return "__builtin__kprobes";
	return "dyntext_misuse_text";
}

/* /proc/kallsyms against the view; returns the number of differences. */
static int compare_kallsyms(size_t *nr_lines)
{
	struct lines d = { };
	size_t i, listed = 0;
	int diff = 0, ret;
	char *seen;

	ret = kallsyms_for_each(dyn_line_fn, &d);
	if (ret) {
		note("/proc/kallsyms: %s", strerror(-ret));
		return 1;
	}
	*nr_lines = d.n;
	seen = calloc(c.nr + 1, 1);
	for (i = 0; i < d.n; i++) {
		long j = view_find(d.l[i].addr);

		if (j < 0 || strcmp(c.r[j].name, d.l[i].name) ||
		    c.r[j].ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE ||
		    strcmp(owner_of(&c.r[j]), d.l[i].mod) || seen[j]) {
			diff++;
			note("kallsyms only: %llx %s [%s]",
			     (unsigned long long)d.l[i].addr, d.l[i].name,
			     d.l[i].mod);
			continue;
		}
		seen[j] = 1;
	}
	for (i = 0; i < c.nr; i++) {
		if (c.r[i].ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE)
			continue;
		listed++;
		if (!seen[i]) {
			diff++;
			note("records only: %llx %u %s",
			     (unsigned long long)c.r[i].addr, c.r[i].len,
			     c.r[i].name);
		}
	}
	free(seen);
	free(d.l);
	return diff;
}

/* Every JITed image of every loaded program is in the view. */
static int compare_bpf_progs(size_t *nr_images)
{
	size_t i, in_view = 0;
	__u32 id = 0;
	int diff = 0;

	*nr_images = 0;
	for (i = 0; i < c.nr; i++)
		in_view += !strncmp(c.r[i].name, "bpf_prog_", 9) &&
			   c.r[i].ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF;
	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { };
		__u8 tag0[BPF_TAG_SIZE];
		__u32 len = sizeof(info), n, j;
		__u64 *addrs;
		__u32 *lens;
		__u8 *tags;
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
			close(fd);
			continue;
		}
		memcpy(tag0, info.tag, BPF_TAG_SIZE);
		n = info.nr_jited_ksyms;
		if (info.nr_jited_func_lens != n || info.nr_prog_tags != n) {
			diff++;
			note("prog %u: %u ksyms, %u lengths, %u tags", id, n,
			     info.nr_jited_func_lens, info.nr_prog_tags);
			close(fd);
			continue;
		}
		addrs = calloc(n, sizeof(*addrs));
		lens = calloc(n, sizeof(*lens));
		tags = calloc(n, BPF_TAG_SIZE);
		memset(&info, 0, sizeof(info));
		info.nr_jited_ksyms = n;
		info.jited_ksyms = (__u64)(unsigned long)addrs;
		info.nr_jited_func_lens = n;
		info.jited_func_lens = (__u64)(unsigned long)lens;
		info.nr_prog_tags = n;
		info.prog_tags = (__u64)(unsigned long)tags;
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
		    info.nr_jited_ksyms != n) {
			free(addrs);
			free(lens);
			free(tags);
			close(fd);
			continue;
		}
		close(fd);
		for (j = 0; j < n; j++) {
			char want[64];
			long k = view_find(addrs[j]);
			size_t wl;

			/*
			 * The main image is named after the program's tag,
			 * a subprogram's after its own (prog_tags[0] is the
			 * main function's alone).
			 */
			strcpy(want, "bpf_prog_");
			tag_hex(j ? tags + j * BPF_TAG_SIZE : tag0, want + 9);
			wl = strlen(want);
			(*nr_images)++;
			if (k < 0 || c.r[k].len != lens[j] ||
			    strncmp(c.r[k].name, want, wl) ||
			    (c.r[k].name[wl] && c.r[k].name[wl] != '_')) {
				diff++;
				note("prog %u image %u (%llx %u %s...) not in the records",
				     id, j, (unsigned long long)addrs[j],
				     lens[j], want);
			}
		}
		free(addrs);
		free(lens);
		free(tags);
	}
	if (in_view != *nr_images) {
		diff++;
		note("%zu bpf_prog_ regions in the records, %zu images loaded",
		     in_view, *nr_images);
	}
	return diff;
}

static int key_cmp(const void *a, const void *b)
{
	const __u64 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* One trampoline per target of a tracing link (all on vmlinux here). */
static int compare_trampolines(size_t *nr)
{
	__u64 keys[256], got[256];
	size_t nk = 0, ng = 0, i;
	__u32 id = 0;
	int diff = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = { };
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_LINK_TYPE_TRACING && nk < 256) {
			__u64 key = (__u64)info.tracing.target_obj_id << 32 |
				    0x80000000u | info.tracing.target_btf_id;

			for (i = 0; i < nk && keys[i] != key; i++)
				;
			if (i == nk)
				keys[nk++] = key;
		}
		close(fd);
	}
	for (i = 0; i < c.nr && ng < 256; i++)
		if (!strncmp(c.r[i].name, "bpf_trampoline_", 15))
			got[ng++] = strtoull(c.r[i].name + 15, NULL, 10);
	qsort(keys, nk, sizeof(*keys), key_cmp);
	qsort(got, ng, sizeof(*got), key_cmp);
	*nr = ng;
	if (nk != ng || memcmp(keys, got, nk * sizeof(*keys))) {
		diff++;
		note("%zu trampolines in the records, %zu link targets", ng, nk);
		for (i = 0; i < ng; i++)
			note("  record: bpf_trampoline_%llu", (unsigned long long)got[i]);
		for (i = 0; i < nk; i++)
			note("  link:   bpf_trampoline_%llu", (unsigned long long)keys[i]);
	}
	return diff;
}

/* Module regions: one per loaded module, at its /proc/modules address. */
static int compare_modules(size_t *nr)
{
	char line[512], name[128];
	unsigned long long addr;
	size_t in_view = 0, i;
	int diff = 0;
	FILE *f = fopen("/proc/modules", "r");

	*nr = 0;
	if (!f) {
		note("/proc/modules: %s", strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		long k;

		if (sscanf(line, "%127s %*s %*s %*s %*s %llx", name, &addr) != 2)
			continue;
		(*nr)++;
		k = view_find(addr);
		if (k < 0 || strcmp(c.r[k].name, name) ||
		    c.r[k].ksym_type != PERF_RECORD_KSYMBOL_TYPE_MODULE) {
			diff++;
			note("module %s at %llx: no region in the records", name, addr);
		}
	}
	fclose(f);
	for (i = 0; i < c.nr; i++)
		in_view += c.r[i].ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE;
	if (in_view != *nr) {
		diff++;
		note("%zu module regions in the records, %zu modules", in_view, *nr);
		for (i = 0; i < c.nr; i++)
			if (c.r[i].ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE)
				note("  record: %s %llx", c.r[i].name,
				     (unsigned long long)c.r[i].addr);
	}
	return diff;
}

static size_t count_named(const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < c.nr; i++)
		n += !strcmp(c.r[i].name, name);
	return n;
}

struct end_state {
	size_t lines, registry, images, trampolines, modules, ftrace, kprobe;
};

/*
 * Compare everything once; 0 if all agree.  Deferred frees (trampoline
 * images after RCU-tasks grace periods) make the caller retry for a while.
 */
static int compare_all(struct end_state *e, long want_ftrace)
{
	long nr = registry_nr();
	int diff = 0;

	if (consumer_process(now_ns() - MARGIN_NS))
		return -1;
	diff += compare_kallsyms(&e->lines);
	if (nr < 0) {
		diff++;
		note("%s: %s", DYNTEXT_CHECK, strerror(-nr));
	} else if ((size_t)nr != c.nr) {
		diff++;
		note("registry holds %ld regions, the records %zu", nr, c.nr);
	}
	e->registry = nr;
	diff += compare_bpf_progs(&e->images);
	diff += compare_trampolines(&e->trampolines);
	diff += compare_modules(&e->modules);
	e->ftrace = count_named("ftrace_trampoline");
	e->kprobe = count_named("kprobe_insn_page") +
		    count_named("kprobe_optinsn_page");
	if (want_ftrace >= 0 && e->ftrace != (size_t)want_ftrace) {
		diff++;
		note("%zu ftrace trampolines, %ld expected", e->ftrace, want_ftrace);
	}
	if (c.nr_pend) {
		diff++;
		note("%zu records not applied yet", c.nr_pend);
	}
	return diff;
}

static int settle(struct end_state *e, long want_ftrace, double secs)
{
	double t0 = now_s();
	int diff;

	for (;;) {
		notes_clear(&cmp);
		diff = compare_all(e, want_ftrace);
		if (!diff || now_s() - t0 > secs)
			return diff;
		usleep(300000);
	}
}

static void print_end_state(const char *when, const struct end_state *e)
{
	printf("# %s: %zu regions in the records, registry %zu, /proc/kallsyms %zu dynamic lines,\n"
	       "#   %zu BPF program images, %zu BPF trampolines, %zu modules, %zu ftrace trampolines,\n"
	       "#   %zu kprobe instruction pages\n",
	       when, c.nr, e->registry, e->lines, e->images, e->trampolines,
	       e->modules, e->ftrace, e->kprobe);
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */

static void load_kprobe_sites(void)
{
	char line[512], **black = NULL;
	size_t nb = 0, alloc = 0, i, n = 0;
	FILE *f;

	f = fopen("/sys/kernel/debug/kprobes/blacklist", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char name[256];

		if (sscanf(line, "%*s %255s", name) == 1) {
			black = realloc(black, (nb + 1) * sizeof(*black));
			black[nb++] = strdup(name);
		}
	}
	if (f)
		fclose(f);
	f = fopen(TRACING "/available_filter_functions", "r");
	kp_sites = calloc(1, sizeof(*kp_sites));
	kp_sites[nr_kp_sites++] = strdup(KPROBE_HIT);
	while (f && fgets(line, sizeof(line), f)) {
		char *p = line;
		bool bad = false;

		line[strcspn(line, "\n")] = 0;
		/* Core kernel functions with plain names only; every 7th. */
		for (p = line; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '_')
				bad = true;
		if (bad || !strcmp(line, KPROBE_HIT) || n++ % 7)
			continue;
		for (i = 0; i < nb && strcmp(black[i], line); i++)
			;
		if (i < nb)
			continue;
		if (nr_kp_sites == (int)alloc || !alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			kp_sites = realloc(kp_sites, alloc * sizeof(*kp_sites));
		}
		kp_sites[nr_kp_sites++] = strdup(line);
		if (nr_kp_sites >= 4 * kp_want)
			break;
	}
	if (f)
		fclose(f);
	for (i = 0; i < nb; i++)
		free(black[i]);
	free(black);
}

static void cleanup_tracefs(void)
{
	write_file(CHURN_INST "/current_tracer", "nop");
	rmdir(CHURN_INST);
	write_file(KEEP_INST "/current_tracer", "nop");
	rmdir(KEEP_INST);
	write_file(TRACING "/events/" KPROBE_GROUP "/enable", "0");
	/* Only this test's probes: the file may hold others. */
	for (int i = 0; i < nr_kp_sites; i++) {
		char line[64];

		snprintf(line, sizeof(line), "-:%s/p%d\n", KPROBE_GROUP, i);
		append_file(TRACING "/kprobe_events", line);
	}
}

struct keepers {
	struct bpf_images *images;
	struct bpf_link *link;
	bool ftrace;
};

static int keepers_start(struct keepers *k)
{
	k->images = bpf_images__open_and_load();
	if (!k->images)
		return -errno;
	k->link = bpf_program__attach(k->images->progs.images_fentry);
	if (!k->link)
		return -errno;
	if (mkdir(KEEP_INST, 0755) ||
	    write_file(KEEP_INST "/set_ftrace_filter", "vfs_write") ||
	    write_file(KEEP_INST "/current_tracer", "function"))
		return -EIO;
	k->ftrace = true;
	return 0;
}

static void keepers_stop(struct keepers *k)
{
	if (k->ftrace) {
		write_file(KEEP_INST "/current_tracer", "nop");
		rmdir(KEEP_INST);
	}
	bpf_link__destroy(k->link);
	bpf_images__destroy(k->images);
	memset(k, 0, sizeof(*k));
}

/* ------------------------------------------------------------------ */
/* perf record                                                         */

static pid_t perf_start(const char *perf, const char *dir, int secs, int freq)
{
	char data[PATH_MAX], log[PATH_MAX], s[32], f[32];
	pid_t pid;

	snprintf(data, sizeof(data), "%s/stress-perf.data", dir);
	snprintf(log, sizeof(log), "%s/stress-perf.log", dir);
	snprintf(s, sizeof(s), "%d", secs);
	snprintf(f, sizeof(f), "%d", freq);
	pid = fork();
	if (pid)
		return pid;
	if (!freopen(log, "w", stdout) || !freopen(log, "a", stderr))
		_exit(126);
	execl(perf, perf, "record", "-a", "-g", "-F", f, "-B", "-N",
	      "-o", data, "--", "sleep", s, NULL);
	_exit(127);
}

/* Run "perf ARGS" and return its output (NUL-terminated), or NULL. */
static char *perf_output(const char *cmd)
{
	size_t len = 0, alloc = 65536;
	char *out = malloc(alloc);
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p || !out) {
		free(out);
		return NULL;
	}
	while ((n = fread(out + len, 1, alloc - len - 1, p)) > 0) {
		len += n;
		if (alloc - len < 4096) {
			alloc *= 2;
			out = realloc(out, alloc);
		}
	}
	out[len] = 0;
	if (pclose(p)) {
		free(out);
		return NULL;
	}
	return out;
}

static long stat_of(const char *stats, const char *what)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s events:", what);
	p = strstr(stats, key);
	return p ? strtol(p + strlen(key), NULL, 10) : 0;
}

static void perf_check(const char *perf, const char *dir, int status)
{
	char cmd[PATH_MAX * 2];
	char *stats, *evl;
	bool ok = WIFEXITED(status) && !WEXITSTATUS(status);

	snprintf(cmd, sizeof(cmd), "%s evlist -v -i %s/stress-perf.data 2>&1",
		 perf, dir);
	evl = perf_output(cmd);
	snprintf(cmd, sizeof(cmd), "%s report --stats -i %s/stress-perf.data 2>&1",
		 perf, dir);
	stats = perf_output(cmd);
	if (!ok)
		note("perf record: status %#x (log in %s/stress-perf.log)",
		     status, dir);
	if (!evl || !strstr(evl, "ksymbol: 1") || !strstr(evl, "bpf_event: 1")) {
		ok = false;
		note("perf evlist: ksymbol and bpf_event not both on");
	}
	if (!stats || stat_of(stats, "SAMPLE") <= 0) {
		ok = false;
		note("perf report --stats: no samples");
	}
	tap(ok, "perf record -a -g ran, with ksymbol and bpf_event");
	print_notes(&cmp);
	if (stats)
		printf("# perf.data: %ld samples, %ld KSYMBOL, %ld BPF_EVENT, %ld LOST records\n",
		       stat_of(stats, "SAMPLE"), stat_of(stats, "KSYMBOL"),
		       stat_of(stats, "BPF_EVENT"), stat_of(stats, "LOST"));
	free(stats);
	free(evl);
}

/* ------------------------------------------------------------------ */

static void print_help(const char *prog)
{
	fprintf(stderr, "usage: %s [-t SECONDS] [-p PERF] [-o DIR] [-k PROBES] [-F FREQ]\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *perf = NULL, *dir = "/tmp";
	int secs = 60, freq = 2000, opt, i, status;
	pid_t pids[16], perf_pid = 0;
	enum kind kinds[16];
	int nr_pids = 0;
	struct end_state base = { }, mid = { }, end = { };
	struct keepers keep = { };
	struct region *before;
	size_t nr_before;
	double t0;
	long ret;
	int diff;

	while ((opt = getopt(argc, argv, "t:p:o:k:F:")) != -1) {
		switch (opt) {
		case 't':
			secs = atoi(optarg);
			break;
		case 'p':
			perf = optarg;
			break;
		case 'o':
			dir = optarg;
			break;
		case 'k':
			kp_want = atoi(optarg);
			break;
		case 'F':
			freq = atoi(optarg);
			break;
		default:
			print_help(argv[0]);
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (geteuid() || access(DYNTEXT_CHECK, R_OK)) {
		printf("1..0 # SKIP needs root and %s\n", DYNTEXT_CHECK);
		return 4;
	}
	ret = readlink("/proc/self/exe", bindir, sizeof(bindir) - 1);
	if (ret < 0)
		return 1;
	bindir[ret] = 0;
	*strrchr(bindir, '/') = 0;
	libbpf_set_print(libbpf_quiet);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));
	cleanup_tracefs();
	load_kprobe_sites();
	printf("# %d s, %d kprobe sites wanted of %d candidates, perf %s at %d Hz\n",
	       secs, kp_want, nr_kp_sites, perf ? perf : "(none)", freq);

	/* The consumer's view of what exists: replayed before anything moves. */
	ret = consumer_open();
	if (!ret)
		ret = consumer_replay();
	tap(ret >= 0 && !c.lost, "consumer: replay of %ld regions", ret);
	if (ret < 0) {
		printf("# consumer: %s\n", strerror(-ret));
		return 1;
	}
	diff = settle(&base, -1, 10);
	tap(!diff, "before: records, /proc/kallsyms, registry and producers agree");
	print_notes(&cmp);
	print_end_state("before", &base);
	nr_before = c.nr;
	before = calloc(nr_before + 1, sizeof(*before));
	for (i = 0; i < (int)nr_before; i++) {
		before[i] = c.r[i];
		before[i].name = strdup(c.r[i].name);
	}

	ret = keepers_start(&keep);
	if (ret) {
		tap(false, "keepers: %s", strerror(-ret));
		keepers_stop(&keep);
		cleanup_tracefs();
		return 1;
	}
	diff = settle(&mid, -1, 10);
	tap(!diff, "with the keepers: records, /proc/kallsyms, registry and producers agree");
	print_notes(&cmp);
	print_end_state("keepers", &mid);

	if (perf)
		perf_pid = perf_start(perf, dir, secs, freq);
	kinds[nr_pids] = K_BPF;
	pids[nr_pids++] = spawn(K_BPF, work_bpf);
	kinds[nr_pids] = K_BPF;
	pids[nr_pids++] = spawn(K_BPF, work_bpf);
	kinds[nr_pids] = K_FENTRY;
	pids[nr_pids++] = spawn(K_FENTRY, work_fentry);
	kinds[nr_pids] = K_FTRACE;
	pids[nr_pids++] = spawn(K_FTRACE, work_ftrace);
	kinds[nr_pids] = K_KPROBE;
	pids[nr_pids++] = spawn(K_KPROBE, work_kprobe);
	kinds[nr_pids] = K_MODULE;
	pids[nr_pids++] = spawn(K_MODULE, work_module);
	kinds[nr_pids] = K_KALLSYMS;
	pids[nr_pids++] = spawn(K_KALLSYMS, work_kallsyms);
	kinds[nr_pids] = K_CHECK;
	pids[nr_pids++] = spawn(K_CHECK, work_check);

	t0 = now_s();
	while (now_s() - t0 < secs) {
		usleep(50000);
		if (consumer_step()) {
			live_note("consumer: out of memory");
			break;
		}
		if ((int)(now_s() - t0) % 15 == 0 && now_s() - t0 > 1) {
			static int last;

			if ((int)(now_s() - t0) != last) {
				last = now_s() - t0;
				fprintf(stderr, "stress: %d s, %llu records, %zu live regions\n",
					last, (unsigned long long)c.records, c.nr);
			}
		}
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	/* Keep reading while the workers tear down what they have. */
	for (i = 0; i < nr_pids; ) {
		pid_t p = waitpid(-1, &status, WNOHANG);

		if (p > 0) {
			int j;

			for (j = 0; j < nr_pids; j++)
				if (pids[j] == p) {
					if (!WIFEXITED(status) || WEXITSTATUS(status))
						worker_error(kinds[j], "exited with status %#x",
							     status);
					pids[j] = 0;
					i++;
				}
			if (p == perf_pid)
				perf_pid = -status - 1;
			continue;
		}
		if (now_s() - t0 > secs + 300) {
			for (int j = 0; j < nr_pids; j++)
				if (pids[j] > 0) {
					worker_error(kinds[j], "did not stop in 300 s");
					kill(pids[j], SIGKILL);
				}
		}
		usleep(50000);
		consumer_step();
	}
	if (perf_pid > 0) {
		while (waitpid(perf_pid, &status, WNOHANG) == 0) {
			usleep(50000);
			consumer_step();
		}
	} else if (perf_pid < 0) {
		status = -(perf_pid + 1);
	}
	printf("# ran %.1f s (workers stopped after %.1f s)\n", (double)secs,
	       now_s() - t0);

	for (i = 0; i < NR_KINDS; i++) {
		struct worker_stats *w = &sh->w[i];
		char buf[512];
		int j, len = 0;

		for (j = 0; j < 7 && sub_name[i][j]; j++)
			len += snprintf(buf + len, sizeof(buf) - len, "%s%lu %s",
					j ? ", " : "", w->sub[j], sub_name[i][j]);
		tap(!w->errors && w->sub[0] > 0, "%s: %s", kind_name[i], buf);
		if (w->errors)
			printf("#   %lu errors, first: %s\n", w->errors, w->err);
	}
	if (perf)
		perf_check(perf, dir, status);

	diff = settle(&end, mid.ftrace, 30);
	tap(!diff, "after the run: records, /proc/kallsyms, registry and producers agree");
	print_notes(&cmp);
	print_end_state("after", &end);

	keepers_stop(&keep);
	diff = settle(&end, base.ftrace, 30);
	/* Back to what there was, but for kprobe pages a cache keeps. */
	for (i = 0; i < (int)nr_before; i++) {
		long j = view_find(before[i].addr);

		if (!strncmp(before[i].name, "kprobe_", 7))
			continue;
		if (j < 0 || strcmp(c.r[j].name, before[i].name) ||
		    c.r[j].len != before[i].len) {
			diff++;
			note("gone: %llx %u %s", (unsigned long long)before[i].addr,
			     before[i].len, before[i].name);
		}
	}
	for (i = 0; i < (int)c.nr; i++) {
		size_t j;

		if (!strncmp(c.r[i].name, "kprobe_", 7) ||
		    !strncmp(c.r[i].name, "bpf_dispatcher_", 15))
			continue;
		for (j = 0; j < nr_before && before[j].addr != c.r[i].addr; j++)
			;
		if (j == nr_before) {
			diff++;
			note("left behind: %llx %u %s", (unsigned long long)c.r[i].addr,
			     c.r[i].len, c.r[i].name);
		}
	}
	tap(!diff, "without the keepers: back to the regions there were before");
	print_notes(&cmp);
	print_end_state("end", &end);

	consumer_process(~0ULL);
	tap(!c.lost && !c.overlap && !c.unknown_unreg && !c.mismatch &&
	    !c.bad_replay && !c.dup_id && !c.unknown_id && !c.load_no_image &&
	    !c.bad_record && c.replay_done,
	    "live stream: every record consistent with the ones before it");
	print_notes(&live);
	printf("# records: %llu applied (%llu replayed, %llu confirmed by replay), %llu lost\n",
	       (unsigned long long)c.records, (unsigned long long)c.replayed,
	       (unsigned long long)c.confirmed, (unsigned long long)c.lost);
	printf("# register / unregister: bpf %llu / %llu, ool %llu / %llu, module %llu / %llu\n",
	       (unsigned long long)c.reg[1], (unsigned long long)c.unreg[1],
	       (unsigned long long)c.reg[2], (unsigned long long)c.unreg[2],
	       (unsigned long long)c.reg[3], (unsigned long long)c.unreg[3]);
	printf("# PROG_LOAD %llu, PROG_UNLOAD %llu; most regions live at once: %llu\n",
	       (unsigned long long)c.prog_load, (unsigned long long)c.prog_unload,
	       (unsigned long long)c.max_live);
	printf("# problems: %llu overlapping registers, %llu unknown unregisters,\n"
	       "#   %llu mismatched unregisters, %llu bad replays,\n"
	       "#   %llu duplicate PROG_LOADs, %llu unknown PROG_UNLOADs,\n"
	       "#   %llu PROG_LOADs without image, %llu malformed\n",
	       (unsigned long long)c.overlap, (unsigned long long)c.unknown_unreg,
	       (unsigned long long)c.mismatch, (unsigned long long)c.bad_replay,
	       (unsigned long long)c.dup_id, (unsigned long long)c.unknown_id,
	       (unsigned long long)c.load_no_image, (unsigned long long)c.bad_record);
	cleanup_tracefs();
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
