#!/usr/bin/env python3
"""Demo of the four forwarding figures with nrfwd-ctl (check + explain).

For each figure: the NRF that receives the request, the Via it carries, what
the NRF forwarding rules say must happen, and what nrfwd's decision engine answers. Then the
example topology running: by default every NRF in a network namespace with
nrfwd on its DPDK transport (net_af_packet over a veth, lwIP); where DPDK
cannot start (no root, no namespaces, no DPDK build) the reason is printed
and the same scenarios run on loopback with kernel sockets (--kernel forces
that). Exit status 1 when any scenario does not give the expected result.
"""
import argparse
import json
import os
import re
import signal
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


class Loopback:
    """The topology on loopback: kernel sockets, the demo configurations as they are."""

    title = "the example topology running on loopback: nrfwd + nrfstub, requests with curl"

    def __init__(self, build):
        sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
        import nrfwd_harness as H  # noqa: E402 - the integration tests' helpers
        H.BUILD_DIR = build
        self.H = H
        self.h = None

    def begin(self):
        self.h = self.H.Harness(prefix="nrfwd-demo-")

    def stub(self, key, name, profiles, port):
        return self.h.start_stub(name, profiles, port=port)

    def nrfwds(self, specs):
        for key, cfg in specs:
            self.h.start_nrfwd(cfg, name="nrfwd-" + key)

    def curl(self, path):
        return self.H.curl(f"http://127.0.0.1:18080{path}")

    def requests(self, stub):
        return self.H.stub_requests(stub.port)

    def end(self):
        self.h.cleanup()

    def close(self):
        pass


class DpdkUnavailable(Exception):
    """DPDK cannot start here: the reason, for the fallback."""


class Dpdk:
    """The topology in network namespaces on one bridge (tests/dpdk/nrfwd_dpdk_harness.py):
    NRF-A, -E and -G each a namespace with nrfwd on a DPDK port (net_af_packet over a veth,
    the address in lwIP) and its local NRF (nrfstub on a kernel veth); curl in a client
    namespace. The demo configurations are used with their addresses moved onto the fabric."""

    title = ("the example topology in network namespaces: nrfwd on DPDK (net_af_packet, lwIP) "
             "+ nrfstub, requests with curl from a client namespace")
    NRF_PORTS = {18080: "a", 18081: "e", 18082: "g"}

    def __init__(self, build, ipv6=False):
        sys.path.insert(0, os.path.join(ROOT, "tests", "dpdk"))
        import nrfwd_dpdk_harness as D  # noqa: E402 - the dpdk tests' helpers
        self.D = D
        reason = D.cannot_run(build)
        if reason:
            raise DpdkUnavailable(reason)
        # --ipv6: an IPv6-only fabric (the DPDK ports, local NRFs and peers
        # on IPv6 addresses; decision 0065).
        self.ipv6 = ipv6
        self.fab = D.Fabric("demo", build, family=6 if ipv6 else 4)
        if ipv6:
            self.title = self.title.replace("(net_af_packet, lwIP)", "(net_af_packet, lwIP, IPv6)")
        self.hosts = {k: self.fab.host(k) for k in "aeg"}
        self.client = self.fab.host("c")
        self.started = []
        self.first = True

    def begin(self):
        self.started = []

    def stub(self, key, name, profiles, port):
        p = self.fab.start_stub(self.hosts[key], name, profiles, port=port)
        self.started.append(p)
        return p

    def dpdk_cfg(self, key, cfg):
        """A demo configuration on the fabric: listen on the DPDK port, the local NRF
        on its namespace's kernel address, peers at their NRF's DPDK address (a peer
        without an NRF in the demo, such as nrf-b, at the client, where nothing listens)."""
        cfg = json.loads(json.dumps(cfg))
        rt = cfg["runtime"]
        for ls in rt["listen"]:
            ls["address"] = "0.0.0.0"
        if rt.get("localNrf"):
            rt["localNrf"]["address"] = self.hosts[key].ip
        rt["transport"] = "dpdk"
        rt["dpdk"] = ({"ipv6Address": self.fab.dpdk_ip(self.hosts[key]), "ipv6PrefixLength": 64}
                      if self.ipv6 else
                      {"ipv4Address": self.fab.dpdk_ip(self.hosts[key]), "prefixLength": 24})
        hosts = list(cfg["forwardingOptions"].get("nrfHostConfig", []))
        for s in cfg.get("nrfGrowth", {}).get("nrfForwardingOptions", {}).get(
                "nrfHostConfig", {}).get("staticNrfConfigList", []):
            hosts += s.get("nrfHostConfigList", [])
        for p in hosts:
            if p.get("ipv4Address") == "127.0.0.1":
                k = self.NRF_PORTS.get(p.get("port"))
                addr = self.fab.dpdk_ip(self.hosts[k]) if k else self.client.ip
                if self.ipv6:
                    del p["ipv4Address"]
                    p["ipv6Address"] = addr
                else:
                    p["ipv4Address"] = addr
        return cfg

    def nrfwds(self, specs):
        run = [(self.hosts[k], self.dpdk_cfg(k, cfg), {"name": "nrfwd-" + k, "wait": False})
               for k, cfg in specs]
        procs = [self.fab.start_nrfwd(h, cfg, **kw) for h, cfg, kw in run]
        self.started += procs
        for p in procs:
            try:
                self.fab.ready(p)
            except RuntimeError:
                if not self.first:
                    raise
                err = [l for l in p.log().splitlines() if " ERROR " in l]
                raise DpdkUnavailable(re.sub(r"^\S+ ERROR ", "", err[-1]) if err else
                                      "nrfwd did not start on DPDK")
        self.first = False

    def curl(self, path):
        host = self.D.H.hostport_host(self.fab.dpdk_ip(self.hosts['a']))
        return self.fab.curl(self.client, f"http://{host}:18080{path}")

    def requests(self, stub):
        return self.fab.stub_requests(stub)

    def end(self):
        # SIGTERM to all at once (the drains overlap), then wait for each.
        for p in self.started:
            if p.alive():
                os.kill(p.pid, signal.SIGTERM)
        for p in self.started:
            p.stop(timeout=10.0)
            self.fab.procs.remove(p)
        self.started = []

    def close(self):
        self.fab.cleanup()


