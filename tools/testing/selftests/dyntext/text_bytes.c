// SPDX-License-Identifier: GPL-2.0
/*
 * The code of dynamic text in the perf stream (attr.ksymbol_text): after
 * the PERF_RECORD_KSYMBOL register record of a JITed function or a BPF
 * trampoline, on its CPU, PERF_RECORD_TEXT_POKE records with no old bytes
 * that hold its code, equal to what bpf_prog_info says the JIT wrote or the
 * text in memory, and complete after the program is gone; for text written
 * after it is registered (an ftrace trampoline, a kprobe slot, the XDP
 * dispatcher), the text poke records of its producer, equal to the text in
 * memory and to what attr.text_poke events get.  Nothing for events that
 * did not ask.  The code is copied without the registry's lock.  Memory is
 * read with bpf_probe_read_kernel(), which reads as /proc/kcore does (the
 * test kernels have no /proc/kcore).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <linux/if_link.h>

#include "../kselftest_harness.h"
#include "records.h"
#include "ksym_abi.skel.h"
#include "text_bytes.skel.h"
#include "text_read.h"
#include "bpf_images.skel.h"

#define MAX_FUNCS	PROG_CODE_MAX_FUNCS
#define CODE_RECORD_MAX	32768	/* code bytes per record, at most */

enum {
	CODE_NO_KSYMBOL = -1,	/* no register record at the address */
	CODE_NOT_NEXT = -2,	/* its region's next record on its CPU is not code */
	CODE_WRONG = -3,	/* bytes differ from bpf_prog_info's */
	CODE_BAD_RECORD = -4,	/* old bytes, or too many new ones */
	CODE_SHORT = -5,	/* fewer bytes than the function has */
};

/*
 * The code records after the last register record of addr (live or
 * replayed) on its CPU, with no record of addr's region between: their
 * bytes (at most max) into buf and their total into *got.  Returns their
 * number or CODE_*.
 */
static int code_after(const struct rec_stream *s, __u64 addr, __u32 max,
		      __u8 *buf, __u32 *got)
{
	size_t k, j;
	int n = 0;

	*got = 0;
	for (k = s->nr; k-- > 0;)
		if (s->recs[k].type == PERF_RECORD_KSYMBOL &&
		    s->recs[k].addr == addr &&
		    !(s->recs[k].flags & ~PERF_RECORD_KSYMBOL_FLAGS_REPLAY))
			break;
	if (k == (size_t)-1)
		return CODE_NO_KSYMBOL;
	for (j = k + 1; j < s->nr && *got < max; j++) {
		const struct rec *r = &s->recs[j];

		if (r->cpu != s->recs[k].cpu)
			continue;
		/*
		 * dyntext_add() copies the code after it dropped the
		 * registry's lock: records of other regions may come between.
		 */
		if (r->type == PERF_RECORD_TEXT_POKE ?
		    r->addr < addr || r->addr >= addr + max :
		    r->type != PERF_RECORD_KSYMBOL || r->addr != addr)
			continue;
		if (r->type != PERF_RECORD_TEXT_POKE || r->addr != addr + *got)
			break;
		if (r->old_len || !r->new_len || r->new_len > CODE_RECORD_MAX ||
		    *got + r->new_len > max)
			return CODE_BAD_RECORD;
		memcpy(buf + *got, r->bytes, r->new_len);
		*got += r->new_len;
		n++;
	}
	return n;
}

/*
 * The code records after the last register record of addr on its CPU,
 * compared with want (len bytes).  Returns their number or CODE_*.
 */
