// SPDX-License-Identifier: GPL-2.0
/*
 * Module text announced while perf records.
 *
 * The kernel announces each text region of a module it loads with a
 * PERF_RECORD_KSYMBOL of type PERF_RECORD_KSYMBOL_TYPE_MODULE, one record
 * per region.  While the module is loaded, the side-band thread of perf
 * record reads what perf report will need to name the functions inside:
 * the module's build-id and file, or, if it has no file perf can find, the
 * functions /proc/kallsyms lists in the region.  That goes to the
 * HEADER_KMOD_TEXT feature of perf.data, so that perf report names the
 * functions of a module even if it was unloaded before the session ended.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>
#include <api/fs/fs.h>
#include <symbol/kallsyms.h>
#include "bpf-event.h"
#include "build-id.h"
#include "debug.h"
#include "dso.h"
#include "env.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "kmod-event.h"
#include "machine.h"
#include "symbol.h"

/* A region without a file, waiting for the functions /proc/kallsyms lists. */
struct kmod_pending {
	struct kmod_text	*text;
	bool			reloaded;	/* a later region has its name */
};

/* A function /proc/kallsyms lists for the module of a pending region. */
struct kmod_sym {
	u64	addr;
	char	*name;
	char	*mod;
};

/* A module file under /lib/modules/$(uname -r). */
struct kmod_file {
	char		*name;		/* "[name]", as kmod_path__parse_name() gives */
	char		*path;
	/* The file's build-id, read again only if the file changed. */
	struct stat	st;
	struct build_id	bid;
	bool		bid_read;
};

/*
 * What the side-band thread of perf record keeps about module text while
 * it records; freed with its side-band event.  The thread reads
 * /proc/kallsyms once at the end of a pass over its ring buffers, for
 * every pending region of that pass (a burst of loads, and a module's core
 * and init text), then hands the regions to env.
 */
struct kmod_capture {
	struct perf_env		*env;
	bool			kernel_samples;	/* otherwise no functions */
	bool			cache_build_ids;
	struct {
		u32			nr, alloc;
		struct kmod_pending	*regions;
	} pending;
	struct {
		u32			nr, alloc;
		struct kmod_sym		*syms;
	} syms;
	struct {
		bool			indexed;
		size_t			nr, alloc;
		struct kmod_file	*files;
	} files;
};

static size_t kmod_name_len(const char *name)
{
	return strcspn(name, ".");	/* "name" and "name.init" */
}

/* Whether the module of a pending region is mod (len bytes). */
static bool kmod_pending__has_module(struct kmod_capture *kc, const char *mod,
				     size_t len)
{
	u32 i;

	for (i = 0; i < kc->pending.nr; i++) {
		const char *name = kc->pending.regions[i].text->name;

		if (kmod_name_len(name) == len && !strncmp(name, mod, len))
			return true;
	}
	return false;
}

static int kmod_syms__add(void *arg, const char *name, char type, u64 start)
{
	struct kmod_capture *kc = arg;
	const char *tab = strchr(name, '\t');
	const char *end = tab ? strchr(tab, ']') : NULL;
	struct kmod_sym *sym;

	/* Functions tagged [module], of a module with a pending region. */
	if (!end || !strchr("tTwW", type) || tab[1] != '[' ||
	    !kmod_pending__has_module(kc, tab + 2, end - tab - 2))
		return 0;
	if (kc->syms.nr == kc->syms.alloc) {
		u32 alloc = kc->syms.alloc ? 2 * kc->syms.alloc : 64;
		struct kmod_sym *syms;

		syms = realloc(kc->syms.syms, alloc * sizeof(*syms));
		if (!syms)
			return -ENOMEM;
		kc->syms.syms = syms;
		kc->syms.alloc = alloc;
	}
	sym = &kc->syms.syms[kc->syms.nr];
	sym->addr = start;
	sym->name = strndup(name, tab - name);
	sym->mod = strndup(tab + 2, end - tab - 2);
	if (!sym->name || !sym->mod) {
		free(sym->name);
		free(sym->mod);
		return -ENOMEM;
	}
	kc->syms.nr++;
	return 0;
}

