# SPDX-License-Identifier: GPL-2.0
#
# Build, boot and test the dynamic text registry patch set on Linux 7.3.y
# (the default, where the series is developed), or its backports to 6.12.y
# and 6.1.y (BASE=6.12 or BASE=6.1; patches/$(BASE), outputs in
# build/$(BASE)).
#
#   make check      build everything, boot it under QEMU, run all tests
#   make check CHECK_STOCK=0 CHECK_DEBUG=0   the patched kernel only
#   make check-all  make check in full on every base, one after the other
#   make run        build everything, boot it, show the live demo
#   make baseline   build the stock base with the same config (build/$(BASE)/stock)
#   make stock-fixed   the same plus the series' leading kernel fixes
#                   (build/$(BASE)/stock-fixed: upstream selftests' reference)
#   make kernel | perf | selftests | module
#   make vm CMD="..."          run one command in the patched guest
#   make vm-stock CMD="..."    the same on the stock kernel
#   make latency    lock hold times and non-preemptible stretches of the
#                   registry's operations (configs/latency.config)
#
# KERNEL_SRC=/path/to/linux-$(BASE).y (a tree or a tarball) replaces Debian's
# linux-source-$(BASE).  DEBUG=1 adds configs/debug.config (own tree).

TOP    := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BASE   ?= 7.3
export BASE
B      := $(TOP)/build/$(BASE)
JOBS   ?= $(shell nproc)
DEBUG  ?= 0

# DEBUG=1: every kernel, tree and output of its own (-debug), so that
# switching DEBUG never rebuilds or boots the other variant.  LATENCY=1
# does the same with configs/latency.config (make latency).
ifeq ($(DEBUG),1)
SFX    := -debug
FRAGS  := $(TOP)/configs/base.config $(TOP)/configs/debug.config
else ifeq ($(LATENCY),1)
SFX    := -latency
FRAGS  := $(TOP)/configs/base.config $(TOP)/configs/latency.config
else
SFX    :=
FRAGS  := $(TOP)/configs/base.config
endif
KTREE  := $(B)/kernel$(SFX)
# The stock kernel gets the same fragments minus the patch set's own.
STOCK_FRAGS := $(FRAGS)
FRAGS  += $(TOP)/configs/dyntext.config $(wildcard $(TOP)/configs/dyntext-$(BASE).config)
STOCK  := $(B)/stock$(SFX)
BZIMAGE := $(KTREE)/arch/x86/boot/bzImage
STOCK_BZIMAGE := $(STOCK)/arch/x86/boot/bzImage
PERF_OUT := $(B)/perf$(SFX)
PERF   := $(PERF_OUT)/perf
# perf of the stock tree (perf_compat's stock_perf cells).
STOCK_PERF_TREE := $(B)/stock
STOCK_PERF_OUT := $(B)/stock-perf
STOCK_PERF := $(STOCK_PERF_OUT)/perf
ST_OUT ?= $(B)/selftests$(SFX)/dyntext
ST_NAMES := ksym_abi bpf_images visibility ool module_kallsyms module_records \
	perf_tools perf_compat replay upstream_tests text_bytes
ST_BINS := $(addprefix $(ST_OUT)/,$(ST_NAMES))
# The suites that run perf (the patched tree's, the stock tree's and
# Debian's).  CHECK_PERF=0: make check builds no perf and runs the other
# suites only; CHECK_DEBUG_PERF=0: the debug kernel runs the other suites
# only.  .ci/run uses both so that CI fits its time with an empty ccache
# (README.md, "How long it takes here"); make check-all runs everything.
PERF_SUITES := perf_tools perf_compat upstream_tests
CHECK_PERF ?= 1
CHECK_DEBUG_PERF ?= $(CHECK_PERF)
CHECK_NAMES := $(if $(filter 0,$(CHECK_PERF)),$(filter-out $(PERF_SUITES),$(ST_NAMES)),$(ST_NAMES))
DEBUG_NAMES := $(if $(filter 0,$(CHECK_DEBUG_PERF)),$(filter-out $(PERF_SUITES),$(CHECK_NAMES)),$(CHECK_NAMES))
CHECK_BINS := $(addprefix $(ST_OUT)/,$(CHECK_NAMES))

