#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""DPDK + lwIP transport tests (meson suite 'dpdk').

    run_tp_dpdk.py PATH/TO/tp_dpdk_echo

Starts tp_dpdk_echo (a server written against the nrf_tp ops only) on
  - net_af_packet over a veth pair: the server in namespace nrfdp-<pid>-a,
    kernel clients in nrfdp-<pid>-b;
  - net_tap: server and kernel clients in nrfdp-<pid>-t;
and drives it with kernel TCP clients (this script, re-run inside the
namespace as `run_tp_dpdk.py client SCENARIO ...`). Also checks start-up
failures: bad EAL option, missing --no-pci, missing vdev interface,
address conflict, no hugepages.

Safety: every DPDK run has --no-pci and, where `unshare` exists, runs in a
private mount namespace with an empty /sys/bus/pci/devices, so not even a
broken guard could probe the machine's NIC. Network traffic stays inside
the namespaces created here; they, their interfaces and every process
started here are removed in `finally`, also on failure or SIGTERM.

Exit status: 0 all passed, 1 a check failed, 77 skipped (no root, no
`ip`, no network namespaces).
"""
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

SKIP = 77
PAT_MOD = 251
MiB = 1 << 20


def pattern(off, n):
    """Bytes [off, off+n) of the server's pattern (byte i = i % 251)."""
    base = bytes(range(PAT_MOD))
    start = off % PAT_MOD
    reps = (start + n) // PAT_MOD + 1
    return (base * reps)[start:start + n]


# --------------------------------------------------------------------------
# Client side (runs inside a network namespace)

