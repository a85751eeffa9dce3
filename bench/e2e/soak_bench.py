#!/usr/bin/env python3
"""Soak: nrfwd and HAProxy 2.6 side by side under the same mixed traffic,
faults every minute and some hostile clients, for a given time; RSS sampled
every 10 s. Not part of the test command.

Topology (loopback):

  h2load x 4 kinds ─► nrfwd (1 worker) ─► local nrfstub "local" (A profiles + 24 AMF: a 30 KB
                         │                 AMF discovery answer, so bigdrop bites)
                         ├──────────────► peer nrfstub "nrf-e"  (priority 1, E profiles)
                         └──────────────► peer nrfstub "nrf-e2" (priority 2, E profiles)
  h2load x 4 kinds ─► HAProxy 2.6 (nbthread 1, as in every comparison) ─► the same "local" nrfstub

HAProxy only forwards (no local-then-peer logic, no loop detection): it is the reference for
memory and stability under the same soak, not for the answers.

Traffic, per system, each kind its own h2load process at a fixed rate (--rps, one connection),
restarted every minute:
  disc  GET NFDiscover (AMF) with a 2-member Via        nrfwd: 200 local     HAProxy: 200
  fwd   GET NFProfileRetrieval of a UDM profile          nrfwd: 404 local, 200 from nrf-e (or nrf-e2)
                                                         HAProxy: 404 (the local stub's)
  loop  GET NFDiscover with nrfwd's own identity in Via  nrfwd: 508         HAProxy: 200
  post  POST NFStatusSubscribe (JSON body)               nrfwd: 201 local   HAProxy: 201
"ok" is that expected answer; everything else (5xx during faults, resets, timeouts) is "failed".

Faults, one per minute in turn, from second 10 of the minute:
  restart    the local nrfstub stopped, 1 s later started again on its port
  blackhole  nrf-e answers nothing for 20 s (nrfwd: perTryMs, then nrf-e2)
  reset      nrf-e resets every stream for 20 s (RST_STREAM)
  bigdrop    the local nrfstub drops its connection on every answer over 16 KiB for 20 s
             (the AMF discovery answer is 30 KB)
Hostile clients, against both systems, from second 30 of every minute, each held at most 15 s:
  100 TCP connections that never speak, 5 connections with window 0 asking for the 30 KB answer
  8 times, 20 POSTs whose body never comes, 2 HPACK bombs (16 KiB decoding to 64 MB),
  a rapid reset burst of 500 streams, a CONTINUATION flood.

Output: RSS start/median/max/end per system, flatness over the run after the first 5 minutes
((max-min)/min of the samples), requests ok/failed (by status), CPU seconds; written into
docs/benchmarks.md between <!-- begin soak --> markers with the command.

Usage:
  nice python3 bench/e2e/soak_bench.py [--build-dir build] [--minutes 30] [--rps 25]
      [--no-write] [--no-haproxy]
"""
import argparse
import json
import os
import platform
import shlex
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (  # noqa: E402 (it puts tests/integration on the path)
    cpu_model, cpu_seconds_ns, free_port, h2load_log, haproxy_h2_proxy, loadavg, publish, wait_port)
from h2frames import PREFACE, frame, hpack_int, lit  # noqa: E402 (raw frames: the tests' one copy)
from nrfwd_harness import rss_bytes as rss, write_big_profiles  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SELF_HOST, SELF_PORT = "nrf-soak.seg1.example.com", 18600
VIA = "2.0 nrf-x.seg9.example.com:8080, 2.0 nrf-y.seg8.example.com:8080"
DISC = "/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF"
ID_UDM1 = "7c3d9e20-1b2a-4f5e-8d02-0000000e0001"  # only at nrf-e / nrf-e2
PROFILE = "/nnrf-nfm/v1/nf-instances/" + ID_UDM1
SUBS = "/nnrf-nfm/v1/subscriptions"
SUB_BODY = json.dumps({"nfStatusNotificationUri": "http://smf-1.example.com/notify",
                       "reqNfType": "SMF", "subscrCond": {"nfType": "AMF"}})
