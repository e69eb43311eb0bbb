/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Collect PERF_RECORD_KSYMBOL and PERF_RECORD_BPF_EVENT records from a
 * system-wide dummy event with libperf, in time order across CPUs.
 */
#ifndef DYNTEXT_RECORDS_H
#define DYNTEXT_RECORDS_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdbool.h>

#ifndef KSYM_NAME_LEN
#define KSYM_NAME_LEN 512
#endif
#ifndef PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID
#define PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID 0x10
#endif
/*
 * PERF_RECORD_KSYMBOL_TYPE_KERNEL, the kernel image's replay record: an
 * enum constant, which the UAPI headers of the older bases the tests also
 * build on do not have.
 */
#define KSYM_TYPE_KERNEL 5
/* What follows name with PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID. */
struct rec_build_id {
	__u8 size;
	__u8 id[20];
	__u8 reserved[3];
};

struct rec {
	__u32 type;		/* PERF_RECORD_KSYMBOL, _BPF_EVENT or _TEXT_POKE */
	__u64 time;
	__u32 cpu;
	__u64 seq;		/* order of arrival, breaks ties in time */
	/* KSYMBOL */
	__u64 addr;
	__u32 len;
	__u16 ksym_type;
	__u16 flags;		/* without PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID */
	char name[KSYM_NAME_LEN];
	__u8 build_id_size;	/* with that flag: the build-id after name */
	__u8 build_id[20];
	/* BPF_EVENT */
	__u16 bpf_type;
	__u16 bpf_flags;
	__u32 id;
	__u8 tag[BPF_TAG_SIZE];
	/* TEXT_POKE (streams with keep_text only): addr, and the bytes */
	__u16 old_len, new_len;
	__u8 *bytes;		/* old then new bytes, malloc'ed */
};

struct rec_stream {
	struct perf_evlist *evlist;
	struct rec *recs;	/* moves on every drain: keep indices, not pointers */
	size_t nr, alloc;
	__u64 lost;		/* PERF_RECORD_LOST counts */
	__u64 other;		/* records of other types */
	__u64 text_pokes;	/* PERF_RECORD_TEXT_POKE records, well formed */
	__u64 malformed;	/* size not what the record's content needs */
	bool no_sample_id;	/* opened without sample_id_all */
	bool keep_text;		/* TEXT_POKE records go to recs too */
	int fd;			/* the first event's (rec_stream_fd()) */
};

/*
 * Open the system-wide side-band event (ksymbol=1, bpf_event=1, and
 * ksymbol_module=1 if the kernel has module records).
 */
int rec_stream_open(struct rec_stream *s, unsigned int pages);
/* The same without asking for module records (ksymbol_module=0). */
int rec_stream_open_no_modules(struct rec_stream *s, unsigned int pages);
/* The same without sample_id_all: records without a sample_id trailer. */
int rec_stream_open_no_sample_id(struct rec_stream *s, unsigned int pages);
/* Does the kernel accept attr.ksymbol_module (module text records)? */
bool kernel_has_module_records(void);
/* Has the kernel the dynamic text registry (dyntext_add() in kallsyms)? */
bool kernel_has_dyntext(void);
/* Does the kernel accept attr.ksymbol_text (the code of new text)? */
bool kernel_has_ksymbol_text(void);
/* Does the kernel have PERF_EVENT_IOC_KSYMBOL_REPLAY? */
bool kernel_has_ksymbol_replay(void);
/* The same on the calling process only (a task event, exclude_kernel). */
int rec_stream_open_self(struct rec_stream *s, unsigned int pages);
/* rec_stream_open() with attr.text_poke: text poke records kept too. */
int rec_stream_open_text_poke(struct rec_stream *s, unsigned int pages);
/*
 * rec_stream_open() with attr.ksymbol_text (the code of new text), with
 * attr.text_poke too if text_poke.
 */
int rec_stream_open_ksymbol_text(struct rec_stream *s, unsigned int pages,
				 bool text_poke);
/* rec_stream_open_self() with attr.ksymbol_text. */
int rec_stream_open_self_ksymbol_text(struct rec_stream *s,
				      unsigned int pages);
/*
 * Count KSYMBOL records (with flags; of that name unless NULL: a freed
 * region's address is legitimately reused, e.g. by the program libbpf loads
 * after its feature probes) and BPF_EVENT records (of bpf_type).
 */
