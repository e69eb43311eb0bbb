// SPDX-License-Identifier: GPL-2.0
/*
 * Who may see dynamic text.  A perf event receives PERF_RECORD_KSYMBOL
 * records exactly when its opener may see kernel text addresses: it may
 * sample kernel IPs (perf_event_paranoid <= 1, CAP_PERFMON or
 * CAP_SYS_ADMIN) or read them in /proc/kallsyms (kallsyms_show_value():
 * kptr_restrict, perf_event_paranoid, CAP_SYSLOG).  That decides for every
 * region; what /proc/kallsyms lists (net.core.bpf_jit_kallsyms,
 * net.core.bpf_jit_harden, CAP_BPF at load) does not change what perf is
 * told, and every register record has exactly one unregister record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "records.h"
#include "ksym_abi.skel.h"

#define UNPRIV_BPF "/proc/sys/kernel/unprivileged_bpf_disabled"
#define JIT_HARDEN "/proc/sys/net/core/bpf_jit_harden"
#define JIT_KALLSYMS "/proc/sys/net/core/bpf_jit_kallsyms"
#define NR_FUNCS 3

/* The address of _stext in /proc/kallsyms as this process sees it. */
static unsigned long long stext_addr(void)
{
	unsigned long long a = ~0ULL;

	kallsyms_sym_count("_stext", "", 0, &a, NULL);
	return a;
}

/* The three functions of ksym_abi: address, length, name; the program's id. */
static int funcs_get(struct ksym_abi *skel, struct prog_view *f)
{
	int err = prog_view_get(bpf_program__fd(skel->progs.ksym_abi_main), f);

	if (err)
		return err;
	return f->nr == NR_FUNCS ? 0 : -E2BIG;
}

/*
 * Register and unregister records of each function: its address, length
 * and name (not a freed libbpf probe's at the same address).
 */
static void funcs_count(const struct rec_stream *s, const struct prog_view *f,
			size_t *reg, size_t *unreg)
{
	size_t i, j;

	*reg = *unreg = 0;
	for (i = 0; i < s->nr; i++) {
		const struct rec *r = &s->recs[i];

		if (r->type != PERF_RECORD_KSYMBOL ||
		    r->ksym_type != PERF_RECORD_KSYMBOL_TYPE_BPF)
			continue;
		for (j = 0; j < f->nr; j++) {
			if (r->addr != f->addr[j] || r->len != f->len[j] ||
			    strcmp(r->name, f->name[j]))
				continue;
			if (r->flags == 0)
				(*reg)++;
			else if (r->flags == PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER)
				(*unreg)++;
		}
	}
}

/* What a listener that dropped to nobody saw while root loaded ksym_abi. */
struct seen {
	int open_err;
	unsigned long long stext;	/* _stext in its /proc/kallsyms */
	size_t reg, unreg;		/* at the program's functions */
	size_t ksym_any;		/* any KSYMBOL record */
	size_t bpf_load;		/* PROG_LOAD for the program's id */
};

/*
 * A child drops to nobody keeping capability cap (-1: none), opens a
 * system-wide side-band event and waits; root loads and unloads ksym_abi;
 * the child reports what it received.
 */
