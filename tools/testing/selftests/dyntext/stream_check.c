// SPDX-License-Identifier: GPL-2.0
/*
 * The stress driver's consumer (stress.h): a system-wide dummy event with
 * ksymbol and bpf_event on CLOCK_MONOTONIC, whose records are applied in
 * time order to a view of the live regions and loaded programs.  A
 * register record must not overlap a live region, an unregister record
 * must match a live region exactly (address, length, name, type),
 * PROG_LOAD and PROG_UNLOAD must pair up by id, and a PROG_LOAD must follow
 * its program's image.  The registry is replayed into the view first.
 * The event asks for code too (attr.ksymbol_text): a record of new code
 * (PERF_RECORD_TEXT_POKE with no old bytes) must fall inside a live
 * region, that is after the region's register record and before its
 * unregister record, however the producers race.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/event.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <perf/threadmap.h>

#include "records.h"
#include "stress.h"

#define UNREG		PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER
#define REPLAY		PERF_RECORD_KSYMBOL_FLAGS_REPLAY
#define REPLAY_END	PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END
#define RING_PAGES	512

struct view view;

struct krec {
	__u64 time, seq;
	__u32 type;
	__u64 addr;
	__u32 len;
	__u16 ksym_type, flags;
	__u16 bpf_type, bpf_flags;
	__u32 id;
	__u8 tag[BPF_TAG_SIZE];
	__u16 old_len;		/* TEXT_POKE: addr, len (new_len), old_len */
	char *name;
};

static struct {
	struct perf_evlist *evlist;
	int fd;			/* the first CPU's event */
	struct krec *pend;
	size_t nr_pend, alloc_pend;
	__u64 seq;
	/* Loaded program ids. */
	__u32 *ids;
	size_t nr_ids, alloc_ids;
	bool replay_done;
	/* Counts. */
	__u64 lost, records, reg[4], unreg[4], replayed, confirmed;
	__u64 prog_load, prog_unload;
	__u64 max_live;
	__u64 code, code_bytes;
	/* Problems. */
	__u64 overlap, unknown_unreg, mismatch, bad_replay, dup_id,
	      unknown_id, load_no_image, bad_record, code_outside;
} c;

int consumer_open(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
		.ksymbol = 1,
		.ksymbol_module = 1,
		.bpf_event = 1,
		.ksymbol_text = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.disabled = 1,
	};
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	struct perf_evsel *evsel;
	int err, *before, nbefore;

	libperf_init(NULL);
	cpus = perf_cpu_map__new(NULL);
	threads = perf_thread_map__new_dummy();
	c.evlist = perf_evlist__new();
	evsel = perf_evsel__new(&attr);
	if (!cpus || !threads || !c.evlist || !evsel)
		return -ENOMEM;
	perf_evlist__add(c.evlist, evsel);
	perf_evlist__set_maps(c.evlist, cpus, threads);
	perf_cpu_map__put(cpus);
	perf_thread_map__put(threads);
	before = perf_fds_open(&nbefore);
	err = perf_evlist__open(c.evlist);
	c.fd = err ? -1 : perf_fd_new(before, nbefore);
	free(before);
	if (!err)
		err = perf_evlist__mmap(c.evlist, RING_PAGES);
	if (!err)
		perf_evlist__enable(c.evlist);
	return err;
}

