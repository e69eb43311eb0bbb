/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stress driver's parts:
 *   stress.c          main: options, setup, the run, results and timing
 *   stress_work.c     the workers: accounting, BPF, fentry, readers
 *   stress_tracefs.c  the function tracer and kprobe workers, the keepers
 *   stress_module.c   the module worker (test and misuse modules)
 *   stream_check.c    the consumer: the live record stream and its view
 *   stress_compare.c  the view against /proc/kallsyms, the registry and
 *                     the producers' own views
 *   stress_perf.c     perf record alongside, and its check
 */
#ifndef DYNTEXT_STRESS_H
#define DYNTEXT_STRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* Results (stress.c) ------------------------------------------------ */

#define MAX_NOTES	40

struct notes {
	char *s[MAX_NOTES];
	int n, dropped;
};

/* Problems in the live stream; differences found by a comparison. */
extern struct notes live, cmp;

void notef(struct notes *b, const char *fmt, ...);
#define note(...)	notef(&cmp, __VA_ARGS__)
#define live_note(...)	notef(&live, __VA_ARGS__)
void notes_clear(struct notes *b);
void print_notes(struct notes *b);

double now_s(void);
__u64 now_ns(void);

/* Workers (stress_work.c, stress_tracefs.c, stress_module.c) -------- */

enum kind { K_BPF, K_FENTRY, K_FTRACE, K_KPROBE, K_MODULE, K_KALLSYMS,
	    K_CHECK, NR_KINDS };

/* The shared counters; 0 or -1. */
int workers_init(void);
/* Fork every worker; tell them to stop; how many have not exited. */
void workers_start(void);
void workers_stop(void);
int workers_left(void);
/* Process p exited with status: note it if it is a worker. */
void worker_exited(pid_t p, int status);
/* Kill the workers still there (an error each time). */
void workers_kill(void);
/* A TAP line per kind of worker, with its counts. */
void workers_report(void);

/* For the workers: add n to count i of kind k, note an error, stop? */
void worker_count(enum kind k, int i, unsigned long n);
void worker_error(enum kind k, const char *fmt, ...);
bool stopping(void);

void work_ftrace(void);
void work_kprobe(void);
void work_module(void);

/* Candidate kprobe sites, about 4 times want; returns how many. */
int load_kprobe_sites(int want);
/* Remove the tracefs instances and kprobes the workers may have left. */
void cleanup_tracefs(void);

/* Kept the whole time: an fentry program, a function tracer instance. */
struct keepers {
	struct bpf_images *images;
	struct bpf_link *link;
	bool ftrace;
};

int keepers_start(struct keepers *k);
void keepers_stop(struct keepers *k);

/* The consumer (stream_check.c) ------------------------------------- */

struct region {
	__u64 addr;
	__u32 len;
	__u16 ksym_type;
	char *name;
};

/* The consumer's view: the live regions, sorted by address. */
struct view {
	struct region *r;
	size_t nr, alloc;
};

extern struct view view;

/* The index of the region at addr, or -1. */
long view_find(__u64 addr);

int consumer_open(void);
/* Replay the registry into the view; the number of regions or -errno. */
int consumer_replay(void);
/* Apply the records read, up to time limit, in time order. */
int consumer_process(__u64 limit);
/* The same up to a margin before now (records come after their time). */
int consumer_step(void);
/* Records lost, applied, and read but not applied yet. */
__u64 consumer_lost(void);
__u64 consumer_records(void);
size_t consumer_pending(void);
/* Apply all; the TAP line of the live stream, and its counts. */
void consumer_report(void);

/* End state (stress_compare.c) -------------------------------------- */

/* Is mod the module tag of dynamic text in /proc/kallsyms? */
bool dynamic_owner(const char *mod);

struct end_state {
	size_t lines, registry, images, trampolines, modules, ftrace, kprobe;
};

/*
 * Compare until all agree or secs have passed (want_ftrace < 0: any
 * number of ftrace trampolines); the number of differences left.
 */
int settle(struct end_state *e, long want_ftrace, double secs);
void print_end_state(const char *when, const struct end_state *e);
/* A copy of the view (*nr regions); the differences of the view to it. */
struct region *view_copy(size_t *nr);
int compare_before(const struct region *before, size_t nr_before);

/* perf record (stress_perf.c) --------------------------------------- */

pid_t perf_start(const char *perf, const char *dir, int secs, int freq);
void perf_check(const char *perf, const char *dir, int status);

#endif
