// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_EVENT_IOC_KSYMBOL_REPLAY: the dynamic text that exists already,
 * replayed into a perf ring buffer in the same stream as the live records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "records.h"
#include "ksym_abi.skel.h"
#include "replay_group.skel.h"

#define NR_PROGS	20
#define REPLAY		PERF_RECORD_KSYMBOL_FLAGS_REPLAY
#define UNREG		PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER

/* The lines of /proc/kallsyms for dynamic text ([bpf], [__builtin__*]). */
static int dyn_lines(struct ksym_line **out)
{
	return kallsyms_lines(kallsyms_dynamic_tag, out);
}

/*
 * Replay into the first CPU's buffer, resuming until complete; *end_idx
 * gets the index of the END marker.
 */
static long replay(struct rec_stream *s, size_t *end_idx)
{
	size_t i, from = s->nr;
	long ret = rec_replay(s, 0, NULL, NULL);

	if (ret < 0)
		return ret;
	for (i = from; i < s->nr; i++) {
		if (rec_is_marker(&s->recs[i], PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END)) {
			*end_idx = i;
			return ret;
		}
	}
	return -ENOENT;
}

/* What a consumer believes present: applied in stream order. */
struct view {
	struct { unsigned long long addr; __u32 len; char name[KSYM_NAME_LEN]; } *r;
	size_t nr;
	size_t live_dup;	/* a live register for a region already present */
	size_t mismatch;	/* a replay record that contradicts the view */
	size_t confirmed;	/* a replay record for a region already present */
	size_t unknown_unreg;	/* unregister of a region never seen */
};

static long view_find(struct view *v, unsigned long long addr)
{
	size_t i;

	for (i = 0; i < v->nr; i++)
		if (v->r[i].addr == addr)
			return i;
	return -1;
}

static void view_apply(struct view *v, const struct rec *r)
{
	long i;

	if (r->type != PERF_RECORD_KSYMBOL ||
	    r->ksym_type == PERF_RECORD_KSYMBOL_TYPE_REPLAY_MARK ||
	    r->ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE)
		return;
	i = view_find(v, r->addr);
	if (r->flags & UNREG) {
		if (i < 0) {
			v->unknown_unreg++;
			return;
		}
		v->r[i] = v->r[--v->nr];
		return;
	}
	if (i >= 0) {
		if (!(r->flags & REPLAY))
			v->live_dup++;
		else if (v->r[i].len != r->len || strcmp(v->r[i].name, r->name))
			v->mismatch++;
		else
			v->confirmed++;
		return;
	}
	v->r = realloc(v->r, (v->nr + 1) * sizeof(*v->r));
	if (!v->r)
		abort();
	v->r[v->nr].addr = r->addr;
	v->r[v->nr].len = r->len;
	snprintf(v->r[v->nr].name, sizeof(v->r[v->nr].name), "%s", r->name);
	v->nr++;
}

/* A CPU-0 event of its own: ksymbol records only, no sample_id. */
struct raw_rb {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t len;
	const __u64 *addrs;	/* sum the ksymbol records at these ... */
	int nr_addrs;
	size_t bytes;		/* ... here, */
	int at_addrs;		/* count them, */
	int partial;		/* those flagged REPLAY_PARTIAL, */
	__u64 later;		/* and count the records at this address */
	int at_later;
	int ends;		/* END markers */
	bool with_tid;		/* sample_id of PERF_SAMPLE_TID: count */
	int tid;		/* the replay records of this thread, */
	int replay_tid;
	int replay_other;	/* and of any other */
};

/* A ksymbol event on @cpu, mapped with @pages of data. */
static int raw_open_attr(struct raw_rb *r, struct perf_event_attr *attr,
			 int cpu, unsigned int pages, int prot)
{
	long ps = sysconf(_SC_PAGESIZE);

	attr->type = PERF_TYPE_SOFTWARE;
	attr->size = sizeof(*attr);
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->ksymbol = 1;
	memset(r, 0, sizeof(*r));
	r->fd = syscall(__NR_perf_event_open, attr, -1, cpu, -1, 0);
	if (r->fd < 0)
		return -errno;
	r->len = (pages + 1) * ps;
	r->pg = mmap(NULL, r->len, prot, MAP_SHARED, r->fd, 0);
	if (r->pg == MAP_FAILED) {
		close(r->fd);
		return -errno;
	}
	return 0;
}

static int raw_open(struct raw_rb *r, unsigned int pages, int prot,
		    bool backward)
{
	struct perf_event_attr attr = { .write_backward = backward };

	return raw_open_attr(r, &attr, 0, pages, prot);
}

static void raw_close(struct raw_rb *r)
{
	munmap(r->pg, r->len);
	close(r->fd);
}

/* A ksymbol event on @cpu whose records carry the writer's pid and tid. */
static int raw_open_tid(struct raw_rb *r, int cpu, unsigned int pages)
{
	struct perf_event_attr attr = {
		.sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TID,
	};
	int ret = raw_open_attr(r, &attr, cpu, pages, PROT_READ | PROT_WRITE);

	r->with_tid = true;
	r->tid = gettid();
	return ret;
}

/* Consume everything, adding up the records at r->addrs. */
static int raw_drain(void *arg)
{
	struct raw_rb *r = arg;
	const char *data = (const char *)r->pg + r->pg->data_offset;
	__u64 size = r->pg->data_size;
	__u64 head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = r->pg->data_tail;
	char rec[64 * 1024];

	while (tail < head) {
		struct perf_event_header *h = (void *)rec;
		__u64 i, addr;
		__u16 flags;
		int j;

		for (i = 0; i < sizeof(*h); i++)
			rec[i] = data[(tail + i) % size];
		if (h->size < sizeof(*h) || h->size > sizeof(rec))
			return -1;
		for (i = sizeof(*h); i < h->size; i++)
			rec[i] = data[(tail + i) % size];
		memcpy(&addr, rec + sizeof(*h), sizeof(addr));
		/* addr, len, ksym_type, flags */
		memcpy(&flags, rec + sizeof(*h) + 14, sizeof(flags));
		for (j = 0; h->type == PERF_RECORD_KSYMBOL && j < r->nr_addrs; j++)
			if (addr == r->addrs[j]) {
				r->bytes += h->size;
				r->at_addrs++;
				r->partial += !!(flags & PERF_RECORD_KSYMBOL_FLAGS_REPLAY_PARTIAL);
			}
		if (h->type == PERF_RECORD_KSYMBOL) {
			r->at_later += r->later && addr == r->later;
			r->ends += !!(flags & PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END);
		}
		/* The sample_id: pid, tid last. */
		if (r->with_tid && h->type == PERF_RECORD_KSYMBOL &&
		    (flags & PERF_RECORD_KSYMBOL_FLAGS_REPLAY)) {
			__u32 tid;

			memcpy(&tid, rec + h->size - sizeof(tid), sizeof(tid));
			if ((int)tid == r->tid)
				r->replay_tid++;
			else
				r->replay_other++;
		}
		tail += h->size;
	}
	__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
	return 0;
}

