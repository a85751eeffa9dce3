#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Floods against nrfwd on its DPDK transport, and the same connection
floods against nrfwd on kernel sockets as the comparison
(docs/decisions/0056-dpdk-neighbours-and-stray-segments.md,
0057-dpdk-syn-cookies.md, 0062-dpdk-connection-floods.md).

Usage: python3 tests/dpdk/test_nrfwd_dpdk_floods.py --build-dir BUILD
       (NRFWD_FLOODS=spoofed or =connections: one group only)

A local NRF (nrfstub), a client host, an attacker host, and nrfwd: first
on kernel sockets in a namespace of its own, then on a DPDK port
(net_af_packet) beside the local NRF. The attacker is this script, run
again in its namespace:
 - --attack: Ethernet frames on a raw socket, TCP segments to nrfwd's port
   from spoofed source addresses .150-.250 of the segment (out-of-window
   ACKs, SYNs), 20 000 a second for 5 s (DPDK path);
 - --crowd: real TCP connections from its own address, 2 000 new ones a
   second: 'bare' (nothing sent on them; 13 000 against DPDK, 6 000 against
   the kernel path) and 'slowloris' (2 000, the HTTP/2 preface one byte a
   second on each), kept a few seconds, then reset.
Meanwhile the client runs h2load (-c 2 -m 4 --rps 50) on connections
opened before, and a probe opens a new connection (curl) every 0.25 s.

Each flood: >= 99 % of h2load's requests and every probe served, a new
connection served within 1 s after it; spoofed floods: nrfwd's counters
show the flood was answered as designed (RSTs on their budget, SYN cookies,
no ARP for spoofed addresses); connection floods on DPDK: the established
client's p99 during the flood within 2x the kernel path's (+10 ms for a
loaded machine). With Debian's liblwip (no SYN cookies, no pcb index) the
SYN flood and the DPDK connection floods are skipped, with the reason.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'integration'))

SELF = 'nrf-a.test'
PORT = 8080
MGMT = 9090
DISC_UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF'
RATE = 20000        # flood frames per second
FLOOD_S = 5.0       # flood duration
PROBE_EVERY = 0.25  # a new connection this often
CONN_RATE = 2000    # connection floods: new connections a second
BARE = 13000        # bare connections (DPDK path)
BARE_KERNEL = 6000  # the same on the kernel path (the comparison; shorter)
SLOWLORIS = 2000    # slowloris connections (both paths)
SLOW_HOLD = 4.0     # how long the slowloris connections are kept
MAX_CONNS = 10000   # runtime.limits.maxConnections (its default)


# ---- the attacker (inside its namespace) -------------------------------------

def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def frame(dst_mac, src_mac, src_ip, dst_ip, sport, dport, seq, ack, flags, opts=b''):
    """One Ethernet + IPv4 + TCP frame with correct checksums."""
    thl = 20 + len(opts)
    tcp = struct.pack('!HHIIBBHHH', sport, dport, seq, ack, (thl // 4) << 4, flags, 65535,
                      0, 0) + opts
    pseudo = src_ip + dst_ip + struct.pack('!BBH', 0, 6, thl)
    c = csum(pseudo + tcp)
    tcp = tcp[:16] + struct.pack('!H', c) + tcp[18:]
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + thl, random.getrandbits(16), 0x4000, 64, 6,
                     0, src_ip, dst_ip)
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return dst_mac + src_mac + b'\x08\x00' + ip + tcp


