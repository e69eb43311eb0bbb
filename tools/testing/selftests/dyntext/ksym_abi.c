// SPDX-License-Identifier: GPL-2.0
/*
 * The ksymbol/BPF_EVENT ABI, as kernels since 5.1 emit it: load a BPF
 * program with two subprograms, unload it, and check every record a
 * system-wide side-band event receives against bpf_prog_info and
 * /proc/kallsyms.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <perf/evlist.h>
#include <perf/mmap.h>

#include "../kselftest_harness.h"
#include "records.h"
#include "ksym_abi.skel.h"
#include "ksym_iter.skel.h"

#define NR_FUNCS 3

/*
 * The first KSYMBOL record from @from on for @addr, @flags and @name.  The
 * name matters: libbpf loads and frees probe programs before the skeleton's,
 * whose text may then reuse a probe's address.
 */
static const struct rec *find_ksym(const struct rec_stream *s, size_t from,
				   __u64 addr, __u16 flags, const char *name,
				   size_t *idx)
{
	size_t i;

	for (i = from; i < s->nr; i++) {
		const struct rec *r = &s->recs[i];

		if (r->type == PERF_RECORD_KSYMBOL && r->addr == addr &&
		    r->flags == flags && !strcmp(r->name, name)) {
			*idx = i;
			return r;
		}
	}
	return NULL;
}

FIXTURE(ksym_abi) {
	struct rec_stream s;
	struct ksym_abi *skel;
	struct prog_view v;
};

FIXTURE_SETUP(ksym_abi)
{
	if (geteuid())
		SKIP(return, "needs root");
	/* Order is asserted: keep every record in one CPU's buffer. */
	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
	self->skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, prog_view_get(bpf_program__fd(self->skel->progs.ksym_abi_main),
				   &self->v));
	ASSERT_EQ(NR_FUNCS, self->v.nr);
}

FIXTURE_TEARDOWN(ksym_abi)
{
	ksym_abi__destroy(self->skel);
	rec_stream_close(&self->s);
}

/*
 * One KSYMBOL register per function, in order, with bpf_prog_info's address
 * and length and the kernel's name, then one BPF_EVENT PROG_LOAD; after the
 * unload the same in reverse: UNREGISTER per function, then PROG_UNLOAD.
 */
TEST_F(ksym_abi, load_unload_records)
{
	struct prog_view *v = &self->v;
	size_t i, at = 0, load_at = 0, unload_at = 0, idx = 0;
	char hex[2 * BPF_TAG_SIZE + 1];

	ASSERT_EQ(0, rec_stream_drain(&self->s));
	ASSERT_EQ(0, self->s.lost);

	for (i = 0; i < v->nr; i++) {
		const struct rec *r;

		ASSERT_EQ(1, rec_count_ksym(&self->s, v->addr[i], 0, v->name[i]))
			TH_LOG("register records for %s", v->name[i]);
		r = find_ksym(&self->s, at, v->addr[i], 0, v->name[i], &idx);
		ASSERT_NE(NULL, r) TH_LOG("%s out of order", v->name[i]);
		at = idx;
		EXPECT_EQ(v->len[i], r->len);
		EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_BPF, r->ksym_type);
	}
	ASSERT_EQ(1, rec_count_bpf(&self->s, v->id, PERF_BPF_EVENT_PROG_LOAD, &load_at));
	EXPECT_GT(load_at, at);
	EXPECT_EQ(0, self->s.recs[load_at].bpf_flags);
	EXPECT_EQ(0, memcmp(v->tag, self->s.recs[load_at].tag, BPF_TAG_SIZE));
	EXPECT_EQ(0, rec_count_bpf(&self->s, v->id, PERF_BPF_EVENT_PROG_UNLOAD, &idx));

	ksym_abi__destroy(self->skel);
	self->skel = NULL;
	ASSERT_EQ(0, rec_stream_drain(&self->s));
	ASSERT_EQ(0, self->s.lost);

	at = load_at;
	for (i = 0; i < v->nr; i++) {
		const struct rec *r;

		ASSERT_EQ(1, rec_count_ksym(&self->s, v->addr[i],
					    PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER,
					    v->name[i]));
		r = find_ksym(&self->s, at, v->addr[i],
			      PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER, v->name[i],
			      &idx);
		ASSERT_NE(NULL, r) TH_LOG("unregister of %s out of order", v->name[i]);
		at = idx;
		EXPECT_EQ(v->len[i], r->len);
		EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_BPF, r->ksym_type);
	}
	ASSERT_EQ(1, rec_count_bpf(&self->s, v->id, PERF_BPF_EVENT_PROG_UNLOAD, &unload_at));
	EXPECT_GT(unload_at, at);
	EXPECT_EQ(0, memcmp(v->tag, self->s.recs[unload_at].tag, BPF_TAG_SIZE));
	tag_hex(v->tag, hex);
	TH_LOG("prog id %u tag %s: %zu records", v->id, hex, self->s.nr);
}

