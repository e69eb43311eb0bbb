# SPDX-License-Identifier: GPL-2.0
"""Compare two /proc/kallsyms dumps (tools/testing/selftests/dyntext/
kallsyms_dump: "<addr> TYPE NAME[\\t[MOD]]" per line, in file order) of
the patched kernel and stock 6.1 after the same workload.

Names the compiler or the build numbers are normalised (the numbers move
whenever a file changes): GCC's local statics ("_rs.12" -> "_rs.N"),
initcall names (__initcall__kmod_FILE__N_LINE_FN -> __initcall__kmod_FILE__FN),
resolve_btfids' __BTF_ID__*__N and __UNIQUE_ID_*N.  Then the lines that
patches/$BASE/kallsyms-vs-stock lists are taken out: "added NAME [COUNT]" (the
patched kernel has exactly COUNT more lines named NAME than stock, 1 if
not given), "removed NAME [COUNT]" (stock has COUNT more) and "moved NAME"
(the same lines, type and module tag included, on both, at another place:
a symbol at the same address as one the series adds or removes, where the
order of aliases is not defined).
What is left must be equal, line for line, in order.
"""
import collections
import difflib
import re


def normalise(line):
    addr, typ, rest = line.split(' ', 2)
    name, tab, mod = rest.partition('\t')
    name = re.sub(r'^(__initcall__kmod_.+?__)\d+_\d+_', r'\1', name)
    if name.startswith('__BTF_ID__'):
        name = re.sub(r'__\d+$', '__N', name)
    name = re.sub(r'^(__UNIQUE_ID_\D+)\d+$', r'\1N', name)
    name = re.sub(r'\.\d+$', '.N', name)
    return f'{addr} {typ} {name}{tab}{mod}'


def name_of(line):
    return line.split(' ', 2)[2].partition('\t')[0]


def read_list(text):
    """{kind: {name: count}} from patches/$BASE/kallsyms-vs-stock."""
    lists = {'added': {}, 'removed': {}, 'moved': {}}
    for raw in text.splitlines():
        w = raw.split()
        if not w or w[0].startswith('#'):
            continue
        if w[0] not in lists or len(w) not in (2, 3):
            raise ValueError(f'bad line in kallsyms-vs-stock: {raw}')
        lists[w[0]][w[1]] = int(w[2]) if len(w) == 3 else 1
    return lists


def compare(patched, stock, list_text):
    """Returns a list of differences (empty: equal)."""
    lists = read_list(list_text)
    p = [normalise(l) for l in patched.splitlines() if l.strip()]
    s = [normalise(l) for l in stock.splitlines() if l.strip()]
    pn = collections.Counter(name_of(l) for l in p)
    sn = collections.Counter(name_of(l) for l in s)
    notes = []
    for name, n in lists['added'].items():
        if pn[name] - sn[name] != n:
            notes.append(f'added {name}: {n} more lines expected, patched '
                         f'has {pn[name]}, stock {sn[name]}')
    for name, n in lists['removed'].items():
        if sn[name] - pn[name] != n:
            notes.append(f'removed {name}: {n} fewer lines expected, '
                         f'patched has {pn[name]}, stock {sn[name]}')
    for name in lists['moved']:
        # The same lines (type and module tag too), only elsewhere.
        pm = collections.Counter(l for l in p if name_of(l) == name)
        sm = collections.Counter(l for l in s if name_of(l) == name)
        if not pm or pm != sm:
            notes.append(f'moved {name}: patched has {sorted(pm.elements())}, '
                         f'stock {sorted(sm.elements())}')
    skip = set(lists['added']) | set(lists['removed']) | set(lists['moved'])
    p = [l for l in p if name_of(l) not in skip]
    s = [l for l in s if name_of(l) not in skip]
    diff = [d for d in difflib.unified_diff(s, p, 'stock', 'patched',
                                            n=0, lineterm='')
            if d[:1] in '+-' and d[:3] not in ('---', '+++')]
    notes += diff
    return notes, len(p)
