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


# --------------------------------------------------------------------------
# The running topology: nrfwd instances with nrfstub local NRFs on loopback.

LIVE = [
    # (figure, mode, E's config, NF type asked at A, expected status, expected check)
    ("normal forwarding", "forwarding", "nrf-e.json", "UDM", 200, "UDM profile from nrf-e"),
    ("I-1 loop detection", "forwarding", "nrf-e-misrouted.json", "NEF", 508, "508 LOOP_DETECTED by nrf-a"),
    ("I-3 loop prevention", "forwarding", "nrf-e.json", "NEF", 200, "E skips A: A's NRF asked once"),
    ("normal growth", "growth", "nrf-e.json", "AUSF", 200, "AUSF profile from nrf-e"),
    ("I-2 loop detection", "growth", "nrf-e-misrouted.json", "NEF", 508, "508 LOOP_DETECTED by nrf-a"),
    ("I-4 loop prevention", "growth", "nrf-e.json", "NEF", 200, "E skips A: A's NRF asked once"),
    ("growth failover", "growth", None, "PCF", 200, "E down: A forwards to G"),
]


def live(build):
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    import nrfwd_harness as H  # noqa: E402 - the integration tests' helpers
    H.BUILD_DIR = build

    def load(path):
        with open(os.path.join(ROOT, path)) as f:
            return json.load(f)

    print("\n== the seed's topology running on loopback: nrfwd + nrfstub, requests with curl ==")
    rows = [("scenario", "mode", "request at NRF-A", "Via path (as recorded upstream)", "expected", "got", "")]
    ok = True
    for fig, mode, e_conf, nftype, want_status, want in LIVE:
        h = H.Harness(prefix="nrfwd-demo-")
        try:
            stubs = {"a": h.start_stub("nrf-a", "stub-profiles-a.json", port=18180)}
            a_cfg = load(f"conf/demo/{mode}/nrf-a.json")
            if e_conf:
                stubs["e"] = h.start_stub("nrf-e", "stub-profiles-e.json", port=18181)
            if mode == "growth":
                stubs["g"] = h.start_stub("nrf-g", "stub-profiles-g.json", port=18182)
                h.start_nrfwd(load("conf/demo/growth/nrf-g.json"), name="nrfwd-g")
            if e_conf:
                h.start_nrfwd(load(f"conf/demo/{mode}/{e_conf}"), name="nrfwd-e")
            h.start_nrfwd(a_cfg, name="nrfwd-a")
            path = f"/nnrf-disc/v1/nf-instances?target-nf-type={nftype}&requester-nf-type=AMF"
            status, hdrs, body = H.curl(f"http://127.0.0.1:18080{path}")
            try:
                doc = json.loads(body or b"{}")
            except ValueError:
                doc = {}
            recs = {k: H.stub_requests(s.port) for k, s in stubs.items()}
            hops = []
            for k in ("a", "e", "g"):
                for r in recs.get(k, []):
                    hops.append(f"{k.upper()}:[{' | '.join(r.get('via', [])) or '-'}]")
            answered = hdrs.get("x-nrfstub", ["-"])[0]
            if status == 508:
                got = f"{status} {doc.get('cause', '')} ({doc.get('detail', '')})"
                good = status == want_status and doc.get("cause") == "LOOP_DETECTED" and \
                    "nrf-a.seg1.example.com:18080" in doc.get("detail", "")
            else:
                n = len(doc.get("nfInstances", []))
                types = ",".join(sorted({p.get("nfType", "?") for p in doc.get("nfInstances", [])}))
                got = f"{status}, {n} instance(s) {types} from {answered}; A's NRF asked {len(recs['a'])}x"
                good = status == want_status
                if want.startswith(nftype):
                    good &= n > 0 and types == nftype
                if "asked once" in want:
                    good &= len(recs["a"]) == 1 and n == 0
                if "forwards to G" in want:
                    good &= answered == "nrf-g"
            ok &= good
            rows.append((fig, mode, f"GET disc {nftype}", " ".join(hops), f"{want_status} {want}", got,
                         "ok" if good else "FAIL"))
        except Exception as e:  # noqa: BLE001 - report the scenario as failed, go on
            ok = False
            rows.append((fig, mode, nftype, "-", str(want_status), f"error: {e}".splitlines()[0], "FAIL"))
        finally:
            h.cleanup()
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--static", action="store_true", help="only nrfwd-ctl, no running topology")
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
    if not args.static:
        ok &= live(build)
    print("\ndemo: " + ("all scenarios as expected" if ok else "SOME SCENARIOS FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
