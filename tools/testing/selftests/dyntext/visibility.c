// SPDX-License-Identifier: GPL-2.0
/*
 * Who may see dynamic text: PERF_RECORD_KSYMBOL records go to an event only
 * if its opener may see kernel addresses in /proc/kallsyms (kptr_restrict,
 * perf_event_paranoid, CAP_SYSLOG), and text that /proc/kallsyms does not
 * list is announced to nobody.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "records.h"
#include "ksym_abi.skel.h"

#define UNPRIV_BPF "/proc/sys/kernel/unprivileged_bpf_disabled"

/* The address of the first line of /proc/kallsyms as this process sees it. */
/* The address of _stext in /proc/kallsyms as this process sees it. */
static unsigned long long first_kallsyms_addr(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long a = ~0ULL, v;
	char line[1024], name[512], t;

	if (!f)
		return a;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %511s", &v, &t, name) == 3 &&
		    !strcmp(name, "_stext")) {
			a = v;
			break;
		}
	fclose(f);
	return a;
}

/* What an unprivileged system-wide listener saw while root loaded a program. */
struct seen {
	int open_err;
	unsigned long long kallsyms_addr;
	size_t ksym_register;		/* at the program's addresses */
	size_t ksym_any;		/* any KSYMBOL record */
	size_t bpf_load;		/* PROG_LOAD for the program's id */
};

static int run_unprivileged_listener(struct seen *seen)
{
	int to_child[2], to_parent[2];
	struct ksym_abi *skel;
	struct bpf_prog_info info;
	__u64 ksyms[4];		/* three addresses and the program id */
	pid_t pid;
	char c = 0;
	int status, nr;

	if (pipe(to_child) || pipe(to_parent))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		struct rec_stream s;
		struct seen me = {};
		size_t i, j;

		if (drop_to_nobody())
			_exit(2);
		me.kallsyms_addr = first_kallsyms_addr();
		me.open_err = rec_stream_open(&s, 16);
		if (write(to_parent[1], &me, sizeof(me)) != sizeof(me))
			_exit(3);
		/* Wait for the parent's load and unload, then count. */
		if (read(to_child[0], ksyms, sizeof(ksyms)) != sizeof(ksyms))
			_exit(4);
		if (!me.open_err && !rec_stream_drain(&s)) {
			for (i = 0; i < s.nr; i++) {
				if (s.recs[i].type == PERF_RECORD_BPF_EVENT &&
				    s.recs[i].bpf_type == PERF_BPF_EVENT_PROG_LOAD &&
				    s.recs[i].id == ksyms[3])
					me.bpf_load++;
				if (s.recs[i].type != PERF_RECORD_KSYMBOL)
					continue;
				me.ksym_any++;
				for (j = 0; j < 3; j++)
					me.ksym_register += !s.recs[i].flags &&
						s.recs[i].addr == ksyms[j];
			}
		}
		if (write(to_parent[1], &me, sizeof(me)) != sizeof(me))
			_exit(5);
		_exit(0);
	}
	if (read(to_parent[0], seen, sizeof(*seen)) != sizeof(*seen))
		return -EIO;
	skel = ksym_abi__open_and_load();
	if (!skel)
		return -ENOENT;
	nr = bpf_prog_funcs(bpf_program__fd(skel->progs.ksym_abi_main), &info,
			    ksyms, NULL, 3);
	if (nr != 3)
		return nr < 0 ? nr : -E2BIG;
	ksyms[3] = info.id;
	ksym_abi__destroy(skel);
	if (write(to_child[1], ksyms, sizeof(ksyms)) != sizeof(ksyms))
		return -EIO;
	if (read(to_parent[0], seen, sizeof(*seen)) != sizeof(*seen))
		return -EIO;
	waitpid(pid, &status, 0);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
	(void)c;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -ECHILD;
}

FIXTURE(vis) {
	int kptr, paranoid, unpriv_bpf;
};

FIXTURE_SETUP(vis)
{
	if (geteuid())
		SKIP(return, "needs root");
	self->kptr = sysctl_get(KPTR);
	self->paranoid = sysctl_get(PARANOID);
	self->unpriv_bpf = sysctl_get(UNPRIV_BPF);
	ASSERT_NE(-1000, self->kptr);
	ASSERT_NE(-1000, self->paranoid);
}

FIXTURE_TEARDOWN(vis)
{
	sysctl_set(KPTR, self->kptr);
	sysctl_set(PARANOID, self->paranoid);
	if (self->unpriv_bpf == 0 || self->unpriv_bpf == 2)
		sysctl_set(UNPRIV_BPF, self->unpriv_bpf);
}