/* Replay BPF text into @r, draining, at most @max calls. */
static long raw_replay(struct raw_rb *r, unsigned int max)
{
	struct perf_ksymbol_replay arg = {
		.size = sizeof(arg),
		.types = 1 << PERF_RECORD_KSYMBOL_TYPE_BPF,
	};
	unsigned int n;
	long ret = -ENOSPC;

	for (n = 0; n < max && ret == -ENOSPC; n++) {
		ret = ioctl(r->fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &arg);
		if (ret < 0)
			ret = -errno;
		if (raw_drain(r))
			return -EIO;
	}
	return ret;
}

static __u64 ts_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * A whole replay of every type into @r, draining between calls; adds the
 * calls' own CPU time and wall time (not the drains') to @cpu and @wall.
 */
static long raw_replay_timed(struct raw_rb *r, __u64 *cpu, __u64 *wall,
			     unsigned int *calls)
{
	struct perf_ksymbol_replay arg = { .size = sizeof(arg) };
	__u64 c0, w0;
	long ret;

	*calls = 0;
	do {
		w0 = ts_ns(CLOCK_MONOTONIC);
		c0 = ts_ns(CLOCK_THREAD_CPUTIME_ID);
		ret = ioctl(r->fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &arg);
		if (ret < 0)
			ret = -errno;
		++*calls;
		*cpu += ts_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		*wall += ts_ns(CLOCK_MONOTONIC) - w0;
		if (raw_drain(r))
			return -EIO;
	} while ((ret >= 0 || ret == -ENOSPC) && arg.cursor && *calls < 100000);
	return ret;
}

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

FIXTURE(replay) {
	struct rec_stream s;
	struct ksym_abi *skel[NR_PROGS];
	int kptr, paranoid;
};

FIXTURE_SETUP(replay)
{
	int i;

	if (geteuid())
		SKIP(return, "needs root");
	if (!kernel_has_ksymbol_replay())
		SKIP(return, "no PERF_EVENT_IOC_KSYMBOL_REPLAY in this kernel");
	self->kptr = sysctl_get(KPTR);
	self->paranoid = sysctl_get(PARANOID);
	for (i = 0; i < NR_PROGS; i++) {
		self->skel[i] = ksym_abi__open_and_load();
		ASSERT_NE(NULL, self->skel[i]);
	}
}

FIXTURE_TEARDOWN(replay)
{
	int i;

	rec_stream_close(&self->s);
	for (i = 0; i < NR_PROGS; i++)
		ksym_abi__destroy(self->skel[i]);
	sysctl_set(KPTR, self->kptr);
	sysctl_set(PARANOID, self->paranoid);
}

/*
 * With nothing changing: one replay record per line of dynamic text in
 * /proc/kallsyms (same address and name), the ioctl's count, a PROG_LOAD
 * after the functions of each program, and the end marker last.  60 s, as
 * room_for_live_records and without_sample_id_all: four times the 7.8 s
 * they took on a debug kernel under emulation, more than the harness's
 * default of 30 s.
 */
TEST_F_TIMEOUT(replay, matches_kallsyms, 60)
{
	struct ksym_line *lines = NULL;
	size_t i, end = 0, nr_replay = 0;
	int nlines, j, k;
	long ret;

	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
	nlines = dyn_lines(&lines);
	ASSERT_GE(nlines, 3 * NR_PROGS);
	ret = replay(&self->s, &end);
	ASSERT_GE(ret, 0) TH_LOG("replay: %s", strerror(-ret));
	for (i = 0; i < self->s.nr; i++) {
		const struct rec *r = &self->s.recs[i];

		if (r->type == PERF_RECORD_KSYMBOL && r->flags == REPLAY) {
			nr_replay++;
			EXPECT_LT(i, end);
		}
	}
	EXPECT_EQ(ret, nr_replay);
	/* Nothing is loaded but the regions of /proc/kallsyms. */
	EXPECT_EQ(nlines, nr_replay);
	for (j = 0; j < nlines; j++) {
		const struct rec *r = NULL;
		int found = 0;

		for (i = 0; i < self->s.nr; i++) {
			if (self->s.recs[i].type == PERF_RECORD_KSYMBOL &&
			    self->s.recs[i].flags == REPLAY &&
			    self->s.recs[i].addr == lines[j].addr) {
				r = &self->s.recs[i];
				found++;
			}
		}
		EXPECT_EQ(1, found) TH_LOG("%s", lines[j].name);
		if (r)
			EXPECT_STREQ(lines[j].name, r->name);
	}
	/* Each program: its three functions, then its PROG_LOAD. */
	for (k = 0; k < NR_PROGS; k++) {
		int fd = bpf_program__fd(self->skel[k]->progs.ksym_abi_main);
		struct bpf_prog_info info;
		__u64 ksyms[3];
		size_t load_at = 0;

		ASSERT_EQ(3, bpf_prog_funcs(fd, &info, ksyms, NULL, 3));
		ASSERT_EQ(1, rec_count_bpf(&self->s, info.id,
					   PERF_BPF_EVENT_PROG_LOAD, &load_at));
		EXPECT_EQ(PERF_BPF_EVENT_FLAGS_REPLAY, self->s.recs[load_at].bpf_flags);
		EXPECT_EQ(0, memcmp(info.tag, self->s.recs[load_at].tag, BPF_TAG_SIZE));
		for (j = 0; j < 3; j++) {
			for (i = 0; i < self->s.nr; i++)
				if (self->s.recs[i].type == PERF_RECORD_KSYMBOL &&
				    self->s.recs[i].addr == ksyms[j])
					break;
			ASSERT_LT(i, self->s.nr);
			EXPECT_LT(i, load_at);
		}
	}
	EXPECT_EQ(0, self->s.lost);
	TH_LOG("%ld regions replayed", ret);
	free(lines);
}

/* Load n trivial programs (as root: listed); returns their fds. */
static int *load_trivial(int n)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct rlimit rl = { n + 256, n + 256 };
	int *fds = calloc(n, sizeof(*fds)), i;

	if (!fds || setrlimit(RLIMIT_NOFILE, &rl))
		return NULL;
	for (i = 0; i < n; i++) {
		fds[i] = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "trivial",
				       "GPL", insns, 2, NULL);
		if (fds[i] < 0)
			return NULL;
	}
	return fds;
}

/* The replay's drain: waits for a live record after the first resume. */
struct live_drain {
	struct rec_stream *s;
	size_t from;		/* the first record of this replay */
	unsigned int calls;
	size_t live;		/* live records after BEGIN */
};

static size_t live_since(const struct rec_stream *s, size_t from)
{
	size_t i, n = 0;
	bool begun = false;

	for (i = from; i < s->nr; i++) {
		if (rec_is_marker(&s->recs[i], PERF_RECORD_KSYMBOL_FLAGS_REPLAY_BEGIN))
			begun = true;
		else if (begun)
			n += s->recs[i].type == PERF_RECORD_BPF_EVENT ?
		     !(s->recs[i].bpf_flags & PERF_BPF_EVENT_FLAGS_REPLAY) :
		     !(s->recs[i].flags & REPLAY);
	}
	return n;
}