static int stream_code(const struct rec_stream *s, __u64 addr, __u32 len,
		       const __u8 *want)
{
	__u8 *buf = malloc(len);
	__u32 got;
	int n;

	if (!buf)
		return CODE_SHORT;
	n = code_after(s, addr, len, buf, &got);
	if (n >= 0 && !got)
		n = CODE_NOT_NEXT;
	else if (n >= 0 && got < len)
		n = CODE_SHORT;
	else if (n >= 0 && memcmp(buf, want, len))
		n = CODE_WRONG;
	free(buf);
	return n;
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

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
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
 * that the record size bug older kernels have with several ("perf:
 * Replace perf_event_header__init_id with full header init" fixed it)
 * cannot spoil it: this passes on kernels without the feature too.
 */
TEST(no_code_unasked)
{
	struct rec_stream poke;
	struct prog_code c;
	struct prog_view v;
	struct text_bytes *skel;

	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open_text_poke(&poke, 64));
	skel = text_bytes__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, prog_code_get(bpf_program__fd(skel->progs.text_big), &c));
	ASSERT_EQ(0, prog_view_get(bpf_program__fd(skel->progs.text_big), &v));
	text_bytes__destroy(skel);
	ASSERT_EQ(0, rec_stream_drain(&poke));
	/* By name too: a freed libbpf probe may have had the address. */
	EXPECT_EQ(1, rec_count_ksym(&poke, c.addr[0], 0, v.name[0]));
	EXPECT_EQ(0, pokes_in(&poke, c.addr[0], c.len[0]));
	EXPECT_EQ(0, poke.malformed);
	free(c.insns);
	rec_stream_close(&poke);
}

#define LOCK_PROBE "dyntext_text_bytes/lock_at"

/*
 * A kprobe on @func reads the registry's lock word (dyntext_lock) at each
 * call while BPF programs with code come and go, and a ksymbol_text stream
 * is open on this CPU.  Done under the lock, every call sees it taken;
 * another CPU's add or delete may hold it now and then, so one call that
 * sees it free is enough.
 */
static void lock_free_at(struct __test_metadata *_metadata, const char *func)
{
	char buf[1 << 16], probe[128], *p;
	struct text_bytes *skel;
	struct rec_stream s;
	int calls = 0, free_ = 0, fd;
	size_t len;
	ssize_t n;

	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open_ksymbol_text(&s, 256, false));
	write_str(TRACING "/events/" LOCK_PROBE "/enable", "0", O_TRUNC);
	write_str(TRACING "/kprobe_events", "-:" LOCK_PROBE "\n", O_APPEND);
	snprintf(probe, sizeof(probe), "p:%s %s lock=@dyntext_lock:u32\n",
		 LOCK_PROBE, func);
	ASSERT_EQ(0, write_str(TRACING "/kprobe_events", probe, O_APPEND));
	ASSERT_EQ(0, write_str(TRACING "/trace", "", O_TRUNC));
	ASSERT_EQ(0, write_str(TRACING "/events/" LOCK_PROBE "/enable", "1",
			       O_TRUNC));
	skel = text_bytes__open_and_load();
	EXPECT_NE(NULL, skel);
	text_bytes__destroy(skel);
	EXPECT_EQ(0, write_str(TRACING "/events/" LOCK_PROBE "/enable", "0",
			       O_TRUNC));
	fd = open(TRACING "/trace", O_RDONLY);
	ASSERT_LE(0, fd);
	for (len = 0; len < sizeof(buf) - 1; len += n) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
	}
	close(fd);
	buf[len] = 0;
	for (p = buf; (p = strstr(p, " lock=")); p++) {
		calls++;
		if (!strncmp(p, " lock=0\n", 8))
			free_++;
	}
	write_str(TRACING "/kprobe_events", "-:" LOCK_PROBE "\n", O_APPEND);
	ASSERT_EQ(0, rec_stream_drain(&s));
	EXPECT_LE(1, calls) TH_LOG("%s", buf);
	EXPECT_LE(1, free_) TH_LOG("%s", buf);
	EXPECT_EQ(0, s.lost);
	TH_LOG("%s: %d calls, %d with the registry's lock free", func, calls,
	       free_);
	rec_stream_close(&s);
}

/* The code of new text (up to megabytes) is copied without the lock. */
TEST(code_sent_unlocked)
{
	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	lock_free_at(_metadata, "perf_event_ksymbol_text");
}

/*
 * The register and unregister records too: writing one visits every
 * side-band event of the CPU, as many as users opened (100,000 disabled
 * ones made a delete hold the lock 114 ms, under emulation, while records
 * were written under it).
 */
