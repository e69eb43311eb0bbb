// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <perf/threadmap.h>
#include <perf/event.h>
#include <dirent.h>

#include "records.h"

#define SAMPLE_TYPE (PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

static int perf_fd_scan(const int *skip, int nskip, int **all, int *nall)
{
	char path[300], link[64];
	struct dirent *d;
	int fd = -1, i, n = 0, *v = NULL;
	DIR *dir = opendir("/proc/self/fd");

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		int cur = atoi(d->d_name);
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = 0;
		if (strcmp(link, "anon_inode:[perf_event]"))
			continue;
		if (all) {
			int *nv = realloc(v, (n + 1) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
			v[n++] = cur;
		}
		for (i = 0; i < nskip && skip[i] != cur; i++)
			;
		if (i == nskip && (fd < 0 || cur < fd))
			fd = cur;
	}
	closedir(dir);
	if (all) {
		*all = v;
		*nall = n;
	}
	return fd;
}

int *perf_fds_open(int *n)
{
	int *all = NULL;

	*n = 0;
	perf_fd_scan(NULL, 0, &all, n);
	return all;
}

int perf_fd_new(const int *before, int n)
{
	return perf_fd_scan(before, n, NULL, NULL);
}

/* Does a disabled dummy ksymbol event with @module and @text open? */
static bool ksymbol_attr_opens(bool module, bool text)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.ksymbol = 1,
		.ksymbol_module = module,
		.ksymbol_text = text,
		.disabled = 1,
		.exclude_kernel = 1,
	};
	int fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool kernel_has_module_records(void)
{
	return ksymbol_attr_opens(true, false);
}

bool kernel_has_ksymbol_text(void)
{
	return ksymbol_attr_opens(false, true);
}

bool kernel_has_dyntext(void)
{
	/* The registry's own functions, core kernel text ('T'). */
	return kallsyms_sym_count("dyntext_add", "", 'T', NULL, NULL) > 0;
}

bool kernel_has_ksymbol_replay(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.ksymbol = 1,
		.disabled = 1,
		.exclude_kernel = 1,
	};
	int fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	bool ret;

	if (fd < 0)
		return false;
	/* A kernel that has the ioctl reads its argument first: -EFAULT. */
	ret = ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, NULL) < 0 &&
	      errno != ENOTTY;
	close(fd);
	return ret;
}

/* What rec_stream_open_maps() asks for besides ksymbol and BPF records. */
enum {
	REC_SELF	= 1 << 0,	/* a task event on this process only */
	REC_MODULES	= 1 << 1,	/* attr.ksymbol_module */
	REC_NO_SAMPLE_ID = 1 << 2,	/* no attr.sample_id_all */
	REC_TEXT_POKE	= 1 << 3,	/* attr.text_poke, records kept */
	REC_KSYMBOL_TEXT = 1 << 4,	/* attr.ksymbol_text, records kept */
};

static int rec_stream_open_maps(struct rec_stream *s, unsigned int pages,
				unsigned int opts)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = SAMPLE_TYPE,
		.ksymbol = 1,
		.bpf_event = 1,
		.sample_id_all = 1,
		.disabled = 1,
	};
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	struct perf_evsel *evsel;
	int err, *before, nbefore;

	memset(s, 0, sizeof(*s));
	libperf_init(NULL);
	attr.ksymbol_module = !!(opts & REC_MODULES);
	attr.sample_id_all = !(opts & REC_NO_SAMPLE_ID);
	attr.text_poke = !!(opts & REC_TEXT_POKE);
	attr.ksymbol_text = !!(opts & REC_KSYMBOL_TEXT);
	s->no_sample_id = !!(opts & REC_NO_SAMPLE_ID);
	s->keep_text = !!(opts & (REC_TEXT_POKE | REC_KSYMBOL_TEXT));
	if (opts & REC_SELF) {
		pid_t self = getpid();

		/* A task event: allowed without privileges for user space. */
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		/*
		 * The "any CPU" map: perf_cpu_map__dummy_new() until 6.8,
		 * perf_cpu_map__new_any_cpu() since; "" gives it in both.
		 */
		cpus = perf_cpu_map__new("");
		threads = perf_thread_map__new_array(1, &self);
	} else {
		cpus = perf_cpu_map__new(NULL);
		threads = perf_thread_map__new_dummy();
	}
	s->evlist = perf_evlist__new();
	evsel = perf_evsel__new(&attr);
	if (!cpus || !threads || !s->evlist || !evsel)
		return -ENOMEM;
	perf_evlist__add(s->evlist, evsel);
	perf_evlist__set_maps(s->evlist, cpus, threads);
	perf_cpu_map__put(cpus);
	perf_thread_map__put(threads);
	before = perf_fds_open(&nbefore);
	err = perf_evlist__open(s->evlist);
	/* The first event's fd (the first CPU's): the lowest new one. */
	s->fd = err ? -1 : perf_fd_new(before, nbefore);
	free(before);
	if (err)
		return err;
	err = perf_evlist__mmap(s->evlist, pages);
	if (err)
		return err;
	perf_evlist__enable(s->evlist);
	return 0;
}

