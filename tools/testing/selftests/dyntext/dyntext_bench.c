// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads for `make bench` (not a test: it asserts nothing, it measures).
 *
 *   dyntext_bench kallsyms N1 N2 ...   full /proc/kallsyms read, best of 3,
 *                                      with N1, N2, ... programs loaded
 *   dyntext_bench load COUNT           BPF program load+unload rate
 *   dyntext_bench dump                 load the test workload and print
 *                                      the [bpf] lines of /proc/kallsyms
 *   dyntext_bench replay N             PERF_EVENT_IOC_KSYMBOL_REPLAY with N
 *                                      trivial programs loaded: time (best
 *                                      of 5), records and bytes
 *
 * Results are printed as "name,param,value,unit" lines.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "records.h"
#include "ksym_abi.skel.h"
#include "bpf_images.skel.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int load_trivial(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts);

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "bench", "GPL",
			     insns, 2, &opts);
}

/* Read all of /proc/kallsyms; returns seconds, lines in *lines. */
static double read_kallsyms(long *lines)
{
	static char buf[1 << 16];
	double t0 = now();
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t n;
	long nl = 0;

	if (!f)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		for (size_t i = 0; i < n; i++)
			nl += buf[i] == '\n';
	fclose(f);
	*lines = nl;
	return now() - t0;
}

static int bench_kallsyms(int argc, char **argv)
{
	struct rlimit rl = { 200000, 200000 };
	int *fds, loaded = 0, i, r;
	long max = 0, lines = 0;

	for (i = 0; i < argc; i++)
		if (atol(argv[i]) > max)
			max = atol(argv[i]);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("setrlimit");
	fds = calloc(max + 1, sizeof(*fds));
	for (i = 0; i < argc; i++) {
		long want = atol(argv[i]);
		double best = 1e9, t;

		while (loaded < want) {
			fds[loaded] = load_trivial();
			if (fds[loaded] < 0) {
				fprintf(stderr, "load %d: %s\n", loaded,
					strerror(errno));
				return 1;
			}
			loaded++;
		}
		for (r = 0; r < 3; r++) {
			t = read_kallsyms(&lines);
			if (t < best)
				best = t;
		}
		printf("kallsyms_read_ms,%ld,%.3f,ms\n", want, best * 1e3);
		printf("kallsyms_lines,%ld,%ld,lines\n", want, lines);
		fflush(stdout);
	}
	for (i = 0; i < loaded; i++)
		close(fds[i]);
	return 0;
}

