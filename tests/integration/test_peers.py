#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of GET /peers and `nrfwd-ctl peers` (docs/rest-api.md, "Peers").

Usage: python3 tests/integration/test_peers.py [--build-dir BUILD] [unittest args]

Real processes on loopback: a local nrfstub, a peer nrfstub, nrfwd with its
management listener. What is checked: every upstream is listed with its
role, configured and resolved address and state; killing the peer makes it
"down" with its last failure's reason; restarting it on the same port makes
it "up" again (background probes, no traffic needed); nrfwd-ctl prints the
same in a table. Under h2load through a peer that answers after 200 ms
(nrfstub --fault delay:200), two workers: connections and streams in flight
are seen while the load runs, none in flight after it, the latency
quantiles lie in the histogram bucket of the delay (100..250 ms), and the
peer's connections drop to 0 once it is killed. Standard library only;
helpers in nrfwd_harness.py.
"""

import json
import os
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at stub "e" (peer)
PROFILE = '/nnrf-nfm/v1/nf-instances/'


def peers(fwd):
    st, _, doc = H.api(fwd, 'GET', '/peers')
    assert st == 200, (st, doc)
    return {u['name']: u for u in doc['upstreams']}


def wait_state(fwd, name, state, timeout=5.0):
    end = time.time() + timeout
    u = None
    while time.time() < end:
        u = peers(fwd).get(name)
        if u is not None and u['state'] == state:
            return u
        time.sleep(0.1)
    raise AssertionError('%s not %s: %r' % (name, state, u))


class Peers(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness()

    def tearDown(self):
        self.h.cleanup()

    def test_01_killed_and_restarted_peer(self):
        local = self.h.start_stub('local', 'stub-profiles-a.json')
        peer = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        cfg = H.nrfwd_config('nrf-a.test', local=local.port,
                             peers=[H.peer('nrf-e.test', peer.port, priority=3)])
        fwd = self.h.start_nrfwd(cfg, management=True)
        pname = 'nrf-e.test:%d' % peer.port
        lname = '127.0.0.1:%d' % local.port
        st, _, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200)
        ups = peers(fwd)
        self.assertEqual(set(ups), {pname, lname})
        p, l = ups[pname], ups[lname]
        self.assertEqual(l['role'], 'local')
        self.assertNotIn('mode', l)
        self.assertEqual(l['address'], lname)
        self.assertEqual((p['role'], p['mode']), ('peer', 'forwarding'))
        self.assertEqual(p['priority'], 3)
        self.assertEqual(p['address'], '127.0.0.1:%d' % peer.port)
        self.assertIn('fqdn nrf-e.test', p['configured'])
        self.assertEqual(p['state'], 'up')
        self.assertEqual(p['tries'], 1)
        self.assertEqual(p['answers'], {'200': 1})
        self.assertIsNone(p['lastFailure'])
        self.assertEqual(l['answers'], {'404': 1})

        # The peer goes away: the next forward fails to connect, the peer
        # is held down (probed in the background).
        self.h.procs.remove(peer)
        peer.stop()
        st, _, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 504)
        p = wait_state(fwd, pname, 'down')
        self.assertEqual(p['lastFailure']['reason'], 'connect')
        # The transport's reason is kept in the log, not "input/output error".
        self.assertIn('connect failed: connection refused', fwd.log())
        self.assertGreaterEqual(p['failures']['connect'], 1)
        self.assertIsNotNone(p['downForSeconds'])
        self.assertEqual(p['workersDown'], p['workers'])

        r = subprocess.run([H.binary('nrfwd-ctl'), 'peers', '--api',
                            'http://127.0.0.1:%d' % fwd.mgmt_port],
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(lines[0].startswith('UPSTREAM'), r.stdout)
        row = [x for x in lines if x.startswith(pname)]
        self.assertEqual(len(row), 1, r.stdout)
        self.assertIn(' down ', row[0])
        self.assertIn('connect, ', row[0])

        # Back on the same port: up again by itself.
        self.h.start_stub('nrf-e', 'stub-profiles-e.json', port=peer.port)
        p = wait_state(fwd, pname, 'up')
        self.assertEqual(p['workersDown'], 0)
        self.assertIsNone(p['downForSeconds'])
        self.assertEqual(p['lastFailure']['reason'], 'connect')  # kept: the last one
        st, _, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200)

    def test_02_connections_streams_and_latency_under_a_slow_peer(self):
        local = self.h.start_stub('local', 'stub-profiles-a.json', extra=['--no-record'])
        peer = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='delay:200',
                                 extra=['--no-record'])
        cfg = H.nrfwd_config('nrf-a.test', local=local.port,
                             peers=[H.peer('nrf-e.test', peer.port, priority=3)])
        fwd = self.h.start_nrfwd(cfg, workers=2, management=True)
        pname = 'nrf-e.test:%d' % peer.port
        lname = '127.0.0.1:%d' % local.port
        p = peers(fwd)[pname]
        self.assertEqual((p['connections'], p['inFlight'], p['queued']), (0, 0, 0))
        self.assertIsNone(p['latencySeconds'])

        # 4 clients x 8 streams for 3 s: each request is answered 404 by
        # the local NRF at once, then by the peer after 200 ms.
        load = H.h2load_start(fwd.url(PROFILE + ID_UDM1), seconds=3, c=4, m=8)
        try:
            seen = []
            t0 = time.time()
            streams = 0
            while time.time() - t0 < 2.5:
                time.sleep(0.25)
                p = peers(fwd)[pname]
                seen.append((p['connections'], p['inFlight'], p['queued']))
                streams = max(streams, H.metric_value(H.metrics(fwd), 'nrfwd_upstream_streams',
                                                      peer=pname, role='peer') or 0)
            res = load.wait(timeout=30)
        finally:
            load.stop()
        self.assertGreater(res.get('status_2xx', 0), 100, res['raw'][-600:])
        self.assertEqual(res.get('failed'), 0, res['raw'][-600:])
        # At some sample the peer had connections and streams open; never
        # more streams than the 32 the clients can have.
        self.assertTrue(any(c > 0 and f > 0 for c, f, _ in seen), seen)
        self.assertTrue(all(f <= 32 for _, f, _ in seen), seen)
        self.assertGreater(streams, 0)  # the same gauge in the metrics
        print('\n/peers during the load (connections, inFlight, queued): %r' % seen,
              file=sys.stderr)

        ups = peers(fwd)
        p, l = ups[pname], ups[lname]
        self.assertEqual((p['inFlight'], p['queued']), (0, 0))
        self.assertGreater(p['connections'], 0)  # kept for the next requests
        self.assertEqual(H.metric_value(H.metrics(fwd), 'nrfwd_upstream_connections', peer=pname,
                                        role='peer'), p['connections'])
        lat = p['latencySeconds']
        self.assertEqual(lat['answers'], p['answers'].get('200'), p)
        # The 200 ms delay lies in the 100..250 ms bucket: every estimate
        # is inside it (interpolated), the mean is the measured one.
        for q in ('p50', 'p90', 'p99'):
            self.assertGreaterEqual(lat[q], 0.1, lat)
            self.assertLessEqual(lat[q], 0.25, lat)
        self.assertLessEqual(lat['p50'], lat['p90'])
        self.assertLessEqual(lat['p90'], lat['p99'])
        self.assertGreaterEqual(lat['mean'], 0.2, lat)
        self.assertLess(l['latencySeconds']['p99'], 0.1, l)  # the local NRF is quick

        r = subprocess.run([H.binary('nrfwd-ctl'), 'peers', '--api',
                            'http://127.0.0.1:%d' % fwd.mgmt_port],
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 0, r.stderr)
        head = r.stdout.splitlines()[0].split()
        for col in ('CONNS', 'STREAMS', 'P50_MS', 'P90_MS', 'P99_MS'):
            self.assertIn(col, head)
        row = [x for x in r.stdout.splitlines() if x.startswith(pname)][0].split()
        self.assertEqual(int(row[head.index('CONNS')]), p['connections'])
        self.assertEqual(int(row[head.index('STREAMS')]), 0)
        self.assertAlmostEqual(float(row[head.index('P50_MS')]), lat['p50'] * 1e3, delta=0.1)

        # The peer goes away: its connections are closed, none comes back
        # (probes are refused), and it is held down.
        self.h.procs.remove(peer)
        peer.stop()
        end = time.time() + 5
        while time.time() < end:
            p = peers(fwd)[pname]
            if p['connections'] == 0:
                break
            time.sleep(0.1)
        self.assertEqual((p['connections'], p['inFlight']), (0, 0), p)
        st, _, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 504)
        p = peers(fwd)[pname]
        self.assertIn(p['state'], ('down', 'probing', 'partly down'), p)
        self.assertEqual(p['connections'], 0, p)
        self.assertIsNotNone(p['nextProbeInSeconds'], p)


class Reasons(unittest.TestCase):
    """Start-up failures name the address and the reason, one log line each."""

    def setUp(self):
        self.h = H.Harness()
        self.busy = socket.socket()
        self.busy.bind(('127.0.0.1', 0))
        self.busy.listen(1)
        self.port = self.busy.getsockname()[1]

    def tearDown(self):
        self.busy.close()
        self.h.cleanup()

    def run_nrfwd(self, cfg):
        path = os.path.join(self.h.tmpdir, 'c.json')
        with open(path, 'w') as f:
            json.dump(cfg, f)
        return subprocess.run([H.binary('nrfwd'), '--config', path, '--workers', '1'],
                              capture_output=True, text=True, timeout=20)

    def test_01_listen_port_in_use(self):
        cfg = H.nrfwd_config('nrf-a.test', port=self.port)
        r = self.run_nrfwd(cfg)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('cannot listen on 127.0.0.1:%d: Address already in use' % self.port,
                      r.stderr)
        self.assertNotIn('input/output error', r.stderr)

    def test_02_management_port_in_use(self):
        cfg = H.nrfwd_config('nrf-a.test')
        cfg['runtime']['management'] = {'address': '127.0.0.1', 'port': self.port}
        r = self.run_nrfwd(cfg)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('management listener: cannot listen on 127.0.0.1:%d: Address already in use'
                      % self.port, r.stderr)
        self.assertNotIn('port 0', r.stderr)

    def test_03_configuration_problems_one_line_each(self):
        cfg = H.nrfwd_config('nrf-a.test')
        cfg['runtime']['limits']['maxConnections'] = 0
        cfg['forwardingOptions']['maxViaMembers'] = 0
        r = self.run_nrfwd(cfg)
        self.assertNotEqual(r.returncode, 0)
        lines = [x for x in r.stderr.splitlines() if x.strip()]
        probs = [x for x in lines if '/runtime/limits/maxConnections' in x or
                 '/forwardingOptions/maxViaMembers' in x]
        self.assertEqual(len(probs), 2, r.stderr)
        for line in lines:  # every line: timestamp and level
            self.assertRegex(line, r'^\d{4}-\d\d-\d\dT[0-9:.]+Z (ERROR|WARN|INFO) ', line)

    def test_04_command_line_files_checked_before_any_listener(self):
        cfg = H.nrfwd_config('nrf-a.test')
        empty = os.path.join(self.h.tmpdir, 'empty-token')
        with open(empty, 'w') as f:
            f.write('\n')
        for extra, reason in (
                (['--api-token-file', '/nonexistent/token'],
                 '--api-token-file /nonexistent/token: No such file or directory'),
                (['--management', '127.0.0.1:0', '--api-token-file', empty],
                 '--api-token-file %s: empty, or not a token' % empty),
                (['--management', '127.0.0.1:99999'],
                 '--management: expected ADDR:PORT, got "127.0.0.1:99999"')):
            path = os.path.join(self.h.tmpdir, 'c.json')
            with open(path, 'w') as f:
                json.dump(cfg, f)
            r = subprocess.run([H.binary('nrfwd'), '--config', path, '--workers', '1'] + extra,
                               capture_output=True, text=True, timeout=20)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(reason, r.stderr)
            self.assertNotIn('listening on', r.stderr)  # nothing was bound
            self.assertNotIn('input/output error', r.stderr)


if __name__ == '__main__':
    argv = H.parse_args(sys.argv)
    unittest.main(argv=argv, verbosity=2)
