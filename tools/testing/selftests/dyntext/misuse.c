// SPDX-License-Identifier: GPL-2.0
/*
 * The misuse module's cases (misuse_module/) on a quiet system, as TAP:
 * every refused call returns its exact error code, every successful add
 * is announced by exactly one register record and its delete by exactly
 * one unregister record (nothing refused is announced), the registry
 * stays consistent and holds exactly what it held before, and
 * /proc/kallsyms shows none of the module's regions afterwards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "records.h"

#define RUN		"/sys/kernel/debug/dyntext_misuse/run"

/* Wait until the registry's size has not changed for a second. */
static long registry_quiet(void)
{
	long nr = registry_nr(), again;
	int i;

	for (i = 0; i < 30; i++) {
		usleep(1000000);
		again = registry_nr();
		if (again == nr)
			return nr;
		nr = again;
	}
	return -EBUSY;
}

static bool misuse_name(const char *name)
{
	size_t i;

	if (!strncmp(name, "dyntext_misuse_", 15))
		return true;
	/* The longest name allowed: KSYM_NAME_LEN - 1 times 'x'. */
	for (i = 0; name[i] == 'x'; i++)
		;
	return i == KSYM_NAME_LEN - 1 && !name[i];
}

/* The regions' lines (not the module's own symbols, tagged dyntext_misuse). */
static int lines_fn(const struct ksym_line *l, void *arg)
{
	*(int *)arg += !strcmp(l->mod, "dyntext_misuse_text") ||
		       misuse_name(l->name);
	return 0;
}

int main(void)
{
	char buf[16384], *line, *save;
	unsigned int adds = 0, reg = 0, unreg = 0, unmatched = 0;
	struct rec_stream s;
	long before, loaded, after;
	ssize_t n, got = 0;
	int fd, ret, lines = 0;
	size_t i, j;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (geteuid() || access(DYNTEXT_CHECK, R_OK)) {
		printf("1..0 # SKIP needs root and %s\n", DYNTEXT_CHECK);
		return 4;
	}
	test_module_unload("dyntext_misuse");
	before = registry_quiet();
	tap(before >= 0, "registry consistent and quiet before: %ld regions", before);
	ret = rec_stream_open(&s, 256);
	tap(!ret, "system-wide ksymbol event");
	ret = test_module_load("dyntext_misuse", "exact=1");
	tap(!ret, "load dyntext_misuse.ko exact=1: %d", ret);
	if (ret) {
		printf("1..%d\n", tap_n);
		return 1;
	}
	loaded = registry_nr();
	/* The module's text is a region of its own. */
	tap(loaded == before + 1, "module text registered: %ld regions", loaded);

	fd = open(RUN, O_RDONLY);
	while (fd >= 0 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	if (fd >= 0)
		close(fd);
	buf[got] = 0;
	tap(fd >= 0 && got > 0, "read %s", RUN);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *what;
		bool ok = !strncmp(line, "ok ", 3);

		if (!ok && strncmp(line, "not ok ", 7)) {
			unsigned int n_adds;

			if (sscanf(line, "# adds %u", &n_adds) == 1)
				adds = n_adds;
			continue;
		}
		what = strstr(line, " - ");
		tap(ok, "module: %s", what ? what + 3 : line);
	}
	tap(adds == 5, "module: %u successful adds, 5 expected", adds);

	/* Records: one register and one unregister per add, in that order. */
	rec_stream_drain(&s);
	for (i = 0; i < s.nr; i++) {
		const struct rec *r = &s.recs[i];

		if (r->type != PERF_RECORD_KSYMBOL || !misuse_name(r->name))
			continue;
		if (r->flags == PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) {
			unreg++;
			continue;
		}
		reg++;
		for (j = i + 1; j < s.nr; j++)
			if (s.recs[j].type == PERF_RECORD_KSYMBOL &&
			    s.recs[j].addr == r->addr &&
			    s.recs[j].flags == PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER)
				break;
		if (j == s.nr || s.recs[j].len != r->len ||
		    strcmp(s.recs[j].name, r->name) ||
		    s.recs[j].ksym_type != PERF_RECORD_KSYMBOL_TYPE_OOL ||
		    r->ksym_type != PERF_RECORD_KSYMBOL_TYPE_OOL)
			unmatched++;
	}
	tap(reg == adds && unreg == adds && !unmatched && !s.lost,
	    "records: %u register, %u unregister, %u unmatched, %llu lost",
	    reg, unreg, unmatched, (unsigned long long)s.lost);
	rec_stream_close(&s);

	after = registry_nr();
	tap(after == loaded, "registry after the run: %ld regions, %ld before",
	    after, loaded);
	kallsyms_for_each(lines_fn, &lines);
	tap(lines == 0, "/proc/kallsyms: %d lines of the regions", lines);
	ret = test_module_unload("dyntext_misuse");
	tap(!ret, "unload dyntext_misuse: %d", ret);
	after = registry_nr();
	tap(after == before, "registry after unload: %ld regions, %ld before",
	    after, before);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
