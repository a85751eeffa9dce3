#!/usr/bin/env python3
"""nrfwd on DPDK vs nrfwd on kernel sockets vs HAProxy 2.6, one veth pair, one run.

Two network namespaces joined by one veth pair: the client side (h2load and
the upstream nrfstub, pinned to core 0) and the proxy side (the proxy under
test, on core 1). The proxy end of the veth carries both the DPDK port
(net_af_packet; its address lives in lwIP) and a kernel address for the
kernel-socket proxies, so every system sees the same link and the same
upstream. Request: GET NFDiscover with a 3-member Via, forwarded to the
upstream (a peer NRF). Systems are interleaved in each round; the DPDK
nrfwd is started for its slot only (its af_packet socket would otherwise
also copy the other systems' frames); the kernel nrfwd runs a second time
with TSO/GSO off on its veth end (MSS-sized frames, like lwIP's); each
figure is the median over the rounds with (min..max).

Per system: requests/s, p50/p99 latency (h2load --log-file), and CPU per
request measured several ways:
  - proxy: DPDK busy cycles (nrfwd_dpdk_cycles_total{kind="busy"} from its
    /metrics, the loop's iterations that did work, h2/rt included) / requests;
    kernel proxies: utime+stime of the process / requests;
  - proxy process: utime+stime for every proxy (DPDK: polling included, time
    preempted by other users of the core not);
  - bench tasks: h2load + upstream + proxy + irq/softirq of both cores;
  - core 1: everything that ran on the proxy's core (/proc/stat), which for
    DPDK includes the poll loop's spinning between bursts;
  - machine: both cores (client and upstream included, the same for all).
Then one perf record (-e cpu-clock, core 1) per nrfwd transport: where the
time goes, by component.

Writes the section between <!-- begin dpdk --> / <!-- end dpdk --> of
docs/benchmarks.md. Not part of the tests. Needs root. Usage:
  python3 bench/e2e/dpdk_bench.py [--build-dir build] [--requests 100000]
      [--rounds 5] [--clients 8] [--streams 32] [--dpdk-opt KEY=JSON]... [--no-perf] [--mtu 1500]
      [--no-write] [--alt-build DIR] [--hugepages] [--rps] [--warmup S]
Every measured run follows --warmup S seconds (default 2) of the same load
on the same process, not counted: each round measures the steady state.
--own (decision 0035): only the DPDK nrfwd (and --alt-build's)
against the kernel nrfwd; the DPDK path's own cost = busy cycles minus the
cycles inside the device's RX and TX calls, scaled by the share of its runnable time
the worker thread was on the CPU; writes the dpdk-own section. --perf-keep DIR
records call graphs and keeps the perf data. --own measures 300 000 requests
per run unless --requests says otherwise (several seconds a round).
--icount-only (decision 0042): callgrind only (--callgrind N, default 3000),
instructions per forwarded request by object and by function, this build and
--alt-build's in the same run, --icount-repeat R times; prints, writes nothing;
--keep-cg DIR keeps the callgrind files for callgrind_annotate.
--alt-build adds a second DPDK nrfwd from another build directory to every
round (e.g. one configured with -Dlwip=system: Debian's liblwip against the
own lwIP build of decision 0010), with its own perf run.
--own --vlan N (decision 0066): two more DPDK systems, the same build behind
a switch port pair (bench/dpdk_l2bridge in a namespace of its own, on core
0), untagged and with runtime.dpdk.vlan N (the switch tags and untags);
writes the dpdk-own-vlan section.
--device memif (decision 0050): the DPDK nrfwd's port is net_memif to
bench/dpdk_l2bridge (built with DPDK), which joins it to the veth on core 0,
so that no kernel work for the device runs on the nrfwd's core; with --own,
--device af_packet,memif measures both as systems of the same rounds.
--ipv6 (decision 0065, with --own or --icount-only): one more system, the
same DPDK nrfwd (dual stack) with clients and upstream over IPv6, in the
same rounds as the IPv4 one.
"""
import argparse
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "dpdk"))
sys.path.insert(0, os.path.join(ROOT, "bench", "e2e"))
import nrfwd_dpdk_harness as D  # noqa: E402
from benchlib import (  # noqa: E402
    CLK, add_latency, cpu_model, cpu_seconds, fmt_mmm, haproxy_h2_proxy, md_table, mmm, publish)

VIA = "2.0 nrf-x.seg9.example.com:8080, 2.0 nrf-y.seg8.example.com:8080, 2.0 nrf-z.seg7.example.com:8080"
SELF = ("nrf-bench.seg1.example.com", 18500)
PATH = "/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF"
NET = "10.88.0"
CLIENT_IP, DPDK_IP, KERN_IP = NET + ".1", NET + ".2", NET + ".3"
# --vlan N: the client end's VLAN sub-interface and the tagged DPDK port.
VLAN_NET = "10.89.0"
VLAN_CLIENT_IP, VLAN_DPDK_IP = VLAN_NET + ".1", VLAN_NET + ".2"
# --ipv6 (decision 0065): the client end also has an IPv6 address, the DPDK
# nrfwd is dual stack and one more system takes requests over IPv6 and
# forwards them over IPv6 to an upstream on the client's IPv6 address.
CLIENT_IP6, DPDK_IP6 = "fd88::1", "fd88::2"
UP_PORT, NRFWD_PORT, HAP_PORT, MGMT_PORT = 9000, 8080, 8081, 19500
WARM_BATCH = 20000  # requests per h2load run of the warm-up (measure())
DPDK_COMM = "rte-worker-1"  # the EAL's name for the data-path lcore's thread (-l 0,1)
# What Bench.dpdk_counters() reads from /metrics, in the order of its answer:
# (start of the line, a label it carries).
DPDK_COUNTERS = (
    ('nrfwd_dpdk_cycles_total{', 'kind="busy"'), ("nrfwd_requests_total{", ""),
    ("nrfwd_dpdk_tsc_hz ", ""), ('nrfwd_dpdk_cycles_total{', 'kind="tx"'),
    ('nrfwd_dpdk_frames_total{', 'dir="rx"'), ('nrfwd_dpdk_frames_total{', 'dir="tx"'),
    ('nrfwd_dpdk_cycles_total{', 'kind="rx"'), ('nrfwd_dpdk_cycles_total{', 'kind="all"'),
    ('nrfwd_dpdk_iterations_total{', 'kind="busy"'),
)


def children_cpu():
    """CPU seconds of the waited-for children (h2load runs as one)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def softirq_seconds():
    """irq + softirq seconds of all CPUs (/proc/stat): receive work not
    charged to any task."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[5] + v[6]) / CLK