static void kmod_syms__clear(struct kmod_capture *kc)
{
	u32 i;

	for (i = 0; i < kc->syms.nr; i++) {
		free(kc->syms.syms[i].name);
		free(kc->syms.syms[i].mod);
	}
	kc->syms.nr = 0;
}

static int kmod_text_sym__cmp(const void *a, const void *b)
{
	const struct kmod_text_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Whether sym is a function of the module of text, inside text. */
static bool kmod_sym__in(const struct kmod_sym *sym, const struct kmod_text *text)
{
	size_t len = kmod_name_len(text->name);

	return sym->addr >= text->addr && sym->addr < text->addr + text->len &&
	       strlen(sym->mod) == len && !strncmp(sym->mod, text->name, len);
}

/* The functions of kc->syms in the region, into text, sorted. */
static int kmod_text__take_syms(struct kmod_text *text, struct kmod_capture *kc)
{
	u32 i, n = 0;

	for (i = 0; i < kc->syms.nr; i++)
		n += kmod_sym__in(&kc->syms.syms[i], text);
	if (!n)
		return 0;
	text->syms = calloc(n, sizeof(*text->syms));
	if (!text->syms)
		return -ENOMEM;
	for (i = 0; i < kc->syms.nr; i++) {
		const struct kmod_sym *sym = &kc->syms.syms[i];

		if (!kmod_sym__in(sym, text))
			continue;
		text->syms[text->nr_syms].addr = sym->addr;
		text->syms[text->nr_syms].name = strdup(sym->name);
		if (!text->syms[text->nr_syms].name)
			return -ENOMEM;
		text->nr_syms++;
	}
	qsort(text->syms, text->nr_syms, sizeof(*text->syms),
	      kmod_text_sym__cmp);
	return 0;
}

/* Wait for the end of the pass to read /proc/kallsyms for text. */
static int kmod_pending__add(struct kmod_capture *kc, struct kmod_text *text)
{
	u32 i;

	if (kc->pending.nr == kc->pending.alloc) {
		u32 alloc = kc->pending.alloc ? 2 * kc->pending.alloc : 16;
		struct kmod_pending *regions;

		regions = realloc(kc->pending.regions, alloc * sizeof(*regions));
		if (!regions)
			return -ENOMEM;
		kc->pending.regions = regions;
		kc->pending.alloc = alloc;
	}
	/*
	 * The module was unloaded and loaded again within the pass: what
	 * /proc/kallsyms lists now is the later load's, not the earlier's.
	 */
	for (i = 0; i < kc->pending.nr; i++)
		if (!strcmp(kc->pending.regions[i].text->name, text->name))
			kc->pending.regions[i].reloaded = true;
	kc->pending.regions[kc->pending.nr].text = text;
	kc->pending.regions[kc->pending.nr].reloaded = false;
	kc->pending.nr++;
	return 0;
}

/*
 * At the end of a pass of the side-band thread: one read of /proc/kallsyms
 * for the regions of the pass that need it, then every region to env.
 */
static void kmod_pending__flush(struct kmod_capture *kc)
{
	char path[PATH_MAX];
	u32 i;

	if (!kc->pending.nr)
		return;
	snprintf(path, sizeof(path), "%s/kallsyms", procfs__mountpoint());
	/* Zeros (kptr_restrict): no function would fall in a region. */
	if (symbol__restricted_filename(path, "/proc/kallsyms"))
		pr_debug("kmod: %s shows no addresses, %u module text regions without functions\n",
			 path, kc->pending.nr);
	else if (kallsyms__parse(path, kc, kmod_syms__add))
		pr_debug("cannot read the functions of module text in %s\n", path);
	else
		pr_debug("kmod: one read of %s for %u module text regions\n",
			 path, kc->pending.nr);
	for (i = 0; i < kc->pending.nr; i++) {
		struct kmod_text *text = kc->pending.regions[i].text;

		if (!kc->pending.regions[i].reloaded &&
		    kmod_text__take_syms(text, kc))
			pr_debug("no memory for the functions of %s\n", text->name);
	}
	/*
	 * A region whose module was gone, or loaded again, by the time of the
	 * read gets the functions of a region of the same file (build-id)
	 * seen in this pass or before: a module loaded and unloaded at once
	 * is named as long as perf record saw one load of its file.
	 */
	for (i = 0; i < kc->pending.nr; i++) {
		struct kmod_text *text = kc->pending.regions[i].text;
		u32 j;

		for (j = 0; j < kc->pending.nr && !text->nr_syms; j++)
			if (kmod_text__copy_syms(text, kc->pending.regions[j].text))
				break;
		if (!text->nr_syms && perf_env__copy_kmod_syms(kc->env, text))
			pr_debug("no memory for the functions of %s\n", text->name);
	}
	for (i = 0; i < kc->pending.nr; i++)
		perf_env__insert_kmod_text(kc->env, kc->pending.regions[i].text);
	kc->pending.nr = 0;
	kmod_syms__clear(kc);
}

static int kmod_files__add(const char *path, struct kmod_path *m, void *data)
{
	struct kmod_capture *kc = data;
	struct kmod_file *f;

	if (kc->files.nr == kc->files.alloc) {
		size_t alloc = kc->files.alloc ? 2 * kc->files.alloc : 256;

		f = realloc(kc->files.files, alloc * sizeof(*f));
		if (!f)
			return -ENOMEM;
		kc->files.files = f;
		kc->files.alloc = alloc;
	}
	f = &kc->files.files[kc->files.nr];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	f->name = m->name;
	m->name = NULL;
	kc->files.nr++;
	return 0;
}

static int kmod_file__cmp(const void *a, const void *b)
{
	const struct kmod_file *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/*
 * The file of module name under /lib/modules/$(uname -r), or NULL.  The
 * directory is read once, on the first module perf record is told about:
 * after that a module costs a lookup.
 */
static struct kmod_file *kmod_files__find(struct kmod_capture *kc,
					  const char *name)
{
	struct kmod_file key;
	char bracketed[KSYM_NAME_LEN + 2];

	if (!kc->files.indexed) {
		struct utsname uts;
		char dir[PATH_MAX];

		kc->files.indexed = true;
		if (uname(&uts))
			return NULL;
		snprintf(dir, sizeof(dir), "/lib/modules/%s", uts.release);
		if (modules_dir__for_each(dir, 0, kmod_files__add, kc))
			pr_debug("kmod: cannot index the module files in %s\n", dir);
		qsort(kc->files.files, kc->files.nr, sizeof(*kc->files.files),
		      kmod_file__cmp);
	}
	snprintf(bracketed, sizeof(bracketed), "[%s]", name);
	key.name = bracketed;
	return bsearch(&key, kc->files.files, kc->files.nr,
		       sizeof(*kc->files.files), kmod_file__cmp);
}

/*
 * The build-id of the module file f into *bid, size 0 if it has none perf
 * can read (a compressed module): a module loaded again and again costs a
 * stat(), not an ELF read, as long as its file stays the same.
 */
static void kmod_file__build_id(struct kmod_file *f, struct build_id *bid)
{
	struct stat st;

	if (stat(f->path, &st)) {
		bid->size = 0;
		f->bid_read = false;
		return;
	}
	if (!f->bid_read || st.st_dev != f->st.st_dev ||
	    st.st_ino != f->st.st_ino || st.st_size != f->st.st_size ||
	    st.st_mtim.tv_sec != f->st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != f->st.st_mtim.tv_nsec) {
		if (filename__read_build_id(f->path, &f->bid) <= 0)
			f->bid.size = 0;
		f->st = st;
		f->bid_read = true;
	}
	*bid = f->bid;
}

/*
 * The file of a module loaded now, of build bid, into the build-id cache
 * unless it is there: another build may be installed over it and loaded
 * before the session ends, and perf record's build-id pass would then
 * cache that one under this build-id.  Once per build.
 */
static void kmod_file__cache(struct kmod_capture *kc, const struct kmod_file *f,
			     const struct build_id *bid)
{
	char sbuild_id[SBUILD_ID_SIZE];

	if (!kc->cache_build_ids || !bid->size)
		return;
	build_id__snprintf(bid, sbuild_id, sizeof(sbuild_id));
	if (!build_id_cache__cached(sbuild_id) &&
	    build_id_cache__add_s(sbuild_id, f->path, NULL, false, false))
		pr_debug("kmod: cannot add %s to the build-id cache\n", f->path);
}

/*
 * What perf report needs to name the functions of a module text region
 * that may be gone by then, read while the module is loaded.  For the
 * core text ("name"): the module's file under /lib/modules and its
 * build-id, unless the loaded module has another; perf report then reads
 * the functions from the file or from the build-id cache, as for modules
 * present at the start, and the init text ("name.init") from the file's
 * .init.text.  A module without such a file gets the functions
 * /proc/kallsyms lists in the region, read at the end of the pass
 * (*pending), if perf record records kernel samples, and the build-id of
 * the record (rbid, NULL if none).  NULL if memory runs out.
 */
static struct kmod_text *kmod_text__capture(struct kmod_capture *kc, u64 addr,
					    u64 len, const char *name,
					    const struct build_id *rbid,
					    bool *pending)
{
	struct kmod_text *text = zalloc(sizeof(*text));
	char mod[KSYM_NAME_LEN], notes[PATH_MAX];
	struct build_id bid, fbid;
	struct kmod_file *file;

	*pending = false;
	if (!text)
		return NULL;
	text->addr = addr;
	text->len = len;
	text->name = strdup(name);
	if (!text->name)
		goto err;
	snprintf(mod, sizeof(mod), "%.*s", (int)kmod_name_len(name), name);
	file = kmod_files__find(kc, mod);
	if (file && strchr(name, '.')) {
		/*
		 * Init text: with the module's file, it stays unnamed, as
		 * for a module present at the start.
		 */
		return text;
	}

	/*
	 * The loaded module's build-id is the record's.  Kernels that send
	 * none register the text before the module's sysfs directory exists,
	 * so /sys/module/name/notes may not be readable yet, or no longer:
	 * then the file's build-id is the one perf report matches anyway.  A
	 * build-id of the loaded module that differs rules the file out.  A
	 * file without a build-id perf can read (compressed, and perf lacks
	 * the decompressor) is kept, with the loaded module's build-id: perf
	 * report checks the file against it.
	 */
	bid.size = 0;
	if (rbid)
		bid = *rbid;
	if (file) {
		kmod_file__build_id(file, &fbid);
		snprintf(notes, sizeof(notes),
			 "%s/module/%s/notes/.note.gnu.build-id",
			 sysfs__mountpoint(), name);
		if (!rbid && sysfs__read_build_id(notes, &bid))
			bid.size = 0;
		if (fbid.size && bid.size &&
		    (bid.size != fbid.size || memcmp(bid.data, fbid.data, bid.size)))
			file = NULL;	/* another build of the module */
		else if (!bid.size)
			bid = fbid;
	}
	if (file) {
		text->path = strdup(file->path);
		if (!text->path)
			goto err;
		if (bid.size && bid.size <= sizeof(text->build_id)) {
			memcpy(text->build_id, bid.data, bid.size);
			text->build_id_size = bid.size;
		}
		if (fbid.size)		/* the file is of the loaded build */
			kmod_file__cache(kc, file, &fbid);
		return text;
	}
	/* By which perf report may find the file in the build-id cache. */
	if (bid.size && bid.size <= sizeof(text->build_id)) {
		memcpy(text->build_id, bid.data, bid.size);
		text->build_id_size = bid.size;
	}
	*pending = kc->kernel_samples;
	return text;
err:
	kmod_text__free(text);
	return NULL;
}

static int kmod_event__sb_cb(union perf_event *event, void *data)
{
	struct kmod_capture *kc = data;
	struct kmod_text *text;
	struct build_id bid;
	bool pending, has_bid;

	if (event->header.type == PERF_RECORD_BPF_EVENT)
		return bpf_event__sb_cb(event, kc->env);
	if (event->header.type != PERF_RECORD_KSYMBOL ||
	    event->ksymbol.ksym_type != PERF_RECORD_KSYMBOL_TYPE_MODULE ||
	    event->ksymbol.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER)
		return 0;

	has_bid = perf_record_ksymbol__build_id(&event->ksymbol, &bid);
	text = kmod_text__capture(kc, event->ksymbol.addr, event->ksymbol.len,
				  event->ksymbol.name, has_bid ? &bid : NULL,
				  &pending);
	if (!text) {
		pr_debug("no memory for module text %s\n",
			 event->ksymbol.name);
		return 0;
	}
	if (!pending || kmod_pending__add(kc, text))
		perf_env__insert_kmod_text(kc->env, text);
	return 0;
}

static void kmod_event__sb_pass_done(void *data)
{
	kmod_pending__flush(data);
}

/* With the side-band event: regions still pending never reached perf.data. */
static void kmod_capture__delete(void *data)
{
	struct kmod_capture *kc = data;
	size_t i;

	for (i = 0; i < kc->pending.nr; i++)
		kmod_text__free(kc->pending.regions[i].text);
	free(kc->pending.regions);
	kmod_syms__clear(kc);
	free(kc->syms.syms);
	for (i = 0; i < kc->files.nr; i++) {
		free(kc->files.files[i].name);
		free(kc->files.files[i].path);
	}
	free(kc->files.files);
	free(kc);
}

/*
 * Ask for PERF_RECORD_KSYMBOL side-band records, to capture the functions
 * of modules loaded while perf records into env; with kernel_samples, from
 * /proc/kallsyms for modules without a file; with cache_build_ids, the
 * file of each build loaded into the build-id cache.
 *
 * On the side-band event that perf record has for PERF_RECORD_BPF_EVENT,
 * if there is one: one side-band event, as before.  A second one would make
 * evlist__start_sb_thread() ask for sample ids on both, and kernels without
 * "perf/core: Fix the size of ksymbol and BPF records for every listener"
 * then write ksymbol and BPF records of the wrong size into the ring
 * buffers of the other listeners, perf record's own included: perf report
 * rejects the file ("failed to process type: 17").  A kernel without
 * module ksymbol records refuses attr.ksymbol_module; the open falls back
 * without it (evsel__detect_missing_features()).
 */
int evlist__add_kmod_sb_event(struct evlist *evlist, struct perf_env *env,
			      bool kernel_samples, bool cache_build_ids)
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
	struct kmod_capture *kc = zalloc(sizeof(*kc));
	struct evsel *evsel;

	if (!kc)
		return -1;
	kc->env = env;
	kc->kernel_samples = kernel_samples;
	kc->cache_build_ids = cache_build_ids;
	evlist__for_each_entry(evlist, evsel) {
		if (evsel->side_band.cb == bpf_event__sb_cb &&
		    evsel->side_band.data == env)
			goto found;
	}
	attr.wakeup_watermark = 1;
	if (evlist__add_sb_event(evlist, &attr, kmod_event__sb_cb, kc)) {
		free(kc);
		return -1;
	}
	evsel = evlist__last(evlist);
found:
	evsel->core.attr.ksymbol = 1;
	evsel->core.attr.ksymbol_module = 1;
	evsel->side_band.cb = kmod_event__sb_cb;
	evsel->side_band.data = kc;
	evsel->side_band.pass_done = kmod_event__sb_pass_done;
	evsel->side_band.data_free = kmod_capture__delete;
	return 0;
}