TEST(records_sent_unlocked)
{
	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	lock_free_at(_metadata, "perf_event_ksymbol");
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

#define PAGE 4096

/*
 * An ftrace trampoline (a function tracer instance) comes and goes: its
 * code follows its ksymbol record for a ksymbol_text event, in one record,
 * equal to the code ftrace itself sends to a text_poke event and to the
 * text in memory.
 */
TEST(ftrace_trampoline_code)
{
	const char *name = "ftrace_trampoline";
	struct rec_stream code, poke;
	const struct rec *reg, *own;
	struct text_read *rd;
	__u8 mem[PAGE];
	__u64 addr;
	__u32 len;

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	ASSERT_EQ(0, rec_pin_cpu());
	rd = text_read__open_and_load();
	ASSERT_NE(NULL, rd);
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
	ASSERT_GE(PAGE, len);
	ASSERT_EQ(0, kernel_read(rd, addr, mem, len));
	EXPECT_EQ(0, write_str(INSTANCE "/current_tracer", "nop", O_TRUNC));
	EXPECT_EQ(0, rmdir(INSTANCE));
	ASSERT_NE(NULL, rec_wait_name(&code, name,
				      PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER));
	ASSERT_EQ(0, rec_stream_drain(&poke));
	own = poke_at(&poke, addr);
	ASSERT_NE(NULL, own);
	ASSERT_EQ(len, own->new_len);
	EXPECT_EQ(1, stream_code(&code, addr, len, own->bytes));
	EXPECT_EQ(0, memcmp(mem, own->bytes, len));
	EXPECT_EQ(0, code.malformed);
	EXPECT_EQ(0, code.lost);
	TH_LOG("%s at %llx: %u bytes of code", name, (unsigned long long)addr,
	       len);
	text_read__destroy(rd);
	rec_stream_close(&code);
	rec_stream_close(&poke);
}

/*
 * A BPF trampoline (fentry attach) is registered once it is written: its
 * code follows its ksymbol record, in one record, equal to the text in
 * memory.  Since 6.8 the region is the trampoline's own size and all of it
 * is code (on x86 the end of it int3, not stale memory); before, the region
 * is a page of which only the code is sent.
 */
TEST(bpf_trampoline_code)
{
	__u8 code[PAGE], mem[PAGE];
	char name[KSYM_NAME_LEN];
	const struct rec *reg;
	struct bpf_images *img;
	struct text_read *rd;
	struct bpf_link *link;
	struct rec_stream s;
	__u32 len, got;
	__u64 addr;
	int n;

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, bpf_trampoline_name("bpf_fentry_test1", name,
					 sizeof(name)));
	ASSERT_EQ(0, rec_stream_open_ksymbol_text(&s, 64, false));
	img = bpf_images__open_and_load();
	ASSERT_NE(NULL, img);
	rd = text_read__open_and_load();
	ASSERT_NE(NULL, rd);
	link = bpf_program__attach(img->progs.images_fentry);
	ASSERT_NE(NULL, link);
	reg = rec_wait_name(&s, name, 0);
	ASSERT_NE(NULL, reg);
	addr = reg->addr;
	len = reg->len;
	ASSERT_GE(PAGE, len);
	ASSERT_EQ(0, kernel_read(rd, addr, mem, len));
	ASSERT_EQ(0, rec_stream_drain(&s));
	n = code_after(&s, addr, len, code, &got);
	bpf_link__destroy(link);
	ASSERT_NE(NULL, rec_wait_name(&s, name,
				      PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER));

	EXPECT_EQ(1, n);
	EXPECT_LT(0, got);
	if (kernel_at_least(6, 8)) {
		EXPECT_EQ(len, got);
#ifdef __x86_64__
		EXPECT_EQ(0xcc, code[got - 1]);
#endif
	} else {
		EXPECT_GT(len, got);
	}
	EXPECT_EQ(0, memcmp(code, mem, got));
	EXPECT_EQ(0, s.malformed);
	EXPECT_EQ(0, s.lost);
	TH_LOG("%s at %llx: %u of %u bytes of code", name,
	       (unsigned long long)addr, got, len);
	text_read__destroy(rd);
	bpf_images__destroy(img);
	rec_stream_close(&s);
}

/* The last text poke record with no old bytes inside [lo, lo + len). */
static const struct rec *new_code_in(const struct rec_stream *s, __u64 lo,
				     __u32 len)
{
	size_t i;

	for (i = s->nr; i-- > 0;) {
		const struct rec *r = &s->recs[i];

		if (r->type == PERF_RECORD_TEXT_POKE && !r->old_len &&
		    r->new_len && r->addr >= lo && r->addr < lo + len)
			return r;
	}
	return NULL;
}

