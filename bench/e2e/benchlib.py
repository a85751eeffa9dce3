#!/usr/bin/env python3
"""Helpers shared by the e2e benchmark drivers (stdlib only).

free_port(), wait_port(): start-up of the systems under test on loopback;
cpu_seconds(): utime+stime of a process and its live descendants, from /proc
cpu_seconds_ns(): the same from schedstat, to the nanosecond
(nghttpx forks a worker; the others are single processes);
parse_h2load(): the summary of one h2load run;
write_section(): replace one marked section of docs/benchmarks.md;
haproxy_h2_proxy(): the HAProxy 2.6 configuration every comparison uses
(one thread, h2 on both sides, connections to the upstream reused);
nrfstub_cmd(), nghttpx_cmd(): the upstream and the nghttpx comparison;
Pinned: the processes of a run, each on its core, stopped at the end;
h2load_log(), pct_ms(), add_latency(): h2load --log-file and its latencies;
mmm(), fmt_mmm(): median (min..max); md_table(): a Markdown table;
cpu_model(), loadavg(), publish(): the report's machine line and where it goes.
"""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "integration"))
import h2load_out  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def nrfstub_cmd(build, port, profiles="stub-profiles-a.json", name="upstream", extra=()):
    """nrfstub of @build on 127.0.0.1:@port serving conf/@profiles, recording
    off, errors only; @extra: more options (before --log-level)."""
    return [f"{build}/app/nrfstub/nrfstub", "--listen", f"127.0.0.1:{port}", "--profiles",
            f"{ROOT}/conf/{profiles}", "--name", name, "--no-record", *extra,
            "--log-level", "error"]


def nghttpx_cmd(port, upstream):
    """nghttpx with one worker, h2c on @port, h2 to the backend @upstream (up
    to 8 connections), no logs. --conf=/dev/null: the packaged
    /etc/nghttpx/nghttpx.conf adds a frontend on port 3000 (a second nghttpx
    then fails to bind it)."""
    return ["nghttpx", "--conf=/dev/null", "-n1", f"--frontend=127.0.0.1,{port};no-tls",
            f"--backend=127.0.0.1,{upstream};;proto=h2", "--backend-connections-per-host=8",
            "--no-ocsp", "--errorlog-file=/dev/null", "--accesslog-file=/dev/null"]


class Pinned:
    """The processes of one run, each pinned to a core, and a new temporary
    directory, .tmp (named @prefix...), for their stderr and whatever else
    the run writes; stop() ends them and removes it, as does leaving a
    `with` block on it."""

    def __init__(self, prefix):
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.procs = []

    def start(self, cmd, core, port, **kw):
        """Start @cmd on @core and wait until it listens on @port; on failure
        RuntimeError with the end of its stderr. @kw: more Popen arguments."""
        log = os.path.join(self.tmp, f"{os.path.basename(cmd[0])}-{port}.log")
        p = subprocess.Popen(["taskset", "-c", str(core), *cmd], stdout=subprocess.DEVNULL,
                             stderr=open(log, "w"), **kw)
        self.procs.append(p)
        try:
            wait_port(port, p)
        except RuntimeError as e:
            raise RuntimeError(f"{cmd[0]}: {e}: {open(log).read()[-2000:]}") from None
        return p

    def nrfstub(self, build, core=0, profiles="stub-profiles-a.json", name="upstream", extra=()):
        """Start nrfstub_cmd() on a free port on @core; returns the port."""
        port = free_port()
        self.start(nrfstub_cmd(build, port, profiles, name, extra), core, port)
        return port

    def add(self, p):
        """Stop @p with the others."""
        self.procs.append(p)
        return p

    def stop(self):
        """SIGTERM to all, SIGKILL to any still there after 5 s; .tmp removed."""
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def h2load_log(path):
    """h2load --log-file: [(status, microseconds), ...]; status -1: failed.
    [] when the file is not there."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 3:
                    out.append((int(p[1]), int(p[2])))
    except OSError:
        pass
    return out


def pct_ms(us, q):
    """The @q quantile of @us (microseconds) in milliseconds; NaN when empty."""
    v = sorted(us)
    return v[min(len(v) - 1, int(q * len(v)))] / 1000.0 if v else float("nan")


def add_latency(res, logfile):
    """Set res["p50"], res["p99"] (ms) from the h2load --log-file @logfile,
    when it has any request. Returns @res."""
    us = [t for _, t in h2load_log(logfile)]
    if us:
        res["p50"] = pct_ms(us, 0.5)
        res["p99"] = pct_ms(us, 0.99)
    return res


def mmm(v):
    """(median, min, max) of @v."""
    return statistics.median(v), min(v), max(v)


def fmt_mmm(t, f="{:.2f}"):
    """"median (min..max)" of an mmm() triple, each with the format @f."""
    return f"{f.format(t[0])} ({f.format(t[1])}..{f.format(t[2])})"


def md_table(head, rows):
    """The lines of a Markdown table: the cells of @head, the rule under
    them, then each of @rows (a list of cells)."""
    return (["| " + " | ".join(head) + " |", "|---|" + "---|" * (len(head) - 1)] +
            ["| " + " | ".join(r) + " |" for r in rows])


def cpu_model():
    """The CPU's model name ("" when /proc/cpuinfo does not say)."""
    try:
        return [ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                if ln.startswith("model name")][0]
    except (OSError, IndexError):
        return ""


