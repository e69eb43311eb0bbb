// SPDX-License-Identifier: GPL-2.0
/*
 * The test module's text in /proc/kallsyms and /proc/modules across load,
 * a failed load and unload.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "records.h"

#define MOD "dyntext_test"

static int mod_load(const char *params)
{
	return test_module_load(MOD, params);
}

static int mod_unload(void)
{
	return test_module_unload(MOD);
}

/* Lines of /proc/kallsyms for symbol name in [MOD], and the type seen. */
static int mod_sym(const char *name, unsigned long long *addr, char *type)
{
	return kallsyms_sym_count(name, MOD, 0, addr, type);
}

static int in_proc_modules(void)
{
	char line[1024];
	FILE *f = fopen("/proc/modules", "r");
	int found = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		found += !strncmp(line, MOD " ", strlen(MOD) + 1);
	fclose(f);
	return found;
}

FIXTURE(module) {
};

FIXTURE_SETUP(module)
{
	if (geteuid())
		SKIP(return, "needs root");
	mod_unload();
}

FIXTURE_TEARDOWN(module)
{
	mod_unload();
}

TEST_F(module, load_unload)
{
	unsigned long long addr = 0;
	char type = 0;
	int fd;

	ASSERT_EQ(0, in_proc_modules());
	ASSERT_EQ(0, mod_load(""));
	ASSERT_EQ(1, in_proc_modules());
	ASSERT_EQ(1, mod_sym("dyntext_test_busy", &addr, &type));
	EXPECT_EQ('t', type);
	EXPECT_NE(0, addr);
	/* init text is gone once the module is live */
	EXPECT_EQ(0, mod_sym("dyntext_test_init_work", &addr, &type));

	fd = open("/sys/module/" MOD "/parameters/spin_ms", O_WRONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ(2, write(fd, "10", 2));
	EXPECT_EQ(-1, write(fd, "99999", 5));
	EXPECT_EQ(ERANGE, errno);
	close(fd);

	ASSERT_EQ(0, mod_unload());
	EXPECT_EQ(0, in_proc_modules());
	EXPECT_EQ(0, mod_sym("dyntext_test_busy", &addr, &type));
}

TEST_F(module, failed_init)
{
	unsigned long long addr;
	char type;

	ASSERT_EQ(-EINVAL, mod_load("fail_init=1"));
	EXPECT_EQ(0, in_proc_modules());
	EXPECT_EQ(0, mod_sym("dyntext_test_busy", &addr, &type));
	EXPECT_EQ(-ENOENT, mod_unload());
}

TEST_F(module, double_load)
{
	ASSERT_EQ(0, mod_load(""));
	EXPECT_EQ(-EEXIST, mod_load(""));
	EXPECT_EQ(1, in_proc_modules());
	EXPECT_EQ(0, mod_unload());
}

/*
 * A module with FUNCS generated functions (funcs_module/gen_funcs.sh): the
 * function tracer names each one's address through kallsyms_lookup() as
 * it lists available_filter_functions, so every function is there once,
 * under the name a lookup of its address gives: its own, or for every
 * 1000th function the local alias that the module's symtab lists first
 * at that address (locals come before globals).  Module address lookups
 * (a scan of the symtab, or an index of it) must give those answers.
 */
#define FUNCS 1000
#define FUNCS_MOD "dyntext_funcs_1000"
TEST_F(module, many_functions_named)
{
	static char seen[FUNCS];
	char line[512], name[256], want[64], tag[64];
	unsigned int i, other = 0, twice = 0, wrong = 0;
	FILE *f;

	test_module_unload(FUNCS_MOD);
	ASSERT_EQ(0, test_module_load(FUNCS_MOD, ""));
	f = fopen(TRACING "/available_filter_functions", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %63s", name, tag) != 2 ||
		    strcmp(tag, "[" FUNCS_MOD "]"))
			continue;
		if (sscanf(name, "dyntext_func_%u", &i) != 1 &&
		    sscanf(name, "dyntext_lalias_%u", &i) != 1) {
			if (!other++)
				TH_LOG("other function: %s", name);
			continue;
		}
		snprintf(want, sizeof(want), i % 1000 ? "dyntext_func_%05u" :
			 "dyntext_lalias_%05u", i);
		if (i >= FUNCS || strcmp(name, want)) {
			if (!wrong++)
				TH_LOG("%s named %s", want, name);
			continue;
		}
		twice += seen[i]++ > 0;
	}
	fclose(f);
	EXPECT_EQ(0, test_module_unload(FUNCS_MOD));
	for (i = 0; i < FUNCS; i++)
		if (!seen[i] && !wrong++)
			TH_LOG("dyntext_func_%05u not listed", i);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, twice);
	/* Nothing else of the module: its init functions went with init. */
	EXPECT_EQ(0, other);
}

TEST_HARNESS_MAIN