/* The same record (address and bytes) in another stream, or NULL. */
static const struct rec *same_poke(const struct rec_stream *s,
				   const struct rec *want)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		const struct rec *r = &s->recs[i];

		if (r->type == PERF_RECORD_TEXT_POKE && r->addr == want->addr &&
		    r->old_len == want->old_len &&
		    r->new_len == want->new_len &&
		    !memcmp(r->bytes, want->bytes, r->new_len))
			return r;
	}
	return NULL;
}

/*
 * The XDP dispatcher is rewritten half a page at a time after it is
 * registered: each new half goes to attr.ksymbol_text events whose opener
 * may read BPF code, equal to the text in memory.  attr.text_poke events,
 * which need less (perf_allow_kernel()), get none of it, as before the
 * registry: BPF code is for whom bpf_prog_info would show it.
 */
TEST(bpf_dispatcher_code)
{
	const char *name = "bpf_dispatcher_xdp";
	struct rec_stream code, poke;
	unsigned long long disp = 0;
	const struct rec *r, *p;
	struct bpf_images *img;
	struct text_read *rd;
	__u8 mem[PAGE / 2];
	int ifindex = if_nametoindex("lo");

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	ASSERT_LT(0, ifindex);
	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open_ksymbol_text(&code, 64, false));
	ASSERT_EQ(0, rec_stream_open_text_poke(&poke, 64));
	img = bpf_images__open_and_load();
	ASSERT_NE(NULL, img);
	rd = text_read__open_and_load();
	ASSERT_NE(NULL, rd);
	ASSERT_EQ(0, bpf_xdp_attach(ifindex,
				    bpf_program__fd(img->progs.images_xdp),
				    XDP_FLAGS_SKB_MODE, NULL));
	ASSERT_EQ(1, kallsyms_sym_count(name, "bpf", 't', &disp, NULL));
	ASSERT_EQ(0, rec_stream_drain(&poke));
	ASSERT_EQ(0, rec_stream_drain(&code));
	r = new_code_in(&code, disp, PAGE);
	ASSERT_NE(NULL, r) TH_LOG("no new code in %s at %llx", name, disp);
	EXPECT_EQ(PAGE / 2, r->new_len);
	EXPECT_EQ(0, kernel_read(rd, r->addr, mem, sizeof(mem)));
	EXPECT_EQ(0, bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, NULL));
	EXPECT_EQ(0, memcmp(mem, r->bytes, sizeof(mem)));
	p = new_code_in(&poke, disp, PAGE);
	EXPECT_EQ(NULL, p) TH_LOG("attr.text_poke got %u bytes of %s at +%llu",
				  p->new_len, name,
				  (unsigned long long)(p->addr - disp));
	EXPECT_EQ(0, code.malformed);
	EXPECT_EQ(0, poke.malformed);
	TH_LOG("%s at %llx: %u bytes at +%llu", name, disp, r->new_len,
	       (unsigned long long)(r->addr - disp));
	text_read__destroy(rd);
	bpf_images__destroy(img);
	rec_stream_close(&code);
	rec_stream_close(&poke);
}

struct kprobe_pages {
	unsigned long long addr[16];
	int nr;
};

static int kprobe_page_fn(const struct ksym_line *l, void *arg)
{
	struct kprobe_pages *p = arg;

	if (!strcmp(l->mod, "__builtin__kprobes") && p->nr < 16)
		p->addr[p->nr++] = l->addr;
	return 0;
}

/*
 * A site no other test probes: kprobes keeps an unregistered optimized
 * probe for reuse, and a new probe at its address takes its slot without
 * filling it again (KPROBE_OOL_SITE, which ool probes, is vfs_read's).
 */
#if KCONFIG_X86_KERNEL_IBT
#define SLOT_SITE "vfs_write+9"
#else
#define SLOT_SITE "vfs_write+5"
#endif

/*
 * A kprobe that needs an instruction slot: x86 sends the slot's code as a
 * text poke record once it fills it, after the page was registered.  That
 * record reaches attr.ksymbol_text events as it reaches attr.text_poke
 * events, and equals the slot in memory.
 */