/*
 * kptr_restrict=0 and perf_event_paranoid<=1: everybody sees kernel
 * addresses in /proc/kallsyms, and an unprivileged listener gets the
 * records with them.
 */
TEST_F(vis, unprivileged_may_see)
{
	struct seen seen;

	ASSERT_EQ(0, sysctl_set(KPTR, 0));
	ASSERT_EQ(0, sysctl_set(PARANOID, -1));
	ASSERT_EQ(0, run_unprivileged_listener(&seen));
	ASSERT_EQ(0, seen.open_err);
	EXPECT_NE(0, seen.kallsyms_addr);
	EXPECT_EQ(3, seen.ksym_register);
	EXPECT_EQ(1, seen.bpf_load);
}

/*
 * kptr_restrict=1: /proc/kallsyms shows zeros to users without CAP_SYSLOG;
 * the same user's system-wide event gets no ksymbol record (but still the
 * BPF_EVENT, which carries no address).
 */
TEST_F(vis, unprivileged_may_not_see)
{
	struct seen seen;

	ASSERT_EQ(0, sysctl_set(KPTR, 1));
	ASSERT_EQ(0, sysctl_set(PARANOID, -1));
	ASSERT_EQ(0, run_unprivileged_listener(&seen));
	ASSERT_EQ(0, seen.open_err);
	EXPECT_EQ(0, seen.kallsyms_addr);
	EXPECT_EQ(0, seen.ksym_register);
	EXPECT_EQ(0, seen.ksym_any);
	EXPECT_EQ(1, seen.bpf_load);
}

/* kptr_restrict=2 hides addresses from root too: no records for root. */
TEST_F(vis, root_with_kptr_restrict_2)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct rec_stream s;
	struct ksym_abi *skel;
	size_t i, ksym = 0, load = 0;

	ASSERT_EQ(0, sysctl_set(KPTR, 2));
	EXPECT_EQ(0, first_kallsyms_addr());
	ASSERT_EQ(0, rec_stream_open(&s, 16));
	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.ksym_abi_main),
					    &info, &len));
	ksym_abi__destroy(skel);
	ASSERT_EQ(0, rec_stream_drain(&s));
	for (i = 0; i < s.nr; i++) {
		ksym += s.recs[i].type == PERF_RECORD_KSYMBOL;
		load += s.recs[i].type == PERF_RECORD_BPF_EVENT &&
			s.recs[i].bpf_type == PERF_BPF_EVENT_PROG_LOAD &&
			s.recs[i].id == info.id;
	}
	rec_stream_close(&s);
	EXPECT_EQ(0, ksym);
	EXPECT_EQ(1, load);
}

/*
 * A program loaded without CAP_BPF is not listed in /proc/kallsyms, so its
 * address is announced to nobody, not even to the loader's own event
 * (stock 6.1 sent it a ksymbol record with an empty name).
 */
TEST_F(vis, unlisted_program_not_announced)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	pid_t pid;
	int status;

	if (self->unpriv_bpf == 1)
		SKIP(return, "unprivileged BPF is disabled for good");
	ASSERT_EQ(0, sysctl_set(UNPRIV_BPF, 0));
	ASSERT_EQ(0, sysctl_set(KPTR, 0));
	ASSERT_EQ(0, sysctl_set(PARANOID, 1));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		struct rec_stream s;
		size_t i, ksym = 0, load = 0;
		int fd;

		if (drop_to_nobody())
			_exit(10);
		if (rec_stream_open_self(&s, 16))
			_exit(11);
		fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "unpriv", "GPL",
				   insns, 2, NULL);
		if (fd < 0)
			_exit(12);
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			_exit(16);
		close(fd);
		if (rec_stream_drain(&s))
			_exit(13);
		for (i = 0; i < s.nr; i++) {
			ksym += s.recs[i].type == PERF_RECORD_KSYMBOL;
			load += s.recs[i].type == PERF_RECORD_BPF_EVENT &&
				s.recs[i].bpf_type == PERF_BPF_EVENT_PROG_LOAD &&
				s.recs[i].id == info.id;
		}
		fprintf(stderr, "# child: %zu records, %zu ksymbol, %zu PROG_LOAD\n",
			s.nr, ksym, load);
		if (load != 1)
			_exit(14);
		_exit(ksym ? 15 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("14: no PROG_LOAD; 15: a ksymbol record was sent");
}

TEST_HARNESS_MAIN
