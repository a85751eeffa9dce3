#!/usr/bin/env python3
"""TLS benchmark: nrfwd vs HAProxy 2.6 with TLS on both legs, one run.

h2load (core 0) -> proxy (core 1, one worker/thread, TLS front, https to the
upstream) -> upstream TLS terminator (an nrfwd with a TLS listener, core 0)
-> nrfstub (core 0, recording off). Certificates (ECDSA P-256) are made with
the openssl command in a temp dir. Measured per system, interleaved in each
round, medians over the rounds with (min..max):
  - requests per proxy-CPU-second over TLS (h2load -c 8 -m 32, long-lived
    connections, GET NFDiscover with a 3-member Via);
  - full handshakes: h2load -n C -c C -m 1 (every client a new connection,
    no session reuse), handshakes per second and per proxy-CPU-second;
  - the same requests in cleartext (h2c) as a reference for nrfwd's
    cleartext path.
CPU is utime+stime of the proxy from /proc/<pid>/stat.

Writes a section into docs/benchmarks.md between <!-- begin tls --> and
<!-- end tls -->. Not part of the test command. Usage:
  python3 bench/e2e/tls_bench.py [--build-dir build] [--requests 50000]
      [--rounds 5] [--handshakes 400] [--no-write]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

VIA = "2.0 nrf-x.seg9.example.com:8080, 2.0 nrf-y.seg8.example.com:8080, 2.0 nrf-z.seg7.example.com:8080"
SELF_HOST = "nrf-bench.seg1.example.com"
UP_HOST = "nrf-up.seg2.example.com"
PATH = "/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF"


from benchlib import (  # noqa: E402
    Pinned, cpu_model, cpu_seconds, free_port, mmm, parse_h2load, publish)


def ossl(d, *args):
    subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)


def make_certs(d):
    ossl(d, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=bench CA")
    out = {"ca": os.path.join(d, "ca.pem")}
    for n in (SELF_HOST, UP_HOST):
        ossl(d, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", n + ".key", "-out", n + ".csr", "-subj", "/CN=" + n)
        with open(os.path.join(d, n + ".ext"), "w") as f:
            f.write(f"subjectAltName=DNS:{n},IP:127.0.0.1\n")
        ossl(d, "x509", "-req", "-in", n + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", n + ".pem", "-days", "2", "-extfile", n + ".ext")
        crt, key = os.path.join(d, n + ".pem"), os.path.join(d, n + ".key")
        both = os.path.join(d, n + ".both.pem")  # HAProxy: chain + key in one file
        with open(both, "w") as f:
            f.write(open(crt).read() + open(key).read())
        out[n] = (crt, key, both)
    return out


def h2load(url, n, clients, streams, extra=()):
    cmd = ["taskset", "-c", "0", "h2load", "-n", str(n), "-c", str(clients), "-m", str(streams),
           "-t", "1", *extra, url]
    t0 = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout
    res = parse_h2load(out)
    res["wall"] = time.time() - t0
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--requests", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--streams", type=int, default=32)
    ap.add_argument("--handshakes", type=int, default=400)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    build = os.path.abspath(args.build_dir)
    procs = Pinned("nrfwd-tls-bench-")
    tmp = procs.tmp
    start = procs.start
    certs = make_certs(tmp)

    def nrfwd_cfg(host, port, tls, local=None, peer=None, peer_scheme="https"):
        cfg = {
            "generalOptions": {"ocnrfHost": host, "ocnrfPort": port},
            "forwardingOptions": {"featureStatus": "DISABLED"},
            "runtime": {"listen": [{"address": "127.0.0.1", "port": port, "tls": tls}],
                        "management": {"port": 0},
                        "limits": {"maxConcurrentStreams": 256, "maxConnections": 20000},
                        "tlsClient": {"caFile": certs["ca"]}},
        }
        if tls:
            crt, key, _ = certs[host]
            cfg["runtime"]["tls"] = {"certFile": crt, "keyFile": key}
        if local:
            cfg["runtime"]["localNrf"] = {"scheme": "http", "address": "127.0.0.1", "port": local}
        if peer:
            cfg["forwardingOptions"] = {
                "featureStatus": "ENABLED", "maxForwardAttempts": 2, "maxViaMembers": 16,
                "nrfHostConfig": [{"scheme": peer_scheme, "fqdn": UP_HOST, "ipv4Address": "127.0.0.1",
                                   "port": peer}]}
        path = os.path.join(tmp, f"nrfwd-{port}.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path

    def nrfwd(path, core, port):
        return start([f"{build}/app/nrfwd/nrfwd", "--config", path, "--workers", "1",
                      "--log-level", "error"], core, port)

    results = {}
    with procs:
        stub = procs.nrfstub(build)
        # Upstream TLS terminator (same for every system; not measured).
        up = free_port()
        nrfwd(nrfwd_cfg(UP_HOST, up, True, local=stub), 0, up)

        p_tls = free_port()
        n_tls = nrfwd(nrfwd_cfg(SELF_HOST, p_tls, True, peer=up), 1, p_tls)
        p_clr = free_port()
        n_clr = nrfwd(nrfwd_cfg(SELF_HOST, p_clr, False, peer=stub, peer_scheme="http"), 1, p_clr)

        p_hap = free_port()
        hapcfg = os.path.join(tmp, "haproxy.cfg")
        with open(hapcfg, "w") as f:
            f.write(f"""global
    nbthread 1
    maxconn 8000
    log stdout format raw local0 emerg
    ssl-default-bind-options ssl-min-ver TLSv1.2
defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
frontend fe
    bind 127.0.0.1:{p_hap} ssl crt {certs[SELF_HOST][2]} alpn h2
    default_backend be
