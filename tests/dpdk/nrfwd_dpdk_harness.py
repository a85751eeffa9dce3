#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""nrfwd on its DPDK transport inside network namespaces (tests, demo, bench).

Standard library only. A Fabric is one L2 segment: a Linux bridge in a
namespace of its own; every host is a network namespace joined to it by veth
pairs. An NRF host holds nrfwd (DPDK port on net_af_packet over a veth, or
net_tap; the address lives in lwIP, not in the kernel) and its local NRF
(nrfstub on a kernel veth); a client host holds curl / h2load.

    import nrfwd_dpdk_harness as D

    fab = D.Fabric('s')                      # namespaces nfd-<pid><tag>-*
    try:
        a = fab.host('a')                    # namespace + kernel address
        stub = fab.start_stub(a, 'stub-a', 'stub-profiles-a.json')
        cfg = D.config('nrf-a.test', local=stub, peers=[...])
        fwd = fab.start_nrfwd(a, cfg)        # DPDK port 10.77.0.1xx
        c = fab.host('c')
        st, hd, body = fab.curl(c, fwd.url('/nnrf-disc/v1/...'))
    finally:
        fab.cleanup()                        # processes by pid, namespaces

Safety: every nrfwd gets --no-pci and runs in a private mount namespace
with an empty /sys/bus/pci/devices (when `unshare` exists), --in-memory
(hugepages reserved) or --no-huge --no-shconf, a unique --file-prefix and
--no-telemetry. Traffic stays inside the namespaces created here; cleanup()
removes them and every process started here, also after a failure.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'integration'))
import nrfwd_harness as H  # noqa: E402  (config helpers, Proc, log waits)
import h2load_out  # noqa: E402

SKIP = 77
SUBNET = '10.77.0'
SUBNET6 = 'fd77::'  # /64 of the IPv6 fabrics; a host's address ends in its IPv4's last byte

# Address families of a fabric: 4 (IPv4 only, the default), 6 (IPv6 only:
# the DPDK ports get only an IPv6 address, stubs and clients use theirs),
# 46 (dual stack: every host and port has both; Host.ip stays IPv4).
FAMILIES = (4, 6, 46)


def sh(*args, ns=None, check=True, timeout=30):
    cmd = (['ip', 'netns', 'exec', ns] if ns else []) + [str(a) for a in args]
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError('%s: %s' % (' '.join(cmd), r.stdout.strip()))
    return r


def free_hugepages():
    total = 0
    base = '/sys/kernel/mm/hugepages'
    try:
        for d in os.listdir(base):
            with open(os.path.join(base, d, 'free_hugepages')) as f:
                total += int(f.read())
    except OSError:
        return 0
    return total


def ensure_hugepages(owner, n):
    """At least @n free 2 MiB hugepages, reserving more if needed; what was
    added is remembered on @owner for release_hugepages()."""
    path = '/proc/sys/vm/nr_hugepages'
    for _ in range(5):  # other DPDK processes may take pages meanwhile
        free = free_hugepages()
        if free >= n:
            return
        with open(path) as f:
            before = int(f.read())
        with open(path, 'w') as f:
            f.write(str(before + n - free))
        with open(path) as f:
            added = int(f.read()) - before
        owner.hugepages_added = getattr(owner, 'hugepages_added', 0) + max(0, added)
    raise RuntimeError('cannot reserve %d hugepages (free: %d)' % (n, free_hugepages()))


def release_hugepages(owner):
    added = getattr(owner, 'hugepages_added', 0)
    if added <= 0:
        return
    path = '/proc/sys/vm/nr_hugepages'
    with open(path) as f:
        now = int(f.read())
    with open(path, 'w') as f:
        f.write(str(max(0, now - added)))
    owner.hugepages_added = 0


def eal_memory():
    """EAL memory options for this machine (hugepages or plain memory)."""
    return ['--in-memory'] if free_hugepages() >= 64 else ['--no-huge', '--no-shconf']


