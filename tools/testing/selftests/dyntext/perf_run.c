// SPDX-License-Identifier: GPL-2.0
/* Run perf record, report and script from a test; see perf_run.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "perf_run.h"

int find_perf(char *buf, size_t len)
{
	const char *env = getenv("PERF");
	char exe[PATH_MAX], *path, *dir, *save;
	ssize_t n;

	if (env) {
		snprintf(buf, len, "%s", env);
		return access(buf, X_OK) ? -errno : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = 0;
	/* tools/testing/selftests/dyntext/THIS -> tools/perf/perf */
	snprintf(buf, len, "%s/../../../perf/perf", dirname(exe));
	if (!access(buf, X_OK))
		return 0;
	path = strdup(getenv("PATH") ?: "/usr/bin:/bin");
	if (!path)
		return -ENOMEM;
	for (dir = strtok_r(path, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, len, "%s/perf", dir);
		if (!access(buf, X_OK)) {
			free(path);
			return 0;
		}
	}
	free(path);
	return -ENOENT;
}

int perf_record_start(struct perf_run *r, const char *opt)
{
	char ctl[128], ack[128], ctlarg[300], buf[16] = {};
	int cfd, afd;

	snprintf(r->dir, sizeof(r->dir), "/tmp/dyntext-perf.XXXXXX");
	if (!mkdtemp(r->dir))
		return -errno;
	snprintf(r->data, sizeof(r->data), "%s/perf.data", r->dir);
	snprintf(ctl, sizeof(ctl), "%s/ctl", r->dir);
	snprintf(ack, sizeof(ack), "%s/ack", r->dir);
	if (mkfifo(ctl, 0600) || mkfifo(ack, 0600))
		return -errno;
	snprintf(ctlarg, sizeof(ctlarg), "fifo:%s,%s", ctl, ack);
	r->pid = fork();
	if (r->pid < 0)
		return -errno;
	if (!r->pid) {
		int null = open("/dev/null", O_WRONLY), err = null;
		char log[128];

		/* A test that failed before perf_record_stop() takes perf along. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);

		if (r->verbose) {
			snprintf(log, sizeof(log), "%s/stderr", r->dir);
			err = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		}
		if (r->pipe)
			null = open(r->data, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(null, 1);
		dup2(err, 2);
		execl(r->perf, "perf", "record", r->verbose ? "-v" : "-q", "-a",
		      "-e", r->event ?: "cpu-clock", "-F", "999", "-D", "-1",
		      "--control", ctlarg, "-o", r->pipe ? "-" : r->data, opt,
		      NULL);
		_exit(127);
	}
	cfd = open(ctl, O_WRONLY);
	afd = open(ack, O_RDONLY);
	if (cfd < 0 || afd < 0)
		return -EIO;
	if (write(cfd, "enable\n", 7) != 7 || read(afd, buf, sizeof(buf) - 1) <= 0)
		return -EIO;
	close(cfd);
	close(afd);
	return strncmp(buf, "ack", 3) ? -EPROTO : 0;
}

int perf_record_log_count(struct perf_run *r, const char *s)
{
	char path[128], line[1024];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stderr", r->dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, s);
	fclose(f);
	return n;
}

int perf_record_stop(struct perf_run *r)
{
	int status;

	if (r->pid <= 0)
		return -ESRCH;
	kill(r->pid, SIGINT);
	if (waitpid(r->pid, &status, 0) != r->pid)
		return -errno;
	r->pid = 0;
	/* perf record re-raises SIGINT once it has written its file. */
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)
		return 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void perf_run_cleanup(struct perf_run *r)
{
	char cmd[256];

	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
	}
	/* DYNTEXT_KEEP=DIR keeps the perf data for a look afterwards. */
	if (r->dir[0] && getenv("DYNTEXT_KEEP")) {
		snprintf(cmd, sizeof(cmd), "cp -r %s %s/", r->dir,
			 getenv("DYNTEXT_KEEP"));
		if (system(cmd))
			fprintf(stderr, "could not keep %s\n", r->dir);
	}
	perf_dir_remove(r->dir);
}

int perf_home_new(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/dyntext-home.XXXXXX");
	if (!mkdtemp(dir)) {
		dir[0] = 0;
		return -errno;
	}
	return setenv("HOME", dir, 1) ? -errno : 0;
}

void perf_dir_remove(const char *dir)
{
	char cmd[128];

	if (!dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

const char *perf_input(struct perf_run *r, char *buf, size_t len)
{
	snprintf(buf, len, r->pipe ? "-i - < %s" : "-i %s", r->data);
	return buf;
}

FILE *perf_output(struct perf_run *r, const char *args)
{
	char cmd[PATH_MAX + 512], in[160];

	snprintf(cmd, sizeof(cmd), "%s %s %s 2>/dev/null", r->perf, args,
		 perf_input(r, in, sizeof(in)));
	return popen(cmd, "r");
}

/*
 * Samples in [lo, hi) named sym (and, with at, at their offset from *at,
 * "sym+0x..." as perf script -F symoff prints it) in dso (any if NULL).
 */
static int samples_named(struct perf_run *r, unsigned long long lo,
			 unsigned long long hi, const char *sym,
			 const unsigned long long *at, const char *dso,
			 struct samples *c)
{
	char line[1024], s[512], d[512], want[600];
	unsigned long long ip;
	FILE *f = perf_output(r, at ? "script -F ip,sym,symoff,dso" :
				      "script -F ip,sym,dso");

	if (!f)
		return -errno;
	memset(c, 0, sizeof(*c));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %llx %511s (%511[^)])", &ip, s, d) != 3 ||
		    ip < lo || ip >= hi)
			continue;
		if (at)
			snprintf(want, sizeof(want), "%s+0x%llx", sym, ip - *at);
		if (!strcmp(s, at ? want : sym) && (!dso || !strcmp(d, dso)))
			c->named++;
		else if (!c->other++)
			snprintf(c->first_other, sizeof(c->first_other),
				 "%llx %.128s (%.128s)", ip, s, d);
	}
	return pclose(f) ? -EIO : 0;
}

int count_samples(struct perf_run *r, unsigned long long lo,
		  unsigned long long hi, const char *sym, const char *dso,
		  struct samples *c)
{
	return samples_named(r, lo, hi, sym, NULL, dso, c);
}

int count_samples_at(struct perf_run *r, unsigned long long lo,
		     unsigned long long hi, const char *sym,
		     unsigned long long sym_addr, const char *dso,
		     struct samples *c)
{
	return samples_named(r, lo, hi, sym, &sym_addr, dso, c);
}