static int live_drain(void *arg)
{
	struct live_drain *d = arg;
	int tries;

	d->calls++;
	for (tries = 0; tries < 1000; tries++) {
		if (rec_stream_drain(d->s))
			return -1;
		d->live = live_since(d->s, d->from);
		if (d->live || d->calls > 1)
			return 0;
		usleep(10000);
	}
	return -1;
}

/*
 * Loaders and unloaders run while the consumer enables its event and
 * replays 3,000 programs into a 64-page buffer: the replay stops when the
 * buffer is half full and resumes after the drain, and between its calls
 * live records arrive (the first drain waits for one).  Applying the
 * records in stream order gives exactly the dynamic text of /proc/kallsyms
 * once the loaders stop: no record lost, no live record announces a region
 * that is present, no replay record contradicts.  (The buffer holds all the
 * live records the loaders cause, so nothing is lost however late the
 * consumer runs.)
 */
TEST_F_TIMEOUT(replay, concurrent_loaders, 120)
{
	const int n = test_count(3000), loads = test_count(60);
	/* Room for every live record, but not for the replay in one call. */
	const unsigned int pages = n < 3000 ? 8 : 64;
	struct ksym_line *lines = NULL;
	struct live_drain d = { .s = &self->s };
	struct view v = {};
	int go[2], done[2], c, nlines, j, *fds;
	pid_t pid[3];
	bool begun;
	size_t i;
	long ret;

	fds = load_trivial(n);
	ASSERT_NE(NULL, fds);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	for (c = 0; c < 3; c++) {
		pid[c] = fork();
		ASSERT_GE(pid[c], 0);
		if (!pid[c]) {
			struct ksym_abi *ring[4] = {};
			char b;
			int k;

			/* Gone with the test, also when it fails early. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(go[1]);
			if (read(go[0], &b, 1) != 1)
				_exit(1);
			/* Load and unload, keeping up to four loaded. */
			for (k = 0; k < loads; k++) {
				ksym_abi__destroy(ring[k % 4]);
				ring[k % 4] = ksym_abi__open_and_load();
				if (!ring[k % 4])
					_exit(2);
			}
			if (write(done[1], "d", 1) != 1)
				_exit(3);
			pause();	/* keep the last four loaded */
			_exit(0);
		}
	}
	close(go[0]);
	ASSERT_EQ(0, rec_stream_open(&self->s, pages));
	ASSERT_EQ(3, write(go[1], "ggg", 3));
	d.from = self->s.nr;
	ret = ksym_replay(rec_stream_fd(&self->s), 0, live_drain, &d, NULL,
			  NULL);
	ASSERT_GE(ret, 0) TH_LOG("replay: %s", strerror(-ret));
	EXPECT_LE(2, d.calls);
	/* Live records between BEGIN and END. */
	for (i = d.from, d.live = 0, begun = false; i < self->s.nr; i++) {
		const struct rec *r = &self->s.recs[i];

		if (rec_is_marker(r, PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END))
			break;
		if (rec_is_marker(r, PERF_RECORD_KSYMBOL_FLAGS_REPLAY_BEGIN))
			begun = true;
		else if (begun)
			d.live += r->type == PERF_RECORD_KSYMBOL &&
				  !(r->flags & REPLAY);
	}
	EXPECT_LT(0, d.live);
	for (c = 0; c < 3; c++) {
		char b;

		ASSERT_EQ(1, read(done[0], &b, 1));
	}
	/*
	 * The loaders' last unloads free their programs later (RCU, a
	 * work item), and a region's unregister record follows its removal
	 * from /proc/kallsyms: until then the stream has more regions than
	 * kallsyms, never fewer (nothing loads now).  Poll until the counts
	 * agree, up to 10 s.
	 */
	for (j = 0, i = 0; ; j++) {
		ASSERT_EQ(0, rec_stream_drain(&self->s));
		for (; i < self->s.nr; i++)
			view_apply(&v, &self->s.recs[i]);
		free(lines);
		lines = NULL;
		nlines = dyn_lines(&lines);
		ASSERT_LE(0, nlines);
		if ((size_t)nlines == v.nr || j == 1000)
			break;
		usleep(10000);
	}
	ASSERT_EQ(0, self->s.lost);
	ASSERT_GE(nlines, n + 3 * (NR_PROGS + 12));
	EXPECT_EQ(0, v.live_dup);
	EXPECT_EQ(0, v.mismatch);
	EXPECT_EQ(nlines, v.nr);
	for (j = 0; j < nlines; j++) {
		long k = view_find(&v, lines[j].addr);

		if (k < 0 || strcmp(lines[j].name, v.r[k].name)) {
			EXPECT_LE(0, k) TH_LOG("missing: %s", lines[j].name);
			if (k >= 0)
				EXPECT_STREQ(lines[j].name, v.r[k].name);
			break;
		}
	}
	TH_LOG("%zu records, %u calls, %zu live records during the replay",
	       self->s.nr, d.calls, d.live);
	TH_LOG("%ld replayed by the last call, %zu confirmed, %zu present",
	       ret, v.confirmed, v.nr);
	TH_LOG("%zu unregister records of regions not seen before",
	       v.unknown_unreg);
	for (c = 0; c < 3; c++) {
		kill(pid[c], SIGKILL);
		waitpid(pid[c], NULL, 0);
	}
	for (j = 0; j < n; j++)
		close(fds[j]);
	free(fds);
	free(v.r);
	free(lines);
}

/*
 * A one-page ring buffer and 10,000 programs: the replay resumes where the
 * buffer filled up, hundreds of times, and completes with every region of
 * /proc/kallsyms exactly once, between one BEGIN and one END marker, and
 * with no record counted as lost.
 */
TEST_F_TIMEOUT(replay, one_page_buffer_resumes, 120)
{
	const int n = test_count(10000);
	struct ksym_line *lines = NULL;
	unsigned int calls = 0;
	size_t i, replayed = 0, begin = 0, end = 0;
	int *fds, nlines, j;
	__u64 seq = 0;
	long ret;

	fds = load_trivial(n);
	ASSERT_NE(NULL, fds);
	ASSERT_EQ(0, rec_stream_open(&self->s, 1));
	ret = rec_replay(&self->s, 0, &calls, &seq);
	ASSERT_LE(0, ret) TH_LOG("replay: %s", strerror(-ret));
	EXPECT_LT(n / 100, calls);
	EXPECT_EQ(0, self->s.lost);
	for (i = 0; i < self->s.nr; i++) {
		const struct rec *r = &self->s.recs[i];

		begin += rec_is_marker(r, PERF_RECORD_KSYMBOL_FLAGS_REPLAY_BEGIN);
		if (rec_is_marker(r, PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END)) {
			end++;
			EXPECT_EQ(seq, r->addr);
		}
		replayed += r->type == PERF_RECORD_KSYMBOL && r->flags == REPLAY;
	}
	EXPECT_EQ(1, begin);
	EXPECT_EQ(1, end);
	nlines = dyn_lines(&lines);
	ASSERT_LE(n + 3 * NR_PROGS, nlines);
	EXPECT_EQ(nlines, replayed);
	for (j = 0; j < nlines; j++) {
		int found = 0;

		for (i = 0; i < self->s.nr; i++)
			found += self->s.recs[i].type == PERF_RECORD_KSYMBOL &&
				 self->s.recs[i].flags == REPLAY &&
				 self->s.recs[i].addr == lines[j].addr;
		if (found != 1) {
			EXPECT_EQ(1, found) TH_LOG("%s", lines[j].name);
			break;
		}
	}
	TH_LOG("%ld regions in the last of %u calls, %zu replayed", ret,
	       calls, replayed);
	for (j = 0; j < n; j++)
		close(fds[j]);
	free(fds);
	free(lines);
}