export CCACHE_BASEDIR := $(B)
export CCACHE_NOHASHDIR := 1
KBUILD_VARS := CC="ccache gcc" HOSTCC="ccache gcc" \
	KBUILD_BUILD_TIMESTAMP="2026-01-01" KBUILD_BUILD_USER=dyntext \
	KBUILD_BUILD_HOST=vm
KMAKE = $(MAKE) -s -C $(1) -j$(JOBS) $(KBUILD_VARS)
TIMEOUT ?= 900

.PHONY: all deps tree kernel perf selftests module harness check run baseline bench \
	vm vm-stock stock-fixed clean FORCE stress stock-perf stress-build stress-check series \
	series-check flakes latency check-all

all: kernel perf selftests

deps:
	@$(TOP)/scripts/install-deps

# A tree is prepared and its kernel built under a lock of its own
# ($(KTREE).lock), so that .ci/run can build the next kernels in the
# background while a guest runs: a make that needs a kernel another make
# is building waits for it, then finds it built.
KLOCK = mkdir -p $(dir $(KTREE)) && exec 9> $(KTREE).lock && flock 9

tree: deps
	@$(KLOCK) && $(TOP)/scripts/prepare-tree $(KTREE) patched

kernel: tree
	@$(KLOCK) && $(TOP)/scripts/configure-kernel $(KTREE) $(FRAGS) && \
	echo "  BUILD   kernel ($$(cat $(KTREE)/.base-version))" && \
	$(call KMAKE,$(KTREE)) bzImage modules && \
	$(call KMAKE,$(KTREE)) headers >/dev/null

# perf's BPF skeletons stay out (scripts/perf-skel-var).
PERF_MAKE = skel=$$($(TOP)/scripts/perf-skel-var $(1)); \
	$(MAKE) -s -C $(1)/tools/perf -j$(JOBS) O=$(2) \
		CC="ccache gcc" NO_LIBPYTHON=1 NO_LIBPERL=1 NO_JEVENTS=1 NO_RUST=1 \
		LIBBPF_DYNAMIC=1 LIBTRACEEVENT_DYNAMIC=1 WERROR=0 $$skel \
		> $(2).log 2>&1 || { tail -30 $(2).log; exit 1; }

perf: kernel
	@echo "  BUILD   perf"
	@mkdir -p $(PERF_OUT)
	@$(call PERF_MAKE,$(KTREE),$(PERF_OUT))

# The stock tree's perf, built the same way (the stock tree is only
# extracted for it; make baseline builds its kernel).
stock-perf: deps
	@$(TOP)/scripts/prepare-tree $(STOCK_PERF_TREE) stock
	@echo "  BUILD   stock perf ($$(cat $(STOCK_PERF_TREE)/.base-version))"
	@mkdir -p $(STOCK_PERF_OUT)
	@$(call PERF_MAKE,$(STOCK_PERF_TREE),$(STOCK_PERF_OUT))

selftests module: kernel
	@echo "  BUILD   selftests"
	@mkdir -p $(ST_OUT)
	@$(MAKE) -s -C $(KTREE)/tools/testing/selftests/dyntext \
		OUTPUT=$(ST_OUT) KHDR_INCLUDES="-isystem $(KTREE)/usr/include" \
		all
	@$(HARNESS_MAKE) tests

# The harness's own tests and the programs of make bench and make run
# (harness/), into the selftests' output directory, whose helpers they
# link.
HARNESS_MAKE = $(MAKE) -s -C $(TOP)/harness \
	SELFTESTS=$(KTREE)/tools/testing/selftests/dyntext OUTPUT=$(ST_OUT) \
	KDIR=$(KTREE) KHDR_INCLUDES="-isystem $(KTREE)/usr/include"
harness: selftests
	@$(HARNESS_MAKE) all

# The short reliability run on the debug kernel (stress-check below).
DEBUG_SUITES := debug_misuse debug_stress debug_faults debug_kmemleak \
	debug_kernel_log

