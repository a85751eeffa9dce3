#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Load through two nrfwd hops, and a peer killed in the middle of a run.

Usage: python3 tests/integration/test_load.py [--build-dir BUILD]

Behaviour under load, not speed: every client stream must get exactly one
answer (h2load: done == total, 0 errored, 0 timeout). Figures live in
bench/, not here.
"""

import os
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

DISC_UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF'


class Load(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-load-')

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed)

    def test_100000_requests_through_a_to_e_all_answered(self):
        se = self.h.start_stub('stub-e', 'stub-profiles-e.json', extra=['--no-record'])
        pe = H.free_port()
        self.h.start_nrfwd(H.nrfwd_config('nrf-e.seg2.test', port=pe, local=se.port,
                                          peers=[]), name='nrfwd-e')
        sa = self.h.start_stub('stub-a', 'stub-profiles-a.json', extra=['--no-record'])
        a = self.h.start_nrfwd(H.nrfwd_config('nrf-a.seg1.test', local=sa.port,
                                              peers=[H.peer('nrf-e.seg2.test', pe)]),
                               name='nrfwd-a')
        r = H.h2load(a.url(DISC_UDM), n=100000, c=10, m=20, timeout=300)
        self.assertEqual(r.get('done'), 100000, r['raw'])
        self.assertEqual(r.get('succeeded'), 100000, r['raw'])
        self.assertEqual(r.get('failed'), 0, r['raw'])
        self.assertEqual(r.get('errored'), 0, r['raw'])
        self.assertEqual(r.get('status_2xx'), 100000, r['raw'])
        st, hd, _ = H.curl(a.url(DISC_UDM))
        self.assertEqual((st, hd.get('x-nrfstub')), (200, ['stub-e']))

    def test_peer_killed_mid_run_every_stream_is_answered(self):
        e1 = self.h.start_stub('nrf-e1', 'stub-profiles-e.json', extra=['--no-record'])
        e2 = self.h.start_stub('nrf-e2', 'stub-profiles-e.json', extra=['--no-record'])
        a = self.h.start_nrfwd(H.nrfwd_config(
            'nrf-a.seg1.test', local=None,
            peers=[H.peer('nrf-e1.seg2.test', e1.port, 1), H.peer('nrf-e2.seg2.test', e2.port, 2)],
            timeouts={'connectMs': 300, 'perTryMs': 1000, 'requestMs': 4000}), name='nrfwd-a')
        result = {}

        def run():
            result.update(H.h2load(a.url(DISC_UDM), n=40000, c=8, m=16, timeout=300))

        t = threading.Thread(target=run)
        t.start()
        time.sleep(1.0)
        os.kill(e1.pid, signal.SIGKILL)  # the primary peer dies with streams in flight
        t.join(300)
        r = result
        self.assertEqual(r.get('done'), 40000, r.get('raw'))
        self.assertEqual(r.get('errored'), 0, r.get('raw'))
        self.assertEqual(r.get('timeout'), 0, r.get('raw'))
        answered = sum(r.get(k, 0) for k in ('status_2xx', 'status_3xx', 'status_4xx', 'status_5xx'))
        self.assertEqual(answered, 40000, r.get('raw'))
        # Streams caught by the kill are retried on E2, so all succeed.
        self.assertEqual(r.get('status_2xx'), 40000, r.get('raw'))
        st, hd, _ = H.curl(a.url(DISC_UDM))
        self.assertEqual((st, hd.get('x-nrfstub')), (200, ['nrf-e2']))


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