def cannot_run(build_dir=None):
    """Why this machine cannot run nrfwd on DPDK in namespaces, or None."""
    if os.geteuid() != 0:
        return 'needs root (network namespaces, af_packet, tap)'
    for tool in ('ip', 'ethtool', 'sysctl', 'curl'):
        if shutil.which(tool) is None:
            return '%s not installed' % tool
    if build_dir and not os.path.exists(os.path.join(build_dir, 'app', 'nrfwd', 'nrfwd')):
        return 'nrfwd not built in %s' % build_dir
    name = 'nfd-%d-probe' % os.getpid()
    if subprocess.run(['ip', 'netns', 'add', name], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        return 'cannot create network namespaces'
    try:
        r = subprocess.run(['ip', 'netns', 'exec', name, 'ip', 'link', 'add', 'nfdprobe',
                            'type', 'bridge'], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return 'no Linux bridge support'
    finally:
        subprocess.run(['ip', 'netns', 'del', name], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return None


class Host:
    """A network namespace on the fabric with one kernel address."""

    def __init__(self, key, ns, ip, dev=None, ip4=None, ip6=None):
        self.key = key
        self.ns = ns
        self.ip = ip  # the address tests use: ip6 on an IPv6-only fabric
        self.ip4 = ip4 or (ip if ip and ':' not in ip else None)
        self.ip6 = ip6
        self.dev = dev  # the kernel veth
        self.dpdk = None  # the veth of the DPDK port (Fabric.dpdk_dev())


# af_packet ring frames for jumbo fabrics: a 9000-byte MTU frame plus the
# ring's headers fits 9216 bytes, which is also the pool's data room for
# runtime.dpdk.mtu 9000; a block (page multiple) holds four.
JUMBO_FRAMESZ = (9216, 36864)

class Fabric:
    """One bridge, hosts joined to it, processes in them; all removed by cleanup()."""

    def __init__(self, tag='t', build_dir=None, subnet=SUBNET, mtu=1500, family=4):
        """@mtu: of the bridge and every link; above 1500 a DPDK nrfwd on
        af_packet gets runtime.dpdk.mtu and a framesz that holds a frame.
        @family: 4, 6 or 46 (FAMILIES)."""
        H.BUILD_DIR = build_dir or H.BUILD_DIR
        if family not in FAMILIES:
            raise ValueError('family %r' % (family,))
        self.family = family
        self.v6 = family != 4
        self.mtu = mtu
        self.build = H.BUILD_DIR
        self.id = '%d%s' % (os.getpid() % 100000, tag)
        self.subnet = subnet
        self.tmpdir = tempfile.mkdtemp(prefix='nrfwd-dpdk-%s-' % tag)
        self.namespaces = []
        self.procs = []
        self.n_if = 0
        self.n_host = 0
        self.n_fwd = 0
        self.prefixes = []
        self.mem = eal_memory()
        self.hide_pci = shutil.which('unshare') is not None
        self.two = (os.cpu_count() or 1) >= 2
        self.fab = self._netns('fab')
        self.br = 'nb%s' % self.id
        # A fixed address: a bridge otherwise takes the lowest of its ports'.
        sh('ip', 'link', 'add', self.br, 'address', '02:00:00:00:00:01', 'type', 'bridge',
           ns=self.fab)
        if mtu != 1500:
            sh('ip', 'link', 'set', self.br, 'mtu', str(mtu), ns=self.fab)
        if self.v6:
            # lwIP sends no MLD reports: without snooping the bridge floods
            # the solicited-node multicast of neighbour discovery.
            sh('ip', 'link', 'set', self.br, 'type', 'bridge', 'mcast_snooping', '0',
               ns=self.fab)
        sh('ip', 'link', 'set', self.br, 'up', ns=self.fab)

    # ---- namespaces and links ---------------------------------------------
    def _netns(self, key):
        name = 'nfd-%s-%s' % (self.id, key)
        sh('ip', 'netns', 'add', name)
        self.namespaces.append(name)
        for k in ('all', 'default'):
            sh('sysctl', '-qw', 'net.ipv6.conf.%s.disable_ipv6=1' % k, ns=name, check=False)
        sh('ip', 'link', 'set', 'lo', 'up', ns=name)
        return name

    def _veth(self, ns, mtu=None):
        """A veth pair: one end in @ns (returned), the other on the bridge;
        @mtu of the end in @ns (default the fabric's)."""
        self.n_if += 1
        a, b = 'n%s%di' % (self.id, self.n_if), 'n%s%db' % (self.id, self.n_if)
        sh('ip', 'link', 'add', a, 'netns', ns, 'type', 'veth', 'peer', 'name', b,
           'netns', self.fab)
        if self.mtu != 1500:
            sh('ip', 'link', 'set', b, 'mtu', str(self.mtu), ns=self.fab)
        if (mtu or self.mtu) != 1500:
            sh('ip', 'link', 'set', a, 'mtu', str(mtu or self.mtu), ns=ns)
        sh('ip', 'link', 'set', b, 'master', self.br, 'up', ns=self.fab)
        sh('ethtool', '-K', b, 'gro', 'off', ns=self.fab, check=False)
        return a

    def host(self, key, ip=None, mtu=None):
        """Namespace @key with a kernel veth on the fabric (full checksums,
        MTU-sized frames: lwIP checks checksums in software); @mtu of its
        link (default the fabric's)."""
        self.n_host += 1
        ns = self._netns(key)
        ip = ip or '%s.%d' % (self.subnet, 10 + self.n_host)
        dev = self._veth(ns, mtu)
        sh('ethtool', '-K', dev, 'tx', 'off', 'tso', 'off', 'gso', 'off', ns=ns)
        sh('ip', 'addr', 'add', ip + '/24', 'dev', dev, ns=ns)
        ip6 = None
        if self.v6:
            # IPv6 on this veth only (the namespace's default stays off, so
            # the DPDK port's veth has none); no DAD delay; an unsolicited
            # neighbour advertisement when its MAC changes.
            for k, v in (('disable_ipv6', 0), ('accept_dad', 0), ('ndisc_notify', 1)):
                sh('sysctl', '-qw', 'net.ipv6.conf.%s.%s=%d' % (dev, k, v), ns=ns)
            # ... and on lo: the host's own address is reached through it
            sh('sysctl', '-qw', 'net.ipv6.conf.lo.disable_ipv6=0', ns=ns)
            ip6 = '%s%s' % (SUBNET6, ip.rsplit('.', 1)[1])
            sh('ip', 'addr', 'add', ip6 + '/64', 'dev', dev, 'nodad', ns=ns)
        sh('ip', 'link', 'set', dev, 'up', ns=ns)
        return Host(key, ns, ip6 if self.family == 6 else ip, dev, ip4=ip, ip6=ip6)

    def dpdk_dev(self, host):
        """The veth of @host's DPDK port (af_packet). Made once per host and
        kept: the port's MAC is the interface's, so an nrfwd restarted on the
        host keeps its MAC and nobody's ARP cache goes stale."""
        if getattr(host, 'dpdk', None) is None:
            dev = self._veth(host.ns)
            sh('ip', 'link', 'set', dev, 'up', ns=host.ns)
            sh('ethtool', '-K', dev, 'gro', 'off', ns=host.ns, check=False)
            host.dpdk = dev
        return host.dpdk

    def dpdk_ip(self, host):
        """The DPDK port address that goes with @host (its kernel address + 100;
        IPv6 on an IPv6-only fabric)."""
        return self.dpdk_ip6(host) if self.family == 6 else self.dpdk_ip4(host)

    def dpdk_ip4(self, host):
        return '%s.%d' % (self.subnet, int(host.ip4.rsplit('.', 1)[1]) + 100)

    def dpdk_ip6(self, host):
        return '%s%d' % (SUBNET6, int(host.ip4.rsplit('.', 1)[1]) + 100)

    # ---- processes ------------------------------------------------------------
    def _spawn(self, name, host, cmd, port, ip):
        logpath = os.path.join(self.tmpdir, '%02d-%s.log' % (len(self.procs) + 1, name))
        with open(logpath, 'wb') as log:
            p = subprocess.Popen(['ip', 'netns', 'exec', host.ns] + cmd,
                                 stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        proc = H.Proc(name, p, port, logpath, ip)
        proc.ns = host.ns
        self.procs.append(proc)
        return proc

    def start_stub(self, host, name, profiles='stub-profiles-a.json', port=8080, fault=None,
                   extra=(), wait=True):
        """nrfstub @name on @host's kernel address."""
        prof = profiles if os.path.isabs(profiles) else H.conf(profiles)
        cmd = [H.binary('nrfstub'), '--listen', '%s:%d' % (H.hostport_host(host.ip), port),
               '--profiles', prof,
               '--name', name] + (['--fault', fault] if fault else []) + list(extra)
        proc = self._spawn(name, host, cmd, port, host.ip)
        if wait:
            self.wait_line(proc, r'nrfstub %s listening on' % re.escape(name))
        return proc

    def eal(self, name, vdev, main_lcore=None):
        """EAL arguments for one nrfwd: safe, unique, two lcores when there are."""
        self.n_fwd += 1
        prefix = 'nfd%s%s' % (self.id, re.sub(r'[^a-zA-Z0-9]', '', name))
        self.prefixes.append(prefix)
        args = ['--no-pci', '--no-telemetry'] + self.mem + ['--file-prefix=' + prefix,
                                                            '--vdev=' + vdev]
        if self.mtu > 1500 and '--no-huge' in self.mem:
            args += ['-m', '512']  # 8191 mbufs of 9 KB
        if self.two:
            args += ['-l', '0,1']
            # Spread the data-path lcores of several processes over both CPUs.
            if (self.n_fwd % 2 == 0) if main_lcore is None else main_lcore == 1:
                args += ['--main-lcore', '1']
        else:
            args += ['-l', '0']
        return args

    def wrap(self, cmd, hugetlbfs=None):
        """Hide the PCI bus from the EAL (a private mount namespace), and
        mount a hugetlbfs at @hugetlbfs in it."""
        if not self.hide_pci:
            if hugetlbfs:
                raise RuntimeError('a private hugetlbfs needs unshare')
            return cmd
        mnt = 'mount -t tmpfs none /sys/bus/pci/devices'
        if hugetlbfs:
            mnt += ' && mount -t hugetlbfs nodev %s' % hugetlbfs
        return ['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
                mnt + ' && exec "$0" "$@"'] + cmd

    def start_nrfwd(self, host, cfg, name='nrfwd', pmd='af_packet', eal=None, extra=(),
                    wait=True, timeout=20.0, log_level='info', ip=None, main_lcore=None,
                    hugetlbfs=None):
        """nrfwd on a DPDK port in @host: @cfg (dict) is written to a file;
        its runtime.listen[0] port is the one served. The port address is
        @ip or dpdk_ip(@host). @pmd: 'af_packet' (a veth on the fabric),
        'tap' (moved onto the bridge once nrfwd runs) or 'memif' (the client
        end of a net_memif whose server end is bench/dpdk_l2bridge, started
        here, which joins it to a veth on the fabric). With @wait, returns
        once "nrfwd listening on" was logged (raises with the log if it
        exits first). @eal replaces the EAL arguments (start-up tests)."""
        ip = ip or self.dpdk_ip(host)
        cfg = json.loads(json.dumps(cfg))
        rt = cfg.setdefault('runtime', {})
        rt['transport'] = 'dpdk'
        if ':' in ip:  # IPv6 only
            rt.setdefault('dpdk', {}).update({'ipv6Address': ip, 'ipv6PrefixLength': 64})
        else:
            rt.setdefault('dpdk', {}).update({'ipv4Address': ip, 'prefixLength': 24})
        if self.family == 46:
            rt['dpdk'].setdefault('ipv6Address', self.dpdk_ip6(host))
        if self.v6:
            for ls in rt.get('listen', []):
                if ls.get('address') == '0.0.0.0':
                    ls['address'] = '::'  # both families
        port = rt['listen'][0]['port']
        path = os.path.join(self.tmpdir, '%s.json' % name)
        tap = None
        if eal is None:
            if pmd == 'tap':
                self.n_if += 1
                tap = 'n%s%dt' % (self.id, self.n_if)
                vdev = 'net_tap0,iface=%s' % tap
            elif pmd == 'memif':
                vdev = self.start_memif_bridge(host, name)
            else:
                vdev = 'net_af_packet0,iface=%s,qpairs=1,qdisc_bypass=1' % self.dpdk_dev(host)
                if self.mtu > 1500:
                    vdev += ',framesz=%d,blocksz=%d' % JUMBO_FRAMESZ
                    rt['dpdk'].setdefault('mtu', self.mtu)
            eal = self.eal(name, vdev, main_lcore)
        cmd = self.wrap([H.binary('nrfwd')] + list(eal) + ['--'] +
                        cfg_args(cfg, path) + ['--log-level', os.environ.get('NRFWD_LOG_LEVEL', log_level)] + list(extra),
                        hugetlbfs)
        proc = self._spawn(name, host, cmd, port, ip)
        proc.config_path = path
        proc.dpdk_ip = ip
        proc.dpdk_ip6 = rt['dpdk'].get('ipv6Address')
        proc.tap = tap
        if wait:
            self.ready(proc, timeout)
        return proc

    def start_memif_bridge(self, host, name):
        """bench/dpdk_l2bridge in @host between a net_memif server end and
        net_af_packet on the host's DPDK veth (frames pass unchanged both
        ways). @return the vdev of the memif's client end, for nrfwd."""
        prefix = 'nfd%sbr%s' % (self.id, re.sub(r'[^a-zA-Z0-9]', '', name))
        self.prefixes.append(prefix)
        cmd, client = memif_bridge(self.build, prefix,
                                   os.path.join(self.tmpdir, 'memif-%s.sock' % name),
                                   'net_af_packet0,iface=%s,qpairs=1,qdisc_bypass=1'
                                   % self.dpdk_dev(host))
        bridge = self._spawn('bridge-' + name, host, self.wrap(cmd), None, None)
        self.wait_line(bridge, r'dpdk_l2bridge: forwarding')
        return client

    def ready(self, proc, timeout=20.0):
        """Wait until nrfwd @proc listens; a tap port then joins the bridge
        (it was created in nrfwd's namespace)."""
        self.wait_line(proc, r'nrfwd listening on', timeout)
        if getattr(proc, 'tap', None) is not None:
            sh('ip', 'link', 'set', proc.tap, 'netns', self.fab, ns=proc.ns)
            # The tap's kernel side carries the DPDK port's own MAC: on a
            # bridge that is a local address (frames to it would stop at
            # the bridge), so the kernel side gets another one.
            self.n_if += 1
            sh('ip', 'link', 'set', proc.tap, 'address',
               '02:00:00:%02x:%02x:%02x' % (self.n_if & 255, os.getpid() >> 8 & 255,
                                           os.getpid() & 255), ns=self.fab)
            sh('ip', 'link', 'set', proc.tap, 'master', self.br, 'up', ns=self.fab)
            sh('ethtool', '-K', proc.tap, 'gro', 'off', ns=self.fab, check=False)
            proc.tap = None
        return proc

    def start_nrfwd_mp(self, host, cfg, workers=2, name='nrfwd', extra=(), wait=True,
                       timeout=30.0, log_level='info', ip=None):
        """nrfwd as a primary with @workers worker processes (DPDK
        secondaries) on one net_tap port with a queue pair each
        (docs/decisions/0011-mp-workers.md). Worker processes share the
        primary's hugepage memory: hugepages are reserved for the run
        (given back by cleanup()) and a hugetlbfs is mounted inside the
        process's private mount namespace (gone with its last process, files
        and all). With @wait, returns once every worker listens."""
        ensure_hugepages(self, 256)
        huge = os.path.join(self.tmpdir, 'huge-%s' % re.sub(r'[^a-zA-Z0-9]', '', name))
        os.makedirs(huge, exist_ok=True)
        self.n_fwd += 1
        prefix = 'nfd%s%s' % (self.id, re.sub(r'[^a-zA-Z0-9]', '', name))
        self.prefixes.append(prefix)
        self.n_if += 1
        tap = 'n%s%dt' % (self.id, self.n_if)
        ncpu = os.cpu_count() or 1
        lc = ','.join(['0@0'] + ['%d@%d' % (k + 1, (k + 1) % ncpu) for k in range(workers)])
        eal = ['--no-pci', '--no-telemetry', '--file-prefix=' + prefix, '--huge-dir=' + huge,
               '--lcores=' + lc, '--vdev=net_tap0,iface=%s' % tap]
        if workers == 1:
            extra = ['--dpdk-processes'] + list(extra)
        proc = self.start_nrfwd(host, cfg, name=name, eal=eal, extra=extra, wait=False,
                                log_level=log_level, ip=ip, hugetlbfs=huge)
        proc.tap = tap
        proc.workers = workers
        proc.file_prefix = prefix
        if wait:
            for k in range(workers):
                self.wait_line(proc, r'w%d/nrfwd: nrfwd listening on' % k, timeout)
            self.ready(proc, timeout)
        return proc

    def start_all(self, specs, timeout=30.0):
        """Start several nrfwd at once (their EAL start-ups overlap), then
        wait for each: @specs are (host, cfg, kwargs) triples."""
        procs = [self.start_nrfwd(h, cfg, wait=False, **kw) for h, cfg, kw in specs]
        taps = [getattr(p, 'tap', None) is not None for p in procs]
        for p in procs:
            self.ready(p, timeout)
        # A tap port joins the bridge only once nrfwd listens: the first
        # connect to its local NRF may time out before (its ARP request
        # went nowhere), and requests sent before the next probe would
        # find the local NRF down. Wait for it to be up.
        for (_, cfg, _), p, tap in zip(specs, procs, taps):
            if tap and cfg.get('runtime', {}).get('localNrf', {}).get('address'):
                self.wait_line(p, r'local NRF \S+ up', timeout)
        return procs

    @staticmethod
    def wait_line(proc, pattern, timeout=20.0):
        if not H._wait_for_line(proc, pattern, timeout):
            raise RuntimeError('%s did not start (rc=%s):\n%s' % (
                proc.name, proc.proc.poll(), proc.log()[-3000:]))

    def run(self, host, cmd, timeout=60):
        return subprocess.run(['ip', 'netns', 'exec', host.ns] + list(cmd),
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)

    def stop(self, proc, sig=signal.SIGTERM, timeout=10.0):
        rc = proc.stop(sig, timeout)
        return rc

    def cleanup(self, dump=False):
        """Stop every process (by pid), then remove the namespaces."""
        for p in reversed(self.procs):
            try:
                p.stop(signal.SIGTERM, timeout=5.0)
            except Exception:  # noqa: BLE001 - cleanup must go on
                try:
                    os.kill(p.pid, signal.SIGKILL)
                except OSError:
                    pass
            if dump:
                sys.stderr.write('---- %s (pid %d) log ----\n%s\n' % (p.name, p.pid,
                                                                   p.log()[-int(os.environ.get("NRFWD_DUMP_BYTES", "6000")):]))
        self.procs = []
        release_hugepages(self)
        for ns in reversed(self.namespaces):
            sh('ip', 'netns', 'del', ns, check=False)
        self.namespaces = []
        # The EAL's (empty, with --in-memory / --no-shconf) runtime folders.
        for prefix in self.prefixes:
            try:
                os.rmdir(os.path.join('/var/run/dpdk', prefix))
            except OSError:
                pass
        self.prefixes = []
        if not dump:
            shutil.rmtree(self.tmpdir, ignore_errors=True)

    # ---- clients ----------------------------------------------------------------
    def curl(self, host, url, method='GET', headers=(), data=None, timeout=10.0):
        """One HTTP/2 (prior knowledge) request from @host: (status, headers, body)."""
        return H.curl(url, method=method, headers=headers, data=data, timeout=timeout,
                      prefix=['ip', 'netns', 'exec', host.ns])

    def stub_requests(self, stub):
        """Requests recorded by nrfstub @stub (a Proc from start_stub())."""
        host = Host('?', stub.ns, stub.host)
        st, _, body = self.curl(host, stub.url('/_stub/requests'))
        if st != 200:
            raise RuntimeError('GET /_stub/requests of %s: %d' % (stub.name, st))
        return json.loads(body)

    def stub_clear(self, stub):
        host = Host('?', stub.ns, stub.host)
        self.curl(host, stub.url('/_stub/requests'), method='DELETE')

    def h2load(self, host, url, n=1000, c=10, m=10, threads=1, timeout=300, extra=(),
               cpu=None):
        """h2load from @host (optionally pinned with taskset to @cpu): the
        same result dict as nrfwd_harness.h2load()."""
        cmd = (['taskset', '-c', str(cpu)] if cpu is not None else []) + [
            'h2load', '-n', str(n), '-c', str(c), '-m', str(m), '-t', str(threads)]
        r = self.run(host, cmd + list(extra) + [url], timeout=timeout)
        return parse_h2load(r.stdout.decode('utf-8', 'replace'), r.returncode)


class Runner:
    """Named checks run in order; a failure is reported and the run goes on."""

    def __init__(self):
        self.failed = []
        self.passed = 0

    def check(self, name, fn, *args, **kw):
        t0 = time.monotonic()
        try:
            fn(*args, **kw)
        except Exception as e:  # noqa: BLE001 - report every kind of failure
            self.failed.append(name)
            print('FAIL %-52s %s' % (name, str(e)[:3000]), flush=True)
            return False
        self.passed += 1
        print('ok   %-52s (%.2f s)' % (name, time.monotonic() - t0), flush=True)
        return True

    def part(self, name, fn, fabric_tag, build_dir, fabric_kw=None):
        """Run @fn(fabric) on a fabric of its own (Fabric(**@fabric_kw)),
        removed afterwards."""
        fab = None
        ok = False
        try:
            fab = Fabric(fabric_tag, build_dir, **(fabric_kw or {}))
            n = len(self.failed)
            fn(fab)
            ok = len(self.failed) == n
        except Exception as e:  # noqa: BLE001
            self.failed.append(name)
            print('FAIL %-52s %s' % (name, str(e)[:3000]), flush=True)
        finally:
            if fab is not None:
                fab.cleanup(dump=not ok)

    def done(self):
        print('%d passed, %d failed%s' % (self.passed, len(self.failed),
                                          (': ' + ', '.join(self.failed)) if self.failed else ''))
        return 1 if self.failed else 0


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_eq(got, want, what=''):
    if got != want:
        raise AssertionError('%s: got %r, want %r' % (what, got, want))


def build_caps(build_dir=None):
    """What this build's DPDK transport carries, from the "dpdk:" line of
    `nrfwd --version`: {'lwip': 'own'|'debian', 'max_mtu': int, 'ipv6':
    bool, 'vlan': bool}, or None (built without it)."""
    nrfwd = os.path.join(build_dir or H.BUILD_DIR, 'app', 'nrfwd', 'nrfwd')
    out = subprocess.run([nrfwd, '--version'], capture_output=True, text=True).stdout
    m = re.search(r'^dpdk: lwip (\S+), max mtu (\d+), ipv6 (yes|no), vlan (yes|no)$', out, re.M)
    if m is None:
        return None
    return {'lwip': m.group(1), 'max_mtu': int(m.group(2)), 'ipv6': m.group(3) == 'yes',
            'vlan': m.group(4) == 'yes'}


def test_main(argv, parts, needs=(), needs_caps=None):
    """Entry point of a dpdk test script: `SCRIPT --build-dir DIR [--family
    4|6|46]`. @parts: (name, fn(fabric, runner), tag[, fabric kwargs]);
    @needs: programs the parts run; @needs_caps: fn(build_caps()) -> None,
    or why this build cannot run them. --family runs every part on fabrics
    of that address family (FAMILIES; default 4); a part whose kwargs name
    a family keeps it. Exit 77 when the machine cannot run DPDK in
    namespaces, lacks one of @needs, or the build cannot carry what the
    test needs (the reason printed)."""
    argv = list(argv)
    family = 4
    if '--family' in argv:
        i = argv.index('--family')
        family = int(argv[i + 1])
        if family not in FAMILIES:
            raise SystemExit('--family: one of %s' % (FAMILIES,))
        del argv[i:i + 2]
    # parse_args() skips argv[0] (the program): scripts pass sys.argv[1:].
    H.parse_args(['dpdk-test'] + argv)
    reason = cannot_run(H.BUILD_DIR)
    for tool in needs:
        if reason is None and shutil.which(tool) is None:
            reason = '%s not installed' % tool
    if reason is None and needs_caps is not None:
        caps = build_caps(H.BUILD_DIR)
        reason = 'nrfwd built without the DPDK transport' if caps is None else needs_caps(caps)
    if reason:
        print('SKIP: %s' % reason)
        return SKIP

    def on_term(_sig, _frame):
        raise SystemExit('terminated')

    signal.signal(signal.SIGTERM, on_term)
    r = Runner()
    print('EAL memory: %s' % ' '.join(eal_memory()), flush=True)
    if family != 4:
        print('address family: %s' % {6: 'IPv6 only', 46: 'dual stack'}[family], flush=True)
    for name, fn, tag, *kw in parts:
        fkw = dict({'family': family}, **(kw[0] if kw else {}))
        r.part(name, lambda fab, fn=fn: fn(fab, r), tag, H.BUILD_DIR, fkw)
    return r.done()


def parse_h2load(out, rc=0):
    """h2load_out.parse() (tests/integration): one parser for tests and benchmarks."""
    return h2load_out.parse(out, rc)


def memif_bridge(build, prefix, sock, af_packet_vdev):
    """bench/dpdk_l2bridge between the server end of a net_memif (socket
    file @sock) and the net_af_packet port @af_packet_vdev (a vdev string),
    EAL file prefix @prefix, on lcore 0 without hugepages: (its command,
    the vdev of the memif's client end for nrfwd). Used by the tests
    (pmd='memif') and by bench/e2e/dpdk_bench.py --device memif."""
    memif = 'net_memif0,socket=%s,socket-abstract=no,id=0' % sock
    cmd = [os.path.join(build, 'bench', 'dpdk_l2bridge'), '--no-pci', '--no-telemetry',
           '--no-huge', '--no-shconf', '-m', '128', '-l', '0', '--file-prefix=' + prefix,
           '--vdev=%s,role=server' % memif, '--vdev=' + af_packet_vdev]
    return cmd, memif + ',role=client'


def cfg_args(cfg, path):
    """Write @cfg to @path; nrfwd's own arguments for it."""
    with open(path, 'w') as f:
        json.dump(cfg, f, indent=2)
    return ['--config', path]


def peer(fqdn, fwd_or_ip, port=8080, priority=1, **extra):
    """A nrfHostConfig entry for an NRF reachable at a DPDK nrfwd (Proc with
    .dpdk_ip) or an address."""
    ip = getattr(fwd_or_ip, 'dpdk_ip', None) or getattr(fwd_or_ip, 'host', None) or fwd_or_ip
    if ':' in ip:
        return H.peer(fqdn, port, priority=priority, ipv4=None, ipv6Address=ip, **extra)
    return H.peer(fqdn, port, priority=priority, ipv4=ip, **extra)


def config(host, port=8080, local=None, peers=(), growth_sets=None, **kw):
    """nrfwd_harness.nrfwd_config() for a DPDK nrfwd: listens on 0.0.0.0:@port;
    @local is the local NRF (a stub Proc, or None)."""
    doc = H.nrfwd_config(host, port=port, local=local.port if local else None, peers=peers,
                         growth_sets=growth_sets, listen_host='0.0.0.0', **kw)
    if local is not None:
        doc['runtime']['localNrf']['address'] = local.host
    return doc
