// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line text of ftrace and kprobes: an ftrace trampoline of a
 * function tracer instance and a kprobe instruction page.  Their
 * PERF_RECORD_KSYMBOL records (type OOL) and /proc/kallsyms lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "records.h"

#define INSTANCE TRACING "/instances/dyntext_ool"

static int write_file(const char *path, const char *s)
{
	return write_str(path, s, O_TRUNC);
}

static int append_file(const char *path, const char *s)
{
	return write_str(path, s, O_APPEND);
}

static int kallsyms_mod_lines(const char *name, const char *mod,
			      unsigned long long *addr)
{
	return kallsyms_sym_count(name, mod, 't', addr, NULL);
}

/*
 * The size of an ftrace trampoline as x86's create_trampoline() allocates
 * it for an ftrace_ops without FTRACE_OPS_FL_SAVE_REGS (a function tracer
 * instance): a copy of ftrace_caller up to ftrace_caller_end, the return
 * (RET_SIZE) and the pointer to the ftrace_ops.
 */
static long long ftrace_trampoline_size(void)
{
	unsigned long long start = 0, end = 0;
	int ret_size = KCONFIG_RETPOLINE ? 5 : 1 + KCONFIG_SLS;

	if (kallsyms_sym_count("ftrace_caller", "", 'T', &start, NULL) != 1 ||
	    kallsyms_sym_count("ftrace_caller_end", "", 'T', &end, NULL) != 1 ||
	    end <= start)
		return -1;
	return end - start + ret_size + sizeof(void *);
}

FIXTURE(ool) {
	struct rec_stream s;
};

FIXTURE_SETUP(ool)
{
	if (geteuid())
		SKIP(return, "needs root");
	if (access(TRACING "/instances", F_OK))
		SKIP(return, "no tracefs");
	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
}

FIXTURE_TEARDOWN(ool)
{
	rec_stream_close(&self->s);
	write_file(INSTANCE "/current_tracer", "nop");
	rmdir(INSTANCE);
	/* An enabled probe cannot be deleted: it would outlive the suite. */
	write_file(TRACING "/events/dyntext/ool_probe/enable", "0");
	append_file(TRACING "/kprobe_events", "-:dyntext/ool_probe\n");
}

/*
 * A function tracer in an instance with a filter gets its own ftrace_ops,
 * for which x86 allocates a trampoline: one register record on start, one
 * unregister record with the same address and length on stop, and a
 * "ftrace_trampoline [__builtin__ftrace]" line in between.  The length is
 * the trampoline's size as ftrace allocated it.
 */
TEST_F(ool, ftrace_trampoline)
{
	const char *name = "ftrace_trampoline", *mod = "__builtin__ftrace";
	const struct rec *reg, *unreg;
	unsigned long long line_addr = 0;
	char want[256];
	__u64 addr;
	__u32 len;
	int before;

	before = kallsyms_mod_lines(name, mod, NULL);
	ASSERT_GE(before, 0);
	ASSERT_EQ(0, mkdir(INSTANCE, 0755));
	ASSERT_EQ(0, write_file(INSTANCE "/set_ftrace_filter", "vfs_read"));
	ASSERT_EQ(0, write_file(INSTANCE "/current_tracer", "function"));

	reg = rec_wait_name(&self->s, name, 0);
	ASSERT_NE(NULL, reg);
	EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_OOL, reg->ksym_type);
	EXPECT_EQ(ftrace_trampoline_size(), reg->len);
	EXPECT_EQ(before + 1, kallsyms_mod_lines(name, mod, &line_addr));
	snprintf(want, sizeof(want), "%016llx t %s\t[%s]\n",
		 (unsigned long long)reg->addr, name, mod);
	EXPECT_EQ(1, kallsyms_count_line(want));
	/* The next drain moves the records: keep what is compared later. */
	addr = reg->addr;
	len = reg->len;

	ASSERT_EQ(0, write_file(INSTANCE "/current_tracer", "nop"));
	unreg = rec_wait_name(&self->s, name, PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
	ASSERT_NE(NULL, unreg);
	EXPECT_EQ(addr, unreg->addr);
	EXPECT_EQ(len, unreg->len);
	EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_OOL, unreg->ksym_type);
	EXPECT_EQ(1, rec_count_ksym(&self->s, addr, 0, NULL));
	EXPECT_EQ(1, rec_count_ksym(&self->s, addr,
				    PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER, NULL));
	EXPECT_EQ(before, kallsyms_mod_lines(name, mod, NULL));
	EXPECT_EQ(0, self->s.lost);
}

