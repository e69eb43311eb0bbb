// SPDX-License-Identifier: GPL-2.0
/*
 * Old and new perf on old and new kernels: `perf record -a` and `perf
 * report` with the perf of the patched tree, the perf of the stock tree of
 * the same base ($STOCK_PERF, make stock-perf) and the distribution's perf
 * (/usr/bin/perf, Debian's linux-perf 6.1), on the kernel this runs on
 * (make check runs it on the patched kernel and on the stock one).
 *
 * While perf records, (1) a module loaded before the session runs its own
 * code, (2) a second module is loaded, runs and is unloaded, and loaded
 * and unloaded again at once, (3) a BPF program runs.  Every perf on every
 * kernel must record and report without an error and name (1) and (3);
 * the perf of the patched tree on the patched kernel also names (2) by
 * function in its [module].  A module present at the start and reloaded
 * during the session is named by function in every cell: in perf.data, in
 * pipe mode and in perf top.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "records.h"
#include "perf_run.h"
#include "bpf_run.h"
#include "ksym_abi.skel.h"

#define EARLY	"dyntext_peer"	/* loaded before perf record starts */
#define LATE	"dyntext_test"	/* loaded and unloaded while it records */
#define BUSY	"dyntext_test_busy"

FIXTURE(compat) {
	struct perf_run run;
	bool patched_kernel;
	char home[64];
};

/* Which perf a test runs. */
enum which_perf {
	PATCHED_PERF,		/* the patched tree's (find_perf()) */
	STOCK_PERF,		/* the stock tree's of the same base */
	DISTRO_PERF,		/* /usr/bin/perf, Debian's */
};

/* The path of perf @which in buf: 0, or -ENOENT (unset $STOCK_PERF). */
static int which_perf(enum which_perf which, char *buf, size_t len)
{
	const char *env = getenv("STOCK_PERF");

	switch (which) {
	case PATCHED_PERF:
		return find_perf(buf, len);
	case STOCK_PERF:
		if (!env || !*env)
			return -ENOENT;
		snprintf(buf, len, "%s", env);
		return 0;
	default:
		snprintf(buf, len, "/usr/bin/perf");
		return 0;
	}
}

FIXTURE_VARIANT(compat) {
	enum which_perf perf;
};

FIXTURE_VARIANT_ADD(compat, patched_perf) {
	.perf = PATCHED_PERF,
};

FIXTURE_VARIANT_ADD(compat, stock_perf) {
	.perf = STOCK_PERF,
};

FIXTURE_VARIANT_ADD(compat, distro_perf) {
	.perf = DISTRO_PERF,
};

FIXTURE_SETUP(compat)
{
	memset(&self->run, 0, sizeof(self->run));
	self->home[0] = 0;
	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, perf_home_new(self->home, sizeof(self->home)));
	ASSERT_EQ(0, which_perf(variant->perf, self->run.perf,
				sizeof(self->run.perf)))
		TH_LOG("no STOCK_PERF in the environment (make stock-perf)");
	ASSERT_EQ(0, access(self->run.perf, X_OK))
		TH_LOG("%s: %s (apt-get install linux-perf)", self->run.perf,
		       strerror(errno));
	/* The registry's own function: the kernel has the series. */
	self->patched_kernel = kallsyms_sym_count("dyntext_add", "", 0, NULL,
						  NULL) > 0;
	test_module_unload(EARLY);
	test_module_unload(LATE);
	ASSERT_EQ(0, test_module_load(EARLY, ""));
}

FIXTURE_TEARDOWN(compat)
{
	perf_run_cleanup(&self->run);
	perf_dir_remove(self->home);
	test_module_unload(LATE);
	test_module_unload(EARLY);
}

/* perf args on the recorded data: its exit status, error lines in *errors. */
static int perf_status(struct perf_run *r, const char *args, int *errors)
{
	char cmd[PATH_MAX + 512], line[1024], in[160];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s %s %s 2>&1 >/dev/null", r->perf, args,
		 perf_input(r, in, sizeof(in)));
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	*errors = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "failed to process") || strstr(line, "Error") ||
		    strstr(line, "rror:")) {
			(*errors)++;
			fprintf(stderr, "# %s", line);
		}
	}
	return pclose(f);
}