size_t rec_count_ksym(const struct rec_stream *s, __u64 addr, __u16 flags,
		      const char *name);
size_t rec_count_bpf(const struct rec_stream *s, __u32 id, __u16 bpf_type,
		     size_t *idx);	/* index of the last match, if not NULL */
/* The first KSYMBOL record named name with flags, or NULL. */
const struct rec *rec_find_name(const struct rec_stream *s, const char *name,
				__u16 flags);
/*
 * Append everything in the ring buffers to s->recs, sorted by time; records
 * with equal times keep the order in which their CPU's buffer holds them.
 * Records already drained keep their index.
 */
int rec_stream_drain(struct rec_stream *s);

/*
 * Pin the calling thread to the CPU it runs on, so that everything it
 * makes the kernel emit lands in one ring buffer in emission order (the
 * perf clock need not be fine-grained nor synchronised across CPUs).
 */
int rec_pin_cpu(void);
void rec_stream_close(struct rec_stream *s);

/* Drain until a KSYMBOL record named name with flags shows up (10 s). */
const struct rec *rec_wait_name(struct rec_stream *s, const char *name,
				__u16 flags);

/* A parsed line of /proc/kallsyms; mod is "" for the core kernel. */
struct ksym_line {
	unsigned long long addr;
	char type;
	char name[KSYM_NAME_LEN];
	char mod[128];
};

/*
 * Call fn for every line of /proc/kallsyms until it returns non-zero.
 * Returns 0, or a negative error from reading or from fn.
 */
int kallsyms_for_each(int (*fn)(const struct ksym_line *l, void *arg),
		      void *arg);

/*
 * The lines of /proc/kallsyms whose module tag keep() accepts, in file
 * order, into *lines (free() it).  Returns their number or -errno.
 */
long kallsyms_lines(bool (*keep)(const char *mod), struct ksym_line **lines);

/*
 * n, or n / DYNTEXT_TEST_DIVISOR when that is set in the environment: the
 * debug kernel (KASAN, lockdep) under emulation loads a BPF program about
 * ten times slower, and runs the tests that load thousands with fewer.
 */
int test_count(int n);
/* Whether DYNTEXT_TEST_DIVISOR says the kernel is that slow one. */
bool test_slow_kernel(void);

/*
 * What kernel_text_address() and kallsyms_lookup() (so %pS) say of an
 * address, through the lookup benchmark module dyntext_lookup_bench.ko
 * (bench_module/, which needs nothing of the registry): load it, ask, unload
 * it.  text_lookup() sets *text and writes "name+0xoff/0xsize" or "-".
 * All return 0 or -errno.
 */
int text_lookup_start(void);
int text_lookup(unsigned long long addr, int *text, char *name, size_t len);
int text_lookup_stop(void);

/* Tags of run-time text in /proc/kallsyms: [bpf] and [__builtin__*]. */
bool kallsyms_dynamic_tag(const char *mod);

/*
 * Lines of /proc/kallsyms for symbol name with module tag mod ("" for the
 * core kernel) and, if type is not 0, that type letter.  The address and
 * type of the last match go to *addr and *type_seen unless they are NULL.
 */
int kallsyms_sym_count(const char *name, const char *mod, char type,
		       unsigned long long *addr, char *type_seen);
/*
 * The address range [*lo, *hi) of text symbol name of loaded module mod:
 * up to the module's next symbol.  0, or -ENOENT.
 */
int module_sym_range(const char *mod, const char *name, unsigned long long *lo,
		     unsigned long long *hi);

/*
 * The test binary's directory, read once: after unshare(CLONE_NEWNS) in
 * a chroot, /proc/self/exe shows the path outside the chroot.
 */
const char *test_binary_dir(void);
/* Load (finit_module) the module file path: 0 or -errno. */
int test_module_load_file(const char *path, const char *params);
/* Load (finit_module) MOD.ko from the test binary's directory, unload it. */
int test_module_load(const char *mod, const char *params);
int test_module_unload(const char *mod);

/*
 * The GNU build-id note in an ELF notes file (/sys/kernel/notes: the
 * kernel's) into id (max bytes at most): its size, or -errno (-ENOENT: no
 * such note).
 */
int note_build_id(const char *path, __u8 *id, size_t max);
/* The same for a loaded module's /sys/module/M/notes/.note.gnu.build-id. */
int module_note_build_id(const char *mod, __u8 *id, size_t max);