/*
 * A replay that stopped on a full buffer (-ENOSPC) leaves half of it to the
 * live records: a program loaded before the consumer drains is announced,
 * nothing is lost.  (Filled to the brim, the buffer would lose them.)
 */
TEST_F_TIMEOUT(replay, room_for_live_records, 60)
{
	struct perf_ksymbol_replay r = { .size = sizeof(r) };
	struct ksym_abi *skel;
	struct bpf_prog_info info;
	__u64 ksyms[3];
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	ASSERT_EQ(0, rec_stream_open(&self->s, 1));
	/* The first event is CPU 0's: the replay goes to its buffer. */
	EXPECT_EQ(-1, ioctl(rec_stream_fd(&self->s),
			    PERF_EVENT_IOC_KSYMBOL_REPLAY, &r));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_NE(0, r.cursor);
	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(3, bpf_prog_funcs(bpf_program__fd(skel->progs.ksym_abi_main),
				    &info, ksyms, NULL, 3));
	ASSERT_EQ(0, rec_stream_drain(&self->s));
	EXPECT_EQ(0, self->s.lost);
	EXPECT_EQ(1, rec_count_bpf(&self->s, info.id, PERF_BPF_EVENT_PROG_LOAD,
				   NULL));
	/* Registered once, unless a freed libbpf probe had the address. */
	EXPECT_EQ(rec_count_ksym(&self->s, ksyms[0],
				 PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER, NULL) + 1,
		  rec_count_ksym(&self->s, ksyms[0], 0, NULL));
	ksym_abi__destroy(skel);
}

/* Replayed records of a stream by kind: BPF, OOL and module, END markers. */
struct replay_kinds {
	size_t bpf, other, load, end;
};

static void replay_kinds_count(const struct rec_stream *s,
			       struct replay_kinds *k)
{
	size_t i;

	memset(k, 0, sizeof(*k));
	for (i = 0; i < s->nr; i++) {
		const struct rec *r = &s->recs[i];

		k->load += r->type == PERF_RECORD_BPF_EVENT;
		if (r->type != PERF_RECORD_KSYMBOL || !(r->flags & REPLAY))
			continue;
		k->end += rec_is_marker(r, PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END);
		k->bpf += r->ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF;
		k->other += r->ksym_type == PERF_RECORD_KSYMBOL_TYPE_OOL ||
			    r->ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE;
	}
}

/* Only the ksymbol types asked for; an unknown type is refused. */
TEST_F(replay, type_mask)
{
	struct replay_kinds k;
	int fd;

	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
	ASSERT_LE(0, rec_replay(&self->s,
				(1 << PERF_RECORD_KSYMBOL_TYPE_OOL) |
				(1 << PERF_RECORD_KSYMBOL_TYPE_MODULE),
				NULL, NULL));
	replay_kinds_count(&self->s, &k);
	EXPECT_EQ(0, k.bpf);
	EXPECT_EQ(0, k.load);
	EXPECT_EQ(1, k.end);
	TH_LOG("%zu OOL and module regions", k.other);

	fd = rec_stream_fd(&self->s);
	{
		struct perf_ksymbol_replay r = {
			.size = sizeof(r),
			.types = 1 << PERF_RECORD_KSYMBOL_TYPE_REPLAY_MARK,
		};

		EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &r));
		EXPECT_EQ(EINVAL, errno);
	}
}

/*
 * A call visits at most 1024 regions, whether it writes records for them
 * or not: with 1,100 programs loaded, a replay of the out-of-line and
 * module text only (a few regions, far less than the buffer holds) takes
 * one call per 1024 regions of the registry, each returning -ENOSPC with
 * nothing or little written, and completes with every such region once.
 */
TEST_F_TIMEOUT(replay, bounded_calls, 120)
{
	const int n = 1100;
	struct replay_kinds k;
	unsigned int calls = 0;
	long ret, regions;
	int *fds, j;

	fds = load_trivial(n);
	ASSERT_NE(NULL, fds);
	regions = registry_nr();
	ASSERT_LE(n, regions);
	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
	ret = rec_replay(&self->s, (1 << PERF_RECORD_KSYMBOL_TYPE_OOL) |
			 (1 << PERF_RECORD_KSYMBOL_TYPE_MODULE), &calls, NULL);
	ASSERT_LE(0, ret) TH_LOG("replay: %s", strerror(-ret));
	replay_kinds_count(&self->s, &k);
	/* Every region visited once, 1024 per call; the last writes END. */
	EXPECT_LE((unsigned int)(regions + 1023) / 1024, calls);
	EXPECT_GE((unsigned int)(regions + 1023) / 1024 + 1, calls);
	EXPECT_EQ(0, k.bpf);
	EXPECT_EQ(1, k.end);
	EXPECT_EQ(0, self->s.lost);
	TH_LOG("%ld regions registered, %u calls, %zu OOL and module regions replayed",
	       regions, calls, k.other);
	for (j = 0; j < n; j++)
		close(fds[j]);
	free(fds);
}

/*
 * The replay is the caller's work, not a kworker's.  Run on the event's
 * CPU, the caller writes every replay record itself: each carries its
 * pid and tid (a kworker's tid before).  Run on another CPU, it waits for
 * that CPU's writes spinning: the calls' CPU time is the caller's (at
 * least half of their wall time here; before, the caller slept while a
 * kworker wrote, and its CPU time was a small part of it).
 */
TEST_F_TIMEOUT(replay, runs_in_the_caller, 120)
{
	const int n = 500;
	__u64 cpu = 0, wall = 0;
	struct raw_rb r;
	unsigned int calls;
	int *fds, j;
	long ret;

	fds = load_trivial(n);
	ASSERT_NE(NULL, fds);
	ASSERT_EQ(0, pin_to(0));
	ASSERT_EQ(0, raw_open_tid(&r, 0, 64));
	ret = raw_replay_timed(&r, &cpu, &wall, &calls);
	ASSERT_LE(0, ret) TH_LOG("replay: %s", strerror(-ret));
	EXPECT_EQ(1, r.ends);
	EXPECT_LE(n, r.replay_tid);
	EXPECT_EQ(0, r.replay_other);
	TH_LOG("on the event's CPU: %d replay records by the caller, %d by others, %u calls",
	       r.replay_tid, r.replay_other, calls);
	raw_close(&r);

	ASSERT_LE(2, sysconf(_SC_NPROCESSORS_ONLN));
	ASSERT_EQ(0, pin_to(1));
	ASSERT_EQ(0, raw_open_tid(&r, 0, 64));
	cpu = 0;
	wall = 0;
	ret = raw_replay_timed(&r, &cpu, &wall, &calls);
	ASSERT_LE(0, ret) TH_LOG("replay: %s", strerror(-ret));
	EXPECT_EQ(1, r.ends);
	EXPECT_LE(n, r.replay_tid + r.replay_other);
	EXPECT_LE(wall, 2 * cpu);
	TH_LOG("from another CPU: %u calls, %llu us of CPU time in %llu us",
	       calls, cpu / 1000, wall / 1000);
	raw_close(&r);
	for (j = 0; j < n; j++)
		close(fds[j]);
	free(fds);
}

