// SPDX-License-Identifier: GPL-2.0
/*
 * The stress driver's perf record (stress.h): perf record -a -g -F FREQ
 * for the whole run (ksymbol and bpf_event are on), into
 * DIR/stress-perf.data; then perf evlist and perf report --stats on it.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "records.h"
#include "stress.h"

pid_t perf_start(const char *perf, const char *dir, int secs, int freq)
{
	char data[PATH_MAX], log[PATH_MAX], s[32], f[32];
	pid_t pid;

	snprintf(data, sizeof(data), "%s/stress-perf.data", dir);
	snprintf(log, sizeof(log), "%s/stress-perf.log", dir);
	snprintf(s, sizeof(s), "%d", secs);
	snprintf(f, sizeof(f), "%d", freq);
	pid = fork();
	if (pid)
		return pid;
	if (!freopen(log, "w", stdout) || !freopen(log, "a", stderr))
		_exit(126);
	execl(perf, perf, "record", "-a", "-g", "-F", f, "-B", "-N",
	      "-o", data, "--", "sleep", s, NULL);
	_exit(127);
}

/* Run "perf ARGS" and return its output (NUL-terminated), or NULL. */
static char *perf_output(const char *cmd)
{
	size_t len = 0, alloc = 65536;
	char *out = malloc(alloc);
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p || !out) {
		free(out);
		return NULL;
	}
	while ((n = fread(out + len, 1, alloc - len - 1, p)) > 0) {
		len += n;
		if (alloc - len < 4096) {
			alloc *= 2;
			out = realloc(out, alloc);
		}
	}
	out[len] = 0;
	if (pclose(p)) {
		free(out);
		return NULL;
	}
	return out;
}

static long stat_of(const char *stats, const char *what)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s events:", what);
	p = strstr(stats, key);
	return p ? strtol(p + strlen(key), NULL, 10) : 0;
}

void perf_check(const char *perf, const char *dir, int status)
{
	char cmd[PATH_MAX * 2];
	char *stats, *evl;
	bool ok = WIFEXITED(status) && !WEXITSTATUS(status);

	snprintf(cmd, sizeof(cmd), "%s evlist -v -i %s/stress-perf.data 2>&1",
		 perf, dir);
	evl = perf_output(cmd);
	snprintf(cmd, sizeof(cmd), "%s report --stats -i %s/stress-perf.data 2>&1",
		 perf, dir);
	stats = perf_output(cmd);
	if (!ok)
		note("perf record: status %#x (log in %s/stress-perf.log)",
		     status, dir);
	if (!evl || !strstr(evl, "ksymbol: 1") || !strstr(evl, "bpf_event: 1")) {
		ok = false;
		note("perf evlist: ksymbol and bpf_event not both on");
	}
	if (!stats || stat_of(stats, "SAMPLE") <= 0) {
		ok = false;
		note("perf report --stats: no samples");
	}
	tap(ok, "perf record -a -g ran, with ksymbol and bpf_event");
	print_notes(&cmp);
	if (stats)
		printf("# perf.data: %ld samples, %ld KSYMBOL, %ld BPF_EVENT, %ld LOST records\n",
		       stat_of(stats, "SAMPLE"), stat_of(stats, "KSYMBOL"),
		       stat_of(stats, "BPF_EVENT"), stat_of(stats, "LOST"));
	free(stats);
	free(evl);
}