static unsigned int rec_modules(void)
{
	return kernel_has_module_records() ? REC_MODULES : 0;
}

int rec_stream_open(struct rec_stream *s, unsigned int pages)
{
	return rec_stream_open_maps(s, pages, rec_modules());
}

int rec_stream_open_no_modules(struct rec_stream *s, unsigned int pages)
{
	return rec_stream_open_maps(s, pages, 0);
}

int rec_stream_open_no_sample_id(struct rec_stream *s, unsigned int pages)
{
	return rec_stream_open_maps(s, pages, rec_modules() | REC_NO_SAMPLE_ID);
}

int rec_stream_open_self(struct rec_stream *s, unsigned int pages)
{
	return rec_stream_open_maps(s, pages, rec_modules() | REC_SELF);
}

int rec_stream_open_text_poke(struct rec_stream *s, unsigned int pages)
{
	return rec_stream_open_maps(s, pages, rec_modules() | REC_TEXT_POKE);
}

int rec_stream_open_ksymbol_text(struct rec_stream *s, unsigned int pages,
				 bool text_poke)
{
	return rec_stream_open_maps(s, pages, rec_modules() | REC_KSYMBOL_TEXT |
					      (text_poke ? REC_TEXT_POKE : 0));
}

int rec_stream_open_self_ksymbol_text(struct rec_stream *s,
				      unsigned int pages)
{
	return rec_stream_open_maps(s, pages, rec_modules() | REC_SELF |
					      REC_KSYMBOL_TEXT);
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int parse(struct rec_stream *s, union perf_event *ev)
{
	size_t size = ev->header.size, id = s->no_sample_id ? 0 : 16, need;
	const char *raw = (const char *)ev;
	struct rec *r;

	if (ev->header.type == PERF_RECORD_LOST) {
		s->lost += ev->lost.lost;
		return 0;
	}
	if (ev->header.type == PERF_RECORD_TEXT_POKE) {
		/* The bytes padded to 8, then the sample_id. */
		need = (offsetof(struct perf_record_text_poke_event, bytes) +
			ev->text_poke.old_len + ev->text_poke.new_len + 7) /
		       8 * 8 + id;
		if (size != need) {
			s->malformed++;
			return 0;
		}
		s->text_pokes++;
		if (!s->keep_text)
			return 0;
	} else if (ev->header.type != PERF_RECORD_KSYMBOL &&
		   ev->header.type != PERF_RECORD_BPF_EVENT) {
		s->other++;
		return 0;
	}
	if (s->nr == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 1024;
		s->recs = realloc(s->recs, s->alloc * sizeof(*s->recs));
		if (!s->recs)
			return -ENOMEM;
	}
	if (ev->header.type == PERF_RECORD_KSYMBOL)
		need = offsetof(struct perf_record_ksymbol, name) +
		       ((strnlen(ev->ksymbol.name, size) + 8) & ~7UL) + id +
		       (ev->ksymbol.flags & PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID ?
			sizeof(struct rec_build_id) : 0);
	else if (ev->header.type == PERF_RECORD_BPF_EVENT)
		need = sizeof(struct perf_record_bpf_event) + id;
	else
		need = size;	/* TEXT_POKE, checked above */
	if (size != need) {
		s->malformed++;
		return 0;
	}
	r = &s->recs[s->nr++];
	memset(r, 0, sizeof(*r));
	r->type = ev->header.type;
	r->seq = s->nr - 1;
	/* sample_id trailer: time then cpu,res */
	if (id) {
		memcpy(&r->time, raw + size - 16, 8);
		memcpy(&r->cpu, raw + size - 8, 4);
	}
	if (r->type == PERF_RECORD_TEXT_POKE) {
		r->addr = ev->text_poke.addr;
		r->old_len = ev->text_poke.old_len;
		r->new_len = ev->text_poke.new_len;
		r->bytes = malloc(r->old_len + r->new_len + 1);
		if (!r->bytes)
			return -ENOMEM;
		memcpy(r->bytes, ev->text_poke.bytes, r->old_len + r->new_len);
	} else if (r->type == PERF_RECORD_KSYMBOL) {
		size_t max = size - id - offsetof(struct perf_record_ksymbol, name);

		r->addr = ev->ksymbol.addr;
		r->len = ev->ksymbol.len;
		r->ksym_type = ev->ksymbol.ksym_type;
		r->flags = ev->ksymbol.flags & ~PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID;
		if (max >= sizeof(r->name))
			max = sizeof(r->name) - 1;
		memcpy(r->name, ev->ksymbol.name, max);
		r->name[max] = 0;
		if (ev->ksymbol.flags & PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID) {
			struct rec_build_id b;

			memcpy(&b, raw + size - id - sizeof(b), sizeof(b));
			if (b.size > sizeof(b.id) || b.reserved[0] ||
			    b.reserved[1] || b.reserved[2]) {
				s->nr--;
				s->malformed++;
				return 0;
			}
			r->build_id_size = b.size;
			memcpy(r->build_id, b.id, sizeof(r->build_id));
		}
	} else {
		r->bpf_type = ev->bpf.type;
		r->bpf_flags = ev->bpf.flags;
		r->id = ev->bpf.id;
		memcpy(r->tag, ev->bpf.tag, BPF_TAG_SIZE);
	}
	return 0;
}

int rec_stream_drain(struct rec_stream *s)
{
	struct perf_mmap *map;
	union perf_event *ev;
	size_t first = s->nr;

	perf_evlist__for_each_mmap(s->evlist, map, false) {
		if (perf_mmap__read_init(map) < 0)
			continue;
		while ((ev = perf_mmap__read_event(map)) != NULL) {
			int err = parse(s, ev);

			perf_mmap__consume(map);
			if (err)
				return err;
		}
		perf_mmap__read_done(map);
	}
	/* Records already drained stay where they are: only sort the new ones. */
	qsort(s->recs + first, s->nr - first, sizeof(*s->recs), rec_cmp);
	return 0;
}

int rec_pin_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

void rec_stream_close(struct rec_stream *s)
{
	if (s->evlist) {
		perf_evlist__disable(s->evlist);
		perf_evlist__munmap(s->evlist);
		perf_evlist__close(s->evlist);
		perf_evlist__delete(s->evlist);
	}
	while (s->nr)
		free(s->recs[--s->nr].bytes);
	free(s->recs);
	memset(s, 0, sizeof(*s));
}

void tag_hex(const __u8 *tag, char *buf)
{
	int i;

	for (i = 0; i < BPF_TAG_SIZE; i++)
		sprintf(buf + 2 * i, "%02x", tag[i]);
}

int kallsyms_for_each(int (*fn)(const struct ksym_line *l, void *arg),
		      void *arg)
{
	char line[1024];
	struct ksym_line l;
	FILE *f = fopen("/proc/kallsyms", "r");
	int ret = 0;

	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		l.mod[0] = 0;
		if (sscanf(line, "%llx %c %511s [%127[^]]]", &l.addr, &l.type,
			   l.name, l.mod) >= 3)
			ret = fn(&l, arg);
	}
	fclose(f);
	return ret < 0 ? ret : 0;
}

