#!/usr/bin/env python3
"""End-to-end proxy benchmark: nrfwd vs HAProxy 2.6 vs nghttpx, one run.

h2load (pinned to core 0) -> proxy (pinned to core 1, one worker/thread)
-> nrfstub upstream (core 0, recording off). Request: GET NFDiscover with a
3-member Via. Systems are interleaved inside each round; each figure is the
median over the rounds, with min..max. Reported per system: requests/s,
proxy CPU seconds per 100 000 requests (on-CPU time from the threads' schedstat),
requests per proxy-CPU-second, p50/p99 latency (h2load --log-file).
A fourth row sends the same request through a second nrfwd (same build and
options, also on core 1, idle while the others run) configured as the main
deployment: a local NRF (an nrfstub on core 0 answering every request 404,
`--fault status:404`) is tried first, its 404 is the forwarding trigger, then
the request goes to the same upstream. A fifth row sends requests that nrfwd
answers 508 by loop detection (on the pure forwarder: loop detection comes
before the local NRF, so the 508 path is the same in both configurations).
With --pairs N, N short pairs (forwarded, then 508) follow on the same
nrfwd (and on the baseline): the 508 ratio as the median of pair ratios,
robust against a shared machine whose speed changes by 2x within minutes.

Writes the table into docs/benchmarks.md between markers, with the command.
Not part of the test command. Usage:
  python3 bench/e2e/proxy_bench.py [--build-dir build] [--requests 100000]
      [--rounds 5] [--clients 8] [--streams 32] [--no-write]
      [--baseline-build DIR [--baseline-label TEXT]] [--pairs N [--pair-requests K]]
      [--access-log]

--access-log: the access log's cost instead (docs/access-log.md): a second
nrfwd, the same configuration plus runtime.accessLog (JSON, every request,
to a file), is measured back to back with the first in every round,
forwarded and 508; only these four rows run and only the "e2e-access-log"
section of docs/benchmarks.md is written.
"""
import argparse
import json
import shlex
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import cpu_seconds_ns, free_port, parse_h2load, wait_port, write_section  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VIA = "2.0 nrf-x.seg9.example.com:8080, 2.0 nrf-y.seg8.example.com:8080, 2.0 nrf-z.seg7.example.com:8080"
SELF = "nrf-bench.seg1.example.com:18500"
PATH = "/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF"


# Where the time goes (from bench/e2e/profile_nrfwd.sh and callgrind; see
# docs/benchmarks.md). Kept here so a re-run writes the same reading.
READING = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "proxy_bench_reading.md")).read().strip()