/*
 * An event without sample_id_all gets records without a sample_id, and the
 * replay reserves no room for one: the stream holds the snapshot's records
 * back to back, each of its exact size, BEGIN to END.
 */
TEST_F_TIMEOUT(replay, without_sample_id_all, 60)
{
	size_t i, begin = 0, end = 0, nr_replay = 0;
	struct ksym_line *lines = NULL;
	int nlines;
	long ret;

	ASSERT_EQ(0, rec_stream_open_no_sample_id(&self->s, 64));
	nlines = dyn_lines(&lines);
	ASSERT_GE(nlines, 3 * NR_PROGS);
	ret = rec_replay(&self->s, 0, NULL, NULL);
	ASSERT_GE(ret, 0) TH_LOG("replay: %s", strerror(-ret));
	for (i = 0; i < self->s.nr; i++) {
		const struct rec *r = &self->s.recs[i];

		begin += rec_is_marker(r, PERF_RECORD_KSYMBOL_FLAGS_REPLAY_BEGIN);
		end += rec_is_marker(r, PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END);
		nr_replay += r->type == PERF_RECORD_KSYMBOL && r->flags == REPLAY;
	}
	EXPECT_EQ(0, self->s.malformed);
	EXPECT_EQ(0, self->s.other);
	EXPECT_EQ(1, begin);
	EXPECT_EQ(1, end);
	EXPECT_EQ(ret, nr_replay);
	EXPECT_EQ(nlines, nr_replay);
	free(lines);
}

/*
 * A group of exactly half the ring buffer can never fit beside the other
 * half (the free space is at most the buffer's size minus one).
 * replay_group's 32 functions make 2,048 bytes of ksymbol records without
 * a sample_id: measured in a two-page buffer, where they all come; in a
 * one-page one the main function's record comes alone, flagged
 * REPLAY_PARTIAL, and the replay goes on to the end (a program loaded
 * after the group is replayed too), instead of stopping for good.
 */
TEST_F(replay, group_of_half_the_buffer)
{
	struct replay_group *skel = replay_group__open_and_load();
	struct bpf_prog_info info;
	struct ksym_abi *later;
	__u64 ksyms[32], later_ksyms[3];
	struct raw_rb r;
	long ret;

	ASSERT_NE(NULL, skel);
	ASSERT_EQ(32, bpf_prog_funcs(bpf_program__fd(skel->progs.group_main),
				     &info, ksyms, NULL, 32));
	later = ksym_abi__open_and_load();
	ASSERT_NE(NULL, later);
	ASSERT_EQ(3, bpf_prog_funcs(bpf_program__fd(later->progs.ksym_abi_main),
				    &info, later_ksyms, NULL, 3));
	ASSERT_EQ(0, raw_open(&r, 2, PROT_READ | PROT_WRITE, false));
	r.addrs = ksyms;
	r.nr_addrs = 32;
	r.later = later_ksyms[0];
	ret = raw_replay(&r, 1000);
	EXPECT_LE(0, ret) TH_LOG("two pages: %s", strerror(-ret));
	EXPECT_EQ(sysconf(_SC_PAGESIZE) / 2, r.bytes);
	EXPECT_EQ(32, r.at_addrs);
	EXPECT_EQ(0, r.partial);
	EXPECT_EQ(1, r.at_later);
	EXPECT_EQ(1, r.ends);
	raw_close(&r);

	ASSERT_EQ(0, raw_open(&r, 1, PROT_READ | PROT_WRITE, false));
	r.addrs = ksyms;
	r.nr_addrs = 32;
	r.later = later_ksyms[0];
	ret = raw_replay(&r, 1000);
	EXPECT_LE(0, ret) TH_LOG("one page: %s", strerror(-ret));
	EXPECT_EQ(1, r.at_addrs);
	EXPECT_EQ(1, r.partial);
	EXPECT_EQ(1, r.at_later);
	EXPECT_EQ(1, r.ends);
	raw_close(&r);
	ksym_abi__destroy(later);
	replay_group__destroy(skel);
}

/*
 * Buffers the replay cannot leave room in: an overwrite (read-only) or
 * write_backward buffer is refused; a paused one gets -EBUSY with the
 * cursor, and the replay resumes from it once output goes on.
 */
TEST_F(replay, buffer_modes)
{
	struct perf_ksymbol_replay arg = { .size = sizeof(arg) };
	struct raw_rb r;

	ASSERT_EQ(0, raw_open(&r, 64, PROT_READ, false));
	EXPECT_EQ(-1, ioctl(r.fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &arg));
	EXPECT_EQ(EOPNOTSUPP, errno);
	raw_close(&r);

	ASSERT_EQ(0, raw_open(&r, 64, PROT_READ | PROT_WRITE, true));
	EXPECT_EQ(-1, ioctl(r.fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &arg));
	EXPECT_EQ(EOPNOTSUPP, errno);
	raw_close(&r);

	ASSERT_EQ(0, raw_open(&r, 64, PROT_READ | PROT_WRITE, false));
	ASSERT_EQ(0, ioctl(r.fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1));
	EXPECT_EQ(-1, ioctl(r.fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &arg));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_NE(0, arg.cursor);
	ASSERT_EQ(0, ioctl(r.fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0));
	EXPECT_LE(3 * NR_PROGS, ioctl(r.fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &arg));
	EXPECT_EQ(0, arg.cursor);
	raw_close(&r);
}

/* The argument: its size, unknown fields, the cursor. */
TEST_F(replay, argument)
{
	struct {
		struct perf_ksymbol_replay r;
		__u64 more;
	} big = { .r.size = sizeof(big) };
	struct perf_ksymbol_replay r = { .size = PERF_KSYMBOL_REPLAY_SIZE_VER0 - 4 };
	struct perf_ksymbol_replay fresh = { .size = sizeof(fresh), .cursor = 1 };
	int fd;

	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
	fd = rec_stream_fd(&self->s);
	/* A cursor on an event that never started a replay. */
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &fresh));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &r));
	EXPECT_EQ(EINVAL, errno);
	big.more = 1;
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &big));
	EXPECT_EQ(E2BIG, errno);
	/* Zero in what the kernel does not know is fine. */
	big.more = 0;
	EXPECT_LE(0, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &big));
	EXPECT_EQ(0, big.r.cursor);
	EXPECT_NE(0, big.r.seq);
	/* A cursor that is not the replay's. */
	r.size = sizeof(r);
	r.cursor = 12345;
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &r));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, NULL));
	EXPECT_EQ(EFAULT, errno);
}

/*
 * A task event gets live records only from its own task, not the
 * unregisters other tasks cause: refused, as its view would go stale.
 */
