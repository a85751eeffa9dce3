#!/usr/bin/env python3
"""Fleet benchmark: one configuration in etcd, N nrfwd instances (docs/fleet.md).

1. Convergence: a document written to etcd (a 3-member cluster on loopback)
   until every instance applied it, for each fleet size (default 3 and 10).
   Time of the write: the wall clock just before the put; time of each
   instance's apply: its own log line "configuration revision R from etcd
   applied" (ms timestamps, after the publish). One change every 300 ms.
   Also the REST path: a PATCH on instance 1 until every instance applied
   it (write with compare-and-swap, then the watch).
2. The data path while the fleet is reconfigured: h2load at a fixed rate
   through instance 1 (every request forwarded to a peer), alternating
   phases without changes and with a change written to etcd every 100 ms;
   p50/p99 from h2load --log-file, medians over rounds (min..max).

Writes its section into docs/benchmarks.md between the fleet markers (with
--write). Not part of the test command. Usage:
  python3 bench/e2e/fleet_bench.py [--build-dir build] [--sizes 3,10]
      [--changes 30] [--rounds 3] [--seconds 8] [--rps 200] [--write]
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import nrfwd_harness as H  # noqa: E402
import etcd_cluster as E  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import write_section  # noqa: E402
from reconfig_bench import h2load_phase  # noqa: E402

UDM = "/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF"
FWD = "/nrf-configuration/v1/forwardingOptions"
APPLIED = re.compile(r"^(\S+) INFO cfgsrc: configuration revision (\d+) from etcd applied",
                     re.M)


def ts_of(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def applied_times(inst):
    """{revision: wall-clock time} from an instance's log."""
    return {int(m.group(2)): ts_of(m.group(1)) for m in APPLIED.finditer(inst.log())}


def stats(vals):
    v = sorted(vals)
    return {"median": statistics.median(v), "p90": v[min(len(v) - 1, int(len(v) * 0.9))],
            "max": v[-1], "n": len(v)}


class Fleet:
    def __init__(self, h, n):
        self.h = h
        self.cluster = E.EtcdCluster(h, members=3)
        self.cluster.start()
        self.key = "/nrfwd/bench-%d-%d/config" % (os.getpid(), n)
        local = h.start_stub("local", "stub-profiles-empty.json", extra=["--no-record"])
        e = h.start_stub("nrf-e", "stub-profiles-e.json", extra=["--no-record"])
        g = h.start_stub("nrf-g", "stub-profiles-e.json", extra=["--no-record"])
        peers = [H.peer("nrf-e.test", e.port, priority=1), H.peer("nrf-g.test", g.port, priority=2)]
        docs = [H.nrfwd_config("nrf-a.test", local=local.port, peers=peers) for _ in range(n)]
        self.shared = {k: v for k, v in docs[0].items() if k != "runtime"}
        E.put(self.cluster.url(0), self.key, json.dumps(self.shared))
        self.inst = [h.start_nrfwd({"runtime": d["runtime"]}, name="a%d" % (i + 1),
                                   management=True, log_level="info",
                                   extra=["--config-etcd", self.cluster.endpoints,
                                          "--config-key", self.key,
                                          "--instance-id", "a%d" % (i + 1)])
                     for i, d in enumerate(docs)]
        self.n_changes = 0

    def next_doc(self):
        self.n_changes += 1
        d = json.loads(json.dumps(self.shared))
        d["forwardingOptions"]["maxViaMembers"] = 16 + self.n_changes % 8
        return json.dumps(d)

    def converge_store(self, changes, gap):
        writes = []
        for k in range(changes):
            url = self.cluster.url(k % 3)
            t0 = time.time()
            rev = E.put(url, self.key, self.next_doc())
            writes.append((rev, t0))
            time.sleep(gap)
        time.sleep(1.0)
        return self._collect(writes)

    def converge_rest(self, changes, gap):
        writes = []
        for k in range(changes):
            body = {"maxViaMembers": 16 + (k % 2)}
            t0 = time.time()
            st, _, doc = H.api(self.inst[0], "PATCH", FWD, body)
            if st != 200:
                raise RuntimeError("PATCH: %d %s" % (st, doc))
            rev = E.get(self.cluster.url(0), self.key)[0][2]
            writes.append((rev, t0))
            time.sleep(gap)
        time.sleep(1.0)
        return self._collect(writes)

    def _collect(self, writes):
        per = [applied_times(i) for i in self.inst]
        out, missing = [], 0
        for rev, t0 in writes:
            ts = [p.get(rev) for p in per]
            if any(t is None for t in ts):
                missing += 1
                continue
            out.append(max(0.0, max(ts) - t0) * 1000.0)
        return out, missing