struct ksym_lines {
	bool (*keep)(const char *mod);
	struct ksym_line *l;
	long n;
};

static int ksym_lines_fn(const struct ksym_line *k, void *arg)
{
	struct ksym_lines *d = arg;
	struct ksym_line *l;

	if (!d->keep(k->mod))
		return 0;
	l = realloc(d->l, (d->n + 1) * sizeof(*d->l));
	if (!l)
		return -ENOMEM;
	d->l = l;
	d->l[d->n++] = *k;
	return 0;
}

long kallsyms_lines(bool (*keep)(const char *mod), struct ksym_line **lines)
{
	struct ksym_lines d = { .keep = keep };
	int ret = kallsyms_for_each(ksym_lines_fn, &d);

	if (ret) {
		free(d.l);
		*lines = NULL;
		return ret;
	}
	*lines = d.l;
	return d.n;
}

#define LOOKUP_MOD "dyntext_lookup_bench"
#define LOOKUP_RUN "/sys/module/" LOOKUP_MOD "/parameters/run"

int text_lookup_start(void)
{
	unsigned long long text = 0, lookup = 0;
	char params[128];

	if (kallsyms_sym_count("kernel_text_address", "", 'T', &text, NULL) != 1 ||
	    kallsyms_sym_count("kallsyms_lookup", "", 'T', &lookup, NULL) != 1)
		return -ENOENT;
	snprintf(params, sizeof(params), "text_addr=%#llx lookup_addr=%#llx",
		 text, lookup);
	test_module_unload(LOOKUP_MOD);
	return test_module_load(LOOKUP_MOD, params);
}

