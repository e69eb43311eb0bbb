// SPDX-License-Identifier: GPL-2.0
/*
 * perf record / report / script on the patched kernel, with the perf built
 * from the patched tree ($PERF, or ../../perf/perf next to this binary):
 * a module loaded after `perf record -a` started and unloaded before it
 * stopped, and a BPF program with subprograms, are named in the samples;
 * so is a BPF program loaded before perf record started, whose records the
 * kernel replayed into perf's ring buffer (PERF_EVENT_IOC_KSYMBOL_REPLAY),
 * or perf synthesized with --no-ksymbol-replay.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "records.h"
#include "module_layout.h"
#include "perf_run.h"
#include "bpf_run.h"
#include "ksym_abi.skel.h"
#include "tick_fentry.skel.h"

#define MOD "dyntext_test"

/* Text symbols /proc/kallsyms lists for module mod in [lo, hi). */
struct mod_range {
	const char *mod;
	unsigned long long lo, hi;
	int n;
};

static int module_function_fn(const struct ksym_line *l, void *arg)
{
	struct mod_range *r = arg;

	r->n += !strcmp(l->mod, r->mod) && l->addr >= r->lo && l->addr < r->hi &&
		strchr("tTwW", l->type);
	return 0;
}

static int module_functions(const char *mod, unsigned long long lo,
			    unsigned long long hi)
{
	struct mod_range r = { .mod = mod, .lo = lo, .hi = hi };
	int ret = kallsyms_for_each(module_function_fn, &r);

	return ret ? ret : r.n;
}

/* A "# module text:" line of perf report --header-only. */
struct header_text {
	unsigned long long addr, len;
	int funcs;			/* -1: no line for the module */
	char build_id[64];
	char file[PATH_MAX];
};

static void header_module_text(struct perf_run *r, const char *mod,
			       struct header_text *h)
{
	FILE *f = perf_output(r, "report --header-only");
	char line[PATH_MAX + 512], name[128];

	memset(h, 0, sizeof(*h));
	h->funcs = -1;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "# module text: %127s addr 0x%llx size %llu, %d functions,",
			   name, &h->addr, &h->len, &h->funcs) == 4 &&
		    !strcmp(name, mod)) {
			const char *b = strstr(line, "build-id ");

			if (b)
				sscanf(b, "build-id %63[^,], file %4095s",
				       h->build_id, h->file);
			break;
		}
		h->funcs = -1;
	}
	if (f)
		pclose(f);
}

/*
 * Keep the loaded test module busy for 1.5 s (*busy: its busy function),
 * unload it and stop perf record.
 */
static void spin_unload_stop(struct __test_metadata *_metadata,
			     struct perf_run *r, unsigned long long *busy)
{
	ASSERT_EQ(1, kallsyms_sym_count("dyntext_test_busy", MOD, 't', busy, NULL));
	ASSERT_EQ(0, write_str("/sys/module/" MOD "/parameters/spin_ms", "1500", 0));
	ASSERT_EQ(0, test_module_unload(MOD));
	ASSERT_EQ(0, perf_record_stop(r));
}

#define INSTANCE TRACING "/instances/dyntext_perf"
#define TICK "dyntext_test_tick"

/* The tracers of the tick tests, gone whatever the test did. */
static void instance_remove(void *arg)
{
	write_str(INSTANCE "/current_tracer", "nop", O_TRUNC);
	rmdir(INSTANCE);
}

static void kprobe_remove(void *arg)
{
	write_str(TRACING "/events/dyntext_pt/enable", "0", O_TRUNC);
	write_str(TRACING "/kprobe_events", "-:dyntext_pt/tick\n", O_APPEND);
}

/*
 * Each test may take at least four times the longest it took on the
 * slowest kernel, with lockdep and KASAN, under emulation (three runs,
 * 2026-12-02): 90 s for most, whose longest was
 * 22 s, where the harness's default of 30 s was too close; 120 s for
 * bpf_program_loaded_before_record (24.3 s) and its no_replay variant
 * (27.5 s), 150 s for lost_sideband_replayed_again (32.1 s), 180 s for
 * module_named_by_build_id (38.8 s) and 360 s for lost_sideband_backs_off
 * (86.2 s).  Beside other work the same kernel ran up to 1.8 times slower.
 */
FIXTURE(perf) {
	struct perf_run run;
	struct rec_stream s;
	char home[64];
	int kptr;
};

FIXTURE_SETUP(perf)
{
	memset(&self->run, 0, sizeof(self->run));
	self->home[0] = 0;
	self->kptr = sysctl_get(KPTR);
	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, find_perf(self->run.perf, sizeof(self->run.perf)))
		TH_LOG("no perf binary (set PERF=)");
	ASSERT_EQ(0, perf_home_new(self->home, sizeof(self->home)));
	test_module_unload(MOD);
	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
}

static void uninstall_module(void);

FIXTURE_TEARDOWN(perf)
{
	instance_remove(NULL);
	kprobe_remove(NULL);
	uninstall_module();
	perf_run_cleanup(&self->run);
	perf_dir_remove(self->home);
	rec_stream_close(&self->s);
	test_module_unload(MOD);
	if (self->kptr >= 0)
		sysctl_set(KPTR, self->kptr);
}

/*
 * Feature bits 32 to 35 of perf.data's header (adds_features, after the
 * magic, size, attr_size and the attrs, data and event_types sections).
 */
static int header_features_32_35(struct perf_run *r)
{
	__u64 words[4];
	int fd = open(r->data, O_RDONLY);
	ssize_t n = -1;

	if (fd >= 0) {
		n = pread(fd, words, sizeof(words), 3 * 8 + 3 * 16);
		close(fd);
	}
	return n == sizeof(words) ? (words[0] >> 32) & 0xf : -1;
}

/*
 * Features 32 to 35 that the perf of the running kernel's base writes:
 * HEADER_KMOD_TEXT (35), and from Linux 7 on upstream's HEADER_E_MACHINE
 * (33) and HEADER_CLN_SIZE (34) too (HEADER_CPU_DOMAIN_INFO, 32, only for
 * perf sched stats).
 */
static int want_features_32_35(void)
{
	struct utsname u;
	int major = 0;

	if (!uname(&u))
		sscanf(u.release, "%d", &major);
	return 1 << 3 | (major >= 7 ? 1 << 1 | 1 << 2 : 0);
}

/*
 * The module comes and goes while perf records: perf.data keeps its text
 * region and functions (HEADER_KMOD_TEXT, exactly what the kernel announced
 * and /proc/kallsyms listed), and every sample in the module's text is
 * named dyntext_test_busy in [dyntext_test].  HEADER_KMOD_TEXT is feature
 * 35, after upstream's 32 to 34.
 */
TEST_F_TIMEOUT(perf, module_loaded_during_record, 90)
{
	unsigned long long text, busy;
	struct header_text h;
	const struct rec *reg;
	struct samples c;
	__u64 addr, len;
	int nfuncs;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	ASSERT_EQ(0, test_module_load(MOD, ""));
	text = module_section_addr(MOD, ".text");
	ASSERT_NE(0, text);
	reg = rec_wait_name(&self->s, MOD, 0);
	ASSERT_NE(NULL, reg);
	addr = reg->addr;
	len = reg->len;
	EXPECT_EQ(text, addr);
	nfuncs = module_functions(MOD, addr, addr + len);
	ASSERT_GT(nfuncs, 2);
	spin_unload_stop(_metadata, &self->run, &busy);
	header_module_text(&self->run, MOD, &h);
	EXPECT_EQ(addr, h.addr);
	EXPECT_EQ(len, h.len);
	EXPECT_EQ(nfuncs, h.funcs);
	EXPECT_STREQ("none", h.file);	/* not installed */
	EXPECT_EQ(want_features_32_35(), header_features_32_35(&self->run));

	ASSERT_EQ(0, count_samples(&self->run, busy, addr + len,
				   "dyntext_test_busy", "[" MOD "]", &c));
	TH_LOG("%llu samples in dyntext_test_busy, %llu elsewhere in the module",
	       c.named, c.other);
	/*
	 * 1.5 s busy at 999 Hz: how many samples that gives depends on how
	 * fast the emulator runs (90 to 330 seen; the debug kernel on a busy
	 * host gives the fewest), so no rate is asserted: at least one
	 * sample, and every sample in the module named (below).
	 */
	EXPECT_GT(c.named, 0);
	ASSERT_EQ(0, count_samples(&self->run, addr, addr + len, "[unknown]",
				   NULL, &c));
	EXPECT_EQ(0, c.named);	/* no sample in the module is left unnamed */
}

#define PEER "dyntext_peer"	/* the test module under another name */
#define KALLSYMS_READ "kmod: one read of /proc/kallsyms for "

/*
 * Two modules without a file load while perf record is stopped: the
 * side-band thread finds their four regions (core and init text) in one
 * pass and reads /proc/kallsyms once for all of them (perf record -v says
 * so), and perf.data has the functions of both.
 */
