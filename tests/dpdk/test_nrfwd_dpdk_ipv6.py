#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""nrfwd on DPDK over IPv6: IPv6 only, dual stack, worker processes.

Usage: python3 tests/dpdk/test_nrfwd_dpdk_ipv6.py --build-dir BUILD

Part "ipv6" (an IPv6-only fabric, nrfwd_dpdk_harness.py family 6): nrfwd A
on net_af_packet whose ocnrfHost is its own IPv6 address, nrfwd E on
net_tap; their local NRFs are nrfstub on kernel IPv6 addresses. A local
empty answer forwarded to the peer (Via carries A's identity as the kernel
path writes it, "2.0 [addr]:port"); a local 404 of a profile then the
peer; the loop back to A answered 508 LOOP_DETECTED; ICMPv6 echo of the
port; h2load through A to E with none failed; the local NRF changes its
MAC (an unsolicited neighbour advertisement, ndisc_notify) and is reached
at the new one.

Part "dual stack" (family 46): one nrfwd with both addresses listening on
"::", its local NRF over IPv4 and its peer over IPv6; clients of both
families at once (h2load each, none failed).

Part "workers" (family 6): a primary with two worker processes on one
net_tap port, IPv6 only; h2load through its peer connections (each worker
opens its own, answers steered to it) with none failed.

The failure rules, timeouts, per-client limits and TLS run over IPv6 too:
the same scripts with --family 6 (tests/dpdk/meson.build).

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_dpdk_harness as D  # noqa: E402
H = D.H

PORT = 8080
E = 'nrf-e.test'
DISC_UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF'
DISC_NEF = '/nnrf-disc/v1/nf-instances?target-nf-type=NEF&requester-nf-type=AMF'
DISC_AMF = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'
ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at E's stub
PROFILE_UDM = '/nnrf-nfm/v1/nf-instances/' + ID_UDM1


# ICMPv6 echo (no ping on every machine): a raw socket, the kernel fills
# the checksum; exit 0 once the reply with our identifier came back.
PING6 = '''
import os, socket, struct, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.settimeout(1.0)
ident = os.getpid() & 0xffff
for seq in range(3):
    s.sendto(struct.pack('!BBHHH', 128, 0, 0, ident, seq) + b'nrfwd', (sys.argv[1], 0))
    t = time.monotonic() + 1.0
    while time.monotonic() < t:
        try:
            d, a = s.recvfrom(2048)
        except socket.timeout:
            break
        if d[0] == 129 and struct.unpack('!H', d[4:6])[0] == ident:
            sys.exit(0)
sys.exit('no echo reply')
'''


# exit 0 when a TCP connect is refused (the server's RST), else the reason
REFUSED = '''
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.settimeout(5)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
except ConnectionRefusedError:
    sys.exit(0)
except OSError as e:
    sys.exit('not refused: %s' % e)
sys.exit('connected')
'''


def via_at(fab, stub):
    return [x.get('via', []) for x in fab.stub_requests(stub)]


def h2load_ok(fab, host, url, n, what):
    res = fab.h2load(host, url, n=n, c=8, m=8, timeout=90)
    raw = res.get('raw', '')[-1200:]
    D.expect_eq(res.get('done'), n, '%s: done\n%s' % (what, raw))
    D.expect_eq(res.get('errored', 0) + res.get('failed', 0), 0, '%s: failed\n%s' % (what, raw))
    D.expect_eq(res.get('status_2xx'), n, '%s: 2xx\n%s' % (what, raw))
    return res


