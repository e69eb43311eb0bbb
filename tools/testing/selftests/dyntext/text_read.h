/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel memory read the way /proc/kcore reads it, for kernels built
 * without /proc/kcore: progs/text_read.bpf.c run with BPF_PROG_TEST_RUN.
 */
#ifndef DYNTEXT_TEXT_READ_H
#define DYNTEXT_TEXT_READ_H

#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "text_read.skel.h"

/* Read len bytes of kernel memory at addr with the text_read program. */
static inline int kernel_read(struct text_read *rd, __u64 addr, void *buf,
			      __u32 len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (len > sizeof(rd->bss->read_buf))
		return -E2BIG;
	rd->bss->read_addr = addr;
	rd->bss->read_len = len;
	rd->bss->read_err = -1;
	if (bpf_prog_test_run_opts(bpf_program__fd(rd->progs.text_read), &opts))
		return -errno;
	if (rd->bss->read_err)
		return rd->bss->read_err;
	memcpy(buf, rd->bss->read_buf, len);
	return 0;
}

#endif