backend be
    http-reuse always
    server s1 127.0.0.1:{up} ssl verify required ca-file {certs['ca']} sni str({UP_HOST}) alpn h2
""")
        hap = start(["haproxy", "-f", hapcfg, "-db"], 1, p_hap)

        systems = [
            ("nrfwd TLS", n_tls, f"https://127.0.0.1:{p_tls}{PATH}", True),
            ("HAProxy 2.6 TLS", hap, f"https://127.0.0.1:{p_hap}{PATH}", True),
            ("nrfwd cleartext (h2c)", n_clr, f"http://127.0.0.1:{p_clr}{PATH}", False),
        ]
        results = {name: {"req": [], "hs": []} for name, *_ in systems}
        hdr = ["-H", f"via: {VIA}"]
        for name, proc, url, tls in systems:  # warm-up
            h2load(url, 5000, args.clients, args.streams, hdr)
        for r in range(args.rounds):
            for name, proc, url, tls in systems:
                c0 = cpu_seconds(proc.pid)
                res = h2load(url, args.requests, args.clients, args.streams, hdr)
                res["cpu"] = cpu_seconds(proc.pid) - c0
                results[name]["req"].append(res)
                line = (f"round {r + 1}/{args.rounds} {name}: {res['rps']:.0f} req/s, cpu "
                        f"{res['cpu']:.2f}s, done {res['done']} errored {res['errored']}")
                if tls:
                    c0 = cpu_seconds(proc.pid)
                    hs = h2load(url, args.handshakes, args.handshakes, 1, hdr)
                    hs["cpu"] = cpu_seconds(proc.pid) - c0
                    results[name]["hs"].append(hs)
                    line += (f"; handshakes {hs['ok']}/{args.handshakes} in {hs.get('secs', 0):.2f}s, "
                             f"cpu {hs['cpu']:.2f}s {hs['cipher']}")
                print(line, flush=True)

    rows, hs_rows, rpc, hpc = [], [], {}, {}
    cipher = ""
    for name in results:
        req = results[name]["req"]
        rps = mmm([x["rps"] for x in req])
        r = mmm([x["done"] / x["cpu"] if x["cpu"] > 0 else float("inf") for x in req])
        rpc[name] = r[0]
        bad = sum(x["errored"] + x["done"] - x["ok"] for x in req)
        rows.append(f"| {name} | {rps[0]:,.0f} ({rps[1]:,.0f}..{rps[2]:,.0f}) | "
                    f"{r[0]:,.0f} ({r[1]:,.0f}..{r[2]:,.0f}) | {bad} |")
        hs = results[name]["hs"]
        if hs:
            cipher = cipher or hs[0]["cipher"].strip()
            hps = mmm([x["ok"] / x["secs"] for x in hs if x.get("secs")])
            h = mmm([x["ok"] / x["cpu"] if x["cpu"] > 0 else float("inf") for x in hs])
            hpc[name] = h[0]
            hs_rows.append(f"| {name} | {hps[0]:,.0f} ({hps[1]:,.0f}..{hps[2]:,.0f}) | "
                           f"{h[0]:,.0f} ({h[1]:,.0f}..{h[2]:,.0f}) | "
                           f"{sum(args.handshakes - x['ok'] for x in hs)} |")
    ratio_req = rpc["nrfwd TLS"] / rpc["HAProxy 2.6 TLS"]
    ratio_hs = hpc["nrfwd TLS"] / hpc["HAProxy 2.6 TLS"]
    cmd = "python3 bench/e2e/tls_bench.py " + " ".join(sys.argv[1:])
    text = "\n".join([
        "## TLS: nrfwd vs HAProxy 2.6, TLS on both legs (bench/e2e/tls_bench.py)",
        "",
        f"Command: `{cmd.strip()}` — {time.strftime('%Y-%m-%d')}, {cpu_model()}, {os.cpu_count()} cores, "
        f"Linux {platform.release()}, OpenSSL {subprocess.run(['openssl', 'version'], capture_output=True, text=True).stdout.split()[1]}, shared machine.",
        "",
        "h2load (core 0) → proxy (core 1, one worker/thread; TLS front with ALPN h2, https to the "
        "upstream with certificate and name check, pooled) → upstream TLS terminator (an nrfwd, core 0) → "
        f"nrfstub (core 0). ECDSA P-256 certificates; negotiated: {cipher or 'see the log'}. "
        f"{args.rounds} rounds, systems interleaved; medians with (min..max). Proxy CPU = utime+stime.",
        "",
        f"Requests (`h2load -n {args.requests} -c {args.clients} -m {args.streams}`, GET NFDiscover, "
        "3-member Via, connections kept):",
        "",
        "| system | req/s | req per proxy-CPU-s | failed+errored |",
        "|---|---|---|---|",
        *rows,
        "",
        f"Full handshakes (`h2load -n {args.handshakes} -c {args.handshakes} -m 1`: every client a new "
        "TLS connection, no resumption, one request each):",
        "",
        "| system | handshakes/s | handshakes per proxy-CPU-s | failed |",
        "|---|---|---|---|",
        *hs_rows,
        "",
        f"- nrfwd / HAProxy over TLS, requests per proxy-CPU-second: **{ratio_req:.2f}×** (target ≥ 1×)",
        f"- nrfwd / HAProxy, full handshakes per proxy-CPU-second: **{ratio_hs:.2f}×**",
        f"- nrfwd TLS / nrfwd cleartext, requests per proxy-CPU-second: "
        f"**{rpc['nrfwd TLS'] / rpc['nrfwd cleartext (h2c)']:.2f}** (the cost of TLS on both legs); "
        "the cleartext row is the same path as the e2e-proxy section above (cleartext connections "
        "go through the TLS layer as a pass-through).",
        "",
    ])
    publish(text, "tls", args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