int text_lookup(unsigned long long addr, int *text, char *name, size_t len)
{
	char buf[1024];
	unsigned long long ps;
	FILE *f;
	int n;

	snprintf(buf, sizeof(buf), "10 %#llx", addr);
	if (write_str(LOOKUP_RUN, buf, O_TRUNC))
		return -EIO;
	f = fopen(LOOKUP_RUN, "r");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu %llu %d %1023s", &ps, &ps, text, buf);
	fclose(f);
	if (n != 4)
		return -EINVAL;
	snprintf(name, len, "%s", buf);
	return 0;
}

int text_lookup_stop(void)
{
	return test_module_unload(LOOKUP_MOD);
}

int test_count(int n)
{
	const char *div = getenv("DYNTEXT_TEST_DIVISOR");

	return div && atoi(div) > 1 ? n / atoi(div) : n;
}

bool test_slow_kernel(void)
{
	return test_count(10) < 10;
}

bool kallsyms_dynamic_tag(const char *mod)
{
	return !strcmp(mod, "bpf") || !strncmp(mod, "__builtin__", 11);
}

struct ksym_find {
	__u64 addr;
	struct ksym_line found;
};

static int ksym_find_fn(const struct ksym_line *l, void *arg)
{
	struct ksym_find *k = arg;

	if (l->addr != k->addr)
		return 0;
	k->found = *l;
	return 1;
}

int kallsyms_find(__u64 addr, char *type, char *name, size_t name_len,
		  char *mod, size_t mod_len)
{
	struct ksym_find k = { .addr = addr };
	int ret = kallsyms_for_each(ksym_find_fn, &k);

	if (ret)
		return ret;
	if (!k.found.name[0])
		return -ENOENT;
	*type = k.found.type;
	snprintf(name, name_len, "%s", k.found.name);
	snprintf(mod, mod_len, "%s", k.found.mod);
	return 0;
}

int kallsyms_count_line(const char *want)
{
	char line[1024];
	FILE *f = fopen("/proc/kallsyms", "r");
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n += !strcmp(line, want);
	fclose(f);
	return n;
}

size_t rec_count_ksym(const struct rec_stream *s, __u64 addr, __u16 flags,
		      const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < s->nr; i++)
		n += s->recs[i].type == PERF_RECORD_KSYMBOL &&
		     s->recs[i].addr == addr && s->recs[i].flags == flags &&
		     (!name || !strcmp(s->recs[i].name, name));
	return n;
}

size_t rec_count_bpf(const struct rec_stream *s, __u32 id, __u16 bpf_type,
		     size_t *idx)
{
	size_t i, n = 0;

	for (i = 0; i < s->nr; i++) {
		if (s->recs[i].type == PERF_RECORD_BPF_EVENT &&
		    s->recs[i].id == id && s->recs[i].bpf_type == bpf_type) {
			if (idx)
				*idx = i;
			n++;
		}
	}
	return n;
}

const struct rec *rec_find_name(const struct rec_stream *s, const char *name,
				__u16 flags)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (s->recs[i].type == PERF_RECORD_KSYMBOL &&
		    s->recs[i].flags == flags &&
		    !strcmp(s->recs[i].name, name))
			return &s->recs[i];
	return NULL;
}

