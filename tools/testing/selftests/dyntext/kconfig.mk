# SPDX-License-Identifier: GPL-2.0
# What the tests need to know of the kernel they are built for (KDIR):
# included by this directory's Makefile and by programs built beside it.
# Options of the kernel under test that decide exact sizes the tests
# assert (the module loader's page alignment, the return sequence that
# x86 appends to an ftrace trampoline, where a function's first
# instruction after its ftrace call is).
kconfig = $(if $(shell grep -s '^CONFIG_$(1)=y' $(KDIR)/.config),1,0)
CFLAGS += -DKCONFIG_STRICT_MODULE_RWX=$(call kconfig,STRICT_MODULE_RWX) \
	  -DKCONFIG_RETPOLINE=$(call kconfig,RETPOLINE) \
	  -DKCONFIG_SLS=$(call kconfig,SLS) \
	  -DKCONFIG_X86_KERNEL_IBT=$(call kconfig,X86_KERNEL_IBT)
# Whether the base has upstream's deferred user callchains (attr bits 38
# and 39, defer_callchain and defer_output): its UAPI header declares the
# field (the backports' headers name it only in a comment, "Bits 38 and 39
# are defer_callchain and ...", to say why the bits stay reserved).
CFLAGS += -DHAVE_DEFER_CALLCHAIN=$(if $(shell grep -sE 'defer_callchain[[:space:]]*:' \
	  $(or $(top_srcdir),$(KDIR))/include/uapi/linux/perf_event.h),1,0)