TEST_F_TIMEOUT(perf, modules_burst_one_kallsyms_read, 90)
{
	const struct rec *reg;
	struct header_text h;
	unsigned long long busy;
	int nfuncs;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	self->run.verbose = 1;
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	ASSERT_EQ(0, kill(self->run.pid, SIGSTOP));
	test_module_unload(PEER);
	ASSERT_EQ(0, test_module_load(MOD, ""));
	ASSERT_EQ(0, test_module_load(PEER, ""));
	reg = rec_wait_name(&self->s, PEER, 0);
	ASSERT_NE(NULL, reg);
	nfuncs = module_functions(PEER, reg->addr, reg->addr + reg->len);
	ASSERT_EQ(0, kill(self->run.pid, SIGCONT));
	spin_unload_stop(_metadata, &self->run, &busy);
	ASSERT_EQ(0, test_module_unload(PEER));

	EXPECT_EQ(1, perf_record_log_count(&self->run, KALLSYMS_READ))
		TH_LOG("not one read of /proc/kallsyms for the burst");
	EXPECT_EQ(1, perf_record_log_count(&self->run,
					   KALLSYMS_READ "4 module text regions"));
	header_module_text(&self->run, MOD, &h);
	EXPECT_GT(h.funcs, 2);
	header_module_text(&self->run, PEER, &h);
	EXPECT_GT(h.funcs, 2);
	EXPECT_EQ(nfuncs, h.funcs);
}

/*
 * perf record records user samples only: it does not read /proc/kallsyms
 * for a module without a file, whose region in perf.data has no functions.
 */
TEST_F_TIMEOUT(perf, module_user_samples_only, 90)
{
	struct header_text h;
	unsigned long long busy;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	self->run.verbose = 1;
	self->run.event = "cpu-clock:u";
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	ASSERT_EQ(0, test_module_load(MOD, ""));
	ASSERT_NE(NULL, rec_wait_name(&self->s, MOD, 0));
	spin_unload_stop(_metadata, &self->run, &busy);
	EXPECT_EQ(0, perf_record_log_count(&self->run, KALLSYMS_READ));
	header_module_text(&self->run, MOD, &h);
	EXPECT_EQ(0, h.funcs);
}

/* The build-id in a module's /sys/module/M/notes/.note.gnu.build-id, in hex. */
static int module_build_id(const char *mod, char *hex, size_t len)
{
	__u8 id[20];
	int n = module_note_build_id(mod, id, sizeof(id)), i;

	if (n < 0)
		return n;
	if (2 * (size_t)n + 1 > len)
		return -EIO;
	for (i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	return 0;
}

/*
 * The test module installed in /lib/modules/$(uname -r)/extra (removed
 * again by the caller), with its file at *ko: the file of
 * module src, which is another build of it unless src is MOD.
 */
static int install_module(const char *src, char *ko, size_t len)
{
	const char *dir = test_binary_dir();
	char cmd[2 * PATH_MAX + 64];
	struct utsname uts;

	if (!dir || uname(&uts))
		return -errno;
	snprintf(ko, len, "/lib/modules/%s/extra/" MOD ".ko", uts.release);
	snprintf(cmd, sizeof(cmd), "mkdir -p /lib/modules/%s/extra && cp %s/%s.ko %s",
		 uts.release, dir, src, ko);
	return system(cmd) ? -EIO : 0;
}

static void uninstall_module(void)
{
	char ko[PATH_MAX];
	struct utsname uts;

	if (uname(&uts))
		return;
	snprintf(ko, sizeof(ko), "/lib/modules/%s/extra/" MOD ".ko", uts.release);
	unlink(ko);
	strcat(ko, ".xz");
	unlink(ko);
}

/*
 * The module comes and goes while perf records, installed where perf
 * looks for module files: perf record keeps its build-id and file instead
 * of reading /proc/kallsyms (HEADER_KMOD_TEXT has 0 functions), perf.data's
 * build-id table has the build-id of /sys/module/MOD/notes for that file,
 * and perf script names the samples from the file (the file is their dso,
 * as for a module present at the start), and from the build-id cache perf
 * record filled once the file is gone.
 */
TEST_F_TIMEOUT(perf, module_installed, 90)
{
	char ko[PATH_MAX], home[] = "/tmp/dyntext-home.XXXXXX", bid[64] = "";
	char line[1024], want[PATH_MAX + 80];
	unsigned long long busy;
	struct header_text h;
	int listed = 0;
	const struct rec *reg;
	struct samples c;
	__u64 addr, len;
	FILE *f;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	ASSERT_EQ(0, install_module(MOD, ko, sizeof(ko)));
	ASSERT_NE(NULL, mkdtemp(home));
	ASSERT_EQ(0, setenv("HOME", home, 1));	/* the build-id cache */
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	ASSERT_EQ(0, test_module_load(MOD, ""));
	ASSERT_EQ(0, module_build_id(MOD, bid, sizeof(bid)));
	reg = rec_wait_name(&self->s, MOD, 0);
	ASSERT_NE(NULL, reg);
	addr = reg->addr;
	len = reg->len;
	spin_unload_stop(_metadata, &self->run, &busy);
	header_module_text(&self->run, MOD, &h);
	EXPECT_EQ(addr, h.addr);
	EXPECT_EQ(len, h.len);
	EXPECT_EQ(0, h.funcs);
	EXPECT_STREQ(bid, h.build_id);
	EXPECT_STREQ(ko, h.file);

	f = perf_output(&self->run, "buildid-list");
	ASSERT_NE(NULL, f);
	snprintf(want, sizeof(want), "%s %s\n", bid, ko);
	while (fgets(line, sizeof(line), f))
		listed += !strcmp(line, want);
	pclose(f);
	EXPECT_EQ(1, listed) TH_LOG("no line '%s %s' in perf buildid-list", bid, ko);

	/* The dso is the module's file, as for a module present at the start. */
	ASSERT_EQ(0, count_samples(&self->run, busy, addr + len,
				   "dyntext_test_busy", ko, &c));
	TH_LOG("from %s: %llu samples in dyntext_test_busy, %llu elsewhere",
	       ko, c.named, c.other);
	EXPECT_GT(c.named, 0);	/* no rate: see above */
	ASSERT_EQ(0, unlink(ko));
	ASSERT_EQ(0, count_samples(&self->run, busy, addr + len,
				   "dyntext_test_busy", ko, &c));
	TH_LOG("from the build-id cache: %llu samples in dyntext_test_busy, %llu elsewhere",
	       c.named, c.other);
	EXPECT_GT(c.named, 0);	/* no rate: see above */
}

/*
 * Once perf record's side-band thread goes on after a stop: the number of
 * its /proc/kallsyms reads for modules without a file (perf record -v),
 * waiting up to 10 s for one.
 */
static int wait_kallsyms_read(struct perf_run *r)
{
	int i, n = 0;

	for (i = 0; i < 100 && !(n = perf_record_log_count(r, KALLSYMS_READ)); i++)
		usleep(100000);
	return n;
}

/*
 * The module's file is installed compressed, and perf cannot read its
 * build-id: here a truncated .ko.xz, as a module compressed with what the
 * perf at hand was built without.  perf.data keeps the file (perf report
 * checks it) with the build-id the module's ksymbol record carried.
 */
TEST_F_TIMEOUT(perf, module_file_build_id_unreadable, 90)
{
	char cmd[3 * PATH_MAX], ko[PATH_MAX], bid[64] = "";
	char home[] = "/tmp/dyntext-home.XXXXXX";
	struct header_text h;
	struct utsname uts;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	/* Its build-id cache of its own, not the later tests'. */
	ASSERT_NE(NULL, mkdtemp(home));
	ASSERT_EQ(0, setenv("HOME", home, 1));
	ASSERT_EQ(0, uname(&uts));
	snprintf(ko, sizeof(ko), "/lib/modules/%s/extra/" MOD ".ko.xz", uts.release);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p /lib/modules/%s/extra && xz -c %s/" MOD ".ko | head -c 2048 > %s",
		 uts.release, test_binary_dir(), ko);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	ASSERT_EQ(0, test_module_load(MOD, ""));
	ASSERT_EQ(0, module_build_id(MOD, bid, sizeof(bid)));
	ASSERT_NE(NULL, rec_wait_name(&self->s, MOD, 0));
	ASSERT_EQ(0, test_module_unload(MOD));
	ASSERT_NE(NULL, rec_wait_name(&self->s, MOD,
				      PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER));
	ASSERT_EQ(0, perf_record_stop(&self->run));
	header_module_text(&self->run, MOD, &h);
	EXPECT_STREQ(ko, h.file);
	EXPECT_STREQ(bid, h.build_id);
}

/*
 * A module file perf cannot read (a truncated .ko.xz, as one compressed
 * with what this perf was built without) went into the build-id cache
 * under the loaded module's build-id, with a first session's perf.data.
 * In a second session the module runs with no file installed, and perf
 * record reads its functions from /proc/kallsyms while it is loaded: perf
 * script names its samples with them, not from the unreadable file the
 * cache has for the build-id.
 */