int bpf_trampoline_name(const char *func, char *buf, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	__u32 obj_id = 0;
	int id;

	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	btf__free(btf);
	if (id < 0)
		return id;
	/* vmlinux BTF is the first BTF object the kernel hands out. */
	if (bpf_btf_get_next_id(0, &obj_id))
		return -errno;
	snprintf(buf, len, "bpf_trampoline_%llu",
		 ((unsigned long long)obj_id << 32) | 0x80000000u |
		 (unsigned int)id);
	return 0;
}

int bpf_prog_trampoline_name(int fd, char *buf, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return -errno;
	if (!info.attach_btf_id)
		return -ENOENT;
	snprintf(buf, len, "bpf_trampoline_%llu",
		 ((unsigned long long)info.attach_btf_obj_id << 32) |
		 0x80000000u | info.attach_btf_id);
	return 0;
}

const struct rec *rec_wait_name(struct rec_stream *s, const char *name,
				__u16 flags)
{
	const struct rec *r;
	int i;

	for (i = 0; i < 1000; i++) {
		if (rec_stream_drain(s))
			return NULL;
		r = rec_find_name(s, name, flags);
		if (r)
			return r;
		usleep(10000);
	}
	return NULL;
}

struct ksym_count {
	const char *name, *mod;
	char type;
	int count;
	struct ksym_line last;
};

static int ksym_count_fn(const struct ksym_line *l, void *arg)
{
	struct ksym_count *c = arg;

	if (strcmp(l->name, c->name) || strcmp(l->mod, c->mod) ||
	    (c->type && l->type != c->type))
		return 0;
	c->count++;
	c->last = *l;
	return 0;
}

int kallsyms_sym_count(const char *name, const char *mod, char type,
		       unsigned long long *addr, char *type_seen)
{
	struct ksym_count c = { .name = name, .mod = mod, .type = type };
	int ret = kallsyms_for_each(ksym_count_fn, &c);

	if (ret)
		return ret;
	if (c.count && addr)
		*addr = c.last.addr;
	if (c.count && type_seen)
		*type_seen = c.last.type;
	return c.count;
}

struct next_sym {
	const char *mod;
	unsigned long long after, next;
};

static int next_sym_fn(const struct ksym_line *l, void *arg)
{
	struct next_sym *n = arg;

	if (!strcmp(l->mod, n->mod) && l->addr > n->after && l->addr < n->next)
		n->next = l->addr;
	return 0;
}

int module_sym_range(const char *mod, const char *name, unsigned long long *lo,
		     unsigned long long *hi)
{
	struct next_sym n = { .mod = mod, .next = ~0ULL };

	if (kallsyms_sym_count(name, mod, 't', lo, NULL) != 1)
		return -ENOENT;
	n.after = *lo;
	if (kallsyms_for_each(next_sym_fn, &n) || n.next == ~0ULL)
		return -ENOENT;
	*hi = n.next;
	return 0;
}

const char *test_binary_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return NULL;
	exe[n] = 0;
	snprintf(dir, sizeof(dir), "%s", dirname(exe));
	return dir;
}

int test_module_load_file(const char *path, const char *params)
{
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

int test_module_load(const char *mod, const char *params)
{
	const char *dir = test_binary_dir();
	char path[PATH_MAX];

	if (!dir)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s.ko", dir, mod);
	return test_module_load_file(path, params);
}

unsigned long long module_section_addr(const char *mod, const char *section)
{
	char path[256];
	unsigned long long a = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/%s/sections/%s", mod, section);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llx", &a) != 1)
		a = 0;
	fclose(f);
	return a;
}

int note_build_id(const char *path, __u8 *id, size_t max)
{
	unsigned char note[4096];
	unsigned int namesz, descsz, type;
	size_t off = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, note, sizeof(note));
	close(fd);
	if (n < 0)
		return -errno;
	/* Elf_Nhdr: namesz, descsz, type; name and desc padded to 4 bytes. */
	while (off + 12 <= (size_t)n) {
		memcpy(&namesz, note + off, 4);
		memcpy(&descsz, note + off + 4, 4);
		memcpy(&type, note + off + 8, 4);
		if (off + 12 + ((namesz + 3) & ~3U) + descsz > (size_t)n)
			return -EIO;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
		    !memcmp(note + off + 12, "GNU", 4)) {
			if (descsz > max)
				return -EIO;
			memcpy(id, note + off + 12 + 4, descsz);
			return descsz;
		}
		off += 12 + ((namesz + 3) & ~3U) + ((descsz + 3) & ~3U);
	}
	return -ENOENT;
}

