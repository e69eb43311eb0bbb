// SPDX-License-Identifier: GPL-2.0
/*
 * The stress driver's end state (stress.h): the consumer's view (its
 * regions: registered minus unregistered) against the dynamic lines of
 * /proc/kallsyms, the registry's count, the BPF images of bpf_prog_info of
 * every loaded program, the BPF trampolines of the tracing links, the
 * module regions of /proc/modules, and the regions there were before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "records.h"
#include "stress.h"

bool dynamic_owner(const char *mod)
{
	return kallsyms_dynamic_tag(mod) || !strcmp(mod, "dyntext_misuse_text");
}

static const char *owner_of(const struct region *r)
{
	if (r->ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF)
		return "bpf";
	if (!strcmp(r->name, "ftrace_trampoline"))
		return "__builtin__ftrace";
	if (!strncmp(r->name, "kprobe_", 7))
		return "__builtin__kprobes";
	return "dyntext_misuse_text";
}

/* /proc/kallsyms against the view; returns the number of differences. */
static int compare_kallsyms(size_t *nr_lines)
{
	struct ksym_line *l;
	size_t i, listed = 0;
	long n = kallsyms_lines(dynamic_owner, &l);
	int diff = 0;
	char *seen;

	if (n < 0) {
		note("/proc/kallsyms: %s", strerror(-n));
		return 1;
	}
	*nr_lines = n;
	seen = calloc(view.nr + 1, 1);
	for (i = 0; i < (size_t)n; i++) {
		long j = view_find(l[i].addr);

		if (j < 0 || strcmp(view.r[j].name, l[i].name) ||
		    view.r[j].ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE ||
		    strcmp(owner_of(&view.r[j]), l[i].mod) || seen[j]) {
			diff++;
			note("kallsyms only: %llx %s [%s]",
			     (unsigned long long)l[i].addr, l[i].name,
			     l[i].mod);
			continue;
		}
		seen[j] = 1;
	}
	for (i = 0; i < view.nr; i++) {
		if (view.r[i].ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE)
			continue;
		listed++;
		if (!seen[i]) {
			diff++;
			note("records only: %llx %u %s",
			     (unsigned long long)view.r[i].addr, view.r[i].len,
			     view.r[i].name);
		}
	}
	free(seen);
	free(l);
	return diff;
}

/* Every JITed image of every loaded program is in the view. */
static int compare_bpf_progs(size_t *nr_images)
{
	size_t i, in_view = 0;
	__u32 id = 0;
	int diff = 0;

	*nr_images = 0;
	for (i = 0; i < view.nr; i++)
		in_view += !strncmp(view.r[i].name, "bpf_prog_", 9) &&
			   view.r[i].ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF;
	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { };
		__u8 tag0[BPF_TAG_SIZE];
		__u32 len = sizeof(info), n, j;
		__u64 *addrs;
		__u32 *lens;
		__u8 *tags;
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
			close(fd);
			continue;
		}
		memcpy(tag0, info.tag, BPF_TAG_SIZE);
		n = info.nr_jited_ksyms;
		if (info.nr_jited_func_lens != n || info.nr_prog_tags != n) {
			diff++;
			note("prog %u: %u ksyms, %u lengths, %u tags", id, n,
			     info.nr_jited_func_lens, info.nr_prog_tags);
			close(fd);
			continue;
		}
		addrs = calloc(n, sizeof(*addrs));
		lens = calloc(n, sizeof(*lens));
		tags = calloc(n, BPF_TAG_SIZE);
		memset(&info, 0, sizeof(info));
		info.nr_jited_ksyms = n;
		info.jited_ksyms = (__u64)(unsigned long)addrs;
		info.nr_jited_func_lens = n;
		info.jited_func_lens = (__u64)(unsigned long)lens;
		info.nr_prog_tags = n;
		info.prog_tags = (__u64)(unsigned long)tags;
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
		    info.nr_jited_ksyms != n) {
			free(addrs);
			free(lens);
			free(tags);
			close(fd);
			continue;
		}
		close(fd);
		for (j = 0; j < n; j++) {
			char want[64];
			long k = view_find(addrs[j]);
			size_t wl;

			/*
			 * The main image is named after the program's tag,
			 * a subprogram's after its own (prog_tags[0] is the
			 * main function's alone).
			 */
			snprintf(want, sizeof(want), "bpf_prog_");
			tag_hex(j ? tags + j * BPF_TAG_SIZE : tag0, want + 9);
			wl = strlen(want);
			(*nr_images)++;
			if (k < 0 || view.r[k].len != lens[j] ||
			    strncmp(view.r[k].name, want, wl) ||
			    (view.r[k].name[wl] && view.r[k].name[wl] != '_')) {
				diff++;
				note("prog %u image %u (%llx %u %s...) not in the records",
				     id, j, (unsigned long long)addrs[j],
				     lens[j], want);
			}
		}
		free(addrs);
		free(lens);
		free(tags);
	}
	if (in_view != *nr_images) {
		diff++;
		note("%zu bpf_prog_ regions in the records, %zu images loaded",
		     in_view, *nr_images);
	}
	return diff;
}

