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
warning from any other caller fails, even while they run, and so does a
registry warning that the rate limit held back ("callbacks suppressed"),
whose caller the log does not name.  The expected warnings must appear
exactly as often as patches/$BASE/expected-results says ("warnings:kunit
N", "warnings:misuse N"): a registry that stops warning fails too.
"""
import os
import re
from collections import Counter

TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
BAD = re.compile(r'(BUG:|WARNING:|Oops|Kernel panic|general protection fault|'
                 r'KASAN:|UBSAN:|suspected memory leak|unreferenced object|'
                 r'possible circular locking|possible recursive locking|'
                 r'inconsistent lock state|suspicious RCU usage|'
                 r'INFO: task .* blocked|stack-protector|Call Trace:|'
                 r'guest-init: cannot)')


def registry_formats():
    """The registry's own messages: the format strings of kernel/dyntext.c's
    pr_warn*() and pr_err() calls, so that a new warning is caught without
    a list to keep."""
    src = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), 'kernel', 'dyntext.c')
    with open(src) as f:
        text = f.read()
    fmts = re.findall(r'\bpr_(?:warn|err)\w*\(\s*"((?:[^"\\]|\\.)*)"', text)
    if not fmts:
        raise RuntimeError(src + ': no pr_warn()/pr_err() format found')
    return [f[:-2] if f.endswith('\\n') else f for f in fmts]


def _format_regex(fmt):
    """A printk format as a regular expression (%pS: the caller)."""
    out = ''
    for part in re.split(r'(%pS|%s|%u|%d|%ll[xud]|%l[xud]|%x)', fmt):
        if part == '%pS':
            out += r'(?P<caller>\S+(?: \[\w+\])?)'
        elif part == '%s':
            out += '.*'
        elif part.startswith('%'):
            out += r'[0-9a-fx]+'
        else:
            out += re.escape(part)
    return re.compile('dyntext: ' + out + '$')


REGISTRY = [_format_regex(f) for f in registry_formats()]

# A registry warning the rate limit held back: its caller is unknown, so
# it counts as one from an unexpected caller (none is held back in a run).
SUPPRESSED = re.compile(r'^dyntext_\w+: \d+ callbacks suppressed$')
# The callers that misuse the registry on purpose (see above).
EXPECTED_CALLERS = {
    'kunit': re.compile(r'^dyntext_test_\w+\+0x[0-9a-f]+/0x[0-9a-f]+$'),
    'misuse': re.compile(r'^\w+\+0x[0-9a-f]+/0x[0-9a-f]+ \[dyntext_misuse\]$'),
}


def expected_warnings(base_dir):
    """How many registry warnings each of them must print in one run:
    "warnings:KIND N" lines of BASE_DIR/expected-results."""
    want = {}
    try:
        with open(os.path.join(base_dir, 'expected-results')) as f:
            for line in f:
                w = line.split()
                if len(w) == 2 and w[0].startswith('warnings:'):
                    want[w[0][len('warnings:'):]] = int(w[1])
    except OSError:
        pass
    return want


def scan(text, allowed=None):
    """Lines of @text that a clean run does not print, in order, once each.

    @allowed(lines, i) may excuse a BAD line (the fault injection's
    allocation failure reports).  Returns (hits, expected): expected
    counts the registry warnings from the callers that misuse it on
    purpose, by kind (EXPECTED_CALLERS).
    """
    hits, expected = [], Counter()
    lines = [TS.sub('', l) for l in (text or '').splitlines()]
    for i, line in enumerate(lines):
        m = next((m for m in (r.search(line) for r in REGISTRY) if m), None)
        if m:
            caller = m.groupdict().get('caller') or ''
            kind = next((k for k, r in EXPECTED_CALLERS.items()
                         if r.match(caller)), None)
            if kind:
                expected[kind] += 1
                continue
        elif SUPPRESSED.match(line):
            pass
        elif not BAD.search(line) or (allowed and allowed(lines, i)):
            continue
        if line not in hits:
            hits.append(line)
    return hits, expected
