#!/usr/bin/env python3
"""Helpers shared by the e2e benchmark drivers (stdlib only).

free_port(), wait_port(): start-up of the systems under test on loopback;
cpu_seconds(): utime+stime of a process and its live descendants, from /proc
cpu_seconds_ns(): the same from schedstat, to the nanosecond
(nghttpx forks a worker; the others are single processes);
parse_h2load(): the summary of one h2load run;
write_section(): replace one marked section of docs/benchmarks.md;
haproxy_h2_proxy(): the HAProxy 2.6 configuration every comparison uses
(one thread, h2 on both sides, connections to the upstream reused).
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "integration"))
import h2load_out  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")


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
