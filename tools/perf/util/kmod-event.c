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
#include <dirent.h>
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
#include "path.h"
#include "symbol.h"

/*
 * Module text regions without a file, waiting for the functions
 * /proc/kallsyms lists for them.  The side-band thread reads /proc/kallsyms
 * once at the end of a pass over its ring buffers, for every region of
 * that pass (a burst of loads, and a module's core and init text), then
 * hands the regions to perf_env.
 */
static struct {
	u32			nr, alloc;
	struct kmod_pending {
		struct kmod_text *text;
		bool		 reloaded;	/* a later region has its name */
	}			*regions;
} kmod_pending;

/* Whether perf record records kernel samples: otherwise no functions. */
static bool kmod_kernel_samples;

/* The functions /proc/kallsyms lists for the modules of pending regions. */
static struct {
	u32			nr, alloc;
	struct kmod_sym {
		u64	addr;
		char	*name;
		char	*mod;
	}			*syms;
} kmod_syms;

static size_t kmod_name_len(const char *name)
{
	return strcspn(name, ".");	/* "name" and "name.init" */
}

/* Whether the module of a pending region is mod (len bytes). */
static bool kmod_pending__has_module(const char *mod, size_t len)
{
	u32 i;

	for (i = 0; i < kmod_pending.nr; i++) {
		const char *name = kmod_pending.regions[i].text->name;

		if (kmod_name_len(name) == len && !strncmp(name, mod, len))
			return true;
	}
	return false;
}

static int kmod_syms__add(void *arg __maybe_unused, const char *name,
			  char type, u64 start)
{
	const char *tab = strchr(name, '\t');
	const char *end = tab ? strchr(tab, ']') : NULL;
	struct kmod_sym *sym;

	/* Functions tagged [module], of a module with a pending region. */
	if (!end || !strchr("tTwW", type) || tab[1] != '[' ||
	    !kmod_pending__has_module(tab + 2, end - tab - 2))
		return 0;
	if (kmod_syms.nr == kmod_syms.alloc) {
		u32 alloc = kmod_syms.alloc ? 2 * kmod_syms.alloc : 64;
		struct kmod_sym *syms;

		syms = realloc(kmod_syms.syms, alloc * sizeof(*syms));
		if (!syms)
			return -ENOMEM;
		kmod_syms.syms = syms;
		kmod_syms.alloc = alloc;
	}
	sym = &kmod_syms.syms[kmod_syms.nr];
	sym->addr = start;
	sym->name = strndup(name, tab - name);
	sym->mod = strndup(tab + 2, end - tab - 2);
	if (!sym->name || !sym->mod) {
		free(sym->name);
		free(sym->mod);
		return -ENOMEM;
	}
	kmod_syms.nr++;
	return 0;
}

