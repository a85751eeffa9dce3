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

Origins (--origin, default both, interleaved in each round): "nrfstub" is
the upstream above (this project's own stub, a ~2.4 KB discovery answer);
"haproxy" is a second HAProxy process (core 0, h2 frontend, no backend)
answering with `http-request return`: the same ~2.4 KB answer nrfstub gives
(fetched from it at start, served with `file`) for the benchmark's path, and
a 21-byte body (`string`) for the same path with target-nf-type=UDM (same
request size). Every proxy (HAProxy, nrfwd pure forwarder, nghttpx) runs
once per origin (one process each, all on core 1), so the ratios are quoted
per origin: the origin is part of what an upstream-dependent figure measures.

--baseline-build DIR runs that build's nrfwd (pure forwarder, nrfstub origin)
next to this one in the same rounds, right after it: a before/after
comparison (forwarded and 508).

Writes the table into docs/benchmarks.md between markers, with the command.
Not part of the test command. Usage:
  python3 bench/e2e/proxy_bench.py [--build-dir build] [--requests 100000]
      [--rounds 5] [--clients 8] [--streams 32] [--no-write]
      [--origin nrfstub|haproxy|both]
      [--baseline-build DIR [--baseline-label TEXT]] [--pairs N [--pair-requests K]]
"""
import argparse
import json
import shlex
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (  # noqa: E402
    Pinned, add_latency, cpu_model, cpu_seconds_ns, free_port, haproxy_h2_proxy, loadavg, mmm,
    nghttpx_cmd, parse_h2load, publish)

VIA = "2.0 nrf-x.seg9.example.com:8080, 2.0 nrf-y.seg8.example.com:8080, 2.0 nrf-z.seg7.example.com:8080"
SELF = "nrf-bench.seg1.example.com:18500"
PATH = "/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF"
# Same length as PATH: the HAProxy origin answers it with SMALL_BODY.
PATH_SMALL = "/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=SMF"
SMALL_BODY = '{"validityPeriod":60}'
ORIGINS = {"nrfstub": "nrfstub (~2.4 KB)", "hap": "HAProxy origin (same ~2.4 KB)",
           "hap-small": "HAProxy origin (21 B)"}


# Where the time goes (from bench/e2e/profile_nrfwd.sh and callgrind; see
# docs/benchmarks.md). Kept here so a re-run writes the same reading.
READING = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "proxy_bench_reading.md")).read().strip()


def h2load(port, n, clients, streams, via, logfile, path=PATH):
    cmd = ["taskset", "-c", "0", "h2load", "-n", str(n), "-c", str(clients), "-m", str(streams),
           "-t", "1", "-H", f"via: {via}", "--log-file", logfile, f"http://127.0.0.1:{port}{path}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    return add_latency(parse_h2load(out), logfile)


def fetch_body(port, path):
    """The body of one h2c GET (status 200 required)."""
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-w", "\n%{http_code}",
                          f"http://127.0.0.1:{port}{path}"], capture_output=True, timeout=10).stdout
    body, _, code = out.rpartition(b"\n")
    if code != b"200":
        raise RuntimeError(f"GET {path} on port {port}: status {code.decode()}")
    return body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--streams", type=int, default=32)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--origin", choices=("nrfstub", "haproxy", "both"), default="both",
                    help="upstream behind the proxies: nrfstub, an HAProxy origin answering with "
                         "`http-request return` (~2.4 KB and 21 B), or both interleaved (default)")
    ap.add_argument("--baseline-build", default=None,
                    help="another build dir: its nrfwd (pure forwarder) adds a forwarded and a "
                         "508 row, measured in the same rounds (before/after comparisons)")
    ap.add_argument("--baseline-label", default=None, help="what the baseline build is (for the text)")
    ap.add_argument("--pairs", type=int, default=0,
                    help="after the rounds: this many short pairs (forwarded, then 508) on each nrfwd, "
                         "back to back; the 508 ratio as the median of the pairs' ratios")
    ap.add_argument("--pair-requests", type=int, default=30000, help="requests per run of a pair")
    args = ap.parse_args()
    build = os.path.abspath(args.build_dir)
    procs = Pinned("nrfwd-bench-")
    tmp = procs.tmp
    start = procs.start

    with procs:
        up = procs.nrfstub(build)
        # The HAProxy origin serves the very bytes nrfstub answers to PATH.
        body = fetch_body(up, PATH)
        body_file = os.path.join(tmp, "discovery.json")
        with open(body_file, "wb") as f:
            f.write(body)

        p_local = procs.nrfstub(build, 0, "stub-profiles-empty.json", "local",
                                ["--fault", "status:404"])

        use_stub = args.origin in ("nrfstub", "both")
        use_hap = args.origin in ("haproxy", "both")
        ups = {}
        if use_stub:
            ups["nrfstub"] = up
        if use_hap:
            # An origin nobody here wrote: HAProxy answering by itself (no
            # backend), h2 frontend, as many streams per connection as
            # nrfstub allows (1000), so that the proxies open as many
            # upstream connections in front of either origin.
            p_orig = free_port()
            ocfg = os.path.join(tmp, "origin.cfg")
            with open(ocfg, "w") as f:
                f.write(f"""global
    nbthread 1
    tune.h2.max-concurrent-streams 1000
    log stdout format raw local0 emerg
defaults
    mode http
    timeout client 30s
frontend origin
    bind 127.0.0.1:{p_orig} proto h2
    acl small url_param(target-nf-type) -m str UDM
    http-request return status 200 content-type application/json string '{SMALL_BODY}' if small
    http-request return status 200 content-type application/json file {body_file}
""")
            start(["haproxy", "-f", ocfg, "-db"], 0, p_orig)
            ups["hap"] = p_orig
            small = fetch_body(p_orig, PATH_SMALL)
            big = fetch_body(p_orig, PATH)
            if small != SMALL_BODY.encode() or big != body:
                raise RuntimeError(f"HAProxy origin answers {len(small)} / {len(big)} bytes")

        def nrfwd_cfg(port, upstream, local=None):
            c = {
                "generalOptions": {"ocnrfHost": SELF.split(":")[0], "ocnrfPort": int(SELF.split(":")[1])},
                "forwardingOptions": {"featureStatus": "ENABLED", "maxForwardAttempts": 2, "maxViaMembers": 16,
                                      "nrfHostConfig": [{"scheme": "http", "fqdn": "nrf-up.seg2.example.com",
                                                         "ipv4Address": "127.0.0.1", "port": upstream}]},
                "runtime": {"listen": [{"address": "127.0.0.1", "port": port}], "management": {"port": 0},
                            "limits": {"maxConcurrentStreams": 256}},
            }
            if local:
                c["runtime"]["localNrf"] = {"address": "127.0.0.1", "port": local}
            path = os.path.join(tmp, f"nrfwd-{port}.json")
            with open(path, "w") as f:
                json.dump(c, f)
            return path

        def start_nrfwd(bdir, upstream, local=None):
            port = free_port()
            return start([f"{bdir}/app/nrfwd/nrfwd", "--config", nrfwd_cfg(port, upstream, local),
                          "--workers", "1", "--log-level", "error"], 1, port), port

        def start_hap(upstream):
            port = free_port()
            path = haproxy_h2_proxy(os.path.join(tmp, f"haproxy-{port}.cfg"),
                                    f"127.0.0.1:{port}", f"127.0.0.1:{upstream}")
            return start(["haproxy", "-f", path, "-db"], 1, port), port

        def start_ngx(upstream):
            port = free_port()
            return start(nghttpx_cmd(port, upstream), 1, port), port

        # One process per proxy and origin, all on core 1 (idle while the
        # others run). Rows: (origin, system, process, port, via, path).
        # Compared pairs run back to back in each round (HAProxy, then the
        # forwarded request, then the 508; the baseline right after this
        # build's row), so that a change of the shared machine's speed
        # between runs reaches both sides of a ratio alike.
        systems = []
        px = {}
        for o, u in ups.items():
            px[o] = {"hap": start_hap(u), "nrfwd": start_nrfwd(build, u), "ngx": start_ngx(u)}
        if use_stub:
            nrfwd, p_nrfwd = px["nrfstub"]["nrfwd"]
            # The same nrfwd with a local NRF that answers 404 (behaviour.md §3:
            # local NRF first, 404 triggers forwarding to the peers).
            nrfwd_l, p_nrfwd_l = start_nrfwd(build, up, p_local)
            base = []
            if args.baseline_build:
                nrfwd_b, p_base = start_nrfwd(os.path.abspath(args.baseline_build), up)
                self_b = SELF  # same identity: the configuration is the same
                base = [("nrfstub", "baseline nrfwd (forwarded)", nrfwd_b, p_base, VIA, PATH)]
            systems += [
                ("nrfstub", "HAProxy 2.6", *px["nrfstub"]["hap"], VIA, PATH),
                ("nrfstub", "nrfwd (forwarded)", nrfwd, p_nrfwd, VIA, PATH),
                *base,
                ("nrfstub", "nrfwd (508 loop detected)", nrfwd, p_nrfwd, VIA + ", 2.0 " + SELF, PATH),
            ]
            if args.baseline_build:
                systems.append(("nrfstub", "baseline nrfwd (508 loop detected)", nrfwd_b, p_base,
                                VIA + ", 2.0 " + self_b, PATH))
            systems += [
                ("nrfstub", "nrfwd (forwarded after local 404)", nrfwd_l, p_nrfwd_l, VIA, PATH),
                ("nrfstub", "nghttpx", *px["nrfstub"]["ngx"], VIA, PATH),
            ]
        if use_hap:
            for o, path in (("hap", PATH), ("hap-small", PATH_SMALL)):
                systems += [
                    (o, "HAProxy 2.6", *px["hap"]["hap"], VIA, path),
                    (o, "nrfwd (forwarded)", *px["hap"]["nrfwd"], VIA, path),
                    (o, "nghttpx", *px["hap"]["ngx"], VIA, path),
                ]
        results = {(o, name): [] for o, name, *_ in systems}
        # Warm-up: connections, pools, caches.
        for o, name, proc, port, via, path in systems:
            h2load(port, 5000, args.clients, args.streams, via, os.path.join(tmp, "warm.log"), path)
        load0 = loadavg()
        for r in range(args.rounds):
            for o, name, proc, port, via, path in systems:
                c0 = cpu_seconds_ns(proc.pid)
                res = h2load(port, args.requests, args.clients, args.streams, via,
                             os.path.join(tmp, "lat.log"), path)
                res["cpu"] = cpu_seconds_ns(proc.pid) - c0
                results[(o, name)].append(res)
                print(f"round {r + 1}/{args.rounds} [{o}] {name}: {res['rps']:.0f} req/s, "
                      f"cpu {res['cpu']:.2f}s, done {res['done']} failed {res['failed']} "
                      f"errored {res['errored']} status {res['status']}", flush=True)
        # Short pairs: a forwarded run and a 508 run a few hundred ms apart,
        # so that the speed changes of a shared machine (2x within minutes
        # here) fall on both halves of a ratio.
        pairs = {}
        pair_sets = [("nrfwd", nrfwd, p_nrfwd, SELF)] if use_stub else []
        if use_stub and args.baseline_build:
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

    def med(key, field):
        return mmm([x[field] for x in results[key] if field in x])

    rows = []
    per_cpu = {}
    for key in results:
        o, name = key
        rps = med(key, "rps")
        # Per answered request (done): the 508 rows are answers too.
        us = [x["cpu"] / x["done"] * 1e6 if x["done"] else float("inf") for x in results[key]]
        rpc = [x["done"] / x["cpu"] if x["cpu"] > 0 else float("inf") for x in results[key]]
        per_cpu[key] = statistics.median(rpc)
        p50 = med(key, "p50")
        p99 = med(key, "p99")
        bad = sum(x["errored"] + (x["failed"] if "508" not in name else 0) for x in results[key])
        rows.append(f"| {ORIGINS[o]} | {name} | {rps[0]:,.0f} ({rps[1]:,.0f}..{rps[2]:,.0f}) | "
                    f"{statistics.median(us):.2f} ({min(us):.2f}..{max(us):.2f}) | "
                    f"{per_cpu[key]:,.0f} ({min(rpc):,.0f}..{max(rpc):,.0f}) | "
                    f"{p50[0]:.2f} | {p99[0]:.2f} | {bad} |")

    # Per-round ratios (each round's figures are measured back to back).
    def round_ratios(a, b):
        return mmm([(x["done"] / x["cpu"]) / (y["done"] / y["cpu"])
                    for x, y in zip(results[a], results[b]) if x["cpu"] > 0 and y["cpu"] > 0])

    def ratio_line(text, a, b, suffix=""):
        rr = round_ratios(a, b)
        return (f"{text}**{per_cpu[a] / per_cpu[b]:.2f}×** (per round: median {rr[0]:.2f}, "
                f"{rr[1]:.2f}..{rr[2]:.2f}{suffix})")

    load = loadavg()
    origin_lines = []
    for o in ORIGINS:
        if (o, "nrfwd (forwarded)") not in results:
            continue
        f = (o, "nrfwd (forwarded)")
        origin_lines += [
            ratio_line(f"- {ORIGINS[o]}: nrfwd / HAProxy, requests per proxy-CPU-second: ", f,
                       (o, "HAProxy 2.6"), "; target ≥ 1.5×" if o == "nrfstub" else ""),
            ratio_line(f"- {ORIGINS[o]}: nrfwd / nghttpx, requests per proxy-CPU-second: ", f, (o, "nghttpx")),
        ]
    if ("nrfstub", "HAProxy 2.6") in results and ("hap", "HAProxy 2.6") in results:
        for name in ("HAProxy 2.6", "nrfwd (forwarded)", "nghttpx"):
            origin_lines.append(ratio_line(
                f"- {name}: CPU per request behind nrfstub / behind the HAProxy origin (same answer): ",
                ("hap", name), ("nrfstub", name)))
    stub_lines = []
    if ("nrfstub", "nrfwd (forwarded)") in results:
        f, l5 = ("nrfstub", "nrfwd (forwarded)"), ("nrfstub", "nrfwd (508 loop detected)")
        loc = ("nrfstub", "nrfwd (forwarded after local 404)")
        stub_lines = [
            ratio_line("- 508 (loop detected) vs pure-forwarder forwarded request, nrfwd CPU per request: ",
                       l5, f, "; target ≥ 3×").replace("×**", "× cheaper**", 1),
            ratio_line("- 508 (loop detected) vs forwarded after a local 404, nrfwd CPU per request: ",
                       l5, loc).replace("×**", "× cheaper**", 1),
            f"- forwarded after a local 404 costs {per_cpu[f] / per_cpu[loc]:.2f}× the CPU of a "
            "pure-forwarder forwarded request",
        ]
        if args.baseline_build:
            bf = ("nrfstub", "baseline nrfwd (forwarded)")
            b5 = ("nrfstub", "baseline nrfwd (508 loop detected)")
            stub_lines += [
                ratio_line(f"- baseline build ({args.baseline_label or args.baseline_build}: its nrfwd, pure "
                           "forwarder, same configuration and upstream, also on core 1), 508 vs forwarded: ",
                           b5, bf).replace("×**", "× cheaper**", 1),
                ratio_line("- **this build / baseline**, requests per nrfwd-CPU-second, forwarded: ", f, bf),
                ratio_line("- **this build / baseline**, requests per nrfwd-CPU-second, 508: ", l5, b5),
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
    cmd = "python3 bench/e2e/proxy_bench.py " + shlex.join(sys.argv[1:])
    text = "\n".join([
        "## End-to-end: nrfwd vs HAProxy 2.6 vs nghttpx (bench/e2e/proxy_bench.py)",
        "",
        f"Command: `{cmd.strip()}` — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {cpu_model()}, "
        f"{os.cpu_count()} cores, Linux {platform.release()}, shared machine; load average (1/5/15 min) "
        f"{' '.join(load0)} at the start, {' '.join(load)} at the end.",
        "",
        f"h2load (`-n {args.requests} -c {args.clients} -m {args.streams} -t 1`, core 0) → proxy (core 1, one "
        "worker/thread) → origin (core 0). GET NFDiscover with a 3-member Via. "
        f"{args.rounds} rounds, systems and origins interleaved in each round (per origin: HAProxy, nrfwd "
        "forwarded (the baseline's right after it) and nrfwd 508 back to back, the pairs the ratios compare); "
        "medians with (min..max). CPU is the proxy's on-CPU time over the run (schedstat of its threads, in "
        "ns). The origin shares core 0 with h2load, so requests/s is bounded by the client side for every "
        "system: compare CPU per request.",
        "",
        "Origins: **nrfstub** is this project's stub NRF (`conf/stub-profiles-a.json`, recording off), "
        f"answering a {len(body):,}-byte discovery result. **HAProxy origin** is a second HAProxy 2.6 process "
        "(one thread, h2 frontend, `tune.h2.max-concurrent-streams 1000` as nrfstub, no backend) answering "
        "with `http-request return status 200 content-type application/json`: `file` with the same "
        f"{len(body):,} bytes nrfstub gives (fetched from it at start), or `string` with a {len(SMALL_BODY)}-byte "
        "body for the same path with `target-nf-type=UDM` (same request size). Every proxy is a separate "
        "process per origin.",
        "",
        "Rows: **nrfwd (forwarded)** is the pure forwarder (no `localNrf`): front exchange + one exchange "
        "with the upstream. **nrfwd (forwarded after local 404)** is the main deployment ([behaviour §3](behaviour.md): local NRF first): a second nrfwd "
        "(same build, one worker, also on core 1, idle while the other systems run) whose `localNrf` is an "
        "nrfstub on core 0 answering every request `404` (`--fault status:404`, `conf/stub-profiles-empty.json`): "
        "front exchange + the local NRF's 404 (the forwarding trigger, kept for step 8) + the upstream exchange. "
        "**nrfwd (508 loop detected)** adds the proxy's own identity to the Via (run on the pure forwarder; "
        "loop detection comes before the local NRF, so a 508 costs the same in both configurations).",
        "",
        "| origin | system | req/s | proxy CPU µs / req | req per proxy-CPU-s | p50 ms | p99 ms | failed+errored |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        *origin_lines,
        *stub_lines,
        *pair_lines,
        "",
        READING,
        "",
    ])
    publish(text, "e2e-proxy", args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
