// SPDX-License-Identifier: GPL-2.0
/*
 * The stress driver's producers through tracefs (stress.h): the function
 * tracer worker (an ftrace trampoline), the kprobe worker (kprobe
 * instruction pages), the keepers, and the cleanup of what they leave.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "records.h"
#include "stress.h"
#include "bpf_images.skel.h"

#define KEEP_INST	TRACING "/instances/dyntext_stress_keep"
#define CHURN_INST	TRACING "/instances/dyntext_stress_churn"
#define KPROBE_GROUP	"dyntext_stress"
#define KPROBE_HIT	"__x64_sys_getppid"	/* the probe that is enabled */

static char **kp_sites;
static int nr_kp_sites, kp_want;

static int write_file(const char *path, const char *s)
{
	return write_str(path, s, O_TRUNC);
}

static int append_file(const char *path, const char *s)
{
	return write_str(path, s, O_APPEND);
}

/* The function tracer on and off; the instance itself every 4th time. */
void work_ftrace(void)
{
	unsigned long n = 0;

	while (!stopping()) {
		int i;

		if (n % 4 == 0) {
			if (mkdir(CHURN_INST, 0755)) {
				worker_error(K_FTRACE, "mkdir instance: %s",
					     strerror(errno));
				usleep(100000);
				continue;
			}
			worker_count(K_FTRACE, 2, 1);
		}
		if (write_file(CHURN_INST "/set_ftrace_filter", "__x64_sys_getsid") ||
		    write_file(CHURN_INST "/current_tracer", "function")) {
			worker_error(K_FTRACE, "function tracer on failed");
		} else {
			worker_count(K_FTRACE, 0, 1);
			for (i = 0; i < 20; i++)
				syscall(SYS_getsid, 0);
			if (write_file(CHURN_INST "/current_tracer", "nop"))
				worker_error(K_FTRACE, "function tracer off failed");
			else
				worker_count(K_FTRACE, 1, 1);
		}
		if ((++n % 4 == 0 || stopping()) && rmdir(CHURN_INST))
			worker_error(K_FTRACE, "rmdir instance: %s",
				     strerror(errno));
	}
}

/*
 * Kprobes on func+5 (past the call to __fentry__, so not ftrace-based):
 * each takes a slot of a kprobe instruction page, and one of an optimised
 * probe instruction page where the site can be optimised; more probes
 * than a page has slots make the caches add pages and free them again.
 */
void work_kprobe(void)
{
	char *ok = calloc(nr_kp_sites, 1);
	char line[256];
	int i, added;
	bool first = true;

	while (!stopping()) {
		int *ids = calloc(nr_kp_sites, sizeof(int));
		double t = now_s();

		added = 0;
		for (i = 0; i < nr_kp_sites && added < kp_want && !stopping(); i++) {
			if (!first && !ok[i])
				continue;
			snprintf(line, sizeof(line), "p:%s/p%d %s+5\n",
				 KPROBE_GROUP, i, kp_sites[i]);
			if (append_file(TRACING "/kprobe_events", line)) {
				if (first)
					worker_count(K_KPROBE, 3, 1);
				else
					worker_error(K_KPROBE, "%s+5 refused now",
						     kp_sites[i]);
				continue;
			}
			ok[i] = 1;
			ids[added++] = i;
			worker_count(K_KPROBE, 0, 1);
		}
		first = false;
		/* The first site is in getppid(): enable it for a moment. */
		if (added && ids[0] == 0) {
			const char *en = TRACING "/events/" KPROBE_GROUP "/p0/enable";

			if (write_file(en, "1")) {
				worker_error(K_KPROBE, "enable p0 failed");
			} else {
				for (i = 0; i < 50; i++)
					syscall(SYS_getppid);
				worker_count(K_KPROBE, 4, 50);
				if (write_file(en, "0"))
					worker_error(K_KPROBE, "disable p0 failed");
			}
		}
		worker_count(K_KPROBE, 5, (now_s() - t) * 1000);
		t = now_s();
		for (i = 0; i < added; i++) {
			snprintf(line, sizeof(line), "-:%s/p%d\n", KPROBE_GROUP,
				 ids[i]);
			if (append_file(TRACING "/kprobe_events", line))
				worker_error(K_KPROBE, "cannot remove p%d", ids[i]);
			else
				worker_count(K_KPROBE, 1, 1);
		}
		worker_count(K_KPROBE, 6, (now_s() - t) * 1000);
		free(ids);
		worker_count(K_KPROBE, 2, 1);
	}
	free(ok);
}

int load_kprobe_sites(int want)
{
	char line[512], **black = NULL;
	size_t nb = 0, alloc = 0, i, n = 0;
	FILE *f;

	kp_want = want;
	f = fopen("/sys/kernel/debug/kprobes/blacklist", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char name[256];

		if (sscanf(line, "%*s %255s", name) == 1) {
			black = realloc(black, (nb + 1) * sizeof(*black));
			black[nb++] = strdup(name);
		}
	}
	if (f)
		fclose(f);
	f = fopen(TRACING "/available_filter_functions", "r");
	kp_sites = calloc(1, sizeof(*kp_sites));
	kp_sites[nr_kp_sites++] = strdup(KPROBE_HIT);
	while (f && fgets(line, sizeof(line), f)) {
		char *p = line;
		bool bad = false;

		line[strcspn(line, "\n")] = 0;
		/* Core kernel functions with plain names only; every 7th. */
		for (p = line; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '_')
				bad = true;
		if (bad || !strcmp(line, KPROBE_HIT) || n++ % 7)
			continue;
		for (i = 0; i < nb && strcmp(black[i], line); i++)
			;
		if (i < nb)
			continue;
		if (nr_kp_sites == (int)alloc || !alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			kp_sites = realloc(kp_sites, alloc * sizeof(*kp_sites));
		}
		kp_sites[nr_kp_sites++] = strdup(line);
		if (nr_kp_sites >= 4 * kp_want)
			break;
	}
	if (f)
		fclose(f);
	for (i = 0; i < nb; i++)
		free(black[i]);
	free(black);
	return nr_kp_sites;
}

void cleanup_tracefs(void)
{
	write_file(CHURN_INST "/current_tracer", "nop");
	rmdir(CHURN_INST);
	write_file(KEEP_INST "/current_tracer", "nop");
	rmdir(KEEP_INST);
	write_file(TRACING "/events/" KPROBE_GROUP "/enable", "0");
	/* Only this test's probes: the file may hold others. */
	for (int i = 0; i < nr_kp_sites; i++) {
		char line[64];

		snprintf(line, sizeof(line), "-:%s/p%d\n", KPROBE_GROUP, i);
		append_file(TRACING "/kprobe_events", line);
	}
}

int keepers_start(struct keepers *k)
{
	k->images = bpf_images__open_and_load();
	if (!k->images)
		return -errno;
	k->link = bpf_program__attach(k->images->progs.images_fentry);
	if (!k->link)
		return -errno;
	if (mkdir(KEEP_INST, 0755) ||
	    write_file(KEEP_INST "/set_ftrace_filter", "vfs_write") ||
	    write_file(KEEP_INST "/current_tracer", "function"))
		return -EIO;
	k->ftrace = true;
	return 0;
}

void keepers_stop(struct keepers *k)
{
	if (k->ftrace) {
		write_file(KEEP_INST "/current_tracer", "nop");
		rmdir(KEEP_INST);
	}
	bpf_link__destroy(k->link);
	bpf_images__destroy(k->images);
	memset(k, 0, sizeof(*k));
}