TEST(kprobe_slot_code)
{
	const char *def = "p:dyntext_tb/slot " SLOT_SITE "\n";
	struct rec_stream code, poke;
	struct kprobe_pages pages = { .nr = 0 };
	const struct rec *r = NULL;
	struct text_read *rd;
	__u8 mem[PAGE];
	int i;

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open_ksymbol_text(&code, 64, false));
	ASSERT_EQ(0, rec_stream_open_text_poke(&poke, 64));
	rd = text_read__open_and_load();
	ASSERT_NE(NULL, rd);
	ASSERT_EQ(0, write_str(TRACING "/kprobe_events", def, O_APPEND));
	EXPECT_EQ(0, write_str(TRACING "/events/dyntext_tb/slot/enable", "1",
			       O_TRUNC));
	ASSERT_EQ(0, kallsyms_for_each(kprobe_page_fn, &pages));
	ASSERT_EQ(0, rec_stream_drain(&poke));
	ASSERT_EQ(0, rec_stream_drain(&code));
	for (i = 0; i < pages.nr && !r; i++)
		r = new_code_in(&poke, pages.addr[i], PAGE);
	if (r)
		EXPECT_EQ(0, kernel_read(rd, r->addr, mem, r->new_len));
	write_str(TRACING "/events/dyntext_tb/slot/enable", "0", O_TRUNC);
	EXPECT_EQ(0, write_str(TRACING "/kprobe_events", "-:dyntext_tb/slot\n",
			       O_APPEND));
	ASSERT_NE(NULL, r) TH_LOG("no slot code in %d kprobe pages", pages.nr);
	EXPECT_EQ(0, memcmp(mem, r->bytes, r->new_len));
	EXPECT_NE(NULL, same_poke(&code, r));
	EXPECT_EQ(0, code.malformed);
	TH_LOG("slot at %llx: %u bytes", (unsigned long long)r->addr,
	       r->new_len);
	text_read__destroy(rd);
	rec_stream_close(&code);
	rec_stream_close(&poke);
}

/*
 * A replay (PERF_EVENT_IOC_KSYMBOL_REPLAY) into an attr.ksymbol_text event
 * sends, after the replayed register record of a kprobe page and of a BPF
 * trampoline, the code they hold now, equal to memory: on x86 all of a
 * kprobe page, whose unused slots are INT3, not stale memory.  A BPF
 * program's code is not replayed: perf reads it from bpf_prog_info.
 */
TEST(replay_code)
{
	const char *def = "p:dyntext_tb/slot " SLOT_SITE "\n";
	struct kprobe_pages pages = { .nr = 0 };
	__u8 code[PAGE], mem[PAGE];
	char name[KSYM_NAME_LEN];
	const struct rec *reg;
	struct bpf_images *img;
	struct text_read *rd;
	struct bpf_link *link;
	struct bpf_prog_info info;
	struct rec_stream s;
	__u64 prog = 0;
	__u32 got;
	int i, n;

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, bpf_trampoline_name("bpf_fentry_test1", name,
					 sizeof(name)));
	img = bpf_images__open_and_load();
	ASSERT_NE(NULL, img);
	rd = text_read__open_and_load();
	ASSERT_NE(NULL, rd);
	link = bpf_program__attach(img->progs.images_fentry);
	ASSERT_NE(NULL, link);
	ASSERT_EQ(0, write_str(TRACING "/kprobe_events", def, O_APPEND));
	EXPECT_EQ(0, write_str(TRACING "/events/dyntext_tb/slot/enable", "1",
			       O_TRUNC));
	ASSERT_EQ(0, kallsyms_for_each(kprobe_page_fn, &pages));
	ASSERT_LT(0, pages.nr);

	ASSERT_EQ(0, rec_stream_open_ksymbol_text(&s, 64, false));
	ASSERT_LT(0, rec_replay(&s, 0, NULL, NULL));
	for (i = 0; i < pages.nr; i++) {
		n = code_after(&s, pages.addr[i], PAGE, code, &got);
		ASSERT_LT(0, n) TH_LOG("kprobe page %llx: %d", pages.addr[i], n);
		ASSERT_EQ(0, kernel_read(rd, pages.addr[i], mem, got));
		EXPECT_EQ(0, memcmp(code, mem, got));
#ifdef __x86_64__
		EXPECT_EQ(PAGE, got);
		EXPECT_EQ(0xcc, code[PAGE - 1]);
#endif
		TH_LOG("kprobe page %llx: %u bytes in %d records",
		       pages.addr[i], got, n);
	}
	reg = rec_find_name(&s, name, PERF_RECORD_KSYMBOL_FLAGS_REPLAY);
	ASSERT_NE(NULL, reg);
	n = code_after(&s, reg->addr, reg->len, code, &got);
	EXPECT_LT(0, n);
	ASSERT_EQ(0, kernel_read(rd, reg->addr, mem, got));
	EXPECT_EQ(0, memcmp(code, mem, got));
	TH_LOG("%s: %u of %u bytes in %d records", name, got, reg->len, n);
	/* The reading program's own code: not in the replay. */
	ASSERT_EQ(1, bpf_prog_funcs(bpf_program__fd(rd->progs.text_read),
				    &info, &prog, NULL, 1));
	EXPECT_EQ(0, code_after(&s, prog, PAGE, code, &got));
	EXPECT_EQ(0, s.malformed);
	EXPECT_EQ(0, s.lost);

	write_str(TRACING "/events/dyntext_tb/slot/enable", "0", O_TRUNC);
	EXPECT_EQ(0, write_str(TRACING "/kprobe_events", "-:dyntext_tb/slot\n",
			       O_APPEND));
	bpf_link__destroy(link);
	text_read__destroy(rd);
	bpf_images__destroy(img);
	rec_stream_close(&s);
}