def ipv6_only(fab, r):
    ha, he, c = fab.host('a'), fab.host('e'), fab.host('c')
    ip_a, ip_e = fab.dpdk_ip(ha), fab.dpdk_ip(he)
    stub_a = fab.start_stub(ha, 'stub-a', 'stub-profiles-a.json')
    stub_e = fab.start_stub(he, 'stub-e', 'stub-profiles-e.json')
    # A's identity is its IPv6 address; E reaches A under another name
    # (nrf-x.test), so only A's Via check can see the loop.
    cfg_a = D.config(ip_a, PORT, local=stub_a, peers=[D.peer(E, ip_e, PORT)])
    cfg_e = D.config(E, PORT, local=stub_e, peers=[D.peer('nrf-x.test', ip_a, PORT)])
    fa, fe = fab.start_all([(ha, cfg_a, {'name': 'nrfwd-a'}),
                            (he, cfg_e, {'name': 'nrfwd-e', 'pmd': 'tap'})])
    ident_a = '2.0 [%s]:%d' % (ip_a, PORT)

    def ports():
        for p, ip in ((fa, ip_a), (fe, ip_e)):
            D.expect('%s/64' % ip in p.log(), 'start-up line names %s:\n%s'
                     % (ip, p.log()[-800:]))
        st, _, body = fab.curl(c, fa.url(DISC_AMF))
        D.expect_eq(st, 200, 'local answer over IPv6 (%s)' % body[:200])

    def empty_then_peer():
        fab.stub_clear(stub_a)
        fab.stub_clear(stub_e)
        st, hd, body = fab.curl(c, fa.url(DISC_UDM))
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq([p['nfType'] for p in json.loads(body)['nfInstances']], ['UDM'], 'types')
        D.expect_eq(hd.get('x-nrfstub'), ['stub-e'], 'answered by')
        D.expect_eq(via_at(fab, stub_a), [[]], "A's NRF asked first, no Via")
        D.expect_eq(via_at(fab, stub_e), [[ident_a]], "Via at E's NRF")

    def local_404_then_peer():
        fab.stub_clear(stub_a)
        st, hd, body = fab.curl(c, fa.url(PROFILE_UDM))
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq(json.loads(body)['nfInstanceId'], ID_UDM1, 'profile')
        D.expect_eq(hd.get('x-nrfstub'), ['stub-e'], 'answered by')
        D.expect_eq(len(fab.stub_requests(stub_a)), 1, "A's NRF asked first (404)")

    def loop_508():
        # A finds its own identity, as it writes it, in a request's Via
        st, hd, body = fab.curl(c, fa.url(DISC_UDM), headers=['via: 2.0 nf.test:80, ' + ident_a])
        D.expect_eq(st, 508, 'status (%s)' % body[:200])
        D.expect_eq(json.loads(body)['cause'], 'LOOP_DETECTED', 'cause')
        D.expect_eq(hd.get('content-type'), ['application/problem+json'], 'content-type')

    def not_back():
        # E's peer entry for A (another name, A's IPv6 address) matches the
        # Via member [addr]:port: E answers itself instead of forwarding back
        fab.stub_clear(stub_a)
        fab.stub_clear(stub_e)
        st, hd, body = fab.curl(c, fa.url(DISC_NEF))
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq(json.loads(body)['nfInstances'], [], "E's local answer")
        D.expect_eq(hd.get('x-nrfstub'), ['stub-e'], 'answered by')
        D.expect_eq(via_at(fab, stub_a), [[]], "A's NRF asked once")

    def ping():
        res = fab.run(c, [sys.executable, '-c', PING6, ip_a], timeout=10)
        D.expect(res.returncode == 0, 'echo %s: %s' % (ip_a, (res.stdout + res.stderr).decode()[-400:]))

    def closed_port():
        # a SYN to a port nobody listens on is answered with a reset
        res = fab.run(c, [sys.executable, '-c', REFUSED, ip_a, '9'], timeout=10)
        D.expect(res.returncode == 0, 'connect [%s]:9: %s' % (
            ip_a, (res.stdout + res.stderr).decode()[-400:]))

    def load():
        h2load_ok(fab, c, fa.url(DISC_UDM), 4000, 'h2load through A to E')

    def mac_change():
        # A's local NRF host takes a new MAC; Linux advertises it
        # (ndisc_notify). A keeps its connection and reaches the new MAC.
        D.sh('ip', 'link', 'set', ha.dev, 'address', '02:00:00:6c:%02x:01' % (os.getpid() & 255),
             ns=ha.ns)
        deadline = time.monotonic() + 8
        st = 0
        while time.monotonic() < deadline:
            st, hd, body = fab.curl(c, fa.url(DISC_AMF), timeout=3)
            if st == 200 and hd.get('x-nrfstub') == ['stub-a']:
                break
            time.sleep(0.2)
        D.expect_eq(st, 200, 'local NRF at its new MAC\n' + fa.log()[-1500:])
        for _ in range(5):
            st, hd, _ = fab.curl(c, fa.url(DISC_AMF))
            D.expect_eq((st, hd.get('x-nrfstub')), (200, ['stub-a']), 'after the change')

    def stop():
        for p in (fa, fe):
            D.expect_eq(fab.stop(p, timeout=15.0), 0, '%s exit\n%s' % (p.name, p.log()[-1500:]))

    r.check('ipv6: ports up with IPv6 only, local answer', ports)
    r.check('ipv6: empty local answer, then the peer; Via [addr]:port', empty_then_peer)
    r.check('ipv6: local 404, then the peer', local_404_then_peer)
    r.check('ipv6: own [addr]:port in Via: 508 LOOP_DETECTED', loop_508)
    r.check('ipv6: E does not forward back to A ([addr]:port in Via)', not_back)
    r.check('ipv6: ICMPv6 echo of the port', ping)
    r.check('ipv6: closed port: connection refused (RST)', closed_port)
    r.check('ipv6: h2load -n 4000 through A to E, none failed', load)
    r.check('ipv6: local NRF changes its MAC, reached again', mac_change)
    r.check('ipv6: SIGTERM, both exit 0', stop)


