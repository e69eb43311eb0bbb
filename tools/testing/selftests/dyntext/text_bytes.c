// SPDX-License-Identifier: GPL-2.0
/*
 * The code of new dynamic text in the perf stream (attr.ksymbol_text):
 * right after each JITed function's PERF_RECORD_KSYMBOL register record,
 * PERF_RECORD_TEXT_POKE records with no old bytes that hold the function's
 * code, equal to what bpf_prog_info says the JIT wrote, and complete after
 * the program is gone; the same for an ftrace trampoline, equal to what
 * ftrace sends attr.text_poke events.  Nothing for events that did not
 * ask.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "records.h"
#include "ksym_abi.skel.h"
#include "text_bytes.skel.h"

#define MAX_FUNCS	4
#define CODE_RECORD_MAX	32768	/* code bytes per record, at most */

struct prog_code {
	int nr;
	__u64 addr[MAX_FUNCS];
	__u32 len[MAX_FUNCS];
	__u8 *insns;	/* every function's code, in jited_ksyms order */
	__u32 insns_len;
};

/* The JITed functions of the program behind fd and their code. */
static int prog_code_get(int fd, struct prog_code *c)
{
	struct bpf_prog_info info;
	__u32 info_len = sizeof(info);

	memset(c, 0, sizeof(*c));
	c->nr = bpf_prog_funcs(fd, &info, c->addr, c->len, MAX_FUNCS);
	if (c->nr <= 0 || c->nr > MAX_FUNCS)
		return c->nr < 0 ? c->nr : -E2BIG;
	c->insns_len = info.jited_prog_len;
	c->insns = malloc(c->insns_len);
	if (!c->insns)
		return -ENOMEM;
	memset(&info, 0, sizeof(info));
	info.jited_prog_len = c->insns_len;
	info.jited_prog_insns = (__u64)(unsigned long)c->insns;
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return -errno;
	return 0;
}

enum {
	CODE_NO_KSYMBOL = -1,	/* no register record at the address */
	CODE_NOT_NEXT = -2,	/* something else follows it on its CPU */
	CODE_WRONG = -3,	/* bytes differ from bpf_prog_info's */
	CODE_BAD_RECORD = -4,	/* old bytes, or too many new ones */
	CODE_SHORT = -5,	/* fewer bytes than the function has */
};

/*
 * The code records after the last register record of addr on its CPU,
 * compared with want (len bytes).  Returns their number or CODE_*.
 */
static int stream_code(const struct rec_stream *s, __u64 addr, __u32 len,
		       const __u8 *want)
{
	size_t k, j;
	__u32 got = 0;
	int n = 0;

	for (k = s->nr; k-- > 0;)
		if (s->recs[k].type == PERF_RECORD_KSYMBOL &&
		    s->recs[k].addr == addr && !s->recs[k].flags)
			break;
	if (k == (size_t)-1)
		return CODE_NO_KSYMBOL;
	for (j = k + 1; j < s->nr && got < len; j++) {
		const struct rec *r = &s->recs[j];

		if (r->cpu != s->recs[k].cpu)
			continue;
		if (r->type != PERF_RECORD_TEXT_POKE || r->addr != addr + got)
			return CODE_NOT_NEXT;
		if (r->old_len || !r->new_len || r->new_len > CODE_RECORD_MAX ||
		    got + r->new_len > len)
			return CODE_BAD_RECORD;
		if (memcmp(r->bytes, want + got, r->new_len))
			return CODE_WRONG;
		got += r->new_len;
		n++;
	}
	return got == len ? n : CODE_SHORT;
}

/* Check every function of c; the number of code records of each in n. */
static int prog_code_check(const struct rec_stream *s,
			   const struct prog_code *c, int *n)
{
	__u32 off = 0;
	int i;

	for (i = 0; i < c->nr; i++) {
		if (off + c->len[i] > c->insns_len)
			return CODE_SHORT;
		n[i] = stream_code(s, c->addr[i], c->len[i], c->insns + off);
		if (n[i] < 0)
			return n[i];
		off += c->len[i];
	}
	return 0;
}

/* TEXT_POKE records inside [addr, addr + len). */
static int pokes_in(const struct rec_stream *s, __u64 addr, __u32 len)
{
	size_t i;
	int n = 0;

	for (i = 0; i < s->nr; i++)
		n += s->recs[i].type == PERF_RECORD_TEXT_POKE &&
		     s->recs[i].addr >= addr && s->recs[i].addr < addr + len;
	return n;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * A program with two subprograms (ksym_abi's) and one of about 34 KiB,
 * loaded and unloaded: each function's code follows its ksymbol record, in
 * records of at most 32 KiB, and equals bpf_prog_info's; the big one takes
 * more than one record.  The programs are gone when the stream is read.
 */
TEST(bpf_prog_code)
{
	struct prog_code main_code, big_code;
	struct text_bytes *skel;
	struct ksym_abi *abi;
	struct rec_stream s;
	struct timespec t0;
	int n[MAX_FUNCS], i;
	double ms;

	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open_ksymbol_text(&s, 256, false));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	abi = ksym_abi__open_and_load();
	ASSERT_NE(NULL, abi);
	skel = text_bytes__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, prog_code_get(bpf_program__fd(abi->progs.ksym_abi_main),
				   &main_code));
	ASSERT_EQ(0, prog_code_get(bpf_program__fd(skel->progs.text_big),
				   &big_code));
	text_bytes__destroy(skel);
	ksym_abi__destroy(abi);
	ms = ms_since(&t0);
	ASSERT_EQ(0, rec_stream_drain(&s));

	EXPECT_EQ(3, main_code.nr);
	EXPECT_EQ(0, prog_code_check(&s, &main_code, n));
	for (i = 0; i < main_code.nr; i++)
		EXPECT_EQ(1, n[i]);
	EXPECT_EQ(1, big_code.nr);
	EXPECT_LT(CODE_RECORD_MAX, big_code.len[0]);
	EXPECT_EQ(0, prog_code_check(&s, &big_code, n));
	EXPECT_EQ((big_code.len[0] + CODE_RECORD_MAX - 1) / CODE_RECORD_MAX,
		  n[0]);
	EXPECT_EQ(0, s.malformed);
	EXPECT_EQ(0, s.lost);
	TH_LOG("main %u+%u+%u bytes, big %u bytes in %d records; loaded and unloaded in %.1f ms",
	       main_code.len[0], main_code.len[1], main_code.len[2],
	       big_code.len[0], n[0], ms);
	free(main_code.insns);
	free(big_code.insns);
	rec_stream_close(&s);
}