def thread_sched_ns(pid, comm):
    """(on-CPU ns, ns waiting on a run queue) of @pid's thread named @comm
    (/proc/PID/task/TID/schedstat)."""
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() != comm:
                    continue
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                v = f.read().split()
                return int(v[0]), int(v[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0, 0


def utime_seconds(pid):
    """User-mode CPU seconds of @pid (all threads): no kernel time at all."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[11]) / CLK
    except OSError:
        return 0.0


def cores_busy():
    """Busy seconds per CPU from /proc/stat (all but idle and iowait)."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if re.match(r"cpu\d+ ", line):
                v = [int(x) for x in line.split()[1:]]
                out[int(line.split()[0][3:])] = (sum(v) - v[3] - v[4]) / CLK
    return out


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build_dir)
        self.tag = "nfb%d" % (os.getpid() % 100000)
        self.tmp = tempfile.mkdtemp(prefix="nrfwd-dpdkbench-")
        self.ns_c, self.ns_p = self.tag + "-c", self.tag + "-p"
        self.dev_c, self.dev_p = self.tag + "c", self.tag + "p"
        self.namespaces = []
        self.procs = []
        self.prefixes = []
        # Plain memory unless asked: hugepages on this shared machine come
        # and go with the other users' tests.
        self.mem = D.eal_memory() if getattr(args, "hugepages", False) else ["--no-huge", "--no-shconf"]

    def jumbo(self):
        """--mtu above 1500: the veth pair, the kernel proxies and the DPDK
        port (runtime.dpdk.mtu, af_packet framesz) all on jumbo frames."""
        return getattr(self.args, "mtu", 1500) > 1500

    # ---- topology ---------------------------------------------------------
    def setup(self):
        for ns in (self.ns_c, self.ns_p):
            D.sh("ip", "netns", "add", ns)
            self.namespaces.append(ns)
            for k in ("all", "default"):
                D.sh("sysctl", "-qw", f"net.ipv6.conf.{k}.disable_ipv6=1", ns=ns, check=False)
            D.sh("ip", "link", "set", "lo", "up", ns=ns)
        D.sh("ip", "link", "add", self.dev_c, "netns", self.ns_c, "type", "veth", "peer", "name",
             self.dev_p, "netns", self.ns_p)
        # Client end: full checksums, MTU frames (lwIP checks checksums in
        # software). Proxy end: the kernel's defaults (offloads on) for the
        # kernel-socket proxies, no GRO into af_packet.
        D.sh("ethtool", "-K", self.dev_c, "tx", "off", "tso", "off", "gso", "off", ns=self.ns_c)
        D.sh("ethtool", "-K", self.dev_p, "gro", "off", ns=self.ns_p, check=False)
        if getattr(self.args, "rps", False):
            # Each side's receive work on its own core, as a NIC's interrupt
            # and softirq would put it: the client end's (h2load, upstream)
            # on core 0, the proxy end's on core 1. Without it a veth runs
            # the receiver's IP/TCP input in the sender's context.
            for ns, dev, mask in ((self.ns_c, self.dev_c, "1"), (self.ns_p, self.dev_p, "2")):
                D.sh("sh", "-c", f"echo {mask} > /sys/class/net/{dev}/queues/rx-0/rps_cpus", ns=ns)
        mtu = getattr(self.args, "mtu", 1500)
        if mtu != 1500:
            D.sh("ip", "link", "set", self.dev_c, "mtu", str(mtu), ns=self.ns_c)
            D.sh("ip", "link", "set", self.dev_p, "mtu", str(mtu), ns=self.ns_p)
        D.sh("ip", "addr", "add", CLIENT_IP + "/24", "dev", self.dev_c, ns=self.ns_c)
        D.sh("ip", "addr", "add", KERN_IP + "/24", "dev", self.dev_p, ns=self.ns_p)
        if getattr(self.args, "ipv6", False):
            # The client end only: the proxy end's kernel stays without
            # IPv6 (it would answer for the DPDK port's link-local address).
            for dev in ("lo", self.dev_c):
                D.sh("sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=0", ns=self.ns_c)
            D.sh("ip", "addr", "add", CLIENT_IP6 + "/64", "dev", self.dev_c, "nodad", ns=self.ns_c)
        for ns, dev in ((self.ns_c, self.dev_c), (self.ns_p, self.dev_p)):
            D.sh("ip", "link", "set", dev, "up", ns=ns)
        if getattr(self.args, "vlan", 0):
            self.setup_vlan()

    def setup_vlan(self):
        """--vlan N: the tagged DPDK nrfwd's own link. Its port (af_packet)
        is on a veth whose other end is the trunk of a VLAN switch port pair
        (bench/dpdk_l2bridge --vlan N, in a namespace of its own, on core 0
        with the client); the access port is a veth to the client's
        namespace, where h2load and a second upstream use VLAN_CLIENT_IP.
        (A VLAN sub-interface of the client's veth would do where the kernel
        has 802.1Q; this machine's has not.)"""
        self.ns_s = self.tag + "-s"
        D.sh("ip", "netns", "add", self.ns_s)
        self.namespaces.append(self.ns_s)
        self.dev_t, trunk = self.tag + "t", self.tag + "u"
        access, client = self.tag + "v", self.tag + "w"
        D.sh("ip", "link", "add", self.dev_t, "netns", self.ns_p, "type", "veth", "peer", "name",
             trunk, "netns", self.ns_s)
        D.sh("ip", "link", "add", access, "netns", self.ns_s, "type", "veth", "peer", "name",
             client, "netns", self.ns_c)
        for ns, dev in ((self.ns_p, self.dev_t), (self.ns_s, trunk), (self.ns_s, access)):
            D.sh("ethtool", "-K", dev, "gro", "off", ns=ns, check=False)
            D.sh("ip", "link", "set", dev, "up", ns=ns)
        D.sh("ethtool", "-K", client, "tx", "off", "tso", "off", "gso", "off", ns=self.ns_c)
        D.sh("ip", "addr", "add", VLAN_CLIENT_IP + "/24", "dev", client, ns=self.ns_c)
        D.sh("ip", "link", "set", client, "up", ns=self.ns_c)
        self.sw_trunk, self.sw_access = trunk, access

    def start_switch(self, n, vlan):
        """The switch port pair of --vlan for one DPDK nrfwd: tagging VLAN
        @vlan, or plain (0: the untagged nrfwd on the same path)."""
        prefix = f"{self.tag}sw{n}"
        self.prefixes.append(prefix)
        return self.spawn(f"switch-{n}", self.ns_s, [
            "taskset", "-c", "0", f"{self.build}/bench/dpdk_l2bridge", "--no-pci", "--no-telemetry",
            "--no-huge", "--no-shconf", "-m", "128", "-l", "0", f"--file-prefix={prefix}",
            f"--vdev=net_af_packet0,iface={self.sw_trunk},qpairs=1,qdisc_bypass=1",
            f"--vdev=net_af_packet1,iface={self.sw_access},qpairs=1,qdisc_bypass=1",
            "--", "--idle-us", "20"] + (["--vlan", str(vlan)] if vlan else []),
            wait_line=r"dpdk_l2bridge: forwarding")

    def spawn(self, name, ns, cmd, wait_port=None, wait_line=None, ip=None, wait_s=20):
        log = open(os.path.join(self.tmp, name + ".log"), "w")
        p = subprocess.Popen(["ip", "netns", "exec", ns] + cmd, stdin=subprocess.DEVNULL,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        p.logpath = log.name
        self.procs.append(p)
        end = time.time() + wait_s
        while time.time() < end:
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited:\n" + open(p.logpath).read()[-2000:])
            if wait_line and re.search(wait_line, open(p.logpath).read()):
                return p
            if wait_port and subprocess.run(
                    ["ip", "netns", "exec", ns, "bash", "-c", f"exec 3<>/dev/tcp/{ip}/{wait_port}"],
                    stderr=subprocess.DEVNULL).returncode == 0:
                return p
            time.sleep(0.05)
        raise RuntimeError(f"{name} did not start:\n" + open(p.logpath).read()[-2000:])

    def stop(self, p):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p in self.procs:
            self.procs.remove(p)
        if getattr(p, "bridge", None):
            self.stop(p.bridge)

    def cleanup(self):
        for p in list(self.procs):
            self.stop(p)
        for ns in self.namespaces:
            D.sh("ip", "netns", "del", ns, check=False)
        for prefix in self.prefixes:
            try:
                os.rmdir(os.path.join("/var/run/dpdk", prefix))
            except OSError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def offload(self, on):
        v = "on" if on else "off"
        D.sh("ethtool", "-K", self.dev_p, "tso", v, "gso", v, ns=self.ns_p, check=False)

    # ---- systems -----------------------------------------------------------
    def nrfwd_cfg(self, dpdk, vlan=None, v6=False):
        cfg = {
            "generalOptions": {"ocnrfHost": SELF[0], "ocnrfPort": SELF[1]},
            "forwardingOptions": {"featureStatus": "ENABLED", "maxForwardAttempts": 2,
                                  "nrfHostConfig": [{"scheme": "http", "fqdn": "nrf-up.seg2.example.com",
                                                     "ipv4Address": CLIENT_IP if vlan is None
                                                     else VLAN_CLIENT_IP,
                                                     "port": UP_PORT}]},
            "runtime": {"listen": [{"address": "0.0.0.0" if dpdk else KERN_IP, "port": NRFWD_PORT}],
                        "management": {"address": "127.0.0.1", "port": MGMT_PORT if dpdk else 0},
                        "limits": {"maxConcurrentStreams": 256}},
        }
        if dpdk:
            cfg["runtime"]["transport"] = "dpdk"
            cfg["runtime"]["dpdk"] = {"ipv4Address": DPDK_IP if vlan is None else VLAN_DPDK_IP,
                                      "prefixLength": 24}
            if vlan:
                cfg["runtime"]["dpdk"]["vlan"] = vlan
            if v6:
                cfg["runtime"]["dpdk"].update({"ipv6Address": DPDK_IP6, "ipv6PrefixLength": 64})
                cfg["runtime"]["listen"][0]["address"] = "::"
                cfg["forwardingOptions"]["nrfHostConfig"] = [
                    {"scheme": "http", "fqdn": "nrf-up.seg2.example.com",
                     "ipv6Address": CLIENT_IP6, "port": UP_PORT}]
            if self.jumbo():
                cfg["runtime"]["dpdk"]["mtu"] = self.args.mtu
            for kv in getattr(self.args, "dpdk_opt", None) or []:
                k, v = kv.split("=", 1)
                cfg["runtime"]["dpdk"][k] = json.loads(v)
        path = os.path.join(self.tmp, "nrfwd-%s%s.json" % ("dpdk" if dpdk else "kernel",
                                                          ("" if vlan is None else "-sw%d" % vlan)
                                                          + ("-v6" if v6 else "")))
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path

    def start_upstream(self):
        self.upstream = self.spawn("upstream", self.ns_c, [
            "taskset", "-c", "0", f"{self.build}/app/nrfstub/nrfstub", "--listen",
            f"{CLIENT_IP}:{UP_PORT}", "--profiles", f"{ROOT}/conf/stub-profiles-a.json",
            "--name", "upstream", "--no-record", "--log-level", "error"],
            wait_port=UP_PORT, ip=CLIENT_IP)
        if getattr(self.args, "vlan", 0):
            # The tagged nrfwd's upstream: the same stub on the VLAN's address.
            self.spawn("upstream-vlan", self.ns_c, [
                "taskset", "-c", "0", f"{self.build}/app/nrfstub/nrfstub", "--listen",
                f"{VLAN_CLIENT_IP}:{UP_PORT}", "--profiles", f"{ROOT}/conf/stub-profiles-a.json",
                "--name", "upstream", "--no-record", "--log-level", "error"],
                wait_port=UP_PORT, ip=VLAN_CLIENT_IP)
        self.upstream4 = self.cur_upstream = self.upstream
        if getattr(self.args, "ipv6", False):
            self.upstream6 = self.spawn("upstream6", self.ns_c, [
                "taskset", "-c", "0", f"{self.build}/app/nrfstub/nrfstub", "--listen",
                f"[{CLIENT_IP6}]:{UP_PORT}", "--profiles", f"{ROOT}/conf/stub-profiles-a.json",
                "--name", "upstream6", "--no-record", "--log-level", "error"],
                wait_line=r"listening on")

    def start_kernel_nrfwd(self):
        return self.spawn("nrfwd-kernel", self.ns_p, [
            "taskset", "-c", "1", f"{self.build}/app/nrfwd/nrfwd", "--config", self.nrfwd_cfg(False),
            "--workers", "1", "--log-level", "warn"], wait_port=NRFWD_PORT, ip=KERN_IP)

    def start_haproxy(self):
        cfg = haproxy_h2_proxy(os.path.join(self.tmp, "haproxy.cfg"), f"{KERN_IP}:{HAP_PORT}",
                               f"{CLIENT_IP}:{UP_PORT}")
        return self.spawn("haproxy", self.ns_p, ["taskset", "-c", "1", "haproxy", "-f", cfg, "-db"],
                          wait_port=HAP_PORT, ip=KERN_IP)

    def af_packet_vdev(self, iface=None):
        return (f"net_af_packet0,iface={iface or self.dev_p},qpairs=1,qdisc_bypass=1"
                + (",framesz=9216,blocksz=36864" if self.jumbo() else ""))

    def start_bridge(self, n, build):
        """--device memif (decision 0050): dpdk_l2bridge joins a memif
        port (server end; the DPDK nrfwd is the client) and an af_packet
        port on the proxy's veth end, on core 0 with h2load and the
        upstream. The veth's kernel side then runs in the bridge, not in
        the nrfwd's device calls. @return (process, the nrfwd's vdev)."""
        prefix = f"{self.tag}b{n}"
        self.prefixes.append(prefix)
        cmd, client = D.memif_bridge(build, prefix, os.path.join(self.tmp, f"memif{n}.sock"),
                                     self.af_packet_vdev())
        bridge = self.spawn(f"bridge-{n}", self.ns_p, cmd, wait_line=r"dpdk_l2bridge: forwarding")
        return bridge, client

    def start_dpdk_nrfwd(self, n, build=None, callgrind=None, device=None, vlan=None, v6=False):
        """@vlan: None, the port on the veth to the client; else on the
        --vlan switch's trunk, tagged with @vlan (0: untagged). @v6: dual
        stack, listening on both families (--ipv6)."""
        prefix = f"{self.tag}d{n}"
        self.prefixes.append(prefix)
        bridge, vdev = None, self.af_packet_vdev(None if vlan is None else self.dev_t)
        if vlan is not None:
            bridge = self.start_switch(n, vlan)
        elif (device or self.args.devices[0]) == "memif":
            bridge, vdev = self.start_bridge(n, build or self.build)
        eal = ["--no-pci", "--no-telemetry", "-l", "0,1", f"--file-prefix={prefix}"] + self.mem + [
            "--vdev=" + vdev] + (["-m", "512"] if self.jumbo() and "--no-huge" in self.mem else [])
        cmd = [f"{build or self.build}/app/nrfwd/nrfwd"] + eal + [
            "--", "--config", self.nrfwd_cfg(True, vlan, v6), "--log-level", "info"]
        if callgrind:
            cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                   f"--callgrind-out-file={callgrind}"] + cmd
        if shutil.which("unshare"):
            cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   'mount -t tmpfs none /sys/bus/pci/devices && exec "$0" "$@"'] + cmd
        try:
            p = self.spawn(f"nrfwd-dpdk-{n}", self.ns_p, cmd, wait_line=r"nrfwd management on",
                           wait_s=180 if callgrind else 20)
        except Exception:
            if bridge:
                self.stop(bridge)
            raise
        p.bridge = bridge
        return p

    def icount(self, n, build, requests, device=None, vlan=None, v6=False):
        """Instructions per forwarded request of the DPDK nrfwd of @build,
        counted by callgrind (exact, unlike CPU time here): instrumentation
        on after a warm-up, @requests requests, a dump. The whole process is
        counted: the worker (its idle polling included, which is little
        under valgrind's slowness) and the control thread."""
        out = os.path.join(self.tmp, f"cg.{n}")
        p = self.start_dpdk_nrfwd(200 + n, build, callgrind=out, device=device, vlan=vlan, v6=v6)
        ip = f"[{DPDK_IP6}]" if v6 else DPDK_IP if vlan is None else VLAN_DPDK_IP
        try:
            log = os.path.join(self.tmp, "lat.log")
            self.h2load(ip, NRFWD_PORT, 2000, log)
            subprocess.run(["callgrind_control", "-i", "on", str(p.pid)], capture_output=True)
            res = self.h2load(ip, NRFWD_PORT, requests, log)
            subprocess.run(["callgrind_control", "-d", str(p.pid)], capture_output=True)
            subprocess.run(["callgrind_control", "-i", "off", str(p.pid)], capture_output=True)
        finally:
            self.stop(p)
        dumps = sorted(f for f in os.listdir(self.tmp) if f.startswith(f"cg.{n}."))
        total, objs, funcs = 0, {}, {}
        for f in dumps[:1]:
            path = os.path.join(self.tmp, f)
            if getattr(self.args, "keep_cg", None):
                shutil.copy(path, os.path.join(self.args.keep_cg, f"callgrind.{n}"))
            for line in open(path):
                if line.startswith("summary:"):
                    total = int(line.split()[1])
            r = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", path],
                               capture_output=True, text=True)
            for line in r.stdout.splitlines():
                m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+\S+:(\S+)\s+\[(.+)\]\s*$", line)
                if m:
                    o = os.path.basename(m.group(3))
                    v = int(m.group(1).replace(",", ""))
                    objs[o] = objs.get(o, 0) + v
                    fn = f"{m.group(2)} [{o}]"
                    funcs[fn] = funcs.get(fn, 0) + v
        done = max(res.get("done", 0), 1)
        self.last_funcs = {k: v / done for k, v in funcs.items()}
        return total / done, {o: v / done for o, v in objs.items()}

    def dpdk_counters(self):
        """busy cycles, requests, TSC Hz, TX-call cycles, frames rx, frames tx,
        RX-call cycles (of busy iterations), busy iterations."""
        r = subprocess.run(["ip", "netns", "exec", self.ns_p, "curl", "-s",
                            f"http://127.0.0.1:{MGMT_PORT}/metrics"], capture_output=True, text=True)
        out = [0.0] * len(DPDK_COUNTERS)
        for line in r.stdout.splitlines():
            if not line or line.startswith("#"):
                continue
            for i, (head, label) in enumerate(DPDK_COUNTERS):
                if line.startswith(head) and label in line:
                    v = float(line.split()[-1])
                    out[i] = out[i] + v if i == 1 else v  # requests: every worker's
                    break
        return tuple(out)

    # ---- one measured run --------------------------------------------------
    def h2load(self, ip, port, n, logfile):
        cmd = ["ip", "netns", "exec", self.ns_c, "taskset", "-c", "0", "h2load", "-n", str(n),
               "-c", str(self.args.clients), "-m", str(self.args.streams), "-t", "1",
               "-H", f"via: {VIA}", "--log-file", logfile, f"http://{ip}:{port}{PATH}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        return add_latency(D.parse_h2load(r.stdout, r.returncode), logfile)

    def warm_up(self, ip, port, log):
        """Load until --warmup seconds have passed (at least one batch of
        WARM_BATCH requests): a freshly started DPDK nrfwd touches its pools,
        mbufs and lwIP's segments for the first time, the caches and the
        branch predictors fill, the CPU's clock settles. Without it the
        first seconds of a round were measured too (decision 0044: own CPU
        per request 8.96 -> 5.53 -> 3.11 us over three rounds of 60 000
        requests, each under 1.5 s). @return requests sent."""
        end = time.time() + self.args.warmup
        sent = 0
        while True:
            res = self.h2load(ip, port, WARM_BATCH, log)
            sent += res.get("done", 0)
            if time.time() >= end:
                return sent

    def measure(self, name, ip, port, pid, dpdk):
        log = os.path.join(self.tmp, "lat.log")
        t0 = time.time()
        warm = self.warm_up(ip, port, log)
        warm_s = time.time() - t0
        c0, k0, ut0 = cpu_seconds(pid), cores_busy(), utime_seconds(pid)
        u0, h0, s0 = cpu_seconds(self.cur_upstream.pid), children_cpu(), softirq_seconds()
        d0 = self.dpdk_counters() if dpdk else None
        w0 = thread_sched_ns(pid, DPDK_COMM) if dpdk else (0, 0)
        t0 = time.time()
        res = self.h2load(ip, port, self.args.requests, log)
        res["secs"] = time.time() - t0
        res["warm"], res["warm_s"] = warm, warm_s
        c1, k1, ut1 = cpu_seconds(pid), cores_busy(), utime_seconds(pid)
        u1, h1, s1 = cpu_seconds(self.cur_upstream.pid), children_cpu(), softirq_seconds()
        done = max(res.get("done", 0), 1)
        res["proc_cpu"] = (c1 - c0) / done
        res["user_cpu"] = (ut1 - ut0) / done
        res["core1"] = (k1.get(1, 0) - k0.get(1, 0)) / done
        res["machine"] = sum(k1.values()) - sum(k0.values())
        res["machine"] /= done
        # The benchmark's own tasks: h2load + upstream + proxy (process CPU,
        # for DPDK its polling too) + irq/softirq time of both cores. Unlike
        # "machine", not inflated by other users of this shared machine.
        res["tasks"] = ((h1 - h0) + (u1 - u0) + (c1 - c0) + (s1 - s0)) / done
        if dpdk:
            d1 = self.dpdk_counters()
            hz = d1[2] or 1.0
            nreq = max(d1[1] - d0[1], 1)
            res["busy_cycles"] = (d1[0] - d0[0]) / nreq
            res["proxy"] = res["busy_cycles"] / hz
            res["tx_share"] = (d1[3] - d0[3]) / max(d1[0] - d0[0], 1)
            res["frames_rx"] = (d1[4] - d0[4]) / nreq
            res["frames_tx"] = (d1[5] - d0[5]) / nreq
            res["busy_iter"] = (d1[8] - d0[8]) / nreq
            # The device's own cost, kernel side included: the cycles inside
            # rte_eth_tx_burst() and (busy iterations) rte_eth_rx_burst().
            # What is left is the DPDK path's own cost (decision 0035).
            res["dev_tx"] = (d1[3] - d0[3]) / nreq / hz
            res["dev_rx"] = (d1[6] - d0[6]) / nreq / hz
            res["own"] = res["proxy"] - res["dev_tx"] - res["dev_rx"]
            # TSC cycles count the time the worker was runnable but other
            # users of core 1 had the CPU (busy iterations never sleep).
            # Its share of on-CPU + run-queue time (schedstat) is the
            # share it really ran; applied to "own" (preemption assumed to
            # hit busy and idle iterations alike) it gives own CPU time,
            # comparable with the kernel nrfwd's utime+stime.
            w1 = thread_sched_ns(pid, DPDK_COMM)
            run, wait = w1[0] - w0[0], w1[1] - w0[1]
            res["ran"] = run / (run + wait) if run + wait > 0 else 1.0
            res["own_cpu"] = res["own"] * res["ran"]
        else:
            res["proxy"] = res["proc_cpu"]
        print(f"  {name}: {res.get('rps', 0):.0f} req/s, done {res.get('done')} failed "
              f"{res.get('failed')} errored {res.get('errored')}, proxy {res['proxy'] * 1e6:.1f} us/req"
              + (f" ({res['busy_cycles']:.0f} busy cycles, own {res['own'] * 1e6:.2f} us/req "
                 f"(CPU {res['own_cpu'] * 1e6:.2f}, ran {res['ran'] * 100:.0f} %): "
                 f"device TX {res['dev_tx'] * 1e6:.2f}, RX {res['dev_rx'] * 1e6:.2f}; frames/req "
                 f"rx {res['frames_rx']:.2f} tx {res['frames_tx']:.2f}, busy iterations/req "
                 f"{res['busy_iter']:.2f})" if dpdk else
                 f" (user {res['user_cpu'] * 1e6:.2f})")
              + f", core1 {res['core1'] * 1e6:.1f} us/req, machine {res['machine'] * 1e6:.1f} us/req"
              f" (measured {res['secs']:.1f} s after {res['warm']} requests / {res['warm_s']:.1f} s "
              "of warm-up)",
              flush=True)
        return res

    # ---- perf ------------------------------------------------------------------
    def perf(self, name, ip, port, comm):
        """perf record -e cpu-clock on core 1 during one run: (share by
        shared object, top symbols) of the samples of threads named @comm
        (the proxy's own: other engineers' builds share this core)."""
        data = os.path.join(self.tmp, f"perf-{name}.data")
        keep = getattr(self.args, "perf_keep", None)
        graph = ["--call-graph", "dwarf,8192"] if keep else []
        rec = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-C", "1"] + graph + ["-o", data],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        self.h2load(ip, port, self.args.requests, os.path.join(self.tmp, "lat.log"))
        rec.send_signal(signal.SIGINT)
        rec.wait(timeout=120)
        if keep:
            os.makedirs(keep, exist_ok=True)
            shutil.copy(data, keep)

        def report(sort):
            # --sort comm,...: filtering with --comm drops samples in this
            # perf version; shares are made relative to @comm's own total.
            r = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "comm," + sort,
                                "--percent-limit", "0"], capture_output=True, text=True)
            return [l for l in r.stdout.splitlines() if l.strip() and not l.startswith("#")]

        dsos = []
        for line in report("dso"):
            m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+(.+)$", line)
            if m and m.group(2) == comm:
                dsos.append((float(m.group(1)), m.group(3).strip()))
        total = sum(p for p, _ in dsos) or 1.0
        dsos = [(p * 100.0 / total, d) for p, d in dsos]
        syms = []
        for line in report("dso,sym"):
            m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+(\S+)\s+\[[.k]\]\s+(.+)$", line)
            if m and m.group(2) == comm:
                pct = float(m.group(1)) * 100.0 / total
                if pct >= 0.05:
                    syms.append((pct, m.group(3), m.group(4).strip()))
        return dsos, syms


