#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The seed's four figures end to end with every nrfwd on its DPDK transport.

Usage: python3 tests/dpdk/test_nrfwd_dpdk_seed.py --build-dir BUILD

The scenarios of tests/integration/test_seed_topology.py, on a fabric of
network namespaces (nrfwd_dpdk_harness.py): every NRF is a namespace with
nrfwd on a DPDK port (net_af_packet over a veth; NRF-A of the first
forwarding pair on net_tap) and its local NRF (nrfstub on a kernel veth);
curl asks from a client namespace; the stubs record the Via lines of what
reached them. Each scenario is its own small topology (same identities, own
addresses), started together so the EAL start-ups overlap.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_dpdk_harness as D  # noqa: E402

A, E, G, F, B, X = ('nrf-a.seg1.test', 'nrf-e.seg2.test', 'nrf-g.seg2.test',
                    'nrf-f.seg3.test', 'nrf-b.seg1.test', 'nrf-x.seg1.test')
SET1, SET2 = 'set1.nrfset.5gc.mnc001.mcc001', 'set2.nrfset.5gc.mnc001.mcc001'
PORT = 8080


def disc(nf_type):
    return '/nnrf-disc/v1/nf-instances?target-nf-type=%s&requester-nf-type=AMF' % nf_type


def ident(host):
    return '2.0 %s:%d' % (host, PORT)


def loop_detail(host, cfg, mode='forwarding'):
    """The 508 detail names the NRF that found the loop (as in the kernel test)."""
    entry = [{'errorCondition': 'NRF_Forwarding_Loop_Detection', 'errorCode': 508,
              'errorCause': 'LOOP_DETECTED', 'errorTitle': 'Loop Detected',
              'errorDetail': 'loop at %s:%d' % (host, PORT)}]
    if mode == 'growth':
        cfg['nrfGrowth']['nrfForwardingOptions']['errorResponses'] = entry
    else:
        cfg['forwardingOptions']['errorResponses'] = entry
    return cfg


class Topo:
    """NRF hosts on one fabric: host, DPDK address, stub and nrfwd per key."""

    def __init__(self, fab, keys, client=True):
        self.fab = fab
        self.host = {k: fab.host(k) for k in keys}
        self.ip = {k: fab.dpdk_ip(h) for k, h in self.host.items()}
        self.stub = {}
        self.fwd = {}
        self.client = fab.host('c') if client else None

    def peer(self, key, fqdn, priority=1):
        """Peer entry @fqdn at NRF @key's DPDK address."""
        return D.peer(fqdn, self.ip[key], PORT, priority=priority)

    def stubs(self, *specs):
        for key, profiles in specs:
            self.stub[key] = self.fab.start_stub(self.host[key], 'stub-' + key, profiles)

    def start(self, specs):
        """(key, host name, cfg kwargs, nrfwd kwargs) for each NRF, all at once."""
        run = []
        for key, cfg, kw in specs:
            run.append((self.host[key], cfg, dict(name='nrfwd-' + key, **kw)))
        for (key, _, _), p in zip(specs, self.fab.start_all(run)):
            self.fwd[key] = p

    def cfg(self, key, host, **kw):
        return D.config(host, PORT, local=self.stub.get(key), **kw)

    def curl(self, key, path):
        return self.fab.curl(self.client, 'http://%s:%d%s' % (self.ip[key], PORT, path))

    def via_at(self, key):
        return [r.get('via', []) for r in self.fab.stub_requests(self.stub[key])]


# --------------------------------------------------------------------------
# NRF forwarding