TEST_F(replay, task_event_refused)
{
	struct perf_ksymbol_replay r = { .size = sizeof(r) };

	ASSERT_EQ(0, rec_stream_open_self(&self->s, 64));
	EXPECT_EQ(-1, ioctl(rec_stream_fd(&self->s),
			    PERF_EVENT_IOC_KSYMBOL_REPLAY, &r));
	EXPECT_EQ(EOPNOTSUPP, errno);
}

/*
 * A task event bound to a CPU (what perf record opens for a workload) is a
 * task event too: other tasks' unregisters never reach it.
 */
TEST_F(replay, task_event_on_a_cpu_refused)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.ksymbol = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	struct perf_ksymbol_replay r = { .size = sizeof(r) };
	size_t len = 2 * sysconf(_SC_PAGESIZE);
	int fd = syscall(__NR_perf_event_open, &attr, 0, 0, -1, 0);
	void *rb;

	ASSERT_LE(0, fd);
	rb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, rb);
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &r));
	EXPECT_EQ(EOPNOTSUPP, errno);
	munmap(rb, len);
	close(fd);
}

/* An event without attr.ksymbol has nothing to replay into. */
TEST_F(replay, needs_ksymbol)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
	};
	struct perf_ksymbol_replay r = { .size = sizeof(r) };
	int fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &r));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

/*
 * A mapping of the control page alone has no ring buffer to write into
 * (perf keeps such a buffer paused for good): -EINVAL, as for an event
 * without a mapping, not -EBUSY, which tells the caller to wait for an
 * un-pause that cannot come.
 */
TEST_F(replay, needs_data_pages)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.ksymbol = 1,
	};
	struct perf_ksymbol_replay r = { .size = sizeof(r) };
	size_t len = sysconf(_SC_PAGESIZE);
	int fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, 0);
	void *rb;

	ASSERT_LE(0, fd);
	rb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, rb);
	EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &r));
	EXPECT_EQ(EINVAL, errno);
	munmap(rb, len);
	close(fd);
}

/* Empty a ring buffer: what a replay wrote is not looked at. */
static int rb_discard(void *rb)
{
	struct perf_event_mmap_page *pc = rb;

	__atomic_store_n(&pc->data_tail,
			 __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	return 0;
}

#define DYNTEXT_PMU "/sys/module/dyntext_pmu/parameters/registered"

/*
 * An event whose PMU went away is revoked (perf_pmu_unregister(), since
 * Linux 6.15): it gets no live records any more, so a replay into it would
 * announce regions whose unregister records never come.  Refused with
 * -ENODEV, as every other ioctl on a revoked event.
 */
TEST_F(replay, revoked_event_refused)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .ksymbol = 1 };
	struct perf_ksymbol_replay r = { .size = sizeof(r) };
	size_t len = 3 * sysconf(_SC_PAGESIZE);
	void *rb = MAP_FAILED;
	int fd = -1, type = -1;
	FILE *f;

	if (!kernel_at_least(6, 15))
		SKIP(return, "events cannot be revoked before Linux 6.15");
	test_module_unload("dyntext_pmu");
	ASSERT_EQ(0, test_module_load("dyntext_pmu", ""));
	ASSERT_EQ(0, write_str(DYNTEXT_PMU, "1", 0));
	f = fopen("/sys/bus/event_source/devices/dyntext_pmu/type", "r");
	if (f) {
		EXPECT_EQ(1, fscanf(f, "%d", &type));
		fclose(f);
	}
	attr.type = type;
	fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, 0);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		rb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EXPECT_NE(MAP_FAILED, rb);
	if (rb != MAP_FAILED) {
		EXPECT_LE(0, ksym_replay(fd, 0, rb_discard, rb, NULL, NULL));
		EXPECT_EQ(0, write_str(DYNTEXT_PMU, "0", 0));
		EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &r));
		EXPECT_EQ(ENODEV, errno);
		/* As any other ioctl on it. */
		EXPECT_EQ(-1, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
		EXPECT_EQ(ENODEV, errno);
		munmap(rb, len);
	}
	if (fd >= 0)
		close(fd);
	write_str(DYNTEXT_PMU, "0", 0);
	EXPECT_EQ(0, test_module_unload("dyntext_pmu"));
}

/*
 * What a replay into a new stream of @unprivileged's (nobody's) or root's
 * gave: the ioctl's count, the replay records of regions (in all and per
 * ksymbol type) and the END markers, and an FNV-1a hash of each region's
 * address, length, type and name in stream order.
 */
struct replay_digest {
	long ret;
	long regions;
	long by_type[8];
	long ends;
	__u64 hash;
};

static void fnv1a(__u64 *h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		*h = (*h ^ *c++) * 0x100000001b3ULL;
}

static void replay_digest(bool unprivileged, struct replay_digest *d)
{
	struct rec_stream s;
	size_t i;

	memset(d, 0, sizeof(*d));
	d->hash = 0xcbf29ce484222325ULL;
	d->ret = -EPERM;
	if ((unprivileged && drop_to_nobody()) || rec_stream_open(&s, 64))
		return;
	d->ret = rec_replay(&s, 0, NULL, NULL);
	for (i = 0; i < s.nr; i++) {
		const struct rec *r = &s.recs[i];

		if (r->type != PERF_RECORD_KSYMBOL)
			continue;
		if (rec_is_marker(r, PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END)) {
			d->ends++;
		} else if (r->flags == REPLAY) {
			d->regions++;
			d->by_type[r->ksym_type & 7]++;
			fnv1a(&d->hash, &r->addr, sizeof(r->addr));
			fnv1a(&d->hash, &r->len, sizeof(r->len));
			fnv1a(&d->hash, &r->ksym_type, sizeof(r->ksym_type));
			fnv1a(&d->hash, r->name, strlen(r->name));
		}
	}
	rec_stream_close(&s);
}

/*
 * An unprivileged owner at perf_event_paranoid=-1 may sample the kernel
 * system-wide: its CPU-wide event gets what root's gets, record for
 * record, even with kptr_restrict=1.  The registry holds regions of every
 * type then: the fixture's programs, a kprobe instruction page and the
 * test module's text.  Root replays before and after the owner; if
 * something changed the registry meanwhile, all three again (at most
 * three times).  (At perf_event_paranoid=2 it may open task events only,
 * which the replay refuses.)
 */