/* Each function's /proc/kallsyms line is exactly "ADDR t NAME\t[bpf]". */
TEST_F(ksym_abi, kallsyms_lines)
{
	char line[1024];
	__u32 i;

	for (i = 0; i < self->v.nr; i++) {
		snprintf(line, sizeof(line), "%016llx t %s\t[bpf]\n",
			 (unsigned long long)self->v.addr[i], self->v.name[i]);
		EXPECT_EQ(1, kallsyms_count_line(line)) TH_LOG("missing: %s", line);
	}
	ksym_abi__destroy(self->skel);
	self->skel = NULL;
	for (i = 0; i < self->v.nr; i++) {
		snprintf(line, sizeof(line), "%016llx t %s\t[bpf]\n",
			 (unsigned long long)self->v.addr[i], self->v.name[i]);
		EXPECT_EQ(0, kallsyms_count_line(line)) TH_LOG("stale: %s", line);
	}
}

/*
 * A return address equal to the end of a BPF image belongs to that image:
 * its last instruction can be a call (stable fix 66d9111f3517, "bpf:
 * Detect IP == ksym.end as part of BPF program").  The unwinders ask
 * kernel_text_address() of every return address and %pS names it with
 * kallsyms_lookup(): both must take ksym.end for the program's.  (The
 * 6.1 x86 JIT ends every image with the epilogue, so no program here can
 * end with a call; the lookups are what the unwinder sees either way.)
 */
TEST_F(ksym_abi, return_address_at_end)
{
	char name[1024], want[1024];
	__u32 i;
	int is_text;

	ASSERT_EQ(0, text_lookup_start());
	for (i = 0; i < self->v.nr; i++) {
		unsigned long long end = self->v.addr[i] + self->v.len[i];

		ASSERT_EQ(0, text_lookup(end, &is_text, name, sizeof(name)));
		snprintf(want, sizeof(want), "%s+%#x/%#x", self->v.name[i],
			 self->v.len[i], self->v.len[i]);
		EXPECT_EQ(1, is_text) TH_LOG("kernel_text_address(%s end)",
					     self->v.name[i]);
		EXPECT_STREQ(want, name);
		ASSERT_EQ(0, text_lookup(end - 1, &is_text, name, sizeof(name)));
		snprintf(want, sizeof(want), "%s+%#x/%#x", self->v.name[i],
			 self->v.len[i] - 1, self->v.len[i]);
		EXPECT_STREQ(want, name);
	}
	EXPECT_EQ(0, text_lookup_stop());
}

/*
 * Join as perf does: for each PROG_LOAD record, look the program up by id,
 * and find the ksymbol records at its jited_ksyms addresses.
 */
TEST_F(ksym_abi, join_by_address)
{
	struct prog_view w;
	size_t i, load_at = 0, idx = 0;
	int fd;

	ASSERT_EQ(0, rec_stream_drain(&self->s));
	ASSERT_EQ(1, rec_count_bpf(&self->s, self->v.id, PERF_BPF_EVENT_PROG_LOAD, &load_at));
	fd = bpf_prog_get_fd_by_id(self->s.recs[load_at].id);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, prog_view_get(fd, &w));
	close(fd);
	ASSERT_EQ(NR_FUNCS, w.nr);
	ASSERT_EQ(0, memcmp(w.tag, self->s.recs[load_at].tag, BPF_TAG_SIZE));
	for (i = 0; i < w.nr; i++) {
		const struct rec *r = find_ksym(&self->s, 0, w.addr[i], 0,
						   w.name[i], &idx);

		ASSERT_NE(NULL, r);
		EXPECT_LT(idx, load_at);
		EXPECT_EQ(w.len[i], r->len);
	}
	/* The main program's symbol is the program's first jited ksym. */
	EXPECT_EQ(bpf_program__fd(self->skel->progs.ksym_abi_main) >= 0, 1);
	EXPECT_NE(NULL, strstr(w.name[0], "_ksym_abi_main"));
	EXPECT_NE(NULL, strstr(w.name[1], "_ksym_abi_sub_one"));
	EXPECT_NE(NULL, strstr(w.name[2], "_ksym_abi_sub_two"));
}