def changer(fleet, period, stop):
    nxt = time.monotonic()
    while not stop.is_set():
        try:
            E.put(fleet.cluster.url(fleet.n_changes % 3), fleet.key, fleet.next_doc())
        except OSError:
            pass
        nxt += period
        time.sleep(max(0.0, nxt - time.monotonic()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--sizes", default="3,10")
    ap.add_argument("--changes", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rps", type=int, default=200)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    H.parse_args(["x", "--build-dir", a.build_dir])
    sizes = [int(x) for x in a.sizes.split(",")]
    conv, lat = {}, None
    for n in sizes:
        h = H.Harness(prefix="nrfwd-fleetbench-")
        fleet = None
        try:
            fleet = Fleet(h, n)
            store, miss_s = fleet.converge_store(a.changes, 0.3)
            rest, miss_r = fleet.converge_rest(max(10, a.changes // 2), 0.3)
            conv[n] = (stats(store), miss_s, stats(rest), miss_r)
            print("n=%d store->all: %s missing=%d; REST->all: %s missing=%d"
                  % (n, conv[n][0], miss_s, conv[n][2], miss_r), file=sys.stderr)
            if n == sizes[0]:
                lat = {"without": [], "with": []}
                tmp = tempfile.mkdtemp(prefix="fleetbench-")
                for r in range(a.rounds):
                    order = ["without", "with"] if r % 2 == 0 else ["with", "without"]
                    for phase in order:
                        stop = threading.Event()
                        t = None
                        if phase == "with":
                            t = threading.Thread(target=changer, args=(fleet, 0.1, stop),
                                                 daemon=True)
                            t.start()
                        res = h2load_phase(fleet.inst[0].url(UDM), a.seconds, 2, 4, a.rps,
                                           os.path.join(tmp, "%s-%d.log" % (phase, r)))
                        stop.set()
                        if t is not None:
                            t.join(5)
                        lat[phase].append(res)
                        print("round %d %s: p50 %.2f p99 %.2f ms, %s ok, %s failed"
                              % (r, phase, res["p50"], res["p99"], res.get("succeeded"),
                                 res.get("failed")), file=sys.stderr)
        finally:
            h.cleanup()
            if fleet is not None:
                fleet.cluster.cleanup()
    text = render(a, conv, lat)
    print(text)
    if a.write:
        write_section(os.path.join(ROOT, "docs", "benchmarks.md"), "fleet", text)


def render(a, conv, lat):
    cpu = platform.processor() or platform.machine()
    lines = ["## Fleet: one configuration in etcd (bench/e2e/fleet_bench.py)", "",
             "Command: `python3 bench/e2e/fleet_bench.py --build-dir build --changes %d "
             "--rounds %d --seconds %d --rps %d --write` — %s, %s, %d cores, shared machine "
             "(load average %.0f at the end); etcd 3.4 (3 members on loopback), one worker "
             "per nrfwd." % (a.changes, a.rounds, a.seconds, a.rps,
                             datetime.date.today().isoformat(), cpu, os.cpu_count(),
                             os.getloadavg()[0]), "",
             "Convergence: write until every instance applied it (ms; its log line after the "
             "publish), one change every 300 ms:", "",
             "| instances | path | median | p90 | max | changes (not applied everywhere) |",
             "|---|---|---|---|---|---|"]
    for n, (s, ms, r, mr) in sorted(conv.items()):
        lines.append("| %d | etcd put | %.0f | %.0f | %.0f | %d (%d) |"
                     % (n, s["median"], s["p90"], s["max"], s["n"], ms))
        lines.append("| %d | REST PATCH on one instance (CAS + watch) | %.0f | %.0f | %.0f | "
                     "%d (%d) |" % (n, r["median"], r["p90"], r["max"], r["n"], mr))
    if lat:
        def med(phase, k):
            return statistics.median(x[k] for x in lat[phase])

        def rng(phase, k):
            v = [x[k] for x in lat[phase]]
            return "%.2f (%.2f..%.2f)" % (statistics.median(v), min(v), max(v))
        fails = {p: sum(x.get("failed", 0) + x.get("errored", 0) + x.get("timeout", 0)
                        for x in lat[p]) for p in lat}
        lines += ["", "Data path of instance 1 while the fleet (%d instances) is reconfigured: "
                  "h2load %d req/s for %d s per phase, every request forwarded to a peer, "
                  "%d rounds, phases alternating; median (min..max) over rounds:"
                  % (min(conv), a.rps, a.seconds, a.rounds), "",
                  "| changes | p50 ms | p99 ms | failed+errored+timeout |", "|---|---|---|---|",
                  "| none | %s | %s | %d |" % (rng("without", "p50"), rng("without", "p99"),
                                              fails["without"]),
                  "| one every 100 ms via etcd | %s | %s | %d |"
                  % (rng("with", "p50"), rng("with", "p99"), fails["with"]), "",
                  "- p99 with / without changes: **%.2f×**"
                  % (med("with", "p99") / max(1e-9, med("without", "p99")))]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