static void kmod_syms__clear(void)
{
	u32 i;

	for (i = 0; i < kmod_syms.nr; i++) {
		free(kmod_syms.syms[i].name);
		free(kmod_syms.syms[i].mod);
	}
	kmod_syms.nr = 0;
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

/* The functions of kmod_syms in the region, into text, sorted. */
static int kmod_text__take_syms(struct kmod_text *text)
{
	u32 i, n = 0;

	for (i = 0; i < kmod_syms.nr; i++)
		n += kmod_sym__in(&kmod_syms.syms[i], text);
	if (!n)
		return 0;
	text->syms = calloc(n, sizeof(*text->syms));
	if (!text->syms)
		return -ENOMEM;
	for (i = 0; i < kmod_syms.nr; i++) {
		const struct kmod_sym *sym = &kmod_syms.syms[i];

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
static int kmod_pending__add(struct kmod_text *text)
{
	u32 i;

	if (kmod_pending.nr == kmod_pending.alloc) {
		u32 alloc = kmod_pending.alloc ? 2 * kmod_pending.alloc : 16;
		struct kmod_pending *regions;

		regions = realloc(kmod_pending.regions, alloc * sizeof(*regions));
		if (!regions)
			return -ENOMEM;
		kmod_pending.regions = regions;
		kmod_pending.alloc = alloc;
	}
	/*
	 * The module was unloaded and loaded again within the pass: what
	 * /proc/kallsyms lists now is the later load's, not the earlier's.
	 */
	for (i = 0; i < kmod_pending.nr; i++)
		if (!strcmp(kmod_pending.regions[i].text->name, text->name))
			kmod_pending.regions[i].reloaded = true;
	kmod_pending.regions[kmod_pending.nr].text = text;
	kmod_pending.regions[kmod_pending.nr].reloaded = false;
	kmod_pending.nr++;
	return 0;
}

/*
 * At the end of a pass of the side-band thread: one read of /proc/kallsyms
 * for the regions of the pass that need it, then every region to env.
 */
static void kmod_pending__flush(struct perf_env *env)
{
	char path[PATH_MAX];
	u32 i;

	if (!kmod_pending.nr)
		return;
	snprintf(path, sizeof(path), "%s/kallsyms", procfs__mountpoint());
	if (kallsyms__parse(path, NULL, kmod_syms__add))
		pr_debug("cannot read the functions of module text in %s\n", path);
	else
		pr_debug("kmod: one read of %s for %u module text regions\n",
			 path, kmod_pending.nr);
	for (i = 0; i < kmod_pending.nr; i++) {
		struct kmod_text *text = kmod_pending.regions[i].text;

		if (!kmod_pending.regions[i].reloaded &&
		    kmod_text__take_syms(text))
			pr_debug("no memory for the functions of %s\n", text->name);
	}
	/*
	 * A region whose module was gone, or loaded again, by the time of the
	 * read gets the functions of a region of the same file (build-id)
	 * seen in this pass or before: a module loaded and unloaded at once
	 * is named as long as perf record saw one load of its file.
	 */
	for (i = 0; i < kmod_pending.nr; i++) {
		struct kmod_text *text = kmod_pending.regions[i].text;
		u32 j;

		for (j = 0; j < kmod_pending.nr && !text->nr_syms; j++)
			if (kmod_text__copy_syms(text, kmod_pending.regions[j].text))
				break;
		if (!text->nr_syms && perf_env__copy_kmod_syms(env, text))
			pr_debug("no memory for the functions of %s\n", text->name);
	}
	for (i = 0; i < kmod_pending.nr; i++)
		perf_env__insert_kmod_text(env, kmod_pending.regions[i].text);
	kmod_pending.nr = 0;
	kmod_syms__clear();
}

/* The module files under /lib/modules/$(uname -r), by module name. */
struct kmod_file {
	char		*name;		/* "[name]", as kmod_path__parse_name() gives */
	char		*path;
	/* The file's build-id, read again only if the file changed. */
	struct stat	st;
	struct build_id	bid;
	bool		bid_read;
};

static struct {
	bool		 indexed;
	size_t		 nr, alloc;
	struct kmod_file *files;
} kmod_files;

static int kmod_files__add_dir(const char *dir_name, int depth)
{
	DIR *dir = opendir(dir_name);
	struct dirent *dent;

	if (!dir)
		return -1;
	while ((dent = readdir(dir)) != NULL) {
		char path[PATH_MAX];
		struct kmod_path m;
		struct stat st;

		if (!strcmp(dent->d_name, ".") || !strcmp(dent->d_name, ".."))
			continue;
		path__join(path, sizeof(path), dir_name, dent->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			/* Not the source and build trees, as perf does. */
			if (depth || (strcmp(dent->d_name, "source") &&
				      strcmp(dent->d_name, "build")))
				kmod_files__add_dir(path, depth + 1);
			continue;
		}
		if (kmod_path__parse_name(&m, dent->d_name))
			continue;
		if (m.kmod && kmod_files.nr == kmod_files.alloc) {
			size_t alloc = kmod_files.alloc ? 2 * kmod_files.alloc : 256;
			struct kmod_file *files;

			files = realloc(kmod_files.files, alloc * sizeof(*files));
			if (!files) {
				free(m.name);
				break;
			}
			kmod_files.files = files;
			kmod_files.alloc = alloc;
		}
		if (m.kmod) {
			kmod_files.files[kmod_files.nr].name = m.name;
			kmod_files.files[kmod_files.nr].path = strdup(path);
			if (kmod_files.files[kmod_files.nr].path)
				kmod_files.nr++;
			else
				free(m.name);
		} else {
			free(m.name);
		}
	}
	closedir(dir);
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
static struct kmod_file *kmod_files__find(const char *name)
{
	struct kmod_file key, *f;
	char bracketed[KSYM_NAME_LEN + 2];

	if (!kmod_files.indexed) {
		struct utsname uts;
		char dir[PATH_MAX];

		kmod_files.indexed = true;
		if (uname(&uts))
			return NULL;
		snprintf(dir, sizeof(dir), "/lib/modules/%s", uts.release);
		kmod_files__add_dir(dir, 0);
		qsort(kmod_files.files, kmod_files.nr, sizeof(*kmod_files.files),
		      kmod_file__cmp);
	}
	snprintf(bracketed, sizeof(bracketed), "[%s]", name);
	key.name = bracketed;
	f = bsearch(&key, kmod_files.files, kmod_files.nr,
		    sizeof(*kmod_files.files), kmod_file__cmp);
	return f;
}

/*
 * The build-id of the module file f into *bid, size 0 if it has none perf
 * can read (a compressed module): a module loaded again and again costs a
 * stat(), not an ELF read, as long as its file stays the same.
 */
static void kmod_file__build_id(struct kmod_file *f, struct build_id *bid)
{
	struct stat st;

	if (stat(f->path, &st) || !f->bid_read || st.st_dev != f->st.st_dev ||
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
 * What perf report needs to name the functions of a module text region
 * that may be gone by then, read while the module is loaded.  For the
 * core text ("name"): the module's file under /lib/modules and its
 * build-id, unless the loaded module has another; perf report then reads
 * the functions from the file or from the build-id cache, as for modules
 * present at the start, and the init text ("name.init") stays unnamed as
 * theirs does.  A module without such a file gets the functions
 * /proc/kallsyms lists in the region, read at the end of the pass
 * (*pending), if perf record records kernel samples, and the build-id of
 * the record (rbid, NULL if none).  NULL if memory runs out.
 */
static struct kmod_text *kmod_text__capture(u64 addr, u64 len, const char *name,
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
	file = kmod_files__find(mod);
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
	 * file without a build-id perf can read (compressed) is kept: perf
	 * report checks it.
	 */
	if (file) {
		kmod_file__build_id(file, &fbid);
		bid = fbid;
		snprintf(notes, sizeof(notes),
			 "%s/module/%s/notes/.note.gnu.build-id",
			 sysfs__mountpoint(), name);
		if (rbid)
			bid = *rbid;
		if (fbid.size && (rbid || !sysfs__read_build_id(notes, &bid)) &&
		    (bid.size != fbid.size || memcmp(bid.data, fbid.data, bid.size)))
			file = NULL;	/* another build of the module */
	}
	if (file) {
		text->path = strdup(file->path);
		if (!text->path)
			goto err;
		if (fbid.size && fbid.size <= sizeof(text->build_id)) {
			memcpy(text->build_id, fbid.data, fbid.size);
			text->build_id_size = fbid.size;
		}
		return text;
	}
	/* By which perf report may find the file in the build-id cache. */
	if (rbid && rbid->size <= sizeof(text->build_id)) {
		memcpy(text->build_id, rbid->data, rbid->size);
		text->build_id_size = rbid->size;
	}
	*pending = kmod_kernel_samples;
	return text;
err:
	kmod_text__free(text);
	return NULL;
}

static int kmod_event__sb_cb(union perf_event *event, void *data)
{
	struct perf_env *env = data;
	struct kmod_text *text;
	struct build_id bid;
	bool pending, has_bid;

	if (event->header.type == PERF_RECORD_BPF_EVENT)
		return bpf_event__sb_cb(event, data);
	if (event->header.type != PERF_RECORD_KSYMBOL ||
	    event->ksymbol.ksym_type != PERF_RECORD_KSYMBOL_TYPE_MODULE ||
	    event->ksymbol.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER)
		return 0;

	has_bid = perf_record_ksymbol__build_id(&event->ksymbol, &bid);
	text = kmod_text__capture(event->ksymbol.addr, event->ksymbol.len,
				  event->ksymbol.name, has_bid ? &bid : NULL,
				  &pending);
	if (!text) {
		pr_debug("no memory for module text %s\n",
			 event->ksymbol.name);
		return 0;
	}
	if (!pending || kmod_pending__add(text))
		perf_env__insert_kmod_text(env, text);
	return 0;
}

static void kmod_event__sb_pass_done(void *data)
{
	kmod_pending__flush(data);
}

/*
 * Ask for PERF_RECORD_KSYMBOL side-band records, to capture the functions
 * of modules loaded while perf records; with kernel_samples, from
 * /proc/kallsyms for modules without a file.
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
			      bool kernel_samples)
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

	kmod_kernel_samples = kernel_samples;
	evlist__for_each_entry(evlist, evsel) {
		if (evsel->side_band.cb == bpf_event__sb_cb &&
		    evsel->side_band.data == env)
			goto found;
	}
	attr.wakeup_watermark = 1;
	if (evlist__add_sb_event(evlist, &attr, kmod_event__sb_cb, env))
		return -1;
	evsel = evlist__last(evlist);
found:
	evsel->core.attr.ksymbol = 1;
	evsel->core.attr.ksymbol_module = 1;
	evsel->side_band.cb = kmod_event__sb_cb;
	evsel->side_band.pass_done = kmod_event__sb_pass_done;
	return 0;
}
