// SPDX-License-Identifier: GPL-2.0
/*
 * The stress driver's module worker (stress.h): the test module loaded and
 * unloaded, loaded with a failing init, and the misuse module's cases.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "records.h"
#include "stress.h"

#define MISUSE_RUN	"/sys/kernel/debug/dyntext_misuse/run"

/* Unload mod, waiting up to 5 s while it is busy. */
static int module_unload(const char *mod)
{
	int i, ret = 0;

	for (i = 0; i < 500; i++) {
		ret = syscall(SYS_delete_module, mod, O_NONBLOCK) ? -errno : 0;
		if (ret != -EAGAIN && ret != -EBUSY)
			break;
		usleep(10000);
	}
	return ret;
}

/* Run the misuse module's cases; returns the number that failed. */
static int misuse_run(unsigned long *checks, char *first_bad, size_t len)
{
	char buf[16384], *line, *save;
	ssize_t n, got = 0;
	int fd = open(MISUSE_RUN, O_RDONLY), bad = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(fd);
	if (n < 0)
		return -EIO;
	buf[got] = 0;
	*checks = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "ok ", 3)) {
			(*checks)++;
		} else if (!strncmp(line, "not ok ", 7)) {
			(*checks)++;
			if (!bad++)
				snprintf(first_bad, len, "%s", line);
		}
	}
	return *checks ? bad : -ENODATA;
}

void work_module(void)
{
	unsigned long n = 0, checks;
	char bad[256];
	int ret;

	while (!stopping()) {
		ret = test_module_load("dyntext_test", "");
		if (ret) {
			worker_error(K_MODULE, "load dyntext_test: %s",
				     strerror(-ret));
			usleep(100000);
			continue;
		}
		worker_count(K_MODULE, 0, 1);
		ret = module_unload("dyntext_test");
		if (ret)
			worker_error(K_MODULE, "unload dyntext_test: %s",
				     strerror(-ret));
		else
			worker_count(K_MODULE, 1, 1);

		ret = test_module_load("dyntext_test", "fail_init=1");
		if (ret != -EINVAL)
			worker_error(K_MODULE, "fail_init=1 load: %d, want -EINVAL",
				     ret);
		else
			worker_count(K_MODULE, 2, 1);

		if (n++ % 4)
			continue;
		ret = test_module_load("dyntext_misuse", "");
		if (ret) {
			worker_error(K_MODULE, "load dyntext_misuse: %s",
				     strerror(-ret));
			continue;
		}
		worker_count(K_MODULE, 0, 1);
		ret = misuse_run(&checks, bad, sizeof(bad));
		if (ret < 0)
			worker_error(K_MODULE, "misuse run: %s", strerror(-ret));
		else if (ret)
			worker_error(K_MODULE, "misuse: %d failed, first: %s",
				     ret, bad);
		else
			worker_count(K_MODULE, 3, 1);
		worker_count(K_MODULE, 4, checks);
		ret = module_unload("dyntext_misuse");
		if (ret)
			worker_error(K_MODULE, "unload dyntext_misuse: %s",
				     strerror(-ret));
		else
			worker_count(K_MODULE, 1, 1);
	}
}