static int consumer_drain(void)
{
	struct perf_mmap *map;
	union perf_event *ev;

	perf_evlist__for_each_mmap(c.evlist, map, false) {
		if (perf_mmap__read_init(map) < 0)
			continue;
		while ((ev = perf_mmap__read_event(map)) != NULL) {
			const char *raw = (const char *)ev;
			size_t size = ev->header.size;
			struct krec *k;

			if (ev->header.type == PERF_RECORD_LOST) {
				c.lost += ev->lost.lost;
				perf_mmap__consume(map);
				continue;
			}
			if (ev->header.type != PERF_RECORD_KSYMBOL &&
			    ev->header.type != PERF_RECORD_BPF_EVENT &&
			    ev->header.type != PERF_RECORD_TEXT_POKE) {
				perf_mmap__consume(map);
				continue;
			}
			if (c.nr_pend == c.alloc_pend) {
				c.alloc_pend = c.alloc_pend ? 2 * c.alloc_pend : 4096;
				c.pend = realloc(c.pend, c.alloc_pend * sizeof(*c.pend));
				if (!c.pend)
					return -ENOMEM;
			}
			k = &c.pend[c.nr_pend++];
			memset(k, 0, sizeof(*k));
			k->type = ev->header.type;
			k->seq = c.seq++;
			memcpy(&k->time, raw + size - 16, 8);
			if (k->type == PERF_RECORD_KSYMBOL) {
				size_t max = size - 16 -
					offsetof(struct perf_record_ksymbol, name);

				k->addr = ev->ksymbol.addr;
				k->len = ev->ksymbol.len;
				k->ksym_type = ev->ksymbol.ksym_type;
				k->flags = ev->ksymbol.flags;
				k->name = strndup(ev->ksymbol.name, max);
			} else if (k->type == PERF_RECORD_TEXT_POKE) {
				k->addr = ev->text_poke.addr;
				k->len = ev->text_poke.new_len;
				k->old_len = ev->text_poke.old_len;
			} else {
				k->bpf_type = ev->bpf.type;
				k->bpf_flags = ev->bpf.flags;
				k->id = ev->bpf.id;
				memcpy(k->tag, ev->bpf.tag, BPF_TAG_SIZE);
			}
			perf_mmap__consume(map);
		}
		perf_mmap__read_done(map);
	}
	return 0;
}