TEST_F_TIMEOUT(perf, module_unreadable_file_cached, 120)
{
	char cmd[3 * PATH_MAX], ko[PATH_MAX], home[] = "/tmp/dyntext-home.XXXXXX";
	unsigned long long lo, hi;
	struct samples c;
	struct utsname uts;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	ASSERT_NE(NULL, mkdtemp(home));
	ASSERT_EQ(0, setenv("HOME", home, 1));	/* the build-id cache */
	ASSERT_EQ(0, uname(&uts));
	snprintf(ko, sizeof(ko), "/lib/modules/%s/extra/" MOD ".ko.xz", uts.release);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p /lib/modules/%s/extra && xz -c %s/" MOD ".ko | head -c 2048 > %s",
		 uts.release, test_binary_dir(), ko);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	ASSERT_EQ(0, test_module_load(MOD, ""));
	ASSERT_EQ(0, write_str("/sys/module/" MOD "/parameters/spin_ms", "500", 0));
	ASSERT_EQ(0, test_module_unload(MOD));
	ASSERT_EQ(0, perf_record_stop(&self->run));
	perf_run_cleanup(&self->run);
	uninstall_module();

	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	ASSERT_EQ(0, test_module_load(MOD, ""));
	ASSERT_EQ(0, module_sym_range(MOD, "dyntext_test_busy", &lo, &hi));
	ASSERT_EQ(0, write_str("/sys/module/" MOD "/parameters/spin_ms", "1000", 0));
	ASSERT_EQ(0, test_module_unload(MOD));
	ASSERT_EQ(0, perf_record_stop(&self->run));
	ASSERT_EQ(0, count_samples(&self->run, lo, hi, "dyntext_test_busy",
				   "[" MOD "]", &c));
	TH_LOG("%llu samples named dyntext_test_busy in [%s], %llu not%s%s",
	       c.named, MOD, c.other, c.other ? ", first: " : "", c.first_other);
	EXPECT_LT(0, c.named);	/* how many: the emulator's speed */
	EXPECT_EQ(0, c.other);
}

/*
 * Two builds of the module, with their functions at different offsets
 * (dyntext_test_other.ko has 2 KiB more code before dyntext_test_busy()),
 * are installed in turn at the same path, and each is loaded, runs and is
 * unloaded while perf records: perf script names the samples of each load
 * from that load's build, in the dso of the installed file.  perf record
 * puts each build's file in the build-id cache while it is the installed
 * one; perf report gives each build-id a dso of its own.
 */
TEST_F_TIMEOUT(perf, module_two_builds_one_path, 120)
{
	char ko[PATH_MAX], home[] = "/tmp/dyntext-home.XXXXXX";
	unsigned long long text[2], lo[2], hi[2];
	struct samples c;
	int i;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	ASSERT_NE(NULL, mkdtemp(home));
	ASSERT_EQ(0, setenv("HOME", home, 1));	/* the build-id cache */
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, install_module(i ? MOD "_other" : MOD, ko, sizeof(ko)));
		ASSERT_EQ(0, test_module_load_file(ko, ""));
		text[i] = module_section_addr(MOD, ".text");
		ASSERT_EQ(0, module_sym_range(MOD, "dyntext_test_busy", &lo[i], &hi[i]));
		ASSERT_EQ(0, write_str("/sys/module/" MOD "/parameters/spin_ms", "1000", 0));
		ASSERT_EQ(0, test_module_unload(MOD));
	}
	ASSERT_EQ(0, perf_record_stop(&self->run));
	/* Each build's function is where the other's has other code. */
	ASSERT_LE(hi[0] - text[0], lo[1] - text[1]);

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, count_samples(&self->run, lo[i], hi[i],
					   "dyntext_test_busy", ko, &c));
		TH_LOG("build %d: %llu samples in dyntext_test_busy, %llu not%s%s",
		       i, c.named, c.other, c.other ? ", first: " : "",
		       c.first_other);
		EXPECT_LT(0, c.named);	/* how many: the emulator's speed */
		EXPECT_EQ(0, c.other);
	}
}

/*
 * The module, installed, is loaded twice while perf records and runs each
 * time: both loads are of one build, so of one dso, whose functions perf
 * reads from the file through one of the two loads' maps.  Functions read
 * from a module's file are at file offsets: each map must start at
 * .text's offset in the file, not only the one they were read through,
 * and every sample of either load is named dyntext_test_busy at its own
 * offset (a map that starts at offset 0 still names them, .text's file
 * offset too early: in the same function on these builds, at the wrong
 * offset).
 */
TEST_F_TIMEOUT(perf, module_same_build_loaded_twice, 120)
{
	char ko[PATH_MAX], home[] = "/tmp/dyntext-home.XXXXXX";
	unsigned long long lo[2], hi[2];
	struct samples c;
	int i;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	ASSERT_EQ(0, install_module(MOD, ko, sizeof(ko)));
	ASSERT_NE(NULL, mkdtemp(home));
	ASSERT_EQ(0, setenv("HOME", home, 1));	/* the build-id cache */
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, test_module_load_file(ko, ""));
		ASSERT_EQ(0, module_sym_range(MOD, "dyntext_test_busy", &lo[i], &hi[i]));
		ASSERT_EQ(0, write_str("/sys/module/" MOD "/parameters/spin_ms", "1000", 0));
		ASSERT_EQ(0, test_module_unload(MOD));
	}
	ASSERT_EQ(0, perf_record_stop(&self->run));

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, count_samples_at(&self->run, lo[i], hi[i],
					      "dyntext_test_busy", lo[i], ko, &c));
		TH_LOG("load %d at %llx: %llu samples at their offset, %llu not%s%s",
		       i, lo[i], c.named, c.other, c.other ? ", first: " : "",
		       c.first_other);
		EXPECT_LT(0, c.named);	/* how many: the emulator's speed */
		EXPECT_EQ(0, c.other);
	}
}

/*
 * Another build of the module is installed under its name, and the module
 * loads and unloads while perf record is stopped, so that its
 * /sys/module directory is gone when perf's side-band thread sees its
 * ksymbol record: the build-id in the record rules the installed file out
 * (perf.data has no file for the module), and perf.data keeps that
 * build-id.
 */
TEST_F_TIMEOUT(perf, module_other_build_installed, 90)
{
	char ko[PATH_MAX], bid[64] = "";
	struct header_text h;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	ASSERT_EQ(0, install_module(PEER, ko, sizeof(ko)));
	self->run.verbose = 1;
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	ASSERT_EQ(0, kill(self->run.pid, SIGSTOP));
	ASSERT_EQ(0, test_module_load(MOD, ""));
	EXPECT_EQ(0, module_build_id(MOD, bid, sizeof(bid)));
	ASSERT_EQ(0, test_module_unload(MOD));
	ASSERT_NE(NULL, rec_wait_name(&self->s, MOD,
				      PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER));
	ASSERT_EQ(0, kill(self->run.pid, SIGCONT));
	/* Without the installed file: a /proc/kallsyms read for the module. */
	EXPECT_EQ(1, wait_kallsyms_read(&self->run));
	ASSERT_EQ(0, perf_record_stop(&self->run));
	header_module_text(&self->run, MOD, &h);
	EXPECT_STREQ(bid, h.build_id);
	EXPECT_STREQ("none", h.file) TH_LOG("%s taken for the module", h.file);
}

/*
 * The module has no file under /lib/modules, but its file is in the
 * build-id cache (perf buildid-cache --add).  It loads, runs for 1.5 s and
 * unloads while perf record is stopped, so that no /proc/kallsyms read
 * sees its functions: perf report finds its file by the build-id its
 * ksymbol record carried, and names its samples by function.
 *
 * Its init spins for 300 ms first (init_spin_ms), so that the first sample
 * perf script resolves in the module is in the init text: the init text
 * maps the file's .init.text (which the loader put first in it, as
 * /sys/module says), so each of its samples is named by the init function
 * it is in (mostly dyntext_test_init_busy), at its own offset, and the
 * core text maps the file's .text whichever region's sample made perf
 * read the file, so every sample in dyntext_test_busy is named at its own
 * offset.
 */