def live(build, env=None):
    def load(path):
        with open(os.path.join(ROOT, path)) as f:
            return json.load(f)

    env = env or Loopback(build)
    rows = [("scenario", "mode", "request at NRF-A", "Via path (as recorded upstream)", "expected", "got", "")]
    ok = True
    for fig, mode, e_conf, nftype, want_status, want in LIVE:
        env.begin()
        try:
            stubs = {"a": env.stub("a", "nrf-a", "stub-profiles-a.json", 18180)}
            a_cfg = load(f"conf/demo/{mode}/nrf-a.json")
            if e_conf:
                stubs["e"] = env.stub("e", "nrf-e", "stub-profiles-e.json", 18181)
            specs = []
            if mode == "growth":
                stubs["g"] = env.stub("g", "nrf-g", "stub-profiles-g.json", 18182)
                specs.append(("g", load("conf/demo/growth/nrf-g.json")))
            if e_conf:
                specs.append(("e", load(f"conf/demo/{mode}/{e_conf}")))
            specs.append(("a", a_cfg))
            env.nrfwds(specs)
            path = f"/nnrf-disc/v1/nf-instances?target-nf-type={nftype}&requester-nf-type=AMF"
            status, hdrs, body = env.curl(path)
            try:
                doc = json.loads(body or b"{}")
            except ValueError:
                doc = {}
            recs = {k: env.requests(s) for k, s in stubs.items()}
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
        except DpdkUnavailable:
            env.end()
            raise
        except Exception as e:  # noqa: BLE001 - report the scenario as failed, go on
            ok = False
            rows.append((fig, mode, nftype, "-", str(want_status), f"error: {e}".splitlines()[0], "FAIL"))
        finally:
            env.end()
    print(f"\n== {env.title} ==")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    return ok


def live_topology(build, kernel, ipv6=False):
    """The DPDK topology when DPDK can start here, else (reason printed) loopback."""
    if not kernel:
        dp = None
        try:
            dp = Dpdk(build, ipv6)
            return live(build, dp)
        except DpdkUnavailable as e:
            print(f"\n(DPDK cannot start here: {e}; running the topology on loopback "
                  "with kernel sockets instead)")
        finally:
            if dp is not None:
                dp.close()
    return live(build, Loopback(build))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--static", action="store_true", help="only nrfwd-ctl, no running topology")
    ap.add_argument("--kernel", action="store_true",
                    help="run the topology on loopback with kernel sockets, not on DPDK")
    ap.add_argument("--ipv6", action="store_true",
                    help="run the DPDK topology over IPv6 (DPDK ports, local NRFs and peers)")
    args = ap.parse_args()
    build = os.path.abspath(args.build_dir)

    print("== nrfwd-ctl check: the demo configurations (example topology) ==")
    ok = True
    for f in ["conf/example.json", "conf/demo/forwarding/nrf-a.json", "conf/demo/forwarding/nrf-e.json",
              "conf/demo/growth/nrf-a.json", "conf/demo/growth/nrf-e.json", "conf/demo/growth/nrf-g.json"]:
        r = ctl(build, "check", f)
        sys.stdout.write(r.stdout or r.stderr)
        ok &= r.returncode == 0

    print("\n== the four forwarding figures: nrfwd-ctl explain ==")
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
        ok &= live_topology(build, args.kernel, args.ipv6)
    print("\ndemo: " + ("all scenarios as expected" if ok else "SOME SCENARIOS FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