def forwarding(fab, r):
    t = Topo(fab, ['a1', 'e1', 'a2', 'e2', 'a3', 'e3', 'f3', 'a4', 'e4'])
    t.stubs(('a1', 'stub-profiles-a.json'), ('e1', 'stub-profiles-e.json'),
            ('a2', 'stub-profiles-a.json'), ('e2', 'stub-profiles-e.json'),
            ('a3', 'stub-profiles-a.json'), ('e3', 'stub-profiles-e.json'),
            ('f3', 'stub-profiles-g.json'), ('a4', 'stub-profiles-a.json'))
    t.start([
        # pair 1: A on net_tap, E on net_af_packet; E's next hop is A
        ('a1', loop_detail(A, t.cfg('a1', A, peers=[t.peer('e1', E)])), {'pmd': 'tap'}),
        ('e1', t.cfg('e1', E, peers=[t.peer('a1', A)]), {}),
        # pair 2: E's peer entry carries a wrong name with A's address
        ('a2', loop_detail(A, t.cfg('a2', A, peers=[t.peer('e2', E)])), {}),
        ('e2', t.cfg('e2', E, peers=[t.peer('a2', X)]), {}),
        # trio 3: A -> E -> F
        ('a3', t.cfg('a3', A, peers=[t.peer('e3', E)]), {}),
        ('e3', t.cfg('e3', E, peers=[t.peer('a3', A, 1), t.peer('f3', F, 2)]), {}),
        ('f3', t.cfg('f3', F, peers=[t.peer('a3', A)]), {}),
        # pair 4: E is a pure forwarder
        ('a4', t.cfg('a4', A, peers=[t.peer('e4', E)]), {}),
        ('e4', D.config(E, PORT, local=None, peers=[t.peer('a4', A)]), {}),
    ])

    def known_nf():
        st, hd, body = t.curl('a1', disc('UDM'))
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq([p['nfType'] for p in json.loads(body)['nfInstances']], ['UDM'], 'types')
        D.expect_eq(hd.get('x-nrfstub'), ['stub-e1'], 'answered by')

    def figure_i3():
        t.fab.stub_clear(t.stub['a1'])
        t.fab.stub_clear(t.stub['e1'])
        st, hd, body = t.curl('a1', disc('NEF'))
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq(json.loads(body)['nfInstances'], [], 'E local answer')
        D.expect_eq(hd.get('x-nrfstub'), ['stub-e1'], 'answered by')
        D.expect_eq(t.via_at('a1'), [[]], "A's NRF")
        D.expect_eq(t.via_at('e1'), [[ident(A)]], "E's NRF")

    def figure_i1():
        st, hd, body = t.curl('a2', disc('NEF'))
        D.expect_eq(st, 508, 'status (%s)' % body[:200])
        doc = json.loads(body)
        D.expect_eq(doc['cause'], 'LOOP_DETECTED', 'cause')
        D.expect_eq(doc['detail'], 'loop at %s:%d' % (A, PORT), 'detail')
        D.expect_eq(hd.get('content-type'), ['application/problem+json'], 'content-type')
        D.expect_eq(t.via_at('a2'), [[]], "A's NRF asked once")
        D.expect_eq(t.via_at('e2'), [[ident(A)]], "E's NRF")

    def multi_hop():
        st, hd, body = t.curl('a3', disc('PCF'))
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq([p['nfType'] for p in json.loads(body)['nfInstances']], ['PCF'], 'types')
        D.expect_eq(hd.get('x-nrfstub'), ['stub-f3'], 'answered by')
        D.expect_eq(t.via_at('f3'), [[ident(A), ident(E)]], "F's NRF: the Via path")
        D.expect_eq(t.via_at('a3'), [[]], "A's NRF asked once")

    def figure_i3_pure():
        st, _, body = t.curl('a4', disc('NEF'))
        D.expect_eq(st, 508, 'status (%s)' % body[:200])
        D.expect_eq(json.loads(body)['cause'], 'LOOP_PREVENTED', 'cause')
        D.expect_eq(t.via_at('a4'), [[]], "A's NRF")

    r.check('fwd: known NF answered by the peer (A on tap)', known_nf)
    r.check('fwd: figure I-3 E does not forward back to A', figure_i3)
    r.check('fwd: figure I-1 loop detected: 508 at A', figure_i1)
    r.check('fwd: multi-hop A -> E -> F, Via path recorded', multi_hop)
    r.check('fwd: I-3 without local NRF: 508 LOOP_PREVENTED', figure_i3_pure)
    r.check('fwd: SIGTERM: every nrfwd exits 0, cycles reported',
            stop_all, fab, t.fwd.values())


# --------------------------------------------------------------------------
# NRF Growth forwarding