TEST_F_TIMEOUT(perf, module_named_by_build_id, 180)
{
	char home[] = "/tmp/dyntext-home.XXXXXX", bid[64] = "";
	/* The functions of .init.text; init_module is dyntext_test_init. */
	static const char *const init_fn[] = {
		"dyntext_test_init_busy", "dyntext_test_init_work",
		"dyntext_test_init", "init_module",
	};
	char cmd[2 * PATH_MAX + 64], ko[PATH_MAX];
	unsigned long long busy, busy_end, init_sec, total, named = 0;
	unsigned long long off[4], size[4];
	__u64 addr, len, init_addr, init_len;
	struct header_text h;
	const struct rec *reg;
	struct samples c;
	int i;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	snprintf(ko, sizeof(ko), "%s/" MOD ".ko", test_binary_dir());
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, module_sym_offset(ko, ".init.text", init_fn[i],
					       &off[i], &size[i]));
	ASSERT_NE(NULL, mkdtemp(home));
	ASSERT_EQ(0, setenv("HOME", home, 1));	/* the build-id cache */
	snprintf(cmd, sizeof(cmd), "%s buildid-cache --add %s",
		 self->run.perf, ko);
	ASSERT_EQ(0, system(cmd));
	self->run.verbose = 1;
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	ASSERT_EQ(0, kill(self->run.pid, SIGSTOP));
	ASSERT_EQ(0, test_module_load(MOD, "init_spin_ms=300"));
	EXPECT_EQ(0, module_build_id(MOD, bid, sizeof(bid)));
	reg = rec_wait_name(&self->s, MOD, 0);
	ASSERT_NE(NULL, reg);
	addr = reg->addr;
	len = reg->len;
	reg = rec_wait_name(&self->s, MOD ".init", 0);
	ASSERT_NE(NULL, reg);
	init_addr = reg->addr;
	init_len = reg->len;
	init_sec = module_section_addr(MOD, ".init.text");
	EXPECT_EQ(init_addr, init_sec);
	ASSERT_EQ(0, module_sym_range(MOD, "dyntext_test_busy", &busy, &busy_end));
	ASSERT_EQ(0, write_str("/sys/module/" MOD "/parameters/spin_ms", "1500", 0));
	ASSERT_EQ(0, test_module_unload(MOD));
	ASSERT_EQ(0, kill(self->run.pid, SIGCONT));
	EXPECT_EQ(1, wait_kallsyms_read(&self->run));
	ASSERT_EQ(0, perf_record_stop(&self->run));

	header_module_text(&self->run, MOD, &h);
	EXPECT_EQ(0, h.funcs);
	EXPECT_STREQ(bid, h.build_id);
	EXPECT_STREQ("none", h.file);
	EXPECT_LE(addr, busy);		/* in the core text */
	EXPECT_GE(addr + len, busy_end);

	ASSERT_EQ(0, count_samples(&self->run, init_addr, init_addr + init_len,
				   "[unknown]", NULL, &c));
	total = c.named + c.other;
	ASSERT_LT(0, total);	/* the init spun: sampled first */
	for (i = 0; i < 4; i++) {
		unsigned long long lo = init_sec + off[i];

		ASSERT_EQ(0, count_samples_at(&self->run, lo, lo + size[i],
					      init_fn[i], lo, NULL, &c));
		TH_LOG("init text: %llu samples named %s at their offset%s%s",
		       c.named, init_fn[i], c.other ? ", first other: " : "",
		       c.first_other);
		named += c.named;
	}
	EXPECT_EQ(total, named);

	ASSERT_EQ(0, count_samples_at(&self->run, busy, busy_end,
				      "dyntext_test_busy", busy, NULL, &c));
	TH_LOG("%llu samples named dyntext_test_busy at their offset, %llu not%s%s",
	       c.named, c.other, c.other ? ", first: " : "", c.first_other);
	EXPECT_GT(c.named, 0);	/* no rate: see above */
	EXPECT_EQ(0, c.other);
}

/*
 * Put every thread of process pid but its main one on cpu, scheduled only
 * when nothing else runs there (SCHED_IDLE); how many.
 */
static int starve_other_threads(pid_t pid, int cpu)
{
	struct sched_param sp = { .sched_priority = 0 };
	char path[64];
	struct dirent *d;
	cpu_set_t set;
	int n = 0;
	DIR *dir;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		pid_t tid = atoi(d->d_name);

		if (tid <= 0 || tid == pid)
			continue;
		if (sched_setaffinity(tid, sizeof(set), &set) ||
		    sched_setscheduler(tid, SCHED_IDLE, &sp)) {
			n = -errno;
			break;
		}
		n++;
	}
	closedir(dir);
	return n;
}

/* Whether the main thread of pid waits in futex() (pthread_join(), a lock). */
static bool main_thread_in_futex(pid_t pid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return atoi(buf) == SYS_futex;
}

/*
 * Programs loaded just before perf record ends are described in perf.data
 * (HEADER_BPF_PROG_INFO): the side-band thread that fetches their
 * bpf_prog_info must have read all their PERF_RECORD_BPF_EVENT records
 * before the header is written.  Here it is far behind when perf record
 * is stopped, as on a busy machine: it runs only when the test's CPU is
 * idle, and the test loads LATE_PROGS programs, asks perf record to stop
 * (without the build-id pass, -B) and keeps its CPU busy until perf
 * record's main thread waits in futex(), for the side-band thread to end
 * (or a lock it holds).  Each program's id must be in the header once.
 */
#define LATE_PROGS 200
TEST_F_TIMEOUT(perf, late_programs_in_header, 90)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct rlimit rl = { LATE_PROGS + 256, LATE_PROGS + 256 };
	int fds[LATE_PROGS], seen[LATE_PROGS] = {};
	int i, found = 0, missing = 0, waited;
	__u32 ids[LATE_PROGS];
	struct timespec t0, t;
	char line[512];
	FILE *f;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, perf_record_start(&self->run, "-B"));
	/* perf record -a: the side-band thread, besides the main one. */
	ASSERT_LE(1, starve_other_threads(self->run.pid, sched_getcpu()));
	for (i = 0; i < LATE_PROGS; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		fds[i] = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "late_prog",
				       "GPL", insns, 2, NULL);
		ASSERT_LE(0, fds[i]);
		ASSERT_EQ(0, bpf_obj_get_info_by_fd(fds[i], &info, &len));
		ids[i] = info.id;
	}
	ASSERT_EQ(0, kill(self->run.pid, SIGINT));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (waited = 0;; waited++) {
		if (main_thread_in_futex(self->run.pid))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		ASSERT_GT(60, t.tv_sec - t0.tv_sec)
			TH_LOG("perf record's main thread never waited");
	}
	TH_LOG("perf record's main thread waits after %d checks", waited);
	ASSERT_EQ(0, perf_record_stop(&self->run));

	f = perf_output(&self->run, "report --header-only");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned int id;

		if (sscanf(line, "# bpf_prog_info %u", &id) != 1)
			continue;
		for (i = 0; i < LATE_PROGS; i++)
			if (ids[i] == id && !seen[i]++)
				found++;
	}
	pclose(f);
	for (i = 0; i < LATE_PROGS; i++) {
		if (!seen[i] && !missing++)
			TH_LOG("first missing: program %d of %d (id %u)", i + 1,
			       LATE_PROGS, ids[i]);
		close(fds[i]);
	}
	EXPECT_EQ(LATE_PROGS, found);
}

/*
 * A BPF program with two subprograms runs while perf records: the samples
 * in each of its three images carry that image's name, in a dso of that
 * name (not the kernel's, whose map covers the module area when no module
 * is loaded as perf record starts).
 */
TEST_F_TIMEOUT(perf, bpf_program_and_subprograms, 90)
{
	static const char *const fn[] = {
		"ksym_abi_main", "ksym_abi_sub_one", "ksym_abi_sub_two",
	};
	__u64 ksyms[3] = {};
	__u32 lens[3] = {};
	struct bpf_prog_info info;
	struct ksym_abi *skel;
	unsigned long long total = 0;
	int fd, i;

	ASSERT_EQ(0, perf_record_start(&self->run, NULL));
	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	fd = bpf_program__fd(skel->progs.ksym_abi_main);
	ASSERT_EQ(3, bpf_prog_funcs(fd, &info, ksyms, lens, 3));
	ASSERT_EQ(0, bpf_run_for(fd, 2));
	ASSERT_EQ(0, perf_record_stop(&self->run));

	for (i = 0; i < 3; i++) {
		char sym[KSYM_NAME_LEN], type, mod[64];
		struct samples c;

		ASSERT_EQ(0, kallsyms_find(ksyms[i], &type, sym, sizeof(sym),
					   mod, sizeof(mod)));
		ASSERT_NE(NULL, strstr(sym, fn[i]));
		/* In a dso of its own, named after the image. */
		ASSERT_EQ(0, count_samples(&self->run, ksyms[i], ksyms[i] + lens[i],
					   sym, sym, &c));
		TH_LOG("%s: %llu named samples, %llu others", sym, c.named, c.other);
		EXPECT_EQ(0, c.other);
		total += c.named;
	}
	EXPECT_GT(total, test_count(50));
	ksym_abi__destroy(skel);
}

/* A KSYMBOL record in `perf report -D` (perf_event__fprintf_ksymbol()). */
#define KSYM_FMT \
	"PERF_RECORD_KSYMBOL addr %llx len %u type %u flags %x name %511s"

/* The records of one BPF program that perf.data holds. */
struct prog_records {
	int ksym[3];		/* KSYMBOL register records of each image */
	int ksym_flagged[3];	/* of those, flagged as expected */
	int ksym_exact[3];	/* of those, of type BPF with the image's length */
	char name[3][KSYM_NAME_LEN];	/* the name of the first of those */
	int load;		/* BPF_EVENT PROG_LOAD records of the program */
	int load_flagged;	/* of those, flagged as expected */
	int replay_end;		/* KSYMBOL records that end a replay */
	int replayed;		/* other KSYMBOL records flagged as replayed */
	int replayed_bpf;	/* BPF_EVENT records flagged as replayed */
};

/*
 * Count, in `perf report -D`, the register records of the images at addr[],
 * the PROG_LOAD records of program id, the records that end a replay and
 * the other records flagged as replayed.  replay says which flags the
 * program's records must carry: PERF_RECORD_KSYMBOL_FLAGS_REPLAY and
 * PERF_BPF_EVENT_FLAGS_REPLAY if the kernel replayed them, none if perf
 * synthesized them.
 */
static int count_prog_records(struct perf_run *r, const __u64 *addr,
			      const __u32 *len, __u32 id, bool replay,
			      struct prog_records *c)
{
	const unsigned int end = PERF_RECORD_KSYMBOL_FLAGS_REPLAY |
				 PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END;
	unsigned int klen, ktype, kflags, btype, bflags, bid;
	char line[1024], kname[KSYM_NAME_LEN];
	unsigned long long kaddr;
	FILE *f = perf_output(r, "report -D");
	const char *p;
	int i;