FAULTS = ["restart", "blackhole", "reset", "bigdrop"]
RSS_PERIOD = 10.0
WARMUP_MIN = 5

# Expected answer per system and kind (anything else is "failed").
EXPECT = {"nrfwd": {"disc": "200", "fwd": "200", "loop": "508", "post": "201"},
          "haproxy": {"disc": "200", "fwd": "404", "loop": "200", "post": "201"}}


def log(msg):
    print(time.strftime("%H:%M:%S ") + msg, flush=True)


# --------------------------------------------------------------------------
# Processes

class Procs:
    def __init__(self, tmp):
        self.tmp = tmp
        self.all = []

    def start(self, name, cmd, port):
        logf = open(os.path.join(self.tmp, f"{name}.log"), "ab")
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                             start_new_session=True)
        self.all.append(p)
        wait_port(port, p)
        return p

    def stop(self, p, timeout=5):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def stop_all(self):
        for p in reversed(self.all):
            self.stop(p)


def stub_cmd(build, name, port, profiles, fault=None):
    cmd = [f"{build}/app/nrfstub/nrfstub", "--listen", f"127.0.0.1:{port}", "--profiles",
           profiles, "--name", name, "--no-record", "--log-level", "error"]
    return cmd + (["--fault", fault] if fault else [])


def stub_fault(port, doc):
    """PUT /_stub/fault over HTTP/2 with curl (one request per curl)."""
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5",
                        "--http2-prior-knowledge", "-X", "PUT", "-H",
                        "content-type: application/json", "--data-binary", json.dumps(doc),
                        f"http://127.0.0.1:{port}/_stub/fault"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return r.stdout.strip()


# --------------------------------------------------------------------------
# Hostile clients (raw HTTP/2, stdlib only: literal HPACK fields, no table)

def req(method, path, extra=()):
    return (lit(":method", method) + lit(":scheme", "http") + lit(":authority", "soak.test") +
            lit(":path", path) + b"".join(lit(k, v) for k, v in extra))


def hostile_burst(port, hold=15.0):
    """One round of hostile clients against 127.0.0.1:@port; returns how many of
    the held connections the server had closed when @hold ran out."""
    held = []

    def conn(rcv=None):
        s = socket.socket()
        if rcv:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcv)
        s.settimeout(3)
        try:
            s.connect(("127.0.0.1", port))
        except OSError:
            s.close()
            return None
        return s

    def send(s, data):
        try:
            s.sendall(data)
        except OSError:
            pass

    hello = PREFACE + frame(4, 0, 0) + frame(4, 1, 0)  # SETTINGS, ACK of the server's
    for _ in range(100):  # never speak
        s = conn()
        if s:
            held.append(s)
    for _ in range(5):  # window 0, 8 x the 30 KB answer
        s = conn()
        if s:
            send(s, PREFACE + frame(4, 0, 0, struct.pack(">HI", 4, 0)) + frame(4, 1, 0) +
                 b"".join(frame(1, 5, 2 * i + 1, req("GET", DISC)) for i in range(8)))
            held.append(s)
    for _ in range(4):  # 5 POSTs each whose body never comes
        s = conn()
        if s:
            send(s, hello + b"".join(
                frame(1, 4, 2 * i + 1, req("POST", SUBS, [("content-type", "application/json"),
                                                          ("content-length", "1000")])) +
                frame(0, 0, 2 * i + 1, b'{"nfStatu') for i in range(5)))
            held.append(s)
    bomb = (b"\x40" + hpack_int(6, 7) + b"x-bomb" + hpack_int(4000, 7) + b"b" * 4000 + b"\xbe" * 12000)
    for _ in range(2):  # HPACK bomb
        s = conn()
        if s:
            blk = req("GET", DISC) + bomb
            send(s, hello + frame(1, 5, 1, blk[:16384]) + frame(9, 4, 1, blk[16384:]))
            held.append(s)
    s = conn()  # rapid reset
    if s:
        send(s, hello + b"".join(frame(1, 5, 2 * i + 1, req("GET", DISC)) +
                                 frame(3, 0, 2 * i + 1, struct.pack(">I", 8)) for i in range(500)))
        held.append(s)
    s = conn()  # CONTINUATION flood
    if s:
        blk = req("GET", DISC)
        send(s, hello + frame(1, 1, 1, blk[:8]) + frame(9, 0, 1, b"") * 5000)
        held.append(s)
    # hold, reading what comes (except the window-0 ones, which read too: they
    # just never open their window), then count what the server closed
    end = time.monotonic() + hold
    closed = set()
    for s in held:
        s.setblocking(False)
    while time.monotonic() < end and len(closed) < len(held):
        for i, s in enumerate(held):
            if i in closed:
                continue
            try:
                if not s.recv(65536):
                    closed.add(i)
            except BlockingIOError:
                pass
            except OSError:
                closed.add(i)
        time.sleep(0.2)
    for s in held:
        s.close()
    return len(closed), len(held)