static int run_listener(int cap, struct seen *seen)
{
	int to_child[2], to_parent[2];
	struct ksym_abi *skel;
	struct prog_view f;
	pid_t pid;
	int status, err, kptr;

	if (pipe(to_child) || pipe(to_parent))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		struct rec_stream s;
		struct seen me = {};
		size_t i;

		if (drop_to_nobody_keep(cap))
			_exit(2);
		me.stext = stext_addr();
		me.open_err = rec_stream_open(&s, 16);
		if (write(to_parent[1], &me, sizeof(me)) != sizeof(me))
			_exit(3);
		/* Wait for the parent's load and unload, then count. */
		if (read(to_child[0], &f, sizeof(f)) != sizeof(f))
			_exit(4);
		if (!me.open_err && !rec_stream_drain(&s)) {
			funcs_count(&s, &f, &me.reg, &me.unreg);
			for (i = 0; i < s.nr; i++) {
				me.ksym_any += s.recs[i].type == PERF_RECORD_KSYMBOL;
				me.bpf_load += s.recs[i].type == PERF_RECORD_BPF_EVENT &&
					s.recs[i].bpf_type == PERF_BPF_EVENT_PROG_LOAD &&
					s.recs[i].id == f.id;
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
	/* bpf_prog_info shows root the addresses only below kptr_restrict=2. */
	kptr = sysctl_get(KPTR);
	sysctl_set(KPTR, 0);
	err = funcs_get(skel, &f);
	sysctl_set(KPTR, kptr);
	ksym_abi__destroy(skel);
	if (err)
		return err;
	if (write(to_child[1], &f, sizeof(f)) != sizeof(f))
		return -EIO;
	if (read(to_parent[0], seen, sizeof(*seen)) != sizeof(*seen))
		return -EIO;
	waitpid(pid, &status, 0);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -ECHILD;
}

/*
 * A child drops to nobody keeping capability cap (-1: none), opens a task
 * event on itself (exclude_kernel: what anybody may open), loads and
 * unloads a two-instruction socket filter itself (no CAP_BPF: not listed
 * in /proc/kallsyms) and counts the ksymbol records it received.
 */
static int run_self_loader(int cap, size_t *ksym, size_t *load)
{
	struct { size_t ksym, load; int err; } r = { .err = -1 };
	int fds[2], status;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		struct bpf_insn insns[] = {
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
			{ .code = BPF_JMP | BPF_EXIT },
		};
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		struct rec_stream s;
		size_t i;
		int fd;

		r.err = 10;
		if (drop_to_nobody_keep(cap))
			goto out;
		r.err = 11;
		if (rec_stream_open_self(&s, 16))
			goto out;
		r.err = 12;
		fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "unpriv", "GPL",
				   insns, 2, NULL);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			goto out;
		close(fd);
		r.err = 13;
		if (rec_stream_drain(&s))
			goto out;
		r.ksym = 0;
		r.load = 0;
		for (i = 0; i < s.nr; i++) {
			r.ksym += s.recs[i].type == PERF_RECORD_KSYMBOL;
			r.load += s.recs[i].type == PERF_RECORD_BPF_EVENT &&
				  s.recs[i].bpf_type == PERF_BPF_EVENT_PROG_LOAD &&
				  s.recs[i].id == info.id;
		}
		r.err = 0;
out:
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	if (read(fds[0], &r, sizeof(r)) != sizeof(r))
		r.err = -EIO;
	waitpid(pid, &status, 0);
	close(fds[0]);
	close(fds[1]);
	*ksym = r.ksym;
	*load = r.load;
	return r.err;
}

/*
 * A listener that dropped to nobody keeping cap gets every record of the
 * program root loads; /proc/kallsyms shows it addresses if sees_kallsyms.
 */
static void listener_gets_all(struct __test_metadata *_metadata, int cap,
			      bool sees_kallsyms)
{
	struct seen seen;

	ASSERT_EQ(0, run_listener(cap, &seen));
	ASSERT_EQ(0, seen.open_err);
	EXPECT_EQ(sees_kallsyms, seen.stext != 0);
	EXPECT_EQ(NR_FUNCS, seen.reg);
	EXPECT_EQ(NR_FUNCS, seen.unreg);
	EXPECT_EQ(1, seen.bpf_load);
}

FIXTURE(vis) {
	int kptr, paranoid, unpriv_bpf, harden, kallsyms;
};

FIXTURE_SETUP(vis)
{
	if (geteuid())
		SKIP(return, "needs root");
	self->kptr = sysctl_get(KPTR);
	self->paranoid = sysctl_get(PARANOID);
	self->unpriv_bpf = sysctl_get(UNPRIV_BPF);
	self->harden = sysctl_get(JIT_HARDEN);
	self->kallsyms = sysctl_get(JIT_KALLSYMS);
	ASSERT_NE(-1000, self->kptr);
	ASSERT_NE(-1000, self->paranoid);
	ASSERT_NE(-1000, self->harden);
	ASSERT_NE(-1000, self->kallsyms);
	ASSERT_NE(1, self->unpriv_bpf)
		TH_LOG("unprivileged BPF is disabled for good; boot without it");
	ASSERT_EQ(0, sysctl_set(UNPRIV_BPF, 0));
}

FIXTURE_TEARDOWN(vis)
{
	sysctl_set(KPTR, self->kptr);
	sysctl_set(PARANOID, self->paranoid);
	sysctl_set(JIT_HARDEN, self->harden);
	sysctl_set(JIT_KALLSYMS, self->kallsyms);
	sysctl_set(UNPRIV_BPF, self->unpriv_bpf);
}

/*
 * kptr_restrict=0 and perf_event_paranoid<=1: everybody sees kernel
 * addresses in /proc/kallsyms and may sample the kernel, and an
 * unprivileged system-wide listener gets the records.
 */
TEST_F(vis, unprivileged_may_see)
{
	ASSERT_EQ(0, sysctl_set(KPTR, 0));
	ASSERT_EQ(0, sysctl_set(PARANOID, -1));
	listener_gets_all(_metadata, -1, true);
}

/*
 * perf_event_paranoid=-1 with kptr_restrict=1: /proc/kallsyms shows zeros
 * to users without CAP_SYSLOG, but they may sample the kernel system-wide
 * and see its addresses in their samples; they always got the records,
 * and still do.
 */
TEST_F(vis, unprivileged_may_sample_kernel)
{
	ASSERT_EQ(0, sysctl_set(KPTR, 1));
	ASSERT_EQ(0, sysctl_set(PARANOID, -1));
	listener_gets_all(_metadata, -1, false);
}

/*
 * perf_event_paranoid=2: an unprivileged user may only measure user space
 * (exclude_kernel) and, with kptr_restrict=0, still sees zeros in
 * /proc/kallsyms.  Its own task event gets the PROG_LOAD of the program it
 * loads, which carries no address, and no ksymbol record (Linux 6.1 sent
 * it the program's address: "perf/core: Send ksymbol records only to
 * openers allowed to see them" closed that).
 */
TEST_F(vis, unprivileged_may_not_see)
{
	size_t ksym, load;

	ASSERT_EQ(0, sysctl_set(KPTR, 0));
	ASSERT_EQ(0, sysctl_set(PARANOID, 2));
	ASSERT_EQ(0, run_self_loader(-1, &ksym, &load));
	EXPECT_EQ(0, ksym);
	EXPECT_EQ(1, load);
}

/*
 * CAP_PERFMON without CAP_SYSLOG at perf_event_paranoid=2,
 * kptr_restrict=0: /proc/kallsyms shows it zeros, but CAP_PERFMON lets it
 * sample the kernel system-wide (perf-security.rst), so it gets the
 * records, as it always did.
 */
TEST_F(vis, perfmon_only)
{
	ASSERT_EQ(0, sysctl_set(KPTR, 0));
	ASSERT_EQ(0, sysctl_set(PARANOID, 2));
	listener_gets_all(_metadata, CAP_PERFMON, false);
}

/*
 * CAP_SYSLOG without CAP_PERFMON at perf_event_paranoid=2,
 * kptr_restrict=1: it may not open a system-wide event, but it reads the
 * addresses in /proc/kallsyms, so its own task event gets the records of
 * the program it loads.
 */
TEST_F(vis, syslog_only)
{
	struct seen seen;
	size_t ksym, load;

	ASSERT_EQ(0, sysctl_set(KPTR, 1));
	ASSERT_EQ(0, sysctl_set(PARANOID, 2));
	ASSERT_EQ(0, run_listener(CAP_SYSLOG, &seen));
	EXPECT_NE(0, seen.open_err);
	EXPECT_NE(0, seen.stext);
	ASSERT_EQ(0, run_self_loader(CAP_SYSLOG, &ksym, &load));
	EXPECT_EQ(2, ksym);	/* register and unregister */
	EXPECT_EQ(1, load);
}

/* kptr_restrict=2 hides /proc/kallsyms from root, not its samples. */
TEST_F(vis, root_with_kptr_restrict_2)
{
	ASSERT_EQ(0, sysctl_set(KPTR, 2));
	listener_gets_all(_metadata, CAP_SYS_ADMIN, false);
}

/* Load and unload ksym_abi as root with the given sysctl values. */
static void root_load_unload(struct __test_metadata *_metadata,
			     int kallsyms_at_load, int kallsyms_at_unload,
			     int harden, size_t *reg, size_t *unreg,
			     int *lines)
{
	struct rec_stream s;
	struct ksym_abi *skel;
	struct prog_view f;
	char type, name[512], mod[64];
	int i;

	ASSERT_EQ(0, sysctl_set(JIT_HARDEN, harden));
	ASSERT_EQ(0, sysctl_set(JIT_KALLSYMS, kallsyms_at_load));
	ASSERT_EQ(0, rec_stream_open(&s, 16));
	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, funcs_get(skel, &f));
	*lines = 0;
	for (i = 0; i < NR_FUNCS; i++)
		*lines += !kallsyms_find(f.addr[i], &type, name, sizeof(name),
					 mod, sizeof(mod));
	ASSERT_EQ(0, sysctl_set(JIT_KALLSYMS, kallsyms_at_unload));
	ksym_abi__destroy(skel);
	ASSERT_EQ(0, rec_stream_drain(&s));
	funcs_count(&s, &f, reg, unreg);
	rec_stream_close(&s);
}