static int krec_cmp(const void *a, const void *b)
{
	const struct krec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Index of the first region with addr >= a. */
static size_t view_pos(__u64 a)
{
	size_t lo = 0, hi = view.nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (view.r[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long view_find(__u64 a)
{
	size_t i = view_pos(a);

	return i < view.nr && view.r[i].addr == a ? (long)i : -1;
}

/* A live region overlapping [a, a + len), or NULL. */
static struct region *view_overlap(__u64 a, __u32 len)
{
	size_t i = view_pos(a);

	if (i < view.nr && view.r[i].addr < a + len)
		return &view.r[i];
	if (i > 0 && view.r[i - 1].addr + view.r[i - 1].len > a)
		return &view.r[i - 1];
	return NULL;
}

static void view_insert(const struct krec *k)
{
	size_t i = view_pos(k->addr);

	if (view.nr == view.alloc) {
		view.alloc = view.alloc ? 2 * view.alloc : 256;
		view.r = realloc(view.r, view.alloc * sizeof(*view.r));
		if (!view.r)
			abort();
	}
	memmove(&view.r[i + 1], &view.r[i], (view.nr - i) * sizeof(*view.r));
	view.r[i].addr = k->addr;
	view.r[i].len = k->len;
	view.r[i].ksym_type = k->ksym_type;
	view.r[i].name = strdup(k->name);
	view.nr++;
	if (view.nr > c.max_live)
		c.max_live = view.nr;
}

static void view_remove(size_t i)
{
	free(view.r[i].name);
	memmove(&view.r[i], &view.r[i + 1], (view.nr - i - 1) * sizeof(*view.r));
	view.nr--;
}

static long id_find(__u32 id)
{
	size_t i;

	for (i = 0; i < c.nr_ids; i++)
		if (c.ids[i] == id)
			return i;
	return -1;
}

static bool image_with_tag(const __u8 *tag)
{
	char want[64];
	size_t i, n;

	snprintf(want, sizeof(want), "bpf_prog_");
	tag_hex(tag, want + 9);
	n = strlen(want);
	for (i = 0; i < view.nr; i++)
		if (!strncmp(view.r[i].name, want, n) &&
		    (view.r[i].name[n] == 0 || view.r[i].name[n] == '_'))
			return true;
	return false;
}

static void apply_ksym(const struct krec *k)
{
	struct region *o;
	long i;

	if (k->ksym_type == PERF_RECORD_KSYMBOL_TYPE_REPLAY_MARK) {
		if (k->flags & REPLAY_END)
			c.replay_done = true;
		return;
	}
	if (!k->len || !k->name[0] || k->ksym_type == 0 || k->ksym_type > 3) {
		c.bad_record++;
		live_note("bad record: %llx len %u type %u flags %#x '%s'",
			  (unsigned long long)k->addr, k->len, k->ksym_type,
			  k->flags, k->name);
		return;
	}
	if (k->flags & UNREG) {
		c.unreg[k->ksym_type]++;
		i = view_find(k->addr);
		if (i < 0) {
			c.unknown_unreg++;
			live_note("unregister of a region not registered: %llx %u %s",
				  (unsigned long long)k->addr, k->len, k->name);
			return;
		}
		o = &view.r[i];
		if (o->len != k->len || o->ksym_type != k->ksym_type ||
		    strcmp(o->name, k->name)) {
			c.mismatch++;
			live_note("unregister %llx %u %s (type %u) of %u %s (type %u)",
				  (unsigned long long)k->addr, k->len, k->name,
				  k->ksym_type, o->len, o->name, o->ksym_type);
		}
		view_remove(i);
		return;
	}
	o = view_overlap(k->addr, k->len);
	if (k->flags & REPLAY) {
		if (!o) {
			c.replayed++;
			view_insert(k);
		} else if (o->addr == k->addr && o->len == k->len &&
			   o->ksym_type == k->ksym_type && !strcmp(o->name, k->name)) {
			c.confirmed++;
		} else {
			c.bad_replay++;
			live_note("replayed %llx %u %s overlaps %llx %u %s",
				  (unsigned long long)k->addr, k->len, k->name,
				  (unsigned long long)o->addr, o->len, o->name);
		}
		return;
	}
	c.reg[k->ksym_type]++;
	if (o) {
		c.overlap++;
		live_note("register %llx %u %s overlaps live %llx %u %s",
			  (unsigned long long)k->addr, k->len, k->name,
			  (unsigned long long)o->addr, o->len, o->name);
		return;
	}
	view_insert(k);
}

/* New code (no old bytes) lies inside a live region. */
static void apply_code(const struct krec *k)
{
	struct region *o;

	if (k->old_len)
		return;		/* a producer's change of live text */
	c.code++;
	c.code_bytes += k->len;
	o = view_overlap(k->addr, k->len);
	if (!o || o->addr > k->addr || o->addr + o->len < k->addr + k->len) {
		c.code_outside++;
		live_note("code %llx +%u outside any live region%s%s",
			  (unsigned long long)k->addr, k->len,
			  o ? ", overlaps " : "", o ? o->name : "");
	}
}

static void apply_bpf(const struct krec *k)
{
	long i = id_find(k->id);

	if (k->bpf_type == PERF_BPF_EVENT_PROG_LOAD) {
		c.prog_load++;
		if (i >= 0) {
			if (!(k->bpf_flags & PERF_BPF_EVENT_FLAGS_REPLAY)) {
				c.dup_id++;
				live_note("PROG_LOAD of id %u, loaded already", k->id);
			}
			return;
		}
		if (!image_with_tag(k->tag)) {
			char tag[2 * BPF_TAG_SIZE + 1];

			tag_hex(k->tag, tag);
			c.load_no_image++;
			live_note("PROG_LOAD of id %u before an image bpf_prog_%s",
				  k->id, tag);
		}
		if (c.nr_ids == c.alloc_ids) {
			c.alloc_ids = c.alloc_ids ? 2 * c.alloc_ids : 256;
			c.ids = realloc(c.ids, c.alloc_ids * sizeof(*c.ids));
			if (!c.ids)
				abort();
		}
		c.ids[c.nr_ids++] = k->id;
	} else if (k->bpf_type == PERF_BPF_EVENT_PROG_UNLOAD) {
		c.prog_unload++;
		if (i < 0) {
			c.unknown_id++;
			live_note("PROG_UNLOAD of id %u, not loaded", k->id);
			return;
		}
		c.ids[i] = c.ids[--c.nr_ids];
	}
}

/* Apply the pending records up to time limit, in time order. */
int consumer_process(__u64 limit)
{
	size_t i, n;
	int err = consumer_drain();

	if (err)
		return err;
	qsort(c.pend, c.nr_pend, sizeof(*c.pend), krec_cmp);
	for (n = 0; n < c.nr_pend && c.pend[n].time <= limit; n++) {
		struct krec *k = &c.pend[n];

		c.records++;
		if (k->type == PERF_RECORD_KSYMBOL)
			apply_ksym(k);
		else if (k->type == PERF_RECORD_TEXT_POKE)
			apply_code(k);
		else
			apply_bpf(k);
		free(k->name);
	}
	memmove(c.pend, c.pend + n, (c.nr_pend - n) * sizeof(*c.pend));
	c.nr_pend -= n;
	for (i = 0; i < c.nr_pend; i++)
		c.pend[i].seq = i;
	c.seq = c.nr_pend;
	return 0;
}

/* A record is written a moment after its time stamp: keep a margin. */
#define MARGIN_NS	200000000ULL

int consumer_step(void)
{
	return consumer_process(now_ns() - MARGIN_NS);
}

/* Drain between the calls of a replay: what has arrived until now. */
static int consumer_replay_drain(void *arg)
{
	return consumer_process(now_ns());
}

int consumer_replay(void)
{
	double t0 = now_s();
	long ret;

	ret = ksym_replay(c.fd, 0, consumer_replay_drain, NULL, NULL, NULL);
	if (ret < 0)
		return ret;
	while (!c.replay_done && now_s() - t0 < 20) {
		usleep(20000);
		if (consumer_process(now_ns()))
			return -EIO;
	}
	return c.replay_done ? ret : -ETIMEDOUT;
}

__u64 consumer_lost(void)
{
	return c.lost;
}

__u64 consumer_records(void)
{
	return c.records;
}

size_t consumer_pending(void)
{
	return c.nr_pend;
}

void consumer_report(void)
{
	consumer_process(~0ULL);
	tap(!c.lost && !c.overlap && !c.unknown_unreg && !c.mismatch &&
	    !c.bad_replay && !c.dup_id && !c.unknown_id && !c.load_no_image &&
	    !c.bad_record && c.replay_done && !c.code_outside && c.code,
	    "live stream: every record consistent with the ones before it");
	print_notes(&live);
	printf("# records: %llu applied (%llu replayed, %llu confirmed by replay), %llu lost\n",
	       (unsigned long long)c.records, (unsigned long long)c.replayed,
	       (unsigned long long)c.confirmed, (unsigned long long)c.lost);
	printf("# register / unregister: bpf %llu / %llu, ool %llu / %llu, module %llu / %llu\n",
	       (unsigned long long)c.reg[1], (unsigned long long)c.unreg[1],
	       (unsigned long long)c.reg[2], (unsigned long long)c.unreg[2],
	       (unsigned long long)c.reg[3], (unsigned long long)c.unreg[3]);
	printf("# PROG_LOAD %llu, PROG_UNLOAD %llu; most regions live at once: %llu\n",
	       (unsigned long long)c.prog_load, (unsigned long long)c.prog_unload,
	       (unsigned long long)c.max_live);
	printf("# new code: %llu records, %llu bytes, %llu outside a live region\n",
	       (unsigned long long)c.code, (unsigned long long)c.code_bytes,
	       (unsigned long long)c.code_outside);
	printf("# problems: %llu overlapping registers, %llu unknown unregisters,\n"
	       "#   %llu mismatched unregisters, %llu bad replays,\n"
	       "#   %llu duplicate PROG_LOADs, %llu unknown PROG_UNLOADs,\n"
	       "#   %llu PROG_LOADs without image, %llu malformed\n",
	       (unsigned long long)c.overlap, (unsigned long long)c.unknown_unreg,
	       (unsigned long long)c.mismatch, (unsigned long long)c.bad_replay,
	       (unsigned long long)c.dup_id, (unsigned long long)c.unknown_id,
	       (unsigned long long)c.load_no_image, (unsigned long long)c.bad_record);
}