/* Keep the CPU in module mod's busy function for ms milliseconds. */
static int module_spin(const char *mod, const char *ms)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/spin_ms", mod);
	return write_str(path, ms, 0);
}

/*
 * The patched perf's perf.data is read by the stock tree's perf, and the
 * stock perf's by the patched perf: `report` and `report --header-only`
 * exit 0 without an error line (a newer feature or attr bit is skipped,
 * as perf skips what it does not know).
 */
static void read_by_the_other(struct __test_metadata *_metadata,
			      struct perf_run *run, enum which_perf which)
{
	static const char * const args[] = {
		"report --stdio", "report --stdio --header-only",
	};
	char own[PATH_MAX];
	int i, errors;

	if (which == DISTRO_PERF)
		return;		/* Debian's perf 6.1 reads no 6.12+ perf.data */
	memcpy(own, run->perf, sizeof(own));
	ASSERT_EQ(0, which_perf(which == PATCHED_PERF ? STOCK_PERF :
				PATCHED_PERF, run->perf, sizeof(run->perf)))
		TH_LOG("no STOCK_PERF in the environment (make stock-perf)");
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, perf_status(run, args[i], &errors))
			TH_LOG("%s %s", run->perf, args[i]);
		EXPECT_EQ(0, errors)
			TH_LOG("%s %s", run->perf, args[i]);
	}
	memcpy(run->perf, own, sizeof(own));
}

TEST_F_TIMEOUT(compat, record_and_report, 180)
{
	unsigned long long early_lo, early_hi, late_lo, late_hi;
	char bpf_name[KSYM_NAME_LEN], type, mod[64];
	struct bpf_prog_info info;
	struct ksym_abi *skel;
	struct samples c;
	__u64 ksym;
	__u32 len;
	int fd, errors, status;

	ASSERT_EQ(0, module_sym_range(EARLY, BUSY, &early_lo, &early_hi));
	ASSERT_EQ(0, perf_record_start(&self->run, NULL));

	/*
	 * (3) is loaded now, runs at the end.  Samples are counted by
	 * address: loaded after (2) went, (3) could take (2)'s text, and
	 * (2)'s samples would count as (3)'s.  Seen on the debug kernel:
	 * the BPF pack allocated after (2) went began where (2)'s text had
	 * been, and (2)'s samples, unnamed by /usr/bin/perf, fell in (3).
	 */
	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	fd = bpf_program__fd(skel->progs.ksym_abi_main);
	ASSERT_EQ(3, bpf_prog_funcs(fd, &info, &ksym, &len, 1));
	ASSERT_EQ(0, kallsyms_find(ksym, &type, bpf_name, sizeof(bpf_name),
				   mod, sizeof(mod)));

	/* (2): comes, runs, goes; then comes and goes at once. */
	ASSERT_EQ(0, test_module_load(LATE, ""));
	ASSERT_EQ(0, module_sym_range(LATE, BUSY, &late_lo, &late_hi));
	ASSERT_EQ(0, module_spin(LATE, "1000"));
	ASSERT_EQ(0, test_module_unload(LATE));
	ASSERT_EQ(0, test_module_load(LATE, ""));
	ASSERT_EQ(0, test_module_unload(LATE));

	/* (1), after (2) went: its records must not disturb (1). */
	ASSERT_EQ(0, module_spin(EARLY, "1000"));

	/* (3) */
	ASSERT_EQ(0, bpf_run_for(fd, 2));
	ASSERT_EQ(0, perf_record_stop(&self->run));
	ksym_abi__destroy(skel);

	status = perf_status(&self->run, "report --stdio", &errors);
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, errors);
	status = perf_status(&self->run, "script", &errors);
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, errors);

	ASSERT_EQ(0, count_samples(&self->run, early_lo, early_hi, BUSY,
				   "[" EARLY "]", &c));
	TH_LOG("(1) %s in [%s]: %llu samples named, %llu not", BUSY, EARLY,
	       c.named, c.other);
	EXPECT_LT(0, c.named);	/* how many: the emulator's speed */
	EXPECT_EQ(0, c.other);

	ASSERT_EQ(0, count_samples(&self->run, ksym, ksym + len, bpf_name,
				   NULL, &c));
	TH_LOG("(3) %s: %llu samples named, %llu not", bpf_name, c.named,
	       c.other);
	/* Most of the time goes to bpf_prog_test_run()'s loop, not the program. */
	EXPECT_LT(0, c.named);
	EXPECT_EQ(0, c.other);

	ASSERT_EQ(0, count_samples(&self->run, late_lo, late_hi, BUSY,
				   "[" LATE "]", &c));
	TH_LOG("(2) %s in [%s]: %llu samples named, %llu not", BUSY, LATE,
	       c.named, c.other);
	if (self->patched_kernel && variant->perf == PATCHED_PERF) {
		EXPECT_LT(0, c.named);	/* how many: the emulator's speed */
		EXPECT_EQ(0, c.other);
	}
	read_by_the_other(_metadata, &self->run, variant->perf);
}

