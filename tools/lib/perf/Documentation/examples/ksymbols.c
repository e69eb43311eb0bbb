// SPDX-License-Identifier: GPL-2.0
/*
 * ksymbols: every region of kernel text, from one perf event.
 *
 * What a profiler needs to name kernel samples without reading
 * /proc/kallsyms, /proc/modules or /sys/module (which show zeros at
 * kernel.kptr_restrict=2, root included): it opens one side-band event,
 * asks the kernel to replay the text that exists (PERF_EVENT_IOC_KSYMBOL_REPLAY)
 * and reads, from the event's ring buffer:
 *
 *   - the kernel image (PERF_RECORD_KSYMBOL_TYPE_KERNEL): the run-time
 *     address of _stext, the length of the core kernel text, the build-id
 *     of vmlinux.  A sample at ip in [addr, addr + len) is at
 *     ip - addr + st_value(_stext) in the vmlinux of that build-id
 *     (debuginfod, a build-id cache, the distribution's debug package);
 *   - every module's text (PERF_RECORD_KSYMBOL_TYPE_MODULE, with
 *     attr.ksymbol_module): its range, the module's name ("name" for the
 *     core text, "name.init" for the init text) and the build-id of its
 *     .ko; ip - addr is an offset into the .ko's .text (core) or
 *     .init.text (init);
 *   - BPF programs, trampolines and dispatchers (TYPE_BPF), ftrace
 *     trampolines and kprobe pages (TYPE_OOL): their range and name, and
 *     for a program its id and tag (PERF_RECORD_BPF_EVENT).
 *
 * It prints one line per region:
 *
 *   kernel ffffffff81000000-ffffffff82a00000 _stext build-id 1a2b...
 *   module ffffffffc0200000-ffffffffc0204000 e1000 build-id 9f8e...
 *   bpf    ffffffffc0000800-ffffffffc0000848 bpf_prog_6deef7357e7b4530_sd_fw_egress
 *   bpf-prog 42 tag 6deef7357e7b4530
 *   ool    ffffffffc0206000-ffffffffc0207000 ftrace_trampoline
 *
 * Build (from this directory, with the kernel's UAPI headers):
 *
 *   cc -Wall -I../../../../include/uapi ksymbols.c -o ksymbols
 *
 * Run as root or with CAP_PERFMON (a CPU-wide event): ./ksymbols [CPU]
 *
 * Only the snapshot is shown here: the program stops at the replay's END
 * marker.  A profiler that keeps a current view also:
 *
 *   - opens such an event on every CPU and enables them all before the
 *     replay, so that a region added or removed during or after it arrives
 *     as a live record (live records come on the CPU that added or removed
 *     the region);
 *   - sets attr.sample_id_all with PERF_SAMPLE_TIME and applies the
 *     records of all CPUs in time order, unregister records
 *     (PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) included;
 *   - on PERF_RECORD_LOST, replays again (the replay's records say
 *     PERF_RECORD_KSYMBOL_FLAGS_REPLAY; one matching what it has only
 *     confirms it).
 *
 * Kernels without the replay answer the ioctl with ENOTTY, kernels without
 * the kernel image's record refuse it in ->types with EINVAL, and kernels
 * without module records refuse attr.ksymbol_module with EINVAL: each is
 * retried without, and a profiler falls back to the files for what is
 * missing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DATA_PAGES	8	/* a power of 2; the replay resumes when full */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* What follows the name of a record with PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID. */
struct ksym_build_id {
	uint8_t size;
	uint8_t id[20];
	uint8_t reserved[3];
};

struct ksym_record {
	struct perf_event_header header;
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;
	uint16_t flags;
	char name[];	/* NUL-padded to 8 bytes, then the build-id if flagged */
};

struct bpf_record {
	struct perf_event_header header;
	uint16_t type;
	uint16_t flags;
	uint32_t id;
	uint8_t tag[8];
};

struct ring {
	struct perf_event_mmap_page *pc;
	unsigned char *data;
	size_t size;		/* of the data area */
	int done;		/* the END marker was read */
};

static void print_build_id(const struct ksym_record *r)
{
	size_t name_len = (strnlen(r->name, r->header.size - sizeof(*r)) + 8) & ~7UL;
	const struct ksym_build_id *bid = (const void *)(r->name + name_len);
	int i;

	if (!(r->flags & PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID) ||
	    sizeof(*r) + name_len + sizeof(*bid) > r->header.size ||
	    bid->size > sizeof(bid->id))
		return;
	printf(" build-id ");
	for (i = 0; i < bid->size; i++)
		printf("%02x", bid->id[i]);
}

