#!/bin/sh
# perf record: a module loaded and unloaded mid-record
# SPDX-License-Identifier: GPL-2.0
#
# A kernel module is loaded, runs and is unloaded while perf record -a
# runs, then loaded and unloaded again at once: perf record must keep the
# functions of both loads, and perf report must name the samples in the
# module by function, in the module's dso, and process the whole file;
# perf report -D shows the build-id that the records carry.
# The kernel announces the module's text with PERF_RECORD_KSYMBOL records
# of type PERF_RECORD_KSYMBOL_TYPE_MODULE; on a kernel that does not, perf
# record cannot name a module gone by the time perf report runs, and the
# test is skipped.
#
# The module is the dynamic text test module, dyntext_test.ko of
# tools/testing/selftests/dyntext, where building that selftest in the
# tree puts it (make -C tools/testing/selftests TARGETS=dyntext), or the
# file PERF_TEST_DYNTEXT_KO names: its spin_ms parameter keeps it busy in
# dyntext_test_busy().

set -e

ko=${PERF_TEST_DYNTEXT_KO:-$(dirname "$0")/../../../testing/selftests/dyntext/dyntext_test.ko}
mod=dyntext_test
perfdata=$(mktemp /tmp/__perf_test.perf.data.XXXXX)
script=$(mktemp /tmp/__perf_test.script.XXXXX)

cleanup() {
	rm -f "${perfdata}" "${perfdata}.old" "${script}"
	rmmod ${mod} 2>/dev/null || true
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

if [ "$(id -u)" != 0 ]; then
	echo "Skip: not root"
	exit 2
fi
if [ -z "${ko}" ] || [ ! -r "${ko}" ]; then
	echo "Skip: no ${ko} (build tools/testing/selftests/dyntext)"
	exit 2
fi
rmmod ${mod} 2>/dev/null || true

PATH=${PATH}:/sbin:/usr/sbin
perf record -a -e cpu-clock -F 999 -o "${perfdata}" -- sh -c "
	insmod ${ko} &&
	echo 1000 > /sys/module/${mod}/parameters/spin_ms &&
	rmmod ${mod} &&
	insmod ${ko} && rmmod ${mod} && echo loaded > ${script}" 2>/dev/null ||
	echo "perf record: exit status $?"
if [ "$(cat "${script}")" != loaded ]; then
	echo "FAIL: could not load and unload ${ko}"
	exit 1
fi

# A register record: flags 0, or PERF_RECORD_KSYMBOL_FLAGS_BUILD_ID (0x10)
# with the build-id of the module's file, which perf report -D shows.
regs=$(perf report -D -i "${perfdata}" 2>/dev/null |
	grep -E "PERF_RECORD_KSYMBOL .* type 3 flags 0x(0|10)( build_id [0-9a-f]+)? name ${mod}$" ||
	true)
if [ -z "${regs}" ]; then
	echo "Skip: the kernel does not announce module text"
	exit 2
fi
kobid=$(perf buildid-list -i "${ko}" 2>/dev/null)
flagged=$(echo "${regs}" | grep -c "flags 0x10" || true)
shown=$(echo "${regs}" | grep -c "flags 0x10 build_id ${kobid} name ${mod}$" || true)
if [ -z "${kobid}" ] || [ "${shown}" -ne "${flagged}" ]; then
	echo "FAIL: ${shown} of ${flagged} register records show build-id ${kobid}"
	echo "${regs}"
	exit 1
fi

# Both loads' core text, with the functions perf record read while the
# module was loaded, or with the file perf report reads them from.  The
# second load is gone before perf record can read /proc/kallsyms: it gets
# the first load's functions, as it has the same build-id.
kept=$(perf report --header-only -i "${perfdata}" 2>/dev/null |
	grep -Ec "^# module text: ${mod} addr .*(, [1-9][0-9]* functions,|, file /)" || true)
if [ "${kept}" -ne 2 ]; then
	echo "FAIL: perf record kept the functions of ${kept} of the 2 loads"
	perf report --header-only -i "${perfdata}" 2>/dev/null | grep "module text"
	exit 1
fi

perf report -i "${perfdata}" --stdio --sort dso,sym > /dev/null
perf script -i "${perfdata}" -F ip,sym,dso > "${script}"
named=$(grep -c "dyntext_test_busy (.*${mod}" "${script}" || true)
unnamed=$(grep -c "\[unknown\] (\[${mod}\])" "${script}" || true)
echo "samples in dyntext_test_busy: ${named}, unnamed in the module: ${unnamed}"
if [ "${named}" -lt 10 ] || [ "${unnamed}" -ne 0 ]; then
	echo "FAIL: the module's samples are not named by function"
	grep "\[unknown\] (\[${mod}\])" "${script}" | head -5
	perf report -D -i "${perfdata}" 2>/dev/null |
		grep "PERF_RECORD_KSYMBOL .* type 3 " | head -8
	exit 1
fi
exit 0