/*
 * Unload the module present at the start, load it again where it was.
 * Another module loaded first keeps the allocator's block in use: were
 * EARLY alone in it, the block could go back to vmalloc with EARLY and
 * EARLY come back elsewhere (7.3's execmem ROX cache frees a block left
 * empty; seen 4 MiB away when this suite ran first in a fresh guest).
 * With the block in use, EARLY's text returns to the lowest free area
 * that fits it, its own.  LATE stays until the fixture's teardown.
 */
static void reload_early(struct __test_metadata *_metadata)
{
	unsigned long long lo, hi, lo2, hi2;

	ASSERT_EQ(0, module_sym_range(EARLY, BUSY, &lo, &hi));
	ASSERT_EQ(0, test_module_load(LATE, ""));
	ASSERT_EQ(0, test_module_unload(EARLY));
	ASSERT_EQ(0, test_module_load(EARLY, ""));
	ASSERT_EQ(0, module_sym_range(EARLY, BUSY, &lo2, &hi2));
	ASSERT_EQ(lo, lo2);
}

static void record_reloaded(struct __test_metadata *_metadata,
			    struct perf_run *run)
{
	unsigned long long lo, hi;
	struct samples c;
	int errors;

	ASSERT_EQ(0, perf_record_start(run, NULL));
	reload_early(_metadata);
	ASSERT_EQ(0, module_spin(EARLY, "1000"));
	ASSERT_EQ(0, module_sym_range(EARLY, BUSY, &lo, &hi));
	ASSERT_EQ(0, perf_record_stop(run));

	EXPECT_EQ(0, perf_status(run, "report --stdio", &errors));
	EXPECT_EQ(0, errors);
	ASSERT_EQ(0, count_samples(run, lo, hi, BUSY, "[" EARLY "]", &c));
	TH_LOG("%s in [%s], reloaded: %llu samples named, %llu not%s%s", BUSY,
	       EARLY, c.named, c.other, c.other ? ", first: " : "",
	       c.first_other);
	EXPECT_LT(0, c.named);	/* how many: the emulator's speed */
	EXPECT_EQ(0, c.other);
}

/*
 * The module present at the start is unloaded and loaded again (at the
 * same address) while perf records, then runs: every perf on every kernel
 * names it by function in its [module].  Stock kernels send no record, so
 * the map from /proc/modules stays; Debian's perf 6.1 given module ksymbol
 * records it did not ask for would replace that map by a one-symbol map
 * named after the module.
 */
TEST_F_TIMEOUT(compat, module_reloaded, 180)
{
	record_reloaded(_metadata, &self->run);
}

/*
 * The same in pipe mode (perf record -o - | perf report -i -), where
 * perf.data's features, the module functions perf record keeps included,
 * are written before the session: the patched perf must name the reloaded
 * module's functions as stock perf does, from the module's dso of the start.
 */
TEST_F_TIMEOUT(compat, module_reloaded_pipe, 180)
{
	self->run.pipe = true;
	record_reloaded(_metadata, &self->run);
}

/*
 * perf top shows no sample of an idle function (builtin-top.c keeps only
 * samples whose symbol is not idle), so on a quiet guest its first kernel
 * entry can wait for work nobody does: make some, about 200 ms of
 * syscalls a second, until perf top shows a kernel entry or @ms pass.
 */