	if (!f)
		return -errno;
	memset(c, 0, sizeof(*c));
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "PERF_RECORD_KSYMBOL addr ");
		kname[0] = 0;
		if (p && sscanf(p, KSYM_FMT, &kaddr, &klen, &ktype, &kflags,
				kname) >= 4) {
			if (ktype == PERF_RECORD_KSYMBOL_TYPE_REPLAY_MARK) {
				c->replay_end += kflags == end && !klen &&
						 !kname[0];
				continue;
			}
			c->replayed += !!(kflags & PERF_RECORD_KSYMBOL_FLAGS_REPLAY);
			for (i = 0; i < 3; i++) {
				if (kaddr != addr[i] ||
				    kflags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER)
					continue;
				if (!c->ksym[i]++)
					snprintf(c->name[i], sizeof(c->name[i]),
						 "%s", kname);
				c->ksym_flagged[i] += kflags ==
					(replay ? PERF_RECORD_KSYMBOL_FLAGS_REPLAY : 0);
				c->ksym_exact[i] += klen == len[i] &&
					ktype == PERF_RECORD_KSYMBOL_TYPE_BPF;
			}
			continue;
		}
		p = strstr(line, "PERF_RECORD_BPF_EVENT type ");
		if (p && sscanf(p, "PERF_RECORD_BPF_EVENT type %u, flags %u, id %u",
				&btype, &bflags, &bid) == 3) {
			c->replayed_bpf += !!(bflags & PERF_BPF_EVENT_FLAGS_REPLAY);
			if (btype != PERF_BPF_EVENT_PROG_LOAD || bid != id)
				continue;
			c->load++;
			c->load_flagged += bflags ==
				(replay ? PERF_BPF_EVENT_FLAGS_REPLAY : 0);
		}
	}
	return pclose(f) ? -EIO : 0;
}

/*
 * The images of program id that perf.data's HEADER_BPF_PROG_INFO lists
 * with the address and length of addr[] and len[] and a name that has the
 * function's in fn[], as a bit mask; the names, as perf derives them from
 * the bpf_prog_info, go to name[].
 */
static int header_prog_images(struct perf_run *r, __u32 id, const __u64 *addr,
			      const __u32 *len, const char *const *fn,
			      char (*name)[KSYM_NAME_LEN])
{
	char line[1024], want[64], sname[KSYM_NAME_LEN];
	unsigned long long saddr;
	unsigned int sub, slen;
	FILE *f = perf_output(r, "report --header-only");
	int in_prog = 0, found = 0;

	if (!f)
		return -errno;
	snprintf(want, sizeof(want), "# bpf_prog_info %u:\n", id);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "# bpf_prog_info ", 16)) {
			in_prog = !strcmp(line, want);
			continue;
		}
		if (in_prog &&
		    sscanf(line, "# \tsub_prog %u: %511s addr 0x%llx size %u",
			   &sub, sname, &saddr, &slen) == 4 && sub < 3 &&
		    saddr == addr[sub] && slen == len[sub] &&
		    strstr(sname, fn[sub])) {
			found |= 1 << sub;
			snprintf(name[sub], sizeof(name[sub]), "%s", sname);
		}
	}
	pclose(f);
	return found;
}

/* The records of one replay of the registry, its markers left out. */
struct replay_count {
	int ksym;		/* KSYMBOL records flagged as replayed */
	int bpf;		/* BPF_EVENT records flagged as replayed */
};

/* Replay the registry into the test's own stream and count the records. */
static int replay_count(struct rec_stream *s, struct replay_count *n)
{
	size_t i, from = s->nr;
	long ret = rec_replay(s, 0, NULL, NULL);

	if (ret < 0)
		return ret;
	memset(n, 0, sizeof(*n));
	for (i = from; i < s->nr; i++) {
		const struct rec *r = &s->recs[i];

		if (r->type == PERF_RECORD_KSYMBOL &&
		    r->ksym_type != PERF_RECORD_KSYMBOL_TYPE_REPLAY_MARK)
			n->ksym += !!(r->flags & PERF_RECORD_KSYMBOL_FLAGS_REPLAY);
		else if (r->type == PERF_RECORD_BPF_EVENT)
			n->bpf += !!(r->bpf_flags & PERF_BPF_EVENT_FLAGS_REPLAY);
	}
	return 0;
}

/*
 * A BPF program with two subprograms is loaded before perf record starts
 * and runs while it records.  perf learns about it from the kernel's
 * replay, or with --no-ksymbol-replay from its own synthesis: either way
 * perf.data holds one register record for each of its three images, with
 * the image's address and length, and one PROG_LOAD, flagged as replayed
 * or not; the replay ends with its end marker; the header holds the
 * program's bpf_prog_info; and every sample in each image carries the name
 * of the image's record.  That name is the one /proc/kallsyms lists when
 * the kernel replayed the record; perf's synthesis derives it from the
 * bpf_prog_info, like the names in the header (and names the main
 * function after the tag of its own instructions, not the program's).
 * perf.data holds exactly the records of a replay of the registry made
 * by the test itself before and after (the two must agree, or the
 * recording is made again: text of other work, a kprobe page collected
 * late, may come or go meanwhile).  With kptr2 perf records and reports
 * at kptr_restrict=2, where bpf_prog_info gives root no addresses: the
 * header is not checked then (it has none either), only the replay.
 */
static void preloaded_program(struct __test_metadata *_metadata,
			      struct perf_run *run, struct rec_stream *s,
			      bool replay, bool kptr2)
{
	static const char *const fn[] = {
		"ksym_abi_main", "ksym_abi_sub_one", "ksym_abi_sub_two",
	};
	char name[3][KSYM_NAME_LEN], hname[3][KSYM_NAME_LEN];
	__u64 ksyms[3] = {};
	__u32 lens[3] = {};
	struct replay_count before = {}, after = {};
	struct bpf_prog_info info;
	struct prog_records c;
	struct ksym_abi *skel;
	unsigned long long total = 0;
	int fd, i, tries;

	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	fd = bpf_program__fd(skel->progs.ksym_abi_main);
	ASSERT_EQ(3, bpf_prog_funcs(fd, &info, ksyms, lens, 3));
	for (i = 0; i < 3; i++) {
		char type, mod[64];

		ASSERT_EQ(0, kallsyms_find(ksyms[i], &type, name[i],
					   sizeof(name[i]), mod, sizeof(mod)));
		ASSERT_NE(NULL, strstr(name[i], fn[i]));
	}

	if (kptr2)
		ASSERT_EQ(0, sysctl_set(KPTR, 2));
	for (tries = 1; ; tries++) {
		if (replay)
			ASSERT_EQ(0, replay_count(s, &before));
		ASSERT_EQ(0, perf_record_start(run, replay ? NULL :
					       "--no-ksymbol-replay"));
		ASSERT_EQ(0, bpf_run_for(fd, 2));
		ASSERT_EQ(0, perf_record_stop(run));
		if (!replay)
			break;
		ASSERT_EQ(0, replay_count(s, &after));
		if (before.ksym == after.ksym && before.bpf == after.bpf)
			break;
		TH_LOG("registry changed while perf recorded: %d/%d, then %d/%d",
		       before.ksym, before.bpf, after.ksym, after.bpf);
		ASSERT_LT(tries, 3);
		perf_run_cleanup(run);
	}

	memset(hname, 0, sizeof(hname));
	if (!kptr2)
		EXPECT_EQ(7, header_prog_images(run, info.id, ksyms, lens, fn,
						hname));
	ASSERT_EQ(0, count_prog_records(run, ksyms, lens, info.id, replay, &c));
	for (i = 0; i < 3; i++) {
		TH_LOG("%s: %d register records, %d flagged %s, %d exact, named %s",
		       name[i], c.ksym[i], c.ksym_flagged[i],
		       replay ? "REPLAY" : "0", c.ksym_exact[i], c.name[i]);
		EXPECT_EQ(1, c.ksym[i]);
		EXPECT_EQ(1, c.ksym_flagged[i]);
		EXPECT_EQ(1, c.ksym_exact[i]);
		EXPECT_STREQ(replay ? name[i] : hname[i], c.name[i]);
	}
	EXPECT_EQ(1, c.load);
	EXPECT_EQ(1, c.load_flagged);
	TH_LOG("replayed: %d ksymbol, %d BPF (registry: %d, %d), %d end markers",
	       c.replayed, c.replayed_bpf, before.ksym, before.bpf,
	       c.replay_end);
	/* Every region of the registry, the program's among them. */
	EXPECT_EQ(before.ksym, c.replayed);
	EXPECT_EQ(before.bpf, c.replayed_bpf);
	EXPECT_EQ(replay ? 1 : 0, c.replay_end);
	if (replay)
		EXPECT_LE(4, c.replayed + c.replayed_bpf);

	for (i = 0; i < 3; i++) {
		struct samples s;

		ASSERT_EQ(0, count_samples(run, ksyms[i], ksyms[i] + lens[i],
					   c.name[i], NULL, &s));
		TH_LOG("%s: %llu named samples, %llu others", c.name[i],
		       s.named, s.other);
		EXPECT_EQ(0, s.other);
		total += s.named;
	}
	EXPECT_GT(total, test_count(50));
	ksym_abi__destroy(skel);
}