def connect(ip, port, timeout=20.0):
    s = socket.create_connection((ip, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(min(1 << 16, n - len(buf)))
        if not chunk:
            raise AssertionError('EOF after %d of %d bytes' % (len(buf), n))
        buf += chunk
    return bytes(buf)


def recv_all(s):
    buf = bytearray()
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            return bytes(buf)
        buf += chunk


def recv_line(s):
    buf = bytearray()
    while not buf.endswith(b'\n'):
        chunk = s.recv(1)
        if not chunk:
            break
        buf += chunk
    return buf.decode().strip()


def command(ip, port, line):
    s = connect(ip, port)
    try:
        s.sendall(line.encode() + b'\n')
        return recv_line(s)
    finally:
        s.close()


def stats(ip, port):
    line = command(ip, port, 'STATS')
    assert line.startswith('STATS '), line
    return dict(kv.split('=', 1) for kv in line.split()[1:])


def c_echo_basic(ip, port, _args):
    s = connect(ip, port)
    s.sendall(b'ECHO\nhello')
    assert recv_exact(s, 5) == b'hello'
    s.sendall(b' world, once more')
    assert recv_exact(s, 17) == b' world, once more'
    s.shutdown(socket.SHUT_WR)
    assert recv_all(s) == b'', 'server did not close after our FIN'
    s.close()


def c_echo_many(ip, port, args):
    n = int(args[0]) if args else 200
    socks = []
    try:
        for i in range(n):
            socks.append(connect(ip, port))
        for i, s in enumerate(socks):
            s.sendall(b'ECHO\n' + (b'%05d' % i) * 20)
        for i, s in enumerate(socks):
            got = recv_exact(s, 100)
            assert got == (b'%05d' % i) * 20, 'conn %d got %r' % (i, got[:20])
        for s in socks:
            s.shutdown(socket.SHUT_WR)
        for s in socks:
            assert recv_all(s) == b''
    finally:
        for s in socks:
            s.close()
    print('%d connections echoed' % n)


def c_send_large(ip, port, args):
    n = int(args[0]) if args else MiB
    s = connect(ip, port, timeout=60)
    t0 = time.monotonic()
    s.sendall(b'SEND %d\n' % n)
    data = recv_all(s)
    dt = time.monotonic() - t0
    s.close()
    assert len(data) == n, 'got %d of %d bytes' % (len(data), n)
    assert data == pattern(0, n), 'pattern mismatch'
    print('server sent %d bytes in %.3f s (%.1f MB/s)' % (n, dt, n / dt / 1e6))


def c_echo_large(ip, port, args):
    n = int(args[0]) if args else MiB
    data = os.urandom(n)
    s = connect(ip, port, timeout=60)
    err = []

    def writer():
        try:
            s.sendall(b'ECHO\n')
            view = memoryview(data)
            for off in range(0, n, 1 << 16):
                s.sendall(view[off:off + (1 << 16)])
            s.shutdown(socket.SHUT_WR)
        except OSError as e:  # pragma: no cover - reported below
            err.append(e)

    t0 = time.monotonic()
    w = threading.Thread(target=writer)
    w.start()
    got = recv_all(s)
    w.join()
    dt = time.monotonic() - t0
    s.close()
    assert not err, err
    assert len(got) == n, 'echoed %d of %d bytes' % (len(got), n)
    assert got == data, 'echo differs'
    print('echoed %d bytes in %.3f s' % (n, dt))


def c_sink_large(ip, port, args):
    n = int(args[0]) if args else MiB
    s = connect(ip, port, timeout=60)
    s.sendall(b'SINK\n')
    s.sendall(os.urandom(n))
    s.shutdown(socket.SHUT_WR)
    line = recv_line(s)
    s.close()
    assert line == 'GOT %d' % n, line


class EchoServer(threading.Thread):
    """Kernel echo server for the outgoing-connect cases."""

    def __init__(self, ip, port):
        super().__init__(daemon=True)
        self.ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind((ip, port))
        self.ls.listen(128)
        self.accepted = 0

    def run(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    @staticmethod
    def serve(c):
        try:
            while True:
                d = c.recv(1 << 16)
                if not d:
                    break
                c.sendall(d)
        except OSError:
            pass
        finally:
            c.close()


def c_connect(ip, port, args):
    my_ip, up_port, n, k = args[0], int(args[1]), int(args[2]), int(args[3])
    srv = EchoServer(my_ip, up_port)
    srv.start()
    try:
        s = connect(ip, port, timeout=60)
        s.sendall(b'CONNECT %s %d %d %d\n' % (my_ip.encode(), up_port, n, k))
        line = recv_line(s)
        s.close()
    finally:
        srv.ls.close()
    assert line.startswith('DONE ok=%d fail=0' % k), line
    assert srv.accepted == k, 'kernel server saw %d connections' % srv.accepted
    print(line)


def c_refused(ip, port, args):
    my_ip, closed_port = args[0], int(args[1])
    line = command(ip, port, 'CONNECT %s %d 10 1' % (my_ip, closed_port))
    assert line == 'DONE ok=0 fail=1 err=NRF_EIO:connect', line
    print(line)


def c_unreachable(ip, port, args):
    """connect() to addresses lwIP must refuse at once (loopback would abort it)."""
    for dst in args:
        line = command(ip, port, 'CONNECT %s 80 10 1' % dst)
        assert line == 'DONE ok=0 fail=1 err=NRF_EIO:connect', '%s: %s' % (dst, line)
    print('refused at once: ' + ', '.join(args))


def checksum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def c_spoof(ip, port, args):
    """A SYN claiming the server's own address as source: lwIP would answer
    itself through its loopback path (an abort without the tcpip thread);
    the transport drops such frames. The server must stay up."""
    dev = args[0]
    src = socket.inet_aton(ip)
    dst = socket.inet_aton(ip)
    tcp = struct.pack('!HHIIBBHHH', 40000, port, 1, 0, 5 << 4, 0x02, 65535, 0, 0)
    pseudo = src + dst + struct.pack('!BBH', 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack('!H', checksum(pseudo + tcp)) + tcp[18:]
    iph = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, src, dst)
    iph = iph[:10] + struct.pack('!H', checksum(iph)) + iph[12:]
    with open('/sys/class/net/%s/address' % dev) as f:
        mac = bytes.fromhex(f.read().strip().replace(':', ''))
    frame = b'\xff' * 6 + mac + b'\x08\x00' + iph + tcp
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    raw.bind((dev, 0))
    for _ in range(3):
        raw.send(frame)
    raw.close()
    time.sleep(0.3)
    st = stats(ip, port)
    print('server alive after spoofed SYNs (rx_drop=%s)' % st['rx_drop'])


def syn_frame(dev, src_ip, dst_ip, sport, dport, bad_ip=False, bad_tcp=False):
    src, dst = socket.inet_aton(src_ip), socket.inet_aton(dst_ip)
    tcp = struct.pack('!HHIIBBHHH', sport, dport, 1, 0, 5 << 4, 0x02, 65535, 0, 0)
    pseudo = src + dst + struct.pack('!BBH', 0, 6, len(tcp))
    cs = checksum(pseudo + tcp) ^ (0x5a5a if bad_tcp else 0)
    tcp = tcp[:16] + struct.pack('!H', cs) + tcp[18:]
    iph = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, src, dst)
    cs = checksum(iph) ^ (0x0101 if bad_ip else 0)
    iph = iph[:10] + struct.pack('!H', cs) + iph[12:]
    with open('/sys/class/net/%s/address' % dev) as f:
        mac = bytes.fromhex(f.read().strip().replace(':', ''))
    return b'\xff' * 6 + mac + b'\x08\x00' + iph + tcp


def syn_acked(raw, srv_ip, sport, wait=1.0):
    """A SYN-ACK from @srv_ip to @sport seen on @raw within @wait s."""
    end = time.time() + wait
    srv = socket.inet_aton(srv_ip)
    while time.time() < end:
        raw.settimeout(max(end - time.time(), 0.01))
        try:
            f = raw.recv(2048)
        except socket.timeout:
            break
        if len(f) < 54 or f[12:14] != b'\x08\x00' or f[23] != 6 or f[26:30] != srv:
            continue
        ihl = (f[14] & 15) * 4
        dport, flags = struct.unpack('!H', f[16 + ihl:18 + ihl])[0], f[14 + ihl + 13]
        if dport == sport and flags & 0x12 == 0x12:
            return True
    return False


def c_badsum(ip, port, args):
    """SYNs with a wrong IPv4 header or TCP checksum get no answer (lwIP
    checks them in software, or the port's RX offload and the transport's
    check of what the device left unknown drop them); a correct SYN gets its
    SYN-ACK (the kernel then resets the connection it never opened)."""
    dev, my_ip = args[0], args[1]
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    raw.bind((dev, 0))
    try:
        for n, (bip, btcp) in enumerate(((False, True), (True, False), (True, True))):
            sport = 41000 + n
            for _ in range(2):
                raw.send(syn_frame(dev, my_ip, ip, sport, port, bip, btcp))
            assert not syn_acked(raw, ip, sport, 0.5), \
                'SYN with bad %s checksum answered' % ('IP' if bip else 'TCP')
        sport = 41010
        raw.send(syn_frame(dev, my_ip, ip, sport, port))
        assert syn_acked(raw, ip, sport, 3.0), 'correct SYN not answered'
    finally:
        raw.close()
    st = stats(ip, port)
    print('bad checksums dropped, good SYN answered (rx_drop=%s)' % st['rx_drop'])


def c_hold(ip, port, args):
    """Connections whose data the server leaves unread (HOLD) while more
    arrives than the transport may keep in the port's buffers (a quarter of
    the mbuf pool: the server runs with --mbufs 4095): the port must go on
    receiving (an echo works meanwhile), and once released every byte
    arrives (GOT n)."""
    n, nbytes = int(args[0]), int(args[1])
    socks = []
    for _ in range(n):
        s = connect(ip, port)
        s.sendall(b'HOLD\n')
        socks.append(s)
    results = [None] * n
    data = pattern(0, nbytes)

    def push(i):
        s = socks[i]
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            results[i] = recv_line(s)
        except OSError as e:
            results[i] = 'error %s' % e

    threads = [threading.Thread(target=push, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    time.sleep(1.5)  # the windows fill
    e = connect(ip, port)
    e.sendall(b'ECHO\n' + pattern(0, 3000))
    assert recv_exact(e, 3000) == pattern(0, 3000), 'echo while data is held'
    e.close()
    assert command(ip, port, 'RELEASE') == 'RELEASED %d' % n
    for t in threads:
        t.join(60)
    for s in socks:
        s.close()
    bad = [r for r in results if r != 'GOT %d' % nbytes]
    assert not bad, 'held connections: %s' % bad[:3]
    print('%d connections x %d bytes held unread, then all delivered' % (n, nbytes))


def c_reset(ip, port, _args):
    before = stats(ip, port)
    linger0 = struct.pack('ii', 1, 0)
    # Reset while the server reads.
    s = connect(ip, port)
    s.sendall(b'SINK\n' + b'x' * 10000)
    time.sleep(0.2)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger0)
    s.close()
    # Reset while the server writes (it is blocked on a full window).
    s = connect(ip, port)
    s.sendall(b'SEND %d\n' % (64 * MiB))
    recv_exact(s, 100000)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger0)
    s.close()
    deadline = time.monotonic() + 10
    while True:
        after = stats(ip, port)
        r = int(after['read_eio']) - int(before['read_eio'])
        w = int(after['write_eio']) - int(before['write_eio'])
        if (r >= 1 and w >= 1) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert r >= 1, 'server did not see the reset while reading'
    assert w >= 1, 'server did not see the reset while writing'
    print('resets seen: read %d, write %d' % (r, w))


def c_group(ip, port, args):
    n = int(args[0]) if args else 16
    before = stats(ip, port)
    socks = [connect(ip, port) for _ in range(n)]
    for s in socks:
        s.sendall(b'GROUP 7\n')
    time.sleep(0.3)
    for s in socks:
        s.send(b'x')
    closed = 0
    for s in socks:
        s.settimeout(10)
        try:
            if s.recv(16) == b'':
                closed += 1
        except ConnectionResetError:
            closed += 1
        s.close()
    after = stats(ip, port)
    assert closed == n, '%d of %d closed by the server' % (closed, n)
    assert after['violations'] == '0', 'handler ran after close(): %s' % after['violations']
    g = int(after['group_closed']) - int(before['group_closed'])
    assert g == n, 'group_closed %d' % g
    print('%d group members closed from one handler, no late handler' % n)


def c_pingpong(ip, port, args):
    rounds = int(args[0]) if args else 2000
    before = stats(ip, port)
    s = connect(ip, port)
    s.sendall(b'ECHO\n')
    msg = b'p' * 100
    rtts = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        s.sendall(msg)
        recv_exact(s, len(msg))
        rtts.append(time.perf_counter() - t0)
    s.close()
    after = stats(ip, port)
    rtts.sort()
    busy = int(after['busy_iters']) - int(before['busy_iters'])
    pcyc = int(after['poll_busy_cycles']) - int(before['poll_busy_cycles'])
    tcyc = int(after['tx_cycles']) - int(before['tx_cycles'])
    hz = int(after['hz']) or 1
    print('%d round trips of 100 bytes: median %.1f us, p99 %.1f us; server: %d busy '
          'iterations, %.2f us in poll() each, of which %.2f us in the device TX call '
          '(the kernel side of the veth/tap)' % (
              rounds, rtts[len(rtts) // 2] * 1e6, rtts[int(len(rtts) * 0.99)] * 1e6, busy,
              pcyc / max(busy, 1) / hz * 1e6, tcyc / max(busy, 1) / hz * 1e6))


def c_stats(ip, port, args):
    st = stats(ip, port)
    assert st['violations'] == '0', st
    if args and args[0] == 'registered':
        # A plain pthread polls: the transport gave it an lcore id of its own.
        assert st['lcore'] not in ('-1', '128'), 'poller not registered: %s' % st['lcore']
    elif args:
        assert st['lcore'] == args[0], 'polled on lcore %s, not %s' % (st['lcore'], args[0])
    if len(args) > 1 and args[1] == 'woken':
        assert int(st['wakes']) > 0, 'loop_wake() from the main thread never arrived'
    it, busy = int(st['iters']), int(st['busy_iters'])
    cyc, bcyc, pcyc = int(st['cycles']), int(st['busy_cycles']), int(st['poll_busy_cycles'])
    hz = int(st['hz']) or 1
    print('STATS ' + ' '.join('%s=%s' % kv for kv in st.items()))
    if it and busy:
        print('iterations %d (busy %d, %.1f%%), busy share of cycles %.1f%%, '
              'idle sleeps %s' % (it, busy, 100.0 * busy / it, 100.0 * bcyc / max(cyc, 1),
                                  st['sleeps']))
        print('per busy iteration: %.0f cycles total, %.0f in poll() (%.2f us); '
              'per idle iteration: %.0f cycles' % (
                  bcyc / busy, pcyc / busy, pcyc / busy / hz * 1e6,
                  (cyc - bcyc) / max(it - busy, 1)))


def c_quit(ip, port, _args):
    assert command(ip, port, 'QUIT') == 'BYE'


CLIENT = {
    'echo_basic': c_echo_basic,
    'echo_many': c_echo_many,
    'send_large': c_send_large,
    'echo_large': c_echo_large,
    'sink_large': c_sink_large,
    'connect': c_connect,
    'refused': c_refused,
    'reset': c_reset,
    'unreachable': c_unreachable,
    'spoof': c_spoof,
    'badsum': c_badsum,
    'hold': c_hold,
    'group': c_group,
    'pingpong': c_pingpong,
    'stats': c_stats,
    'quit': c_quit,
}


def client_main(argv):
    name, ip, port = argv[0], argv[1], int(argv[2])
    try:
        CLIENT[name](ip, port, argv[3:])
    except (AssertionError, OSError) as e:
        print('FAIL %s: %s: %s' % (name, type(e).__name__, e))
        return 1
    return 0


# --------------------------------------------------------------------------
# Driver side

def sh(*args, check=True, ns=None):
    cmd = (['ip', 'netns', 'exec', ns] if ns else []) + list(args)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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


class Runner:
    def __init__(self, prog):
        self.prog = prog
        self.pid = os.getpid()
        self.namespaces = []
        self.procs = []
        self.failed = []
        self.passed = 0
        self.hide_pci = shutil.which('unshare') is not None
        mem = ['--in-memory'] if free_hugepages() > 0 else ['--no-huge', '--no-shconf']
        self.two = (os.cpu_count() or 1) >= 2
        # One lcore on the second CPU; for the af_packet run the main lcore
        # 0 plus the data-path lcore 1 (nrf_tp_dpdk_launch()).
        self.eal = ['--no-pci', '--no-telemetry', '-l', '1' if self.two else '0'] + mem
        self.eal2 = ['--no-pci', '--no-telemetry', '-l', '0,1' if self.two else '0'] + mem
        self.mem = mem

    # ---- resources, always released -------------------------------------
    def netns(self, tag):
        name = 'nrfdp-%d-%s' % (self.pid, tag)
        sh('ip', 'netns', 'add', name)
        self.namespaces.append(name)
        sh('ip', 'link', 'set', 'lo', 'up', ns=name)
        return name

    def veth(self, tag, ns_a, ns_b):
        a, b = 'ndp%d%sa' % (self.pid, tag), 'ndp%d%sb' % (self.pid, tag)
        sh('ip', 'link', 'add', a, 'netns', ns_a, 'type', 'veth', 'peer', 'name', b,
           'netns', ns_b)
        for ns, dev in ((ns_a, a), (ns_b, b)):
            sh('sysctl', '-qw', 'net.ipv6.conf.%s.disable_ipv6=1' % dev, ns=ns, check=False)
            sh('ip', 'link', 'set', dev, 'up', ns=ns)
        # Kernel end: full checksums and MTU-sized frames on the wire (lwIP
        # checks checksums in software); DPDK end: no GRO into af_packet.
        sh('ethtool', '-K', b, 'tx', 'off', 'tso', 'off', 'gso', 'off', ns=ns_b)
        sh('ethtool', '-K', a, 'gro', 'off', ns=ns_a, check=False)
        return a, b

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for ns in reversed(self.namespaces):
            sh('ip', 'netns', 'del', ns, check=False)
        self.namespaces = []

    # ---- the program under test -------------------------------------------
    def command(self, ns, eal, app):
        cmd = [self.prog] + eal + ['--'] + app
        if self.hide_pci:
            cmd = ['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
                   'mount -t tmpfs none /sys/bus/pci/devices && exec "$0" "$@"'] + cmd
        if ns:
            cmd = ['ip', 'netns', 'exec', ns] + cmd
        return cmd

    def run_once(self, ns, eal, app, timeout=30):
        r = subprocess.run(self.command(ns, eal, app), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout)
        return r.returncode, r.stderr

    def start(self, ns, eal, app):
        p = subprocess.Popen(self.command(ns, eal, app), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        out = []
        ready = threading.Event()

        def reader(stream, sink, watch):
            for line in stream:
                sink.append(line)
                if watch and line.startswith('READY'):
                    ready.set()
            ready.set()

        p.err_lines = []
        threading.Thread(target=reader, args=(p.stdout, out, True), daemon=True).start()
        threading.Thread(target=reader, args=(p.stderr, p.err_lines, False),
                         daemon=True).start()
        p.out_lines = out
        if not ready.wait(30) or p.poll() is not None:
            raise RuntimeError('server did not start: rc=%s\n%s' % (
                p.poll(), ''.join(p.err_lines[-20:])))
        return p

    def stop(self, p):
        try:
            rc = p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            raise RuntimeError('server did not exit after QUIT')
        time.sleep(0.1)
        final = [l for l in p.out_lines if l.startswith('FINAL')]
        if rc != 0:
            raise RuntimeError('server exit status %d\n%s' % (rc, ''.join(p.err_lines[-20:])))
        return final[0].strip() if final else ''

    # ---- checks ---------------------------------------------------------------
    def check(self, name, fn, *args):
        t0 = time.monotonic()
        try:
            fn(*args)
        except Exception as e:  # report every kind of failure, go on
            self.failed.append(name)
            print('FAIL %-34s %s' % (name, e))
            return False
        self.passed += 1
        print('ok   %-34s (%.2f s)' % (name, time.monotonic() - t0))
        return True

    def client(self, ns, scenario, ip, port, *args, timeout=120):
        cmd = ['ip', 'netns', 'exec', ns, sys.executable, os.path.abspath(__file__),
               'client', scenario, ip, str(port)] + [str(a) for a in args]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        for line in r.stdout.splitlines():
            print('       ' + line)
        if r.returncode != 0:
            raise AssertionError('client %s failed' % scenario)

    # ---- start-up failures --------------------------------------------------
    def expect_fail(self, ns, eal, app, rc_want, text):
        rc, err = self.run_once(ns, eal, app)
        if rc != rc_want or not re.search(text, err):
            raise AssertionError('rc %d (want %d), stderr:\n%s' % (rc, rc_want, err[-1500:]))
        line = [l for l in err.splitlines() if 'tp-dpdk' in l]
        print('       ' + (line[-1] if line else err.strip().splitlines()[-1]))

    def startup_failures(self):
        app = ['--ip', '10.215.0.2/24', '--deadline-s', '5']
        base = [a for a in self.eal]
        self.check('refuses EAL args without --no-pci', self.expect_fail, None,
                   [a for a in base if a != '--no-pci'] + ['--vdev=net_null0'], app, 11,
                   'refusing to start DPDK')
        self.check('bad EAL option: one clear line', self.expect_fail, None,
                   base + ['--no-such-eal-option'], app, 11, 'EAL initialisation failed')
        self.check('missing vdev interface', self.expect_fail, None,
                   base + ['--vdev=net_af_packet0,iface=ndp%dnone' % self.pid], app, 15,
                   'no DPDK port')
        self.check('bad port configuration', self.expect_fail, None, base,
                   ['--ip', '10.215.0.0/24'], 11, 'not a usable host address')
        if free_hugepages() == 0:
            self.check('no hugepages: refused before EAL', self.expect_fail, None,
                       [a for a in base if a not in ('--no-huge', '--no-shconf')], app, 12,
                       'no free hugepages')
        else:
            print('skip no-hugepages case (hugepages are reserved here)')
        ns_a, ns_b = self.netns('ca'), self.netns('cb')
        a, b = self.veth('c', ns_a, ns_b)
        sh('ip', 'addr', 'add', '10.215.0.2/24', 'dev', b, ns=ns_b)
        time.sleep(0.2)
        self.check('address conflict detected', self.expect_fail, ns_a,
                   base + ['--vdev=net_af_packet0,iface=%s,qpairs=1,qdisc_bypass=1' % a],
                   app, 16, 'already in use')

    # ---- functional runs -----------------------------------------------------
    def af_packet(self):
        ns_a, ns_b = self.netns('a'), self.netns('b')
        a, _b = self.veth('', ns_a, ns_b)
        sh('ip', 'addr', 'add', '10.213.0.1/24', 'dev', _b, ns=ns_b)
        srv_ip, my_ip, port = '10.213.0.2', '10.213.0.1', 5000
        mode = ['--poll-lcore'] if self.two else []
        p = self.start(ns_a, self.eal2 + [
            '--vdev=net_af_packet0,iface=%s,qpairs=1,qdisc_bypass=1' % a],
            ['--ip', srv_ip + '/24', '--port', str(port), '--deadline-s', '300',
             '--mbufs', '4095'] + mode)
        c = lambda *a, **k: self.client(ns_b, *a, **k)
        self.check('af_packet: accept/read/write/close', c, 'echo_basic', srv_ip, port)
        self.check('af_packet: 200 connections', c, 'echo_many', srv_ip, port, 200)
        self.check('af_packet: 1 MiB from server', c, 'send_large', srv_ip, port, MiB)
        self.check('af_packet: 16 MiB from server', c, 'send_large', srv_ip, port, 16 * MiB)
        self.check('af_packet: 1 MiB echo (EAGAIN/EV_OUT)', c, 'echo_large', srv_ip, port, MiB)
        self.check('af_packet: 1 MiB upload', c, 'sink_large', srv_ip, port, MiB)
        self.check('af_packet: outgoing connect', c, 'connect', srv_ip, port,
                   my_ip, 6000, 100000, 1)
        self.check('af_packet: 20 outgoing connects', c, 'connect', srv_ip, port,
                   my_ip, 6001, 20000, 20)
        self.check('af_packet: refused connect -> EV_ERR', c, 'refused', srv_ip, port,
                   my_ip, 6999)
        self.check('af_packet: loopback/own/off-link connect fail', c, 'unreachable', srv_ip,
                   port, '127.0.0.1', srv_ip, '192.0.2.1')
        self.check('af_packet: spoofed own-address SYN dropped', c, 'spoof', srv_ip, port, _b)
        self.check('af_packet: bad IP/TCP checksums dropped', c, 'badsum', srv_ip, port, _b,
                   my_ip)
        self.check('af_packet: 32 x 300 KB held unread, port still receives', c, 'hold',
                   srv_ip, port, 32, 300000)
        self.check('af_packet: peer reset', c, 'reset', srv_ip, port)
        self.check('af_packet: close from another handler', c, 'group', srv_ip, port, 16)
        self.check('af_packet: 2000 round trips', c, 'pingpong', srv_ip, port, 2000)
        self.check('af_packet: counters, polled on lcore 1', c, 'stats', srv_ip, port,
                   *(['1', 'woken'] if self.two else []))
        self.check('af_packet: quit', c, 'quit', srv_ip, port)
        self.check('af_packet: clean exit', self.expect_exit, p)

    def tap(self):
        ns = self.netns('t')
        tap = 'ndp%dt' % self.pid
        srv_ip, my_ip, port = '10.214.0.2', '10.214.0.1', 5001
        p = self.start(ns, self.eal + ['--vdev=net_tap0,iface=%s' % tap],
                       ['--ip', srv_ip + '/24', '--port', str(port), '--deadline-s', '300',
                        '--arp-probe-ms', '0', '--poll-thread'])
        sh('ip', 'addr', 'add', my_ip + '/24', 'dev', tap, ns=ns)
        sh('ip', 'link', 'set', tap, 'up', ns=ns)
        sh('ethtool', '-K', tap, 'tx', 'off', 'tso', 'off', 'gso', 'off', ns=ns, check=False)
        c = lambda *a, **k: self.client(ns, *a, **k)
        self.check('tap: accept/read/write/close', c, 'echo_basic', srv_ip, port)
        self.check('tap: 50 connections', c, 'echo_many', srv_ip, port, 50)
        self.check('tap: 1 MiB from server', c, 'send_large', srv_ip, port, MiB)
        self.check('tap: 1 MiB echo', c, 'echo_large', srv_ip, port, MiB)
        self.check('tap: outgoing connect', c, 'connect', srv_ip, port, my_ip, 6000, 100000, 1)
        self.check('tap: refused connect', c, 'refused', srv_ip, port, my_ip, 6999)
        self.check('tap: bad IP/TCP checksums dropped (RX offload)', c, 'badsum', srv_ip, port,
                   tap, my_ip)
        self.check('tap: peer reset', c, 'reset', srv_ip, port)
        self.check('tap: counters, polled by a pthread', c, 'stats', srv_ip, port,
                   'registered', 'woken')
        self.check('tap: quit', c, 'quit', srv_ip, port)
        self.check('tap: clean exit', self.expect_exit, p)

    def expect_exit(self, p):
        final = self.stop(p)
        print('       ' + final[:200])
        bad = [l for l in p.err_lines if 'Sanitizer' in l or 'runtime error' in l]
        assert not bad, 'sanitizer report:\n' + ''.join(p.err_lines[-40:])
        m = re.search(r'violations=(\d+)', final)
        assert m and m.group(1) == '0', final


def skip(reason):
    print('SKIP: %s' % reason)
    return SKIP


def main(argv):
    if len(argv) >= 2 and argv[1] == 'client':
        return client_main(argv[2:])
    if len(argv) != 2:
        print(__doc__)
        return 2
    prog = os.path.abspath(argv[1])
    if os.geteuid() != 0:
        return skip('needs root (network namespaces, af_packet, tap)')
    for tool in ('ip', 'ethtool', 'sysctl'):
        if shutil.which(tool) is None:
            return skip('%s not installed' % tool)
    probe = subprocess.run(['ip', 'netns', 'add', 'nrfdp-%d-probe' % os.getpid()],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if probe.returncode != 0:
        return skip('cannot create network namespaces')
    subprocess.run(['ip', 'netns', 'del', 'nrfdp-%d-probe' % os.getpid()])

    r = Runner(prog)

    def on_term(_sig, _frame):
        raise SystemExit('terminated')

    signal.signal(signal.SIGTERM, on_term)
    print('EAL: %s%s' % (' '.join(r.eal),
                         '' if r.hide_pci else ' (unshare missing: PCI not hidden)'))
    try:
        for part in (r.startup_failures, r.af_packet, r.tap):
            try:
                part()
            except Exception as e:
                r.failed.append(part.__name__)
                print('FAIL %-34s %s' % (part.__name__, e))
            finally:
                r.cleanup()
    finally:
        r.cleanup()
    print('%d passed, %d failed%s' % (r.passed, len(r.failed),
                                      (': ' + ', '.join(r.failed)) if r.failed else ''))
    return 1 if r.failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