/*
 * net.core.bpf_jit_harden hides BPF programs from /proc/kallsyms, not from
 * perf: root's system-wide listener gets every function's records, as it
 * always did.
 */
TEST_F(vis, jit_harden_announced)
{
	size_t reg, unreg;
	int lines;

	root_load_unload(_metadata, 1, 1, 1, &reg, &unreg, &lines);
	EXPECT_EQ(0, lines);
	EXPECT_EQ(NR_FUNCS, reg);
	EXPECT_EQ(NR_FUNCS, unreg);
}

/*
 * net.core.bpf_jit_kallsyms changed between load and unload, either way:
 * one register and one unregister record per function.
 */
TEST_F(vis, jit_kallsyms_toggled_paired)
{
	size_t reg, unreg;
	int lines;

	root_load_unload(_metadata, 0, 1, 0, &reg, &unreg, &lines);
	EXPECT_EQ(0, lines);
	EXPECT_EQ(NR_FUNCS, reg);
	EXPECT_EQ(NR_FUNCS, unreg);

	root_load_unload(_metadata, 1, 0, 0, &reg, &unreg, &lines);
	EXPECT_EQ(NR_FUNCS, lines);
	EXPECT_EQ(NR_FUNCS, reg);
	EXPECT_EQ(NR_FUNCS, unreg);
}

