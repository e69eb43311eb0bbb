// SPDX-License-Identifier: GPL-2.0
/*
 * A module's text size computed from its .ko with libelf, the way the
 * module loader computes it: core_layout.text_size and
 * init_layout.text_size in Linux 6.1, mem[MOD_TEXT].size and
 * mem[MOD_INIT_TEXT].size since 6.4; and where a function is in its
 * section.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "module_layout.h"
#include "records.h"

/* module_init_layout_section() with CONFIG_MODULE_UNLOAD, generic arch. */
static bool init_section(const char *name)
{
	return !strncmp(name, ".init", 5);
}

static Elf *ko_open(const char *ko_path, int *fd, size_t *shstrndx)
{
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*fd = open(ko_path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, shstrndx))
		return elf;
	if (elf)
		elf_end(elf);
	close(*fd);
	return NULL;
}

int module_text_size(const char *ko_path, bool init, bool strict_rwx,
		     unsigned long long *size)
{
	unsigned long long sz = 0, page = sysconf(_SC_PAGESIZE);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	int fd, ret = -1;
	Elf *elf;

	elf = ko_open(ko_path, &fd, &shstrndx);
	if (!elf)
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name ||
		    (sh.sh_flags & (SHF_EXECINSTR | SHF_ALLOC)) !=
		    (SHF_EXECINSTR | SHF_ALLOC) ||
		    init_section(name) != init)
			continue;
		if (sh.sh_addralign > 1)
			sz = (sz + sh.sh_addralign - 1) & ~(sh.sh_addralign - 1);
		sz += sh.sh_size;
	}
	/*
	 * Since Linux 6.10 module_memory_alloc() page-aligns the size of
	 * every part of a module, whatever CONFIG_STRICT_MODULE_RWX says.
	 */
	if (strict_rwx || kernel_at_least(6, 10))
		sz = (sz + page - 1) & ~(page - 1);
	*size = sz;
	ret = 0;
out:
	elf_end(elf);
	close(fd);
	return ret;
}

int module_sym_offset(const char *ko_path, const char *sec, const char *sym,
		      unsigned long long *off, unsigned long long *size)
{
	Elf_Scn *scn = NULL, *sec_scn;
	size_t shstrndx, i, n;
	Elf_Data *data;
	GElf_Shdr sh;
	int fd, ret = -1;
	GElf_Sym s;
	Elf *elf;

	elf = ko_open(ko_path, &fd, &shstrndx);
	if (!elf)
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			break;
	}
	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !sh.sh_entsize)
		goto out;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Shdr ssh;
		const char *name;

		if (!gelf_getsym(data, i, &s) ||
		    GELF_ST_TYPE(s.st_info) != STT_FUNC)
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || strcmp(name, sym))
			continue;
		sec_scn = elf_getscn(elf, s.st_shndx);
		if (!sec_scn || !gelf_getshdr(sec_scn, &ssh))
			break;
		name = elf_strptr(elf, shstrndx, ssh.sh_name);
		if (name && !strcmp(name, sec)) {
			*off = s.st_value;
			*size = s.st_size;
			ret = 0;
		}
		break;
	}
out:
	elf_end(elf);
	close(fd);
	return ret;
}
