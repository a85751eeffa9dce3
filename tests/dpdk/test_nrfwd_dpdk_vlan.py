#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""nrfwd on a tagged DPDK port (runtime.dpdk.vlan).

Usage: python3 tests/dpdk/test_nrfwd_dpdk_vlan.py --build-dir BUILD

nrfwd's port is tagged with VLAN 100 and reaches the fabric through a VLAN
switch port pair: bench/dpdk_l2bridge --vlan 100 between a trunk (the veth,
or the tap, nrfwd's port sits on) and an access port on the fabric's bridge,
so every peer of nrfwd (its local NRF, a forwarding peer, the clients) is an
ordinary host of the fabric and every frame on nrfwd's link is tagged. (A
VLAN sub-interface of a peer's veth would do the same where the kernel has
802.1Q; the machines this runs on may not: `ip link add ... type vlan`
fails there with "Unknown device type".)

- net_af_packet (the driver's VLAN strip and insert offloads): a request
  forwarded to the peer with nrfwd's Via, a 508 for a looping request, h2load
  load with every request answered; raw frames on the trunk without the tag
  and of VLAN 200 (ARP requests, TCP SYNs) get no answer and are counted in
  nrfwd_dpdk_frames_dropped_total{reason="vlan"}, one of VLAN 100 is answered;
- net_tap with two worker processes (no VLAN offload: tags in software in
  every worker): load spread over both workers, all answered, each worker
  reporting the tag path.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_dpdk_harness as D  # noqa: E402

H = D.H
SELF = 'nrf-a.test'
PEER = 'nrf-e.test'
PORT = 8080
MGMT = 9090
VLAN = 100
OTHER = 200
DISC = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF'


def trunk(fab, host, name, port_dev=None):
    """The VLAN switch in front of nrfwd in @host: dpdk_l2bridge --vlan VLAN
    between @port_dev (the trunk: nrfwd's tap) or a new veth pair (nrfwd's
    port on one end, returned as host.dpdk; the trunk on the other) and an
    access veth on the fabric's bridge. @return the trunk's interface."""
    # The switch's namespace: its af_packet sockets and nrfwd's must not
    # share one (DPDK's af_packet fanout group ids, pid ^ ifindex, may
    # collide within a namespace).
    sw = D.Host('sw-' + name, fab._netns('sw' + name), None)
    if port_dev is None:
        fab.n_if += 1
        t1, t2 = 'n%s%dp' % (fab.id, fab.n_if), 'n%s%dq' % (fab.id, fab.n_if)
        D.sh('ip', 'link', 'add', t1, 'netns', host.ns, 'type', 'veth', 'peer', 'name', t2,
             'netns', sw.ns)
        D.sh('ip', 'link', 'set', t1, 'up', ns=host.ns)
        D.sh('ethtool', '-K', t1, 'gro', 'off', ns=host.ns, check=False)
        host.dpdk = t1
        port_dev = t2
    else:
        # nrfwd's tap joins a bridge of the switch's namespace, as on the
        # fabric (Fabric.ready()), and a veth pair from it is the trunk: a
        # tap takes frames best from the kernel's forwarding path, which
        # gives each flow its worker's queue.
        tap = port_dev
        D.sh('ip', 'link', 'set', tap, 'netns', sw.ns, ns=host.ns)
        fab.n_if += 1
        D.sh('ip', 'link', 'set', tap, 'address', '02:00:00:%02x:%02x:%02x'
             % (fab.n_if & 255, os.getpid() >> 8 & 255, os.getpid() & 255), ns=sw.ns)
        t1, t2 = 'n%s%dp' % (fab.id, fab.n_if), 'n%s%dq' % (fab.id, fab.n_if)
        D.sh('ip', 'link', 'add', 'sb', 'type', 'bridge', ns=sw.ns)
        D.sh('ip', 'link', 'add', t1, 'type', 'veth', 'peer', 'name', t2, ns=sw.ns)
        for dev in (tap, t1):
            D.sh('ip', 'link', 'set', dev, 'master', 'sb', 'up', ns=sw.ns)
            D.sh('ethtool', '-K', dev, 'gro', 'off', ns=sw.ns, check=False)
        D.sh('ip', 'link', 'set', 'sb', 'up', ns=sw.ns)
        port_dev = t2
    D.sh('ip', 'link', 'set', port_dev, 'up', ns=sw.ns)
    D.sh('ethtool', '-K', port_dev, 'gro', 'off', ns=sw.ns, check=False)
    access = fab._veth(sw.ns)
    D.sh('ip', 'link', 'set', access, 'up', ns=sw.ns)
    D.sh('ethtool', '-K', access, 'gro', 'off', ns=sw.ns, check=False)
    host.switch = sw
    prefix = 'nfd%svl%s' % (fab.id, re.sub(r'[^a-zA-Z0-9]', '', name))
    fab.prefixes.append(prefix)
    cmd = [os.path.join(fab.build, 'bench', 'dpdk_l2bridge'), '--no-pci', '--no-telemetry',
           '--no-huge', '--no-shconf', '-m', '128', '-l', '0', '--file-prefix=' + prefix,
           '--vdev=net_af_packet0,iface=%s,qpairs=1,qdisc_bypass=1' % port_dev,
           '--vdev=net_af_packet1,iface=%s,qpairs=1,qdisc_bypass=1' % access,
           '--', '--vlan', str(VLAN), '--idle-us', '50']
    bridge = fab._spawn('vlan-' + name, sw, fab.wrap(cmd), None, None)
    fab.wait_line(bridge, r'dpdk_l2bridge: forwarding')
    return port_dev


def metrics(fab, host):
    r = fab.run(host, ['curl', '-s', '-m', '10', 'http://127.0.0.1:%d/metrics' % MGMT],
                timeout=20)
    out = {}
    for line in r.stdout.decode('utf-8', 'replace').splitlines():
        if line and not line.startswith('#'):
            k, _, v = line.rpartition(' ')
            out[k] = float(v)
    return out


def vlan_drops(m):
    return sum(v for k, v in m.items()
               if k.startswith('nrfwd_dpdk_frames_dropped_total{') and 'reason="vlan"' in k)


# Raw frames on the trunk (python3 in `ip netns exec`): ARP requests for
# nrfwd's address and TCP SYNs to its port, untagged (VLAN "0") or tagged,
# then a listen for answers: frames from nrfwd's MAC to the sender's.
RAW = r'''
import socket, struct, sys, time
dev, ip, mac, n, vids = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
own_ip = socket.inet_aton(sys.argv[6])
dst = bytes.fromhex(mac.replace(':', ''))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((dev, 0))
src = s.getsockname()[4]
tgt = socket.inet_aton(ip)
def csum(b):
    if len(b) % 2: b += b'\0'
    t = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while t >> 16: t = (t & 0xffff) + (t >> 16)
    return ~t & 0xffff
def l2(d, vid, et):
    h = d + src
    if vid: h += struct.pack('!HH', 0x8100, vid)
    return h + struct.pack('!H', et)
sent = 0
for vid in [int(v) for v in vids.split(',')]:
    for i in range(n):
        arp = struct.pack('!HHBBH6s4s6s4s', 1, 0x0800, 6, 4, 1, src, own_ip, b'\0' * 6, tgt)
        s.send((l2(b'\xff' * 6, vid, 0x0806) + arp).ljust(60, b'\0'))
        tcp = struct.pack('!HHIIBBHHH', 40000 + i, 8080, 1000 + i, 0, 5 << 4, 0x02, 65535, 0, 0)
        ph = own_ip + tgt + struct.pack('!BBH', 0, 6, len(tcp))
        tcp = tcp[:16] + struct.pack('!H', csum(ph + tcp)) + tcp[18:]
        iph = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 40, i, 0, 64, 6, 0, own_ip, tgt)
        iph = iph[:10] + struct.pack('!H', csum(iph)) + iph[12:]
        s.send((l2(dst, vid, 0x0800) + iph + tcp).ljust(60, b'\0'))
        sent += 2
s.settimeout(0.2)
answers = 0
end = time.time() + 1.0
while time.time() < end:
    try:
        f = s.recv(2048)
    except socket.timeout:
        continue
    if f[6:12] == dst and f[0:6] == src:  # nrfwd answers to the sender's MAC
        answers += 1
print(sent, answers)
'''


def port_mac(fwd):
    m = re.search(r'DPDK port \d+ \(\S+\) up: mac ([0-9a-fA-F:]{17})', fwd.log())
    D.expect(m is not None, 'no port MAC in the log:\n' + fwd.log()[-1500:])
    return m.group(1)


def af_packet(fab, r):
    a = fab.host('a')
    e = fab.host('e')
    s = fab.host('s')
    c = fab.host('c')
    local = fab.start_stub(s, 'local-a', 'stub-profiles-empty.json', extra=['--no-record'])
    peer_e = fab.start_stub(e, 'nrf-e', 'stub-profiles-e.json')
    cfg = D.config(SELF, PORT, local=local, peers=[D.peer(PEER, peer_e.host, PORT, 1)])
    cfg['runtime']['management'] = {'address': '127.0.0.1', 'port': MGMT}
    cfg['runtime']['dpdk'] = {'vlan': VLAN}
    port_trunk = trunk(fab, a, 'a')
    fwd = fab.start_nrfwd(a, cfg, name='nrfwd-a')
    url = 'http://%s:%d%s' % (fwd.dpdk_ip, PORT, DISC)

    def offloads():
        D.expect('vlan 100 (tags: rx device, tx device)' in fwd.log(),
                 'tag path not in the start-up line:\n' + fwd.log()[-1500:])
        m = metrics(fab, a)
        got = [(k, v) for k, v in m.items() if k.startswith('nrfwd_dpdk_vlan{')]
        D.expect(len(got) == 1 and 'rx="device"' in got[0][0] and 'tx="device"' in got[0][0]
                 and got[0][1] == VLAN, 'nrfwd_dpdk_vlan: %r' % got)

    def forwarded_with_via():
        fab.wait_line(fwd, r'local NRF \S+ up', 20)
        fab.stub_clear(peer_e)
        st, hd, body = fab.curl(c, url)
        D.expect_eq((st, hd.get('x-nrfstub')), (200, ['nrf-e']), 'forwarded answer: %r' % body[:300])
        reqs = fab.stub_requests(peer_e)
        D.expect(len(reqs) >= 1, 'the peer saw no request')
        via = ' '.join(v for q in reqs for v in q.get('via', []))
        D.expect(SELF in via, 'no Via of %s at the peer: %r' % (SELF, reqs[-1]))

    def loop_508():
        st, _, body = fab.curl(c, url, headers=['via: 2.0 %s:%d' % (SELF, PORT)])
        D.expect_eq(st, 508, 'loop detection (%s)' % body[:200])
        D.expect_eq(json.loads(body)['cause'], 'LOOP_DETECTED', 'cause')

    def load():
        res = fab.h2load(c, url, n=4000, c=8, m=8, timeout=120)
        D.expect_eq((res.get('succeeded'), res.get('failed'), res.get('errored'),
                     res.get('timeout'), res.get('status_2xx')), (4000, 0, 0, 0, 4000),
                    'h2load over VLAN %d:\n%s' % (VLAN, res['raw'][-800:]))
        print('       %s req/s over VLAN %d' % (res.get('rps'), VLAN))

    def raw(vids, n):
        p = fab.run(a.switch, ['python3', '-c', RAW, port_trunk, fwd.dpdk_ip, port_mac(fwd), str(n),
                        vids, '%s.99' % D.SUBNET], timeout=30)
        D.expect_eq(p.returncode, 0, 'raw frames: %s' % p.stderr.decode()[-500:])
        return [int(x) for x in p.stdout.split()]

    def other_vlans_dropped():
        before = vlan_drops(metrics(fab, a))
        sent, answers = raw('0,%d' % OTHER, 10)  # untagged, and VLAN 200
        D.expect_eq((sent, answers), (40, 0), 'frames sent, answers from nrfwd')
        after = vlan_drops(metrics(fab, a))
        D.expect(after - before >= 40, 'frames of other VLANs counted: %d' % (after - before))
        print('       %d untagged / VLAN %d frames dropped and counted' % (after - before, OTHER))
        # the same frames on VLAN 100 are answered (ARP reply, SYN-ACK or RST)
        sent, answers = raw(str(VLAN), 2)
        D.expect(answers >= 2, 'VLAN %d raw frames: %d answers' % (VLAN, answers))
        st, _, _ = fab.curl(c, url)
        D.expect_eq(st, 200, 'VLAN %d after the strays' % VLAN)

    r.check('vlan af_packet: tags by the device, reported', offloads)
    r.check('vlan af_packet: forwarded to the peer with Via', forwarded_with_via)
    r.check('vlan af_packet: 508 for a loop', loop_508)
    r.check('vlan af_packet: h2load 4000 requests, all 200', load)
    r.check('vlan af_packet: untagged and VLAN 200 frames dropped, counted', other_vlans_dropped)


def workers(fab, r):
    a = fab.host('a')
    s = fab.host('s')
    c = fab.host('c')
    local = fab.start_stub(s, 'local-a', 'stub-profiles-a.json', extra=['--no-record'])
    cfg = D.config(SELF, PORT, local=local)
    cfg['runtime']['management'] = {'address': '127.0.0.1', 'port': MGMT}
    cfg['runtime']['dpdk'] = {'vlan': VLAN}
    fwd = fab.start_nrfwd_mp(a, cfg, workers=2, name='nrfwd-a', wait=False)
    # Once every worker listens (the tap has all its queues: moved before,
    # a queue opened by name would make a new tap), nrfwd's tap becomes the
    # switch's trunk instead of a port of the fabric's bridge.
    for k in range(2):
        fab.wait_line(fwd, r'w%d/nrfwd: nrfwd listening on' % k, 30)
    trunk(fab, a, 'a', port_dev=fwd.tap)
    fwd.tap = None
    fab.ready(fwd, 30)
    url = 'http://%s:%d%s' % (fwd.dpdk_ip, PORT, DISC)

    def software_tags_in_each_worker():
        for k in (0, 1):
            D.expect(re.search(r'w%d/tp-dpdk: worker on DPDK port .*vlan 100 \(tags: rx '
                               r'software, tx software\)' % k, fwd.log())
                     is not None, 'worker %d tag path:\n%s' % (k, fwd.log()[-2000:]))

    def load_on_both():
        t0 = time.monotonic()
        while True:  # both workers reach the local NRF first (see test_nrfwd_dpdk_mp)
            res = fab.h2load(c, url, n=40, c=40, m=1, timeout=30)
            if res.get('status_2xx') == 40:
                break
            D.expect(time.monotonic() - t0 < 20, 'local NRF not reachable through both '
                     'workers in 20 s:\n' + res['raw'][-500:])
            time.sleep(0.2)
        res = fab.h2load(c, url, n=4000, c=40, m=4, timeout=120)
        D.expect_eq((res.get('succeeded'), res.get('failed'), res.get('errored'),
                     res.get('timeout'), res.get('status_2xx')), (4000, 0, 0, 0, 4000),
                    'h2load:\n' + res['raw'][-800:])
        m = metrics(fab, a)
        tags = [k for k, v in m.items() if k.startswith('nrfwd_dpdk_vlan{') and v == VLAN
                and 'rx="software"' in k and 'tx="software"' in k]
        D.expect_eq(len(tags), 2, 'nrfwd_dpdk_vlan of both workers')
        rx = [v for k, v in m.items() if k.startswith('nrfwd_dpdk_frames_total{')
              and 'dir="rx"' in k]
        D.expect(len(rx) == 2 and min(rx) > 100, 'frames on both workers: %r' % rx)

    r.check('vlan tap workers: software tags in each worker', software_tags_in_each_worker)
    r.check('vlan tap workers: h2load 4000 requests over both, all 200', load_on_both)


if __name__ == '__main__':
    sys.exit(D.test_main(sys.argv, [('af_packet', af_packet, 'v'),
                                    ('workers', workers, 'w')], needs=('h2load',)))