TEST_F_TIMEOUT(perf, bpf_program_loaded_before_record, 120)
{
	if (!kernel_has_ksymbol_replay())
		SKIP(return, "no PERF_EVENT_IOC_KSYMBOL_REPLAY in this kernel");
	preloaded_program(_metadata, &self->run, &self->s, true, false);
}

TEST_F_TIMEOUT(perf, bpf_program_loaded_before_record_no_replay, 120)
{
	preloaded_program(_metadata, &self->run, &self->s, false, false);
}

/*
 * At kptr_restrict=2 root's perf record -a still names a program loaded
 * before it, from the replay: the program's addresses are in the samples
 * anyway.  Without the replay perf synthesizes the records from
 * bpf_prog_info, which shows root no addresses there, and every sample in
 * the program is unnamed.
 */
TEST_F_TIMEOUT(perf, bpf_program_named_at_kptr_restrict_2, 120)
{
	preloaded_program(_metadata, &self->run, &self->s, true, true);
}

/* Lines of `perf report -D` that show PERF_RECORD_LOST(_SAMPLES). */
static int count_lost(struct perf_run *r)
{
	FILE *f = perf_output(r, "report -D");
	char line[1024];
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, "PERF_RECORD_LOST");
	pclose(f);
	return n;
}

/*
 * Side-band records lost while perf record was stopped (one page of ring
 * buffer per CPU, dozens of programs loaded and unloaded meanwhile): perf
 * record replays the registry again once it runs, so that perf.data names
 * the program that is loaded then although its live records were lost.
 */
#define REREPLAYED "ksymbol replay: replayed again"
TEST_F_TIMEOUT(perf, lost_sideband_replayed_again, 150)
{
	struct ksym_abi *skel;
	struct prog_records c;
	struct bpf_prog_info info;
	__u64 addr[3];
	__u32 len[3];
	int i;

	if (!kernel_has_ksymbol_replay())
		SKIP(return, "no PERF_EVENT_IOC_KSYMBOL_REPLAY in this kernel");
	self->run.verbose = 1;
	ASSERT_EQ(0, perf_record_start(&self->run, "--mmap-pages=1"));
	/* A kernel without the replay: no waiting for one below. */
	ASSERT_EQ(0, perf_record_log_count(&self->run, "synthesizing instead"));
	ASSERT_EQ(0, kill(self->run.pid, SIGSTOP));
	for (i = 0; i < 40; i++) {
		skel = ksym_abi__open_and_load();
		ASSERT_NE(NULL, skel);
		ksym_abi__destroy(skel);
	}
	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(3, bpf_prog_funcs(bpf_program__fd(skel->progs.ksym_abi_main),
				    &info, addr, len, 3));
	ASSERT_EQ(0, kill(self->run.pid, SIGCONT));
	/* Until perf record says (-v) that its replay after the loss is done. */
	for (i = 0; i < 3000 && !perf_record_log_count(&self->run, REREPLAYED); i++)
		usleep(10000);
	ASSERT_LT(i, 3000) TH_LOG("no replay again in 30 s");
	ASSERT_EQ(0, perf_record_stop(&self->run));
	ksym_abi__destroy(skel);

	EXPECT_LE(1, count_lost(&self->run));
	ASSERT_EQ(0, count_prog_records(&self->run, addr, len, info.id, true, &c));
	/* The replay at start and the one after the loss. */
	EXPECT_LE(2, c.replay_end);
	for (i = 0; i < 3; i++)
		EXPECT_LE(1, c.ksym_flagged[i]) TH_LOG("image %d not replayed", i);
	EXPECT_LE(1, c.load_flagged);
}

/* perf annotate of sym: lines of code, and those with samples. */
#define ANNOTATED_MAX 1024
struct annotated {
	int lines;		/* "percent : offset: instruction" lines */
	int hit;		/* of those, with a percentage above 0 */
	char first[160];	/* the first such line, for the log */
	unsigned long long off[ANNOTATED_MAX];	/* the first lines' offsets */
};

static int perf_annotate(struct perf_run *r, const char *opt,
			 const char *sym, struct annotated *a)
{
	char args[KSYM_NAME_LEN + 256], line[1024];
	unsigned long long off;
	double pct;
	FILE *f;

	snprintf(args, sizeof(args), "annotate --stdio %s -s %s", opt, sym);
	f = perf_output(r, args);
	if (!f)
		return -errno;
	memset(a, 0, sizeof(*a));
	while (fgets(line, sizeof(line), f)) {
		char insn[64];

		if (sscanf(line, " %lf : %llx: %63s", &pct, &off, insn) != 3)
			continue;
		if (a->lines < ANNOTATED_MAX)
			a->off[a->lines] = off;
		a->lines++;
		a->hit += pct > 0;
		if (pct > 0 && !a->first[0])
			snprintf(a->first, sizeof(a->first), "%.*s",
				 (int)sizeof(a->first) - 1, line);
	}
	pclose(f);
	return 0;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * Replays again perf record may have made in ms milliseconds: the n-th
 * comes at least 100 ms << (n - 1) (at most 10 s) after the one before.
 */
static int rereplays_within(double ms)
{
	double t = 0, wait = 100;
	int n = 0;

	while ((t += wait) <= ms) {
		n++;
		wait = wait * 2 > 10000 ? 10000 : wait * 2;
	}
	return n;
}

/*
 * Side-band records lost again and again (perf record stopped while ten
 * programs come and go, 20 times): perf record replays again after a
 * loss, but backs off, so that a consumer too slow for its buffers is not
 * fed ever more records.  Without a backoff every loss was followed by a
 * replay (one check every 100 ms).
 */
TEST_F_TIMEOUT(perf, lost_sideband_backs_off, 360)
{
	struct prog_records c;
	struct ksym_abi *skel;
	struct timespec t0;
	__u64 addr[3] = {};
	__u32 len[3] = {};
	int i, j, lost;
	double ms;

	if (!kernel_has_ksymbol_replay())
		SKIP(return, "no PERF_EVENT_IOC_KSYMBOL_REPLAY in this kernel");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, perf_record_start(&self->run, "--mmap-pages=1"));
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, kill(self->run.pid, SIGSTOP));
		for (j = 0; j < 10; j++) {
			skel = ksym_abi__open_and_load();
			ASSERT_NE(NULL, skel);
			ksym_abi__destroy(skel);
		}
		ASSERT_EQ(0, kill(self->run.pid, SIGCONT));
		usleep(200000);
	}
	ASSERT_EQ(0, perf_record_stop(&self->run));
	ms = ms_since(&t0);

	lost = count_lost(&self->run);
	EXPECT_LE(2, lost);
	ASSERT_EQ(0, count_prog_records(&self->run, addr, len, 0, true, &c));
	/* The replay at start, at least one again, no more than allowed. */
	EXPECT_LE(2, c.replay_end);
	EXPECT_GE(1 + rereplays_within(ms) + 1, c.replay_end)
		TH_LOG("%d replays in %.0f ms", c.replay_end, ms);
	TH_LOG("%d replays in %.0f ms (%d allowed after the first), %d losses",
	       c.replay_end, ms, rereplays_within(ms) + 1, lost);
}

/*
 * Instruction offsets objdump finds in n bytes of x86-64 code (written to
 * dir/code.bin): their number, at most max of them in off.
 */
static int objdump_offsets(const char *dir, const __u8 *code, size_t n,
			   unsigned long long *off, int max)
{
	char path[128], cmd[256], line[512];
	unsigned long long o;
	int nr = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/code.bin", dir);
	f = fopen(path, "w");
	if (!f || fwrite(code, 1, n, f) != n)
		return -EIO;
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "objdump -D -b binary -m i386:x86-64 --insn-width=16 %s", path);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %llx:\t", &o) == 1 && strchr(line, '\t')) {
			if (nr < max)
				off[nr] = o;
			nr++;
		}
	return pclose(f) ? -EIO : nr;
}

/*
 * What perf shows of a program that is gone is the program's code: with
 * no bpf_prog_info to fall back on (--no-bpf-event), the bytes perf script
 * gives for each of its samples (-F insn, read through the dso from the
 * code in perf.data) are those bpf_prog_info gave the test while the
 * program was loaded, never zeros or nothing, and perf annotate decodes
 * its main function at the instruction boundaries objdump finds in those
 * bytes.
 */
