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

static int kmod_text_sym__cmp(const void *a, const void *b)
{
	const struct kmod_text_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The text symbols /proc/kallsyms listed for the module read last, all of
 * them: a module's init text record follows its core text record, and the
 * one read serves both.
 */
static struct {
	char			mod[KSYM_NAME_LEN];
	size_t			len;		/* of mod */
	u32			nr, alloc;
	struct kmod_text_sym	*syms;		/* sorted by address */
} kmod_syms;

static int kmod_syms__add(void *arg __maybe_unused, const char *name,
			  char type, u64 start)
{
	const char *tab = strchr(name, '\t');

	/* Functions tagged [module] with the module's name. */
	if (!tab || !strchr("tTwW", type) || tab[1] != '[' ||
	    strncmp(tab + 2, kmod_syms.mod, kmod_syms.len) ||
	    tab[2 + kmod_syms.len] != ']')
		return 0;
	if (kmod_syms.nr == kmod_syms.alloc) {
		u32 alloc = kmod_syms.alloc ? 2 * kmod_syms.alloc : 64;
		struct kmod_text_sym *syms;

		syms = realloc(kmod_syms.syms, alloc * sizeof(*syms));
		if (!syms)
			return -ENOMEM;
		kmod_syms.syms = syms;
		kmod_syms.alloc = alloc;
	}
	kmod_syms.syms[kmod_syms.nr].addr = start;
	kmod_syms.syms[kmod_syms.nr].name = strndup(name, tab - name);
	if (!kmod_syms.syms[kmod_syms.nr].name)
		return -ENOMEM;
	kmod_syms.nr++;
	return 0;
}

/* Read the text symbols of module mod (its first len bytes) into kmod_syms. */
static int kmod_syms__read(const char *mod, size_t len)
{
	char path[PATH_MAX];
	u32 i;

	for (i = 0; i < kmod_syms.nr; i++)
		free(kmod_syms.syms[i].name);
	kmod_syms.nr = 0;
	snprintf(kmod_syms.mod, sizeof(kmod_syms.mod), "%.*s", (int)len, mod);
	kmod_syms.len = strlen(kmod_syms.mod);
	snprintf(path, sizeof(path), "%s/kallsyms", procfs__mountpoint());
	if (kallsyms__parse(path, NULL, kmod_syms__add)) {
		kmod_syms.mod[0] = 0;
		kmod_syms.len = 0;
		return -1;
	}
	qsort(kmod_syms.syms, kmod_syms.nr, sizeof(*kmod_syms.syms),
	      kmod_text_sym__cmp);
	return 0;
}

/*
 * The functions /proc/kallsyms lists in the region, into text: read for
 * the core text, taken from that read for the init text that follows.
 */
static int kmod_text__read_kallsyms(struct kmod_text *text, bool init)
{
	size_t len = strcspn(text->name, ".");
	u32 i, n = 0;

	if ((!init || kmod_syms.len != len ||
	     strncmp(kmod_syms.mod, text->name, len)) &&
	    kmod_syms__read(text->name, len))
		return -1;
	for (i = 0; i < kmod_syms.nr; i++)
		n += kmod_syms.syms[i].addr >= text->addr &&
		     kmod_syms.syms[i].addr < text->addr + text->len;
	text->syms = n ? calloc(n, sizeof(*text->syms)) : NULL;
	if (n && !text->syms)
		return -1;
	for (i = 0; i < kmod_syms.nr; i++) {
		const struct kmod_text_sym *sym = &kmod_syms.syms[i];

		if (sym->addr < text->addr || sym->addr >= text->addr + text->len)
			continue;
		text->syms[text->nr_syms].addr = sym->addr;
		text->syms[text->nr_syms].name = strdup(sym->name);
		if (!text->syms[text->nr_syms].name)
			return -1;
		text->nr_syms++;
	}
	return 0;
}

/* The module files under /lib/modules/$(uname -r), by module name. */
struct kmod_file {
	char	*name;		/* "[name]", as kmod_path__parse_name() gives */
	char	*path;
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
static const char *kmod_files__find(const char *name)
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
	return f ? f->path : NULL;
}

/*
 * What perf report needs to name the functions of a module text region
 * that may be gone by then, read while the module is loaded.  For the
 * core text ("name"): the module's file under /lib/modules and its
 * build-id, unless the loaded module has another; perf report then reads
 * the functions from the file or from the build-id cache, as for modules
 * present at the start, and the init text ("name.init") stays unnamed as
 * theirs does.  A module without such a file gets the functions
 * /proc/kallsyms lists in the region now (one read for its core and init
 * text).  NULL if memory runs out.
 */
struct kmod_text *kmod_text__capture(u64 addr, u64 len, const char *name)
{
	struct kmod_text *text = zalloc(sizeof(*text));
	char notes[PATH_MAX];
	struct build_id bid, fbid;
	const char *path;

	if (!text)
		return NULL;
	text->addr = addr;
	text->len = len;
	text->name = strdup(name);
	if (!text->name)
		goto err;
	if (strchr(name, '.')) {
		/*
		 * Init text: with the module's file, it stays unnamed, as
		 * for a module present at the start.
		 */
		char mod[KSYM_NAME_LEN];

		snprintf(mod, sizeof(mod), "%.*s", (int)strcspn(name, "."), name);
		if (kmod_files__find(mod))
			return text;
		goto kallsyms;
	}

	/*
	 * The record comes before the module's sysfs directory exists (the
	 * text is registered before the module is set up in sysfs), so the
	 * build-id of /sys/module/name/notes may not be readable yet: the
	 * file's build-id is the one perf report matches anyway, and a
	 * readable one of the loaded module that differs rules the file out.
	 */
	path = kmod_files__find(name);
	if (path && filename__read_build_id(path, &fbid) > 0) {
		bid = fbid;
		snprintf(notes, sizeof(notes),
			 "%s/module/%s/notes/.note.gnu.build-id",
			 sysfs__mountpoint(), name);
		if (!sysfs__read_build_id(notes, &bid) &&
		    (bid.size != fbid.size || memcmp(bid.data, fbid.data, bid.size)))
			path = NULL;	/* another build of the module */
	} else if (path) {
		bid.size = 0;		/* compressed: perf report checks it */
	}
	if (path) {
		text->path = strdup(path);
		if (!text->path)
			goto err;
		if (bid.size && bid.size <= sizeof(text->build_id)) {
			memcpy(text->build_id, bid.data, bid.size);
			text->build_id_size = bid.size;
		}
		return text;
	}
kallsyms:
	if (kmod_text__read_kallsyms(text, strchr(name, '.')))
		pr_debug("cannot read the functions of module text %s\n", name);
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
		pr_debug("no memory for module text %s\n",
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
