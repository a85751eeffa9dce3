#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Failover, reroute on 503 and "all failing -> 504" with nrfwd on DPDK;
a subset of the fault matrix of docs/failures.md.

Usage: python3 tests/dpdk/test_nrfwd_dpdk_faults.py --build-dir BUILD

Part "faults": the TestFailover cases of tests/integration/test_nrfwd_basic.py
on a fabric of network namespaces (nrfwd_dpdk_harness.py): four nrfwd on
DPDK ports (net_af_packet) side by side, peers are nrfstub processes in a
namespace of their own (one healthy, one answering 503, one slow) and a
"dead" address where nothing listens (the kernel answers the SYN with a
reset).

Part "matrix": three cells of the fault matrix (tests/integration/
test_faults.py has all of them on kernel sockets), on a fabric of its own:
local NRF refuses connections + peer has data -> 200 from the peer; local
refuses + peer empty -> 503 NF_SERVICE_FAILURE; local answers 404 + peer
down -> 504 TARGET_NF_NOT_REACHABLE. Failures are never absence, on the
DPDK transport too.

Part "isolation": a local NRF that drops its connection on one big answer
without writing what it owed, beside h2load of small requests (all served),
and a burst answered whole (tests/integration/test_isolation.py has the rest
on kernel sockets).

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_dpdk_harness as D  # noqa: E402
H = D.H

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


DISC = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'


class Nothing:
    """A local NRF address where nothing listens (the kernel refuses)."""

    def __init__(self, host, port):
        self.host = host
        self.port = port


def matrix(fab, r):
    n1, n2, n3 = (fab.host(k) for k in ('n1', 'n2', 'n3'))
    peers = fab.host('p')
    c = fab.host('c')       # the client; nothing listens here: the "down" peer
    data = fab.start_stub(peers, 'peer-data', 'stub-profiles-a.json', port=8081)
    empty = fab.start_stub(peers, 'peer-empty', 'stub-profiles-empty.json', port=8082)
    loc404 = fab.start_stub(n3, 'local', 'stub-profiles-a.json', fault='status:404')
    tmo = {'timeouts': {'connectMs': 300, 'perTryMs': 800, 'requestMs': 3000}}

    def cfg(local, p):
        return D.config(SELF, PORT, local=local, peers=[p], **tmo)

    f1, f2, f3 = fab.start_all([
        (n1, cfg(Nothing(n1.ip, 8089), D.peer('nrf-e.test', data.host, data.port)),
         {'name': 'nrfwd-refused-data'}),
        (n2, cfg(Nothing(n2.ip, 8089), D.peer('nrf-e.test', empty.host, empty.port)),
         {'name': 'nrfwd-refused-empty'}),
        (n3, cfg(loc404, D.peer('nrf-e.test', c.ip, PORT)), {'name': 'nrfwd-404-down'}),
    ])

    def ask(fwd):
        st, hd, body = fab.curl(c, fwd.url(DISC))
        return st, hd, body, ' (%s %r)\n%s' % (hd.get('x-nrfstub'), body[:200],
                                                fwd.log()[-1200:])

    def problem(fwd, status, cause, retry_after=None):
        st, hd, body, ctx = ask(fwd)
        D.expect_eq(st, status, 'status' + ctx)
        D.expect_eq(hd.get('x-nrfstub'), None, 'answered by an upstream' + ctx)
        D.expect_eq(hd.get('content-type'), ['application/problem+json'], 'content-type' + ctx)
        D.expect_eq(json.loads(body).get('cause'), cause, 'cause' + ctx)
        if retry_after is not None:
            D.expect_eq(hd.get('retry-after'), [retry_after], 'Retry-After' + ctx)

    def refused_data():
        st, hd, body, ctx = ask(f1)
        D.expect_eq(st, 200, 'status' + ctx)
        D.expect_eq(hd.get('x-nrfstub'), ['peer-data'], 'answered by' + ctx)
        D.expect(json.loads(body)['nfInstances'], 'nfInstances empty' + ctx)

    r.check('matrix: local refuses, peer has data: 200 from the peer', refused_data)
    r.check('matrix: local refuses, peer empty: 503 NF_SERVICE_FAILURE',
            problem, f2, 503, 'NF_SERVICE_FAILURE', '1')
    def local404_down():
        problem(f3, 504, 'TARGET_NF_NOT_REACHABLE')
        D.expect_eq(len(fab.stub_requests(loc404)), 1, 'tries at the local NRF')

    r.check('matrix: local 404, peer down: 504 TARGET_NF_NOT_REACHABLE', local404_down)