def growth(fab, r):
    t = Topo(fab, ['a1', 'e1', 'a2', 'e2', 'a3', 'e3', 'b3', 'a4', 'e4', 'g4'])
    t.stubs(('a1', 'stub-profiles-a.json'), ('e1', 'stub-profiles-e.json'),
            ('a2', 'stub-profiles-a.json'), ('e2', 'stub-profiles-e.json'),
            ('a3', 'stub-profiles-a.json'), ('b3', 'stub-profiles-empty.json'),
            ('a4', 'stub-profiles-a.json'), ('g4', 'stub-profiles-g.json'))
    # B of set 1 for E1: the client host's address, where nothing listens
    # yet (refused); later a stub there.
    b1_ip = t.client.ip

    def a_growth(n, e_key='e', g_key='g'):
        return loop_detail(A, t.cfg('a%d' % n, A, growth_sets=[
            (SET2, [t.peer('%s%d' % (e_key, n), E, 1), t.peer('%s%d' % (g_key, n), G, 2)])]),
            'growth')

    e3 = D.config(E, PORT, local=None, growth_sets=[
        (SET1, [t.peer('a3', A, 1), D.peer(B, t.stub['b3'], PORT, priority=2)])])
    e3['nrfGrowth']['nrfForwardingOptions']['loopPreventionScope'] = 'SET'
    t.ip['g1'] = t.ip['g2'] = t.ip['g3'] = t.fab.dpdk_ip(t.client)  # never asked
    t.start([
        ('a1', a_growth(1), {}),
        ('e1', t.cfg('e1', E, growth_sets=[(SET1, [t.peer('a1', A, 1),
                                                   D.peer(B, b1_ip, PORT, priority=2)])]), {}),
        ('a2', a_growth(2), {}),
        ('e2', t.cfg('e2', E, growth_sets=[(SET1, [t.peer('a2', X, 1),
                                                   D.peer(B, b1_ip, PORT, priority=2)])]), {}),
        ('a3', a_growth(3), {}),
        ('e3', e3, {}),
        ('a4', a_growth(4), {}),  # E4 is never started: down
        ('g4', t.cfg('g4', G, growth_sets=[(SET1, [t.peer('a4', A)])]), {}),
    ])

    def normal():
        st, hd, body = t.curl('a1', disc('AUSF'))
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq([p['nfType'] for p in json.loads(body)['nfInstances']], ['AUSF'], 'types')
        D.expect_eq(hd.get('x-nrfstub'), ['stub-e1'], 'answered by')

    def figure_i4():
        t.fab.stub_clear(t.stub['a1'])
        st, hd, body = t.curl('a1', disc('NEF'))
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq(json.loads(body)['nfInstances'], [], "E's local answer")
        D.expect_eq(hd.get('x-nrfstub'), ['stub-e1'], 'answered by')
        D.expect_eq(t.via_at('a1'), [[]], "A's NRF asked once")

    def scope_host():
        b = t.fab.start_stub(t.client, 'nrf-b', 'stub-profiles-empty.json', port=PORT)
        # E1 marked B down on the try above; its hold-down ends after 250 ms
        # and a probe brings it back.
        deadline = time.monotonic() + 5
        while True:
            st, hd, _ = t.curl('a1', disc('NEF'))
            if hd.get('x-nrfstub') == ['nrf-b'] or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        D.expect_eq((st, hd.get('x-nrfstub')), (200, ['nrf-b']), 'answer')
        D.expect_eq([x['via'] for x in t.fab.stub_requests(b)][-1:],
                    [[ident(A), ident(E)]], "B's Via")

    def figure_i2():
        st, _, body = t.curl('a2', disc('NEF'))
        D.expect_eq(st, 508, 'status (%s)' % body[:200])
        doc = json.loads(body)
        D.expect_eq(doc['cause'], 'LOOP_DETECTED', 'cause')
        D.expect_eq(doc['detail'], 'loop at %s:%d' % (A, PORT), 'detail')
        D.expect_eq(t.via_at('a2'), [[]], "A's NRF asked once")
        D.expect_eq(t.via_at('e2'), [[ident(A)]], "E's NRF")

    def scope_set():
        st, _, body = t.curl('a3', disc('NEF'))
        D.expect_eq(st, 508, 'status (%s)' % body[:200])
        D.expect_eq(json.loads(body)['cause'], 'LOOP_PREVENTED', 'cause')
        D.expect_eq(t.fab.stub_requests(t.stub['b3']), [], 'B asked')

    def failover():
        st, hd, body = t.curl('a4', disc('PCF'))
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq(hd.get('x-nrfstub'), ['stub-g4'], 'answered by')
        D.expect_eq(t.via_at('g4'), [[ident(A)]], "G's NRF")

    r.check('growth: normal, answered by set 2', normal)
    r.check('growth: figure I-4 E skips A, B down: E answers', figure_i4)
    r.check('growth: scope HOST tries the other host of set 1', scope_host)
    r.check('growth: figure I-2 loop detected: 508 at A', figure_i2)
    r.check('growth: scope SET skips the whole set: 508', scope_set)
    r.check('growth: E down (no ARP answer): A fails over to G', failover)
    r.check('growth: SIGTERM: every nrfwd exits 0, cycles reported',
            stop_all, fab, t.fwd.values())


def stop_all(fab, procs):
    """SIGTERM to every nrfwd at once (their drains overlap), then each must
    exit 0 having printed its data-path cycles."""
    procs = list(procs)
    for p in procs:
        if p.alive():
            os.kill(p.pid, signal.SIGTERM)
    for p in procs:
        rc = fab.stop(p, timeout=15.0)
        log = p.log()
        D.expect_eq(rc, 0, '%s exit status\n%s' % (p.name, log[-1500:]))
        D.expect('busy cycles per request' in log, '%s: no cycles line\n%s' % (p.name, log[-1500:]))
        D.expect('Sanitizer' not in log, '%s: sanitizer report' % p.name)


if __name__ == '__main__':
    sys.exit(D.test_main(sys.argv, [
        ('forwarding', forwarding, 'f'),
        ('growth', growth, 'g'),
    ]))
