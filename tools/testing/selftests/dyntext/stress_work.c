// SPDX-License-Identifier: GPL-2.0
/*
 * The stress driver's workers (stress.h): processes that each run one
 * workload until told to stop, counting what they did in a shared mapping.
 * Here the accounting and the workers of BPF programs, of an fentry
 * program, and of the readers (/proc/kallsyms, the registry's check).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "records.h"
#include "bpf_run.h"
#include "stress.h"
#include "ksym_abi.skel.h"
#include "stress.skel.h"

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

void worker_count(enum kind k, int i, unsigned long n)
{
	__atomic_fetch_add(&sh->w[k].sub[i], n, __ATOMIC_RELAXED);
}

void worker_error(enum kind k, const char *fmt, ...)
{
	struct worker_stats *w = &sh->w[k];
	va_list ap;

	if (__atomic_fetch_add(&w->errors, 1, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
}

bool stopping(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED);
}

static void work_bpf(void)
{
	while (!stopping()) {
		struct bpf_run run = { .repeat = 200 };
		struct ksym_abi *skel = ksym_abi__open_and_load();
		int ret;

		if (!skel) {
			worker_error(K_BPF, "ksym_abi load: %s", strerror(errno));
			usleep(100000);
			continue;
		}
		worker_count(K_BPF, 0, 1);
		ret = bpf_run(bpf_program__fd(skel->progs.ksym_abi_main), &run);
		if (ret)
			worker_error(K_BPF, "test run: %s", strerror(-ret));
		else
			worker_count(K_BPF, 2, 1);
		ksym_abi__destroy(skel);
		worker_count(K_BPF, 1, 1);
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
				worker_count(K_FENTRY, 2, 1);
		}
		link = bpf_program__attach(skel->progs.stress_fentry_getpgid);
		if (!link) {
			worker_error(K_FENTRY, "attach: %s", strerror(errno));
			usleep(100000);
			continue;
		}
		worker_count(K_FENTRY, 0, 1);
		/* Go through the trampoline while it is there. */
		for (i = 0; i < 20; i++)
			syscall(SYS_getpgid, 0);
		bpf_link__destroy(link);
		worker_count(K_FENTRY, 1, 1);
		if (++n % 8 == 0) {
			stress__destroy(skel);
			skel = NULL;
		}
	}
	stress__destroy(skel);
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
		worker_count(K_KALLSYMS, 0, 1);
		worker_count(K_KALLSYMS, 1, c.lines);
		worker_count(K_KALLSYMS, 2, c.dyn);
	}
}

static void work_check(void)
{
	unsigned long max = 0;

	while (!stopping()) {
		long nr = registry_nr();

		if (nr < 0) {
			worker_error(K_CHECK, "%s: %s", DYNTEXT_CHECK,
				     strerror(-nr));
		} else {
			worker_count(K_CHECK, 0, 1);
			if ((unsigned long)nr > max) {
				worker_count(K_CHECK, 1, nr - max);
				max = nr;
			}
		}
		usleep(20000);
	}
}

#define NR_WORKERS	8

/* The workers, in the order they start: two of bpf. */
static const struct {
	enum kind kind;
	void (*fn)(void);
} workers[NR_WORKERS] = {
	{ K_BPF, work_bpf },
	{ K_BPF, work_bpf },
	{ K_FENTRY, work_fentry },
	{ K_FTRACE, work_ftrace },
	{ K_KPROBE, work_kprobe },
	{ K_MODULE, work_module },
	{ K_KALLSYMS, work_kallsyms },
	{ K_CHECK, work_check },
};

static pid_t pids[NR_WORKERS];	/* 0 once it exited */

int workers_init(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -1;
	memset(sh, 0, sizeof(*sh));
	return 0;
}

void workers_start(void)
{
	size_t i;

	for (i = 0; i < NR_WORKERS; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			workers[i].fn();
			_exit(0);
		}
	}
}

void workers_stop(void)
{
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
}

int workers_left(void)
{
	size_t i;
	int n = 0;

	for (i = 0; i < NR_WORKERS; i++)
		n += pids[i] != 0;
	return n;
}

void worker_exited(pid_t p, int status)
{
	size_t i;

	for (i = 0; i < NR_WORKERS; i++) {
		if (pids[i] != p)
			continue;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			worker_error(workers[i].kind, "exited with status %#x",
				     status);
		pids[i] = 0;
	}
}

void workers_kill(void)
{
	size_t i;

	for (i = 0; i < NR_WORKERS; i++) {
		if (pids[i] > 0) {
			worker_error(workers[i].kind, "did not stop in 300 s");
			kill(pids[i], SIGKILL);
		}
	}
}

void workers_report(void)
{
	int i, j;

	for (i = 0; i < NR_KINDS; i++) {
		struct worker_stats *w = &sh->w[i];
		char buf[512];
		int len = 0;

		for (j = 0; j < 7 && sub_name[i][j]; j++)
			len += snprintf(buf + len, sizeof(buf) - len, "%s%lu %s",
					j ? ", " : "", w->sub[j], sub_name[i][j]);
		tap(!w->errors && w->sub[0] > 0, "%s: %s", kind_name[i], buf);
		if (w->errors)
			printf("#   %lu errors, first: %s\n", w->errors, w->err);
	}
}