static bool top_wait_kernel_entry(const char *out, int ms)
{
	struct timespec t0, t;
	long spent;

	for (; ms > 0; ms -= 1000) {
		if (file_wait_line(out, "[k] ", NULL, 800))
			return true;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			syscall(SYS_getppid);
			clock_gettime(CLOCK_MONOTONIC, &t);
			spent = (t.tv_sec - t0.tv_sec) * 1000 +
				(t.tv_nsec - t0.tv_nsec) / 1000000;
		} while (spent < 200);
	}
	return file_wait_line(out, "[k] ", NULL, 0);
}

/*
 * perf top (--stdio, whose tables go to a file) while the module present
 * at the start is unloaded, loaded again at the same address and runs:
 * its entries in [module] name the busy function, never an address, with
 * every perf on every kernel.  perf top keeps no perf.data features: the
 * patched perf must name the module as stock perf does.
 */
TEST_F_TIMEOUT(compat, module_reloaded_top, 180)
{
	char out[sizeof(self->run.dir) + 8], line[1024];
	int in[2], named = 0, other = 0, fd;
	FILE *f;

	snprintf(self->run.dir, sizeof(self->run.dir), "/tmp/dyntext-top.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->run.dir));
	snprintf(out, sizeof(out), "%s/out", self->run.dir);
	/* perf top's input: a pipe that stays open and silent. */
	ASSERT_EQ(0, pipe(in));
	self->run.pid = fork();
	ASSERT_LE(0, self->run.pid);
	if (!self->run.pid) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(in[1]);
		/* Not a terminal: lines as long and tables as tall as needed. */
		setenv("COLUMNS", "400", 1);
		setenv("LINES", "200", 1);
		execl(self->run.perf, "perf", "top", "--stdio", "-a", "-e",
		      "cpu-clock", "-F", "999", "-d", "1", "--sort", "dso,sym",
		      "-E", "200", NULL);
		_exit(127);
	}
	close(in[0]);
	/* A kernel entry: perf top has read the kernel's and modules' symbols. */
	ASSERT_TRUE(top_wait_kernel_entry(out, 90000))
		TH_LOG("perf top printed no kernel entry in 90 s");
	reload_early(_metadata);
	ASSERT_EQ(0, module_spin(EARLY, "1000"));
	/* Two tables after the run. */
	sleep(3);
	kill(self->run.pid, SIGINT);
	waitpid(self->run.pid, NULL, 0);
	self->run.pid = 0;
	close(in[1]);

	f = fopen(out, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[" EARLY "]"))
			continue;
		if (strstr(line, BUSY))
			named++;
		else if (strstr(line, "[k] 0x") && !other++)
			fprintf(stderr, "# first unnamed: %s", line);
	}
	fclose(f);
	TH_LOG("entries of [%s]: %d name %s, %d an address", EARLY, named,
	       BUSY, other);
	EXPECT_LT(0, named);
	EXPECT_EQ(0, other);
}

/* Run perf (argv, NULL-terminated) in dir as nobody: its exit status. */
static int perf_as_nobody(const char *dir, char *const argv[])
{
	char log[128];
	int status, fd;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/log", dir);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || drop_to_nobody() || chdir(dir) ||
		    setenv("HOME", dir, 1))
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Lines of dir/log that contain s (all of them to stderr if show). */
static int log_count(const char *dir, const char *s, bool show)
{
	char path[128], line[1024];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/log", dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		n += !!strstr(line, s);
		if (show)
			fprintf(stderr, "# %s", line);
	}
	fclose(f);
	return n;
}

/*
 * Copy the perf at src to dir/perf, mode 0755, and name the copy in src.
 * The checkout may sit in a directory only its owner can enter (a mktemp
 * -d under /var/tmp is 0700), where nobody cannot run the perf built in
 * it; a test about perf must not fail on where the tree is.
 */
