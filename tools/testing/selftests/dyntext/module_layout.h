/* SPDX-License-Identifier: GPL-2.0 */
#ifndef DYNTEXT_MODULE_LAYOUT_H
#define DYNTEXT_MODULE_LAYOUT_H

#include <stdbool.h>

/*
 * The size of a module's core (init false) or init (init true) text as
 * the module loader lays it out (layout_sections() in
 * kernel/module/main.c): the executable SHF_ALLOC sections of the .ko in
 * section order, each aligned to its sh_addralign, the sum page-aligned
 * when the kernel has CONFIG_STRICT_MODULE_RWX, and always since Linux
 * 6.10 (the running kernel's release decides).  Returns 0 on success.
 */
int module_text_size(const char *ko_path, bool init, bool strict_rwx,
		     unsigned long long *size);

/*
 * The offset of function sym in section sec of the .ko at ko_path (its
 * st_value: a .ko is relocatable) and its size.  Returns 0 on success, -1
 * if the .ko has no such function in that section.
 */
int module_sym_offset(const char *ko_path, const char *sec, const char *sym,
		      unsigned long long *off, unsigned long long *size);

#endif
