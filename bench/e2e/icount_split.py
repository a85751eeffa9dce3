#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Split a callgrind dump's instructions (self cost, Ir) by object and by
function, per request.

    icount_split.py CALLGRIND_OUT REQUESTS [TOP]

Prints one line per object class (nghttp2, nrfwd, libc, Hyperscan, vdso,
kernel-entry, other) and the TOP (default 25) functions by self cost, all
in instructions per request. Self cost is what callgrind_annotate
--inclusive=no shows: the cost lines of a function, without the inclusive
cost lines that follow a "calls=" line.

Under valgrind there is no vDSO: clock_gettime() runs glibc's fallback, a
real system call. Its user-space part is counted as libc's
clock_gettime/__clock_gettime; it is reported as "vdso" here so that the
row matches the perf profile of the issue.
"""
import collections
import re
import sys

CLASSES = [
    ("nghttp2", re.compile(r"libnghttp2")),
    ("Hyperscan", re.compile(r"libhs")),
    ("libc", re.compile(r"/libc\.so|/libc-")),
    ("ld.so", re.compile(r"/ld-linux")),
]
VDSO_FNS = ("clock_gettime", "__clock_gettime", "__clock_gettime64")


def classify(obj, exe):
    if obj == exe or obj.endswith("/nrfwd"):
        return "nrfwd"
    for name, rx in CLASSES:
        if rx.search(obj):
            return name
    if "vdso" in obj:
        return "vdso"
    return "other"


def parse(path):
    names = {"ob": {}, "fn": {}, "fl": {}}
    exe = ""
    ob = ""
    fn = ""
    after_calls = False
    self_cost = collections.Counter()  # (ob, fn) -> Ir
    total = 0
    comp = re.compile(r"^\((\d+)\)(?: (.*))?$")

    def name(kind, v):
        m = comp.match(v)
        if not m:
            return v
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
            return m.group(2)
        return names[kind].get(m.group(1), v)

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                if after_calls:
                    after_calls = False
                    continue
                parts = line.split()
                if len(parts) >= 2:
                    self_cost[(ob, fn)] += int(parts[1])
                continue
            if line.startswith("cmd:"):
                exe = line.split()[1] if len(line.split()) > 1 else ""
            elif line.startswith("summary:"):
                total = int(line.split()[1])
            elif line.startswith("ob="):
                ob = name("ob", line[3:])
            elif line.startswith("fn="):
                fn = name("fn", line[3:])
            elif line.startswith("cob="):
                name("ob", line[4:])
            elif line.startswith("cfn="):
                name("fn", line[4:])
            elif line.startswith(("fl=", "fi=", "fe=")):
                name("fl", line[3:])
            elif line.startswith("cfl=") or line.startswith("cfi="):
                name("fl", line[4:])
            elif line.startswith("calls="):
                after_calls = True
    return exe, total, self_cost


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    exe, total, cost = parse(path)
    by_class = collections.Counter()
    for (ob, fn), ir in cost.items():
        k = classify(ob, exe)
        if k == "libc" and fn in VDSO_FNS:
            k = "vdso"
        by_class[k] += ir
    s = sum(by_class.values())
    print(f"  total {total / n:.0f} per request (self costs add up to {s / n:.0f})")
    for k in ("nghttp2", "nrfwd", "libc", "Hyperscan", "vdso", "ld.so", "other"):
        if by_class[k]:
            print(f"  object {k:10s} {by_class[k] / n:8.0f}  {100.0 * by_class[k] / s:5.1f} %")
    print(f"  top {top} functions by self cost (instructions per request):")
    for (ob, fn), ir in cost.most_common(top):
        k = classify(ob, exe)
        print(f"    {ir / n:7.0f}  {k:9s} {fn}")


if __name__ == "__main__":
    main()
