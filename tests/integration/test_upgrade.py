#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of an upgrade without a lost request (docs/service.md,
"Upgrade without a lost request"; decision 0060).

Usage: python3 tests/integration/test_upgrade.py [--build-dir BUILD] [unittest args]

Real processes on loopback: an nrfstub local NRF, two nrfwd processes on the
same port (SO_REUSEPORT), h2load and curl. The running nrfwd is replaced the
way the procedure says: the new one starts beside it on the same
configuration, /readyz of the new one says 200, the old one gets SIGTERM.
Meanwhile h2load runs back to back (new connections each run, as clients come
and go) and curl opens a new connection per request: every request of every
run must be answered 200 (0 failed, 0 errored), both processes must have
served, and the old one must say 503 on /readyz while it still accepts
(runtime.timeouts.unreadyMs), then close its listeners, serve what it holds
without GOAWAY (goawayDelayMs) and exit 0. Standard library only; helpers in
nrfwd_harness.py.
"""

import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

SELF = 'nrf-a.test'
DISC = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'


class Traffic:
    """h2load runs back to back and a curl loop until stop(); sums what
    they saw."""

    def __init__(self, url, n=400, c=2, m=4):
        self.url = url
        self.n, self.c, self.m = n, c, m
        self.done = threading.Event()
        self.runs = []
        self.curl = {'sent': 0, 'ok': 0, 'other': []}
        self.th = [threading.Thread(target=self._h2load, daemon=True),
                   threading.Thread(target=self._curl, daemon=True)]
        for t in self.th:
            t.start()

    def _h2load(self):
        while not self.done.is_set():
            self.runs.append(H.h2load(self.url, n=self.n, c=self.c, m=self.m, timeout=30))

    def _curl(self):
        while not self.done.is_set():
            st, _, _ = H.curl(self.url, timeout=10)
            self.curl['sent'] += 1
            if st == 200:
                self.curl['ok'] += 1
            else:
                self.curl['other'].append(st)

    def stop(self):
        self.done.set()
        for t in self.th:
            t.join(60)

    def summary(self):
        keys = ('total', 'succeeded', 'failed', 'errored', 'timeout', 'status_2xx')
        s = {k: sum(r.get(k, 0) for r in self.runs) for k in keys}
        s['runs'] = len(self.runs)
        return s


class UpgradeTest(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness()

    def tearDown(self):
        self.h.cleanup(dump=any(e for _, e in getattr(self._outcome, 'errors', [])))

    def readyz(self, proc):
        try:
            st, _, _ = H.api(proc, 'GET', '/readyz', timeout=2)
            return st
        except OSError:
            return None

    def wait_readyz(self, proc, want, timeout=5.0):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.readyz(proc) == want:
                return True
            time.sleep(0.02)
        return False

    def test_a_new_nrfwd_takes_over_under_h2load_without_a_lost_request(self):
        loc = self.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config(SELF, local=loc.port,
                             timeouts={'drainMs': 3000, 'unreadyMs': 600,
                                       'goawayDelayMs': 2000})
        old = self.h.start_nrfwd(cfg, name='old', management=True)
        self.assertTrue(self.wait_readyz(old, 200))
        traffic = Traffic(old.url(DISC))
        try:
            time.sleep(1.0)
            # the new binary beside the old one, on the same file and ports
            new = self.h.start_nrfwd(old.config_path, name='new', management=True)
            self.assertTrue(self.wait_readyz(new, 200))
            time.sleep(0.5)
            t0 = time.monotonic()
            os.kill(old.pid, signal.SIGTERM)
            # not ready at once, while its listeners still take connections
            self.assertTrue(self.wait_readyz(old, 503, timeout=0.5), old.log())
            old.proc.wait(15)
            took = time.monotonic() - t0
            time.sleep(1.0)  # the new one alone
        finally:
            traffic.stop()
        s = traffic.summary()
        self.assertEqual(old.proc.returncode, 0, old.log())
        self.assertIn('not ready: still accepting for 600 ms', old.log())
        self.assertGreaterEqual(s['runs'], 5, s)
        self.assertEqual(s['failed'], 0, (s, [r.get('raw', '')[-600:] for r in traffic.runs if r['failed']][:1]))
        self.assertEqual(s['errored'], 0, s)
        self.assertEqual(s['timeout'], 0, s)
        self.assertEqual(s['succeeded'], s['total'], s)
        self.assertEqual(s['status_2xx'], s['total'], s)
        self.assertGreater(traffic.curl['sent'], 10, traffic.curl)
        self.assertEqual(traffic.curl['other'], [], traffic.curl)
        # both served: the old one's final stats, the new one's counters
        old_req = int(re.search(r'stats: requests=(\d+)', old.log()).group(1))
        self.assertGreater(old_req, 0)
        m = H.metrics(new)
        self.assertGreater(H.metric_value(m, 'nrfwd_requests_total'), 0)
        # unreadyMs + goawayDelayMs + drainMs at most (it ends sooner when
        # its clients leave)
        self.assertLess(took, 0.6 + 2.0 + 3.0 + 1.5, took)
        print('upgrade: %d h2load runs, %d requests, %d failed, %d errored; curl %d/%d; '
              'old served %d, stopped in %.2f s' % (s['runs'], s['total'], s['failed'],
                                                   s['errored'], traffic.curl['ok'],
                                                   traffic.curl['sent'], old_req, took))

    def test_goaway_comes_after_goawayDelayMs_to_a_client_that_stays(self):
        # A client that keeps its connection (as an NF does) is served during
        # goawayDelayMs and told GOAWAY after it; the listeners are closed
        # meanwhile (a new connection is refused).
        loc = self.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config(SELF, local=loc.port,
                             timeouts={'drainMs': 2000, 'goawayDelayMs': 1500})
        fwd = self.h.start_nrfwd(cfg, management=True)
        run = H.h2load_start(fwd.url(DISC), seconds=6, c=1, m=1, rps=20)
        try:
            time.sleep(0.8)
            t0 = time.monotonic()
            os.kill(fwd.pid, signal.SIGTERM)
            time.sleep(0.5)
            st, _, _ = H.curl(fwd.url(DISC), timeout=2)
            self.assertNotEqual(st, 200)  # listener closed
            fwd.proc.wait(10)
            took = time.monotonic() - t0
        finally:
            r = run.wait(20)
        self.assertEqual(fwd.proc.returncode, 0)
        # served through the quiet time: 20/s for ~1.5 s after the signal
        self.assertGreaterEqual(r['succeeded'], 40, r)
        self.assertEqual(r['failed'], 0, r)
        self.assertGreaterEqual(took, 1.4, took)  # the GOAWAY waited
        self.assertLess(took, 1.5 + 2.0 + 1.0, took)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