#define UNPRIV_BPF "/proc/sys/kernel/unprivileged_bpf_disabled"
#define AS_ROOT (~0ULL)		/* code_vis: the listener stays root */

/* What a listener saw: records of the BPF functions and ftrace trampoline. */
struct code_seen {
	int err;		/* the step the child failed at, 0 if none */
	int open_err;
	int bpf_reg;		/* register records of the program's functions */
	int bpf_whole;		/* those followed by all of their code */
	int bpf_pokes;		/* text poke records inside them */
	int ool_reg;		/* register records of an ftrace trampoline */
	int ool_whole;
	int ool_pokes;
	int text_pokes;		/* text poke records in the stream */
	__u32 jited_len;	/* bpf_prog_info's jited_prog_len (own program) */
};

/* Count the register records named *match, and their code. */
static void code_seen_count(const struct rec_stream *s, const char *match,
			    int *reg, int *whole, int *pokes)
{
	__u8 *buf;
	__u32 got;
	size_t i;

	for (i = 0; i < s->nr; i++) {
		const struct rec *r = &s->recs[i];

		if (r->type != PERF_RECORD_KSYMBOL || r->flags ||
		    !strstr(r->name, match))
			continue;
		(*reg)++;
		*pokes += pokes_in(s, r->addr, r->len);
		buf = malloc(r->len);
		if (buf && code_after(s, r->addr, r->len, buf, &got) > 0 &&
		    got == r->len)
			(*whole)++;
		free(buf);
	}
}

/*
 * As nobody, load an unprivileged socket filter that loads an array map's
 * address (ld_imm64): the JIT image holds a kernel heap pointer.
 */
static int load_own_filter(__u32 *jited_len)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD },
		{ },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int map, fd;

	map = bpf_map_create(BPF_MAP_TYPE_ARRAY, "code_vis", 4, 8, 1, NULL);
	if (map < 0)
		return -errno;
	insns[0].imm = map;
	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "code_vis", "GPL",
			   insns, 4, NULL);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*jited_len = info.jited_prog_len;
	close(fd);
	close(map);
	return 0;
}

/* The root side of a listener's run: a BPF program, an ftrace trampoline. */
static int code_vis_workload(void)
{
	struct ksym_abi *skel = ksym_abi__open_and_load();
	int err = 0;

	if (!skel)
		return -ENOENT;
	ksym_abi__destroy(skel);
	rmdir(INSTANCE);
	if (mkdir(INSTANCE, 0755) ||
	    write_str(INSTANCE "/set_ftrace_filter", "vfs_read", O_TRUNC) ||
	    write_str(INSTANCE "/current_tracer", "function", O_TRUNC))
		err = -EIO;
	write_str(INSTANCE "/current_tracer", "nop", O_TRUNC);
	if (rmdir(INSTANCE))
		err = -EIO;
	return err;
}