int module_note_build_id(const char *mod, __u8 *id, size_t max)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id",
		 mod);
	return note_build_id(path, id, max);
}

int write_str(const char *path, const char *s, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

static int kprobe_slots_names(struct kprobe_slots *k)
{
	char line[512], *sp;
	FILE *f = fopen(TRACING "/available_filter_functions", "r");

	if (!f)
		return -errno;
	k->names = calloc(KPROBE_SLOTS_MAX, sizeof(*k->names));
	while (k->names && k->nr_names < KPROBE_SLOTS_MAX &&
	       fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		sp = strchr(line, ' ');
		/* Core kernel functions only (modules come and go). */
		if (sp || line[0] == '_')
			continue;
		k->names[k->nr_names++] = strdup(line);
	}
	fclose(f);
	return k->nr_names > 2 * 256 ? 0 : -ENOENT;
}

/* A disabled kprobe on names[i]: its fd, or -errno. */
static int kprobe_slots_open(struct kprobe_slots *k, int i)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = k->type,
		.config1 = (__u64)(unsigned long)k->names[i],
		.config2 = k->off,
		.disabled = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1,
			 PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int kprobe_slots_init(struct kprobe_slots *k)
{
	int i, fd, err;

	memset(k, 0, sizeof(*k));
	k->type = sysctl_get("/sys/bus/event_source/devices/kprobe/type");
	if (k->type < 0)
		return -ENOENT;
	k->off = strtol(strchr(KPROBE_OOL_SITE, '+') + 1, NULL, 0);
	err = kprobe_slots_names(k);
	if (err)
		return err;
	/* The cache's first page, which is never freed. */
	for (i = 0; i < k->nr_names; i++) {
		fd = kprobe_slots_open(k, i);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
	}
	return -ENOENT;
}

void kprobe_slots_release(struct kprobe_slots *k)
{
	while (k->nr_fds)
		close(k->fds[--k->nr_fds]);
}

int kprobe_slots_fill(struct kprobe_slots *k, bool (*done)(void *arg),
		      void *arg)
{
	int i, fd;

	for (i = 0; i < k->nr_names && k->nr_fds < KPROBE_SLOTS_MAX; i++) {
		if (!k->names[i])
			continue;
		fd = kprobe_slots_open(k, i);
		if (fd == -ENOMEM) {
			kprobe_slots_release(k);
			return fd;
		}
		if (fd < 0) {
			/* Not a site for a slot; never tried again. */
			free(k->names[i]);
			k->names[i] = NULL;
			continue;
		}
		k->fds[k->nr_fds++] = fd;
		if (done(arg))
			return 0;
	}
	/* Every site taken and done() never true: a refused page in use. */
	kprobe_slots_release(k);
	return -ENOSPC;
}

int ip_sampler_open(struct ip_sampler *s, int freq)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = freq,
		.sample_type = PERF_SAMPLE_IP,
		.disabled = 1,
	};
	struct perf_thread_map *threads;
	struct perf_cpu_map *cpus;
	struct perf_evsel *evsel;
	int err;

	libperf_init(NULL);
	cpus = perf_cpu_map__new(NULL);
	threads = perf_thread_map__new_dummy();
	s->evlist = perf_evlist__new();
	evsel = perf_evsel__new(&attr);
	if (!cpus || !threads || !s->evlist || !evsel)
		return -ENOMEM;
	perf_evlist__add(s->evlist, evsel);
	perf_evlist__set_maps(s->evlist, cpus, threads);
	perf_cpu_map__put(cpus);
	perf_thread_map__put(threads);
	err = perf_evlist__open(s->evlist);
	if (!err)
		err = perf_evlist__mmap(s->evlist, 16);
	if (!err)
		perf_evlist__enable(s->evlist);
	return err;
}