/* A child, dropped to nobody, keeps a program it loaded without CAP_BPF. */
struct unpriv_prog {
	pid_t pid;
	int to_child[2], to_parent[2];
	__u32 id;
};

/*
 * Fork a child that drops to nobody, loads a two-instruction socket filter
 * named "unpriv" (no CAP_BPF: not listed in /proc/kallsyms) and keeps it
 * loaded until unpriv_prog_release(); p->id is its program id.
 */
static int unpriv_prog_load(struct unpriv_prog *p)
{
	if (pipe(p->to_child))
		return -errno;
	if (pipe(p->to_parent))
		return -errno;
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	/*
	 * Each side keeps only its own ends, so that the child sees EOF and
	 * exits if the test ends without unpriv_prog_release().
	 */
	close(p->pid ? p->to_child[0] : p->to_child[1]);
	close(p->pid ? p->to_parent[1] : p->to_parent[0]);
	if (!p->pid) {
		struct bpf_insn insns[] = {
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
			{ .code = BPF_JMP | BPF_EXIT },
		};
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		char c;
		int fd;

		if (drop_to_nobody())
			_exit(10);
		fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "unpriv", "GPL",
				   insns, 2, NULL);
		if (fd < 0)
			_exit(11);
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			_exit(12);
		if (write(p->to_parent[1], &info.id, sizeof(info.id)) !=
		    sizeof(info.id))
			_exit(13);
		/* Keep it loaded until the parent has looked. */
		if (read(p->to_child[0], &c, 1) != 1)
			_exit(14);
		close(fd);
		_exit(0);
	}
	if (read(p->to_parent[0], &p->id, sizeof(p->id)) != sizeof(p->id))
		return -EIO;
	return 0;
}

