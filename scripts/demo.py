#!/usr/bin/env python3
"""Demo of the seed's four figures with nrfwd-ctl (check + explain).

For each figure: the NRF that receives the request, the Via it carries, what
the seed says must happen, and what nrfwd's decision engine answers. Exit
status 1 when any scenario does not give the expected result.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
A = "nrf-a.seg1.example.com:18080"
E = "nrf-e.seg2.example.com:18081"

SCENARIOS = [
    # (figure, mode, config of the receiving NRF, via lines, expected verdict, expected detail)
    ("I-1 loop detection", "forwarding", "conf/demo/forwarding/nrf-a.json",
     [f"2.0 {A}", f"2.0 {E}"], "loop-detected", "508 LOOP_DETECTED"),
    ("I-2 loop detection", "growth", "conf/demo/growth/nrf-a.json",
     [f"2.0 {A}, 2.0 {E}"], "loop-detected", "508 LOOP_DETECTED"),
    ("I-3 loop prevention", "forwarding", "conf/demo/forwarding/nrf-e.json",
     [f"2.0 {A}"], "forward", "skip nrf-a (via-host)"),
    ("I-4 loop prevention", "growth", "conf/demo/growth/nrf-e.json",
     [f"2.0 {A}"], "forward", "skip nrf-a (via-host)"),
]


def ctl(build, *args):
    exe = os.path.join(build, "app", "nrfwd-ctl", "nrfwd-ctl")
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True)


def got_of(decision):
    v = decision["verdict"]
    if v in ("loop-detected", "hop-limit", "malformed"):
        e = decision["error"]
        return v, f"{e['status']} {e['problemDetails'].get('cause', '')}"
    skips = ", ".join(f"{s['peer'].split('.')[0]} ({s['reason']})" for s in decision.get("skipped", []))
    cands = ", ".join(c["peer"].split(".")[0] for c in decision.get("candidates", []))
    detail = []
    if skips:
        detail.append(f"skip {skips}")
    detail.append(f"then {cands or 'none'}")
    return v, "; ".join(detail)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    args = ap.parse_args()
    build = os.path.abspath(args.build_dir)

    print("== nrfwd-ctl check: the demo configurations (seed topology) ==")
    ok = True
    for f in ["conf/example.json", "conf/demo/forwarding/nrf-a.json", "conf/demo/forwarding/nrf-e.json",
              "conf/demo/growth/nrf-a.json", "conf/demo/growth/nrf-e.json", "conf/demo/growth/nrf-g.json"]:
        r = ctl(build, "check", f)
        sys.stdout.write(r.stdout or r.stderr)
        ok &= r.returncode == 0

    print("\n== the seed's four figures: nrfwd-ctl explain ==")
    rows = [("figure", "mode", "at", "Via", "expected", "got", "")]
    for fig, mode, conf, via, want_v, want_d in SCENARIOS:
        cmd = ["explain", conf]
        for v in via:
            cmd += ["--via", v]
        r = ctl(build, *cmd)
        if r.returncode != 0:
            rows.append((fig, mode, conf, " | ".join(via), want_v, "error: " + r.stderr.strip(), "FAIL"))
            ok = False
            continue
        out = json.loads(r.stdout)
        v, d = got_of(out["decision"])
        good = v == want_v and want_d in d
        ok &= good
        at = out["self"].split(".")[0]
        rows.append((fig, mode, at, " | ".join(via), f"{want_v}: {want_d}", f"{v}: {d}",
                     "ok" if good else "FAIL"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("\nFull reasoning for one request: build/app/nrfwd-ctl/nrfwd-ctl explain "
          f"conf/demo/forwarding/nrf-a.json --via '2.0 {A}'")
    print("demo: " + ("all scenarios as expected" if ok else "SOME SCENARIOS FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
