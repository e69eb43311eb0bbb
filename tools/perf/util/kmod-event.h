/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_KMOD_EVENT_H
#define __PERF_KMOD_EVENT_H

#include <linux/types.h>

struct evlist;
struct perf_env;
struct kmod_text;

struct kmod_text *kmod_text__capture(u64 addr, u64 len, const char *name);
int evlist__add_kmod_sb_event(struct evlist *evlist, struct perf_env *env);

#endif /* __PERF_KMOD_EVENT_H */
