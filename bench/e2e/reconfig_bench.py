#!/usr/bin/env python3
"""Live reconfiguration benchmark: what a configuration change costs.

1. Apply latency: a PATCH of forwardingOptions (swap the priorities of two
   peers) over the REST API, idle and under load. Reported: the client's
   round trip (the answer comes once every worker uses the change), and the
   phases nrfwd reports in nrfwd_config_last_apply_seconds: validate (load +
   Via database + forwarding table + addresses), persist (temp file, fsync,
   rename, fsync dir) and publish (pointer swap until every worker has
   picked the new snapshot up: "effective on all workers").
2. Latency of forwarded requests with and without reconfiguration, same run:
   h2load at a fixed rate through nrfwd (local NRF answers an empty
   discovery, so every request is forwarded to a peer); in each round one
   phase without changes and one with a change every 100 ms, in alternating
   order. p50/p99/p99.9 from h2load --log-file, medians over rounds with
   (min..max), nrfwd CPU per request, failures.

Writes its section into docs/benchmarks.md between the reconfig markers.
Not part of the test command. Usage:
  python3 bench/e2e/reconfig_bench.py [--build-dir build] [--rounds 5]
      [--seconds 10] [--changes 200] [--workers 2] [--clients 4] [--streams 4]
      [--rps 500] [--no-write]
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import nrfwd_harness as H  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import cpu_model, cpu_seconds, mmm, publish  # noqa: E402

UDM = "/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF"
FWD = "/nrf-configuration/v1/forwardingOptions"


def pct(sorted_vals, q):
    if not sorted_vals:
        return float("nan")
    return sorted_vals[min(len(sorted_vals) - 1, int(len(sorted_vals) * q))]


def h2load_phase(url, seconds, clients, streams, rps, logfile):
    cmd = ["h2load", "-D", str(seconds), "-c", str(clients), "-m", str(streams), "-t", "1",
           "--rps", str(rps), "--log-file", logfile, url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
    res = H._h2load_parse(r.stdout, r.returncode)
    lat = []
    with open(logfile) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3:
                lat.append(int(parts[2]) / 1000.0)  # ms
    lat.sort()
    res["p50"], res["p99"], res["p999"] = pct(lat, 0.5), pct(lat, 0.99), pct(lat, 0.999)
    res["n_lat"] = len(lat)
    return res


class Changer(threading.Thread):
    """PATCH forwardingOptions every @period seconds until stopped."""

    def __init__(self, fwd, peers_a, peers_b, period):
        super().__init__(daemon=True)
        self.fwd, self.docs, self.period = fwd, (peers_a, peers_b), period
        self.stop_ev = threading.Event()
        self.rtts, self.errors = [], 0

    def run(self):
        i = 0
        nxt = time.monotonic()
        while not self.stop_ev.is_set():
            t0 = time.monotonic()
            st, _, _ = H.api(self.fwd, "PATCH", FWD, {"nrfHostConfig": self.docs[i % 2]})
            self.rtts.append(time.monotonic() - t0)
            if st != 200:
                self.errors += 1
            i += 1
            nxt += self.period
            self.stop_ev.wait(max(0.0, nxt - time.monotonic()))


def apply_latency(fwd, peers_a, peers_b, n):
    """Client round trip and the phases nrfwd reports, per change (ms)."""
    rtt, ph = [], {"validate": [], "persist": [], "publish": []}
    for i in range(n):
        t0 = time.monotonic()
        st, _, body = H.api(fwd, "PATCH", FWD,
                            {"nrfHostConfig": peers_a if i % 2 == 0 else peers_b})
        rtt.append((time.monotonic() - t0) * 1e3)
        if st != 200:
            raise RuntimeError("PATCH refused: %s" % body)
        m = H.metrics(fwd)
        for k in ph:
            ph[k].append(H.metric_value(m, "nrfwd_config_last_apply_seconds", phase=k) * 1e3)
        gen = H.metric_value(m, "nrfwd_config_generation")
        for (name, labels), v in m.items():
            if name == "nrfwd_worker_config_generation" and v != gen:
                raise RuntimeError("worker %s on generation %s after the answer, not %s"
                                   % (labels, v, gen))
    return rtt, ph


def fmt(vals):
    s = sorted(vals)
    return "%.2f | %.2f | %.2f" % (statistics.median(s), pct(s, 0.99), s[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--changes", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--rps", type=int, default=500, help="per client")
    ap.add_argument("--period-ms", type=int, default=100)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    H.parse_args(["x", "--build-dir", args.build_dir])
    h = H.Harness(prefix="nrfwd-rbench-")
    tmp = tempfile.mkdtemp(prefix="nrfwd-rbench-lat-")
    try:
        loc = h.start_stub("local", "stub-profiles-empty.json", extra=["--no-record",
                                                                      "--log-level", "error"])
        e1 = h.start_stub("nrf-e1", "stub-profiles-e.json", extra=["--no-record",
                                                                   "--log-level", "error"])
        e2 = h.start_stub("nrf-e2", "stub-profiles-e.json", extra=["--no-record",
                                                                   "--log-level", "error"])
        peers_a = [H.peer("nrf-e1.test", e1.port, priority=1),
                   H.peer("nrf-e2.test", e2.port, priority=2)]
        peers_b = [H.peer("nrf-e1.test", e1.port, priority=2),
                   H.peer("nrf-e2.test", e2.port, priority=1)]
        cfg = H.nrfwd_config("nrf-bench.test", local=loc.port, peers=peers_a,
                             limits={"maxConcurrentStreams": 256})
        fwd = h.start_nrfwd(cfg, workers=args.workers, management=True)
        url = fwd.url(UDM)

        # 1. Apply latency, idle and under load.
        H.h2load(url, n=2000, c=args.clients, m=args.streams)  # warm-up
        idle_rtt, idle_ph = apply_latency(fwd, peers_a, peers_b, args.changes)
        load = H.h2load_start(url, seconds=max(5, args.changes // 20 + 5), c=args.clients,
                              m=args.streams, rps=args.rps)
        time.sleep(0.5)
        load_rtt, load_ph = apply_latency(fwd, peers_a, peers_b, args.changes)
        lres = load.wait()
        print("apply latency: idle median %.2f ms, under load median %.2f ms (load: %s done, "
              "%s failed)" % (statistics.median(idle_rtt), statistics.median(load_rtt),
                              lres.get("done"), lres.get("failed")), flush=True)

        # 2. Forwarded latency with and without reconfiguration, interleaved.
        res = {"without": [], "with": []}
        for r in range(args.rounds):
            order = ("without", "with") if r % 2 == 0 else ("with", "without")
            for phase in order:
                ch = None
                if phase == "with":
                    ch = Changer(fwd, peers_a, peers_b, args.period_ms / 1000.0)
                    ch.start()
                c0 = cpu_seconds(fwd.pid)
                x = h2load_phase(url, args.seconds, args.clients, args.streams, args.rps,
                                 os.path.join(tmp, "lat.log"))
                x["cpu"] = cpu_seconds(fwd.pid) - c0
                if ch is not None:
                    ch.stop_ev.set()
                    ch.join()
                    x["changes"], x["change_errors"] = len(ch.rtts), ch.errors
                res[phase].append(x)
                print("round %d/%d %s reconfiguration: %s done, %s failed, %s errored, "
                      "p50 %.2f p99 %.2f p99.9 %.2f ms, cpu %.2f s%s" % (
                          r + 1, args.rounds, phase, x.get("done"), x.get("failed"),
                          x.get("errored"), x["p50"], x["p99"], x["p999"], x["cpu"],
                          ", %d changes" % x["changes"] if ch else ""), flush=True)
    finally:
        h.cleanup()

    def med(phase, key):
        return "%.2f (%.2f..%.2f)" % mmm([x[key] for x in res[phase]])

    def cpu_per_req(phase):
        return "%.1f (%.1f..%.1f)" % mmm([x["cpu"] / x["done"] * 1e6 for x in res[phase]
                                          if x.get("done")])

    rows = []
    for phase in ("without", "with"):
        bad = sum(x.get("failed", 0) + x.get("errored", 0) + x.get("timeout", 0)
                  for x in res[phase])
        done = sum(x.get("done", 0) for x in res[phase])
        rows.append("| %s | %s | %s | %s | %s | %s | %d / %d |" % (
            phase, med(phase, "p50"), med(phase, "p99"), med(phase, "p999"),
            cpu_per_req(phase), med(phase, "rps"), bad, done))
    n_changes = sum(x.get("changes", 0) for x in res["with"])
    n_change_err = sum(x.get("change_errors", 0) for x in res["with"])
    p99_ratio = statistics.median([w["p99"] / o["p99"] for w, o in zip(res["with"],
                                                                         res["without"])])
    cmd = "python3 bench/e2e/reconfig_bench.py " + " ".join(sys.argv[1:])
    text = "\n".join([
        "## Live reconfiguration (bench/e2e/reconfig_bench.py)",
        "",
        "Command: `%s` — %s, %s, %d cores, Linux %s, shared machine." % (
            cmd.strip(), time.strftime("%Y-%m-%d"), cpu_model(), os.cpu_count(),
            platform.release()),
        "",
        "nrfwd with %d workers in front of nrfstub upstreams on loopback (no pinning); the local "
        "NRF answers an empty discovery, so every request is forwarded to the preferred of two "
        "peers. A change is a PATCH of forwardingOptions swapping the two peers' priorities: it "
        "is validated (whole document, Via database, forwarding table), persisted (fsync), "
        "published, and answered once every worker uses it." % args.workers,
        "",
        "### Time from PATCH to effective on all workers (%d changes each, ms)" % args.changes,
        "",
        "| | median | p99 | max |",
        "|---|---|---|---|",
        "| client round trip, idle | %s |" % fmt(idle_rtt),
        "| — validate + compile | %s |" % fmt(idle_ph["validate"]),
        "| — persist (write, fsync, rename, fsync dir) | %s |" % fmt(idle_ph["persist"]),
        "| — publish until every worker switched | %s |" % fmt(idle_ph["publish"]),
        "| client round trip, under load | %s |" % fmt(load_rtt),
        "| — publish until every worker switched, under load | %s |" % fmt(load_ph["publish"]),
        "",
        "### Forwarded requests with and without a change every %d ms (same run)" %
        args.period_ms,
        "",
        "h2load `-D %d -c %d -m %d --rps %d` per phase (%d req/s offered), %d rounds, phases "
        "alternating in order; medians over rounds with (min..max)." % (
            args.seconds, args.clients, args.streams, args.rps, args.clients * args.rps,
            args.rounds),
        "",
        "| reconfiguration | p50 ms | p99 ms | p99.9 ms | nrfwd CPU µs / req | req/s | "
        "failed+errored+timeout / done |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "- p99 with / without reconfiguration (median of per-round ratios): **%.2f×**" %
        p99_ratio,
        "- %d changes applied during the measured phases, %d refused; no request failed "
        "because of a change when the last column is 0." % (n_changes, n_change_err),
        "- nrfwd CPU per request includes handling the changes themselves on the API thread "
        "(validation, Hyperscan compile, fsync): with / without = %.2f×." % statistics.median(
            [(w["cpu"] / w["done"]) / (o["cpu"] / o["done"])
             for w, o in zip(res["with"], res["without"]) if w.get("done") and o.get("done")]),
        "",
    ])
    publish(text, "reconfig", args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