/*
 * Only events that ask get code: a ksymbol and text_poke event without
 * the bit (perf record --kcore of perf before it) sees the program's
 * ksymbol record and no text poke record in its text.  One listener, so
 * that stock 6.1's record size bug with several cannot spoil it: this
 * passes on kernels without the feature too.
 */
TEST(no_code_unasked)
{
	struct rec_stream poke;
	struct prog_code c;
	struct text_bytes *skel;

	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open_text_poke(&poke, 64));
	skel = text_bytes__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, prog_code_get(bpf_program__fd(skel->progs.text_big), &c));
	text_bytes__destroy(skel);
	ASSERT_EQ(0, rec_stream_drain(&poke));
	EXPECT_EQ(1, rec_count_ksym(&poke, c.addr[0], 0, NULL));
	EXPECT_EQ(0, pokes_in(&poke, c.addr[0], c.len[0]));
	EXPECT_EQ(0, poke.malformed);
	free(c.insns);
	rec_stream_close(&poke);
}

#define INSTANCE "/sys/kernel/tracing/instances/dyntext_text_bytes"

/* The text poke record with no old bytes at addr, or NULL. */
static const struct rec *poke_at(const struct rec_stream *s, __u64 addr)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (s->recs[i].type == PERF_RECORD_TEXT_POKE &&
		    s->recs[i].addr == addr && !s->recs[i].old_len)
			return &s->recs[i];
	return NULL;
}

/*
 * An ftrace trampoline (a function tracer instance) comes and goes: its
 * code follows its ksymbol record for a ksymbol_text event, in one record,
 * equal to the code ftrace itself sends to a text_poke event.
 */
TEST(ftrace_trampoline_code)
{
	const char *name = "ftrace_trampoline";
	struct rec_stream code, poke;
	const struct rec *reg, *own;
	__u64 addr;
	__u32 len;

	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open_ksymbol_text(&code, 64, false));
	ASSERT_EQ(0, rec_stream_open_text_poke(&poke, 64));
	rmdir(INSTANCE);
	ASSERT_EQ(0, mkdir(INSTANCE, 0755));
	ASSERT_EQ(0, write_str(INSTANCE "/set_ftrace_filter", "vfs_read",
			       O_TRUNC));
	ASSERT_EQ(0, write_str(INSTANCE "/current_tracer", "function",
			       O_TRUNC));
	reg = rec_wait_name(&code, name, 0);
	ASSERT_NE(NULL, reg);
	addr = reg->addr;
	len = reg->len;
	EXPECT_EQ(0, write_str(INSTANCE "/current_tracer", "nop", O_TRUNC));
	EXPECT_EQ(0, rmdir(INSTANCE));
	ASSERT_NE(NULL, rec_wait_name(&code, name,
				      PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER));
	ASSERT_EQ(0, rec_stream_drain(&poke));
	own = poke_at(&poke, addr);
	ASSERT_NE(NULL, own);
	ASSERT_EQ(len, own->new_len);
	EXPECT_EQ(1, stream_code(&code, addr, len, own->bytes));
	EXPECT_EQ(0, code.malformed);
	EXPECT_EQ(0, code.lost);
	TH_LOG("%s at %llx: %u bytes of code", name, (unsigned long long)addr,
	       len);
	rec_stream_close(&code);
	rec_stream_close(&poke);
}

/* Open a task event on the calling process; 0 or -errno. */
static int open_attr(struct perf_event_attr *attr)
{
	int fd = syscall(__NR_perf_event_open, attr, 0, -1, -1, 0);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * attr.ksymbol_text needs attr.ksymbol, and the right to see kernel
 * memory even with exclude_kernel (as attr.text_poke): at
 * perf_event_paranoid 2 an unprivileged process may open the same task
 * event without it, not with it.
 */
TEST(abi)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.exclude_kernel = 1,
		.ksymbol = 1,
		.ksymbol_text = 1,
	};
	int paranoid = sysctl_get(PARANOID);
	pid_t pid;
	int status;

	EXPECT_EQ(0, open_attr(&attr));
	attr.ksymbol = 0;
	EXPECT_EQ(-EINVAL, open_attr(&attr));
	attr.ksymbol = 1;

	ASSERT_EQ(0, sysctl_set(PARANOID, 2));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (drop_to_nobody())
			_exit(2);
		if (open_attr(&attr) != -EACCES)
			_exit(3);
		attr.ksymbol_text = 0;
		_exit(open_attr(&attr) ? 4 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, sysctl_set(PARANOID, paranoid));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
