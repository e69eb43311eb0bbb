// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the dynamic text registry: text that profilers should
 * see while it is loaded.
 *
 * fail_init=1 makes module_init fail with -EINVAL (a failed load).
 * Writing N to /sys/module/dyntext_test/parameters/spin_ms keeps a CPU busy
 * in dyntext_test_busy() for N milliseconds, so that samples land in it.
 * Writing N to calls_ms calls dyntext_test_tick() in a loop for N ms, so
 * that samples land in what a tracer attached to it runs (a BPF or ftrace
 * trampoline, an optimized kprobe's buffer).  init_spin_ms=N keeps the CPU
 * that loads the module busy in its init text for N milliseconds, so that
 * samples land there before any lands in its core text.
 *
 * Built with DYNTEXT_TEST_OTHER_BUILD (module_other/), it is another build
 * of the same module: a function of 2 KiB of nops before
 * dyntext_test_busy() moves that and the functions after it (both builds
 * keep the functions in the order of this file: -fno-toplevel-reorder).
 */
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>

static bool fail_init;
module_param(fail_init, bool, 0400);
MODULE_PARM_DESC(fail_init, "Fail module_init with -EINVAL");

static unsigned int init_spin_ms;
module_param(init_spin_ms, uint, 0400);
MODULE_PARM_DESC(init_spin_ms, "Stay busy in the init text for N ms first");

static unsigned long dyntext_test_sink;

#ifdef DYNTEXT_TEST_OTHER_BUILD
static noinline void dyntext_test_other_build(void)
{
	asm volatile(".rept 2048\n\tnop\n\t.endr");
}
#else
static inline void dyntext_test_other_build(void)
{
}
#endif

/* Busy for ms milliseconds, in the text of the function it is inlined in. */
static __always_inline void dyntext_test_spin(unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	unsigned long x = 1;

	while (time_before(jiffies, end)) {
		int i;

		for (i = 0; i < 1000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		cond_resched();
	}
	WRITE_ONCE(dyntext_test_sink, x);
}

static noinline void dyntext_test_busy(unsigned int ms)
{
	dyntext_test_spin(ms);
}

/* Where tracers attach: not inlined, not cloned, so it keeps its name. */
static noinline __noclone unsigned long dyntext_test_tick(unsigned long x)
{
	return x * 6364136223846793005UL + 1442695040888963407UL;
}

static noinline void dyntext_test_calls(unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	unsigned long x = 1;

	while (time_before(jiffies, end)) {
		int i;

		for (i = 0; i < 100; i++)
			x = dyntext_test_tick(x);
		cond_resched();
	}
	WRITE_ONCE(dyntext_test_sink, x);
}

static int ms_param(const char *val, void (*busy)(unsigned int ms))
{
	unsigned int ms;
	int ret = kstrtouint(val, 0, &ms);

	if (ret)
		return ret;
	if (ms > 60000)
		return -ERANGE;
	busy(ms);
	return 0;
}

static int spin_ms_set(const char *val, const struct kernel_param *kp)
{
	return ms_param(val, dyntext_test_busy);
}

static const struct kernel_param_ops spin_ms_ops = {
	.set = spin_ms_set,
};
module_param_cb(spin_ms, &spin_ms_ops, NULL, 0200);
MODULE_PARM_DESC(spin_ms, "Write N: stay busy in dyntext_test_busy() for N ms");

static int calls_ms_set(const char *val, const struct kernel_param *kp)
{
	/* Not called only from init: not moved to .text.unlikely. */
	dyntext_test_other_build();
	return ms_param(val, dyntext_test_calls);
}

static const struct kernel_param_ops calls_ms_ops = {
	.set = calls_ms_set,
};
module_param_cb(calls_ms, &calls_ms_ops, NULL, 0200);
MODULE_PARM_DESC(calls_ms, "Write N: call dyntext_test_tick() in a loop for N ms");

static noinline void __init dyntext_test_init_busy(unsigned int ms)
{
	dyntext_test_spin(ms);
}

static noinline int __init dyntext_test_init_work(void)
{
	if (init_spin_ms > 60000)
		return -ERANGE;
	if (init_spin_ms)
		dyntext_test_init_busy(init_spin_ms);
	return fail_init ? -EINVAL : 0;
}

static int __init dyntext_test_init(void)
{
	return dyntext_test_init_work();
}

static void __exit dyntext_test_exit(void)
{
}

module_init(dyntext_test_init);
module_exit(dyntext_test_exit);
MODULE_DESCRIPTION("Dynamic text registry test module");
MODULE_LICENSE("GPL");