IDLE_SYMS = ("nrf_tp_dp_idle", "rte_delay_us_sleep", "default_idle", "cpuidle", "acpi_idle",
             "native_safe_halt", "pv_native_safe_halt", "do_idle", "poll_idle", "cpu_idle",
             "hrtimer_nanosleep", "do_nanosleep", "clock_nanosleep")
# lwIP's functions: the own build (decision 0010) is linked into nrfwd.
# (lib/h2's nghttp2 allocator is h2_mem_*, so mem_* is lwIP's.)
LWIP_SYMS = ("tcp_", "pbuf_", "ip4_", "ip_", "etharp", "ethernet_", "memp_", "mem_", "lwip_",
             "nrf_lwip_", "inet_", "netif_", "sys_check_timeouts", "sys_timeout", "sys_now",
             "icmp_", "raw_input")


def lwip_build(build):
    """'own lwIP' or 'Debian liblwip' for the nrfwd of @build."""
    r = subprocess.run(["ldd", os.path.join(build, "app", "nrfwd", "nrfwd")],
                       capture_output=True, text=True)
    return "Debian liblwip" if "liblwip" in r.stdout else "own lwIP"


COMPONENTS = [
    # (component, dso test)
    ("kernel: veth, packet socket, TCP/IP, syscalls, IRQ", lambda d: d == "[kernel.kallsyms]"),
    ("lwIP (TCP/IP in userspace)", lambda d: "lwip" in d.lower() or d == "nrfwd:lwip"),
    ("DPDK libraries (PMD, mbufs, EAL)", lambda d: "librte" in d),
    ("nghttp2 (HTTP/2 framing, HPACK)", lambda d: "nghttp2" in d),
    ("Hyperscan (Via scan)", lambda d: "libhs" in d),
    ("nrfwd (rt, h2 glue, fwd, via, tp incl. the DPDK loop)", lambda d: d == "nrfwd"),
    ("libc (memcpy, malloc, locks)", lambda d: d.startswith("libc")),
]


