#!/usr/bin/env python3
"""bench-callgrind: instructions and allocator calls per request from callgrind dumps.

usage: bench-callgrind.py N FILE...   prints "INSTRUCTIONS_PER_REQ ALLOCATOR_CALLS_PER_REQ"

Instructions are the dumps' `totals:` (or `summary:`) lines added up. Allocator calls are the
`calls=` counts whose callee is an allocation entry point: glibc's malloc family, mimalloc's and
jemalloc's spellings of them. Callgrind compresses names: `cfn=(7) malloc` names id 7 once, later
lines say `cfn=(7)`; `fn=` and `cfn=` share the table.
"""

import re
import sys

ENTRY = {
    "malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign",
    "mi_malloc", "mi_zalloc", "mi_calloc", "mi_realloc", "mi_malloc_aligned", "mi_zalloc_aligned",
    "mi_realloc_aligned", "_rjem_malloc", "_rjem_calloc", "_rjem_realloc", "_rjem_mallocx",
    "_rjem_rallocx", "_rjem_posix_memalign", "_rjem_aligned_alloc",
}
NAME = re.compile(r"^c?fn=\((\d+)\)(?: (.*))?$")


def main():
    n = int(sys.argv[1])
    total = 0
    allocs = 0
    for path in sys.argv[2:]:
        names = {}
        callee = None
        totals = summary = 0
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("totals:"):
                    totals = int(line.split()[1])
                    continue
                if line.startswith("summary:"):
                    summary = int(line.split()[1])
                    continue
                m = NAME.match(line.rstrip("\n"))
                if m:
                    ident, name = m.group(1), m.group(2)
                    if name is not None:
                        names[ident] = name
                    if line.startswith("cfn="):
                        callee = names.get(ident, "")
                    continue
                if line.startswith("calls=") and callee is not None:
                    if callee.split("'")[0] in ENTRY:
                        allocs += int(line[6:].split()[0])
                    callee = None
        total += totals or summary
    print(f"{total / n:.0f} {allocs / n:.1f}")


if __name__ == "__main__":
    main()