TEST_F(replay, unprivileged_owner)
{
	struct replay_digest before, owner, after;
	static struct kprobe_slots k;
	int p[2], tries;
	pid_t pid;

	ASSERT_EQ(0, kprobe_slots_init(&k));
	ASSERT_EQ(0, test_module_load("dyntext_test", ""));
	ASSERT_EQ(0, sysctl_set(KPTR, 1));
	ASSERT_EQ(0, sysctl_set(PARANOID, -1));
	for (tries = 0; tries < 3; tries++) {
		replay_digest(false, &before);
		ASSERT_EQ(0, pipe(p));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(p[0]);
			replay_digest(true, &owner);
			_exit(write(p[1], &owner, sizeof(owner)) != sizeof(owner));
		}
		close(p[1]);
		ASSERT_EQ(sizeof(owner), read(p[0], &owner, sizeof(owner)));
		close(p[0]);
		waitpid(pid, NULL, 0);
		replay_digest(false, &after);
		if (before.regions == after.regions && before.hash == after.hash)
			break;
	}
	test_module_unload("dyntext_test");
	ASSERT_LT(tries, 3) TH_LOG("the registry kept changing");
	EXPECT_LE(3 * NR_PROGS, before.by_type[PERF_RECORD_KSYMBOL_TYPE_BPF]);
	EXPECT_LE(1, before.by_type[PERF_RECORD_KSYMBOL_TYPE_OOL]);
	EXPECT_LE(1, before.by_type[PERF_RECORD_KSYMBOL_TYPE_MODULE]);
	EXPECT_EQ(before.ret, before.regions);
	EXPECT_EQ(1, before.ends);
	/* The owner's replay is root's. */
	EXPECT_EQ(before.ret, owner.ret);
	EXPECT_EQ(before.regions, owner.regions);
	EXPECT_EQ(before.by_type[PERF_RECORD_KSYMBOL_TYPE_BPF],
		  owner.by_type[PERF_RECORD_KSYMBOL_TYPE_BPF]);
	EXPECT_EQ(before.by_type[PERF_RECORD_KSYMBOL_TYPE_OOL],
		  owner.by_type[PERF_RECORD_KSYMBOL_TYPE_OOL]);
	EXPECT_EQ(before.by_type[PERF_RECORD_KSYMBOL_TYPE_MODULE],
		  owner.by_type[PERF_RECORD_KSYMBOL_TYPE_MODULE]);
	EXPECT_EQ(before.hash, owner.hash);
	EXPECT_EQ(1, owner.ends);
}

/*
 * The kernel image (PERF_RECORD_KSYMBOL_TYPE_KERNEL): where /proc/kallsyms
 * (at kptr_restrict 0) puts _stext and _etext, and the build-id
 * /sys/kernel/notes holds.
 */
struct kimage {
	unsigned long long stext, etext;
	__u8 id[20];
	int id_size;
};

#define KIMAGE_MOD	"dyntext_test"
#define KIMAGE_TYPES	(1 << KSYM_TYPE_KERNEL | \
			 1 << PERF_RECORD_KSYMBOL_TYPE_BPF | \
			 1 << PERF_RECORD_KSYMBOL_TYPE_OOL | \
			 1 << PERF_RECORD_KSYMBOL_TYPE_MODULE)

static int kimage_from_files(struct kimage *k)
{
	memset(k, 0, sizeof(*k));
	if (kallsyms_sym_count("_stext", "", 0, &k->stext, NULL) != 1 ||
	    kallsyms_sym_count("_etext", "", 0, &k->etext, NULL) != 1)
		return -ENOENT;
	k->id_size = note_build_id("/sys/kernel/notes", k->id, sizeof(k->id));
	return k->id_size < 0 ? k->id_size : 0;
}

/* The record is exactly the image's. */
static void kimage_check(struct __test_metadata *_metadata,
			 const struct rec *r, const struct kimage *k)
{
	EXPECT_EQ(PERF_RECORD_KSYMBOL, r->type);
	EXPECT_EQ(KSYM_TYPE_KERNEL, r->ksym_type);
	EXPECT_EQ(REPLAY, r->flags);
	EXPECT_EQ(k->stext, r->addr);
	EXPECT_EQ(k->etext - k->stext, r->len);
	EXPECT_STREQ("_stext", r->name);
	EXPECT_EQ(k->id_size, r->build_id_size);
	EXPECT_EQ(0, memcmp(k->id, r->build_id, k->id_size));
}

/*
 * The replay's records (flagged REPLAY) in stream order: *kern gets the
 * index of the image's record, *nr (unless NULL) how many replay records
 * there are.  Returns how many image records there are, or -1 unless the
 * replay's records are BEGIN, then the image's, ..., END.
 */
static int kimage_find(const struct rec_stream *s, size_t *kern, size_t *nr)
{
	size_t i, n = 0, begin = 0, first = 0, end = 0;
	int images = 0;

	for (i = 0; i < s->nr; i++) {
		const struct rec *r = &s->recs[i];

		if (r->type != PERF_RECORD_KSYMBOL || !(r->flags & REPLAY))
			continue;
		n++;
		if (rec_is_marker(r, PERF_RECORD_KSYMBOL_FLAGS_REPLAY_BEGIN))
			begin = n;
		else if (rec_is_marker(r, PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END))
			end = n;
		else if (n == 2)
			first = i;
		if (r->ksym_type == KSYM_TYPE_KERNEL) {
			images++;
			*kern = i;
		}
	}
	if (nr)
		*nr = n;
	if (begin != 1 || end != n || !images || *kern != first)
		return -1;
	return images;
}

/*
 * Asked for alone, at kptr_restrict 0: BEGIN, the image's record, END,
 * and a count of one region; its address, length, name and build-id are
 * those of /proc/kallsyms and /sys/kernel/notes.
 */
TEST_F(replay, kernel_image)
{
	size_t i, kern = 0, nr = 0, bpf_replayed = 0;
	struct kimage k;
	long ret;

	ASSERT_EQ(0, sysctl_set(KPTR, 0));
	ASSERT_EQ(0, kimage_from_files(&k));
	ASSERT_LT(0, k.id_size);
	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
	ret = rec_replay(&self->s, 1 << KSYM_TYPE_KERNEL, NULL, NULL);
	if (ret == -EINVAL)
		SKIP(return, "no PERF_RECORD_KSYMBOL_TYPE_KERNEL in this kernel");
	EXPECT_EQ(1, ret);
	ASSERT_EQ(1, kimage_find(&self->s, &kern, &nr));
	kimage_check(_metadata, &self->s.recs[kern], &k);
	/* Nothing else: BEGIN, the image, END, and no PROG_LOAD. */
	EXPECT_EQ(3, nr);
	for (i = 0; i < self->s.nr; i++)
		bpf_replayed += self->s.recs[i].type == PERF_RECORD_BPF_EVENT &&
				(self->s.recs[i].bpf_flags &
				 PERF_BPF_EVENT_FLAGS_REPLAY);
	EXPECT_EQ(0, bpf_replayed);
}

/*
 * At kptr_restrict=2 /proc/kallsyms shows root zeros, the replay still
 * gives root the image, first after BEGIN, with every other type.
 */
TEST_F(replay, kernel_image_kptr_restrict_2)
{
	unsigned long long zero = 1;
	struct kimage k;
	size_t kern = 0;
	long ret;

	ASSERT_EQ(0, sysctl_set(KPTR, 0));
	ASSERT_EQ(0, kimage_from_files(&k));
	ASSERT_EQ(0, sysctl_set(KPTR, 2));
	ASSERT_EQ(1, kallsyms_sym_count("_stext", "", 0, &zero, NULL));
	ASSERT_EQ(0, zero);
	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
	ret = rec_replay(&self->s, KIMAGE_TYPES, NULL, NULL);
	if (ret == -EINVAL)
		SKIP(return, "no PERF_RECORD_KSYMBOL_TYPE_KERNEL in this kernel");
	EXPECT_LE(1 + NR_PROGS, ret);
	ASSERT_EQ(1, kimage_find(&self->s, &kern, NULL));
	kimage_check(_metadata, &self->s.recs[kern], &k);
}

