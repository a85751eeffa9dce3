#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Isolation (docs/failures.md "Isolation", decisions 0052 and 0053), on kernel sockets.

Usage: python3 tests/integration/test_isolation.py [--build-dir BUILD] [unittest args]

One bad request, one lost connection or one burst never takes service from
the others. Every test runs well-behaved traffic (h2load) beside the fault;
what the fault does to that traffic is the result.

- A poison answer: the local NRF drops its whole connection, writing nothing
  more of what it owed (no PING ACK, no other answers), whenever one answer
  is over 16 KiB (nrfstub `bigdrop:16384:0:mute`, what Open5GS does). Big
  requests every 0.4 s beside h2load of small ones: >= 99.9 % of the small
  ones get 200, each big one is tried twice and answered 503, and the local
  NRF is never held down.
- Hold-down: failed tries in a row (runtime.health.consecutiveFailures) do
  hold an upstream down; with every upstream held down, a local-only request
  is tried anyway (on the probe) instead of answered 503 without trying.
- Admission by waiting time: a burst of 16 384 requests with 8 192 in flight
  is answered 200 whole; an upstream that serves half the offered rate gets
  503 NF_CONGESTION (Retry-After: 1) for what waited past queueTargetMs and
  the answered requests' p99 stays near the target; below the upstream's
  rate, nothing is shed.
- Flow control is the client's time: a client that reads a 400 KB answer at
  100 KB/s (much longer than requestMs) gets all of it.
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

if '/usr/lib/python3/dist-packages' not in sys.path:
    sys.path.append('/usr/lib/python3/dist-packages')  # Debian's python3-h2
import h2.config  # noqa: E402
import h2.connection  # noqa: E402
import h2.events  # noqa: E402
import h2.settings  # noqa: E402

SELF = 'nrf-a.test'
SMALL = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&limit=1'   # ~1.3 KB
BIG = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF'             # ~30 KB (big profiles)
REGISTER = '/nnrf-nfm/v1/nf-instances/6b2c3d4e-0000-4000-8000-00000000aa01'


def h2load_lat(url, args, timeout=60):
    """h2load with --log-file: (summary dict, [(status, latency_ms)])."""
    fd, log = tempfile.mkstemp(prefix='nrfwd-iso-h2load-')
    os.close(fd)
    try:
        cmd = ['h2load'] + list(args) + ['--log-file', log, url]
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        res = H._h2load_parse(r.stdout.decode('utf-8', 'replace'), r.returncode)
        lat = []
        with open(log) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3:
                    lat.append((int(parts[1]), int(parts[2]) / 1000.0))
        return res, lat
    finally:
        os.unlink(log)


def streams_at_once(port, path, n, timeout=10):
    """@n GETs of @path on one HTTP/2 connection at once: [(status, headers
    {name: [values]}, body)] in the order they end."""
    sock = socket.create_connection(('127.0.0.1', port), timeout=timeout)
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True,
                                                             header_encoding='utf-8'))
    c.initiate_connection()
    for i in range(n):
        c.send_headers(1 + 2 * i, [(':method', 'GET'), (':scheme', 'http'), (':authority', SELF),
                                   (':path', path)], end_stream=True)
    sock.sendall(c.data_to_send())
    heads, bodies, done = {}, {}, []
    deadline = time.monotonic() + timeout
    while len(done) < n and time.monotonic() < deadline:
        data = sock.recv(65536)
        if not data:
            break
        for ev in c.receive_data(data):
            if isinstance(ev, h2.events.ResponseReceived):
                hd = {}
                for k, v in ev.headers:
                    hd.setdefault(k, []).append(v)
                heads[ev.stream_id] = hd
            elif isinstance(ev, h2.events.DataReceived):
                bodies[ev.stream_id] = bodies.get(ev.stream_id, b'') + ev.data
                c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)):
                hd = heads.get(ev.stream_id, {})
                done.append((int(hd.get(':status', ['0'])[0]), hd, bodies.get(ev.stream_id, b'')))
        out = c.data_to_send()
        if out:
            sock.sendall(out)
    sock.close()
    return done


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float('nan')