# One boot of the patched kernel runs KUnit (at boot), dumps /proc/kallsyms
# after a workload of every kind, then runs every kselftest; one boot of the
# stock kernel dumps the same and runs every kselftest too
# (patches/expected-tests says which must fail there); the debug kernel
# runs them again (stress-check); the report compares the two dumps.
# CHECK_STOCK=0 leaves out the stock kernel (its kselftests, the
# comparison), CHECK_DEBUG=0 the debug kernel; both are exported, so that
# scripts/report expects neither (.ci/run checks the second base so).
CHECK_STOCK ?= 1
CHECK_DEBUG ?= 1
export CHECK_STOCK CHECK_DEBUG
DUMP := kallsyms_dump
# One boot of each kernel running every kselftest, results in $(1)
# (make check, make flakes).  The stock kernel runs copies of the tests
# next to modules built against its own tree (struct module differs).
PATCHED_RUN = $(TOP)/scripts/vm-run --kernel $(BZIMAGE) --job $(1) \
	--timeout $(TIMEOUT) -- sh -c '$(ST_OUT)/$(DUMP) > /run/job/kallsyms.patched; \
		PERF=$(PERF) STOCK_PERF=$(STOCK_PERF) \
		$(TOP)/scripts/guest-check /run/job/results $(CHECK_BINS)'
STOCK_PREPARE = $(HARNESS_MAKE) STOCK_KDIR=$(STOCK) stock-modules && \
	cp $(ST_BINS) $(ST_OUT)/kallsyms_dump $(ST_OUT)/stock/
STOCK_RUN = $(TOP)/scripts/vm-run --kernel $(STOCK_BZIMAGE) --job $(1) \
	--quiet --timeout $(TIMEOUT) -- sh -c '$(ST_OUT)/stock/$(DUMP) \
		> /run/job/out.dump; PERF=$(PERF) DYNTEXT_TREE=$(KTREE) \
		STOCK_PERF=$(STOCK_PERF) \
		$(TOP)/scripts/guest-check /run/job/results \
		$(addprefix $(ST_OUT)/stock/,$(CHECK_NAMES))'

check: kernel $(if $(filter-out 0,$(CHECK_PERF)),perf stock-perf) selftests \
		$(if $(filter-out 0,$(CHECK_STOCK)),baseline)
	@rm -rf $(B)/check $(B)/check-stock && mkdir -p $(B)/check
	@for t in $(CHECK_NAMES); do echo dyntext_$$t; done > $(B)/check/expected
	@# First, the report's own tests (host only, seconds): host:report.
	@echo host_report >> $(B)/check/expected
	@mkdir -p $(B)/check/results && $(TOP)/scripts/test-report \
		> $(B)/check/results/host_report.tap; \
		echo $$? > $(B)/check/results/host_report.rc
	@# Then one ABI on every base (host:abi): scripts/abi-check.
	@echo host_abi >> $(B)/check/expected
	@$(TOP)/scripts/abi-check > $(B)/check/results/host_abi.tap; \
		echo $$? > $(B)/check/results/host_abi.rc
	@$(call PATCHED_RUN,$(B)/check) \
		|| echo "make check: the guest run ended with status $$?"
