// SPDX-License-Identifier: GPL-2.0
/*
 * Module text in the dynamic text registry: PERF_RECORD_KSYMBOL records of
 * type MODULE for the core text and the init text of the test module on
 * load, init text release, unload and a failed init.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "../kselftest_harness.h"
#include "records.h"
#include "module_layout.h"

#define MOD "dyntext_test"
#ifndef PERF_RECORD_KSYMBOL_TYPE_MODULE
#define PERF_RECORD_KSYMBOL_TYPE_MODULE 3
#endif

static int mod_load(const char *params)
{
	return test_module_load(MOD, params);
}

static int mod_unload(void)
{
	return test_module_unload(MOD);
}

static unsigned long long section_addr(const char *section)
{
	return module_section_addr(MOD, section);
}

/* The core or init text size of the test module as the loader lays it out. */
static unsigned long long text_size(bool init)
{
	unsigned long long size = 0;
	char path[4096];

	snprintf(path, sizeof(path), "%s/" MOD ".ko", test_binary_dir());
	if (module_text_size(path, init, KCONFIG_STRICT_MODULE_RWX, &size))
		return 0;
	return size;
}

static unsigned long long kallsyms_mod_sym(const char *name)
{
	unsigned long long a = 0;

	kallsyms_sym_count(name, MOD, 0, &a, NULL);
	return a;
}

/* The only KSYMBOL record named name with flags; NULL if none or several. */
static const struct rec *only(const struct rec_stream *s, const char *name,
			      __u16 flags)
{
	const struct rec *found = NULL;
	size_t i;

	for (i = 0; i < s->nr; i++) {
		const struct rec *r = &s->recs[i];

		if (r->type != PERF_RECORD_KSYMBOL || r->flags != flags ||
		    strcmp(r->name, name))
			continue;
		if (found)
			return NULL;
		found = r;
	}
	return found;
}

FIXTURE(modrec) {
	struct rec_stream s;
};

FIXTURE_SETUP(modrec)
{
	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	if (geteuid())
		SKIP(return, "needs root");
	mod_unload();
	ASSERT_EQ(0, rec_pin_cpu());
	ASSERT_EQ(0, rec_stream_open(&self->s, 64));
}

FIXTURE_TEARDOWN(modrec)
{
	rec_stream_close(&self->s);
	mod_unload();
}

TEST_F(modrec, load_init_release_unload)
{
	const __u16 unreg = PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER;
	const struct rec *core, *init, *init_gone, *core_gone;
	unsigned long long text, busy;
	__u64 core_addr;
	__u32 core_len;

	ASSERT_EQ(0, mod_load(""));
	text = section_addr(".text");
	busy = kallsyms_mod_sym("dyntext_test_busy");
	ASSERT_EQ(0, rec_stream_drain(&self->s));

	core = only(&self->s, MOD, 0);
	ASSERT_NE(NULL, core);
	EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_MODULE, core->ksym_type);
	EXPECT_EQ(text, core->addr);
	EXPECT_NE(0, text_size(false));
	EXPECT_EQ(text_size(false), core->len);
	EXPECT_GE(busy, core->addr);
	EXPECT_LT(busy, core->addr + core->len);

	/* The init text: registered before init ran, gone once it is freed. */
	init = only(&self->s, MOD ".init", 0);
	ASSERT_NE(NULL, init);
	EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_MODULE, init->ksym_type);
	EXPECT_EQ(section_addr(".init.text"), init->addr);
	EXPECT_NE(0, text_size(true));
	EXPECT_EQ(text_size(true), init->len);
	init_gone = only(&self->s, MOD ".init", unreg);
	ASSERT_NE(NULL, init_gone);
	EXPECT_EQ(init->addr, init_gone->addr);
	EXPECT_EQ(init->len, init_gone->len);
	EXPECT_GT(init_gone - self->s.recs, init - self->s.recs);
	EXPECT_EQ(NULL, only(&self->s, MOD, unreg));

	/* The next drain moves the records: keep what is compared later. */
	core_addr = core->addr;
	core_len = core->len;
	ASSERT_EQ(0, mod_unload());
	ASSERT_EQ(0, rec_stream_drain(&self->s));
	core_gone = only(&self->s, MOD, unreg);
	ASSERT_NE(NULL, core_gone);
	EXPECT_EQ(core_addr, core_gone->addr);
	EXPECT_EQ(core_len, core_gone->len);
	EXPECT_EQ(PERF_RECORD_KSYMBOL_TYPE_MODULE, core_gone->ksym_type);
	EXPECT_EQ(1, rec_count_ksym(&self->s, core_addr, 0, NULL));
	EXPECT_EQ(1, rec_count_ksym(&self->s, core_addr, unreg, NULL));
	EXPECT_EQ(0, self->s.lost);
}

/*
 * The register records of the module's core and init text carry the
 * build-id of its file (PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID), equal to the
 * one /sys/module/MOD/notes shows; unregister records carry none.
 */
TEST_F(modrec, build_id)
{
	const __u16 unreg = PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER;
	const struct rec *core, *init, *gone;
	__u8 id[20];
	int n;

	ASSERT_EQ(0, mod_load(""));
	n = module_note_build_id(MOD, id, sizeof(id));
	ASSERT_LT(0, n);
	ASSERT_EQ(0, mod_unload());
	ASSERT_EQ(0, rec_stream_drain(&self->s));

	core = only(&self->s, MOD, 0);
	ASSERT_NE(NULL, core);
	EXPECT_EQ(n, core->build_id_size);
	EXPECT_EQ(0, memcmp(id, core->build_id, n));
	init = only(&self->s, MOD ".init", 0);
	ASSERT_NE(NULL, init);
	EXPECT_EQ(n, init->build_id_size);
	EXPECT_EQ(0, memcmp(id, init->build_id, n));
	gone = only(&self->s, MOD, unreg);
	ASSERT_NE(NULL, gone);
	EXPECT_EQ(0, gone->build_id_size);
	gone = only(&self->s, MOD ".init", unreg);
	ASSERT_NE(NULL, gone);
	EXPECT_EQ(0, gone->build_id_size);
	EXPECT_EQ(0, self->s.malformed);
	EXPECT_EQ(0, self->s.lost);
}

