#!/bin/sh
# perf record: kernel, module and BPF samples named at kptr_restrict=2
# SPDX-License-Identifier: GPL-2.0
#
# At kernel.kptr_restrict=2 /proc/kallsyms and /proc/modules show zeros
# even to root.  A kernel that describes its image in the ksymbol replay
# (PERF_RECORD_KSYMBOL_TYPE_KERNEL: where _stext is, the length of the
# kernel text, the build-id of vmlinux), and its modules with their
# build-ids (PERF_RECORD_KSYMBOL_TYPE_MODULE), gives perf record the
# kernel and module maps: root's perf record -a opens none of
# /proc/kallsyms, /proc/modules, /sys/kernel/notes and /sys/module/*/notes
# (strace), not even to copy /proc/kallsyms into the build-id cache, and
# perf report, given vmlinux, names the samples of a getppid() loop (perf
# bench syscall basic) in sys_getppid, and those of perf's own BPF
# workload (bpf_short) after its program.  On a kernel that does not, the
# test is skipped.
#
# vmlinux is PERF_TEST_VMLINUX, or the tree's (where make puts it).  If
# PERF_TEST_DYNTEXT_KO names a module (dyntext_test.ko of
# tools/testing/selftests/dyntext), its file goes to the build-id cache,
# it is loaded before perf record, kept busy in dyntext_test_busy(), then
# unloaded and loaded again while perf records, and kept busy again: perf
# report must name the samples of both loads by function, and perf record
# must not read /proc/kallsyms for the second one either.

set -e

vmlinux=${PERF_TEST_VMLINUX:-$(dirname "$0")/../../../../vmlinux}
ko=${PERF_TEST_DYNTEXT_KO:-}
mod=dyntext_test
tmpdir=$(mktemp -d /tmp/__perf_test.kptr_restrict.XXXXX)
perfdata=${tmpdir}/perf.data
perf="perf --buildid-dir ${tmpdir}/debug"
kptr=$(cat /proc/sys/kernel/kptr_restrict)
bench=

cleanup() {
	[ -n "${bench}" ] && kill "${bench}" 2>/dev/null
	echo "${kptr}" > /proc/sys/kernel/kptr_restrict
	[ -n "${ko}" ] && rmmod ${mod} 2>/dev/null
	rm -rf "${tmpdir}"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

if [ "$(id -u)" != 0 ]; then
	echo "Skip: not root"
	exit 2
fi
if ! strace -V > /dev/null 2>&1; then
	echo "Skip: no strace"
	exit 2
fi
if [ ! -r "${vmlinux}" ]; then
	echo "Skip: no vmlinux (${vmlinux}; set PERF_TEST_VMLINUX)"
	exit 2
fi
if [ -n "${ko}" ]; then
	PATH=${PATH}:/sbin:/usr/sbin
	rmmod ${mod} 2>/dev/null || true
	insmod "${ko}"
	${perf} buildid-cache --add "${ko}"
	spin="echo 1000 > /sys/module/${mod}/parameters/spin_ms"
	work="${spin}; rmmod ${mod}; insmod ${ko}; ${spin}"
else
	work="sleep 1"
fi
if ! perf test -w bpf_short 0.01 > /dev/null 2>&1; then
	echo "Skip: cannot load BPF programs (perf without libbpf?)"
	exit 2
fi

echo 2 > /proc/sys/kernel/kptr_restrict
perf bench syscall basic --loop 1000000000 > /dev/null 2>&1 &
bench=$!
strace -f -qq -e trace=openat -o "${tmpdir}/strace" \
	${perf} record -v -a -e cpu-clock -F 999 -o "${perfdata}" \
	-- sh -c "${work}; perf test -w bpf_short 1 > ${tmpdir}/bpf" \
	> "${tmpdir}/log" 2>&1 ||
	echo "perf record: exit status $?"
kill "${bench}" 2>/dev/null || true
bench=

if ! grep -q "ksymbol replay: the kernel and module maps from the kernel's records" \
	"${tmpdir}/log"; then
	if grep -q "ksymbol replay: cannot place the kernel map" "${tmpdir}/log"; then
		echo "FAIL: perf record did not take the kernel map from the replay"
		grep "ksymbol replay" "${tmpdir}/log"
		exit 1
	fi
	echo "Skip: the kernel does not describe its image in the ksymbol replay"
	grep "ksymbol replay" "${tmpdir}/log" || true
	exit 2
fi

files='"(/proc/kallsyms|/proc/modules|/sys/kernel/notes|/sys/module/[^"]*/notes[^"]*)"'
if grep -Eq "${files}" "${tmpdir}/strace"; then
	echo "FAIL: perf record read kernel address files"
	grep -E "${files}" "${tmpdir}/strace" | head -10
	exit 1
fi
if grep -q "Kernel address maps .* are restricted" "${tmpdir}/log"; then
	echo "FAIL: perf record warned about kptr_restrict"
	exit 1
fi
if [ -n "$(find "${tmpdir}/debug" -name kallsyms 2>/dev/null)" ]; then
	echo "FAIL: a copy of /proc/kallsyms in the build-id cache"
	exit 1
fi

${perf} report -i "${perfdata}" --vmlinux "${vmlinux}" --stdio -n \
	--sort sym > "${tmpdir}/report" 2>/dev/null
named=$(awk '/\[k\] [_a-z0-9]*sys_getppid *$/ { n += $2 } END { print n + 0 }' \
	"${tmpdir}/report")
echo "samples in sys_getppid: ${named}"
if [ "${named}" -lt 10 ]; then
	echo "FAIL: core kernel samples are not named"
	grep "\[k\]" "${tmpdir}/report" | head -10
	exit 1
fi
${perf} script -i "${perfdata}" --vmlinux "${vmlinux}" -F ip,sym,dso \
	> "${tmpdir}/script" 2>/dev/null
sym=$(tail -n 1 "${tmpdir}/bpf")
case "${sym}" in
bpf_prog_*) ;;
*)
	echo "FAIL: the BPF programs did not run"
	exit 1
	;;
esac
named=$(grep -c " ${sym} " "${tmpdir}/script" || true)
echo "samples in ${sym}: ${named}"
if [ "${named}" -lt 1 ]; then
	echo "FAIL: BPF samples are not named"
	exit 1
fi
if [ -n "${ko}" ]; then
	named=$(grep -c "dyntext_test_busy (.*${mod}" "${tmpdir}/script" || true)
	unnamed=$(grep -c "\[unknown\] (.*${mod}" "${tmpdir}/script" || true)
	echo "samples in dyntext_test_busy: ${named}, unnamed in the module: ${unnamed}"
	if [ "${named}" -lt 10 ] || [ "${unnamed}" -ne 0 ]; then
		echo "FAIL: the module's samples are not named by function"
		grep "${mod}" "${tmpdir}/script" | sort | uniq -c | sort -rn | head -5
		exit 1
	fi
fi
exit 0