ifneq ($(CHECK_STOCK),0)
	@for t in $(CHECK_NAMES); do echo stock_$$t; done >> $(B)/check/expected
	@$(STOCK_PREPARE)
	@$(call STOCK_RUN,$(B)/check-stock) \
		&& cp $(B)/check-stock/out.dump $(B)/check/kallsyms.stock \
		|| echo "make check: the stock guest run ended with status $$?"
	@cp $(B)/check-stock/results/*.tap $(B)/check-stock/results/*.rc \
		$(B)/check-stock/results/*.times $(B)/check/results/ 2>/dev/null || true
endif
ifneq ($(CHECK_DEBUG),0)
	@for t in $(DEBUG_NAMES); do echo debug_dyntext_$$t; \
		done >> $(B)/check/expected
	@for t in $(DEBUG_SUITES); do echo $$t; done >> $(B)/check/expected
	@$(MAKE) -s stress-check STRESS_RESULTS=$(B)/check/results \
		|| echo "make check: the debug guest run ended with status $$?"
endif
	@echo
	@$(TOP)/scripts/report $(B)/check \
		$(if $(filter-out 0,$(CHECK_DEBUG)),$(B)/stress-check)

# Stock and patched side by side: BENCH_ROUNDS (3) interleaved boots each.
# The modules the workloads load are built against each kernel's tree
# (struct module differs); the stock kernel's go to $(ST_OUT)/stock.
# BENCH_FUNCS: the modules with generated functions (modfuncs), built for
# both kernels.
BENCH_FUNCS ?= 1000 10000 50000
export BENCH_FUNCS
bench: kernel perf stock-perf selftests harness baseline
	@$(MAKE) -s -C $(KTREE)/tools/testing/selftests/dyntext \
		OUTPUT=$(ST_OUT) KHDR_INCLUDES="-isystem $(KTREE)/usr/include" \
		$(foreach n,$(BENCH_FUNCS),$(ST_OUT)/dyntext_funcs_$(n).ko)
	@$(HARNESS_MAKE) FUNCS_NS="$(BENCH_FUNCS)" STOCK_KDIR=$(STOCK) stock-modules
	@$(HARNESS_MAKE) STOCK_KDIR=$(STOCK) many-modules
	@BENCH_STOCK_PERF=$(STOCK_PERF) $(TOP)/scripts/bench $(BZIMAGE) \
		$(STOCK_BZIMAGE) $(ST_OUT) $(PERF) $(B)/bench

# Reliability on the debug kernel (configs/debug.config, own tree
# build/kernel-debug; its tests and modules in build/selftests-debug): the
# misuse test, STRESS_SECONDS of every producer at once under perf record,
# STRESS_FAULT_SECONDS of fault injection, kmemleak and the kernel log.
# stress-check is the short version for make check, and runs every
# kselftest on the debug kernel first (KASAN, lockdep); with STRESS_RESULTS=DIR
# it copies its TAP (debug_*.tap and .rc) there for scripts/report.
STRESS_SECONDS ?= 300
STRESS_FAULT_SECONDS ?= 300
STRESS_CHECK_SECONDS ?= 35
STRESS_CHECK_FAULT_SECONDS ?= 35
DEBUG_BZIMAGE := $(B)/kernel-debug/arch/x86/boot/bzImage
ST_DEBUG_OUT := $(B)/selftests-debug/dyntext
# The guest's limit: SECONDS and FAULT_SECONDS plus 4800 s for the rest,
# which took about 650 s on an idle host (boot 100 s, the kselftests
# 515 s), 1,165 s with a make check beside it (2026-11-28), 1,188 s
# for today's kselftests alone (make flakes, 2026-12-02) and more than
# 2,340 s (the old limit of 2400 s, hit in the kselftests) alone on a
# host that ran every guest 2 to 3 times slower than the day before
# (2026-12-03 afternoon; that evening the kselftests took 2,975 s and
# the guest passed at 3,132 s, 1.5 times under this limit).  Only a
# hung guest waits so long.
STRESS_RUN = $(TOP)/scripts/vm-run --kernel $(DEBUG_BZIMAGE) --job $(1) \
	--timeout $$(( $(2) + $(3) + 4800 )) -- \
	env STOCK_PERF=$(STOCK_PERF) DYNTEXT_VMLINUX=$(B)/kernel-debug/vmlinux \
	$(TOP)/scripts/guest-stress \
	/run/job/results $(2) $(3) $(B)/perf/perf $(ST_DEBUG_OUT) $(4) \
	|| echo "make stress: the guest run ended with status $$?"

stress-build:
	@$(MAKE) -s --no-print-directory DEBUG=0 perf stock-perf
	@$(MAKE) -s --no-print-directory DEBUG=1 kernel
	@$(MAKE) -s --no-print-directory DEBUG=1 ST_OUT=$(ST_DEBUG_OUT) selftests

stress: stress-build
	@rm -rf $(B)/stress && mkdir -p $(B)/stress
	@$(call STRESS_RUN,$(B)/stress,$(STRESS_SECONDS),$(STRESS_FAULT_SECONDS))
	@echo
	@$(TOP)/scripts/stress-report $(B)/stress

# RUNS boots of each of FLAKES_KERNELS, each running every kselftest (no
# builds, no stress or fault injection), then each test's pass count out of
# RUNS and its longest time (scripts/test-times).  A round of the three
# kernels takes about 50 minutes here (7.3, 2026-11-29), so RUNS=5 does not
# fit in one sitting: the runs that ended are kept ($(B)/flakes/KERNEL-N/done)
# as long as the code under test is the same ($(B)/flakes/id, FLAKES_ID
# below), and make flakes again runs only the missing ones.
# A session may end on one machine and go on on another with an empty
# build/: each run that ended also leaves its results (*.times, *.rc, a
# few hundred KB) in $(FLAKES_KEEP)/ID/KERNEL-N, to commit, and make flakes
# takes a run from there when build/ lacks it.
RUNS ?= 5
FLAKES_KERNELS ?= patched stock debug
FLAKES_KEEP ?= $(TOP)/notes/flakes/$(BASE)
# What builds or runs the code under test, as it is in the working tree:
# the diff part of each patch of the base (scripts/patch-hash: changelogs
# and cover letters may change), its series and new-files lists, the new
# files, configs/ and the scripts that build or run them.  Host-only
# scripts (the report, series, bench), notes and documentation may change
# between runs.
FLAKES_SCRIPTS := $(addprefix scripts/,vm-run guest-init pack-guest-init \
	guest-check guest-stress prepare-tree configure-kernel quilt quiltrc \
	patch-hash perf-skel-var)
FLAKES_ID = cd $(TOP) && { scripts/patch-hash patches/$(BASE) \
	$$(sed -n '/^[A-Za-z0-9]/p' patches/$(BASE)/series) && \
	cat patches/$(BASE)/series patches/$(BASE)/new-files && \
	git ls-files -z -- kernel include lib arch tools configs harness \
	$(FLAKES_SCRIPTS) | xargs -0 sha256sum; } | sha256sum | cut -c1-16
flakes: kernel perf stock-perf selftests $(if $(filter stock,$(FLAKES_KERNELS)),baseline) \
		$(if $(filter debug,$(FLAKES_KERNELS)),stress-build)
	@$(if $(filter stock,$(FLAKES_KERNELS)),$(STOCK_PREPARE))
	@id=$$($(FLAKES_ID)); \
	if [ "$$(cat $(B)/flakes/id 2>/dev/null)" != "$$id" ]; then \
		rm -rf $(B)/flakes && mkdir -p $(B)/flakes && \
		echo "$$id" > $(B)/flakes/id; fi; \
	for i in $$(seq $(RUNS)); do for k in $(FLAKES_KERNELS); do \
		d=$(B)/flakes/$$k-$$i; kd=$(FLAKES_KEEP)/$$id/$$k-$$i; \
		if [ ! -f $$d/done ] && [ -f $$kd/done ]; then \
			rm -rf $$d && mkdir -p $$d/results && \
			cp $$kd/*.times $$kd/*.rc $$d/results/ && touch $$d/done; fi; \
		if [ -f $$d/done ]; then \
			echo "  KEEP    $$k kernel, $$i of $(RUNS) (code $$id)"; \
			continue; fi; \
		rm -rf $$d; echo "  RUN     $$k kernel, $$i of $(RUNS) (code $$id)"; \
		case $$k in \
		patched) $(call PATCHED_RUN,$$d) >/dev/null;; \
		stock) $(call STOCK_RUN,$$d) >/dev/null;; \
		debug) $(call STRESS_RUN,$$d,0,0,$(ST_NAMES)) >/dev/null;; \
		esac; touch $$d/done; rm -rf $$kd && mkdir -p $$kd && \
		cp $$d/results/*.times $$d/results/*.rc $$kd/ && touch $$kd/done; \
		done; done
	@$(TOP)/scripts/test-times --runs $(RUNS) $$(for i in $$(seq $(RUNS)); do \
		for k in $(FLAKES_KERNELS); do echo $(B)/flakes/$$k-$$i/results; done; done)

stress-check: stress-build
	@rm -rf $(B)/stress-check && mkdir -p $(B)/stress-check
	@$(call STRESS_RUN,$(B)/stress-check,$(STRESS_CHECK_SECONDS),$(STRESS_CHECK_FAULT_SECONDS),$(DEBUG_NAMES))
	@echo
	@$(TOP)/scripts/stress-report $(B)/stress-check $(STRESS_RESULTS)

# With LATENCY_PROGS programs loaded and LATENCY_STALE replays left
# unfinished, each registry operation's longest lock hold (lock_stat) and
# the longest stretch with preemption or interrupts off (the
# preemptirqsoff tracer); see dyntext_bench latency.  LATENCY_BZIMAGE runs
# the same on another kernel built with configs/latency.config (an older
# commit's, for a before and after).
LATENCY_PROGS ?= 100000
LATENCY_STALE ?= 100000
LATENCY_BZIMAGE ?= $(B)/kernel-latency/arch/x86/boot/bzImage
latency:
	@$(MAKE) -s --no-print-directory LATENCY=1 kernel
	@$(MAKE) -s --no-print-directory LATENCY=1 harness
	@rm -rf $(B)/latency && mkdir -p $(B)/latency
	@VM_MEM=8G $(TOP)/scripts/vm-run --kernel $(LATENCY_BZIMAGE) \
		--job $(B)/latency --timeout 3600 -- \
		$(B)/selftests-latency/dyntext/dyntext_bench latency \
		$(LATENCY_PROGS) $(LATENCY_STALE)

# Every base in full (patched, stock and debug kernels): by hand, before
# resolving a change that touches more than one base (CI runs the other
# bases with the patched kernel only).  The last line sums the bases'.
check-all:
	@status=0; passed=0; failed=0; \
	for base in $$(ls $(TOP)/patches/*/series | xargs -n1 dirname | xargs -n1 basename | sort -rV); do \
		echo "== make check BASE=$$base"; \
		mkdir -p $(TOP)/build; log=$(TOP)/build/check-all-$$base; \
		{ $(MAKE) -s --no-print-directory check BASE=$$base 2>&1; \
			echo $$? > $$log.rc; } | tee $$log.log; \
		[ "$$(cat $$log.rc)" = 0 ] || status=1; \
		sum=$$(grep -E '^[0-9]+ passed, [0-9]+ failed' \
			$$log.log | tail -n 1); \
		[ -n "$$sum" ] || { sum="0 passed, 1 failed"; status=1; }; \
		set -- $$sum; passed=$$((passed + $$1)); failed=$$((failed + $$3)); \
	done; echo "$$passed passed, $$failed failed"; exit $$status