static int key_cmp(const void *a, const void *b)
{
	const __u64 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* One trampoline per target of a tracing link (all on vmlinux here). */
static int compare_trampolines(size_t *nr)
{
	__u64 keys[256], got[256];
	size_t nk = 0, ng = 0, i;
	__u32 id = 0;
	int diff = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = { };
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_LINK_TYPE_TRACING && nk < 256) {
			__u64 key = (__u64)info.tracing.target_obj_id << 32 |
				    0x80000000u | info.tracing.target_btf_id;

			for (i = 0; i < nk && keys[i] != key; i++)
				;
			if (i == nk)
				keys[nk++] = key;
		}
		close(fd);
	}
	for (i = 0; i < view.nr && ng < 256; i++)
		if (!strncmp(view.r[i].name, "bpf_trampoline_", 15))
			got[ng++] = strtoull(view.r[i].name + 15, NULL, 10);
	qsort(keys, nk, sizeof(*keys), key_cmp);
	qsort(got, ng, sizeof(*got), key_cmp);
	*nr = ng;
	if (nk != ng || memcmp(keys, got, nk * sizeof(*keys))) {
		diff++;
		note("%zu trampolines in the records, %zu link targets", ng, nk);
		for (i = 0; i < ng; i++)
			note("  record: bpf_trampoline_%llu", (unsigned long long)got[i]);
		for (i = 0; i < nk; i++)
			note("  link:   bpf_trampoline_%llu", (unsigned long long)keys[i]);
	}
	return diff;
}

/* Module regions: one per loaded module, at its /proc/modules address. */
static int compare_modules(size_t *nr)
{
	char line[512], name[128];
	unsigned long long addr;
	size_t in_view = 0, i;
	int diff = 0;
	FILE *f = fopen("/proc/modules", "r");

	*nr = 0;
	if (!f) {
		note("/proc/modules: %s", strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		long k;

		if (sscanf(line, "%127s %*s %*s %*s %*s %llx", name, &addr) != 2)
			continue;
		(*nr)++;
		k = view_find(addr);
		if (k < 0 || strcmp(view.r[k].name, name) ||
		    view.r[k].ksym_type != PERF_RECORD_KSYMBOL_TYPE_MODULE) {
			diff++;
			note("module %s at %llx: no region in the records", name, addr);
		}
	}
	fclose(f);
	for (i = 0; i < view.nr; i++)
		in_view += view.r[i].ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE;
	if (in_view != *nr) {
		diff++;
		note("%zu module regions in the records, %zu modules", in_view, *nr);
		for (i = 0; i < view.nr; i++)
			if (view.r[i].ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE)
				note("  record: %s %llx", view.r[i].name,
				     (unsigned long long)view.r[i].addr);
	}
	return diff;
}

static size_t count_named(const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < view.nr; i++)
		n += !strcmp(view.r[i].name, name);
	return n;
}

/*
 * Compare everything once; 0 if all agree.  Deferred frees (trampoline
 * images after RCU-tasks grace periods) make the caller retry for a while.
 */
static int compare_all(struct end_state *e, long want_ftrace)
{
	long nr = registry_nr();
	int diff = 0;

	if (consumer_step())
		return -1;
	diff += compare_kallsyms(&e->lines);
	if (nr < 0) {
		diff++;
		note("%s: %s", DYNTEXT_CHECK, strerror(-nr));
	} else if ((size_t)nr != view.nr) {
		diff++;
		note("registry holds %ld regions, the records %zu", nr, view.nr);
	}
	e->registry = nr;
	diff += compare_bpf_progs(&e->images);
	diff += compare_trampolines(&e->trampolines);
	diff += compare_modules(&e->modules);
	e->ftrace = count_named("ftrace_trampoline");
	e->kprobe = count_named("kprobe_insn_page") +
		    count_named("kprobe_optinsn_page");
	if (want_ftrace >= 0 && e->ftrace != (size_t)want_ftrace) {
		diff++;
		note("%zu ftrace trampolines, %ld expected", e->ftrace, want_ftrace);
	}
	if (consumer_pending()) {
		diff++;
		note("%zu records not applied yet", consumer_pending());
	}
	return diff;
}

int settle(struct end_state *e, long want_ftrace, double secs)
{
	double t0 = now_s();
	int diff;

	for (;;) {
		notes_clear(&cmp);
		diff = compare_all(e, want_ftrace);
		if (!diff || now_s() - t0 > secs)
			return diff;
		usleep(300000);
	}
}

void print_end_state(const char *when, const struct end_state *e)
{
	printf("# %s: %zu regions in the records, registry %zu, /proc/kallsyms %zu dynamic lines,\n"
	       "#   %zu BPF program images, %zu BPF trampolines, %zu modules, %zu ftrace trampolines,\n"
	       "#   %zu kprobe instruction pages\n",
	       when, view.nr, e->registry, e->lines, e->images, e->trampolines,
	       e->modules, e->ftrace, e->kprobe);
}

struct region *view_copy(size_t *nr)
{
	struct region *r = calloc(view.nr + 1, sizeof(*r));
	size_t i;

	for (i = 0; i < view.nr; i++) {
		r[i] = view.r[i];
		r[i].name = strdup(view.r[i].name);
	}
	*nr = view.nr;
	return r;
}

/* Back to what there was, but for kprobe pages a cache keeps. */
int compare_before(const struct region *before, size_t nr_before)
{
	int diff = 0;
	size_t i, j;

	for (i = 0; i < nr_before; i++) {
		long k = view_find(before[i].addr);

		if (!strncmp(before[i].name, "kprobe_", 7))
			continue;
		if (k < 0 || strcmp(view.r[k].name, before[i].name) ||
		    view.r[k].len != before[i].len) {
			diff++;
			note("gone: %llx %u %s",
			     (unsigned long long)before[i].addr, before[i].len,
			     before[i].name);
		}
	}
	for (i = 0; i < view.nr; i++) {
		if (!strncmp(view.r[i].name, "kprobe_", 7) ||
		    !strncmp(view.r[i].name, "bpf_dispatcher_", 15))
			continue;
		for (j = 0; j < nr_before && before[j].addr != view.r[i].addr; j++)
			;
		if (j == nr_before) {
			diff++;
			note("left behind: %llx %u %s",
			     (unsigned long long)view.r[i].addr, view.r[i].len,
			     view.r[i].name);
		}
	}
	return diff;
}