/*
 * Only when asked for: not in a replay of types 0 (the types the event
 * gets live), and never live, while a module and a BPF program come and
 * go.
 */
TEST_F(replay, kernel_image_only_when_asked)
{
	struct ksym_abi *skel;
	size_t i, images = 0;
	long ret;

	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
	/* Has the kernel the type?  (One image record, dropped below.) */
	ret = rec_replay(&self->s, 1 << KSYM_TYPE_KERNEL, NULL, NULL);
	if (ret == -EINVAL)
		SKIP(return, "no PERF_RECORD_KSYMBOL_TYPE_KERNEL in this kernel");
	ASSERT_EQ(1, ret);
	ASSERT_EQ(0, test_module_load(KIMAGE_MOD, ""));
	ASSERT_EQ(0, test_module_unload(KIMAGE_MOD));
	skel = ksym_abi__open_and_load();
	ASSERT_NE(NULL, skel);
	ksym_abi__destroy(skel);
	ret = rec_replay(&self->s, 0, NULL, NULL);
	EXPECT_LE(NR_PROGS, ret);
	ASSERT_EQ(0, rec_stream_drain(&self->s));
	for (i = 0; i < self->s.nr; i++)
		if (self->s.recs[i].type == PERF_RECORD_KSYMBOL &&
		    self->s.recs[i].ksym_type == KSYM_TYPE_KERNEL)
			images++;
	EXPECT_EQ(1, images);
	/* The live records did flow: the module's register and unregister. */
	EXPECT_NE(NULL, rec_find_name(&self->s, KIMAGE_MOD, 0));
	EXPECT_NE(NULL, rec_find_name(&self->s, KIMAGE_MOD, UNREG));
}

struct kimage_seen {
	int err;
	long ret;
	struct rec r;
};

/* In a child: as nobody with caps, the image's record of its own replay. */
static void kimage_as(__u64 caps, struct kimage_seen *seen)
{
	struct rec_stream s;
	size_t kern = 0;

	memset(seen, 0, sizeof(*seen));
	seen->err = 1;
	if (drop_to_nobody_caps(caps))
		return;
	seen->err = 2;
	if (rec_stream_open(&s, 16))
		return;
	seen->ret = rec_replay(&s, 1 << KSYM_TYPE_KERNEL, NULL, NULL);
	seen->err = 3;
	if (seen->ret >= 0 && kimage_find(&s, &kern, NULL) == 1) {
		seen->r = s.recs[kern];
		seen->r.bytes = NULL;
		seen->err = 0;
	}
	rec_stream_close(&s);
}

static void kimage_fork(struct __test_metadata *_metadata, __u64 caps,
			struct kimage_seen *seen)
{
	int p[2];
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(p[0]);
		kimage_as(caps, seen);
		_exit(write(p[1], seen, sizeof(*seen)) != sizeof(*seen));
	}
	close(p[1]);
	ASSERT_EQ(sizeof(*seen), read(p[0], seen, sizeof(*seen)));
	close(p[0]);
	waitpid(pid, NULL, 0);
}

/*
 * Whoever may replay gets the image as root does, at kptr_restrict=2:
 * CAP_PERFMON alone at perf_event_paranoid=2, and an unprivileged user at
 * perf_event_paranoid=0, who may sample the kernel on every CPU.
 */
TEST_F(replay, kernel_image_unprivileged)
{
	struct kimage_seen seen;
	struct kimage k;

	ASSERT_EQ(0, sysctl_set(KPTR, 0));
	ASSERT_EQ(0, kimage_from_files(&k));
	ASSERT_EQ(0, sysctl_set(KPTR, 2));
	/* Has the kernel the type? */
	ASSERT_EQ(0, rec_stream_open(&self->s, 16));
	if (rec_replay(&self->s, 1 << KSYM_TYPE_KERNEL, NULL, NULL) == -EINVAL)
		SKIP(return, "no PERF_RECORD_KSYMBOL_TYPE_KERNEL in this kernel");

	ASSERT_EQ(0, sysctl_set(PARANOID, 2));
	kimage_fork(_metadata, 1ULL << CAP_PERFMON, &seen);
	EXPECT_EQ(0, seen.err);
	EXPECT_EQ(1, seen.ret);
	kimage_check(_metadata, &seen.r, &k);

	ASSERT_EQ(0, sysctl_set(PARANOID, 0));
	kimage_fork(_metadata, 0, &seen);
	EXPECT_EQ(0, seen.err);
	EXPECT_EQ(1, seen.ret);
	kimage_check(_metadata, &seen.r, &k);
}

/*
 * The example consumer (tools/lib/perf/Documentation/examples/ksymbols.c)
 * at kptr_restrict=2 prints the image and the test module as the files
 * give them at kptr_restrict 0: exactly one kernel line, and the module's
 * core text with its build-id.
 */
TEST_F_TIMEOUT(replay, kernel_image_example_consumer, 60)
{
	char cmd[PATH_MAX + 16], line[1024], kind[16], name[KSYM_NAME_LEN];
	char want[41], hex[41], modhex[41];
	unsigned long long lo, hi, text;
	int kernels = 0, modules = 0, i, status;
	__u8 modid[20];
	struct kimage k;
	int modid_size;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/ksymbols", test_binary_dir());
	if (access(cmd, X_OK))
		SKIP(return, "no ksymbols example (built only with PERF_RECORD_KSYMBOL_TYPE_KERNEL)");
	ASSERT_EQ(0, sysctl_set(KPTR, 0));
	ASSERT_EQ(0, kimage_from_files(&k));
	ASSERT_EQ(0, test_module_load(KIMAGE_MOD, ""));
	text = module_section_addr(KIMAGE_MOD, ".text");
	modid_size = module_note_build_id(KIMAGE_MOD, modid, sizeof(modid));
	ASSERT_NE(0, text);
	ASSERT_EQ(20, modid_size);
	ASSERT_EQ(20, k.id_size);
	for (i = 0; i < 20; i++) {
		sprintf(want + 2 * i, "%02x", k.id[i]);
		sprintf(modhex + 2 * i, "%02x", modid[i]);
	}
	ASSERT_EQ(0, sysctl_set(KPTR, 2));

	strcat(cmd, " 0");
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		hex[0] = 0;
		if (sscanf(line, "%15s %llx-%llx %511s build-id %40s", kind, &lo,
			   &hi, name, hex) < 4)
			continue;
		if (!strcmp(kind, "kernel")) {
			kernels++;
			EXPECT_EQ(k.stext, lo);
			EXPECT_EQ(k.etext, hi);
			EXPECT_STREQ("_stext", name);
			EXPECT_STREQ(want, hex);
		} else if (!strcmp(kind, "module") &&
			   !strcmp(name, KIMAGE_MOD)) {
			modules++;
			EXPECT_LE(lo, text);
			EXPECT_LT(text, hi);
			EXPECT_STREQ(modhex, hex);
		}
	}
	status = pclose(f);
	test_module_unload(KIMAGE_MOD);
	EXPECT_EQ(0, status);
	EXPECT_EQ(1, kernels);
	EXPECT_EQ(1, modules);
}

TEST_HARNESS_MAIN