/* Let the child unload its program; 0 if it exited cleanly. */
static int unpriv_prog_release(struct unpriv_prog *p)
{
	int status, ret = -EIO;

	if (write(p->to_child[1], "x", 1) == 1 &&
	    waitpid(p->pid, &status, 0) == p->pid && WIFEXITED(status))
		ret = WEXITSTATUS(status);
	close(p->to_child[1]);
	close(p->to_parent[0]);
	return ret;
}

/* The address and length of the unprivileged program's only function. */
static int unpriv_prog_func(const struct unpriv_prog *p,
			    struct bpf_prog_info *info, __u64 *addr,
			    __u32 *len)
{
	int fd = bpf_prog_get_fd_by_id(p->id);
	int n;

	if (fd < 0)
		return -errno;
	n = bpf_prog_funcs(fd, info, addr, len, 1);
	close(fd);
	return n == 1 && *addr ? 0 : -ENOENT;
}

/*
 * A program loaded without CAP_BPF is not listed in /proc/kallsyms, but a
 * listener that may see kernel addresses is told about it, with its
 * address, length and name: the record had an empty name before the
 * registry, which left perf nothing to show for its samples.
 */
TEST_F(vis, unlisted_program_announced)
{
	char want[64], hex[2 * BPF_TAG_SIZE + 1];
	char type, name[512], mod[64];
	struct bpf_prog_info info;
	struct unpriv_prog p;
	struct rec_stream s;
	__u64 addr = 0;
	__u32 len = 0;
	size_t i, reg = 0, unreg = 0;

	if (!kernel_has_dyntext())
		SKIP(return, "no dynamic text registry in this kernel");
	ASSERT_EQ(0, rec_stream_open(&s, 16));
	ASSERT_EQ(0, unpriv_prog_load(&p));
	ASSERT_EQ(0, unpriv_prog_func(&p, &info, &addr, &len));
	EXPECT_NE(0, kallsyms_find(addr, &type, name, sizeof(name),
				   mod, sizeof(mod)))
		TH_LOG("listed in /proc/kallsyms: %s [%s]", name, mod);
	ASSERT_EQ(0, unpriv_prog_release(&p));
	ASSERT_EQ(0, rec_stream_drain(&s));
	tag_hex(info.tag, hex);
	snprintf(want, sizeof(want), "bpf_prog_%s_unpriv", hex);
	for (i = 0; i < s.nr; i++) {
		const struct rec *r = &s.recs[i];

		if (r->type != PERF_RECORD_KSYMBOL || r->addr != addr)
			continue;
		/* libbpf's probe of program names may have had the address. */
		if (strcmp(want, r->name)) {
			TH_LOG("also at the address: %s, flags %u", r->name,
			       r->flags);
			continue;
		}
		EXPECT_EQ(len, r->len);
		EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_BPF, r->ksym_type);
		reg += r->flags == 0;
		unreg += r->flags == PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER;
	}
	rec_stream_close(&s);
	EXPECT_EQ(1, reg);
	EXPECT_EQ(1, unreg);
}