TEST_F_TIMEOUT(perf, bpf_program_gone_code_matches, 90)
{
	unsigned long long ip, obj[ANNOTATED_MAX];
	char sym[KSYM_NAME_LEN], tag[2 * BPF_TAG_SIZE + 1], line[1024];
	char first[256] = "";
	int fd, i, k, nobj, checked = 0, empty = 0, differ = 0;
	struct bpf_prog_info info;
	struct ksym_abi *skel;
	struct prog_code pc;
	struct annotated a;
	__u64 ksyms[3];
	FILE *f;

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
#ifndef __x86_64__
	SKIP(return, "objdump -m i386:x86-64 only");
#endif
	ASSERT_EQ(0, perf_record_start(&self->run, "--no-bpf-event"));
	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	fd = bpf_program__fd(skel->progs.ksym_abi_main);
	ASSERT_EQ(0, prog_code_get(fd, &pc));
	ASSERT_EQ(3, pc.nr);
	ASSERT_EQ(3, bpf_prog_funcs(fd, &info, ksyms, NULL, 3));
	tag_hex(info.tag, tag);
	snprintf(sym, sizeof(sym), "bpf_prog_%s_ksym_abi_main", tag);
	ASSERT_EQ(0, bpf_run_for(fd, test_slow_kernel() ? 6 : 2));
	ksym_abi__destroy(skel);
	ASSERT_EQ(0, kallsyms_sym_count(sym, "bpf", 0, NULL, NULL));
	ASSERT_EQ(0, perf_record_stop(&self->run));

	f = perf_output(&self->run, "script -F ip,insn");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned int b, base = 0, at;
		int used;
		bool bad;
		char *p;

		if (sscanf(line, " %llx", &ip) != 1)
			continue;
		for (i = 0; i < pc.nr; base += pc.len[i], i++)
			if (ip >= pc.addr[i] && ip < pc.addr[i] + pc.len[i])
				break;
		if (i == pc.nr)
			continue;
		checked++;
		p = strstr(line, "insn:");
		if (!p) {
			empty++;
			continue;
		}
		at = base + ip - pc.addr[i];
		bad = false;
		for (p += 5, k = 0; sscanf(p, " %2x%n", &b, &used) == 1;
		     p += used, k++)
			bad |= at + k >= base + pc.len[i] || b != pc.insns[at + k];
		if ((bad || !k) && !differ++)
			snprintf(first, sizeof(first), "%.*s",
				 (int)sizeof(first) - 1, line);
	}
	pclose(f);
	TH_LOG("%d samples in the program, %d without bytes, %d with other bytes%s%s",
	       checked, empty, differ, first[0] ? ", first: " : "", first);
	EXPECT_LT(0, checked);
	EXPECT_EQ(0, empty);
	EXPECT_EQ(0, differ);

	/* The main function's instructions, as objdump decodes them. */
	nobj = objdump_offsets(self->run.dir, pc.insns, pc.len[0], obj,
			       ANNOTATED_MAX);
	ASSERT_LT(0, nobj);
	ASSERT_EQ(0, perf_annotate(&self->run, "", sym, &a));
	EXPECT_EQ(nobj, a.lines);
	for (k = 0; k < nobj && k < a.lines && k < ANNOTATED_MAX; k++) {
		/* perf may print addresses rather than offsets. */
		ip = a.off[k] >= pc.addr[0] ? a.off[k] - pc.addr[0] : a.off[k];
		if (ip != obj[k]) {
			EXPECT_EQ(obj[k], ip) TH_LOG("instruction %d", k);
			break;
		}
	}
	free(pc.insns);
}

/*
 * A BPF program loaded, run and unloaded while perf records is gone when
 * perf annotate runs: its samples are annotated all the same, from the
 * code the kernel put in the stream (attr.ksymbol_text).  The disassembly
 * has the program's instructions, some of them with samples.  Such
 * programs one after the other (the same code, so the same name), each
 * run for as long as its load took (8 ms at least), until the test's own
 * sampler (5 kHz, beside perf's) has seen GONE_SAMPLES samples in them,
 * five programs at least, 40 s at most (hence 180 s for the test, with
 * perf annotate after it).  A fixed 8 ms a program (3 s in all) got perf
 * no sample at all on a debug kernel, whose loads take 300 ms, once in
 * five runs.
 */
#define GONE_MAX 256
#define GONE_SAMPLES 20
#define GONE_CAP_MS 40000
TEST_F_TIMEOUT(perf, bpf_program_gone_annotated, 180)
{
	char sym[KSYM_NAME_LEN], tag[2 * BPF_TAG_SIZE + 1];
	unsigned long long lo = ~0ULL, hi = 0;
	double load_ms = 0, life_ms = 0;
	struct bpf_prog_info info;
	struct ksym_abi *skel;
	struct timespec start, t0, t1;
	struct ip_sampler smp = {};
	struct annotated a;
	struct samples c;
	struct bpf_run run;
	double this_load_ms;
	long seen = 0;
	__u64 ksyms[3];
	__u32 lens[3];
	int fd, n;

	ASSERT_EQ(0, ip_sampler_open(&smp, 5000));
	ASSERT_EQ(0, perf_record_start(&self->run, "-F10000"));
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (n = 0; n < GONE_MAX && (n < 5 || seen < GONE_SAMPLES) &&
	     ms_since(&start) < GONE_CAP_MS; n++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		skel = ksym_abi__open_and_load();
		ASSERT_NE(NULL, skel);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		this_load_ms = ms_since(&t0);
		load_ms += this_load_ms;
		fd = bpf_program__fd(skel->progs.ksym_abi_main);
		ASSERT_EQ(3, bpf_prog_funcs(fd, &info, ksyms, lens, 3));
		tag_hex(info.tag, tag);
		snprintf(sym, sizeof(sym), "bpf_prog_%s_ksym_abi_main", tag);
		if (ksyms[0] < lo)
			lo = ksyms[0];
		if (ksyms[0] + lens[0] > hi)
			hi = ksyms[0] + lens[0];
		/* 100 runs a call: a call takes well under 8 ms. */
		run = (struct bpf_run){ .repeat = 100,
			.secs = this_load_ms < 8 ? 0.008 : this_load_ms / 1000 };
		ASSERT_EQ(0, bpf_run(fd, &run));
		seen += ip_sampler_count(&smp, ksyms[0], ksyms[0] + lens[0]);
		ksym_abi__destroy(skel);
		life_ms += ms_since(&t1);
	}
	ip_sampler_close(&smp);
	/* Gone before perf reads anything. */
	ASSERT_EQ(0, kallsyms_sym_count(sym, "bpf", 0, NULL, NULL));
	ASSERT_EQ(0, perf_record_stop(&self->run));
	/* Where the programs were, named after them. */
	ASSERT_EQ(0, count_samples(&self->run, lo, hi, sym, sym, &c));

	ASSERT_EQ(0, perf_annotate(&self->run, "", sym, &a));
	TH_LOG("%s: %d programs, each loaded in %.1f ms, then run and unloaded in %.1f ms (mean); "
	       "%ld samples of the test's own", sym, n, load_ms / n, life_ms / n, seen);
	TH_LOG("%llu samples; %d lines of code, %d with samples, first: %s",
	       c.named, a.lines, a.hit, a.first);
	ASSERT_LT(0, c.named);
	/* The loop alone is more than 10 instructions. */
	EXPECT_LT(10, a.lines);
	EXPECT_LT(0, a.hit);
}

/*
 * Where perf.data's section of feature @feat is ({ offset, size } in @sec):
 * the feature sections follow the data, one for each feature bit set in
 * the header (hdr[9] holds features 0 to 63), in bit order.
 */
static int perf_data_feat(int fd, const __u64 *hdr, int feat, __u64 *sec)
{
	int bit, k = 0;

	if (!((hdr[9] >> feat) & 1))
		return -ENOENT;
	for (bit = 1; bit < feat; bit++)
		k += (hdr[9] >> bit) & 1;
	if (pread(fd, sec, 2 * sizeof(*sec), hdr[5] + hdr[6] + k * 2 * sizeof(*sec)) !=
	    2 * sizeof(*sec))
		return -EIO;
	return 0;
}

/*
 * Make perf.data say it was recorded on AArch64: "aarch64" over its
 * HEADER_ARCH string (feature 6), which has room for it, and, where perf
 * writes HEADER_E_MACHINE (feature 33, perf 6.19 and later: { u32
 * e_machine, u32 e_flags }), EM_AARCH64 there, which such a perf prefers.
 */
static int perf_data_set_aarch64(const char *path)
{
	static const char arch[] = "aarch64";
	__u32 len, em[2] = { 183 /* EM_AARCH64 */, 0 };
	int fd = open(path, O_RDWR), ret = -EINVAL;
	__u64 hdr[13], sec[2];

	if (fd < 0)
		return -errno;
	if (pread(fd, hdr, sizeof(hdr), 0) != sizeof(hdr) ||
	    perf_data_feat(fd, hdr, 6, sec) ||
	    pread(fd, &len, sizeof(len), sec[0]) != sizeof(len) ||
	    len < sizeof(arch) ||
	    pwrite(fd, arch, sizeof(arch), sec[0] + sizeof(len)) != sizeof(arch))
		goto out;
	ret = 0;
	if (!perf_data_feat(fd, hdr, 33, sec) &&
	    (sec[1] != sizeof(em) ||
	     pwrite(fd, em, sizeof(em), sec[0]) != sizeof(em)))
		ret = -EINVAL;
out:
	close(fd);
	return ret;
}

/*
 * perf annotate --objdump of code that came in the stream gives objdump a
 * file that says the machine perf.data was recorded on: with perf.data's
 * arch (and, where perf writes it, e_machine) rewritten to aarch64, the
 * ELF header of the file objdump gets says AArch64 (an objdump script
 * that runs readelf first tells), where it said the machine perf runs on
 * before.  The sample's thread runs files of this machine: perf must take
 * a kernel symbol's arch from the recorded kernel, not from them.
 */
