#!/bin/sh
# perf annotate: a short-lived BPF program that is gone
# SPDX-License-Identifier: GPL-2.0
#
# BPF programs are loaded, run for as long as their load took (8 ms at
# least) and unloaded, one after the other, while perf record -a runs:
# perf annotate must disassemble the program, with samples on its
# instructions, after it is gone.  perf record asks
# the kernel for the code of new text (attr.ksymbol_text), which comes in
# the stream; on a kernel that does not send it, the code of a program
# that is gone is nowhere, and the test is skipped.
#
# The programs come from perf's own workload bpf_short, which prints the
# programs' symbol name.

set -e

perfdata=$(mktemp /tmp/__perf_test.perf.data.XXXXX)
out=$(mktemp /tmp/__perf_test.annotate.XXXXX)

cleanup() {
	rm -f "${perfdata}" "${perfdata}.old" "${out}"
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

if [ "$(id -u)" != 0 ]; then
	echo "Skip: not root"
	exit 2
fi
if ! perf test -w bpf_short 0.01 > /dev/null 2>&1; then
	echo "Skip: cannot load BPF programs (perf without libbpf?)"
	exit 2
fi

perf record -a -e cpu-clock -F 10000 -o "${perfdata}" -- \
	perf test -w bpf_short 3 > "${out}" 2>/dev/null
sym=$(tail -n 1 "${out}")
case "${sym}" in
bpf_prog_*) ;;
*)
	echo "FAIL: the programs did not run"
	exit 1
	;;
esac
if grep -q "^${sym} " /proc/kallsyms; then
	echo "FAIL: ${sym} is still loaded"
	exit 1
fi
if ! perf evlist -v -i "${perfdata}" 2>/dev/null | grep -q "ksymbol_text: 1"; then
	echo "Skip: the kernel does not send the code of new text"
	exit 2
fi

# Lines of code: "percent : offset: instruction"; those with samples.
perf annotate -i "${perfdata}" --stdio -s "${sym}" 2>/dev/null > "${out}" || true
lines=$(grep -cE '^ *[0-9]+\.[0-9]+ +: +[0-9a-f]+: ' "${out}" || true)
hit=$(grep -E '^ *[0-9]+\.[0-9]+ +: +[0-9a-f]+: ' "${out}" |
	awk '$1 > 0' | wc -l)
echo "${sym}: ${lines} lines of code, ${hit} with samples"
if [ "${lines}" -le 10 ] || [ "${hit}" -lt 1 ]; then
	echo "FAIL: perf annotate did not disassemble the program's samples"
	head -20 "${out}"
	exit 1
fi
exit 0