def h2load(port, n, clients, streams, via, logfile):
    cmd = ["taskset", "-c", "0", "h2load", "-n", str(n), "-c", str(clients), "-m", str(streams),
           "-t", "1", "-H", f"via: {via}", "--log-file", logfile, f"http://127.0.0.1:{port}{PATH}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    res = parse_h2load(out)
    lat = []
    with open(logfile) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3:
                lat.append(int(parts[2]))
    lat.sort()
    if lat:
        res["p50"] = lat[len(lat) // 2] / 1000.0
        res["p99"] = lat[min(len(lat) - 1, int(len(lat) * 0.99))] / 1000.0
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--streams", type=int, default=32)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--baseline-build", default=None,
                    help="another build dir: its nrfwd (pure forwarder) adds a forwarded and a "
                         "508 row, measured in the same rounds (before/after comparisons)")
    ap.add_argument("--baseline-label", default=None, help="what the baseline build is (for the text)")
    ap.add_argument("--pairs", type=int, default=0,
                    help="after the rounds: this many short pairs (forwarded, then 508) on each nrfwd, "
                         "back to back; the 508 ratio as the median of the pairs' ratios")
    ap.add_argument("--pair-requests", type=int, default=30000, help="requests per run of a pair")
    ap.add_argument("--access-log", action="store_true",
                    help="measure the access log (JSON, every request) on vs off, nothing else")
    args = ap.parse_args()
    if args.access_log:
        return access_log_main(args)
    build = os.path.abspath(args.build_dir)
    tmp = tempfile.mkdtemp(prefix="nrfwd-bench-")
    procs = []

    def start(cmd, core, port, **kw):
        p = subprocess.Popen(["taskset", "-c", str(core), *cmd], stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(tmp, f"{os.path.basename(cmd[0])}-{port}.log"), "w"),
                             **kw)
        procs.append(p)
        wait_port(port, p)
        return p

    try:
        up = free_port()
        start([f"{build}/app/nrfstub/nrfstub", "--listen", f"127.0.0.1:{up}", "--profiles",
               f"{ROOT}/conf/stub-profiles-a.json", "--name", "upstream", "--no-record",
               "--log-level", "error"], 0, up)

        p_local = free_port()
        start([f"{build}/app/nrfstub/nrfstub", "--listen", f"127.0.0.1:{p_local}", "--profiles",
               f"{ROOT}/conf/stub-profiles-empty.json", "--name", "local", "--no-record",
               "--fault", "status:404", "--log-level", "error"], 0, p_local)

        p_nrfwd = free_port()
        cfg = {
            "generalOptions": {"ocnrfHost": SELF.split(":")[0], "ocnrfPort": int(SELF.split(":")[1])},
            "forwardingOptions": {"featureStatus": "ENABLED", "maxForwardAttempts": 2, "maxViaMembers": 16,
                                  "nrfHostConfig": [{"scheme": "http", "fqdn": "nrf-up.seg2.example.com",
                                                     "ipv4Address": "127.0.0.1", "port": up}]},
            "runtime": {"listen": [{"address": "127.0.0.1", "port": p_nrfwd}], "management": {"port": 0},
                        "limits": {"maxConcurrentStreams": 256}},
        }
        cfgfile = os.path.join(tmp, "nrfwd.json")
        with open(cfgfile, "w") as f:
            json.dump(cfg, f)
        nrfwd = start([f"{build}/app/nrfwd/nrfwd", "--config", cfgfile, "--workers", "1",
                       "--log-level", "error"], 1, p_nrfwd)

        # The same nrfwd with a local NRF that answers 404 (behaviour.md §3: local
        # NRF first, 404 triggers forwarding to the peers).
        p_nrfwd_l = free_port()
        cfg_l = json.loads(json.dumps(cfg))
        cfg_l["generalOptions"]["ocnrfPort"] = p_nrfwd_l
        cfg_l["runtime"]["listen"] = [{"address": "127.0.0.1", "port": p_nrfwd_l}]
        cfg_l["runtime"]["localNrf"] = {"address": "127.0.0.1", "port": p_local}
        cfgfile_l = os.path.join(tmp, "nrfwd-local.json")
        with open(cfgfile_l, "w") as f:
            json.dump(cfg_l, f)
        nrfwd_l = start([f"{build}/app/nrfwd/nrfwd", "--config", cfgfile_l, "--workers", "1",
                         "--log-level", "error"], 1, p_nrfwd_l)

        p_hap = free_port()
        hapcfg = os.path.join(tmp, "haproxy.cfg")
        with open(hapcfg, "w") as f:
            f.write(f"""global
    nbthread 1
    log stdout format raw local0 emerg
defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
frontend fe
    bind 127.0.0.1:{p_hap} proto h2
    default_backend be
backend be
    http-reuse always
    server s1 127.0.0.1:{up} proto h2
""")
        hap = start(["haproxy", "-f", hapcfg, "-db"], 1, p_hap)

        p_ngx = free_port()
        ngx = start(["nghttpx", "-n1", f"--frontend=127.0.0.1,{p_ngx};no-tls",
                     f"--backend=127.0.0.1,{up};;proto=h2", "--backend-connections-per-host=8",
                     "--no-ocsp", "--errorlog-file=/dev/null", "--accesslog-file=/dev/null",
                     ], 1, p_ngx)

        extra = []
        if args.baseline_build:
            p_base = free_port()
            cfg_b = json.loads(json.dumps(cfg))
            cfg_b["generalOptions"]["ocnrfPort"] = p_base
            cfg_b["runtime"]["listen"] = [{"address": "127.0.0.1", "port": p_base}]
            cfgfile_b = os.path.join(tmp, "nrfwd-baseline.json")
            with open(cfgfile_b, "w") as f:
                json.dump(cfg_b, f)
            bb = os.path.abspath(args.baseline_build)
            nrfwd_b = start([f"{bb}/app/nrfwd/nrfwd", "--config", cfgfile_b, "--workers", "1",
                             "--log-level", "error"], 1, p_base)
            self_b = SELF.split(":")[0] + f":{p_base}"
            extra = [("baseline nrfwd (forwarded)", nrfwd_b, p_base, VIA),
                     ("baseline nrfwd (508 loop detected)", nrfwd_b, p_base, VIA + ", 2.0 " + self_b)]
        # Compared pairs run back to back in each round (HAProxy, then the
        # forwarded request, then the 508), so that a change of the shared
        # machine's speed between runs reaches both sides of a ratio alike.
        systems = [
            ("HAProxy 2.6", hap, p_hap, VIA),
            ("nrfwd (forwarded)", nrfwd, p_nrfwd, VIA),
            ("nrfwd (508 loop detected)", nrfwd, p_nrfwd, VIA + ", 2.0 " + SELF),
            ("nrfwd (forwarded after local 404)", nrfwd_l, p_nrfwd_l, VIA),
            ("nghttpx", ngx, p_ngx, VIA),
        ] + extra
        results = {name: [] for name, *_ in systems}
        # Warm-up: connections, pools, caches.
        for name, proc, port, via in systems:
            h2load(port, 5000, args.clients, args.streams, via, os.path.join(tmp, "warm.log"))
        load0 = open("/proc/loadavg").read().split()[:3]
        for r in range(args.rounds):
            for name, proc, port, via in systems:
                c0 = cpu_seconds_ns(proc.pid)
                res = h2load(port, args.requests, args.clients, args.streams, via,
                             os.path.join(tmp, "lat.log"))
                res["cpu"] = cpu_seconds_ns(proc.pid) - c0
                results[name].append(res)
                print(f"round {r + 1}/{args.rounds} {name}: {res['rps']:.0f} req/s, "
                      f"cpu {res['cpu']:.2f}s, done {res['done']} failed {res['failed']} "
                      f"errored {res['errored']} status {res['status']}", flush=True)
        # Short pairs: a forwarded run and a 508 run a few hundred ms apart,
        # so that the speed changes of a shared machine (2x within minutes
        # here) fall on both halves of a ratio.
        pairs = {}
        pair_sets = [("nrfwd", nrfwd, p_nrfwd, SELF)]
        if args.baseline_build:
            pair_sets.append(("baseline nrfwd", nrfwd_b, p_base, self_b))
        for i in range(args.pairs):
            for label, proc, port, ident in pair_sets:
                pr = []
                for via in (VIA, VIA + ", 2.0 " + ident):
                    c0 = cpu_seconds_ns(proc.pid)
                    res = h2load(port, args.pair_requests, args.clients, args.streams, via,
                                 os.path.join(tmp, "pair.log"))
                    pr.append((cpu_seconds_ns(proc.pid) - c0) / max(res["done"], 1) * 1e6)
                pairs.setdefault(label, []).append(pr)
            if (i + 1) % 5 == 0 or i + 1 == args.pairs:
                print(f"pairs {i + 1}/{args.pairs}", flush=True)
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)

    def med(name, key):
        v = [x[key] for x in results[name] if key in x]
        return statistics.median(v), min(v), max(v)

    rows = []
    per_cpu = {}
    for name in results:
        rps = med(name, "rps")
        # Per answered request (done): the 508 rows are answers too.
        cpu100k = [x["cpu"] / x["done"] * 100000 if x["done"] else float("inf") for x in results[name]]
        rpc = [x["done"] / x["cpu"] if x["cpu"] > 0 else float("inf") for x in results[name]]
        per_cpu[name] = statistics.median(rpc)
        p50 = med(name, "p50")
        p99 = med(name, "p99")
        bad = sum(x["errored"] + (x["failed"] if "508" not in name else 0) for x in results[name])
        rows.append(f"| {name} | {rps[0]:,.0f} ({rps[1]:,.0f}..{rps[2]:,.0f}) | "
                    f"{statistics.median(cpu100k):.2f} ({min(cpu100k):.2f}..{max(cpu100k):.2f}) | "
                    f"{per_cpu[name]:,.0f} | {p50[0]:.2f} | {p99[0]:.2f} | {bad} |")
    ratio_hap = per_cpu["nrfwd (forwarded)"] / per_cpu["HAProxy 2.6"]
    ratio_ngx = per_cpu["nrfwd (forwarded)"] / per_cpu["nghttpx"]
    ratio_508 = per_cpu["nrfwd (508 loop detected)"] / per_cpu["nrfwd (forwarded)"]
    ratio_508_l = per_cpu["nrfwd (508 loop detected)"] / per_cpu["nrfwd (forwarded after local 404)"]
    ratio_l = per_cpu["nrfwd (forwarded)"] / per_cpu["nrfwd (forwarded after local 404)"]
    # Per-round ratios (each round's figures are measured back to back).
    def round_ratios(a, b):
        v = [(x["done"] / x["cpu"]) / (y["done"] / y["cpu"])
             for x, y in zip(results[a], results[b]) if x["cpu"] > 0 and y["cpu"] > 0]
        return statistics.median(v), min(v), max(v)
    rr_508 = round_ratios("nrfwd (508 loop detected)", "nrfwd (forwarded)")
    rr_508_l = round_ratios("nrfwd (508 loop detected)", "nrfwd (forwarded after local 404)")
    rr_hap = round_ratios("nrfwd (forwarded)", "HAProxy 2.6")
    load = open("/proc/loadavg").read().split()[:3]
    base_lines = []
    if args.baseline_build:
        bf, b5 = "baseline nrfwd (forwarded)", "baseline nrfwd (508 loop detected)"
        rr_b = round_ratios(b5, bf)
        rr_f = round_ratios("nrfwd (forwarded)", bf)
        rr_5 = round_ratios("nrfwd (508 loop detected)", b5)
        base_lines = [
            f"- baseline build ({args.baseline_label or args.baseline_build}: its nrfwd, pure forwarder, "
            f"same upstream, also on core 1), 508 vs forwarded: "
            f"**{per_cpu[b5] / per_cpu[bf]:.2f}× cheaper** (per round: median {rr_b[0]:.2f}, "
            f"{rr_b[1]:.2f}..{rr_b[2]:.2f})",
            f"- this build / baseline, requests per nrfwd-CPU-second: forwarded "
            f"**{per_cpu['nrfwd (forwarded)'] / per_cpu[bf]:.2f}×** (per round: median {rr_f[0]:.2f}, "
            f"{rr_f[1]:.2f}..{rr_f[2]:.2f}), 508 **{per_cpu['nrfwd (508 loop detected)'] / per_cpu[b5]:.2f}×** "
            f"(per round: median {rr_5[0]:.2f}, {rr_5[1]:.2f}..{rr_5[2]:.2f})",
        ]
    pair_lines = []
    for label, v in pairs.items():
        fw = [a for a, _ in v]
        lp = [b for _, b in v]
        r = sorted(a / b for a, b in v if b > 0)
        q = statistics.quantiles(r, n=4) if len(r) >= 2 else [r[0], r[0], r[0]]
        pair_lines.append(
            f"- {label}, {len(v)} pairs of {args.pair_requests} requests (forwarded then 508, back to back): "
            f"forwarded {statistics.median(fw):.2f} µs CPU per request ({min(fw):.2f}..{max(fw):.2f}), "
            f"508 {statistics.median(lp):.2f} ({min(lp):.2f}..{max(lp):.2f}); 508 cheaper by "
            f"**{statistics.median(r):.2f}×** (median of the pairs' ratios; quartiles {q[0]:.2f}..{q[2]:.2f})")
    cpu_model = ""
    try:
        cpu_model = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
    except (OSError, IndexError):
        pass
    cmd = "python3 bench/e2e/proxy_bench.py " + shlex.join(sys.argv[1:])
    text = "\n".join([
        "## End-to-end: nrfwd vs HAProxy 2.6 vs nghttpx (bench/e2e/proxy_bench.py)",
        "",
        f"Command: `{cmd.strip()}` — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {cpu_model}, "
        f"{os.cpu_count()} cores, Linux {platform.release()}, shared machine; load average (1/5/15 min) "
        f"{' '.join(load0)} at the start, {' '.join(load)} at the end.",
        "",
        f"h2load (`-n {args.requests} -c {args.clients} -m {args.streams} -t 1`, core 0) → proxy (core 1, one "
        "worker/thread) → nrfstub (core 0, recording off). GET NFDiscover with a 3-member Via. "
        f"{args.rounds} rounds, systems interleaved in each round (HAProxy, nrfwd forwarded and nrfwd 508 "
        "back to back, the pairs the ratios compare); medians with (min..max). CPU is the "
        "proxy's on-CPU time over the run (schedstat of its threads, in ns). The upstream shares core 0 with h2load, so requests/s is "
        "bounded by the client side for every system: compare CPU per request.",
        "",
        "Rows: **nrfwd (forwarded)** is the pure forwarder (no `localNrf`): front exchange + one exchange "
        "with the upstream. **nrfwd (forwarded after local 404)** is the main deployment (behaviour §3: local NRF first): a second nrfwd "
        "(same build, one worker, also on core 1, idle while the other systems run) whose `localNrf` is an "
        "nrfstub on core 0 answering every request `404` (`--fault status:404`, `conf/stub-profiles-empty.json`): "
        "front exchange + the local NRF's 404 (the forwarding trigger, kept for step 8) + the upstream exchange. "
        "**nrfwd (508 loop detected)** adds the proxy's own identity to the Via (run on the pure forwarder; "
        "loop detection comes before the local NRF, so a 508 costs the same in both configurations).",
        "",
        "| system | req/s | proxy CPU s / 100k req | req per proxy-CPU-s | p50 ms | p99 ms | failed+errored |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"- nrfwd / HAProxy, requests per proxy-CPU-second: **{ratio_hap:.2f}×** "
        f"(per round: median {rr_hap[0]:.2f}, {rr_hap[1]:.2f}..{rr_hap[2]:.2f}; target ≥ 1.5×)",
        f"- nrfwd / nghttpx, requests per proxy-CPU-second: **{ratio_ngx:.2f}×**",
        f"- 508 (loop detected) vs pure-forwarder forwarded request, nrfwd CPU per request: "
        f"**{ratio_508:.2f}× cheaper** (per round: median {rr_508[0]:.2f}, {rr_508[1]:.2f}..{rr_508[2]:.2f}; target ≥ 3×)",
        f"- 508 (loop detected) vs forwarded after a local 404, nrfwd CPU per request: "
        f"**{ratio_508_l:.2f}× cheaper** (per round: median {rr_508_l[0]:.2f}, {rr_508_l[1]:.2f}..{rr_508_l[2]:.2f})",
        f"- forwarded after a local 404 costs {ratio_l:.2f}× the CPU of a pure-forwarder forwarded request",
        *base_lines,
        *pair_lines,
        "",
        READING,
        "",
    ])
    print(text)
    if not args.no_write:
        write_section(os.path.join(ROOT, "docs", "benchmarks.md"), "e2e-proxy", text)
    return 0