long ip_sampler_count(struct ip_sampler *s, __u64 lo, __u64 hi)
{
	struct perf_mmap *map;
	union perf_event *ev;
	long n = 0;

	perf_evlist__for_each_mmap(s->evlist, map, false) {
		if (perf_mmap__read_init(map) < 0)
			continue;
		while ((ev = perf_mmap__read_event(map)) != NULL) {
			if (ev->header.type == PERF_RECORD_SAMPLE &&
			    ev->sample.array[0] >= lo && ev->sample.array[0] < hi)
				n++;
			perf_mmap__consume(map);
		}
		perf_mmap__read_done(map);
	}
	return n;
}

void ip_sampler_close(struct ip_sampler *s)
{
	if (!s->evlist)
		return;
	perf_evlist__disable(s->evlist);
	perf_evlist__munmap(s->evlist);
	perf_evlist__close(s->evlist);
	perf_evlist__delete(s->evlist);
	s->evlist = NULL;
}

bool file_wait_line(const char *path, const char *a, const char *b, int ms)
{
	char line[1024];
	bool found = false;
	FILE *f;

	for (;;) {
		f = fopen(path, "r");
		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, a) && (!b || strstr(line, b));
		if (f)
			fclose(f);
		if (found || ms <= 0)
			return found;
		usleep(10000);
		ms -= 10;
	}
}

bool kernel_at_least(unsigned int major, unsigned int minor)
{
	unsigned int ma, mi;
	struct utsname u;

	return !uname(&u) && sscanf(u.release, "%u.%u", &ma, &mi) == 2 &&
	       (ma > major || (ma == major && mi >= minor));
}

int sysctl_get(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1000;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1000;
		fclose(f);
	}
	return v;
}

int sysctl_set(const char *path, int v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fprintf(f, "%d\n", v) < 0 ? -EIO : 0;
	if (fclose(f))
		ret = -errno;
	return ret;
}

int drop_to_nobody(void)
{
	return drop_to_nobody_keep(-1);
}

int drop_to_nobody_keep(int cap)
{
	return drop_to_nobody_caps(cap < 0 ? 0 : 1ULL << cap);
}

int drop_to_nobody_caps(__u64 mask)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};
	int i;

	if (mask && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -errno;
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -errno;
	if (!mask)
		return 0;
	for (i = 0; i < 2; i++) {
		data[i].effective = mask >> (32 * i);
		data[i].permitted = mask >> (32 * i);
	}
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/*
 * libperf does not hand out the fds of its events; a stream's events are
 * the only perf events these tests open, so the first one found in
 * /proc/self/fd belongs to it (any of them will do for an ioctl whose
 * records go to that event's ring buffer, which the stream drains).
 */
int rec_stream_fd(struct rec_stream *s)
{
	return s->evlist ? s->fd : -1;
}

int test_module_unload(const char *mod)
{
	return syscall(SYS_delete_module, mod, O_NONBLOCK) ? -errno : 0;
}

long registry_nr(void)
{
	char buf[64] = "";
	unsigned long nr;
	int fd = open(DYNTEXT_CHECK, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	n = n < 0 ? -errno : n;
	close(fd);
	if (n < 0)
		return n;
	buf[n] = 0;
	return sscanf(buf, "ok %lu", &nr) == 1 ? (long)nr : -EBADMSG;
}

int tap_n, tap_failed;

void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	tap_failed += !ok;
}

int bpf_prog_funcs(int fd, struct bpf_prog_info *info, __u64 *ksyms,
		   __u32 *lens, __u32 nr)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	info->nr_jited_ksyms = nr;
	info->jited_ksyms = (__u64)(unsigned long)ksyms;
	if (lens) {
		info->nr_jited_func_lens = nr;
		info->jited_func_lens = (__u64)(unsigned long)lens;
	}
	if (bpf_obj_get_info_by_fd(fd, info, &len))
		return -errno;
	return info->nr_jited_ksyms;
}