def attack(kind, dev, dst_ip, dst_mac, rate, seconds):
    """Send @kind ('syn' or 'ack') segments to @dst_ip:PORT at @rate for
    @seconds; prints the frames sent."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    src_mac = bytes.fromhex(open('/sys/class/net/%s/address' % dev).read().strip()
                            .replace(':', ''))
    dmac = bytes.fromhex(dst_mac.replace(':', ''))
    dip = socket.inet_aton(dst_ip)
    net = dst_ip.rsplit('.', 1)[0]
    flags = 0x02 if kind == 'syn' else 0x10
    opts = struct.pack('!BBH', 2, 4, 1460) if kind == 'syn' else b''
    frames = [frame(dmac, src_mac, socket.inet_aton('%s.%d' % (net, random.randint(150, 250))),
                    dip, random.randint(1024, 65535), PORT, random.getrandbits(32),
                    random.getrandbits(32), flags, opts) for _ in range(20000)]
    sent = 0
    t0 = time.monotonic()
    batch = max(1, rate // 200)
    while True:
        now = time.monotonic() - t0
        if now >= seconds:
            break
        due = int(now * rate)
        while sent < due:
            for _ in range(batch):
                try:
                    s.send(frames[sent % len(frames)])
                except OSError:
                    pass
                sent += 1
        time.sleep(0.002)
    print(sent)


PREFACE = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'


def h2_frame(ftype, flags, payload=b''):
    return struct.pack('!I', len(payload))[1:] + bytes([ftype, flags]) + b'\0\0\0\0' + payload


def forged(dev, dst_ip, dst_mac, rate, seconds):
    """Inside the attacker's namespace: an HTTP/2 connection of its own to
    @dst_ip:PORT (preface, SETTINGS, nrfwd's SETTINGS acknowledged), then,
    on a raw socket, segments forged for that connection's addresses and
    ports with sequence and acknowledgement numbers far off (each one an
    unacceptable segment: RFC 5961's challenge ACK) at @rate for @seconds;
    then a PING on the connection. Prints JSON: frames sent, whether the
    PING was answered."""
    import json
    import select

    c = socket.create_connection((dst_ip, PORT), timeout=5)
    c.sendall(PREFACE + h2_frame(4, 0))
    got = b''
    end = time.monotonic() + 5
    while b'\x04\x00\x00\x00\x00\x00' not in got[:64] and time.monotonic() < end:
        got += c.recv(65536)  # nrfwd's SETTINGS
    c.sendall(h2_frame(4, 1))
    sip, sport = c.getsockname()
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    src_mac = bytes.fromhex(open('/sys/class/net/%s/address' % dev).read().strip()
                            .replace(':', ''))
    dmac = bytes.fromhex(dst_mac.replace(':', ''))
    frames = [frame(dmac, src_mac, socket.inet_aton(sip), socket.inet_aton(dst_ip), sport, PORT,
                    random.getrandbits(32), random.getrandbits(32), 0x10, b'')
              for _ in range(5000)]
    sent = 0
    t0 = time.monotonic()
    batch = max(1, rate // 200)
    while time.monotonic() - t0 < seconds:
        due = int((time.monotonic() - t0) * rate)
        while sent < due:
            for _ in range(batch):
                try:
                    s.send(frames[sent % len(frames)])
                except OSError:
                    pass
                sent += 1
        time.sleep(0.002)
    c.setblocking(False)
    try:  # what came meanwhile
        while c.recv(65536):
            pass
    except (BlockingIOError, OSError):
        pass
    c.setblocking(True)
    c.settimeout(3)
    alive = False
    try:
        c.sendall(h2_frame(6, 0, b'floods!!'))
        end = time.monotonic() + 3
        buf = b''
        while time.monotonic() < end and not alive:
            r, _, _ = select.select([c], [], [], 0.5)
            if r:
                d = c.recv(65536)
                if not d:
                    break
                buf += d
                alive = h2_frame(6, 1, b'floods!!') in buf
    except OSError:
        pass
    print(json.dumps({'sent': sent, 'alive': alive}))


def crowd(kind, dst_ip, port, n, rate, hold):
    """Inside the attacker's namespace: open @n TCP connections to
    @dst_ip:@port at @rate a second from this host's own address. 'bare'
    sends nothing on them; 'slowloris' sends the HTTP/2 preface one byte a
    second on each. All are kept until @hold s after the first, then closed
    (by reset: no FIN_WAIT left behind). Prints a JSON summary."""
    import errno
    import json
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(hard, n + 100), max(hard, n + 100)))
    socks = []
    failed = 0
    t0 = time.monotonic()
    nxt = 0.0  # next one-byte round (slowloris)
    sent_bytes = 0
    linger = struct.pack('ii', 1, 0)
    while True:
        now = time.monotonic() - t0
        if now >= hold:
            break
        due = min(n, int(now * rate) + 1)
        while len(socks) + failed < due:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            e = s.connect_ex((dst_ip, port))
            if e not in (0, errno.EINPROGRESS):
                failed += 1
                s.close()
                continue
            socks.append([s, 0])
        if kind == 'slowloris' and now >= nxt:
            nxt = now + 1.0
            for e in socks:
                if e[1] < len(PREFACE) and e[0] is not None:
                    try:
                        e[0].send(PREFACE[e[1]:e[1] + 1])
                        e[1] += 1
                        sent_bytes += 1
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        e[0].close()
                        e[0] = None
        time.sleep(0.002)
    # What the server did with them: connected (handshake done), closed by
    # the server (EOF or reset) by now.
    connected = closed = 0
    for e in socks:
        s = e[0]
        if s is None:
            closed += 1
            continue
        try:
            s.getpeername()
        except OSError:
            closed += 1  # never connected, or reset
            continue
        connected += 1
        try:
            while s.recv(1 << 16):
                pass
            closed += 1  # EOF
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            closed += 1
    for e in socks:
        if e[0] is not None:
            e[0].close()
    print(json.dumps({'opened': len(socks), 'failed': failed, 'connected': connected,
                      'closed_by_server': closed, 'bytes': sent_bytes,
                      'seconds': round(time.monotonic() - t0, 2)}))


# ---- the test ------------------------------------------------------------------

def metrics(fab, host):
    r = fab.run(host, ['curl', '-s', '-m', '10', 'http://127.0.0.1:%d/metrics' % MGMT],
                timeout=20)
    out = {}
    for line in r.stdout.decode('utf-8', 'replace').splitlines():
        if line and not line.startswith('#'):
            k, _, v = line.rpartition(' ')
            try:
                out[k] = float(v)
            except ValueError:
                pass
    return out


def summed(m, name, **labels):
    """Sum of metric @name over the samples whose labels include @labels."""
    tot = 0.0
    for k, v in m.items():
        if k == name or k.startswith(name + '{'):
            if all('%s="%s"' % (lk, lv) in k for lk, lv in labels.items()):
                tot += v
    return tot


def mac_of(fab, host, dev):
    r = fab.run(host, ['cat', '/sys/class/net/%s/address' % dev])
    return r.stdout.decode().strip()


def flood_case(fab, a, c, x, fwd, kind, checks):
    import nrfwd_dpdk_harness as D

    m0 = metrics(fab, a)
    mac = mac_of(fab, a, fab.dpdk_dev(a))
    n_req = 900  # 2 connections x 50 req/s: 9 s, the flood inside it
    h2 = subprocess.Popen(['ip', 'netns', 'exec', c.ns, 'h2load', '-n', str(n_req), '-c', '2',
                           '-m', '4', '--rps', '50', fwd.url(DISC_UDM)],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, start_new_session=True)
    probes = []
    stop = threading.Event()

    def probe():
        while not stop.is_set():
            t = time.monotonic()
            try:
                st, _, _ = fab.curl(c, fwd.url(DISC_UDM), timeout=3.0)
            except Exception:  # noqa: BLE001 - a failed probe is a result
                st = None
            probes.append((st, time.monotonic() - t))
            time.sleep(max(0.0, PROBE_EVERY - (time.monotonic() - t)))

    try:
        time.sleep(1.5)  # h2load's connections are established
        th = threading.Thread(target=probe)
        th.start()
        try:
            r = fab.run(x, [sys.executable, os.path.abspath(__file__), '--attack', kind,
                            x.dev, fwd.dpdk_ip, mac, str(RATE), str(FLOOD_S)],
                        timeout=FLOOD_S + 30)
        finally:
            stop.set()
            th.join()
        D.expect(r.returncode == 0, 'attacker: %s' % (r.stdout + r.stderr).decode()[-2000:])
        sent = int(r.stdout.decode().split()[-1])
        out, _ = h2.communicate(timeout=60)
    finally:
        if h2.poll() is None:
            os.kill(h2.pid, 9)
            h2.wait()
    res = D.parse_h2load(out.decode('utf-8', 'replace'), h2.returncode)
    m = metrics(fab, a)

    def delta(name, **labels):
        return summed(m, name, **labels) - summed(m0, name, **labels)

    ok = res.get('status_2xx', 0)
    good = sum(1 for st, _ in probes if st == 200)
    slow = max((t for _, t in probes), default=0.0)
    print('     %s flood: %d frames in %.0f s; h2load %d/%d 2xx; probes %d/%d (slowest %.2f s); '
          'rst sent %d limited %d; direct %d; neighbours %d (pinned %d), evicted %d, '
          'arp requests %d limited %d; syn cookies sent %d valid %d' % (
              kind, sent, FLOOD_S, ok, n_req, good, len(probes), slow,
              delta('nrfwd_dpdk_stray_rst_total', kind='sent'),
              delta('nrfwd_dpdk_stray_rst_total', kind='limited'),
              delta('nrfwd_dpdk_neighbour_events_total', event='direct'),
              summed(m, 'nrfwd_dpdk_neighbours', kind='all'),
              summed(m, 'nrfwd_dpdk_neighbours', kind='pinned'),
              delta('nrfwd_dpdk_neighbour_events_total', event='evicted'),
              delta('nrfwd_dpdk_arp_total', kind='request'),
              delta('nrfwd_dpdk_arp_total', kind='request_limited'),
              delta('nrfwd_dpdk_syn_cookies_total', kind='sent'),
              delta('nrfwd_dpdk_syn_cookies_total', kind='valid')), flush=True)
    D.expect(sent >= RATE * FLOOD_S * 0.5, 'the attacker sent only %d frames' % sent)
    D.expect(ok >= 0.99 * n_req, 'h2load: %d of %d answered 2xx\n%s' % (
        ok, n_req, res['raw'][-1500:]))
    D.expect(len(probes) >= FLOOD_S / PROBE_EVERY * 0.5, 'only %d probes' % len(probes))
    D.expect_eq(good, len(probes), 'probes answered 200 (%r)' % probes)
    D.expect(summed(m, 'nrfwd_dpdk_neighbours', kind='pinned') >= 1,
             'no pinned neighbour (the local NRF)')
    checks(delta, m)
    st, _, _ = fab.curl(c, fwd.url(DISC_UDM))
    D.expect_eq(st, 200, 'served after the flood')


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float('nan')
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def conn_flood_case(fab, c, x, url, mgmt_host, kind, n, rate, hold, path, results,
                    target=None):
    """@n connections of @kind from @x at @rate a second, held @hold s,
    against the nrfwd serving @url, with h2load (established connections)
    and a new-connection probe from @c alongside. Records the figures in
    @results[(kind, @path)]; with @target (the kernel path's figures of
    the same case) checks the established client's p99 against it."""
    import nrfwd_dpdk_harness as D

    n_req = int(100 * (hold + 4))  # 2 connections x 50 req/s around the flood
    log = os.path.join(fab.tmpdir, 'h2load-%s-%s.log' % (path, kind))
    h2 = subprocess.Popen(['ip', 'netns', 'exec', c.ns, 'h2load', '-n', str(n_req), '-c', '2',
                           '-m', '4', '--rps', '50', '--log-file=' + log, url],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, start_new_session=True)
    probes = []
    stop = threading.Event()

    def probe():
        while not stop.is_set():
            t = time.monotonic()
            try:
                st, _, _ = fab.curl(c, url, timeout=3.0)
            except Exception:  # noqa: BLE001 - a failed probe is a result
                st = None
            probes.append((st, time.monotonic() - t))
            time.sleep(max(0.0, PROBE_EVERY - (time.monotonic() - t)))

    try:
        time.sleep(1.5)  # h2load's connections are established
        th = threading.Thread(target=probe)
        th.start()
        try:
            t0 = time.time()
            r = fab.run(x, [sys.executable, os.path.abspath(__file__), '--crowd', kind,
                            url.split('/')[2].split(':')[0], str(PORT), str(n), str(rate),
                            str(hold)], timeout=hold + 60)
            t1 = time.time()
            # Recovery: a new connection right after the crowd went away.
            tr = time.monotonic()
            st_after, _, _ = fab.curl(c, url, timeout=5.0)
            recovery = time.monotonic() - tr
        finally:
            stop.set()
            th.join()
        D.expect(r.returncode == 0, 'crowd: %s' % (r.stdout + r.stderr).decode()[-2000:])
        crowd_out = json.loads(r.stdout.decode().strip().splitlines()[-1])
        out, _ = h2.communicate(timeout=60)
    finally:
        if h2.poll() is None:
            os.kill(h2.pid, 9)
            h2.wait()
    res = D.parse_h2load(out.decode('utf-8', 'replace'), h2.returncode)
    lat = []  # the established client's requests started during the flood
    slowest = []  # (ms, seconds after the flood began)
    with open(log) as f:
        for line in f:
            cols = line.split('\t')
            if len(cols) >= 3 and t0 <= int(cols[0]) / 1e6 <= t1:
                lat.append(int(cols[2]) / 1e3 if cols[1] == '200' else 1e9)
                slowest.append((lat[-1], int(cols[0]) / 1e6 - t0))
    slowest = sorted(slowest, reverse=True)[:5]
    ok = res.get('status_2xx', 0)
    good = sum(1 for st, _ in probes if st == 200)
    p99 = pct(lat, 0.99)
    probe_p99 = pct([t * 1e3 for st, t in probes if st == 200], 0.99)
    fig = {'p99': p99, 'probe_p99': probe_p99, 'served': ok, 'requests': n_req,
           'probes': (good, len(probes)), 'recovery': recovery, 'crowd': crowd_out}
    results[(kind, path)] = fig
    m = metrics(fab, mgmt_host) if path == 'dpdk' else {}
    print('     %s %s: %d connections at %d/s held %.1f s (%s); h2load %d/%d 2xx, p99 %.1f ms '
          'during it (%d requests); probes %d/%d, p99 %.1f ms; new connection after it '
          '%.3f s%s%s' % (
              path, kind, n, rate, hold, ', '.join('%s %s' % kv for kv in crowd_out.items()),
              ok, n_req, p99, len(lat), good, len(probes), probe_p99, recovery,
              ('; kernel path p99 %.1f ms, probes %.1f ms' % (target['p99'], target['probe_p99'])
               if target else ''),
              ('; lwip pcbs syn_rcvd %d established %d time_wait %d' % (
                  summed(m, 'nrfwd_dpdk_lwip_pcbs', state='syn_rcvd'),
                  summed(m, 'nrfwd_dpdk_lwip_pcbs', state='established'),
                  summed(m, 'nrfwd_dpdk_lwip_pcbs', state='time_wait')) if m else '')),
          flush=True)
    D.expect(crowd_out['opened'] >= n * 0.95, 'the crowd opened only %d of %d connections'
             % (crowd_out['opened'], n))
    D.expect(ok >= 0.99 * n_req, 'h2load: %d of %d answered 2xx\n%s' % (
        ok, n_req, res['raw'][-1500:]))
    D.expect(len(lat) >= hold * 100 * 0.5, 'only %d requests during the flood' % len(lat))
    D.expect(len(probes) >= hold / PROBE_EVERY * 0.5, 'only %d probes' % len(probes))
    D.expect_eq(good, len(probes), 'probes answered 200 (%r)' % probes)
    D.expect_eq(st_after, 200, 'a new connection after the flood')
    D.expect(recovery < 1.0, 'a new connection after the flood took %.2f s' % recovery)
    if target is not None and not slow_build():
        # Within 2x of the kernel path's p99 under the same flood; a few ms
        # of slack for a loaded 2-core machine, where either p99 is a few
        # requests delayed by a scheduler tick.
        D.expect(p99 <= 2 * target['p99'] + 10.0,
                 'p99 %.1f ms during the flood, the kernel path %.1f ms; slowest requests '
                 '(ms at s into the flood): %s' % (p99, target['p99'], ', '.join(
                     '%.0f at %.2f' % x for x in slowest)))


def slow_build():
    """A build whose timing is not nrfwd's as it ships: sanitizers, or lwIP's
    assertions (-Dlwip_asserts=true: lwIP then checks its lists on every
    change, a walk of every pcb). The p99 comparison is reported, not
    asserted there."""
    import nrfwd_harness as H
    if H.sanitized() != 'none':
        return True
    try:
        with open(os.path.join(H.BUILD_DIR, 'meson-info', 'intro-buildoptions.json')) as f:
            opts = {o['name']: o['value'] for o in json.load(f)}
    except (OSError, ValueError):
        return False
    return str(opts.get('lwip_asserts', 'false')) == 'true' or opts.get('buildtype') == 'debug'


def p99_once_more(case, *args, **kw):
    """@case; when only its p99 bound failed, once more (both printed). On
    a loaded 2-core machine either path's p99 of a few hundred requests is
    now and then a scheduler stall of 100-200 ms (the kernel path's ranged
    from 2 to 98 ms between runs); every other check holds the first time."""
    try:
        case(*args, **kw)
    except AssertionError as e:
        if not str(e).startswith('p99 '):
            raise
        print('     above the bound (%s): once more' % str(e)[:300], flush=True)
        case(*args, **kw)


def start_kernel_nrfwd(fab, k, stub):
    """nrfwd on kernel sockets in @k (its kernel address), the same local
    NRF: the comparison for the connection floods."""
    import nrfwd_dpdk_harness as D
    import nrfwd_harness as H

    cfg = D.config(SELF, PORT, local=stub, limits={'maxConnections': MAX_CONNS})
    cfg['runtime']['listen'][0]['address'] = k.ip
    cfg['runtime']['management'] = {'address': '127.0.0.1', 'port': MGMT}
    path = os.path.join(fab.tmpdir, 'nrfwd-kernel.json')
    proc = fab._spawn('nrfwd-kernel', k, [H.binary('nrfwd')] + D.cfg_args(cfg, path) +
                      ['--log-level', 'info'], PORT, k.ip)
    fab.wait_line(proc, r'nrfwd listening on')
    return proc


FORGED_RATE, FORGED_S = 10000, 3.0


def forged_case(fab, a, x, fwd):
    """Forged out-of-window segments of one live connection: the ACKs
    nrfwd answers them with stay within runtime.dpdk.challengeAcksPerSecond
    (1 000 a second and as much burst), the rest is dropped and counted, and
    the connection lives on (its PING answered)."""
    import nrfwd_dpdk_harness as D

    m0 = metrics(fab, a)
    mac = mac_of(fab, a, fab.dpdk_dev(a))
    r = fab.run(x, [sys.executable, os.path.abspath(__file__), '--forged', x.dev, fwd.dpdk_ip,
                    mac, str(FORGED_RATE), str(FORGED_S)], timeout=FORGED_S + 30)
    D.expect(r.returncode == 0, 'forger: %s' % (r.stdout + r.stderr).decode()[-2000:])
    out = json.loads(r.stdout.decode().strip().splitlines()[-1])
    m = metrics(fab, a)
    sent = summed(m, 'nrfwd_dpdk_challenge_acks_total', kind='sent') - \
        summed(m0, 'nrfwd_dpdk_challenge_acks_total', kind='sent')
    limited = summed(m, 'nrfwd_dpdk_challenge_acks_total', kind='limited') - \
        summed(m0, 'nrfwd_dpdk_challenge_acks_total', kind='limited')
    print('     forged segments of a live connection: %d in %.0f s; challenge ACKs sent %d, '
          'limited %d; the connection answered its PING: %s' % (
              out['sent'], FORGED_S, sent, limited, out['alive']), flush=True)
    D.expect(out['sent'] >= FORGED_RATE * FORGED_S * 0.5, 'only %d forged' % out['sent'])
    D.expect(limited > 0, 'no challenge ACK limited')
    D.expect(sent <= 1000 * (FORGED_S + 2) + 1000, '%d challenge ACKs sent' % sent)
    D.expect(sent + limited >= out['sent'] * 0.5, 'forged segments not seen as unacceptable')
    D.expect(out['alive'], 'the connection did not answer its PING after the forged segments')


def dpdk_view(fab, a, own):
    """GET /dpdk after the spoofed floods: the same counters as /metrics,
    and the port's extended counters (what net_af_packet offers) in both."""
    import nrfwd_dpdk_harness as D

    r = fab.run(a, ['curl', '-s', '-m', '10', 'http://127.0.0.1:%d/dpdk' % MGMT], timeout=20)
    doc = json.loads(r.stdout.decode())
    m = metrics(fab, a)
    D.expect_eq(doc['transport'], 'dpdk', 'transport')
    D.expect_eq(len(doc['workers']), 1, 'workers')
    w = doc['workers'][0]
    for key, name, labels in (('strayResets', 'nrfwd_dpdk_stray_rst_total', 'limited'),
                              ('synCookies', 'nrfwd_dpdk_syn_cookies_total', 'sent')):
        sub = 'limited' if key == 'strayResets' else 'sent'
        # /metrics was read just after: the same count, or a few more.
        later = int(summed(m, name, kind=labels))
        D.expect(0 <= later - w[key][sub] <= 5, '%s.%s %d, /metrics %d' % (
            key, sub, w[key][sub], later))
    D.expect(w['strayResets']['limited'] > 0, 'no stray RST limited in GET /dpdk')
    if own:
        D.expect(w['synCookies']['sent'] > 0, 'no SYN cookie in GET /dpdk')
    xs = doc['port']['xstats']
    xm = {k: v for k, v in m.items() if k.startswith('nrfwd_dpdk_port_xstats_total{')}
    print('     GET /dpdk: %d extended counters of the port (%s), rx frames %d, missed %d' % (
        len(xs), ', '.join(sorted(xs)[:6]) + (', ...' if len(xs) > 6 else ''),
        doc['port']['rxFrames'], doc['port']['rxMissed']), flush=True)
    D.expect(len(xs) > 0, 'no extended counter of the port')
    D.expect_eq(len(xm), len(xs), 'extended counters in /metrics')


def own_lwip():
    """Whether the build under test has nrfwd's own lwIP build (SYN
    cookies, challenge-ACK budget, pcb index) rather than Debian's liblwip:
    the lwip subproject was configured (lib/tp/meson.build)."""
    import nrfwd_harness as H
    try:
        with open(os.path.join(H.BUILD_DIR, 'meson-info', 'intro-projectinfo.json')) as f:
            info = json.load(f)
    except (OSError, ValueError):
        return True  # cannot tell: run everything
    return any(sp.get('name') == 'lwip' for sp in info.get('subprojects', []))


def floods(fab, r):
    import nrfwd_dpdk_harness as D

    a = fab.host('a')
    c = fab.host('c')
    x = fab.host('x')
    k = fab.host('k')
    stub = fab.start_stub(a, 'local-a', 'stub-profiles-a.json', extra=['--no-record'])
    # NRFWD_FLOODS=spoofed or =connections runs one group only (default both).
    only = os.environ.get('NRFWD_FLOODS', '')
    res = {}
    if only in ('', 'connections'):
        # Connection floods from the attacker's own address against nrfwd
        # on kernel sockets first (shorter floods): the comparison.
        kern = start_kernel_nrfwd(fab, k, stub)
        st, _, _ = fab.curl(c, kern.url(DISC_UDM))
        D.expect_eq(st, 200, 'kernel path: served before the floods')
        for kind, n, hold in (('bare', BARE_KERNEL, BARE_KERNEL / CONN_RATE + 1.0),
                              ('slowloris', SLOWLORIS, SLOW_HOLD)):
            r.check('kernel: %d %s connections at %d/s' % (n, kind, CONN_RATE),
                    conn_flood_case, fab, c, x, kern.url(DISC_UDM), k, kind, n, CONN_RATE,
                    hold, 'kernel', res)
        fab.stop(kern)

    cfg = D.config(SELF, PORT, local=stub, limits={'maxConnections': MAX_CONNS})
    cfg['runtime']['management'] = {'address': '127.0.0.1', 'port': MGMT}
    fwd = fab.start_nrfwd(a, cfg)
    st, _, _ = fab.curl(c, fwd.url(DISC_UDM))
    D.expect_eq(st, 200, 'served before the floods')
    own = own_lwip()

    def ack_checks(delta, m):
        # One RST per stray segment would be RATE * FLOOD_S; the budget
        # allows about 200 a second (+ the burst).
        sent = delta('nrfwd_dpdk_stray_rst_total', kind='sent')
        D.expect(delta('nrfwd_dpdk_stray_rst_total', kind='limited') > 0, 'no RST limited')
        D.expect(sent <= 200 * (FLOOD_S + 3) + 200, '%d RSTs sent' % sent)
        # The RSTs went to the frames' MAC: no ARP for the spoofed addresses.
        D.expect(delta('nrfwd_dpdk_arp_total', kind='request') <= 20,
                 '%d ARP requests' % delta('nrfwd_dpdk_arp_total', kind='request'))
        D.expect(summed(m, 'nrfwd_dpdk_neighbours', kind='all') <= 8,
                 'neighbour entries: %d' % summed(m, 'nrfwd_dpdk_neighbours', kind='all'))

    def syn_checks(delta, m):
        # lwIP keeps at most runtime.dpdk.synCookieThreshold (128) half-open connections
        # of the flood; every SYN after them is answered with a cookie.
        sent = delta('nrfwd_dpdk_syn_cookies_total', kind='sent')
        valid = delta('nrfwd_dpdk_syn_cookies_total', kind='valid')
        D.expect(sent >= RATE * FLOOD_S * 0.3, '%d SYN cookies sent' % sent)
        # The probes' connections during the flood came from cookies.
        D.expect(valid >= 1, 'no valid SYN cookie (probes were not made from one)')
        D.expect_eq(delta('nrfwd_dpdk_listen_overflows_total'), 0, 'listen overflows')
        # The flood's half-open connections lwIP keeps (kept 20 s): at most
        # the 128 from which cookies answer (sampled once a second).
        time.sleep(1.2)
        half = summed(metrics(fab, a), 'nrfwd_dpdk_lwip_pcbs', state='syn_rcvd')
        print('     half-open pcbs after the SYN flood: %d' % half, flush=True)
        D.expect(0 < half <= 128, '%d half-open pcbs' % half)
        # The half-open connections lwIP keeps retransmit their SYN-ACKs to
        # the spoofed addresses through the table: stranger entries, whose
        # ARP requests have a budget of 20 a second (+ 20 of burst).
        arp = delta('nrfwd_dpdk_arp_total', kind='request')
        D.expect(arp <= 20 * (FLOOD_S + 6) + 20, '%d ARP requests' % arp)

    if only in ('', 'spoofed'):
        r.check('dpdk: out-of-window ACK flood from spoofed addresses (%d/s, %.0f s)'
                % (RATE, FLOOD_S), flood_case, fab, a, c, x, fwd, 'ack', ack_checks)
        if own:
            r.check('dpdk: SYN flood from spoofed addresses (%d/s, %.0f s)'
                    % (RATE, FLOOD_S), flood_case, fab, a, c, x, fwd, 'syn', syn_checks)
        else:
            print('SKIP dpdk: SYN flood from spoofed addresses: Debian\'s liblwip build '
                  '(no SYN cookies: they need the own lwIP build\'s ISN hook)', flush=True)
        if own:
            r.check('dpdk: forged segments of a live connection (%d/s, %.0f s)'
                    % (FORGED_RATE, FORGED_S), forged_case, fab, a, x, fwd)
        else:
            print('SKIP dpdk: forged segments of a live connection: Debian\'s liblwip build '
                  '(no challenge-ACK budget: it needs the own lwIP build\'s hooks)', flush=True)
        r.check('dpdk: GET /dpdk and the port\'s extended counters', dpdk_view, fab, a, own)
    if only not in ('', 'connections'):
        return
    for kind, n, hold in (('bare', BARE, BARE / CONN_RATE + 1.0),
                          ('slowloris', SLOWLORIS, SLOW_HOLD)):
        if not own:
            # Without the pcb index every segment walks lwIP's list of
            # pcbs: thousands of connections cost the loop that much.
            print('SKIP dpdk: %d %s connections: Debian\'s liblwip build (no pcb index)'
                  % (n, kind), flush=True)
            continue
        r.check('dpdk: %d %s connections at %d/s' % (n, kind, CONN_RATE), p99_once_more,
                conn_flood_case, fab, c, x, fwd.url(DISC_UDM), a, kind, n, CONN_RATE, hold,
                'dpdk', res, target=res.get((kind, 'kernel')))


def main(argv):
    if len(argv) == 8 and argv[1] == '--attack':
        attack(argv[2], argv[3], argv[4], argv[5], int(argv[6]), float(argv[7]))
        return 0
    if len(argv) == 7 and argv[1] == '--forged':
        forged(argv[2], argv[3], argv[4], int(argv[5]), float(argv[6]))
        return 0
    if len(argv) == 8 and argv[1] == '--crowd':
        crowd(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]), float(argv[7]))
        return 0
    import nrfwd_dpdk_harness as D
    return D.test_main(argv, [('floods', floods, 'fl')], needs=('curl', 'h2load'))


if __name__ == '__main__':
    sys.exit(main(sys.argv))