/*
 * A child keeps the capabilities of caps (AS_ROOT: stays root), opens an
 * attr.ksymbol_text event, system-wide or on itself (own: then loads its
 * own filter), and reports what it received while root (or itself) made
 * new text.
 */
static int code_vis_run(__u64 caps, bool own, struct code_seen *seen)
{
	int to_child[2], to_parent[2], status, err = 0;
	char go = 1;
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		struct code_seen me = { .err = 1 };
		struct rec_stream s;
		bool sent = false;

		if (caps != AS_ROOT && drop_to_nobody_caps(caps))
			goto out;
		me.err = 2;
		me.open_err = own ? rec_stream_open_self_ksymbol_text(&s, 64) :
			      rec_stream_open_ksymbol_text(&s, 64, false);
		if (me.open_err)
			goto out;
		me.err = 3;
		if (own ? load_own_filter(&me.jited_len) :
		    write(to_parent[1], &go, 1) != 1)
			goto out;
		sent = true;
		if (!own && read(to_child[0], &go, 1) != 1)
			goto out;
		me.err = 4;
		if (rec_stream_drain(&s))
			goto out;
		code_seen_count(&s, own ? "_code_vis" : "_ksym_abi_",
				&me.bpf_reg, &me.bpf_whole, &me.bpf_pokes);
		code_seen_count(&s, "ftrace_trampoline", &me.ool_reg,
				&me.ool_whole, &me.ool_pokes);
		me.text_pokes = s.text_pokes;
		me.err = 0;
out:
		/* The parent waits for the open before its workload. */
		if (!own && !sent && write(to_parent[1], &go, 1) != 1)
			_exit(1);
		if (write(to_parent[1], &me, sizeof(me)) != sizeof(me))
			_exit(1);
		_exit(0);
	}
	if (!own) {
		if (read(to_parent[0], &go, 1) != 1)
			err = -EIO;
		else
			err = code_vis_workload();
		if (write(to_child[1], &go, 1) != 1 && !err)
			err = -EIO;
	}
	if (read(to_parent[0], seen, sizeof(*seen)) != sizeof(*seen) && !err)
		err = -EIO;
	waitpid(pid, &status, 0);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
	return err;
}

/*
 * Who gets code bytes (attr.ksymbol_text): the code of a BPF program,
 * trampoline or dispatcher only an opener that could read it through
 * bpf_prog_info (CAP_SYS_ADMIN, for programs it did not load, and
 * bpf_dump_raw_ok(): kptr_restrict counts); the code of out-of-line text
 * (ftrace trampolines, kprobe pages) the openers that may have
 * attr.text_poke records (perf_allow_kernel()).  The ksymbol records
 * themselves go to whoever may see kernel addresses, as before; the
 * request for code never makes an open fail.
 */
FIXTURE(code_vis) {
	int kptr, paranoid, unpriv_bpf;
};

FIXTURE_VARIANT(code_vis) {
	__u64 caps;		/* kept by the nobody listener, or AS_ROOT */
	bool own;		/* a task event on its own program */
	int paranoid, kptr;
	int bpf_reg;		/* records of the program's functions */
	bool bpf_code;		/* all of their code, or none */
	bool ool_code;		/* the ftrace trampoline's code, or none */
};

/* An unprivileged loader's own socket filter, at each paranoia level. */
FIXTURE_VARIANT_ADD(code_vis, own_paranoid_minus_1) {
	.caps = 0, .own = true, .paranoid = -1, .bpf_reg = 1,
};

FIXTURE_VARIANT_ADD(code_vis, own_paranoid_0) {
	.caps = 0, .own = true, .paranoid = 0, .bpf_reg = 1,
};

FIXTURE_VARIANT_ADD(code_vis, own_paranoid_1) {
	.caps = 0, .own = true, .paranoid = 1, .bpf_reg = 1,
};

FIXTURE_VARIANT_ADD(code_vis, own_paranoid_2) {
	.caps = 0, .own = true, .paranoid = 2, .bpf_reg = 0,
};

