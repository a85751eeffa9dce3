#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of the access log and request ids (docs/access-log.md).

Usage: python3 tests/integration/test_access_log.py [--build-dir BUILD] [unittest args]

Real processes on loopback: nrfstub upstreams, nrfwd with runtime.accessLog,
curl. What is checked, field by field on parsed lines (text and JSON): a
forwarded answer names the peer that answered; 508 (loop detected), 504
(NRF_Not_Reachable) and 400 (malformed Via) name their condition; the Via
member count, status and bytes match what the client got; a client's
x-request-id is kept, a missing one generated and returned on nrfwd's own
answers; the log is reopened after a rename and SIGUSR1 (logrotate).
Standard library only; helpers in nrfwd_harness.py.
"""

import json
import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at stub "e" (peer)
SELF = 'nrf-a.test'
PROFILE = '/nnrf-nfm/v1/nf-instances/'
TEXT_FIELDS = ['time', 'client', 'worker', 'method', 'path', 'status', 'outcome',
               'upstream', 'condition', 'via', 'latency_us', 'bytes', 'request_id',
               'span_id']


def parse_text(line):
    """One text line into a dict like a JSON line's ("-" -> None)."""
    parts = line.split(' ')
    assert len(parts) == len(TEXT_FIELDS), line
    d = dict(zip(TEXT_FIELDS, parts))
    for k in ('worker', 'status', 'via', 'latency_us', 'bytes'):
        d[k] = int(d[k])
    for k in ('upstream', 'condition', 'request_id', 'span_id'):
        if d[k] == '-':
            d[k] = None
    return d


def hdr(rq, name):
    """The value of header @name in a request nrfstub recorded (None when
    absent; the first when repeated)."""
    for k, v in rq['headers']:
        if k == name:
            return v
    return None


def read_lines(path, n, timeout=5.0):
    """Wait until @path holds at least @n lines (the workers flush every
    flushMs); returns them all."""
    end = time.time() + timeout
    lines = []
    while time.time() < end:
        if os.path.exists(path):
            with open(path) as f:
                lines = [x for x in f.read().splitlines() if x]
            if len(lines) >= n:
                return lines
        time.sleep(0.05)
    return lines


class Base(unittest.TestCase):
    fmt = 'text'

    def setUp(self):
        self.h = H.Harness()
        self.logpath = os.path.join(self.h.tmpdir, 'access.log')
        self.local = self.h.start_stub('local', 'stub-profiles-a.json')
        self.peer = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        self.dead = H.free_port()
        cfg = H.nrfwd_config(SELF, local=self.local.port,
                             peers=[H.peer('nrf-e.test', self.peer.port, priority=1)])
        cfg['runtime']['accessLog'] = {'path': self.logpath, 'format': self.fmt,
                                       'flushMs': 50}
        self.cfg = cfg
        self.fwd = self.h.start_nrfwd(cfg)

    def tearDown(self):
        self.h.cleanup()

    def parse(self, line):
        return json.loads(line) if self.fmt == 'json' else parse_text(line)

    def lines(self, n):
        got = read_lines(self.logpath, n)
        self.assertGreaterEqual(len(got), n, 'access log: %r' % got)
        return [self.parse(x) for x in got]


