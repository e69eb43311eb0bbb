// SPDX-License-Identifier: GPL-2.0
/*
 * The tests this series adds where upstream keeps them, run in the guest:
 * the perf tests "maps__fixup_overlappings", "ksymbol maps" and "ksymbol
 * text" (tools/perf/tests/maps.c), the perf shell tests record_module.sh,
 * annotate_bpf_gone.sh and record_kptr_restrict.sh (tools/perf/tests/shell)
 * and the libperf test test_mmap_read_done()
 * (tools/lib/perf/tests/test-evlist.c).  Each passes only if its output
 * says that the test ran and passed.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../kselftest_harness.h"
#include "perf_run.h"
#include "records.h"

/* Run cmd with sh; its stdout and stderr go to out; its exit status. */
static int run(const char *cmd, char *out, size_t len)
{
	char full[3 * PATH_MAX];
	size_t n = 0;
	FILE *f;
	int st;

	snprintf(full, sizeof(full), "%s 2>&1", cmd);
	f = popen(full, "r");
	if (!f)
		return -errno;
	while (n + 1 < len && fgets(out + n, len - n, f))
		n += strlen(out + n);
	out[n] = 0;
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * The patched tree: $DYNTEXT_TREE, or build/kernel beside
 * build/selftests/dyntext.
 */
static void tree_dir(char *buf, size_t len)
{
	const char *env = getenv("DYNTEXT_TREE");

	if (env)
		snprintf(buf, len, "%s", env);
	else
		snprintf(buf, len, "%s/../../kernel", test_binary_dir());
}

static char out[1 << 16];

/*
 * Each test's time limit is at least four times the longest it took on
 * the slowest kernel (the debug kernel under QEMU TCG, make flakes): the
 * harness's default of 30 s was below one shell test's time there.
 */
FIXTURE(upstream) {
	char home[64];
};

FIXTURE_SETUP(upstream)
{
	ASSERT_EQ(0, perf_home_new(self->home, sizeof(self->home)));
}

FIXTURE_TEARDOWN(upstream)
{
	perf_dir_remove(self->home);
}

/* perf test -v name: it passed. */
static void perf_test(struct __test_metadata *_metadata, const char *name)
{
	char perf[PATH_MAX], cmd[2 * PATH_MAX];

	ASSERT_EQ(0, find_perf(perf, sizeof(perf)));
	snprintf(cmd, sizeof(cmd), "%s test -v '%s'", perf, name);
	EXPECT_EQ(0, run(cmd, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, name)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, ": Ok")) TH_LOG("%s", out);
}

TEST_F_TIMEOUT(upstream, perf_test_maps_fixup_overlappings, 30)
{
	perf_test(_metadata, "maps__fixup_overlap");
}

TEST_F_TIMEOUT(upstream, perf_test_ksymbol_maps, 30)
{
	perf_test(_metadata, "ksymbol maps");
}

TEST_F_TIMEOUT(upstream, perf_test_ksymbol_text, 30)
{
	perf_test(_metadata, "ksymbol text");
}

/*
 * perf test -vv desc, a shell test, in the patched tree's tools/perf with
 * the environment env: it passed.  The line of its output that starts with
 * show goes to the log.  If skip is not NULL and the output has it, the
 * test skips.
 */
static void perf_shell_test(struct __test_metadata *_metadata,
			    const char *desc, const char *env,
			    const char *show, const char *skip)
{
	char perf[PATH_MAX], tree[PATH_MAX], cmd[5 * PATH_MAX];
	char *dir, *line;
	int st;

	ASSERT_EQ(0, find_perf(perf, sizeof(perf)));
	tree_dir(tree, sizeof(tree));
	dir = strdup(perf);
	ASSERT_NE(NULL, dir);
	*strrchr(dir, '/') = 0;
	/* perf test finds shell tests in ./tests/shell; they run perf from PATH. */
	snprintf(cmd, sizeof(cmd), "cd %s/tools/perf && PATH=%s:$PATH %s %s test -vv '%s'",
		 tree, dir, env, perf, desc);
	free(dir);
	st = run(cmd, out, sizeof(out));
	if (skip && strstr(out, skip))
		SKIP(return, "%s", skip);
	EXPECT_EQ(0, st) TH_LOG("%s", out);
	line = strstr(out, show);
	EXPECT_NE(NULL, line) TH_LOG("%s", out);
	if (line)
		TH_LOG("%.*s", (int)strcspn(line, "\n"), line);
	EXPECT_NE(NULL, strstr(out, ": Ok")) TH_LOG("%s", out);
}

TEST_F_TIMEOUT(upstream, perf_test_shell_record_module, 150)
{
	char env[2 * PATH_MAX];

	if (geteuid())
		SKIP(return, "needs root");
	snprintf(env, sizeof(env), "PERF_TEST_DYNTEXT_KO=%s/dyntext_test.ko",
		 test_binary_dir());
	perf_shell_test(_metadata, "a module loaded and unloaded mid-record",
			env, "samples in dyntext_test_busy: ", NULL);
	test_module_unload("dyntext_test");
}

TEST_F_TIMEOUT(upstream, perf_test_shell_annotate_bpf_gone, 90)
{
	if (geteuid())
		SKIP(return, "needs root");
	/* perf's own workload bpf_short loads the programs. */
	perf_shell_test(_metadata, "a short-lived BPF program that is gone",
			"", "bpf_prog_", NULL);
}

/*
 * At kptr_restrict=2, with the test module loaded and busy and perf's BPF
 * workload running: perf record -a opens no kernel address file, and perf
 * report names the core kernel's, the module's and the program's samples,
 * given the running kernel's vmlinux ($DYNTEXT_VMLINUX, else the tree's).
 * It skips (and so
 * does this test) on a kernel without the kernel image's ksymbol record.
 */
TEST_F_TIMEOUT(upstream, perf_test_shell_record_kptr_restrict, 240)
{
	char tree[PATH_MAX], vmlinux[PATH_MAX + 16], env[3 * PATH_MAX];
	const char *run = getenv("DYNTEXT_VMLINUX");

	if (geteuid())
		SKIP(return, "needs root");
	tree_dir(tree, sizeof(tree));
	/*
	 * perf report takes vmlinux only if its build-id is the running
	 * kernel's: the debug kernel's is not the tree's, where perf is.
	 */
	if (run)
		snprintf(vmlinux, sizeof(vmlinux), "%s", run);
	else
		snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux", tree);
	snprintf(env, sizeof(env),
		 "PERF_TEST_VMLINUX=%s PERF_TEST_DYNTEXT_KO=%s/dyntext_test.ko",
		 vmlinux, test_binary_dir());
	perf_shell_test(_metadata, "module and BPF samples named at kptr_restrict=2",
			env, "samples in sys_getppid: ",
			"Skip: the kernel does not describe its image");
	test_module_unload("dyntext_test");
}

/*
 * The libperf tests (built as tools/lib/perf/tests-static): the others need
 * hardware counters or tracefs that this guest may lack, so only this one's
 * result decides.
 */
TEST_F_TIMEOUT(upstream, libperf_test_mmap_read_done, 30)
{
	char tree[PATH_MAX], cmd[2 * PATH_MAX];

	tree_dir(tree, sizeof(tree));
	snprintf(cmd, sizeof(cmd), "cd %s/tools/lib/perf && ./tests-static -v", tree);
	run(cmd, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "second pass: 1 COMM record(s), libperf-second"))
		TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "first pass: not one COMM record")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "second pass: the record written")) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