def problem(body):
    try:
        return json.loads(body).get('cause')
    except ValueError:
        return None


class Base(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-iso-')

    def tearDown(self):
        self.h.cleanup(dump=os.environ.get('NRFWD_TEST_LOGS') == '1')


class TestPoisonAnswer(Base):
    """An upstream that drops its connection on one request kind fails
    that request only."""

    def test_small_requests_beside_poison_answers_are_all_served(self):
        prof = H.write_big_profiles(os.path.join(self.h.tmpdir, 'big.json'))
        local = self.h.start_stub('local', prof, fault='bigdrop:16384:0:mute')
        cfg = H.nrfwd_config(SELF, local=local.port,
                             timeouts={'connectMs': 200, 'perTryMs': 1000, 'requestMs': 3000})
        fwd = self.h.start_nrfwd(cfg, management=True)
        bigs = []

        def big_requests():
            time.sleep(0.3)
            for i in range(8):
                bigs.append(H.curl(fwd.url(BIG + '&n=%d' % i)))
                time.sleep(0.4)
        th = threading.Thread(target=big_requests)
        th.start()
        r = H.h2load(fwd.url(SMALL), n=1, c=4, m=8, timeout=60, extra=['-D', '4'])
        th.join()
        total, ok = r.get('total', 0), r.get('status_2xx', 0)
        print('\npoison answers: %d of %d small requests 200 (%.2f %%), %s'
              % (ok, total, 100.0 * ok / max(total, 1), r.get('status')))
        self.assertGreater(total, 1000, r['raw'])
        self.assertEqual(r.get('errored', 0) + r.get('timeout', 0), 0, r['raw'])
        self.assertGreaterEqual(ok, 0.999 * total, r['raw'])
        self.assertEqual(len(bigs), 8)
        for i, (st, _, body) in enumerate(bigs):
            self.assertEqual((st, problem(body)), (503, 'NF_SERVICE_FAILURE'), 'big %d' % i)
        # each big one was sent twice (lost once, sent again apart, lost
        # again: answered), never a third time
        st, _, stats = H.curl(local.url('/_stub/stats'))
        self.assertEqual(json.loads(stats)['faults']['bigdrop'], 16, stats)
        m = H.metrics(fwd)
        self.assertGreaterEqual(H.metric_value(m, 'nrfwd_peer_connections_lost_total'), 8)
        log = fwd.log()
        self.assertNotRegex(log, r'local NRF \S+ down', 'one dead connection held it down')


class TestHoldDown(Base):
    def test_failed_tries_in_a_row_hold_the_local_nrf_down_and_it_comes_back(self):
        local = self.h.start_stub('local', 'stub-profiles-a.json', fault='reset')
        peer = self.h.start_stub('peer', 'stub-profiles-e.json')
        cfg = H.nrfwd_config(SELF, local=local.port,
                             peers=[H.peer('nrf-e.test', peer.port)])
        cfg['runtime']['health'] = {'consecutiveFailures': 3}
        fwd = self.h.start_nrfwd(cfg)
        for i in range(3):
            st, hd, _ = H.curl(fwd.url(SMALL + '&n=%d' % i))
            self.assertEqual(st, 503, 'local reset, the peer has no AMF: %d' % i)
        self.assertTrue(H._wait_for_line(fwd, r'3 failed tries in a row', 5), fwd.log())
        self.assertTrue(H._wait_for_line(fwd, r'local NRF \S+ down', 5), fwd.log())
        H.stub_fault(local.port, 'none')
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            st, hd, _ = H.curl(fwd.url(SMALL))
            if st == 200:
                break
            time.sleep(0.05)
        self.assertEqual(st, 200, 'the probe brought the local NRF back')

    def test_a_local_only_request_is_tried_anyway_when_every_upstream_is_held_down(self):
        port = H.free_port()
        cfg = H.nrfwd_config(SELF, local=port)
        # no background probe within the test: only a request can start one
        cfg['runtime']['health'] = {'probeIntervalMs': 60000, 'probeIntervalMaxMs': 60000}
        fwd = self.h.start_nrfwd(cfg)
        self.assertTrue(H._wait_for_line(fwd, r'local NRF \S+ down', 5), fwd.log())
        self.h.start_stub('local', 'stub-profiles-a.json', port=port)
        profile = {'nfInstanceId': REGISTER.rsplit('/', 1)[1], 'nfType': 'UDM',
                   'nfStatus': 'REGISTERED'}
        st, _, body = H.curl(fwd.url(REGISTER), method='PUT',
                             headers=['content-type: application/json'],
                             data=json.dumps(profile))
        self.assertIn(st, (200, 201), 'tried on the probe, answered by the local NRF: %s'
                      % body)


class TestAdmission(Base):
    def test_a_burst_the_upstream_can_absorb_is_answered_whole(self):
        local = self.h.start_stub('local', 'stub-profiles-a.json', extra=['--no-record'])
        fwd = self.h.start_nrfwd(H.nrfwd_config(SELF, local=local.port))
        r = H.h2load(fwd.url(SMALL), n=16384, c=64, m=128, timeout=120)
        print('\nburst: %s in %.2f s' % (r.get('status'), r.get('seconds', 0)))
        self.assertEqual(r.get('errored', 0) + r.get('timeout', 0), 0, r['raw'])
        if H.sanitized() != 'none':
            # several times slower: the burst may stand past the target;
            # each request still gets one answer, 200 or the shed 503
            self.assertEqual(r.get('status_2xx', 0) + r.get('status_5xx', 0), 16384, r['raw'])
            return
        self.assertEqual(r.get('status_2xx'), 16384, r['raw'])

    def _half_rate(self, clients, probes):
        # 8 connections (NRF_RT_POOL_CONNS) x 2 streams / 40 ms: the
        # upstream serves ~400 requests/s
        local = self.h.start_stub('local', 'stub-profiles-a.json', fault='delay:40',
                                  extra=['--no-record', '--max-streams', '2'])
        fwd = self.h.start_nrfwd(H.nrfwd_config(SELF, local=local.port), management=True)
        out = {}
        th = threading.Thread(target=lambda: out.update(r=h2load_lat(
            fwd.url(SMALL), ['-c', str(clients), '-m', '16', '--rps', '100', '-D', '3'])))
        th.start()
        # what a shed request gets: @probes more at once beside the load
        time.sleep(1.5)
        self.probe_shed = [(hd, body) for st, hd, body in streams_at_once(fwd.port, SMALL, probes)
                           if st == 503]
        th.join()
        res, lat = out['r']
        ok = [ms for st, ms in lat if st == 200]
        shed = [ms for st, ms in lat if st == 503]
        return fwd, res, ok, shed

    def test_an_upstream_at_half_the_offered_rate_sheds_by_waiting_time(self):
        fwd, res, ok, shed = self._half_rate(8, 50)   # ~800 requests/s offered
        print('\nhalf rate: %d 200 (p50 %.0f ms, p99 %.0f ms), %d 503; %s'
              % (len(ok), pct(ok, 0.5), pct(ok, 0.99), len(shed), res.get('status')))
        self.assertEqual(res.get('errored', 0) + res.get('timeout', 0), 0, res['raw'])
        self.assertGreater(len(ok), 500)
        self.assertGreater(len(shed), 200, 'requests beyond the upstream rate are shed')
        self.assertEqual(len(ok) + len(shed), res.get('total'), res['raw'])
        # target 100 ms + the 40 ms answer + the interval before shedding
        # starts; without shedding the queue grows to requestMs (4 s)
        self.assertLess(pct(ok, 0.99), 600, 'p99 of answered requests near the target')
        m = H.metrics(fwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_queue_shed_total'),
                         len(shed) + len(self.probe_shed))
        self.assertGreater(len(self.probe_shed), 0, 'requests beside h2load saw a shed answer')
        for hd, body in self.probe_shed:
            self.assertEqual(problem(body), 'NF_CONGESTION', body)
            self.assertEqual(hd.get('retry-after'), ['1'])
        st, hd, body = H.curl(fwd.url(SMALL))  # the queue is empty again
        self.assertEqual(st, 200)

    def test_below_the_upstream_rate_nothing_is_shed(self):
        fwd, res, ok, shed = self._half_rate(2, 10)   # ~200 requests/s offered
        print('\nbelow rate: %d 200 (p99 %.0f ms), %d 503' % (len(ok), pct(ok, 0.99), len(shed)))
        self.assertEqual(len(shed), 0, res['raw'])
        self.assertEqual(self.probe_shed, [])
        self.assertEqual(len(ok), res.get('total'), res['raw'])


class SlowReader:
    """An HTTP/2 client that takes an answer at @rate bytes/s: its stream
    window is 16 KiB and WINDOW_UPDATEs are paced."""

    def __init__(self, port, path, rate):
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=5)
        cfg = h2.config.H2Configuration(client_side=True, header_encoding='utf-8')
        self.c = h2.connection.H2Connection(config=cfg)
        self.c.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 16384})
        self.c.initiate_connection()
        self.sid = self.c.get_next_available_stream_id()
        self.c.send_headers(self.sid, [(':method', 'GET'), (':scheme', 'http'),
                                       (':authority', SELF), (':path', path)], end_stream=True)
        self.sock.sendall(self.c.data_to_send())
        self.rate = rate

    def run(self, timeout):
        status, body, reset, owed = None, 0, None, 0
        sock, c = self.sock, self.c
        sock.settimeout(0.05)
        t0 = last = time.monotonic()
        ended = False
        while not ended and time.monotonic() - t0 < timeout:
            try:
                data = sock.recv(65536)
                if not data:
                    break
                for ev in c.receive_data(data):
                    if isinstance(ev, h2.events.ResponseReceived):
                        status = int(dict(ev.headers)[':status'])
                    elif isinstance(ev, h2.events.DataReceived):
                        body += len(ev.data)
                        owed += ev.flow_controlled_length
                    elif isinstance(ev, h2.events.StreamEnded):
                        ended = True
                    elif isinstance(ev, h2.events.StreamReset):
                        reset, ended = ev.error_code, True
            except socket.timeout:
                pass
            now = time.monotonic()
            give = min(owed, int((now - last) * self.rate))
            if give > 0:
                c.acknowledge_received_data(give, self.sid)
                owed -= give
                last = now
            out = c.data_to_send()
            if out:
                sock.sendall(out)
        sock.close()
        return status, body, reset, time.monotonic() - t0


