#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Failover, reroute on 503 and "all failing -> 504" with nrfwd on DPDK.

Usage: python3 tests/dpdk/test_nrfwd_dpdk_faults.py --build-dir BUILD

The TestFailover cases of tests/integration/test_nrfwd_basic.py on a fabric
of network namespaces (nrfwd_dpdk_harness.py): three nrfwd on DPDK ports
(net_af_packet) side by side, peers are nrfstub processes in a namespace of
their own (one healthy, one answering 503, one slow) and a "dead" address
where nothing listens (the kernel answers the SYN with a reset).

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_dpdk_harness as D  # noqa: E402

SELF = 'nrf-a.test'
PORT = 8080
ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at the peers' stubs
PROFILE = '/nnrf-nfm/v1/nf-instances/' + ID_UDM1


def faults(fab, r):
    n1, n2, n3, n4 = (fab.host(k) for k in ('n1', 'n2', 'n3', 'n4'))
    peers = fab.host('p')   # nrfstub peers, one port each
    c = fab.host('c')       # the client; nothing listens here: the "dead" peer
    loc = {h.key: fab.start_stub(h, 'local-' + h.key, 'stub-profiles-a.json')
           for h in (n1, n2, n4)}
    ok = fab.start_stub(peers, 'nrf-f', 'stub-profiles-e.json', port=8081)
    p503 = fab.start_stub(peers, 'nrf-e', 'stub-profiles-e.json', port=8082, fault='status:503')
    slow = fab.start_stub(peers, 'nrf-s', 'stub-profiles-e.json', port=8083, fault='delay:3000')

    def cfg(local, plist, **kw):
        return D.config(SELF, PORT, local=local, peers=plist, **kw)

    f1, f2, f3, f4 = fab.start_all([
        (n1, cfg(loc['n1'], [D.peer('nrf-e.test', c.ip, PORT, 1),
                             D.peer('nrf-f.test', ok.host, ok.port, 2)]), {'name': 'nrfwd-n1'}),
        (n2, cfg(loc['n2'], [D.peer('nrf-e.test', p503.host, p503.port, 1),
                             D.peer('nrf-f.test', ok.host, ok.port, 2)]), {'name': 'nrfwd-n2'}),
        (n3, cfg(None, [D.peer('nrf-e.test', p503.host, p503.port, 1),
                        D.peer('nrf-f.test', c.ip, PORT, 2)]), {'name': 'nrfwd-n3'}),
        (n4, cfg(loc['n4'], [D.peer('nrf-s.test', slow.host, slow.port, 1),
                             D.peer('nrf-f.test', ok.host, ok.port, 2)],
                 timeouts={'perTryMs': 400, 'requestMs': 4000}), {'name': 'nrfwd-n4'}),
    ])

    def get(fwd):
        return fab.curl(c, fwd.url(PROFILE))

    def failover():
        for _ in range(3):
            st, hd, body = get(f1)
            D.expect_eq(st, 200, 'status (%s)' % body[:200])
            D.expect_eq(hd.get('x-nrfstub'), ['nrf-f'], 'answered by')
        D.expect('nrf-e.test:%d down' % PORT in f1.log(), 'no "down" line:\n' + f1.log()[-1500:])

    def reroute():
        fab.stub_clear(ok)
        st, hd, body = get(f2)
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq(hd.get('x-nrfstub'), ['nrf-f'], 'answered by')
        D.expect_eq(len(fab.stub_requests(p503)), 1, 'tries at the 503 peer')
        for p in (p503, ok):
            D.expect_eq(fab.stub_requests(p)[0]['via'][-1], '2.0 %s:%d' % (SELF, PORT),
                        '%s: own Via member last' % p.name)

    def all_failing():
        st, hd, body = get(f3)
        D.expect_eq(st, 504, 'status (%s)' % body[:200])
        D.expect_eq(json.loads(body)['cause'], 'TARGET_NF_NOT_REACHABLE', 'cause')
        D.expect_eq(hd.get('content-type'), ['application/problem+json'], 'content-type')

    def per_try_timeout():
        t0 = time.monotonic()
        st, hd, body = get(f4)
        took = time.monotonic() - t0
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq(hd.get('x-nrfstub'), ['nrf-f'], 'answered by')
        D.expect(0.35 <= took < 2.5, 'took %.2f s' % took)

    r.check('faults: closed primary fails over to the next peer', failover)
    r.check('faults: reroute on 503 to the next peer', reroute)
    r.check('faults: every peer failing, no local NRF: 504', all_failing)
    r.check('faults: per-try timeout moves to the next peer', per_try_timeout)


if __name__ == '__main__':
    sys.exit(D.test_main(sys.argv, [('faults', faults, 'x')]))
