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
 * This file has main; stress.h lists the other parts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "records.h"
#include "stress.h"

struct notes live, cmp;

/* A problem found: kept for the TAP output, counted past MAX_NOTES. */
void notef(struct notes *b, const char *fmt, ...)
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

void notes_clear(struct notes *b)
{
	while (b->n)
		free(b->s[--b->n]);
	b->dropped = 0;
}

void print_notes(struct notes *b)
{
	int i;

	for (i = 0; i < b->n; i++)
		printf("#   %s\n", b->s[i]);
	if (b->dropped)
		printf("#   ... and %d more\n", b->dropped);
	notes_clear(b);
}

double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return 0;
}

static void print_help(const char *prog)
{
	fprintf(stderr, "usage: %s [-t SECONDS] [-p PERF] [-o DIR] [-k PROBES] [-F FREQ]\n",
		prog);
	exit(2);
}

/*
 * The workers for secs, the consumer reading meanwhile; then until the
 * workers (and perf record, perf_pid if not 0) are gone.  Returns perf
 * record's exit status.
 */
static int run(int secs, pid_t perf_pid)
{
	int status = 0, last = 0;
	double t0;

	workers_start();
	t0 = now_s();
	while (now_s() - t0 < secs) {
		usleep(50000);
		if (consumer_step()) {
			live_note("consumer: out of memory");
			break;
		}
		if ((int)(now_s() - t0) % 15 == 0 && now_s() - t0 > 1 &&
		    (int)(now_s() - t0) != last) {
			last = now_s() - t0;
			fprintf(stderr, "stress: %d s, %llu records, %zu live regions\n",
				last, (unsigned long long)consumer_records(),
				view.nr);
		}
	}
	workers_stop();
	/* Keep reading while the workers tear down what they have. */
	while (workers_left()) {
		pid_t p = waitpid(-1, &status, WNOHANG);

		if (p > 0) {
			worker_exited(p, status);
			if (p == perf_pid)
				perf_pid = -status - 1;
			continue;
		}
		if (now_s() - t0 > secs + 300)
			workers_kill();
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
	return status;
}

int main(int argc, char **argv)
{
	const char *perf = NULL, *dir = "/tmp";
	int secs = 60, freq = 2000, kp_want = 300, nr_kp_sites, opt, status;
	struct end_state base = { }, mid = { }, end = { };
	struct keepers keep = { };
	struct region *before;
	pid_t perf_pid = 0;
	size_t nr_before;
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
	/* Where the modules are, read before anything forks. */
	if (!test_binary_dir())
		return 1;
	libbpf_set_print(libbpf_quiet);
	if (workers_init())
		return 1;
	cleanup_tracefs();
	nr_kp_sites = load_kprobe_sites(kp_want);
	printf("# %d s, %d kprobe sites wanted of %d candidates, perf %s at %d Hz\n",
	       secs, kp_want, nr_kp_sites, perf ? perf : "(none)", freq);

	/* The consumer's view of what exists: replayed before anything moves. */
	ret = consumer_open();
	if (!ret)
		ret = consumer_replay();
	tap(ret >= 0 && !consumer_lost(), "consumer: replay of %ld regions", ret);
	if (ret < 0) {
		printf("# consumer: %s\n", strerror(-ret));
		return 1;
	}
	diff = settle(&base, -1, 10);
	tap(!diff, "before: records, /proc/kallsyms, registry and producers agree");
	print_notes(&cmp);
	print_end_state("before", &base);
	before = view_copy(&nr_before);

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
	status = run(secs, perf_pid);
	workers_report();
	if (perf)
		perf_check(perf, dir, status);

	diff = settle(&end, mid.ftrace, 30);
	tap(!diff, "after the run: records, /proc/kallsyms, registry and producers agree");
	print_notes(&cmp);
	print_end_state("after", &end);

	keepers_stop(&keep);
	diff = settle(&end, base.ftrace, 30);
	diff += compare_before(before, nr_before);
	tap(!diff, "without the keepers: back to the regions there were before");
	print_notes(&cmp);
	print_end_state("end", &end);

	consumer_report();
	cleanup_tracefs();
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