/* System-wide listeners while root loads ksym_abi (three functions). */
FIXTURE_VARIANT_ADD(code_vis, unprivileged_paranoid_minus_1) {
	.caps = 0, .paranoid = -1, .bpf_reg = 3, .ool_code = true,
};

FIXTURE_VARIANT_ADD(code_vis, perfmon) {
	.caps = 1ULL << CAP_PERFMON, .paranoid = 2, .bpf_reg = 3,
	.ool_code = true,
};

FIXTURE_VARIANT_ADD(code_vis, bpf_perfmon) {
	.caps = 1ULL << CAP_BPF | 1ULL << CAP_PERFMON, .paranoid = 2,
	.bpf_reg = 3, .ool_code = true,
};

FIXTURE_VARIANT_ADD(code_vis, root_kptr_restrict_2) {
	.caps = AS_ROOT, .paranoid = 2, .kptr = 2, .bpf_reg = 3,
	.ool_code = true,
};

FIXTURE_VARIANT_ADD(code_vis, root) {
	.caps = AS_ROOT, .paranoid = 2, .bpf_reg = 3, .bpf_code = true,
	.ool_code = true,
};

FIXTURE_SETUP(code_vis)
{
	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
	if (geteuid())
		SKIP(return, "needs root");
	self->kptr = sysctl_get(KPTR);
	self->paranoid = sysctl_get(PARANOID);
	self->unpriv_bpf = sysctl_get(UNPRIV_BPF);
	ASSERT_NE(-1000, self->kptr);
	ASSERT_NE(-1000, self->paranoid);
	ASSERT_NE(1, self->unpriv_bpf)
		TH_LOG("unprivileged BPF is disabled for good; boot without it");
	ASSERT_EQ(0, sysctl_set(UNPRIV_BPF, 0));
	ASSERT_EQ(0, sysctl_set(KPTR, variant->kptr));
	ASSERT_EQ(0, sysctl_set(PARANOID, variant->paranoid));
}

FIXTURE_TEARDOWN(code_vis)
{
	sysctl_set(KPTR, self->kptr);
	sysctl_set(PARANOID, self->paranoid);
	sysctl_set(UNPRIV_BPF, self->unpriv_bpf);
}

TEST_F(code_vis, code)
{
	struct code_seen seen = {};

	ASSERT_EQ(0, code_vis_run(variant->caps, variant->own, &seen));
	ASSERT_EQ(0, seen.open_err);
	ASSERT_EQ(0, seen.err);
	EXPECT_EQ(variant->bpf_reg, seen.bpf_reg);
	EXPECT_EQ(variant->bpf_code ? variant->bpf_reg : 0, seen.bpf_whole);
	if (!variant->bpf_code)
		EXPECT_EQ(0, seen.bpf_pokes);
	if (variant->own) {
		/* Neither does bpf_prog_info give it the image. */
		EXPECT_EQ(0, seen.jited_len);
		EXPECT_EQ(0, seen.text_pokes);
	} else {
		EXPECT_EQ(1, seen.ool_reg);
		EXPECT_EQ(variant->ool_code, seen.ool_whole);
		if (!variant->ool_code)
			EXPECT_EQ(0, seen.ool_pokes);
	}
	TH_LOG("functions %d (%d with code, %d pokes), ftrace trampolines %d (%d with code)",
	       seen.bpf_reg, seen.bpf_whole, seen.bpf_pokes, seen.ool_reg,
	       seen.ool_whole);
	TH_LOG("text poke records in all: %d", seen.text_pokes);
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
 * attr.ksymbol_text needs attr.ksymbol, and nothing more: what code an
 * event gets is decided per kind of text from its opener's rights
 * (code_vis), so at perf_event_paranoid 2 an unprivileged process opens
 * the same task event with the bit as without it (perf record asks for it
 * whenever it samples the kernel, and falls back to user space only).
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

	if (!kernel_has_ksymbol_text())
		SKIP(return, "no attr.ksymbol_text in this kernel");
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
		if (open_attr(&attr))
			_exit(3);
		attr.ksymbol_text = 0;
		_exit(open_attr(&attr) ? 4 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, sysctl_set(PARANOID, paranoid));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