int prog_code_get(int fd, struct prog_code *c)
{
	struct bpf_prog_info info;
	__u32 info_len = sizeof(info);

	memset(c, 0, sizeof(*c));
	c->nr = bpf_prog_funcs(fd, &info, c->addr, c->len, PROG_CODE_MAX_FUNCS);
	if (c->nr <= 0 || c->nr > PROG_CODE_MAX_FUNCS)
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

int prog_view_get(int fd, struct prog_view *v)
{
	__u8 tags[PROG_VIEW_MAX][BPF_TAG_SIZE];
	struct bpf_func_info finfo[PROG_VIEW_MAX];
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info), i;
	struct btf *btf = NULL;

	memset(v, 0, sizeof(*v));
	info.nr_jited_ksyms = PROG_VIEW_MAX;
	info.jited_ksyms = (__u64)(unsigned long)v->addr;
	info.nr_jited_func_lens = PROG_VIEW_MAX;
	info.jited_func_lens = (__u64)(unsigned long)v->len;
	info.nr_prog_tags = PROG_VIEW_MAX;
	info.prog_tags = (__u64)(unsigned long)tags;
	info.nr_func_info = PROG_VIEW_MAX;
	info.func_info_rec_size = sizeof(struct bpf_func_info);
	info.func_info = (__u64)(unsigned long)finfo;
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return -errno;
	if (!info.nr_jited_ksyms || info.nr_jited_ksyms > PROG_VIEW_MAX ||
	    info.nr_jited_func_lens != info.nr_jited_ksyms ||
	    info.nr_prog_tags != info.nr_jited_ksyms ||
	    (info.nr_func_info && info.nr_func_info != info.nr_jited_ksyms))
		return -E2BIG;
	if (info.nr_func_info) {
		btf = btf__load_from_kernel_by_id(info.btf_id);
		if (!btf)
			return -ENOENT;
	}
	v->id = info.id;
	memcpy(v->tag, info.tag, BPF_TAG_SIZE);
	v->nr = info.nr_jited_ksyms;
	for (i = 0; i < v->nr; i++) {
		char hex[2 * BPF_TAG_SIZE + 1];
		const char *fn = info.name;

		if (btf) {
			const struct btf_type *t;

			t = btf__type_by_id(btf, finfo[i].type_id);
			fn = t ? btf__name_by_offset(btf, t->name_off) : NULL;
			if (!fn) {
				btf__free(btf);
				return -ENOENT;
			}
		}
		/*
		 * The main program's symbol carries the whole program's tag
		 * (bpf_prog_info.tag); subprograms carry their own tags.
		 */
		tag_hex(i ? tags[i] : info.tag, hex);
		snprintf(v->name[i], KSYM_NAME_LEN, "bpf_prog_%s%s%s", hex,
			 *fn ? "_" : "", fn);
	}
	btf__free(btf);
	return 0;
}

long ksym_replay(int fd, __u32 types, int (*drain)(void *arg), void *arg,
		 unsigned int *calls, __u64 *seq)
{
	struct perf_ksymbol_replay r = { .size = sizeof(r), .types = types };
	unsigned int n = 0;
	long ret;

	do {
		ret = ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &r);
		if (ret < 0)
			ret = -errno;
		n++;
		if (drain(arg))
			return -EIO;
	} while ((ret >= 0 || ret == -ENOSPC) && r.cursor && n < 1000000);
	if (calls)
		*calls = n;
	if (seq)
		*seq = r.seq;
	return ret;
}

static int rec_stream_drain_cb(void *s)
{
	return rec_stream_drain(s);
}

long rec_replay(struct rec_stream *s, __u32 types, unsigned int *calls,
		__u64 *seq)
{
	return ksym_replay(rec_stream_fd(s), types, rec_stream_drain_cb, s,
			   calls, seq);
}

bool rec_is_marker(const struct rec *r, __u16 flags)
{
	return r->type == PERF_RECORD_KSYMBOL &&
	       r->ksym_type == PERF_RECORD_KSYMBOL_TYPE_REPLAY_MARK &&
	       r->flags == (PERF_RECORD_KSYMBOL_FLAGS_REPLAY | flags);
}

__u64 attr_flags(const struct perf_event_attr *attr)
{
	__u64 flags;

	memcpy(&flags, (const char *)attr + offsetof(struct perf_event_attr, read_format) +
	       sizeof(attr->read_format), sizeof(flags));
	return flags;
}

void attr_set_flag(struct perf_event_attr *attr, int bit)
{
	__u64 flags = attr_flags(attr) | 1ULL << bit;

	memcpy((char *)attr + offsetof(struct perf_event_attr, read_format) +
	       sizeof(attr->read_format), &flags, sizeof(flags));
}