class TestFlowControlIsTheClientsTime(Base):
    def test_a_client_reading_at_100_kb_per_s_gets_the_whole_answer(self):
        prof = H.write_big_profiles(os.path.join(self.h.tmpdir, 'big.json'), extra_amf=300)
        local = self.h.start_stub('local', prof, extra=['--no-record'])
        _, _, direct = H.curl(local.url(BIG))
        cfg = H.nrfwd_config(SELF, local=local.port,
                             timeouts={'perTryMs': 1000, 'requestMs': 1500,
                                       'stalledReaderMs': 2000})
        fwd = self.h.start_nrfwd(cfg, management=True)
        good = H.h2load_start(fwd.url(SMALL), seconds=3, c=2, m=4, rps=50)
        status, n, reset, took = SlowReader(fwd.port, BIG, 100 * 1000).run(timeout=20)
        g = good.wait()
        print('\nslow reader: %d of %d bytes in %.1f s (requestMs 1.5 s), reset %s'
              % (n, len(direct), took, reset))
        self.assertEqual(status, 200)
        self.assertIsNone(reset, 'no RST_STREAM')
        self.assertEqual(n, len(direct))
        self.assertGreater(took, 2.5, 'the answer took longer than requestMs')
        self.assertEqual(g.get('status_2xx'), g.get('total'), g['raw'])
        m = H.metrics(fwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_relay_aborts_total'), 0)


def main():
    H.parse_args(sys.argv)
    prog = unittest.main(argv=sys.argv, exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