def components(perf):
    """Shares by component; idle (kernel idle loop, DPDK idle backoff) apart."""
    dsos, syms = perf
    out = {c: 0.0 for c, _ in COMPONENTS}
    out["other (other processes on core 1, vdso, ...)"] = 0.0
    idle = {}
    moved = 0.0
    for pct, dso, sym in syms:
        if sym.startswith(IDLE_SYMS) or "idle" in sym:
            idle[dso] = idle.get(dso, 0.0) + pct
        elif dso == "nrfwd" and sym.startswith(LWIP_SYMS):
            moved += pct
    if moved:
        dsos = [(p - moved if d == "nrfwd" else p, d) for p, d in dsos] + [(moved, "nrfwd:lwip")]
    for pct, dso in dsos:
        pct -= idle.get(dso, 0.0)
        for c, test in COMPONENTS:
            if test(dso):
                out[c] += pct
                break
        else:
            out["other (other processes on core 1, vdso, ...)"] += pct
    out["idle (kernel idle loop / DPDK idle backoff)"] = sum(idle.values())
    return out


def user_components(perf):
    """perf shares of the proxy's user-space components, normalised to
    their own total (kernel and idle left out)."""
    comps = components(perf)
    keys = [c for c, _ in COMPONENTS[1:]] + ["other (other processes on core 1, vdso, ...)"]
    tot = sum(comps[k] for k in keys) or 1.0
    return {k: comps[k] / tot for k in keys}


def perf_table(perf, split, intro, head, cell, top):
    """The report's lines for @perf ({system: what Bench.perf() gave}; none
    when it is empty): @intro, a table of the components @split() finds in
    each system's samples (@head(system): its column's title, @cell(system,
    share): a share's text), then each system's @top(system, symbols)."""
    if not perf:
        return []
    shares = {n: split(p) for n, p in perf.items()}
    lines = [intro, "", *md_table(["component", *(head(n) for n in perf)],
                                  [[k, *(cell(n, shares[n][k]) for n in perf)]
                                   for k in next(iter(shares.values()))])]
    for n, (_, syms) in perf.items():
        lines += ["", top(n, syms)]
    return lines