/*
 * Nor is it kernel text: kernel_text_address() and kallsyms_lookup() do
 * not know it, as bpf_tree never held it, so bpf_arch_text_poke(), which
 * checks its target the same way, refuses to patch it: no fentry, fexit or
 * freplace attach to it.  Its first and last byte are asked.
 */
TEST_F(vis, unlisted_program_not_text)
{
	struct bpf_prog_info info;
	struct unpriv_prog p;
	char name[1024];
	__u64 addr = 0;
	__u32 len = 0;
	int text = -1;

	ASSERT_EQ(0, unpriv_prog_load(&p));
	ASSERT_EQ(0, unpriv_prog_func(&p, &info, &addr, &len));
	ASSERT_LT(0, len);
	ASSERT_EQ(0, text_lookup_start());
	ASSERT_EQ(0, text_lookup(addr, &text, name, sizeof(name)));
	EXPECT_EQ(0, text);
	EXPECT_STREQ("-", name);
	ASSERT_EQ(0, text_lookup(addr + len - 1, &text, name, sizeof(name)));
	EXPECT_EQ(0, text);
	EXPECT_STREQ("-", name);
	EXPECT_EQ(0, text_lookup_stop());
	EXPECT_EQ(0, unpriv_prog_release(&p));
}

/*
 * Whether the opener may see kernel addresses is asked only for events that
 * set attr.ksymbol: no other open pays for the capability checks (which an
 * LSM may log).  Counted with a kprobe on cap_capable(), which
 * security_capable() calls with or without LSMs, for CAP_PERFMON without
 * auditing (CAP_OPT_NOAUDIT), perf_ksym_visible()'s first question at
 * perf_event_paranoid=2, in this process, around the open of a user-space
 * dummy event without and with attr.ksymbol.
 */
#define CAP_PROBE	"dyntext/vis_cap"
#define CAP_EVENT	TRACING "/events/" CAP_PROBE

static int cap_probe_calls(bool ksymbol)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.ksymbol = ksymbol,
	};
	char line[512];
	int fd, n = 0;
	FILE *f;

	if (write_str(TRACING "/trace", "", O_TRUNC))
		return -1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	close(fd);
	f = fopen(TRACING "/trace", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += line[0] != '#' && strstr(line, "vis_cap:");
	fclose(f);
	return n;
}

TEST_F(vis, asked_only_for_ksymbol_events)
{
	char filter[64];

	ASSERT_EQ(0, sysctl_set(PARANOID, 2));
	write_str(CAP_EVENT "/enable", "0", O_TRUNC);	/* a run cut short */
	write_str(TRACING "/kprobe_events", "-:" CAP_PROBE "\n", O_APPEND);
	ASSERT_EQ(0, write_str(TRACING "/kprobe_events",
			       "p:" CAP_PROBE " cap_capable cap=%dx:s32 opts=%cx:u32\n",
			       O_APPEND));
	snprintf(filter, sizeof(filter), "cap == %d && opts == 2 && common_pid == %d",
		 CAP_PERFMON, getpid());
	ASSERT_EQ(0, write_str(CAP_EVENT "/filter", filter, O_TRUNC));
	/*
	 * Enabled once: a kprobe on a function's entry enabled a second time
	 * crashes 7.3 without "x86/ftrace: Always call ftrace handlers,
	 * whatever their address" (ool.kprobe_on_ftrace_rearmed).
	 */
	ASSERT_EQ(0, write_str(CAP_EVENT "/enable", "1", O_TRUNC));
	EXPECT_EQ(0, cap_probe_calls(false));
	EXPECT_EQ(1, cap_probe_calls(true));
	EXPECT_EQ(0, write_str(CAP_EVENT "/enable", "0", O_TRUNC));
	EXPECT_EQ(0, write_str(TRACING "/kprobe_events", "-:" CAP_PROBE "\n",
			       O_APPEND));
}

TEST_HARNESS_MAIN