/*
 * The records the kernel writes while a reader is between its last
 * perf_mmap__read_event() and perf_mmap__read_done() must be there on the
 * next read.  Every reader here (and perf's side-band thread) follows that
 * loop; libperf moved the read position to the head in
 * perf_mmap__read_done() and lost them without a trace, until "libperf:
 * Don't skip unread events in perf_mmap__read_done()" (a live-stream check
 * saw an unregister of a region never registered).  Here the records of a
 * whole program load fall into that
 * window.
 */
/*
 * An iter/ksym BPF program built against Linux 6.1's struct kallsym_iter
 * loads (every field it reads is still there, pos_bpf_end included) and
 * shows each function in the BPF section with bpf_prog_info's address and
 * the kernel's name, and a core function in the core section at its
 * /proc/kallsyms address.
 */
TEST_F(ksym_abi, ksym_iter)
{
	unsigned long long vfs_read = 0;
	struct ksym_iter *it;
	struct bpf_link *link;
	size_t len = 0, alloc = 1 << 20;
	char *out, want[1024];
	ssize_t n;
	__u32 i;
	int fd;

	it = ksym_iter__open_and_load();
	ASSERT_NE(NULL, it) TH_LOG("iter/ksym program did not load");
	link = bpf_program__attach_iter(it->progs.ksym_iter_dump, NULL);
	ASSERT_NE(NULL, link);
	fd = bpf_iter_create(bpf_link__fd(link));
	ASSERT_LE(0, fd);
	out = malloc(alloc);
	ASSERT_NE(NULL, out);
	for (;;) {
		if (len + 4096 > alloc) {
			alloc *= 2;
			out = realloc(out, alloc);
			ASSERT_NE(NULL, out);
		}
		n = read(fd, out + len, alloc - len - 1);
		ASSERT_LE(0, n);
		if (!n)
			break;
		len += n;
	}
	out[len] = 0;
	close(fd);

	for (i = 0; i < self->v.nr; i++) {
		const char *at;

		snprintf(want, sizeof(want), "\n%llx t %s [bpf] BPF\n",
			 (unsigned long long)self->v.addr[i], self->v.name[i]);
		at = strstr(out, want);
		EXPECT_NE(NULL, at) TH_LOG("missing: %s", want + 1);
		if (at)
			EXPECT_EQ(NULL, strstr(at + 1, want));
	}
	ASSERT_EQ(1, kallsyms_sym_count("vfs_read", "", 'T', &vfs_read, NULL));
	snprintf(want, sizeof(want), "\n%llx T vfs_read [] CORE\n", vfs_read);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("missing: %s", want + 1);

	free(out);
	bpf_link__destroy(link);
	ksym_iter__destroy(it);
}

TEST(libperf_read_done_keeps_records)
{
	struct rec_stream s;
	struct perf_mmap *map;
	union perf_event *ev;
	struct ksym_abi *skel;
	struct prog_view v;
	size_t i, idx = 0;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open(&s, 64));
	perf_evlist__for_each_mmap(s.evlist, map, false) {
		if (perf_mmap__read_init(map) < 0)
			continue;
		while ((ev = perf_mmap__read_event(map)) != NULL)
			perf_mmap__consume(map);
	}
	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, prog_view_get(bpf_program__fd(skel->progs.ksym_abi_main),
				   &v));
	ASSERT_EQ(NR_FUNCS, v.nr);
	perf_evlist__for_each_mmap(s.evlist, map, false)
		perf_mmap__read_done(map);

	ASSERT_EQ(0, rec_stream_drain(&s));
	EXPECT_EQ(0, s.lost);
	for (i = 0; i < v.nr; i++) {
		const struct rec *r = find_ksym(&s, 0, v.addr[i], 0, v.name[i],
						   &idx);

		ASSERT_NE(NULL, r) TH_LOG("register record of %s lost", v.name[i]);
		EXPECT_EQ(v.len[i], r->len);
	}
	EXPECT_EQ(1, rec_count_bpf(&s, v.id, PERF_BPF_EVENT_PROG_LOAD, NULL));
	ksym_abi__destroy(skel);
	rec_stream_close(&s);
}

TEST_HARNESS_MAIN