class TextLog(Base):
    fmt = 'text'

    def test_01_forwarded_508_and_400(self):
        # Forwarded: local says 404, the peer answers 200.
        st, hd, body = H.curl(self.fwd.url(PROFILE + ID_UDM1),
                              headers=[('x-request-id', 'client-id-1')])
        self.assertEqual(st, 200)
        # 508: own identity in Via (2 members).
        via = '2.0 nrf-x.test:1, 2.0 %s:%d' % (SELF, self.fwd.port)
        st508, hd508, body508 = H.curl(self.fwd.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'),
                                       headers=[('via', via)])
        self.assertEqual(st508, 508)
        # Generated id on nrfwd's own answer.
        rid508 = hd508.get('x-request-id', [None])[0]
        self.assertIsNotNone(rid508)
        self.assertRegex(rid508, r'^[0-9a-f]{16}$')
        # 400: malformed Via.
        st400, hd400, _ = H.curl(self.fwd.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'),
                                 headers=[('via', '2.0 (unclosed comment')])
        self.assertEqual(st400, 400)
        lines = self.lines(3)
        self.assertEqual(len(lines), 3)
        fwd, l508, l400 = lines
        self.assertRegex(fwd['time'], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$')
        self.assertRegex(fwd['client'], r'^127\.0\.0\.1:\d+$')
        self.assertEqual(fwd['worker'], 0)
        self.assertEqual(fwd['method'], 'GET')
        self.assertEqual(fwd['path'], PROFILE + ID_UDM1)
        self.assertEqual(fwd['status'], 200)
        self.assertEqual(fwd['outcome'], 'peer')
        self.assertEqual(fwd['upstream'], 'nrf-e.test:%d' % self.peer.port)
        self.assertIsNone(fwd['condition'])
        self.assertEqual(fwd['via'], 0)
        self.assertGreater(fwd['latency_us'], 0)
        self.assertEqual(fwd['bytes'], len(body))
        self.assertEqual(fwd['request_id'], 'client-id-1')

        self.assertEqual(l508['status'], 508)
        self.assertEqual(l508['outcome'], 'loop_detected')
        self.assertEqual(l508['condition'], 'NRF_Forwarding_Loop_Detection')
        self.assertIsNone(l508['upstream'])
        self.assertEqual(l508['via'], 2)
        self.assertEqual(l508['bytes'], len(body508))
        self.assertEqual(l508['request_id'], rid508)

        self.assertEqual(l400['status'], 400)
        self.assertEqual(l400['outcome'], 'bad_request')
        self.assertIsNone(l400['condition'])
        self.assertEqual(l400['request_id'], hd400.get('x-request-id', [None])[0])

    def test_02_reopen_after_rename_and_sigusr1(self):
        H.curl(self.fwd.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'))
        self.assertEqual(len(self.lines(1)), 1)
        rotated = self.logpath + '.1'
        os.rename(self.logpath, rotated)
        H.curl(self.fwd.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'))
        # Still the old file (the same open file) until SIGUSR1.
        self.assertEqual(len(read_lines(rotated, 2)), 2)
        os.kill(self.fwd.pid, signal.SIGUSR1)
        self.assertTrue(H._wait_for_line(self.fwd, r'access log reopened', 5.0),
                        self.fwd.log())
        H.curl(self.fwd.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'),
               headers=[('x-request-id', 'after-rotate')])
        new = self.lines(1)
        self.assertEqual(len(new), 1)
        self.assertEqual(new[0]['request_id'], 'after-rotate')
        self.assertEqual(len(read_lines(rotated, 2)), 2)
        self.assertTrue(self.fwd.alive())


class JsonLog(Base):
    fmt = 'json'

    def test_01_504_and_traceparent(self):
        # The only peer is gone and the local NRF says "not here": 504.
        self.h.procs.remove(self.peer)
        self.peer.stop()
        tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
        st, hd, body = H.curl(self.fwd.url(PROFILE + ID_UDM1), headers=[('traceparent', tp)])
        self.assertEqual(st, 504)
        self.assertEqual(hd.get('x-request-id'), ['4bf92f3577b34da6a3ce929d0e0e4736'])
        (l,) = self.lines(1)
        self.assertEqual(l['status'], 504)
        self.assertEqual(l['outcome'], 'not_reachable')
        self.assertEqual(l['condition'], 'NRF_Not_Reachable')
        self.assertIsNone(l['upstream'])
        self.assertEqual(l['method'], 'GET')
        self.assertEqual(l['path'], PROFILE + ID_UDM1)
        self.assertEqual(l['bytes'], len(body))
        self.assertEqual(l['request_id'], '4bf92f3577b34da6a3ce929d0e0e4736')
        self.assertIsInstance(l['latency_us'], int)

    def test_02_local_answer_and_escaping(self):
        st, hd, body = H.curl(self.fwd.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF&x=%22q'))
        self.assertEqual(st, 200)
        self.assertNotIn('x-request-id', hd)  # relayed answers are the upstream's
        (l,) = self.lines(1)
        self.assertEqual(l['outcome'], 'local')
        self.assertEqual(l['upstream'], '127.0.0.1:%d' % self.local.port)
        self.assertEqual(l['path'], '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&x=%22q')
        self.assertEqual(l['bytes'], len(body))
        self.assertRegex(l['request_id'], r'^[0-9a-f]{16}$')


class Hops(unittest.TestCase):
    """Correlated hops: client -> nrfwd A -> nrfwd B -> NRF (stub). The id
    A generates goes upstream as x-request-id, so both logs and the NRF see
    one id; a traceparent keeps its trace-id and gets each hop's span as
    its parent-id."""

    def setUp(self):
        self.h = H.Harness()
        self.nrf = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        self.log_a = os.path.join(self.h.tmpdir, 'a.log')
        self.log_b = os.path.join(self.h.tmpdir, 'b.log')
        cfg_b = H.nrfwd_config('nrf-b.test', local=self.nrf.port)
        cfg_b['runtime']['accessLog'] = {'path': self.log_b, 'format': 'json', 'flushMs': 50}
        self.b = self.h.start_nrfwd(cfg_b, name='nrfwd-b')
        cfg_a = H.nrfwd_config(SELF, peers=[H.peer('nrf-b.test', self.b.port)])
        cfg_a['runtime']['accessLog'] = {'path': self.log_a, 'format': 'json', 'flushMs': 50}
        self.a = self.h.start_nrfwd(cfg_a, name='nrfwd-a')

    def tearDown(self):
        self.h.cleanup()

    def last(self, path, n=1):
        """Line @n of @path, once it is there."""
        got = read_lines(path, n)
        self.assertGreaterEqual(len(got), n, path)
        return json.loads(got[n - 1])

    def test_01_a_generated_id_goes_upstream(self):
        st, hd, _ = H.curl(self.a.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200)
        la, lb = self.last(self.log_a), self.last(self.log_b)
        self.assertEqual(la['outcome'], 'peer')
        self.assertEqual(lb['outcome'], 'local')
        self.assertRegex(la['request_id'], r'^[0-9a-f]{16}$')
        self.assertEqual(lb['request_id'], la['request_id'])  # the logs join
        (rq,) = H.stub_requests(self.nrf.port)
        self.assertEqual(hdr(rq, 'x-request-id'), la['request_id'])
        self.assertIsNone(la['span_id'])
        # a client's own id goes on unchanged, once
        H.stub_clear(self.nrf.port)
        st, _, _ = H.curl(self.a.url(PROFILE + ID_UDM1), headers=[('x-request-id', 'nf-17')])
        self.assertEqual(st, 200)
        (rq,) = H.stub_requests(self.nrf.port)
        self.assertEqual(hdr(rq, 'x-request-id'), 'nf-17')
        self.assertEqual(self.last(self.log_b, 2)['request_id'], 'nf-17')

    def test_02_traceparent_gets_a_new_parent_id_per_hop(self):
        trace = '4bf92f3577b34da6a3ce929d0e0e4736'
        tp = '00-%s-00f067aa0ba902b7-01' % trace
        st, _, _ = H.curl(self.a.url(PROFILE + ID_UDM1), headers=[('traceparent', tp)])
        self.assertEqual(st, 200)
        la, lb = self.last(self.log_a), self.last(self.log_b)
        self.assertEqual(la['request_id'], trace)
        self.assertEqual(lb['request_id'], trace)
        self.assertRegex(la['span_id'], r'^[0-9a-f]{16}$')
        self.assertRegex(lb['span_id'], r'^[0-9a-f]{16}$')
        self.assertNotEqual(la['span_id'], '00f067aa0ba902b7')
        self.assertNotEqual(lb['span_id'], la['span_id'])
        (rq,) = H.stub_requests(self.nrf.port)
        self.assertEqual(hdr(rq, 'traceparent'),
                         '00-%s-%s-01' % (trace, lb['span_id']))
        self.assertIsNone(hdr(rq, 'x-request-id'))  # the trace-id is the id
        # not a valid version-00 value: forwarded as it came, no span
        H.stub_clear(self.nrf.port)
        bad = '00-%s-0000000000000000-01' % trace
        st, _, _ = H.curl(self.a.url(PROFILE + ID_UDM1), headers=[('traceparent', bad)])
        self.assertEqual(st, 200)
        (rq,) = H.stub_requests(self.nrf.port)
        self.assertEqual(hdr(rq, 'traceparent'), bad)
        self.assertIsNone(self.last(self.log_a, 2)['span_id'])


class Sampled(Base):
    fmt = 'json'

    def test_01_sample_keeps_errors(self):
        # One in 1000 relayed answers, nrfwd's own answers always.
        self.h.procs.remove(self.fwd)
        self.fwd.stop()
        self.cfg['runtime']['accessLog']['sample'] = 1000
        self.fwd = self.h.start_nrfwd(self.cfg)
        for _ in range(3):
            H.curl(self.fwd.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'))
        via = '2.0 %s:%d' % (SELF, self.fwd.port)
        H.curl(self.fwd.url('/nnrf-disc/v1/nf-instances'), headers=[('via', via)])
        lines = self.lines(2)
        # The first relayed answer (counter 0) and the 508.
        self.assertEqual([x['status'] for x in lines], [200, 508])


if __name__ == '__main__':
    argv = H.parse_args(sys.argv)
    unittest.main(argv=argv, verbosity=2)