static int bench_load(long count)
{
	double t0, t;
	long i;
	int fd;

	/* Warm up (allocator, JIT pack) before timing. */
	for (i = 0; i < 100; i++)
		close(load_trivial());
	t0 = now();
	for (i = 0; i < count; i++) {
		fd = load_trivial();
		if (fd < 0) {
			perror("load");
			return 1;
		}
		close(fd);
	}
	t = now() - t0;
	printf("bpf_load_unload_per_s,%ld,%.1f,ops/s\n", count, count / t);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

/*
 * The same BPF objects on any kernel: a program with two subprograms, an
 * fentry trampoline and the XDP dispatcher.  Prints their /proc/kallsyms
 * lines, sorted, for a comparison between kernels.  Two parts of a line
 * differ between boots and kernels by design and are printed symbolically:
 * the address (JITed images start at a random offset in their pack) and
 * the BTF type id in a trampoline's name (it depends on vmlinux's BTF).
 * The addresses are checked against bpf_prog_info by ksym_abi and
 * bpf_images on each kernel.
 */
static int dump(void)
{
	struct ksym_abi *abi = ksym_abi__open_and_load();
	struct bpf_images *img = bpf_images__open_and_load();
	int ifindex = if_nametoindex("lo");
	struct bpf_link *link;
	char line[1024], tramp[128], **lines = NULL;
	char *tab;
	size_t n = 0, i;
	FILE *f;

	if (!abi || !img || !ifindex)
		return 1;
	link = bpf_program__attach(img->progs.images_fentry);
	if (!link ||
	    bpf_xdp_attach(ifindex, bpf_program__fd(img->progs.images_xdp),
			   XDP_FLAGS_SKB_MODE, NULL))
		return 1;
	if (bpf_trampoline_name("bpf_fentry_test1", tramp, sizeof(tramp)))
		return 1;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		char out[1100], *sym = line + 17;

		if (!strstr(line, "\t[bpf]\n") || strlen(line) < 20 ||
		    line[16] != ' ')
			continue;
		tab = strchr(sym, '\t');
		if (tab && (size_t)(tab - sym - 2) == strlen(tramp) &&
		    !strncmp(sym + 2, tramp, strlen(tramp)))
			snprintf(out, sizeof(out), "<%s> %c bpf_trampoline_<bpf_fentry_test1>%s",
				 strspn(line, "0") == 16 ? "zero" : "addr",
				 sym[0], tab);
		else
			snprintf(out, sizeof(out), "<%s> %s",
				 strspn(line, "0") == 16 ? "zero" : "addr",
				 sym);
		lines = realloc(lines, (n + 1) * sizeof(*lines));
		lines[n++] = strdup(out);
	}
	fclose(f);
	qsort(lines, n, sizeof(*lines), cmp_str);
	for (i = 0; i < n; i++)
		fputs(lines[i], stdout);
	bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, NULL);
	bpf_link__destroy(link);
	bpf_images__destroy(img);
	ksym_abi__destroy(abi);
	return 0;
}

/* Bytes and records the ring buffers hold after a replay. */
static void count_stream(struct rec_stream *s, long *recs, long *bytes)
{
	size_t i;

	*recs = 0;
	*bytes = 0;
	for (i = 0; i < s->nr; i++) {
		const struct rec *r = &s->recs[i];

		(*recs)++;
		/* header, body, sample_id (time, cpu) as the kernel wrote it */
		if (r->type == PERF_RECORD_KSYMBOL)
			*bytes += 8 + 16 + ((strlen(r->name) + 8) & ~7UL) + 16;
		else
			*bytes += 8 + 8 + BPF_TAG_SIZE + 16;
	}
}

static int bench_replay(long n)
{
	struct rlimit rl = { 200000, 200000 };
	double best = 1e9, t;
	long recs = 0, bytes = 0, ret = 0;
	int *fds, i;

	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("setrlimit");
	fds = calloc(n + 1, sizeof(*fds));
	for (i = 0; i < n; i++) {
		fds[i] = load_trivial();
		if (fds[i] < 0) {
			perror("bench: load");
			return 1;
		}
	}
	for (i = 0; i < 5; i++) {
		struct rec_stream s;

		/* 8 MiB per CPU: room for 10,000s of regions. */
		if (rec_stream_open(&s, 2048)) {
			perror("bench: perf event");
			return 1;
		}
		t = now();
		ret = ioctl(rec_stream_fd(&s), PERF_EVENT_IOC_KSYMBOL_REPLAY, 0);
		t = now() - t;
		if (ret < 0) {
			perror("bench: replay");
			return 1;
		}
		if (t < best)
			best = t;
		rec_stream_drain(&s);
		count_stream(&s, &recs, &bytes);
		rec_stream_close(&s);
	}
	printf("replay_ms,%ld,%.2f,ms\n", n, best * 1e3);
	printf("replay_regions,%ld,%ld,regions\n", n, ret);
	printf("replay_records,%ld,%ld,records\n", n, recs);
	printf("replay_bytes,%ld,%ld,bytes\n", n, bytes);
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "kallsyms"))
		return bench_kallsyms(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "load"))
		return bench_load(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "replay"))
		return bench_replay(atol(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "dump"))
		return dump();
	fprintf(stderr, "usage: %s kallsyms N... | load COUNT | replay N | dump\n",
		argv[0]);
	return 2;
}