def loadavg():
    """The 1, 5 and 15 minute load averages, as text."""
    return open("/proc/loadavg").read().split()[:3]


def publish(text, key, no_write=False):
    """Print the report @text and, unless @no_write, put it in
    docs/benchmarks.md as section @key."""
    print(text)
    if not no_write:
        write_section(os.path.join(ROOT, "docs", "benchmarks.md"), key, text)


def haproxy_h2_proxy(path, listen, upstream, timeouts=None, frontend_rules=""):
    """Write HAProxy's configuration for the side-by-side runs to @path: one
    thread, an h2 (cleartext) frontend on @listen ("ADDR:PORT") and one h2
    server @upstream ("ADDR:PORT"), with http-reuse always. @timeouts: the
    defaults section's timeout lines (name -> value), else connect 1s,
    client 30s, server 30s. @frontend_rules: lines put in the frontend
    before its default_backend (each indented, each ending in a newline).
    Returns @path."""
    t = timeouts or {"connect": "1s", "client": "30s", "server": "30s"}
    with open(path, "w") as f:
        f.write("global\n    nbthread 1\n    log stdout format raw local0 emerg\n"
                "defaults\n    mode http\n" +
                "".join(f"    timeout {k} {v}\n" for k, v in t.items()) +
                f"frontend fe\n    bind {listen} proto h2\n{frontend_rules}    default_backend be\n"
                f"backend be\n    http-reuse always\n    server s1 {upstream} proto h2\n")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} not listening")


def children(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def cpu_seconds(pid):
    """utime+stime of @pid (all threads) and its live descendants."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # fields[11], fields[12] are utime, stime (14th and 15th of the full line)
        total = (int(fields[11]) + int(fields[12])) / CLK
    except OSError:
        return 0.0
    return total + sum(cpu_seconds(c) for c in children(pid))


def cpu_seconds_ns(pid):
    """On-CPU time of @pid's live threads and live descendants, from
    /proc/PID/task/TID/schedstat (nanoseconds): no 10 ms tick rounding, which
    is 4-5 % of a 0.2 s sample. Falls back to cpu_seconds() without it."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return cpu_seconds(pid)
    return total / 1e9 + sum(cpu_seconds_ns(c) for c in children(pid))


def write_section(path, key, text):
    """Replace the text between <!-- begin KEY --> and <!-- end KEY --> in
    @path, or append the block; other sections are left alone."""
    begin, end = f"<!-- begin {key} -->", f"<!-- end {key} -->"
    doc = open(path).read() if os.path.exists(path) else "# nrfwd benchmarks\n"
    block = f"{begin}\n{text}\n{end}"
    if begin in doc and end in doc:
        doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)


def parse_h2load(out):
    """h2load's summary: rps, secs, ok (succeeded), done, failed, errored,
    status ({"2xx": n, ...}), and the TLS lines (cipher) when present.
    Parsed by tests/integration/h2load_out.py, shared with the tests."""
    r = h2load_out.parse(out)
    res = {"ok": r.get("succeeded", 0), "done": r.get("done", 0), "failed": r.get("failed", 0),
           "errored": r.get("errored", 0), "rps": r.get("rps", 0.0), "status": r["status"],
           "cipher": r["cipher"]}
    if "seconds" in r:
        res["secs"] = r["seconds"]
    return res
