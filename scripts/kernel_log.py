# SPDX-License-Identifier: GPL-2.0
"""The one list of what a kernel log must not contain, for every report.

scripts/report, scripts/stress-report and scripts/upstream-bpf-selftests
scan the guests' kernel logs with scan() below.  Beside oopses, WARNs,
lockdep, KASAN, UBSAN and kmemleak reports, a file system the guest could
not mount (scripts/guest-init says so on the console) and the dynamic
text registry's own warnings count: the registry prints them (prefix
"dyntext: ", then the caller as %pS) for a bad add or delete and for an
inconsistent registry, which is a bug in a producer or in the registry.
Two callers misuse the registry on purpose and are expected to: the KUnit
suite's cases (dyntext_test_*, built in) and the misuse module
([dyntext_misuse]).  Their warnings are counted, not failed; the same
warning from any other caller fails, even while they run.
"""
import re

TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
BAD = re.compile(r'(BUG:|WARNING:|Oops|Kernel panic|general protection fault|'
                 r'KASAN:|UBSAN:|suspected memory leak|unreferenced object|'
                 r'possible circular locking|possible recursive locking|'
                 r'inconsistent lock state|suspicious RCU usage|'
                 r'INFO: task .* blocked|stack-protector|Call Trace:|'
                 r'guest-init: cannot)')
REGISTRY = re.compile(r'dyntext: (?P<caller>\S+(?: \[\w+\])?): (.* added twice|'
                      r'.* overlaps a registered region|'
                      r'deleting an unregistered region|'
                      r'.* initialised while registered|'
                      r'(code length|build-id) of .* set while registered|'
                      r'bad name or class|'
                      r'.* has ksymbol type \d+|bad range or code length for .*)$'
                      r'|dyntext: registry inconsistent')
# The callers that misuse the registry on purpose (see above).
EXPECTED_CALLER = re.compile(r'^dyntext_test_\w+\+0x[0-9a-f]+/0x[0-9a-f]+$|'
                             r'^\w+\+0x[0-9a-f]+/0x[0-9a-f]+ \[dyntext_misuse\]$')


def scan(text, allowed=None):
    """Lines of @text that a clean run does not print, in order, once each.

    @allowed(lines, i) may excuse a BAD line (the fault injection's
    allocation failure reports).  Returns (hits, expected): expected is
    the number of registry warnings from the callers that misuse it on
    purpose.
    """
    hits, expected = [], 0
    lines = [TS.sub('', l) for l in (text or '').splitlines()]
    for i, line in enumerate(lines):
        m = REGISTRY.search(line)
        if m:
            if EXPECTED_CALLER.match(m.group('caller') or ''):
                expected += 1
                continue
        elif not BAD.search(line) or (allowed and allowed(lines, i)):
            continue
        if line not in hits:
            hits.append(line)
    return hits, expected
