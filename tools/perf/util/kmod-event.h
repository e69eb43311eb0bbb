/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_KMOD_EVENT_H
#define __PERF_KMOD_EVENT_H

#include <stdbool.h>

struct evlist;
struct perf_env;

int evlist__add_kmod_sb_event(struct evlist *evlist, struct perf_env *env,
			      bool kernel_samples, bool cache_build_ids);

#endif /* __PERF_KMOD_EVENT_H */