TEST_F_TIMEOUT(perf, stream_code_file_for_recorded_arch, 90)
{
	char sym[KSYM_NAME_LEN], tag[2 * BPF_TAG_SIZE + 1], script[128];
	char log[128], opt[160], line[256];
	struct bpf_prog_info info;
	struct ksym_abi *skel;
	struct annotated a;
	struct bpf_run run = { .secs = 1.0, .repeat = 100 };
	__u64 ksyms[3];
	__u32 lens[3];
	int fd, aarch64 = 0, other = 0;
	FILE *f;

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	ASSERT_EQ(0, perf_record_start(&self->run, "-F10000"));
	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	fd = bpf_program__fd(skel->progs.ksym_abi_main);
	ASSERT_EQ(3, bpf_prog_funcs(fd, &info, ksyms, lens, 3));
	tag_hex(info.tag, tag);
	snprintf(sym, sizeof(sym), "bpf_prog_%s_ksym_abi_main", tag);
	ASSERT_EQ(0, bpf_run(fd, &run));
	ksym_abi__destroy(skel);
	ASSERT_EQ(0, perf_record_stop(&self->run));
	ASSERT_EQ(0, perf_data_set_aarch64(self->run.data));

	snprintf(script, sizeof(script), "%s/objdump", self->run.dir);
	snprintf(log, sizeof(log), "%s/machines", self->run.dir);
	f = fopen(script, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "#!/bin/sh\nfor f; do :; done\n"
		"readelf -h \"$f\" | sed -n 's/^ *Machine: *//p' >> %s\n"
		"exec objdump \"$@\"\n", log);
	fclose(f);
	ASSERT_EQ(0, chmod(script, 0755));
	snprintf(opt, sizeof(opt), "--objdump=%s", script);
	ASSERT_EQ(0, perf_annotate(&self->run, opt, sym, &a));

	f = fopen(log, "r");
	ASSERT_NE(NULL, f) TH_LOG("perf annotate never ran objdump for %s", sym);
	while (fgets(line, sizeof(line), f)) {
		if (!strcmp(line, "AArch64\n"))
			aarch64++;
		else if (!other++)
			TH_LOG("objdump got a file for %.*s", (int)strcspn(line, "\n"), line);
	}
	fclose(f);
	EXPECT_LT(0, aarch64);
	EXPECT_EQ(0, other);
}

/*
 * The test module calls dyntext_test_tick() in a loop while perf records,
 * with a tracer attached to it (started by the caller) whose text is
 * [lo, hi), which stop() then detaches: the tracer's text is gone when
 * perf annotate runs, and its samples are annotated from the code the
 * kernel put in the stream (attr.ksymbol_text, live or replayed).  The
 * disassembly has more than min instructions, some of them with samples.
 * How many samples the tracer's text gets in a given time depends on the
 * machine (on a debug kernel under emulation a BPF trampoline got 1 to 3
 * in 4.5 s, and once none), so the calls go on in
 * rounds of 500 ms until the test's own sampler (5 kHz, beside perf's
 * 10 kHz) has seen TICK_SAMPLES samples there, for at most 60 s: perf then
 * expects about twice as many, and none with a chance of about e^-10.
 */
#define TICK_SAMPLES 5

static void tick_annotated(struct __test_metadata *_metadata,
			   struct perf_run *r, const char *sym, __u64 lo,
			   __u64 hi, int min, void (*stop)(void *arg),
			   void *arg)
{
	struct ip_sampler smp = {};
	struct annotated a;
	long seen = 0;
	int ms;

	ASSERT_EQ(0, ip_sampler_open(&smp, 5000));
	for (ms = 0; seen < TICK_SAMPLES && ms < 60000; ms += 500) {
		ASSERT_EQ(0, write_str("/sys/module/" MOD "/parameters/calls_ms",
				       "500", 0));
		seen += ip_sampler_count(&smp, lo, hi);
	}
	ip_sampler_close(&smp);
	TH_LOG("%s: %ld samples of the test's own in %d ms of calls", sym,
	       seen, ms);
	stop(arg);
	ASSERT_EQ(0, perf_record_stop(r));
	ASSERT_EQ(0, perf_annotate(r, "", sym, &a));
	TH_LOG("%s: %d lines of code, %d with samples, first: %s", sym,
	       a.lines, a.hit, a.first);
	EXPECT_LT(min, a.lines);
	EXPECT_LT(0, a.hit);
}

/* The region of the register record of name in s: 0 or -ENOENT. */
static int region_of(struct rec_stream *s, const char *name, __u64 *lo,
		     __u64 *hi)
{
	const struct rec *reg = rec_wait_name(s, name, 0);

	if (!reg)
		return -ENOENT;
	*lo = reg->addr;
	*hi = reg->addr + reg->len;
	return 0;
}

static void link_destroy(void *link)
{
	bpf_link__destroy(link);
}

/* A BPF trampoline: an fentry program attached while perf records. */
TEST_F_TIMEOUT(perf, bpf_trampoline_annotated, 150)
{
	char sym[KSYM_NAME_LEN];
	struct tick_fentry *skel;
	struct bpf_link *link;
	__u64 lo, hi;

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	ASSERT_EQ(0, test_module_load(MOD, ""));
	skel = tick_fentry__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, bpf_prog_trampoline_name(bpf_program__fd(skel->progs.tick_fentry),
					      sym, sizeof(sym)));
	ASSERT_EQ(0, perf_record_start(&self->run, "-F10000"));
	link = bpf_program__attach(skel->progs.tick_fentry);
	ASSERT_NE(NULL, link);
	ASSERT_EQ(1, kallsyms_sym_count(sym, "bpf", 't', NULL, NULL));
	ASSERT_EQ(0, region_of(&self->s, sym, &lo, &hi));
	tick_annotated(_metadata, &self->run, sym, lo, hi, 10, link_destroy,
		       link);
	tick_fentry__destroy(skel);
}

/* An ftrace trampoline: a function tracer instance made while perf records. */
TEST_F_TIMEOUT(perf, ftrace_trampoline_annotated, 150)
{
	__u64 lo, hi;

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	ASSERT_EQ(0, test_module_load(MOD, ""));
	rmdir(INSTANCE);
	ASSERT_EQ(0, perf_record_start(&self->run, "-F10000"));
	ASSERT_EQ(0, mkdir(INSTANCE, 0755));
	ASSERT_EQ(0, write_str(INSTANCE "/set_ftrace_filter", TICK, O_TRUNC));
	ASSERT_EQ(0, write_str(INSTANCE "/current_tracer", "function",
			       O_TRUNC));
	ASSERT_LE(1, kallsyms_sym_count("ftrace_trampoline", "__builtin__ftrace",
					't', NULL, NULL));
	ASSERT_EQ(0, region_of(&self->s, "ftrace_trampoline", &lo, &hi));
	tick_annotated(_metadata, &self->run, "ftrace_trampoline", lo, hi, 10,
		       instance_remove, NULL);
}

/*
 * A kprobe page: an optimized kprobe inside dyntext_test_tick() (past the
 * fentry call, where kprobes does not use ftrace) runs its detour buffer in
 * a kprobe_optinsn_page at every call.  The page may be older than the
 * recording (kprobes keeps its last page): its code then comes with the
 * replay; the probe's own slot as kprobes writes it.  All of the page is
 * code (INT3 where no slot is), so the listing has a line per INT3 too.
 */
TEST_F_TIMEOUT(perf, kprobe_page_annotated, 150)
{
	__u64 lo = ~0ULL, hi = 0;
	struct ksym_line *l;
	char def[128];
	int off, err = -1;
	long i, n;

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	ASSERT_EQ(0, test_module_load(MOD, ""));
	kprobe_remove(NULL);
	ASSERT_EQ(0, perf_record_start(&self->run, "-F10000"));
	/* Past the fentry call, and the ENDBR64 before it if there is one. */
	for (off = 5; off <= 9 && err; off += 4) {
		snprintf(def, sizeof(def), "p:dyntext_pt/tick %s:%s+%d\n", MOD,
			 TICK, off);
		err = write_str(TRACING "/kprobe_events", def, O_APPEND);
	}
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, write_str(TRACING "/events/dyntext_pt/enable", "1",
			       O_TRUNC));
	/* The optimizer runs a few jiffies after the probe is armed. */
	snprintf(def, sizeof(def), "%s+0x%x ", TICK, off - 4);
	ASSERT_TRUE(file_wait_line("/sys/kernel/debug/kprobes/list", def,
				   "[OPTIMIZED]", 10000))
		TH_LOG("%s not optimized in 10 s", def);
	/* Its pages (kprobes keeps the last one; usually one). */
	n = kallsyms_lines(kallsyms_dynamic_tag, &l);
	ASSERT_LE(0, n);
	for (i = 0; i < n; i++)
		if (!strcmp(l[i].name, "kprobe_optinsn_page")) {
			lo = l[i].addr < lo ? l[i].addr : lo;
			hi = l[i].addr + 4096 > hi ? l[i].addr + 4096 : hi;
		}
	free(l);
	ASSERT_LT(lo, hi);
	tick_annotated(_metadata, &self->run, "kprobe_optinsn_page", lo, hi,
		       100, kprobe_remove, NULL);
}

TEST_HARNESS_MAIN