/* The address of a loaded module's section (/sys/module/M/sections/S), or 0. */
unsigned long long module_section_addr(const char *mod, const char *section);

/*
 * cpu-clock samples (PERF_SAMPLE_IP) at freq Hz on every CPU, so that a
 * test can run a workload until samples land where it wants them instead
 * of for a fixed time.  ip_sampler_count() drains the buffers and returns
 * the number of samples with lo <= ip < hi among those drained.
 */
struct ip_sampler {
	struct perf_evlist *evlist;
};

int ip_sampler_open(struct ip_sampler *s, int freq);
long ip_sampler_count(struct ip_sampler *s, __u64 lo, __u64 hi);
void ip_sampler_close(struct ip_sampler *s);

/* Write s to path opened with O_WRONLY | flags (O_TRUNC, O_APPEND). */
int write_str(const char *path, const char *s, int flags);

/*
 * Whether path has a line that contains a and b (b may be NULL), looking
 * again every 10 ms for up to ms milliseconds (0: once).
 */
bool file_wait_line(const char *path, const char *a, const char *b, int ms);

/*
 * A kprobe site that needs an instruction slot (on the ftrace call site a
 * kprobe uses ftrace instead): the instruction after vfs_read's 5-byte
 * __fentry__ call, which X86_KERNEL_IBT moves 4 bytes on (ENDBR64).
 */
#if KCONFIG_X86_KERNEL_IBT
#define KPROBE_OOL_SITE "vfs_read+9"
#else
#define KPROBE_OOL_SITE "vfs_read+5"
#endif

/*
 * Kprobe instruction slots, taken with kprobes (disabled, so never armed)
 * opened through perf's kprobe PMU, each on the instruction after the
 * __fentry__ call of another core kernel function (KPROBE_OOL_SITE's
 * offset), so that each takes a slot.  kprobe_slots_init() makes sure the
 * cache's first page, which is never freed, exists; kprobe_slots_fill()
 * opens kprobes until done(arg) says so (a new page: the registry grew, or
 * its register record arrived): 0, or -ENOSPC when every site is taken, or
 * the open's error (-ENOMEM: a refused page); the kprobes are released on
 * an error.  kprobe_slots_release() closes them: one more dirty slot than
 * a page holds lets kprobes collect the slots and free the new page again.
 */
#define KPROBE_SLOTS_MAX 4096

struct kprobe_slots {
	int type, off;
	char **names;		/* NULL where a function is no site */
	int nr_names;
	int fds[KPROBE_SLOTS_MAX], nr_fds;
};

int kprobe_slots_init(struct kprobe_slots *k);
int kprobe_slots_fill(struct kprobe_slots *k, bool (*done)(void *arg),
		      void *arg);
void kprobe_slots_release(struct kprobe_slots *k);

/* The running kernel's release is major.minor or later. */
bool kernel_at_least(unsigned int major, unsigned int minor);

#define KPTR "/proc/sys/kernel/kptr_restrict"
#define PARANOID "/proc/sys/kernel/perf_event_paranoid"
#define NOBODY 65534

/*
 * Read and write an integer sysctl (or any file that holds one, in sysfs or
 * debugfs); sysctl_get() returns -1000 on error.
 */
int sysctl_get(const char *path);
int sysctl_set(const char *path, int v);
/* Drop every privilege: uid, gid and groups 65534. */
int drop_to_nobody(void);
/* The same, but keep capability cap (CAP_*) effective; -1 keeps none. */
int drop_to_nobody_keep(int cap);
/* The same, keeping the capabilities of mask (1ULL << CAP_*) effective. */
int drop_to_nobody_caps(__u64 mask);

/*
 * TAP for the stress drivers (stress, faults, misuse), which print their
 * plan at the end: "ok N - ..." or "not ok N - ...", flushed at once so that
 * a machine that dies keeps what was printed.  tap_n counts the tests,
 * tap_failed the failures.
 */
extern int tap_n, tap_failed;
void tap(bool ok, const char *fmt, ...);

/* tracefs. */
#define TRACING "/sys/kernel/tracing"

/* The registry's consistency check (CONFIG_DEBUG_FS): "ok N" or an error. */
#define DYNTEXT_CHECK "/sys/kernel/debug/dyntext/check"
/*
 * Read DYNTEXT_CHECK: the number of registered regions, or a negative
 * error (-EUCLEAN if the check found the registry inconsistent).
 */
