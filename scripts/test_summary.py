#!/usr/bin/env python3
"""Print 'N passed, N failed' from meson's test logs (JSON lines).

Usage: test_summary.py [LOG ...] [--reports DIR ...]

Several logs (the normal build and the sanitizer build, scripts/test.sh)
add up to one summary; a failed test is named with its log's build
directory when there is more than one log. Skipped tests are listed but
counted neither way; expected failures count as passed, unexpected passes
as failed, timeouts and errors as failed.

--reports DIR: a folder of sanitizer reports written by processes that
tests start (ASAN_OPTIONS/UBSAN_OPTIONS log_path=DIR/san, log_exe_name=1):
each report is one more failure, named by its program and its SUMMARY line.
"""
import json
import os
import sys


def build_of(path):
    """'build-asan' for build-asan/meson-logs/testlog.json."""
    d = os.path.dirname(os.path.abspath(path))
    if os.path.basename(d) == 'meson-logs':
        d = os.path.dirname(d)
    return os.path.basename(d)


def read_log(path, label, counts):
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                t = json.loads(line)
                r = t.get("result")
                name = t.get("name")
                if label:
                    name = "%s: %s" % (label, name)
                if r in ("OK", "EXPECTEDFAIL"):
                    counts["passed"] += 1
                elif r == "SKIP":
                    counts["skipped"] += 1
                    print(f"skipped: {name}")
                else:
                    counts["failed"] += 1
                    print(f"failed: {name} ({r})")
    except FileNotFoundError:
        print(f"no test log at {path}")
        counts["failed"] += 1


def read_reports(folder, counts):
    """One failure per sanitizer report file (san.<program>.<pid>)."""
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return
    for n in names:
        path = os.path.join(folder, n)
        with open(path, errors="replace") as f:
            text = f.read()
        if not text.strip():
            continue
        summary = [ln for ln in text.splitlines() if ln.startswith("SUMMARY:")]
        what = summary[0] if summary else text.strip().splitlines()[0]
        counts["failed"] += 1
        print(f"failed: sanitizer report {n}: {what}")


def main(argv):
    logs, reports = [], []
    i = 1
    while i < len(argv):
        if argv[i] == "--reports" and i + 1 < len(argv):
            reports.append(argv[i + 1])
            i += 2
            continue
        logs.append(argv[i])
        i += 1
    if not logs:
        logs = ["build/meson-logs/testlog.json"]
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    builds = {build_of(p) for p in logs}
    for p in logs:
        read_log(p, build_of(p) if len(builds) > 1 else "", counts)
    for d in reports:
        read_reports(d, counts)
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