static void handle(struct ring *ring, const struct perf_event_header *h)
{
	static const char * const kinds[] = {
		[PERF_RECORD_KSYMBOL_TYPE_BPF]		= "bpf",
		[PERF_RECORD_KSYMBOL_TYPE_OOL]		= "ool",
		[PERF_RECORD_KSYMBOL_TYPE_MODULE]	= "module",
		[PERF_RECORD_KSYMBOL_TYPE_KERNEL]	= "kernel",
	};
	const struct ksym_record *k = (const void *)h;
	const struct bpf_record *b = (const void *)h;
	int i;

	switch (h->type) {
	case PERF_RECORD_KSYMBOL:
		if (k->ksym_type == PERF_RECORD_KSYMBOL_TYPE_REPLAY_MARK) {
			if (k->flags & PERF_RECORD_KSYMBOL_FLAGS_REPLAY_END)
				ring->done = 1;
			return;
		}
		/* Only live records unregister; a snapshot has none to apply. */
		if (k->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER)
			return;
		printf("%-6s %016llx-%016llx %s",
		       k->ksym_type < ARRAY_SIZE(kinds) &&
		       kinds[k->ksym_type] ? kinds[k->ksym_type] : "other",
		       (unsigned long long)k->addr,
		       (unsigned long long)k->addr + k->len, k->name);
		print_build_id(k);
		printf("\n");
		break;
	case PERF_RECORD_BPF_EVENT:
		if (b->type != PERF_BPF_EVENT_PROG_LOAD)
			return;
		printf("bpf-prog %u tag ", b->id);
		for (i = 0; i < 8; i++)
			printf("%02x", b->tag[i]);
		printf("\n");
		break;
	case PERF_RECORD_LOST:
		fprintf(stderr, "ksymbols: records lost: a live change was missed\n");
		break;
	}
}

/* Read every record in the ring buffer, then hand the space back. */
static void drain(struct ring *ring)
{
	uint64_t head = __atomic_load_n(&ring->pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ring->pc->data_tail;
	union {
		struct perf_event_header h;
		unsigned char bytes[65536];
	} copy;

	while (tail < head) {
		size_t off = tail & (ring->size - 1);
		const struct perf_event_header *h = (const void *)(ring->data + off);
		size_t len = h->size, first;

		if (len < sizeof(*h))
			break;	/* cannot happen: the kernel writes whole records */
		/* A record that wraps around the end of the buffer: copy it. */
		if (off + len > ring->size) {
			first = ring->size - off;
			memcpy(copy.bytes, ring->data + off, first);
			memcpy(copy.bytes + first, ring->data, len - first);
			h = &copy.h;
		}
		handle(ring, h);
		tail += len;
	}
	__atomic_store_n(&ring->pc->data_tail, tail, __ATOMIC_RELEASE);
}

static int open_event(int cpu, int modules)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_SOFTWARE,
		.size		= sizeof(attr),
		.config		= PERF_COUNT_SW_DUMMY,
		.ksymbol	= 1,
		.bpf_event	= 1,
		.ksymbol_module	= modules,
		.watermark	= 1,
		.wakeup_watermark = 1,
	};

	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	int cpu = argc > 1 ? atoi(argv[1]) : 0;
	uint32_t types = 1U << PERF_RECORD_KSYMBOL_TYPE_KERNEL |
			 1U << PERF_RECORD_KSYMBOL_TYPE_MODULE |
			 1U << PERF_RECORD_KSYMBOL_TYPE_BPF |
			 1U << PERF_RECORD_KSYMBOL_TYPE_OOL;
	struct perf_ksymbol_replay r = { .size = sizeof(r) };
	struct ring ring = { .size = DATA_PAGES * page };
	void *base;
	long n;
	int fd;

	fd = open_event(cpu, 1);
	if (fd < 0 && errno == EINVAL) {
		/* No module records: modules from /proc/modules instead. */
		types &= ~(1U << PERF_RECORD_KSYMBOL_TYPE_MODULE);
		fd = open_event(cpu, 0);
	}
	if (fd < 0) {
		perror("ksymbols: perf_event_open");
		return 1;
	}
	base = mmap(NULL, (1 + DATA_PAGES) * page, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		perror("ksymbols: mmap");
		return 1;
	}
	ring.pc = base;
	ring.data = (unsigned char *)base + page;

	r.types = types;
	for (;;) {
		n = ioctl(fd, PERF_EVENT_IOC_KSYMBOL_REPLAY, &r);
		drain(&ring);
		if (n >= 0)
			break;
		if (errno == ENOSPC)	/* the buffer was full: resume */
			continue;
		if (errno == EINVAL && !r.cursor &&
		    (r.types & 1U << PERF_RECORD_KSYMBOL_TYPE_KERNEL)) {
			/* No kernel image record: _stext from /proc/kallsyms. */
			fprintf(stderr, "ksymbols: no kernel image record\n");
			r.types &= ~(1U << PERF_RECORD_KSYMBOL_TYPE_KERNEL);
			continue;
		}
		/* ENOTTY: no replay; a profiler reads the files instead. */
		perror("ksymbols: PERF_EVENT_IOC_KSYMBOL_REPLAY");
		return 2;
	}
	/* Complete: the END marker is in the buffer (drained above). */
	if (!ring.done)
		drain(&ring);
	munmap(base, (1 + DATA_PAGES) * page);
	close(fd);
	return ring.done ? 0 : 1;
}