def run_icount(args, b):
    """Instructions only (no CPU rounds, nothing written): callgrind over
    --callgrind N requests of this build (and --alt-build's), by object and
    by function; --icount-repeat R runs each build R times (builds
    alternated) to show the spread. The quick loop for tuning one step."""
    builds = [("this build", os.path.abspath(args.build_dir), False)]
    if args.ipv6:
        builds.append(("this build over IPv6", os.path.abspath(args.build_dir), True))
    if args.alt_build:
        builds.append(("--alt-build", os.path.abspath(args.alt_build), False))
    got = {n: [] for n, _, _ in builds}
    funcs = {}
    try:
        b.setup()
        b.start_upstream()
        k = 0
        for rep in range(args.icount_repeat):
            for n, bd, v6 in builds:
                tot, objs = b.icount(k, bd, args.callgrind, v6=v6)
                k += 1
                got[n].append((tot, objs))
                funcs[n] = b.last_funcs
                print(f"  {n} run {rep + 1}: {tot:,.0f} instructions per request "
                      + ", ".join(f"{o} {v:,.0f}" for o, v in
                                  sorted(objs.items(), key=lambda kv: -kv[1])[:6]), flush=True)
    finally:
        b.cleanup()
    for n, _, _ in builds:
        tots = [t for t, _ in got[n]]
        print(f"{n}: median {statistics.median(tots):,.0f} ({min(tots):,.0f}..{max(tots):,.0f})")
        top = sorted(funcs[n].items(), key=lambda kv: -kv[1])[:args.icount_top]
        for fn, v in top:
            print(f"    {v:8,.0f}  {fn}")
    return 0


def run_own(args, b):
    """The DPDK path's own cost (busy cycles minus the device's RX
    and TX calls) next to the kernel nrfwd's CPU per request, interleaved in
    each round; with --alt-build a second DPDK build (before/after)."""
    build = os.path.abspath(args.build_dir)
    alt = os.path.abspath(args.alt_build) if args.alt_build else None
    devs = args.devices
    tag = (lambda d: f", {d}") if len(devs) > 1 else (lambda d: "")
    names = [f"nrfwd on DPDK (this build{tag(devs[0])})", "nrfwd on kernel sockets"]
    dpdk_systems = [(names[0], build, devs[0], None, False)]
    if args.ipv6:
        names.append(f"nrfwd on DPDK over IPv6 (this build{tag(devs[0])})")
        dpdk_systems.append((names[-1], build, devs[0], None, True))
    for d in devs[1:]:
        names.append(f"nrfwd on DPDK (this build{tag(d)})")
        dpdk_systems.append((names[-1], build, d, None, False))
    if args.vlan:
        # The same build behind the switch port pair, untagged and tagged
        # with --vlan (decision 0066): the two figures of the same path.
        names.append("nrfwd on DPDK (this build, switch, untagged)")
        dpdk_systems.append((names[-1], build, "af_packet", 0, False))
        names.append(f"nrfwd on DPDK (this build, switch, VLAN {args.vlan})")
        dpdk_systems.append((names[-1], build, "af_packet", args.vlan, False))
    if alt:
        for d in devs:
            names.append(f"nrfwd on DPDK (--alt-build{tag(d)})")
            dpdk_systems.append((names[-1], alt, d, None, False))
    results = {n: [] for n in names}
    perf = {}
    icounts = {}
    do_perf = not args.no_perf and shutil.which("perf")
    try:
        b.setup()
        b.start_upstream()
        kern = b.start_kernel_nrfwd()
        for rnd in range(args.rounds):
            print(f"round {rnd + 1}/{args.rounds}", flush=True)
            order = list(dpdk_systems)
            if rnd % 2:
                order.reverse()
            for i, (n, bd, dev, vl, v6) in enumerate(order):
                dp = b.start_dpdk_nrfwd(rnd * 10 + i + (100 if bd == alt else 0), bd, device=dev,
                                        vlan=vl, v6=v6)
                ip = f"[{DPDK_IP6}]" if v6 else DPDK_IP if vl is None else VLAN_DPDK_IP
                b.cur_upstream = b.upstream6 if v6 else b.upstream4
                try:
                    results[n].append(b.measure(n, ip, NRFWD_PORT, dp.pid, True))
                    if rnd == 0 and do_perf:
                        perf[n] = b.perf("own-%d" % i, ip, NRFWD_PORT, DPDK_COMM)
                finally:
                    b.stop(dp)
                    b.cur_upstream = b.upstream4
                if i == 0:
                    results[names[1]].append(b.measure(names[1], KERN_IP, NRFWD_PORT, kern.pid, False))
        if args.callgrind and shutil.which("valgrind"):
            for i, (n, bd, dev, vl, v6) in enumerate(dpdk_systems):
                icounts[n] = b.icount(i, bd, args.callgrind, device=dev, vlan=vl, v6=v6)
                print(f"  {n}: {icounts[n][0]:,.0f} instructions per request (callgrind)", flush=True)
    finally:
        b.cleanup()

    def med(name, key, scale=1e6):
        v = [x[key] * scale for x in results[name] if key in x]
        return mmm(v) if v else (0.0, 0.0, 0.0)

    fmt = fmt_mmm

    k = med(names[1], "proxy")
    kern_runs = [x["proxy"] for x in results[names[1]]]
    rows = []
    ratios = {}
    for n in names:
        bad = sum(x.get("errored", 0) + x.get("failed", 0) for x in results[n])
        if "DPDK" in n:
            # Per round: own / the kernel nrfwd's CPU in the same round.
            rr = [x["own_cpu"] / kernel for x, kernel in zip(results[n], kern_runs) if kernel]
            ratios[n] = mmm(rr) if rr else (0.0, 0.0, 0.0)
            rows.append(f"| {n} | {fmt(med(n, 'rps', 1), '{:,.0f}')} | {fmt(med(n, 'proxy'))} | "
                        f"{fmt(med(n, 'dev_tx'))} | {fmt(med(n, 'dev_rx'))} | {fmt(med(n, 'own'))} | "
                        f"{fmt(med(n, 'ran', 100), '{:.0f}')} | **{fmt(med(n, 'own_cpu'))}** | "
                        f"{fmt(med(n, 'user_cpu'))} | {fmt(med(n, 'proc_cpu'))} | "
                        f"**{fmt(ratios[n], '{:.2f}')}** | {med(n, 'frames_rx', 1)[0]:.2f} + "
                        f"{med(n, 'frames_tx', 1)[0]:.2f} | {bad} |")
        else:
            rows.append(f"| {n} | {fmt(med(n, 'rps', 1), '{:,.0f}')} | — | — | — | — | — | "
                        f"**{fmt(k)}** (utime+stime) | {fmt(med(n, 'user_cpu'))} | "
                        f"{fmt(med(n, 'proc_cpu'))} | — | — | {bad} |")
    # Decision 0050: the DPDK worker does at least the user-space work the
    # kernel nrfwd does (HTTP/2 both legs, HPACK, Via, forwarding: the same
    # code), so own CPU / kernel >= user / (user + system) of the kernel
    # nrfwd, whatever the transport costs. Per round, as the ratio.
    floor = [x["user_cpu"] / x["proxy"] for x in results[names[1]] if x.get("proxy")]
    floor_line = []
    if floor:
        f3 = mmm(floor)
        floor_line = ["", f"**The floor of own CPU / kernel**: the kernel nrfwd's user CPU / its "
                      f"utime+stime, per round: **{fmt(f3, '{:.2f}')}**. A DPDK worker runs the same "
                      "user-space code (HTTP/2 both legs, HPACK, Via scan, forwarding: the same "
                      "instructions) plus lwIP and its glue, so at the same cost per instruction its "
                      "own CPU / kernel cannot fall below this even with a transport that cost "
                      "nothing (decision 0050)."]
    def top_user(n, syms):
        user = [(p, s) for p, d, s in syms if d != "[kernel.kallsyms]"]
        tot = sum(p for p, _ in user) or 1.0
        top = ", ".join(f"`{s[:40]}` {p * 100 / tot:.1f} %" for p, s in sorted(user, reverse=True)[:12])
        return f"Top user-space symbols, {n}: {top}."

    ptable = perf_table(
        perf, user_components,
        "User-space split of the DPDK worker's own cost (`perf record -e cpu-clock -C 1`, one "
        f"run, samples of `{DPDK_COMM}` outside the kernel, shares applied to the median own "
        "CPU µs per request):",
        lambda n: f"{n} µs / req", lambda n, share: f"{share * med(n, 'own_cpu')[0]:.2f}", top_user)
    # Paths outside the repository (the other build) are not the reader's.
    argv = [a if not os.path.isabs(a) else "DIR" for a in sys.argv[1:]]
    itable = []
    if icounts:
        allo = sorted({o for _, objs in icounts.values() for o in objs},
                      key=lambda o: -max(icounts[n][1].get(o, 0) for n in icounts))[:8]
        itable = ["Instructions per forwarded request, the whole DPDK nrfwd process (callgrind, "
                  f"`--callgrind {args.callgrind}`: exact and repeatable; the worker's polling between "
                  "bursts included, which valgrind's slowness keeps small), by object:", "",
                  *md_table(["object", *icounts],
                            [["**total**", *(f"**{icounts[n][0]:,.0f}**" for n in icounts)]] +
                            [[o, *(f"{icounts[n][1].get(o, 0):,.0f}" for n in icounts)] for o in allo]),
                  ""]
    cmd = "python3 bench/e2e/dpdk_bench.py " + " ".join(argv)
    secs = [x["secs"] for n in names for x in results[n]] or [0.0]
    text = "\n".join([
        f"Command: `{cmd.strip()}` (as root) — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} cores, Linux {platform.release()}, EAL memory `{' '.join(b.mem)}`, "
        f"load average at the end {os.getloadavg()[0]:.1f} (shared machine). h2load `-n {args.requests} "
        f"-c {args.clients} -m {args.streams} -t 1` on core 0 with the upstream nrfstub; the proxy on "
        f"core 1; {args.rounds} rounds, the systems interleaved in each, each measured run after "
        f"{args.warmup:g} s of the same load (warm-up, not counted; measured runs lasted "
        f"{min(secs):.1f}..{max(secs):.1f} s); medians (min..max). Link MTU {args.mtu}"
        + (f" (veth pair, kernel nrfwd and DPDK port: `runtime.dpdk.mtu` {args.mtu}, af_packet "
           "`framesz=9216,blocksz=36864`)." if b.jumbo() else "."),
        *([] if "memif" not in devs else [
            "", "**memif** (decision 0050): the DPDK nrfwd's port is `net_memif` (client end) to "
            "`bench/dpdk_l2bridge` on core 0, which joins it to the veth with `net_af_packet`: the "
            "veth's kernel side runs in the bridge's process on core 0, none of it on the nrfwd's "
            "core; the device calls are then the memif copies. **af_packet**: the port is "
            "`net_af_packet` on the veth itself, whose kernel side runs inside the TX call on core 1."]),
        *([] if not args.vlan else [
            "", f"**VLAN {args.vlan}** (decision 0066): the same build with `runtime.dpdk.vlan` "
            f"{args.vlan}, measured in the same rounds as the untagged port. **switch**: the port is on a "
            "veth of its own whose other end is the trunk of a switch port pair "
            f"(`bench/dpdk_l2bridge`, with `--vlan {args.vlan}` for the tagged system, plain for the "
            "untagged one; on core 0 with the client: this kernel has no 802.1Q), whose access "
            "port leads to h2load and a second upstream nrfstub: the two switch rows share one path "
            "and differ only in the tag. On `net_af_packet` the driver's VLAN offloads strip and "
            "insert the tag (the kernel hands the tag beside the frame), and frames are copied "
            "into mbufs instead of lent (zero-copy TX is off on a tagged port)."]),
        "",
        "**own** = DPDK busy cycles per forwarded request minus the cycles inside `rte_eth_tx_burst()` "
        "and (of busy iterations) `rte_eth_rx_burst()`, i.e. everything the device costs, its kernel "
        "side included, taken out (decision 0035); **worker ran** = the worker thread's on-CPU time / "
        "(on-CPU + run-queue wait) (schedstat): the rest other users of core 1 took; **own CPU** = own "
        "× ran, comparable with the kernel nrfwd's utime+stime per request; **own CPU / kernel** per "
        "round; **user CPU** = utime only (for DPDK its idle spinning included).",
        "",
        "| system | req/s | busy µs / req | device TX µs / req | device RX µs / req | own (TSC) µs / req | "
        "worker ran % | own CPU µs / req | user CPU µs / req | process CPU µs / req | own CPU / kernel | "
        "DPDK frames / req (rx + tx) | failed+errored |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        *floor_line,
        "",
        *itable,
        *ptable,
        "",
    ])
    section = "dpdk-own" if not b.jumbo() else f"dpdk-own-mtu{args.mtu}"
    if args.vlan:
        section = "dpdk-own-vlan"
    if args.ipv6:
        section += "-ipv6"  # its own section: IPv6 vs IPv4 (decision 0065)
    publish(text, section, args.no_write)
    return 0