run: kernel perf selftests harness
	@$(TOP)/scripts/vm-run --kernel $(BZIMAGE) --timeout $(TIMEOUT) -- $(TOP)/scripts/demo $(PERF) $(ST_OUT)

baseline: deps
	@$(TOP)/scripts/prepare-tree $(STOCK) stock
	@$(TOP)/scripts/configure-kernel $(STOCK) $(STOCK_FRAGS)
	@echo "  BUILD   stock kernel ($$(cat $(STOCK)/.base-version))"
	@$(call KMAKE,$(STOCK)) bzImage modules

# Stock plus the series' leading kernel fixes: the reference kernel for
# scripts/upstream-ftracetest and upstream-bpf-selftests where stock dies
# in their tests (7.3.4; scripts/stock-fixed).
STOCK_FIXED := $(B)/stock-fixed$(SFX)
stock-fixed: baseline
	@$(TOP)/scripts/stock-fixed $(STOCK) $(STOCK_FIXED)
	@echo "  BUILD   stock kernel + $$(paste -sd' ' $(STOCK_FIXED)/.fixes)"
	@$(call KMAKE,$(STOCK_FIXED)) bzImage modules

vm: kernel
	@$(TOP)/scripts/vm-run --kernel $(BZIMAGE) --timeout $(TIMEOUT) -- sh -c '$(CMD)'

vm-stock: baseline
	@$(TOP)/scripts/vm-run --kernel $(STOCK_BZIMAGE) --timeout $(TIMEOUT) -- sh -c '$(CMD)'

# The series upstream sees (build/series: git format-patch output with a
# cover letter), generated from patches/ and the new files; series-check
# applies it to a fresh base one patch at a time and builds and checks every
# step, then the build matrix (SERIES_MATRIX, see scripts/series-check).
series: deps
	@$(TOP)/scripts/series $(B)/series-git $(B)/series

series-check: series
	@$(TOP)/scripts/install-deps series
	@$(TOP)/scripts/series-check $(B)/series-git $(B)/series $(B)/series-check

clean:
	rm -rf $(B)
