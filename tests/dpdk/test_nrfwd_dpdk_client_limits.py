#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""runtime.limits.perClient with nrfwd on its DPDK transport (lwIP): clients
told apart by the address lwIP saw (tests/integration/test_client_limits.py
has every case on kernel sockets).

Usage: python3 tests/dpdk/test_nrfwd_dpdk_client_limits.py --build-dir BUILD

One nrfwd on a DPDK port (net_af_packet), its local NRF (nrfstub, answers
held 400 ms) beside it, two client hosts with addresses of their own:

- maxStreams 3, keyBy address: one host's h2load with 12 streams at once
  gets 3 x 200 and 9 x 429 while the other host's requests get 200.
- ratePerSecond 5 (burst 5), changed live through the REST API with the
  stub answering at once: 12 at once from one host, 5 get 200, the rest 429
  with Retry-After; the other host still gets its own 5.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'integration'))

SELF = 'nrf-a.test'
PORT = 8080
MGMT = 19090
DISC = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'


def limits(fab, r):
    import nrfwd_dpdk_harness as D

    a = fab.host('a')
    c1 = fab.host('c1')
    c2 = fab.host('c2')
    stub = fab.start_stub(a, 'local-a', fault='delay:400')
    cfg = D.config(SELF, PORT, local=stub,
                   limits={'perClient': {'maxStreams': 3, 'keyBy': 'address'}})
    fwd = fab.start_nrfwd(a, cfg, extra=['--management', '127.0.0.1:%d' % MGMT])
    url = fwd.url(DISC)

    def api(method, path, doc):
        """The REST API (HTTP/1.1, host a's loopback)."""
        import nrfwd_harness as H
        ctype = 'application/merge-patch+json' if method == 'PATCH' else 'application/json'
        st, _, body = H.curl('http://127.0.0.1:%d%s' % (MGMT, path), method=method,
                             headers=['content-type: ' + ctype], data=json.dumps(doc),
                             http2=False, prefix=['ip', 'netns', 'exec', a.ns])
        D.expect_eq(st, 200, '%s %s (%s)' % (method, path, body[:300]))

    def max_streams():
        out = {}

        def greedy():
            out['g'] = fab.h2load(c1, url, n=12, c=1, m=12, timeout=60)
        t = threading.Thread(target=greedy)
        t.start()
        time.sleep(0.15)  # its 12 streams are open: 3 wait on the stub
        other = [fab.curl(c2, url)[0] for _ in range(2)]
        t.join(60)
        g = out.get('g') or {}
        D.expect_eq((g.get('status_2xx'), g.get('status_4xx')), (3, 9),
                    'host c1, 12 streams at once (%s)' % g.get('raw', '')[-500:])
        D.expect_eq(other, [200, 200], 'host c2 meanwhile')
        log = fwd.log()
        D.expect('client %s:' % D.H.hostport_host(c1.ip) in log and
                 'over its maxStreams limit' in log,
                 'no refusal of %s in the log' % c1.ip)
        D.expect('client %s:' % D.H.hostport_host(c2.ip) not in log, 'host c2 was refused')

    def rate():
        st, _, body = fab.curl(a, stub.url('/_stub/fault'),
                               method='PUT', headers=['content-type: application/json'],
                               data=json.dumps({'mode': 'none'}))
        D.expect_eq(st, 200, 'stub fault off (%s)' % body[:200])
        api('PATCH', '/nrf-configuration/v1/runtime',
            {'limits': {'perClient': {'maxStreams': 0, 'ratePerSecond': 5}}})
        g = fab.h2load(c1, url, n=12, c=1, m=12, timeout=60)
        D.expect_eq((g.get('status_2xx'), g.get('status_4xx')), (5, 7),
                    'host c1, 12 at once with a bucket of 5 (%s)' % g.get('raw', '')[-500:])
        st, hdrs, body = fab.curl(c1, url)
        D.expect_eq(st, 429, 'host c1 once more')
        D.expect_eq(hdrs.get('retry-after'), ['1'], 'Retry-After')
        D.expect_eq(json.loads(body).get('cause'), 'NF_CONGESTION_RISK', 'cause')
        g2 = fab.h2load(c2, url, n=5, c=1, m=5, timeout=60)
        D.expect_eq(g2.get('status_2xx'), 5, 'host c2, its own bucket')

    r.check('dpdk client limits: maxStreams per address', max_streams)
    r.check('dpdk client limits: rate, changed live', rate)


def main(argv):
    import nrfwd_dpdk_harness as D
    return D.test_main(argv, [('client limits', limits, 'cl')], needs=('curl', 'h2load'))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