def access_log_main(args):
    """nrfwd without and with runtime.accessLog (JSON, every request),
    forwarded and 508, back to back in every round."""
    build = os.path.abspath(args.build_dir)
    tmp = tempfile.mkdtemp(prefix="nrfwd-bench-alog-")
    procs = []
    lines = 0

    def start(cmd, core, port):
        p = subprocess.Popen(["taskset", "-c", str(core), *cmd], stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(tmp, f"{os.path.basename(cmd[0])}-{port}.log"), "w"))
        procs.append(p)
        wait_port(port, p)
        return p

    def nrfwd_cfg(port, up, alog=None):
        cfg = {
            "generalOptions": {"ocnrfHost": SELF.split(":")[0], "ocnrfPort": port},
            "forwardingOptions": {"featureStatus": "ENABLED", "maxForwardAttempts": 2, "maxViaMembers": 16,
                                  "nrfHostConfig": [{"scheme": "http", "fqdn": "nrf-up.seg2.example.com",
                                                     "ipv4Address": "127.0.0.1", "port": up}]},
            "runtime": {"listen": [{"address": "127.0.0.1", "port": port}], "management": {"port": 0},
                        "limits": {"maxConcurrentStreams": 256}},
        }
        if alog:
            cfg["runtime"]["accessLog"] = {"path": alog, "format": "json"}
        path = os.path.join(tmp, f"nrfwd-{port}.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path

    alog_path = os.path.join(tmp, "access.log")
    try:
        up = free_port()
        start([f"{build}/app/nrfstub/nrfstub", "--listen", f"127.0.0.1:{up}", "--profiles",
               f"{ROOT}/conf/stub-profiles-a.json", "--name", "upstream", "--no-record",
               "--log-level", "error"], 0, up)
        p_off, p_on = free_port(), free_port()
        off = start([f"{build}/app/nrfwd/nrfwd", "--config", nrfwd_cfg(p_off, up), "--workers", "1",
                     "--log-level", "error"], 1, p_off)
        on = start([f"{build}/app/nrfwd/nrfwd", "--config", nrfwd_cfg(p_on, up, alog_path),
                    "--workers", "1", "--log-level", "error"], 1, p_on)
        self_off = SELF.split(":")[0] + f":{p_off}"
        self_on = SELF.split(":")[0] + f":{p_on}"
        systems = [
            ("nrfwd (forwarded)", off, p_off, VIA),
            ("nrfwd (forwarded), access log JSON", on, p_on, VIA),
            ("nrfwd (508 loop detected)", off, p_off, VIA + ", 2.0 " + self_off),
            ("nrfwd (508 loop detected), access log JSON", on, p_on, VIA + ", 2.0 " + self_on),
        ]
        results = {name: [] for name, *_ in systems}
        for name, proc, port, via in systems:
            h2load(port, 5000, args.clients, args.streams, via, os.path.join(tmp, "warm.log"))
        load0 = open("/proc/loadavg").read().split()[:3]
        for r in range(args.rounds):
            for name, proc, port, via in systems:
                c0 = cpu_seconds_ns(proc.pid)
                res = h2load(port, args.requests, args.clients, args.streams, via,
                             os.path.join(tmp, "lat.log"))
                res["cpu"] = cpu_seconds_ns(proc.pid) - c0
                results[name].append(res)
                print(f"round {r + 1}/{args.rounds} {name}: {res['rps']:.0f} req/s, "
                      f"cpu {res['cpu']:.2f}s, done {res['done']} failed {res['failed']} "
                      f"errored {res['errored']}", flush=True)
        load = open("/proc/loadavg").read().split()[:3]
        time.sleep(0.5)  # the last flush (flushMs 200)
        with open(alog_path) as f:
            for line in f:
                json.loads(line)  # every line is one JSON object
                lines += 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)

    def us_per_req(name):
        v = [x["cpu"] / x["done"] * 1e6 for x in results[name] if x["done"]]
        return statistics.median(v), min(v), max(v)

    def round_ratios(a, b):
        v = [(x["cpu"] / x["done"]) / (y["cpu"] / y["done"])
             for x, y in zip(results[a], results[b]) if x["done"] and y["done"]]
        return statistics.median(v), min(v), max(v)

    rows = []
    for name in results:
        u = us_per_req(name)
        rps = statistics.median([x["rps"] for x in results[name]])
        rows.append(f"| {name} | {u[0]:.2f} ({u[1]:.2f}..{u[2]:.2f}) | {rps:,.0f} |")
    rf = round_ratios("nrfwd (forwarded), access log JSON", "nrfwd (forwarded)")
    r5 = round_ratios("nrfwd (508 loop detected), access log JSON", "nrfwd (508 loop detected)")
    expect = sum(x["done"] for n in results if "access log" in n for x in results[n])
    cmd = "python3 bench/e2e/proxy_bench.py " + shlex.join(sys.argv[1:])
    text = "\n".join([
        "## Access log: on (JSON, every request) vs off (bench/e2e/proxy_bench.py --access-log)",
        "",
        f"Command: `{cmd.strip()}` — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} cores, Linux {platform.release()}, shared machine; load average "
        f"{' '.join(load0)} at the start, {' '.join(load)} at the end.",
        "",
        f"h2load (`-n {args.requests} -c {args.clients} -m {args.streams} -t 1`, core 0) → nrfwd (core 1, one "
        "worker, pure forwarder) → nrfstub (core 0). Two nrfwd of the same build: one without an access "
        "log, one with `runtime.accessLog` `{\"path\": FILE, \"format\": \"json\"}` (every request, "
        "flushed every 200 ms). Each round runs the four rows back to back; CPU is the nrfwd process's "
        f"on-CPU time (all its threads, flushes included). {args.rounds} rounds; medians (min..max).",
        "",
        "| row | nrfwd CPU µs / request | req/s |",
        "|---|---|---|",
        *rows,
        "",
        f"- forwarded: access log on / off, CPU per request **{rf[0]:.3f}×** (per-round ratios "
        f"{rf[1]:.3f}..{rf[2]:.3f}; target ≤ 1.10)",
        f"- 508 loop detected: access log on / off, CPU per request **{r5[0]:.3f}×** (per-round ratios "
        f"{r5[1]:.3f}..{r5[2]:.3f}; target ≤ 1.10)",
        f"- lines in the access log: {lines} (requests answered with the log on, warm-up included: "
        f"{expect + 2 * 5000}); every line parsed as JSON",
        "",
    ])
    print(text)
    if not args.no_write:
        write_section(os.path.join(ROOT, "docs", "benchmarks.md"), "e2e-access-log", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