/*
 * Two text_poke listeners on every CPU while a function tracer instance
 * gets its trampoline and loses it: the new trampoline's bytes, the call
 * site patched to call it and back, the trampoline's removal.  Each
 * listener's text poke records have the size their content and that
 * listener's sample_id need.  Without the fix of the record size, the
 * second listener of a CPU got a header.size grown by the first's
 * sample_id, and stale bytes at the end of the record.
 */
TEST_F(ool, text_poke_every_listener)
{
	const char *name = "ftrace_trampoline";
	struct rec_stream a, b;

	ASSERT_EQ(0, rec_stream_open_text_poke(&a, 64));
	ASSERT_EQ(0, rec_stream_open_text_poke(&b, 64));
	ASSERT_EQ(0, mkdir(INSTANCE, 0755));
	ASSERT_EQ(0, write_file(INSTANCE "/set_ftrace_filter", "vfs_read"));
	ASSERT_EQ(0, write_file(INSTANCE "/current_tracer", "function"));
	ASSERT_NE(NULL, rec_wait_name(&a, name, 0));
	ASSERT_EQ(0, write_file(INSTANCE "/current_tracer", "nop"));
	ASSERT_NE(NULL, rec_wait_name(&a, name,
				      PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER));
	ASSERT_EQ(0, rec_stream_drain(&a));
	ASSERT_EQ(0, rec_stream_drain(&b));
	/* Both saw every poke: the same number, and some. */
	EXPECT_LT(0, a.text_pokes);
	EXPECT_EQ(a.text_pokes, b.text_pokes);
	EXPECT_EQ(0, a.malformed);
	EXPECT_EQ(0, b.malformed);
	EXPECT_EQ(0, a.lost);
	EXPECT_EQ(0, b.lost);
	TH_LOG("text poke records: %llu and %llu, malformed %llu and %llu",
	       (unsigned long long)a.text_pokes, (unsigned long long)b.text_pokes,
	       (unsigned long long)a.malformed, (unsigned long long)b.malformed);
	rec_stream_close(&a);
	rec_stream_close(&b);
}

/*
 * A kprobe past the ftrace call site of a function (the 5-byte call that
 * ftrace patches is the first instruction) is not an ftrace probe: kprobes
 * copies the probed instruction into a kprobe instruction page.  The first
 * page of the cache is kept for good, so it is usually older than the test
 * (kallsyms_dump makes it).  Its register record is checked exactly either
 * way: the live one if the probe made the page, else the one a replay of
 * the registry gives (kernels with PERF_EVENT_IOC_KSYMBOL_REPLAY; others
 * have nothing to replay it with).  Filling the page until kprobes needs a
 * new one was tried: 19.5 s on the patched kernel, past the limit on the
 * debug kernel.
 */
TEST_F(ool, kprobe_insn_page)
{
	const char *mod = "__builtin__kprobes";
	static const char * const sites[] = { KPROBE_OOL_SITE, "vfs_read+9",
					      "vfs_write+5", NULL };
	unsigned long long page = 0;
	const struct rec *reg = NULL;
	int insn_before, opt_before, i, n = 0;
	char def[128], want[256];
	size_t from;
	long ret;

	insn_before = kallsyms_mod_lines("kprobe_insn_page", mod, NULL);
	opt_before = kallsyms_mod_lines("kprobe_optinsn_page", mod, NULL);
	ASSERT_GE(insn_before, 0);
	ASSERT_GE(opt_before, 0);
	for (i = 0; sites[i]; i++) {
		snprintf(def, sizeof(def), "p:dyntext/ool_probe %s\n", sites[i]);
		if (!append_file(TRACING "/kprobe_events", def))
			break;
	}
	ASSERT_NE(NULL, sites[i]);
	ASSERT_EQ(0, write_file(TRACING "/events/dyntext/ool_probe/enable", "1"));
	ASSERT_EQ(1, kallsyms_mod_lines("kprobe_insn_page", mod, &page));
	snprintf(want, sizeof(want), "%016llx t kprobe_insn_page\t[%s]\n",
		 page, mod);
	EXPECT_EQ(1, kallsyms_count_line(want));

	if (!insn_before) {
		reg = rec_wait_name(&self->s, "kprobe_insn_page", 0);
		ASSERT_NE(NULL, reg) TH_LOG("probe on %s", sites[i]);
		EXPECT_EQ(0, reg->flags);
	} else {
		ASSERT_EQ(0, rec_stream_drain(&self->s));
		from = self->s.nr;
		ret = rec_replay(&self->s, 0, NULL, NULL);
		if (ret == -ENOTTY)
			goto out;	/* nothing replays the page */
		ASSERT_LE(0, ret) TH_LOG("replay: %s", strerror(-ret));
		for (; from < self->s.nr; from++) {
			const struct rec *r = &self->s.recs[from];

			if (r->type == PERF_RECORD_KSYMBOL && r->addr == page &&
			    r->ksym_type != PERF_RECORD_KSYMBOL_TYPE_REPLAY_MARK) {
				reg = r;
				n++;
			}
		}
		ASSERT_EQ(1, n) TH_LOG("replay records of the page at %llx", page);
		EXPECT_EQ(PERF_RECORD_KSYMBOL_FLAGS_REPLAY, reg->flags);
	}
	EXPECT_EQ(page, reg->addr);
	EXPECT_STREQ("kprobe_insn_page", reg->name);
	EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_OOL, reg->ksym_type);
	EXPECT_EQ(4096, reg->len);