static int perf_copy_to(char *src, size_t len, const char *dir)
{
	char cmd[2 * PATH_MAX + 64];

	/* The same way perf_dir_remove() removes the directory again. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/perf' && chmod 0755 '%s/perf'",
		 src, dir, dir);
	if (system(cmd))
		return -EIO;
	snprintf(src, len, "%s/perf", dir);
	return 0;
}

/*
 * perf record as an unprivileged user (nobody) on its own command, with
 * the default event and with an explicit one, at perf_event_paranoid 2
 * (perf falls back to user space samples) and 1 (kernel samples too):
 * every perf on every kernel writes its file and exits 0, as stock 6.12's
 * perf and Debian's do on stock kernels.
 */
FIXTURE(unpriv) {
	char perf[PATH_MAX];
	char dir[64];
	int paranoid;
};

FIXTURE_VARIANT(unpriv) {
	enum which_perf perf;
	int paranoid;
};

FIXTURE_VARIANT_ADD(unpriv, patched_perf_paranoid_2) {
	.perf = PATCHED_PERF, .paranoid = 2,
};

FIXTURE_VARIANT_ADD(unpriv, patched_perf_paranoid_1) {
	.perf = PATCHED_PERF, .paranoid = 1,
};

FIXTURE_VARIANT_ADD(unpriv, stock_perf_paranoid_2) {
	.perf = STOCK_PERF, .paranoid = 2,
};

FIXTURE_VARIANT_ADD(unpriv, stock_perf_paranoid_1) {
	.perf = STOCK_PERF, .paranoid = 1,
};

FIXTURE_VARIANT_ADD(unpriv, distro_perf_paranoid_2) {
	.perf = DISTRO_PERF, .paranoid = 2,
};

FIXTURE_VARIANT_ADD(unpriv, distro_perf_paranoid_1) {
	.perf = DISTRO_PERF, .paranoid = 1,
};

FIXTURE_SETUP(unpriv)
{
	self->dir[0] = 0;
	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, which_perf(variant->perf, self->perf, sizeof(self->perf)))
		TH_LOG("no STOCK_PERF in the environment (make stock-perf)");
	ASSERT_EQ(0, access(self->perf, X_OK));
	self->paranoid = sysctl_get(PARANOID);
	ASSERT_NE(-1000, self->paranoid);
	snprintf(self->dir, sizeof(self->dir), "/tmp/dyntext-unpriv.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chown(self->dir, NOBODY, NOBODY));
	/* everyone may run /usr/bin/perf where it is */
	if (variant->perf != DISTRO_PERF)
		ASSERT_EQ(0, perf_copy_to(self->perf, sizeof(self->perf),
					  self->dir));
	ASSERT_EQ(0, sysctl_set(PARANOID, variant->paranoid));
}

FIXTURE_TEARDOWN(unpriv)
{
	sysctl_set(PARANOID, self->paranoid);
	perf_dir_remove(self->dir);
}

/* perf record [-e event] -- true as nobody in dir: exit 0, a perf.data. */
static void record_unpriv(struct __test_metadata *_metadata,
			  const char *perf, const char *dir, const char *event)
{
	char *argv[10] = { (char *)perf, "record", "-o", "perf.data" };
	char data[128];
	struct stat st;
	int status, n = 4;

	if (event) {
		argv[n++] = "-e";
		argv[n++] = (char *)event;
	}
	argv[n++] = "--";
	argv[n++] = "true";
	status = perf_as_nobody(dir, argv);
	if (status)
		log_count(dir, "", true);
	ASSERT_EQ(0, status);
	snprintf(data, sizeof(data), "%s/perf.data", dir);
	ASSERT_EQ(0, stat(data, &st));
	EXPECT_LT(0, st.st_size);
}

TEST_F(unpriv, default_event)
{
	record_unpriv(_metadata, self->perf, self->dir, NULL);
}

TEST_F(unpriv, cpu_clock)
{
	record_unpriv(_metadata, self->perf, self->dir, "cpu-clock");
}

/*
 * An EINVAL that another attribute causes (a clock perf events do not
 * support, CLOCK_MONOTONIC_COARSE) does not switch off the ksymbol bits of
 * the patched perf: it probes each bit on its own before it blames it.  On
 * a kernel without them it does switch them off, as it must.  The record
 * fails either way ("wrong clockid").
 */
TEST(feature_probe_own_bits)
{
	char dir[] = "/tmp/dyntext-probe.XXXXXX", perf[PATH_MAX];
	char cmd[PATH_MAX + 256];
	int has = kernel_has_module_records(), status, clock, module, text;

	ASSERT_EQ(0, find_perf(perf, sizeof(perf)));
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "%s record -vv -e cpu-clock -k 6 -o %s/perf.data -- true > %s/log 2>&1",
		 perf, dir, dir);
	status = system(cmd);
	clock = log_count(dir, "wrong clockid", false);
	module = log_count(dir, "switching off module ksymbol records", false);
	text = log_count(dir, "switching off the code of new kernel text",
			 false);
	if (!status || clock != 1 || module != !has || text != !has)
		log_count(dir, "", true);
	EXPECT_NE(0, status);
	EXPECT_EQ(1, clock);
	EXPECT_EQ(!has, module);
	EXPECT_EQ(!has, text);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ(0, system(cmd));
}

