// SPDX-License-Identifier: GPL-2.0
/*
 * Module text announced while perf records.
 *
 * The kernel announces each text region of a module it loads with a
 * PERF_RECORD_KSYMBOL of type PERF_RECORD_KSYMBOL_TYPE_MODULE, one record
 * per region.  The functions inside are only listed by /proc/kallsyms while
 * the module is loaded, so the side-band thread of perf record reads them
 * as soon as the record arrives and keeps them in the perf_env, from where
 * they go to the HEADER_KMOD_TEXT feature of perf.data; perf report then
 * names the functions of a module even if it was unloaded before the
 * session ended.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>
#include <api/fs/fs.h>
#include <symbol/kallsyms.h>
#include "bpf-event.h"
#include "debug.h"
#include "env.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "kmod-event.h"

struct kmod_text_capture {
	struct kmod_text	*text;
	u32			alloc;
	size_t			mod_len;	/* "name" of "name.init" */
};

static int kmod_text__add_sym(void *arg, const char *name, char type,
			      u64 start)
{
	struct kmod_text_capture *cap = arg;
	struct kmod_text *text = cap->text;
	const char *tab = strchr(name, '\t');

	/* Functions in the region, tagged [module] with the region's module. */
	if (start < text->addr || start >= text->addr + text->len || !tab ||
	    !strchr("tTwW", type) || strncmp(tab + 1, "[", 1) ||
	    strncmp(tab + 2, text->name, cap->mod_len) ||
	    tab[2 + cap->mod_len] != ']')
		return 0;
	if (text->nr_syms == cap->alloc) {
		u32 alloc = cap->alloc ? 2 * cap->alloc : 64;
		struct kmod_text_sym *syms;

		syms = realloc(text->syms, alloc * sizeof(*syms));
		if (!syms)
			return -ENOMEM;
		text->syms = syms;
		cap->alloc = alloc;
	}
	text->syms[text->nr_syms].addr = start;
	text->syms[text->nr_syms].name = strndup(name, tab - name);
	if (!text->syms[text->nr_syms].name)
		return -ENOMEM;
	text->nr_syms++;
	return 0;
}

static int kmod_text_sym__cmp(const void *a, const void *b)
{
	const struct kmod_text_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The functions /proc/kallsyms lists in [addr, addr + len) now, or NULL if
 * it cannot be read.  It lists no addresses (all zero) to a reader that may
 * not see them; then the region has no functions.
 */
struct kmod_text *kmod_text__capture(u64 addr, u64 len, const char *name)
{
	struct kmod_text_capture cap = {};
	struct kmod_text *text = zalloc(sizeof(*text));
	char path[PATH_MAX];

	if (!text)
		return NULL;
	text->addr = addr;
	text->len = len;
	text->name = strdup(name);
	if (!text->name)
		goto err;
	cap.text = text;
	cap.mod_len = strcspn(text->name, ".");
	snprintf(path, sizeof(path), "%s/kallsyms", procfs__mountpoint());
	if (kallsyms__parse(path, &cap, kmod_text__add_sym))
		goto err;
	qsort(text->syms, text->nr_syms, sizeof(*text->syms),
	      kmod_text_sym__cmp);
	return text;
err:
	kmod_text__free(text);
	return NULL;
}

static int kmod_event__sb_cb(union perf_event *event, void *data)
{
	struct perf_env *env = data;
	struct kmod_text *text;

	if (event->header.type == PERF_RECORD_BPF_EVENT)
		return bpf_event__sb_cb(event, data);
	if (event->header.type != PERF_RECORD_KSYMBOL ||
	    event->ksymbol.ksym_type != PERF_RECORD_KSYMBOL_TYPE_MODULE ||
	    event->ksymbol.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER)
		return 0;

	text = kmod_text__capture(event->ksymbol.addr, event->ksymbol.len,
				  event->ksymbol.name);
	if (!text) {
		pr_debug("cannot read the functions of module text %s\n",
			 event->ksymbol.name);
		return 0;
	}
	perf_env__insert_kmod_text(env, text);
	return 0;
}

/*
 * Ask for PERF_RECORD_KSYMBOL side-band records, to capture the functions
 * of modules loaded while perf records.
 *
 * On the side-band event that perf record has for PERF_RECORD_BPF_EVENT,
 * if there is one: one side-band event, as before.  A second one would make
 * evlist__start_sb_thread() ask for sample ids on both, and kernels without
 * "perf/core: give every listener a ksymbol and BPF record of the right
 * size" then write ksymbol and BPF records of the wrong size into the ring
 * buffers of the other listeners, perf record's own included: perf report
 * rejects the file ("failed to process type: 17").  A kernel without
 * module ksymbol records refuses attr.ksymbol_module; the open falls back
 * without it (evsel__detect_missing_features()).
 */
int evlist__add_kmod_sb_event(struct evlist *evlist, struct perf_env *env)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_DUMMY,
		.sample_id_all	= 1,
		.watermark	= 1,
		.ksymbol	= 1,
		.ksymbol_module	= 1,
		.size		= sizeof(attr),
	};
	struct evsel *evsel;

	evlist__for_each_entry(evlist, evsel) {
		if (evsel->side_band.cb == bpf_event__sb_cb &&
		    evsel->side_band.data == env) {
			evsel->core.attr.ksymbol = 1;
			evsel->core.attr.ksymbol_module = 1;
			evsel->side_band.cb = kmod_event__sb_cb;
			return 0;
		}
	}
	attr.wakeup_watermark = 1;
	return evlist__add_sb_event(evlist, &attr, kmod_event__sb_cb, env);
}