long registry_nr(void);

/* The fd of the stream's first event (the first CPU's), or -1. */
int rec_stream_fd(struct rec_stream *s);
/*
 * The perf event fds open now (malloc'ed, *n of them), and the lowest one
 * open now that was not then: around perf_evlist__open(), the fd of the
 * evlist's first event (libperf opens them in CPU order).
 */
int *perf_fds_open(int *n);
int perf_fd_new(const int *before, int n);

/*
 * PERF_EVENT_IOC_KSYMBOL_REPLAY on fd for the ksymbol types in the mask
 * types (0: all), resumed after every -ENOSPC once drain(arg) emptied the
 * ring buffer, until the snapshot is complete.  Returns what the last call
 * returned (regions replayed by it) or -errno; *calls and *seq, if not
 * NULL, get the number of calls and the snapshot's sequence number.
 */
long ksym_replay(int fd, __u32 types, int (*drain)(void *arg), void *arg,
		 unsigned int *calls, __u64 *seq);
/* ksym_replay() into a stream's first CPU, draining into s->recs. */
long rec_replay(struct rec_stream *s, __u32 types, unsigned int *calls,
		__u64 *seq);
/* Is r one of the replay's BEGIN or END markers (flags)? */
bool rec_is_marker(const struct rec *r, __u16 flags);

/* Format a tag as 16 hex digits into buf (17 bytes). */
void tag_hex(const __u8 *tag, char *buf);

/*
 * A line of /proc/kallsyms: the first line whose address is addr.
 * Returns 0 and fills type, name and mod (without brackets, "" for none).
 */
int kallsyms_find(__u64 addr, char *type, char *name, size_t name_len,
		  char *mod, size_t mod_len);

/* How many lines of /proc/kallsyms are exactly want (with its newline). */
int kallsyms_count_line(const char *want);

/*
 * The name of the BPF trampoline of kernel function func:
 * bpf_trampoline_<key>, key = vmlinux BTF object id << 32 | 0x80000000 |
 * the function's BTF id (see bpf_trampoline_compute_key()).
 */
int bpf_trampoline_name(const char *func, char *buf, size_t len);
/* The same for the function the program behind fd attaches to. */
int bpf_prog_trampoline_name(int fd, char *buf, size_t len);

/*
 * bpf_prog_info of the program behind fd with the addresses (ksyms) and,
 * if lens is not NULL, the lengths of its first nr JITed functions.
 * Returns the number of JITed functions the program has (main program and
 * subprograms) or -errno.
 */
int bpf_prog_funcs(int fd, struct bpf_prog_info *info, __u64 *ksyms,
		   __u32 *lens, __u32 nr);

/* The JITed functions of a program and their code (bpf_prog_info). */
#define PROG_CODE_MAX_FUNCS 4

struct prog_code {
	int nr;
	__u64 addr[PROG_CODE_MAX_FUNCS];
	__u32 len[PROG_CODE_MAX_FUNCS];
	__u8 *insns;	/* every function's code, in jited_ksyms order */
	__u32 insns_len;
};

/* Fills c for the program behind fd (free c->insns): 0 or -errno. */
int prog_code_get(int fd, struct prog_code *c);

#define PROG_VIEW_MAX 4

/*
 * A loaded program's JITed functions the way perf reads them from
 * bpf_prog_info: address, length and the ksymbol name the kernel gives
 * each (bpf_prog_<tag>_<BTF func name, or the program's name>).
 */
struct prog_view {
	__u32 id;
	__u8 tag[BPF_TAG_SIZE];
	__u32 nr;
	__u64 addr[PROG_VIEW_MAX];
	__u32 len[PROG_VIEW_MAX];
	char name[PROG_VIEW_MAX][KSYM_NAME_LEN];
};

/*
 * Fill v for the program behind fd.  Match records by name as well as by
 * address: libbpf loads and frees probe programs before a skeleton's, and
 * a function may get the address a freed probe had.
 */
int prog_view_get(int fd, struct prog_view *v);

/* The flags word of attr (the bits after read_format), and one bit set. */
__u64 attr_flags(const struct perf_event_attr *attr);
void attr_set_flag(struct perf_event_attr *attr, int bit);

#endif
