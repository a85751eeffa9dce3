#!/usr/bin/env python3
"""Print 'N passed, N failed' from meson's test log (JSON lines).

Skipped tests are listed but counted neither way; expected failures count as
passed, unexpected passes as failed, timeouts and errors as failed.
"""
import json
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "build/meson-logs/testlog.json"
passed = failed = skipped = 0
try:
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            t = json.loads(line)
            r = t.get("result")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
                print(f"skipped: {t.get('name')}")
            else:
                failed += 1
                print(f"failed: {t.get('name')} ({r})")
except FileNotFoundError:
    print(f"no test log at {path}")
    failed = 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