SMALL = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&limit=1'   # ~1.3 KB
BIG = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF'             # ~30 KB


def isolation(fab, r):
    """docs/failures.md "Isolation": a local NRF that drops its whole
    connection, writing nothing more, on one answer over 16 KiB (nrfstub
    `bigdrop:16384:0:mute`, Open5GS's behaviour); small requests beside the
    big ones are all served. A burst with 4 096 streams in flight is
    answered whole (admission by waiting time)."""
    n1, loc_host, c = fab.host('n1'), fab.host('l'), fab.host('c')
    prof = H.write_big_profiles(os.path.join(fab.tmpdir, 'big.json'))
    local = fab.start_stub(loc_host, 'local', prof, fault='bigdrop:16384:0:mute')
    calm = fab.start_stub(loc_host, 'calm', 'stub-profiles-a.json', port=8081,
                          extra=['--no-record'])
    tmo = {'timeouts': {'connectMs': 300, 'perTryMs': 1000, 'requestMs': 3000}}
    f1, = fab.start_all([(n1, D.config(SELF, PORT, local=local, **tmo), {'name': 'nrfwd-poison'})])

    def poison():
        bigs = []

        def big_requests():
            time.sleep(0.3)
            for i in range(4):
                bigs.append(fab.curl(c, f1.url(BIG + '&n=%d' % i)))
                time.sleep(0.4)
        th = threading.Thread(target=big_requests)
        th.start()
        g = fab.h2load(c, f1.url(SMALL), n=1, c=4, m=8, timeout=60,
                       extra=['-D', '3', '--rps', '500'])
        th.join()
        total, ok = g.get('total', 0), g.get('status_2xx', 0)
        print('  poison answers on DPDK: %d of %d small requests 200' % (ok, total), flush=True)
        D.expect(total > 1000, 'h2load ran: %s' % g['raw'][-600:])
        D.expect(ok >= 0.999 * total, 'small requests served: %d of %d\n%s'
                 % (ok, total, f1.log()[-1500:]))
        D.expect_eq([(st, json.loads(body).get('cause')) for st, _, body in bigs],
                    [(503, 'NF_SERVICE_FAILURE')] * 4, 'big ones')
        st, _, stats = fab.curl(loc_host, local.url('/_stub/stats'))
        D.expect_eq(json.loads(stats)['faults']['bigdrop'], 8, 'each big one tried twice')
        D.expect(not re.search(r'local NRF \S+ down', f1.log()),
                 'one dead connection held the local NRF down:\n' + f1.log()[-1500:])

    r.check('isolation: small requests beside poison answers all 200', poison)
    f1.stop()
    f2, = fab.start_all([(n1, D.config(SELF, PORT, local=calm), {'name': 'nrfwd-burst'})])

    def burst():
        g = fab.h2load(c, f2.url(SMALL), n=4096, c=16, m=64, timeout=120)
        D.expect_eq(g.get('status_2xx'), 4096, 'burst answered whole: %s\n%s'
                    % (g['raw'][-600:], f2.log()[-1500:]))

    r.check('isolation: a burst of 4 096 (1 024 in flight) answered whole', burst)


if __name__ == '__main__':
    sys.exit(D.test_main(sys.argv, [('faults', faults, 'x'), ('matrix', matrix, 'm'),
                                    ('isolation', isolation, 'i')]))