# --------------------------------------------------------------------------
# Load

class Load:
    """Per system and kind, h2load at @rps for one minute at a time (--log-file)."""

    def __init__(self, tmp, rps):
        self.tmp = tmp
        self.rps = rps
        self.status = {}   # (system, kind) -> {status: count}
        self.sent = {}     # (system, kind) -> requests asked for
        self.body = os.path.join(tmp, "sub.json")
        with open(self.body, "w") as f:
            f.write(SUB_BODY)

    def cmd(self, kind, port, secs, logf):
        n = self.rps * secs
        base = ["h2load", "-n", str(n), "-c", "1", "-m", "4", "--rps", str(self.rps), "-N", "10",
                "--log-file", logf]
        url = f"http://127.0.0.1:{port}"
        if kind == "disc":
            return base + ["-H", f"via: {VIA}", url + DISC]
        if kind == "fwd":
            return base + [url + PROFILE]
        if kind == "loop":
            return base + ["-H", f"via: {VIA}, 2.0 {SELF_HOST}:{SELF_PORT}", url + DISC]
        return base + ["-d", self.body, "-H", "content-type: application/json", url + SUBS]

    def minute(self, systems, k, secs):
        """Start one h2load per (system, kind); returns the list to wait on."""
        runs = []
        for sysname, port in systems:
            for kind in ("disc", "fwd", "loop", "post"):
                logf = os.path.join(self.tmp, f"h2load-{sysname}-{kind}-{k}.log")
                p = subprocess.Popen(self.cmd(kind, port, secs, logf), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                runs.append((sysname, kind, p, logf, self.rps * secs))
        return runs

    def collect(self, runs, timeout):
        for sysname, kind, p, logf, n in runs:
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            st = self.status.setdefault((sysname, kind), {})
            recs = h2load_log(logf)
            for code, _ in recs:
                code = str(code) if code != -1 else "none"
                st[code] = st.get(code, 0) + 1
            got = len(recs)
            try:
                os.unlink(logf)
            except OSError:
                pass
            if got < n:
                st["none"] = st.get("none", 0) + (n - got)
            self.sent[(sysname, kind)] = self.sent.get((sysname, kind), 0) + n


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--minutes", type=int, default=30)
    ap.add_argument("--rps", type=int, default=25, help="requests/s per kind and system")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--no-haproxy", action="store_true")
    ap.add_argument("--samples", action="store_true",
                    help="also write every RSS sample, fault and status count to ./soak-rss.json")
    args = ap.parse_args()
    build = os.path.abspath(args.build_dir)
    tmp = tempfile.mkdtemp(prefix="nrfwd-soak-")
    P = Procs(tmp)
    samples = {"nrfwd": [], "haproxy": []}
    events = []
    hostile = {"nrfwd": [0, 0], "haproxy": [0, 0]}
    load = Load(tmp, args.rps)
    t_start = time.monotonic()
    try:
        # conf/stub-profiles-a.json plus 24 AMF profiles: a 30 KB AMF discovery answer
        profiles = write_big_profiles(os.path.join(tmp, "profiles-a-big.json"))
        prof_e = os.path.join(ROOT, "conf", "stub-profiles-e.json")
        p_local, p_e, p_e2 = free_port(), free_port(), free_port()
        local = P.start("local", stub_cmd(build, "local", p_local, profiles), p_local)
        P.start("nrf-e", stub_cmd(build, "nrf-e", p_e, prof_e), p_e)
        P.start("nrf-e2", stub_cmd(build, "nrf-e2", p_e2, prof_e), p_e2)

        p_nrfwd = free_port()
        cfg = {
            "generalOptions": {"ocnrfHost": SELF_HOST, "ocnrfPort": SELF_PORT},
            "forwardingOptions": {
                "featureStatus": "ENABLED", "maxForwardAttempts": 2, "maxViaMembers": 16,
                "nrfHostConfig": [
                    {"scheme": "http", "fqdn": "nrf-e.seg2.example.com", "ipv4Address": "127.0.0.1",
                     "port": p_e, "priority": 1},
                    {"scheme": "http", "fqdn": "nrf-e2.seg2.example.com", "ipv4Address": "127.0.0.1",
                     "port": p_e2, "priority": 2}]},
            "runtime": {"listen": [{"address": "127.0.0.1", "port": p_nrfwd}],
                        "management": {"port": 0},
                        "localNrf": {"address": "127.0.0.1", "port": p_local}},
        }
        cfgfile = os.path.join(tmp, "nrfwd.json")
        with open(cfgfile, "w") as f:
            json.dump(cfg, f)
        nrfwd = P.start("nrfwd", [f"{build}/app/nrfwd/nrfwd", "--config", cfgfile, "--workers", "1",
                                  "--log-level", "warn"], p_nrfwd)
        systems = [("nrfwd", p_nrfwd)]
        pids = {"nrfwd": nrfwd.pid}
        sysprocs = {"nrfwd": nrfwd}
        if not args.no_haproxy:
            p_hap = free_port()
            hapcfg = haproxy_h2_proxy(
                os.path.join(tmp, "haproxy.cfg"), f"127.0.0.1:{p_hap}", f"127.0.0.1:{p_local}",
                {"connect": "1s", "client": "10s", "http-request": "5s",
                 "http-keep-alive": "60s", "server": "5s"})
            hap = P.start("haproxy", ["haproxy", "-f", hapcfg, "-db"], p_hap)
            systems.append(("haproxy", p_hap))
            pids["haproxy"] = hap.pid
            sysprocs["haproxy"] = hap
        cpu0 = {s: cpu_seconds_ns(pid) for s, pid in pids.items()}
        stop = threading.Event()

        def sampler():
            while not stop.is_set():
                t = time.monotonic() - t_start
                for s, pid in pids.items():
                    r = rss(pid)
                    if r is not None:
                        samples[s].append((t, r))
                stop.wait(RSS_PERIOD)

        th = threading.Thread(target=sampler, daemon=True)
        th.start()
        log(f"soak: {args.minutes} min, {args.rps} req/s per kind and system; "
            f"nrfwd pid {nrfwd.pid}" + ("" if args.no_haproxy else f", haproxy pid {hap.pid}")
            + f"; logs in {tmp}")

        for k in range(args.minutes):
            m0 = time.monotonic()
            runs = load.minute(systems, k, 60)
            fault = FAULTS[k % len(FAULTS)]
            time.sleep(max(0.0, m0 + 10 - time.monotonic()))
            t_f = time.monotonic() - t_start
            if fault == "restart":
                P.stop(local)
                P.all.remove(local)
                time.sleep(1.0)
                local = P.start("local", stub_cmd(build, "local", p_local, profiles), p_local)
                events.append((t_f, "local NRF restarted (1 s down)"))
            elif fault in ("blackhole", "reset"):
                stub_fault(p_e, {"mode": fault})
            else:
                stub_fault(p_local, {"mode": "bigdrop", "arg": 16384})
            time.sleep(max(0.0, m0 + 30 - time.monotonic()))
            if fault in ("blackhole", "reset"):
                stub_fault(p_e, {"mode": "none"})
                events.append((t_f, f"nrf-e {fault} for 20 s"))
            elif fault == "bigdrop":
                stub_fault(p_local, {"mode": "none"})
                events.append((t_f, "local NRF bigdrop for 20 s"))
            # hostile clients against both systems at once
            res = {}
            ths = [threading.Thread(target=lambda s=s, p=p: res.__setitem__(s, hostile_burst(p)))
                   for s, p in systems]
            for t in ths:
                t.start()
            for t in ths:
                t.join(30)
            for s, (closed, n) in res.items():
                hostile[s][0] += closed
                hostile[s][1] += n
            load.collect(runs, max(5.0, m0 + 75 - time.monotonic()))
            alive = {s: p.poll() is None for s, p in sysprocs.items()}
            last = {s: (samples[s][-1][1] / 1048576 if samples[s] else 0) for s in pids}
            log(f"minute {k + 1}/{args.minutes}: fault {fault}; RSS " +
                ", ".join(f"{s} {last[s]:.1f} MiB" for s in pids) +
                f"; alive {alive}; hostile closed by server {res}")
            if not all(alive.values()):
                log("a system died: stopping")
                break
        stop.set()
        th.join(RSS_PERIOD + 1)
        cpu = {s: cpu_seconds_ns(pid) - cpu0[s] for s, pid in pids.items()}
        alive = {s: p.poll() is None for s, p in sysprocs.items()}
        for s, pid in pids.items():
            r = rss(pid)
            if r is not None:
                samples[s].append((time.monotonic() - t_start, r))
    finally:
        P.stop_all()
    ran_min = (time.monotonic() - t_start) / 60.0

    # ---- figures
    rows = []
    flat = {}
    trend = {}
    for s in pids:
        v = [r for _, r in samples[s]]
        late = [r for t, r in samples[s] if t >= WARMUP_MIN * 60] or v
        mib = lambda x: x / 1048576.0  # noqa: E731
        flat[s] = (max(late) - min(late)) / min(late) * 100.0
        # the trend: medians of 5-minute windows after the warm-up (a hostile
        # burst that happens to be sampled is a spike, not growth)
        wins = {}
        for t, r in samples[s]:
            if t >= WARMUP_MIN * 60:
                wins.setdefault(int(t // 300), []).append(r)
        meds = [statistics.median(w) for _, w in sorted(wins.items())] or [v[-1]]
        trend[s] = (meds, (max(meds) - min(meds)) / min(meds) * 100.0)
        ok = fail = 0
        detail = []
        for kind in ("disc", "fwd", "loop", "post"):
            st = load.status.get((s, kind), {})
            good = st.get(EXPECT[s][kind], 0)
            ok += good
            fail += sum(st.values()) - good
            others = ", ".join(f"{c} {n}" for c, n in sorted(st.items()) if c != EXPECT[s][kind])
            detail.append(f"{kind} {good}/{sum(st.values())}" + (f" ({others})" if others else ""))
        total = ok + fail
        rows.append(f"| {'nrfwd' if s == 'nrfwd' else 'HAProxy 2.6'} | {mib(v[0]):.1f} | "
                    f"{mib(statistics.median(v)):.1f} | {mib(max(v)):.1f} | {mib(v[-1]):.1f} | "
                    f"{mib(min(late)):.1f}..{mib(max(late)):.1f} ({flat[s]:.1f} %) | "
                    f"{' '.join('%.1f' % mib(x) for x in trend[s][0])} ({trend[s][1]:.1f} %) | "
                    f"{ok:,} / {fail:,} ({100.0 * fail / max(total, 1):.2f} %) | "
                    f"{cpu[s]:.1f} | {'yes' if alive[s] else '**no**'} |")
        rows_detail = "; ".join(detail)
        rows.append(f"|  | | | | | | | {rows_detail} | | |")
    load_avg = loadavg()
    cmd = "nice python3 bench/e2e/soak_bench.py " + shlex.join(sys.argv[1:])
    curve = {}
    for s in pids:
        pts = [(t, r) for t, r in samples[s]]
        step = max(1, len(pts) // 12)
        curve[s] = ", ".join(f"{t / 60:.0f}′ {r / 1048576:.1f}" for t, r in pts[::step])
    hostile_txt = "; ".join(f"{s}: {c} of {n} held connections closed by the server within 15 s"
                            for s, (c, n) in hostile.items() if s in pids)
    text = "\n".join([
        "## Soak: nrfwd and HAProxy 2.6 under faults and hostile clients (bench/e2e/soak_bench.py)",
        "",
        f"Command: `{cmd.strip()}` — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"ran {ran_min:.1f} min; {cpu_model()}, {os.cpu_count()} cores, Linux {platform.release()}, "
        f"shared machine (load average {' '.join(load_avg)} at the end).",
        "",
        f"Each system gets the same traffic: 4 kinds × {args.rps} req/s (one h2load each, restarted "
        "every minute): NFDiscover with a 2-member Via, NFProfileRetrieval of a profile only the peers "
        "hold (nrfwd: local 404, then forwarded), NFDiscover with nrfwd's own identity in Via (nrfwd: "
        "508), POST NFStatusSubscribe. nrfwd (1 worker, default timeouts and limits) has a local nrfstub "
        "and two peer nrfstubs; HAProxy (nbthread 1) forwards everything to the same local nrfstub. "
        "Every minute one fault in turn (local nrfstub restarted with 1 s down; peer nrf-e blackholed "
        "20 s; nrf-e resetting every stream 20 s; local nrfstub `bigdrop` 20 s) and a round of hostile "
        "clients against both (100 silent connections, 5 window-0 readers of a 30 KB answer × 8, 20 POSTs "
        "whose body never comes, 2 HPACK bombs, a rapid reset burst of 500, a CONTINUATION flood). RSS "
        f"(VmRSS) every {RSS_PERIOD:.0f} s. Flatness, after the first {WARMUP_MIN} minutes: the spread "
        "(max−min)/min of every sample (a sample taken during a hostile round catches what the round "
        "holds), and of the medians of 5-minute windows (the trend: growth would show here). \"ok\" is "
        "the answer each system gives without faults (HAProxy: the local stub's answer, 404 for the "
        "profile, 200 for the looping request); failed is everything else, mostly the answers during "
        "the faults; `none` is a request without an answer (a stream reset or its connection lost: "
        "h2load stops a client whose connection is lost, so the rest of its minute counts here too).",
        "",
        "| system | RSS start MiB | median | max | end | after 5 min: min..max (spread) | "
        "5-minute medians (spread) | requests ok / failed | CPU s | alive at the end |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "RSS over time (minute′ MiB): " + "; ".join(f"{s}: {c}" for s, c in curve.items()) + ".",
        "",
        f"Hostile clients: {hostile_txt} (on nrfwd the silent connections, the HPACK bombs, the rapid "
        "reset and the CONTINUATION flood are closed; the window-0 readers' streams are reset and the "
        "POSTs answered 408, but those connections stay open until they idle out).",
        "",
        "Faults: " + "; ".join(f"{t / 60:.1f}′ {e}" for t, e in events[:8]) +
        ("; …" if len(events) > 8 else "") + ".",
    ])
    with open(os.path.join(os.getcwd(), "soak-rss.json") if args.samples else os.devnull, "w") as f:
        json.dump({"samples": samples, "events": events,
                   "status": {f"{a}/{b}": v for (a, b), v in load.status.items()}}, f)
    publish(text, "soak", args.no_write)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