/* Lines that perf args (stderr to the log) prints on stdout with str in them. */
static int perf_lines(const char *perf, const char *args, const char *str)
{
	char cmd[PATH_MAX + 512], line[1024];
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s %s 2>/dev/null", perf, args);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, str);
	return pclose(f) ? -EIO : n;
}

FIXTURE(defer) {
	char dir[64];
	char home[64];
};

FIXTURE_SETUP(defer)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/dyntext-defer.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, perf_home_new(self->home, sizeof(self->home)));
}

FIXTURE_TEARDOWN(defer)
{
	perf_dir_remove(self->dir);
	perf_dir_remove(self->home);
}

/*
 * Upstream's deferred user callchains, as the stock tree's perf asks for
 * them (perf record --call-graph fp,defer: attr.defer_callchain and
 * defer_output, bits 38 and 39): on a base that has them, the patched
 * kernel gives what stock gives, PERF_RECORD_CALLCHAIN_DEFERRED records
 * that the stock and the patched perf report without an error.  On an
 * older base both kernels refuse the bits (-EINVAL), so that perf falls
 * back the same way on either.
 */
TEST_F_TIMEOUT(defer, stock_perf_fp_defer, 180)
{
	char perf[PATH_MAX], own[PATH_MAX], cmd[2 * PATH_MAX + 512];
	char args[160];
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 100000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN,
		.disabled = 1,
	};
	int fd, deferred, errors;
	struct perf_run run = {};

	attr_set_flag(&attr, 38);
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	if (!HAVE_DEFER_CALLCHAIN) {
		EXPECT_EQ(-1, fd);
		EXPECT_EQ(EINVAL, errno);
		TH_LOG("no deferred callchains on this base: bit 38 refused");
		return;
	}
	ASSERT_LE(0, fd) TH_LOG("defer_callchain: %s", strerror(errno));
	close(fd);

	ASSERT_EQ(0, which_perf(STOCK_PERF, perf, sizeof(perf)))
		TH_LOG("no STOCK_PERF in the environment (make stock-perf)");
	ASSERT_EQ(0, find_perf(own, sizeof(own)));
	snprintf(cmd, sizeof(cmd),
		 "%s record -o %s/perf.data -e cpu-clock -F 999 --call-graph fp,defer -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' > %s/log 2>&1",
		 perf, self->dir, self->dir);
	ASSERT_EQ(0, system(cmd)) log_count(self->dir, "", true);

	snprintf(args, sizeof(args), "report -D -i %s/perf.data", self->dir);
	deferred = perf_lines(perf, args, "PERF_RECORD_CALLCHAIN_DEFERRED");
	TH_LOG("%d deferred callchain records", deferred);
	EXPECT_LT(0, deferred);

	/* Both perfs report it without an error. */
	snprintf(run.data, sizeof(run.data), "%s/perf.data", self->dir);
	memcpy(run.perf, perf, sizeof(run.perf));
	EXPECT_EQ(0, perf_status(&run, "report --stdio", &errors));
	EXPECT_EQ(0, errors);
	memcpy(run.perf, own, sizeof(run.perf));
	EXPECT_EQ(0, perf_status(&run, "report --stdio", &errors));
	EXPECT_EQ(0, errors);
}

TEST_HARNESS_MAIN
