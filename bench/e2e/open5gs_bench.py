#!/usr/bin/env python3
"""nrfwd in front of a real Open5GS NRF whose answer over one DATA frame kills its connection.

Open5GS (v2.8) cannot send an answer larger than one DATA frame (16 KiB): its nghttp2 send callback fails
and it drops the whole connection, writing nothing more of what it owed (the PING ACK, the other
streams' answers). This bench registers 40 PCF and 4 AMF profiles at a running-from-here open5gs-nrfd,
then, straight to it and through nrfwd (its local NRF, one worker, defaults) in the same run:
h2load -c4 -m8 -D SECONDS of small AMF discoveries (~2 KB) while 8 PCF discoveries (~20 KB, the poison)
go 0.5 s apart with curl. Reported: the small requests answered 200 of all, what the big ones got, and
whether nrfwd held its local NRF down. docs/failures.md "Isolation" says what nrfwd should do.

Open5GS is not part of this project: build its NRF yourself (docs/testing.md, "Against real NRFs")
and pass the binary. Not part of the tests. Writes docs/benchmarks.md section "open5gs".
Usage: python3 bench/e2e/open5gs_bench.py --nrfd PATH/open5gs-nrfd [--build-dir build]
           [--seconds 6] [--rounds 2] [--no-write]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Pinned, free_port, parse_h2load, publish  # noqa: E402

O5 = "127.0.0.5"
SMALL = "/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=AMF"
BIG = "/nnrf-disc/v1/nf-instances?target-nf-type=PCF&requester-nf-type=AMF"


def profiles(npcf=40, namf=4):
    """(id, NFProfile) pairs: PCFs of ~470 B each (40 make a ~20 KB discovery answer), a few AMFs."""
    out = []
    for i in range(npcf):
        iid = str(uuid.UUID(int=0x5cf00000_0000_4000_8000_000000000000 + i))
        addr = "10.45.%d.%d" % (i // 200, 10 + i % 200)
        out.append((iid, {
            "nfInstanceId": iid, "nfType": "PCF", "nfStatus": "REGISTERED",
            "ipv4Addresses": [addr, "10.46.%d.%d" % (i // 200, 10 + i % 200)],
            "priority": 1, "capacity": 100, "load": 0,
            "nfServices": [{"serviceInstanceId": "pcf-am-%d" % i,
                            "serviceName": "npcf-am-policy-control",
                            "versions": [{"apiVersionInUri": "v1", "apiFullVersion": "1.0.0"}],
                            "scheme": "http", "nfServiceStatus": "REGISTERED",
                            "ipEndPoints": [{"ipv4Address": addr, "port": 7777}],
                            "priority": 1, "capacity": 100, "load": 0}]}))
    for i in range(namf):
        iid = str(uuid.UUID(int=0xa3f00000_0000_4000_8000_000000000000 + i))
        addr = "10.47.0.%d" % (10 + i)
        out.append((iid, {
            "nfInstanceId": iid, "nfType": "AMF", "nfStatus": "REGISTERED",
            "ipv4Addresses": [addr],
            "nfServices": [{"serviceInstanceId": "amf-comm-%d" % i, "serviceName": "namf-comm",
                            "versions": [{"apiVersionInUri": "v1", "apiFullVersion": "1.0.0"}],
                            "scheme": "http", "nfServiceStatus": "REGISTERED",
                            "ipEndPoints": [{"ipv4Address": addr, "port": 7777}]}]}))
    return out


def curl(url, method="GET", data=None, timeout=10):
    """One request (one curl each: Debian's curl 7.88 fails on reused h2c connections): (status, body)."""
    cmd = ["curl", "-s", "--http2-prior-knowledge", "--max-time", str(timeout), "-X", method,
           "-o", "-", "-w", "\n%{http_code}", url]
    if data is not None:
        cmd[1:1] = ["-H", "content-type: application/json", "--data-binary", data]
    r = subprocess.run(cmd, capture_output=True, timeout=timeout + 5)
    body, _, code = r.stdout.rpartition(b"\n")
    return int(code or 0), body


def wait_answer(url, proc, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("%s exited" % proc.args[0])
        if curl(url, timeout=1)[0] != 0:
            return
        time.sleep(0.1)
    raise RuntimeError("%s does not answer" % url)


def measure(base, seconds, big, log_of=None):
    bigs = []

    def big_requests():
        time.sleep(1)
        for _ in range(8):
            t0 = time.monotonic()
            st, body = curl(base + BIG)
            try:
                cause = json.loads(body).get("cause", "-") if st else "-"
            except ValueError:
                cause = "-"
            bigs.append((st, cause, time.monotonic() - t0))
            time.sleep(0.5)
    th = threading.Thread(target=big_requests)
    if big:
        th.start()
    out = subprocess.run(["h2load", "-c4", "-m8", "-D", str(seconds), base + SMALL],
                         capture_output=True, text=True, timeout=seconds + 60).stdout
    if big:
        th.join()
    r = parse_h2load(out)
    # -D: h2load may count a few answers past the requests it calls done
    ok = min(r["status"].get("2xx", 0), r["done"])
    return {"done": r["done"], "ok": ok, "bigs": bigs, "down": log_of() if log_of else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nrfd", required=True, help="an open5gs-nrfd binary built outside this project")
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--seconds", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    build = os.path.abspath(args.build_dir)
    procs = Pinned("nrfwd-open5gs-")
    tmp = procs.tmp
    with procs:
        o5port = free_port()
        yml = os.path.join(tmp, "nrf.yaml")
        with open(yml, "w") as f:
            # time: at the top level is where the NRF reads it; heartbeat 0 keeps profiles
            f.write(f"""logger: {{ file: {{ path: {tmp}/nrf.log }}, level: warn }}
global: {{ max: {{ ue: 1024, peer: 256 }} }}
time: {{ nf_instance: {{ heartbeat: 0 }} }}
nrf:
  serving: [ {{ plmn_id: {{ mcc: 999, mnc: 70 }} }} ]
  sbi: {{ server: [ {{ address: {O5}, port: {o5port} }} ] }}
""")
        o5 = subprocess.Popen([args.nrfd, "-c", yml], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        procs.add(o5)
        direct = f"http://{O5}:{o5port}"
        wait_answer(direct + SMALL, o5)
        for iid, p in profiles():
            st, _ = curl(f"{direct}/nnrf-nfm/v1/nf-instances/{iid}", "PUT", json.dumps(p))
            if st not in (200, 201):
                raise RuntimeError("NFRegister %s: %d" % (iid, st))
        port = free_port()
        cfg = {"generalOptions": {"ocnrfHost": "127.0.0.1", "ocnrfPort": port},
               "forwardingOptions": {"featureStatus": "DISABLED"},
               "runtime": {"listen": [{"address": "127.0.0.1", "port": port}],
                           "localNrf": {"scheme": "http", "address": O5, "port": o5port},
                           "management": {"port": 0}}}
        cpath = os.path.join(tmp, "nrfwd.json")
        with open(cpath, "w") as f:
            json.dump(cfg, f)
        nlog = os.path.join(tmp, "nrfwd.log")
        nrfwd = subprocess.Popen([f"{build}/app/nrfwd/nrfwd", "--config", cpath, "--workers", "1"],
                                 stdout=subprocess.DEVNULL, stderr=open(nlog, "w"))
        procs.add(nrfwd)
        via = f"http://127.0.0.1:{port}"
        wait_answer(via + SMALL, nrfwd)

        def held_down():
            return "local NRF" in open(nlog).read() and " down (" in open(nlog).read()
        rows = []
        for rnd in range(args.rounds):
            for name, base, big, lo in (("straight to Open5GS", direct, True, None),
                                        ("through nrfwd", via, True, held_down),
                                        ("through nrfwd, no big requests", via, False, held_down)):
                r = measure(base, args.seconds, big, lo)
                rows.append((name, r))
                print(f"round {rnd + 1} {name}: {r['ok']} of {r['done']} small 200, "
                      f"bigs {[(s, c) for s, c, _ in r['bigs']]}, held down {r['down']}", flush=True)
        cmd = "python3 bench/e2e/open5gs_bench.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        lines = [
            "## nrfwd in front of a real Open5GS NRF that drops its connection on one big answer",
            "",
            f"`{cmd}` — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
            "shared machine. Open5GS NRF (v2.8, built outside the project) with 40 PCF and 4 AMF "
            f"profiles; h2load `-c4 -m8 -D {args.seconds}` of AMF discoveries (~2 KB answers) while 8 PCF "
            "discoveries (~20 KB: Open5GS drops its whole connection on them, writing nothing more) go "
            "0.5 s apart; nrfwd with Open5GS as its local NRF, one worker, defaults. Each round, in order:",
            "",
            "| round | path | small requests 200 / all | the 8 big ones | local NRF held down |",
            "|---|---|---|---|---|",
        ]
        for i, (name, r) in enumerate(rows):
            bg = {}
            for st, cause, _ in r["bigs"]:
                k = f"{st} {cause}" if st else "no answer (connection dropped)"
                bg[k] = bg.get(k, 0) + 1
            lines.append(f"| {i // 3 + 1} | {name} | {r['ok']} / {r['done']} | "
                         + (", ".join(f"{v} × {k}" for k, v in bg.items()) or "—") + " | "
                         + ("—" if r["down"] is None else ("yes" if r["down"] else "never")) + " |")
        lines += ["", "Before decision 0052 (lost streams sent again together, one dead connection "
                  "holding the local NRF down), the same load through nrfwd failed 6 508 of 20 626 small "
                  "requests."]
        publish("\n".join(lines), "open5gs", args.no_write)


if __name__ == "__main__":
    main()
