// SPDX-License-Identifier: GPL-2.0
/*
 * A PMU that a test can take away while its events are open: writing 1 to
 * /sys/module/dyntext_pmu/parameters/registered registers the PMU
 * "dyntext_pmu" (CPU events only, counting nothing), writing 0
 * unregisters it, which revokes its open events (perf_pmu_unregister()):
 * every ioctl on them then fails with -ENODEV.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>

static DEFINE_MUTEX(dyntext_pmu_lock);
static bool dyntext_pmu_registered;

static int dyntext_pmu_event_init(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if (event->cpu < 0)
		return -EINVAL;
	return 0;
}

static int dyntext_pmu_add(struct perf_event *event, int flags)
{
	return 0;
}

static void dyntext_pmu_del(struct perf_event *event, int flags)
{
}

static void dyntext_pmu_start(struct perf_event *event, int flags)
{
}

static void dyntext_pmu_stop(struct perf_event *event, int flags)
{
}

static void dyntext_pmu_read(struct perf_event *event)
{
}

static struct pmu dyntext_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_invalid_context,
	.capabilities	= PERF_PMU_CAP_NO_INTERRUPT,
	.event_init	= dyntext_pmu_event_init,
	.add		= dyntext_pmu_add,
	.del		= dyntext_pmu_del,
	.start		= dyntext_pmu_start,
	.stop		= dyntext_pmu_stop,
	.read		= dyntext_pmu_read,
};

static int registered_set(const char *val, const struct kernel_param *kp)
{
	bool want;
	int ret;

	ret = kstrtobool(val, &want);
	if (ret)
		return ret;
	guard(mutex)(&dyntext_pmu_lock);
	if (want == dyntext_pmu_registered)
		return 0;
	if (want)
		ret = perf_pmu_register(&dyntext_pmu, "dyntext_pmu", -1);
	else
		ret = perf_pmu_unregister(&dyntext_pmu);
	if (!ret)
		dyntext_pmu_registered = want;
	return ret;
}

static int registered_get(char *buffer, const struct kernel_param *kp)
{
	return sysfs_emit(buffer, "%d\n", dyntext_pmu_registered);
}

static const struct kernel_param_ops registered_ops = {
	.set = registered_set,
	.get = registered_get,
};
module_param_cb(registered, &registered_ops, NULL, 0600);
MODULE_PARM_DESC(registered, "1: register the PMU; 0: unregister it, revoking its events");

static void __exit dyntext_pmu_exit(void)
{
	if (dyntext_pmu_registered)
		perf_pmu_unregister(&dyntext_pmu);
}

module_exit(dyntext_pmu_exit);
MODULE_DESCRIPTION("A PMU to revoke events of, for the dyntext selftests");
MODULE_LICENSE("GPL");