def dual_stack(fab, r):
    ha, hp, c = fab.host('a'), fab.host('p'), fab.host('c')
    stub_a = fab.start_stub(ha, 'stub-a', 'stub-profiles-a.json')  # IPv4
    p6 = D.Host(hp.key, hp.ns, hp.ip6, hp.dev, ip4=hp.ip4, ip6=hp.ip6)
    stub_e = fab.start_stub(p6, 'stub-e', 'stub-profiles-e.json')  # IPv6
    cfg = D.config('nrf-a.test', PORT, local=stub_a, peers=[D.peer(E, stub_e, PORT)])
    fa, = fab.start_all([(ha, cfg, {'name': 'nrfwd-a'})])
    url4 = 'http://%s:%d' % (fa.dpdk_ip, PORT)
    url6 = 'http://[%s]:%d' % (fa.dpdk_ip6, PORT)

    def both_families():
        for base in (url4, url6):
            fab.stub_clear(stub_e)
            st, hd, body = fab.curl(c, base + DISC_AMF)
            D.expect_eq((st, hd.get('x-nrfstub')), (200, ['stub-a']),
                        '%s: local NRF over IPv4 (%s)' % (base, body[:200]))
            st, hd, body = fab.curl(c, base + DISC_UDM)
            D.expect_eq((st, hd.get('x-nrfstub')), (200, ['stub-e']),
                        '%s: peer over IPv6 (%s)' % (base, body[:200]))
            D.expect_eq(via_at(fab, stub_e), [['2.0 nrf-a.test:%d' % PORT]], 'Via at the peer')

    def load_both():
        out = {}

        def run(key, url):
            out[key] = fab.h2load(c, url, n=3000, c=8, m=8, timeout=90)
        ts = [threading.Thread(target=run, args=(k, u + DISC_UDM))
              for k, u in (('v4', url4), ('v6', url6))]
        for t in ts:
            t.start()
        for t in ts:
            t.join(120)
        for k in ('v4', 'v6'):
            res = out.get(k, {})
            D.expect_eq((res.get('done'), res.get('status_2xx')), (3000, 3000),
                        '%s clients\n%s' % (k, res.get('raw', '')[-1000:]))

    r.check('dual stack: IPv4 and IPv6 clients, local NRF v4, peer v6', both_families)
    r.check('dual stack: h2load over both families at once, none failed', load_both)
    r.check('dual stack: SIGTERM, exit 0',
            lambda: D.expect_eq(fab.stop(fa, timeout=15.0), 0, fa.log()[-1500:]))


def workers(fab, r):
    ha, hp, c = fab.host('a'), fab.host('p'), fab.host('c')
    stub_a = fab.start_stub(ha, 'stub-a', 'stub-profiles-a.json', extra=['--no-record'])
    stub_e = fab.start_stub(hp, 'stub-e', 'stub-profiles-e.json', extra=['--no-record'])
    cfg = D.config('nrf-a.test', PORT, local=stub_a, peers=[D.peer(E, stub_e, PORT)])
    fa = fab.start_nrfwd_mp(ha, cfg, workers=2, name='nrfwd-mp')
    for k in range(2):
        fab.wait_line(fa, r'w%d/rt: .*local NRF \S+ up' % k, 15)

    def load():
        h2load_ok(fab, c, fa.url(DISC_UDM), 4000, 'h2load through two workers to E')
        h2load_ok(fab, c, fa.url(DISC_AMF), 2000, 'h2load to the local NRF')

    r.check('workers: two worker processes over IPv6, none failed', load)
    r.check('workers: SIGTERM, exit 0',
            lambda: D.expect_eq(fab.stop(fa, timeout=20.0), 0, fa.log()[-1500:]))


def main(argv):
    return D.test_main(argv, [('ipv6', ipv6_only, 'v6', {'family': 6}),
                              ('dual stack', dual_stack, 'ds', {'family': 46}),
                              ('workers', workers, 'w6', {'family': 6})],
                       needs=('curl', 'h2load'))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
