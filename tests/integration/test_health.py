#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of upstream health (docs/failures.md "Health").

Usage: python3 tests/integration/test_health.py [--build-dir BUILD] [unittest args]

Real processes on loopback: nrfstub upstreams, nrfwd with its management
listener, curl. What is checked: a held-down upstream comes back by itself
(background probes: connect + HTTP/2 PING) within a second of its return,
without any traffic; /readyz says what the data path will do (503 while the
local NRF is held down in every worker, "draining" during a SIGTERM drain);
a server that accepts TCP but never speaks HTTP/2 is not taken for up.
Standard library only; helpers in nrfwd_harness.py.
"""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

ID_AMF1 = '5a1f0b6e-6f0a-4c1e-9a01-0000000a0001'  # only at stub "a" (local)
ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at stub "e" (peer)
SELF = 'nrf-a.test'
PROFILE = '/nnrf-nfm/v1/nf-instances/'


class SilentServer:
    """A TCP server that accepts and then stays silent ('silent'), or writes
    bytes that are not HTTP/2 and closes ('garbage'). Counts connections."""

    def __init__(self, mode='silent'):
        self.mode = mode
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.conns = []
        self.done = False
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        self.sock.settimeout(0.05)
        while not self.done:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.accepted += 1
            if self.mode == 'garbage':
                try:
                    c.sendall(b'HTTP/1.1 400 Bad Request\r\n\r\nnot HTTP/2\r\n')
                except OSError:
                    pass
                c.close()
            else:
                self.conns.append(c)  # held open, never read, never answered

    def close(self):
        self.done = True
        self.th.join(2)
        for c in self.conns:
            c.close()
        self.sock.close()


class Base(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness()
        self.servers = []

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed or bool(os.environ.get('NRFWD_TEST_LOGS')))
        for s in self.servers:
            s.close()

    def start(self, local=None, peers=(), workers=1, health=None, **kw):
        cfg = H.nrfwd_config(SELF, local=local, peers=peers, **kw)
        if health:
            cfg['runtime']['health'] = health
        return self.h.start_nrfwd(cfg, workers=workers, management=True)

    def ready(self, fwd):
        st, _, doc = H.api(fwd, 'GET', '/readyz')
        return st, doc

    def wait_ready(self, fwd, want, timeout=3.0):
        """Poll /readyz every 20 ms until its status is @want; returns
        (seconds it took, last document)."""
        t0 = time.monotonic()
        while True:
            st, doc = self.ready(fwd)
            if st == want or time.monotonic() - t0 > timeout:
                return time.monotonic() - t0, st, doc
            time.sleep(0.02)

    def up(self, fwd, name, role):
        return H.metric_value(H.metrics(fwd), 'nrfwd_upstream_up', peer=name, role=role)


class TestLocalNrf(Base):
    def test_stopped_and_restarted_local_nrf_is_back_within_a_second_without_traffic(self):
        loc = self.h.start_stub('local', 'stub-profiles-a.json')
        fwd = self.start(local=loc.port, workers=2)  # default runtime.health
        name = '127.0.0.1:%d' % loc.port
        _, st, doc = self.wait_ready(fwd, 200)
        self.assertEqual(st, 200, doc)
        self.assertEqual(doc['checks']['localNrf'], 'up')
        self.assertEqual(self.up(fwd, name, 'local'), 2)

        # Gone: each worker sees its connection close, reconnects, is
        # refused, and holds the local NRF down. No request is sent.
        loc.stop()
        took, st, doc = self.wait_ready(fwd, 503)
        self.assertEqual(st, 503, doc)
        self.assertLess(took, 1.0, doc)
        self.assertEqual(doc['status'], 'not ready')
        self.assertEqual(doc['checks']['localNrf'], 'held down')
        self.assertIn('held down', doc['reason'])
        held = [e for e in doc['heldDown'] if e['upstream'] == name]
        self.assertEqual(len(held), 1, doc)
        self.assertEqual((held[0]['role'], held[0]['workers'], held[0]['of']),
                         ('local', 2, 2))
        self.assertRegex(held[0]['since'], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$')
        self.assertGreaterEqual(held[0]['forMs'], 0)
        self.assertEqual(self.up(fwd, name, 'local'), 0)
        time.sleep(1.5)  # several probes fail meanwhile (interval at its cap)
        st, doc = self.ready(fwd)
        self.assertEqual(st, 503, doc)
        self.assertGreaterEqual(doc['heldDown'][0]['forMs'], 1500)

        # Back on the same port: a probe finds it within the probe interval
        # cap (500 ms by default) plus a round trip.
        loc2 = self.h.start_stub('local', 'stub-profiles-a.json', port=loc.port)
        took, st, doc = self.wait_ready(fwd, 200)
        self.assertEqual(st, 200, doc)
        self.assertLess(took, 1.0, 'back after %.3f s' % took)
        self.assertEqual((doc['checks']['localNrf'], doc['heldDown']), ('up', []))
        self.assertEqual(self.up(fwd, name, 'local'), 2)
        self.assertEqual(H.stub_requests(loc2.port), [])  # probes are not requests
        st, hd, _ = H.curl(fwd.url(PROFILE + ID_AMF1))
        self.assertEqual((st, hd.get('x-nrfstub')), (200, ['local']))

    def test_readyz_is_503_while_the_local_nrf_is_down_from_the_start(self):
        port = H.free_port()
        fwd = self.start(local=port)
        took, st, doc = self.wait_ready(fwd, 503)
        self.assertEqual(st, 503, doc)
        self.assertEqual(doc['checks']['localNrf'], 'held down')
        self.h.start_stub('local', 'stub-profiles-a.json', port=port)
        took, st, doc = self.wait_ready(fwd, 200)
        self.assertEqual(st, 200, doc)
        self.assertLess(took, 1.0)
        st, _, _ = H.curl(fwd.url(PROFILE + ID_AMF1))
        self.assertEqual(st, 200)

    def test_readyz_is_200_without_a_local_nrf(self):
        fwd = self.start(local=None, peers=[H.peer('nrf-e.test', H.free_port())])
        st, doc = self.ready(fwd)
        self.assertEqual(st, 200, doc)
        self.assertEqual(doc['checks']['localNrf'], 'not configured')


class TestPeer(Base):
    def test_held_down_peer_comes_back_by_itself(self):
        port = H.free_port()
        name = 'nrf-e.test:%d' % port
        fwd = self.start(local=None, peers=[H.peer('nrf-e.test', port)])
        # The first request finds it down (connection refused): 504.
        st, _, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 504)
        self.assertEqual(self.up(fwd, name, 'peer'), 0)
        st, doc = self.ready(fwd)
        self.assertEqual(st, 200, doc)  # a peer down does not stop the data path
        self.assertEqual([(e['upstream'], e['role']) for e in doc['heldDown']],
                         [(name, 'peer')])
        time.sleep(1.2)  # the probe interval grows to its cap
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json', port=port)
        t0 = time.monotonic()
        while self.up(fwd, name, 'peer') != 1 and time.monotonic() - t0 < 3:
            time.sleep(0.02)
        took = time.monotonic() - t0
        self.assertEqual(self.up(fwd, name, 'peer'), 1)
        self.assertLess(took, 1.0, 'back after %.3f s' % took)
        self.assertEqual(H.stub_requests(pe.port), [])  # came back without traffic
        st, hd, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual((st, hd.get('x-nrfstub')), (200, ['nrf-e']))

    def test_a_held_down_peer_tried_as_a_last_resort_is_reached_once_back(self):
        # No background probe for 10 s: only the forced try can find out.
        port = H.free_port()
        name = 'nrf-e.test:%d' % port
        fwd = self.start(local=None, peers=[H.peer('nrf-e.test', port)],
                         health={'probeIntervalMs': 10000, 'probeIntervalMaxMs': 10000})
        st, _, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 504)  # refused: held down
        self.assertEqual(self.up(fwd, name, 'peer'), 0)
        # Still down: the last resort fails as a connect failure, at once.
        t0 = time.monotonic()
        st, _, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 504)
        self.assertLess(time.monotonic() - t0, 0.5)
        self.assertEqual(H.metric_value(H.metrics(fwd), 'nrfwd_try_failures_total',
                                        peer=name, reason='connect'), 2)
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json', port=port)
        time.sleep(0.2)
        self.assertEqual(self.up(fwd, name, 'peer'), 0)  # no probe of its own yet
        # Back: the only candidate is held down and tried anyway; its
        # connection's PING is answered and the request goes through.
        st, hd, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual((st, hd.get('x-nrfstub')), (200, ['nrf-e']))
        self.assertEqual(len(H.stub_requests(pe.port)), 1)
        self.assertEqual(self.up(fwd, name, 'peer'), 1)

    def test_probe_interval_is_changed_live(self):
        port = H.free_port()
        name = 'nrf-e.test:%d' % port
        fwd = self.start(local=None, peers=[H.peer('nrf-e.test', port)],
                         health={'probeIntervalMs': 5000, 'probeIntervalMaxMs': 5000})
        st, _, doc = H.api(fwd, 'PATCH', '/nrf-configuration/v1/runtime',
                           {'health': {'probeIntervalMs': 100, 'probeIntervalMaxMs': 200}})
        self.assertEqual(st, 200, doc)
        self.assertEqual(doc['health'], {'probeIntervalMs': 100, 'probeIntervalMaxMs': 200,
                                         'probeTimeoutMs': 500, 'consecutiveFailures': 5})
        st, _, _ = H.curl(fwd.url(PROFILE + ID_UDM1))  # refused: held down
        self.assertEqual(st, 504)
        self.h.start_stub('nrf-e', 'stub-profiles-e.json', port=port)
        # with the 5 s of the file it would stay down that long
        t0 = time.monotonic()
        while self.up(fwd, name, 'peer') != 1 and time.monotonic() - t0 < 3:
            time.sleep(0.02)
        self.assertEqual(self.up(fwd, name, 'peer'), 1)
        self.assertLess(time.monotonic() - t0, 1.0)


class TestNotHttp2(Base):
    def check_never_up(self, mode):
        srv = SilentServer(mode)
        self.servers.append(srv)
        fwd = self.start(local=srv.port,
                         health={'probeIntervalMs': 100, 'probeIntervalMaxMs': 200,
                                 'probeTimeoutMs': 200})
        took, st, doc = self.wait_ready(fwd, 503)
        self.assertEqual(st, 503, doc)
        self.assertEqual(doc['checks']['localNrf'], 'held down')
        accepted = srv.accepted
        time.sleep(1.0)
        st, doc = self.ready(fwd)
        self.assertEqual(st, 503, doc)  # probes connect, and are not enough
        self.assertGreaterEqual(srv.accepted, accepted + 2)
        self.assertEqual(self.up(fwd, '127.0.0.1:%d' % srv.port, 'local'), 0)

    def test_a_server_that_accepts_and_stays_silent_is_not_up(self):
        self.check_never_up('silent')

    def test_a_server_that_answers_garbage_is_not_up(self):
        self.check_never_up('garbage')


class TestDraining(Base):
    def test_draining_is_visible_until_the_last_request_is_answered(self):
        loc = self.h.start_stub('local', 'stub-profiles-a.json', fault='delay:2000')
        fwd = self.start(local=loc.port,
                         timeouts={'perTryMs': 4000, 'requestMs': 4000})
        _, st, doc = self.wait_ready(fwd, 200)
        self.assertEqual(st, 200, doc)
        with open(os.path.join(self.h.tmpdir, 'held.out'), 'wb') as out:
            client = subprocess.Popen(
                ['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '10',
                 '--http2-prior-knowledge', fwd.url(PROFILE + ID_AMF1)], stdout=out)
            try:
                t0 = time.monotonic()
                while not H.stub_requests(loc.port) and time.monotonic() - t0 < 3:
                    time.sleep(0.02)
                self.assertTrue(H.stub_requests(loc.port))  # held by the stub
                os.kill(fwd.pid, signal.SIGTERM)
                _, st, doc = self.wait_ready(fwd, 503, timeout=1.0)
                self.assertEqual((st, doc['status']), (503, 'draining'), doc)
                self.assertIn('draining', doc['reason'])
                st, _, prob = H.api(fwd, 'PATCH', '/nrf-configuration/v1/forwardingOptions',
                                    {'maxViaMembers': 7})
                self.assertEqual(st, 503, prob)
                self.assertTrue(fwd.alive())
            finally:
                client.wait(15)
        with open(os.path.join(self.h.tmpdir, 'held.out')) as f:
            self.assertEqual(f.read(), '200')  # the request in flight was answered
        fwd.proc.wait(10)
        self.assertEqual(fwd.proc.returncode, 0)

    def test_drain_time_is_runtime_timeouts_drainMs_read_at_the_stop(self):
        loc = self.h.start_stub('local', 'stub-profiles-a.json', fault='delay:3000')
        fwd = self.start(local=loc.port,
                         timeouts={'perTryMs': 5000, 'requestMs': 5000, 'drainMs': 2000})
        _, st, doc = self.wait_ready(fwd, 200)
        self.assertEqual(st, 200, doc)
        # live: the value in force when the signal comes counts
        st, _, prob = H.api(fwd, 'PATCH', '/nrf-configuration/v1/runtime',
                            {'timeouts': {'drainMs': 300}})
        self.assertEqual(st, 200, prob)
        client = subprocess.Popen(
            ['curl', '-s', '-o', '/dev/null', '--max-time', '10', '--http2-prior-knowledge',
             fwd.url(PROFILE + ID_AMF1)], stdout=subprocess.DEVNULL)
        try:
            t0 = time.monotonic()
            while not H.stub_requests(loc.port) and time.monotonic() - t0 < 3:
                time.sleep(0.02)
            self.assertTrue(H.stub_requests(loc.port))  # held by the stub for 3 s
            t0 = time.monotonic()
            os.kill(fwd.pid, signal.SIGTERM)
            fwd.proc.wait(10)
            took = time.monotonic() - t0
        finally:
            client.wait(15)
        self.assertEqual(fwd.proc.returncode, 0)
        self.assertIn('draining for up to 300 ms', fwd.log())
        self.assertLess(took, 2.0)  # did not wait for the 3 s answer (nor 2000 ms)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