out:
	ASSERT_EQ(0, write_file(TRACING "/events/dyntext/ool_probe/enable", "0"));
	ASSERT_EQ(0, append_file(TRACING "/kprobe_events", "-:dyntext/ool_probe\n"));
	/* Optimised probes, if any, do not leave extra pages behind. */
	EXPECT_LE(kallsyms_mod_lines("kprobe_optinsn_page", mod, NULL),
		  opt_before + 1);
	EXPECT_EQ(0, self->s.lost);
}

/*
 * A kprobe at a function's entry is an ftrace probe, called from the
 * trampoline of kprobes' ftrace_ops.  Enabled, disabled and enabled again
 * (the trampoline is kept and its call of the handler rewritten), the
 * probed function still runs and the probe still fires.  x86 since
 * DYNAMIC_FTRACE_WITH_JMP rewrote that call as a jmp when the handler
 * (kprobe_ftrace_handler) was at an odd address: the probed function then
 * crashed its caller.  getppid() is probed: only the child calls it.
 */
TEST_F(ool, kprobe_on_ftrace_rearmed)
{
	const char *enable = TRACING "/events/dyntext/ool_probe/enable";
	unsigned long long hits = 0, handler = 0;
	char line[256], name[64];
	int status, i;
	pid_t pid;
	FILE *f;

	kallsyms_sym_count("kprobe_ftrace_handler", "", 'T', &handler, NULL);
	TH_LOG("kprobe_ftrace_handler at %#llx", handler);
	ASSERT_EQ(0, append_file(TRACING "/kprobe_events",
				 "p:dyntext/ool_probe __x64_sys_getppid\n"));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, write_file(enable, i == 1 ? "0" : "1"));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(getppid() > 0 ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("getppid() killed its caller");
	EXPECT_EQ(0, WEXITSTATUS(status));

	ASSERT_EQ(0, write_file(enable, "0"));
	f = fopen(TRACING "/kprobe_profile", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %llu", name, &hits) == 2 &&
		    !strcmp(name, "ool_probe"))
			break;
	fclose(f);
	EXPECT_LE(1, hits);
	ASSERT_EQ(0, append_file(TRACING "/kprobe_events", "-:dyntext/ool_probe\n"));
}

/*
 * The unwinders and %pS name ftrace trampolines and kprobe pages: what
 * kernel_text_address() and kallsyms_lookup() say of an address inside
 * each (before the registry: text, but printed as bare addresses).
 */
TEST_F(ool, named_by_lookups)
{
	unsigned long long page = 0;
	const struct rec *reg;
	char name[1024], want[1024];
	int text;

	if (!kernel_has_dyntext())
		SKIP(return, "no dynamic text registry in this kernel");
	ASSERT_EQ(0, mkdir(INSTANCE, 0755));
	ASSERT_EQ(0, write_file(INSTANCE "/set_ftrace_filter", "vfs_read"));
	ASSERT_EQ(0, write_file(INSTANCE "/current_tracer", "function"));
	reg = rec_wait_name(&self->s, "ftrace_trampoline", 0);
	ASSERT_NE(NULL, reg);
	ASSERT_EQ(0, append_file(TRACING "/kprobe_events",
				 "p:dyntext/ool_probe " KPROBE_OOL_SITE "\n"));
	ASSERT_EQ(0, write_file(TRACING "/events/dyntext/ool_probe/enable", "1"));
	ASSERT_EQ(1, kallsyms_mod_lines("kprobe_insn_page", "__builtin__kprobes",
					&page));

	ASSERT_EQ(0, text_lookup_start());
	ASSERT_EQ(0, text_lookup(reg->addr + 1, &text, name, sizeof(name)));
	snprintf(want, sizeof(want), "ftrace_trampoline+0x1/%#x", reg->len);
	EXPECT_EQ(1, text);
	EXPECT_STREQ(want, name);
	ASSERT_EQ(0, text_lookup(page + 16, &text, name, sizeof(name)));
	EXPECT_EQ(1, text);
	EXPECT_STREQ("kprobe_insn_page+0x10/0x1000", name);
	EXPECT_EQ(0, text_lookup_stop());
}

TEST_HARNESS_MAIN