FLOOD_RATE, FLOOD_S = 20000, 5.0  # as tests/dpdk/test_nrfwd_dpdk_floods.py


def run_flood(args, b):
    """CPU per flood frame on each path, side by side: the floods test's
    attacker (tests/dpdk/test_nrfwd_dpdk_floods.py --attack: spoofed
    out-of-window ACKs, then SYNs, from addresses .150-.250 of the segment,
    20 000 a second for 5 s) from the client end of the veth against nrfwd
    on DPDK and then on kernel sockets, one system at a time, each started
    afresh. Per frame sent: the nrfwd process's CPU (on DPDK its poll loop,
    which also sleeps when idle: the loop's busy cycles are shown too),
    the irq+softirq time of all CPUs, and everything together with the
    attacker's own process (the send path, and on a veth the receiver's
    kernel work in the sender's context): what the flood costs the machine."""
    attack = os.path.join(ROOT, "tests", "dpdk", "test_nrfwd_dpdk_floods.py")
    rows = {}
    try:
        b.setup()
        b.start_upstream()
        mac = subprocess.run(["ip", "netns", "exec", b.ns_p, "cat",
                              f"/sys/class/net/{b.dev_p}/address"],
                             capture_output=True, text=True).stdout.strip()
        for rnd in range(args.rounds):
            print(f"round {rnd + 1}/{args.rounds}", flush=True)
            for kind in ("ack", "syn"):
                for path in ("dpdk", "kernel"):
                    p = b.start_dpdk_nrfwd(rnd * 10 + (1 if kind == "syn" else 0)) \
                        if path == "dpdk" else b.start_kernel_nrfwd()
                    ip = DPDK_IP if path == "dpdk" else KERN_IP
                    try:
                        time.sleep(1.0)
                        busy0 = b.dpdk_counters() if path == "dpdk" else None
                        c0, s0, n0 = children_cpu(), softirq_seconds(), cpu_seconds(p.pid)
                        r = subprocess.run(["ip", "netns", "exec", b.ns_c, sys.executable, attack,
                                            "--attack", kind, b.dev_c, ip, mac, str(FLOOD_RATE),
                                            str(FLOOD_S)], capture_output=True, text=True,
                                           timeout=FLOOD_S + 60)
                        time.sleep(0.5)  # what the flood left queued is done
                        c1, s1, n1 = children_cpu(), softirq_seconds(), cpu_seconds(p.pid)
                        busy1 = b.dpdk_counters() if path == "dpdk" else None
                    finally:
                        b.stop(p)
                    sent = int(r.stdout.split()[-1]) if r.returncode == 0 and r.stdout else 0
                    if sent == 0:
                        raise RuntimeError("attacker: " + (r.stdout + r.stderr)[-1000:])
                    x = {"nrfwd": (n1 - n0) / sent, "softirq": (s1 - s0) / sent,
                         "all": ((n1 - n0) + (s1 - s0) + (c1 - c0)) / sent}
                    if busy1 is not None and busy1[2] > 0:
                        x["loop"] = (busy1[0] - busy0[0]) / busy1[2] / sent
                    rows.setdefault((kind, path), []).append(x)
                    print(f"  {kind} flood, {path}: {sent} frames; per frame nrfwd "
                          f"{x['nrfwd'] * 1e6:.2f} us, irq+softirq {x['softirq'] * 1e6:.2f} us, "
                          f"all {x['all'] * 1e6:.2f} us"
                          + (f", poll loop busy {x['loop'] * 1e6:.2f} us" if "loop" in x else ""),
                          flush=True)
    finally:
        b.cleanup()

    def med(kind, path, key):
        v = [x[key] * 1e6 for x in rows.get((kind, path), []) if key in x]
        return f"{statistics.median(v):.2f}" if v else "—"

    lines = [
        f"Command: `python3 bench/e2e/dpdk_bench.py --flood --rounds {args.rounds}` (as root) — "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node() and 'shared'} "
        f"{os.cpu_count()}-core machine, EAL memory `{' '.join(b.mem)}`; medians of "
        f"{args.rounds} rounds. The floods test's attacker sends {FLOOD_RATE} spoofed frames a "
        f"second for {FLOOD_S:.0f} s over a veth to nrfwd (DPDK: net_af_packet on the other end; "
        "kernel: the other end's own stack); CPU in microseconds per frame sent.",
        "",
        "| flood | path | nrfwd process | its poll loop busy | irq + softirq (all CPUs) | "
        "all: nrfwd + irq/softirq + the attacker |",
        "|---|---|---|---|---|---|",
    ]
    for kind, label in (("ack", "out-of-window ACKs"), ("syn", "SYNs")):
        for path, pl in (("dpdk", "DPDK (own lwIP build)"), ("kernel", "kernel sockets")):
            lines.append(f"| {label} | {pl} | {med(kind, path, 'nrfwd')} | "
                         f"{med(kind, path, 'loop') if path == 'dpdk' else '—'} | "
                         f"{med(kind, path, 'softirq')} | {med(kind, path, 'all')} |")
    publish("\n".join(lines), "dpdk-floods", args.no_write)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--requests", type=int, default=None,
                    help="requests per measured run (default 100000; --own: 300000, several "
                    "seconds a round)")
    ap.add_argument("--warmup", type=float, default=2.0, metavar="S",
                    help="seconds of load (batches of %d requests) before every measured run, "
                    "so that each round measures the steady state" % WARM_BATCH)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mtu", type=int, default=1500,
                    help="MTU of the veth pair and of the DPDK port (runtime.dpdk.mtu), 1500..9000: "
                         "jumbo frames for every system of the run")
    ap.add_argument("--device", default="af_packet", metavar="af_packet|memif[,...]",
                    help="the DPDK nrfwd's port: net_af_packet on the veth (default), or "
                    "net_memif to dpdk_l2bridge, which joins it to the veth on core 0: a port "
                    "with no kernel side on the nrfwd's core (decision 0050); with --own a "
                    "comma list measures each as a system of its own in every round")
    ap.add_argument("--vlan", type=int, default=0, metavar="N",
                    help="--own: also the DPDK nrfwd on a port tagged with VLAN N (1..4094; the "
                    "client end on a VLAN sub-interface), in the same rounds as the untagged one; "
                    "writes the dpdk-own-vlan section")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--streams", type=int, default=32)
    ap.add_argument("--dpdk-opt", action="append", metavar="KEY=JSON",
                    help="a runtime.dpdk setting of the DPDK nrfwd, e.g. burst=64 (repeatable)")
    ap.add_argument("--alt-build", metavar="DIR",
                    help="a second DPDK nrfwd from this build directory in every round")
    ap.add_argument("--hugepages", action="store_true",
                    help="EAL memory from hugepages when free (default: --no-huge --no-shconf)")
    ap.add_argument("--rps", action="store_true",
                    help="RPS on both veth ends: each side's receive work on its own core")
    ap.add_argument("--own", action="store_true",
                    help="the DPDK path's own cost (device calls excluded) against the "
                    "kernel nrfwd only; writes the dpdk-own section")
    ap.add_argument("--callgrind", type=int, metavar="N", default=0,
                    help="--own: also count instructions per request of each DPDK build with "
                    "callgrind over N requests (slow: about a minute per 10 000)")
    ap.add_argument("--icount-only", action="store_true",
                    help="only the callgrind count (--callgrind N, default 3000) by object and "
                    "function, printed; nothing written")
    ap.add_argument("--icount-repeat", type=int, default=1, metavar="R")
    ap.add_argument("--icount-top", type=int, default=40, metavar="K")
    ap.add_argument("--keep-cg", metavar="DIR", help="keep the callgrind output files in DIR")
    ap.add_argument("--perf-keep", metavar="DIR",
                    help="record call graphs (dwarf) and keep the perf data files in DIR")
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--ipv6", action="store_true",
                    help="--own / --icount-only: the DPDK nrfwd over IPv6 as one more system")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--flood", action="store_true",
                    help="CPU per flood frame (spoofed ACKs, SYNs) on the DPDK and the kernel "
                         "path; writes the dpdk-floods section")
    args = ap.parse_args()
    args.devices = [d for d in args.device.split(",") if d]
    if not args.devices or any(d not in ("af_packet", "memif") for d in args.devices) or (
            len(args.devices) > 1 and not args.own):
        ap.error("--device: af_packet or memif; a comma list only with --own")
    if "memif" in args.devices and not os.path.exists(
            os.path.join(os.path.abspath(args.build_dir), "bench", "dpdk_l2bridge")):
        ap.error("--device memif: bench/dpdk_l2bridge is not built in " + args.build_dir)
    if args.vlan and (not args.own or not 1 <= args.vlan <= 4094):
        ap.error("--vlan N: 1..4094, with --own")
    if args.requests is None:
        args.requests = 300000 if args.own else 100000
    reason = D.cannot_run(os.path.abspath(args.build_dir))
    if reason:
        print(f"cannot run: {reason}")
        return 77
    b = Bench(args)
    if args.flood:
        signal.signal(signal.SIGTERM, lambda _s, _f: sys.exit("terminated"))
        return run_flood(args, b)
    if args.icount_only:
        signal.signal(signal.SIGTERM, lambda _s, _f: sys.exit("terminated"))
        args.callgrind = args.callgrind or 3000
        return run_icount(args, b)
    if args.own:
        signal.signal(signal.SIGTERM, lambda _s, _f: sys.exit("terminated"))
        return run_own(args, b)
    names = [f"nrfwd on DPDK (af_packet, {lwip_build(os.path.abspath(args.build_dir))})",
             "nrfwd on kernel sockets", "HAProxy 2.6",
             "nrfwd on kernel sockets, veth TSO/GSO off"]
    alt = os.path.abspath(args.alt_build) if args.alt_build else None
    if alt:
        names.append(f"nrfwd on DPDK (af_packet, {lwip_build(alt)}; {os.path.basename(alt)})")
    results = {n: [] for n in names}
    perf = {}

    def on_term(_sig, _frame):
        raise SystemExit("terminated")

    signal.signal(signal.SIGTERM, on_term)
    try:
        b.setup()
        b.start_upstream()
        kern = b.start_kernel_nrfwd()
        hap = b.start_haproxy()
        for rnd in range(args.rounds):
            print(f"round {rnd + 1}/{args.rounds}", flush=True)
            dp = b.start_dpdk_nrfwd(rnd)
            results[names[0]].append(b.measure(names[0], DPDK_IP, NRFWD_PORT, dp.pid, True))
            if rnd == 0 and not args.no_perf and shutil.which("perf"):
                perf[names[0]] = b.perf("dpdk", DPDK_IP, NRFWD_PORT, DPDK_COMM)
            b.stop(dp)
            results[names[1]].append(b.measure(names[1], KERN_IP, NRFWD_PORT, kern.pid, False))
            if rnd == 0 and not args.no_perf and shutil.which("perf"):
                perf[names[1]] = b.perf("kernel", KERN_IP, NRFWD_PORT, "nrfwd")
            results[names[2]].append(b.measure(names[2], KERN_IP, HAP_PORT, hap.pid, False))
            # The kernel proxy again, its veth end without segmentation offload:
            # MSS-sized frames like lwIP's, as a NIC puts them on the wire.
            b.offload(False)
            try:
                results[names[3]].append(b.measure(names[3], KERN_IP, NRFWD_PORT, kern.pid, False))
            finally:
                b.offload(True)
            if alt:
                dp = b.start_dpdk_nrfwd(100 + rnd, alt)
                results[names[4]].append(b.measure(names[4], DPDK_IP, NRFWD_PORT, dp.pid, True))
                if rnd == 0 and not args.no_perf and shutil.which("perf"):
                    perf[names[4]] = b.perf("dpdk-alt", DPDK_IP, NRFWD_PORT, DPDK_COMM)
                b.stop(dp)
    finally:
        b.cleanup()

    def med(name, key, scale=1.0):
        v = [x[key] * scale for x in results[name] if key in x]
        return mmm(v) if v else (0.0, 0.0, 0.0)

    def fmt(t, f="{:.1f}"):
        return fmt_mmm(t, f)

    rows = []
    for n in names:
        bad = sum(x.get("errored", 0) + x.get("failed", 0) for x in results[n])
        cyc = fmt(med(n, "busy_cycles"), "{:,.0f}") if "DPDK" in n else "—"
        rows.append(f"| {n} | {fmt(med(n, 'rps'), '{:,.0f}')} | {med(n, 'p50')[0]:.2f} | "
                    f"{med(n, 'p99')[0]:.2f} | {cyc} | {fmt(med(n, 'proxy', 1e6))} | "
                    f"{fmt(med(n, 'proc_cpu', 1e6))} | "
                    f"{fmt(med(n, 'core1', 1e6))} | {fmt(med(n, 'machine', 1e6))} | "
                    f"{fmt(med(n, 'tasks', 1e6))} | {bad} |")
    dp_proxy, k_proxy = med(names[0], "proxy")[0], med(names[1], "proxy")[0]
    dp_core, k_core = med(names[0], "core1")[0], med(names[1], "core1")[0]
    dp_mach, k_mach = med(names[0], "machine")[0], med(names[1], "machine")[0]
    ratio = dp_proxy / k_proxy if k_proxy else float("inf")
    ratio_core = dp_core / k_core if k_core else float("inf")
    ratio_mach = dp_mach / k_mach if k_mach else float("inf")
    nt_proxy, nt_mach = med(names[3], "proxy")[0], med(names[3], "machine")[0]
    ratio_nt = dp_proxy / nt_proxy if nt_proxy else float("inf")
    tx_fr, rx_fr = med(names[0], "frames_tx")[0], med(names[0], "frames_rx")[0]
    tx_sh = med(names[0], "tx_share")[0]
    ratio_nt_mach = dp_mach / nt_mach if nt_mach else float("inf")
    dp_task, k_task = med(names[0], "tasks")[0], med(names[1], "tasks")[0]
    ratio_task = dp_task / k_task if k_task else float("inf")
    dp_pc = med(names[0], "proc_cpu")[0]
    ratio_pc = dp_pc / k_proxy if k_proxy else float("inf")

    def top_all(n, syms):
        top = ", ".join(f"`{s[:40]}` {p:.1f} %" for p, _, s in sorted(syms, reverse=True)[:10])
        return f"Top symbols, {n}: {top}."

    ptable = perf_table(
        perf, components,
        "Where the time goes: `perf record -e cpu-clock -C 1` over one run of each nrfwd "
        f"(share of the proxy's own samples: `perf report --comm {DPDK_COMM}` for DPDK, "
        "`--comm nrfwd` for the kernel path):",
        lambda n: n, lambda n, share: f"{share:.1f} %", top_all)

    # The analysis, from this run's figures.
    dp_us, k_us = med(names[0], "proxy", 1e6)[0], med(names[1], "proxy", 1e6)[0]
    seg_note = ("Switching TSO/GSO off on the kernel proxy's veth end (MSS-sized frames, as lwIP "
                f"sends) moves the ratio only from {ratio:.2f}× to {ratio_nt:.2f}×: segmentation "
                "offload explains a small part of the gap"
                if abs(ratio_nt - ratio) <= 0.25 * ratio else
                "Switching TSO/GSO off on the kernel proxy's veth end (MSS-sized frames, as lwIP "
                f"sends) moves the ratio from {ratio:.2f}× to {ratio_nt:.2f}×: a good part of the gap "
                "is the veth passing the kernel's TSO segments whole")
    us = {}
    if perf:
        comps = {n: components(p) for n, p in perf.items()}
        for n in perf:
            # µs per request by component: shares of the proxy's own
            # samples times the proxy process's CPU per request.
            base = med(n, "proc_cpu", 1e6)[0]
            us[n] = {c: comps[n][c] / 100.0 * base for c in comps[n]}
    kern_c = COMPONENTS[0][0]
    user_c = [c for c, _ in COMPONENTS[1:]]
    reading = [
        f"The target (DPDK at most 0.8× the kernel path's CPU per forwarded request) is **"
        f"{'met' if ratio <= 0.8 and ratio_pc <= 0.8 else 'missed'}** here: {dp_us:.1f} µs of DPDK "
        f"busy time against {k_us:.1f} µs of kernel-nrfwd CPU per request ({ratio:.2f}×); with the "
        f"DPDK process's CPU time, which does not count the time other users of core 1 preempted "
        f"it, {dp_pc * 1e6:.1f} µs ({ratio_pc:.2f}×). Counting the "
        "benchmark's own tasks, which includes the receive work the kernel path leaves on the "
        f"senders' core: {dp_task * 1e6:.1f} against {k_task * 1e6:.1f} µs ({ratio_task:.2f}×; "
        f"both cores, other users included: {ratio_mach:.2f}×).",
        "",
    ]
    if names[0] in us and names[1] in us:
        d, k = us[names[0]], us[names[1]]
        d_user, k_user = sum(d[c] for c in user_c), sum(k[c] for c in user_c)
        reading += [
            f"Where the DPDK time goes: {d[kern_c]:.1f} µs per request of the worker's time is "
            f"the kernel ({tx_sh * 100:.0f} % of the busy cycles are inside the af_packet TX call), "
            f"{d_user:.1f} µs is user space (lwIP {d[user_c[0]]:.1f}, nghttp2 "
            f"{d['nghttp2 (HTTP/2 framing, HPACK)']:.1f}, nrfwd "
            f"{d['nrfwd (rt, h2 glue, fwd, via, tp incl. the DPDK loop)']:.1f}, libc "
            f"{d['libc (memcpy, malloc, locks)']:.1f}, DPDK {d['DPDK libraries (PMD, mbufs, EAL)']:.1f}). "
            f"The kernel nrfwd spends {k[kern_c]:.1f} µs in the kernel and {k_user:.1f} µs in user "
            f"space (nghttp2 {k['nghttp2 (HTTP/2 framing, HPACK)']:.1f}). The worker sends "
            f"{tx_fr:.1f} and receives {rx_fr:.1f} frames per forwarded request: the answers "
            "(about 2.5 KB) take two MSS-sized segments each, so there is nothing left to "
            "coalesce. On a veth every frame the worker sends is a trip through the kernel on the "
            "DPDK core: af_packet copies it into an skb (`packet_sendmsg`, `skb_copy_bits`), the "
            "veth hands it to the other end, whose whole IP/TCP receive (`tcp_v4_rcv`, "
            "`csum_partial`: the frame carries no offload flags) and the wake-up of the reader run "
            "right there, and the ACKs that input sends come back into the af_packet ring "
            "(`tpacket_rcv`). The kernel nrfwd's sends cross the same veth as TSO super-segments "
            "of many answers with checksums left partial: one trip per burst of answers instead "
            f"of two per answer. {seg_note}.",
            "",
            "What a real NIC changes: the TX call becomes descriptor writes and one doorbell per "
            "burst, RX arrives by DMA, the other ends' receive work leaves the proxy's core, and "
            "with the own lwIP build (decision 0010) the checksums go to the NIC (net_tap already "
            "runs that path here; net_af_packet offers no checksum offload). Taking the kernel "
            f"component out of the DPDK worker leaves {d_user:.1f} µs per request against "
            f"{k_us:.1f} µs for the whole kernel nrfwd on this veth (≈ "
            f"{d_user / k_us if k_us else 0:.2f}×) — and the kernel path itself then pays its NIC "
            "driver, interrupts and the softirq receive of its own sockets on its own core, which "
            "on a veth the senders pay. So ≤ 0.8× cannot be shown on this VM's virtual ports; "
            "whether it holds on a NIC is a measurement for a machine with one (`-a "
            "<pci-address>`, the client on another host, the same driver), and the user-space "
            f"part ({d_user:.1f} µs, of which nghttp2 is the same library in both) is what is left "
            "to cut.",
        ]
    if len(names) > 4 and names[4] in results and results[names[4]]:
        a_us, a_pc = med(names[4], "proxy", 1e6)[0], med(names[4], "proc_cpu", 1e6)[0]
        a_task = med(names[4], "tasks", 1e6)[0]
        reading += [
            "",
            f"The two lwIP builds in the same rounds: process CPU per request {dp_pc * 1e6:.1f} µs "
            f"({names[0]}) against {a_pc:.1f} µs ({names[4]}), {dp_pc * 1e6 / a_pc if a_pc else 0:.2f}×; "
            f"busy time {dp_us:.1f} against {a_us:.1f} µs; the benchmark's tasks "
            f"{dp_task * 1e6:.1f} against {a_task:.1f} µs."
            + (f" lwIP's own share: {us[names[0]][user_c[0]]:.1f} against "
               f"{us[names[4]][user_c[0]]:.1f} µs per request." if names[4] in us and names[0] in us
               else ""),
        ]

    cmd = "python3 bench/e2e/dpdk_bench.py " + " ".join(sys.argv[1:])
    text = "\n".join([
        "## nrfwd on DPDK vs kernel sockets vs HAProxy (bench/e2e/dpdk_bench.py)",
        "",
        f"Command: `{cmd.strip()}` (as root) — {time.strftime('%Y-%m-%d')}, {cpu_model()}, "
        f"{os.cpu_count()} cores, Linux {platform.release()}, EAL memory `{' '.join(b.mem)}`, shared machine.",
        "",
        f"One veth pair between two network namespaces: client side h2load (`-n {args.requests} "
        f"-c {args.clients} -m {args.streams} -t 1`) and the upstream nrfstub on core 0; proxy side on "
        "core 1, the veth end carrying the DPDK port (net_af_packet, lwIP address) and a kernel "
        "address for the kernel-socket proxies. GET NFDiscover with a 3-member Via, forwarded to the "
        f"upstream. {args.rounds} rounds, the systems interleaved in each (the DPDK nrfwd started "
        "for its slot only: its af_packet socket would copy the other systems' frames too; the last "
        "system is the kernel nrfwd again with TSO/GSO switched off on its veth end); medians with "
        "(min..max).",
        "CPU per request, several ways: **proxy** = DPDK busy cycles (loop iterations that did work, "
        "rt/h2/lwIP/PMD and the kernel's work inside the TX call) at the TSC rate, or the kernel "
        "proxy's utime+stime; **proxy process** = utime+stime for all (for DPDK its polling too, "
        "but not time it was preempted by other users of core 1, which busy cycles include); **core 1** = everything on the proxy's core (/proc/stat; for DPDK the "
        "poll loop's spinning between bursts too); **machine** = both cores, client and upstream included "
        "(also whatever else ran on this shared machine); **bench tasks** = h2load + upstream + proxy "
        "process CPU (DPDK: its polling included) + irq/softirq time of both cores, so other users' "
        "builds do not count.",
        "",
        "| system | req/s | p50 ms | p99 ms | DPDK busy cycles / req | proxy CPU µs / req | "
        "proxy process CPU µs / req | core-1 CPU µs / req | machine CPU µs / req | "
        "bench tasks CPU µs / req | failed+errored |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"- nrfwd DPDK / nrfwd kernel, proxy CPU per forwarded request: **{ratio:.2f}×** "
        f"(target ≤ 0.8×: {'met' if ratio <= 0.8 else 'missed'})",
        f"- the same with the DPDK process's CPU time (utime+stime: its polling included, but not "
        f"the time it was preempted, which busy cycles count): **{ratio_pc:.2f}×**",
        f"- the same on the proxy's whole core: **{ratio_core:.2f}×**; on the whole machine: "
        f"**{ratio_mach:.2f}×**; the benchmark's own tasks (client, upstream, proxy, irq/softirq): "
        f"**{ratio_task:.2f}×**",
        f"- against the kernel path with TSO/GSO off on its veth end (MSS-sized frames, as lwIP "
        f"sends): proxy CPU **{ratio_nt:.2f}×**, machine **{ratio_nt_mach:.2f}×**",
        "",
        *ptable,
        "",
        "### Reading",
        "",
        *reading,
        "",
    ])
    publish(text, "dpdk", args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
