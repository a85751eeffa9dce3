#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Load through two DPDK nrfwd, and a peer killed in the middle of a run.

Usage: python3 tests/dpdk/test_nrfwd_dpdk_load.py --build-dir BUILD

tests/integration/test_load.py on a fabric of network namespaces
(nrfwd_dpdk_harness.py), nrfwd on DPDK ports (net_af_packet): behaviour
under load, not speed. Every client stream must get exactly one answer
(h2load: done == total, 0 errored, 0 timeout). Figures live in
bench/e2e/dpdk_bench.py.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import os
import re
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_dpdk_harness as D  # noqa: E402

DISC_UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF'
PORT = 8080


def cycles_line(proc):
    m = re.search(r'dpdk lcore \d+: (\d+) requests, (\d+) busy cycles per request', proc.log())
    return (int(m.group(1)), int(m.group(2))) if m else None


def two_hops(fab, r):
    a, e, c = fab.host('a'), fab.host('e'), fab.host('c')
    sa = fab.start_stub(a, 'stub-a', 'stub-profiles-a.json', extra=['--no-record'])
    se = fab.start_stub(e, 'stub-e', 'stub-profiles-e.json', extra=['--no-record'])
    fa, fe = fab.start_all([
        (a, D.config('nrf-a.seg1.test', PORT, local=sa,
                     peers=[D.peer('nrf-e.seg2.test', fab.dpdk_ip(e), PORT)]),
         {'name': 'nrfwd-a'}),
        (e, D.config('nrf-e.seg2.test', PORT, local=se), {'name': 'nrfwd-e'}),
    ])

    def load():
        res = fab.h2load(c, fa.url(DISC_UDM), n=100000, c=10, m=20, timeout=240)
        for k, want in (('done', 100000), ('succeeded', 100000), ('failed', 0),
                        ('errored', 0), ('timeout', 0), ('status_2xx', 100000)):
            D.expect_eq(res.get(k), want, '%s\n%s' % (k, res['raw'][-1500:]))
        print('       100000 requests A -> E in %.1f s (%.0f req/s)' % (
            res.get('seconds', 0), res.get('rps', 0)))
        st, hd, _ = fab.curl(c, fa.url(DISC_UDM))
        D.expect_eq((st, hd.get('x-nrfstub')), (200, ['stub-e']), 'answer after the load')

    def stop():
        for p in (fa, fe):
            os.kill(p.pid, signal.SIGTERM)
        for p in (fa, fe):
            D.expect_eq(fab.stop(p, timeout=15.0), 0, '%s exit\n%s' % (p.name, p.log()[-1500:]))
            cl = cycles_line(p)
            D.expect(cl is not None and cl[0] >= 100000, '%s: %s' % (p.name, cl))
            print('       %s: %d requests, %d busy cycles per request' % (p.name, cl[0], cl[1]))

    r.check('load: 100000 requests through two DPDK nrfwd, 0 failed', load)
    r.check('load: both exit 0 with busy cycles per request', stop)


def peer_cut(fab, r):
    a, p, c = fab.host('a'), fab.host('p'), fab.host('c')
    e1 = fab.start_stub(p, 'nrf-e1', 'stub-profiles-e.json', port=8081, extra=['--no-record'])
    e2 = fab.start_stub(p, 'nrf-e2', 'stub-profiles-e.json', port=8082, extra=['--no-record'])
    fa = fab.start_nrfwd(a, D.config(
        'nrf-a.seg1.test', PORT, local=None,
        peers=[D.peer('nrf-e1.seg2.test', e1, e1.port, 1),
               D.peer('nrf-e2.seg2.test', e2, e2.port, 2)],
        timeouts={'connectMs': 300, 'perTryMs': 1000, 'requestMs': 4000}), name='nrfwd-a')

    # enough requests that the load still runs 0.4 s in (a faster nrfwd
    # finished 40 000 before the kill)
    NCUT = 200000

    def cut():
        result = {}

        def run():
            result.update(fab.h2load(c, fa.url(DISC_UDM), n=NCUT, c=8, m=16, timeout=240))

        t = threading.Thread(target=run)
        t.start()
        time.sleep(0.4)
        running = t.is_alive()
        os.kill(e1.pid, signal.SIGKILL)  # the primary peer dies with streams in flight
        t.join(240)
        D.expect(running, 'h2load finished before the peer was killed')
        res = result
        raw = res.get('raw', '')[-1500:]
        D.expect_eq(res.get('done'), NCUT, 'done\n' + raw)
        D.expect_eq(res.get('errored'), 0, 'errored\n' + raw)
        D.expect_eq(res.get('timeout'), 0, 'timeout\n' + raw)
        answered = sum(res.get(k, 0) for k in ('status_2xx', 'status_3xx', 'status_4xx',
                                               'status_5xx'))
        D.expect_eq(answered, NCUT, 'answered\n' + raw)
        D.expect_eq(res.get('status_2xx'), NCUT, '2xx (retried on E2)\n' + raw)
        st, hd, _ = fab.curl(c, fa.url(DISC_UDM))
        D.expect_eq((st, hd.get('x-nrfstub')), (200, ['nrf-e2']), 'answer after the cut')
        D.expect('nrf-e1.seg2.test:%d down' % e1.port in fa.log(),
                 'the cut was not seen:\n' + fa.log()[-1500:])

    r.check('load: peer killed mid-run, every stream answered', cut)


if __name__ == '__main__':
    sys.exit(D.test_main(sys.argv, [('two hops', two_hops, 'l'), ('peer cut', peer_cut, 'k')],
                         needs=('h2load',)))