TEST_F(modrec, failed_init)
{
	const __u16 unreg = PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER;
	const struct rec *core, *init, *core_gone, *init_gone;

	ASSERT_EQ(-EINVAL, mod_load("fail_init=1"));
	ASSERT_EQ(0, rec_stream_drain(&self->s));
	core = only(&self->s, MOD, 0);
	init = only(&self->s, MOD ".init", 0);
	core_gone = only(&self->s, MOD, unreg);
	init_gone = only(&self->s, MOD ".init", unreg);
	ASSERT_NE(NULL, core);
	ASSERT_NE(NULL, init);
	ASSERT_NE(NULL, core_gone);
	ASSERT_NE(NULL, init_gone);
	EXPECT_EQ(text_size(false), core->len);
	EXPECT_EQ(text_size(true), init->len);
	EXPECT_EQ(core->addr, core_gone->addr);
	EXPECT_EQ(core->len, core_gone->len);
	EXPECT_EQ(init->addr, init_gone->addr);
	EXPECT_EQ(init->len, init_gone->len);
	/* One drain: the pointers are comparable stream positions. */
	EXPECT_GT(core_gone - self->s.recs, core - self->s.recs);
	EXPECT_GT(init_gone - self->s.recs, init - self->s.recs);
}

/*
 * Module text only for events that ask for it (attr.ksymbol_module, which
 * needs attr.ksymbol): an event that did not ask gets no MODULE record,
 * live or replayed, and a replay of module text into it is refused.  The
 * event that asked gets the core and init text, registered and gone.
 */
TEST_F(modrec, only_on_request)
{
	struct perf_ksymbol_replay r = {
		.size = sizeof(r),
		.types = 1 << PERF_RECORD_KSYMBOL_TYPE_MODULE,
	};
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.ksymbol_module = 1,
		.disabled = 1,
	};
	struct rec_stream plain;
	size_t i, mods = 0, ends = 0, asked = 0;

	ASSERT_TRUE(kernel_has_module_records());
	EXPECT_EQ(-1, syscall(__NR_perf_event_open, &attr, -1, 0, -1, 0));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, rec_stream_open_no_modules(&plain, 64));
	ASSERT_EQ(0, mod_load(""));
	ASSERT_LE(0, rec_replay(&plain, 0, NULL, NULL));
	EXPECT_EQ(-1, ioctl(rec_stream_fd(&plain), PERF_EVENT_IOC_KSYMBOL_REPLAY,
			    &r));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, mod_unload());
	ASSERT_EQ(0, rec_stream_drain(&plain));
	ASSERT_EQ(0, rec_stream_drain(&self->s));
	for (i = 0; i < plain.nr; i++) {
		mods += plain.recs[i].type == PERF_RECORD_KSYMBOL &&
			plain.recs[i].ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE;
		ends += rec_is_marker(&plain.recs[i],
				      PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END);
	}
	for (i = 0; i < self->s.nr; i++)
		asked += self->s.recs[i].type == PERF_RECORD_KSYMBOL &&
			 self->s.recs[i].ksym_type == PERF_RECORD_KSYMBOL_TYPE_MODULE &&
			 (!strcmp(self->s.recs[i].name, MOD) ||
			  !strcmp(self->s.recs[i].name, MOD ".init"));
	EXPECT_EQ(0, mods);
	EXPECT_EQ(1, ends);	/* the replay ran, without module text */
	EXPECT_EQ(4, asked);	/* core and init, each registered and gone */
	EXPECT_EQ(0, plain.lost);
	rec_stream_close(&plain);
}

/*
 * The attr bits of the series come after those upstream has given:
 * ksymbol_module is flags bit 40 and ksymbol_text bit 41, on every base.
 * Bits 38 and 39 are upstream's defer_callchain and defer_output: a base
 * that has them (its UAPI header names them) opens them as it always did;
 * an older one refuses them (-EINVAL), as it always did, so that a newer
 * perf asking for deferred callchains falls back as there instead of
 * getting module records or code.  Bits 40 and 41, with
 * ksymbol, open.
 */
TEST(attr_bits_after_upstream)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
	};
	struct perf_event_attr with = attr;
	int bit, fd;

	if (!kernel_has_module_records())
		SKIP(return, "no attr.ksymbol_module in this kernel");
	with.ksymbol_module = 1;
	EXPECT_EQ(1ULL << 40, attr_flags(&with) ^ attr_flags(&attr));
	with = attr;
	with.ksymbol_text = 1;
	EXPECT_EQ(1ULL << 41, attr_flags(&with) ^ attr_flags(&attr));

	attr.ksymbol = 1;
	for (bit = 38; bit <= 41; bit++) {
		with = attr;
		attr_set_flag(&with, bit);
		fd = syscall(__NR_perf_event_open, &with, -1, 0, -1, 0);
		if (bit < 40 && !HAVE_DEFER_CALLCHAIN) {
			EXPECT_EQ(-1, fd) TH_LOG("bit %d accepted", bit);
			EXPECT_EQ(EINVAL, errno);
		} else {
			EXPECT_LE(0, fd) TH_LOG("bit %d: %s", bit, strerror(errno));
		}
		if (fd >= 0)
			close(fd);
	}
}

TEST_HARNESS_MAIN
