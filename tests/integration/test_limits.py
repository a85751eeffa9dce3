#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Bounded memory and an answer for every limit (docs/architecture-datapath.md
"Memory", decision 0018), on kernel sockets.

Usage: python3 tests/integration/test_limits.py [--build-dir BUILD] [unittest args]

- Clients that stop reading while 1 MB answers stream to them: nrfwd's RSS
  stays under a stated bound, a well-behaved client is served meanwhile,
  and RSS comes back near its baseline once they close.
- Over runtime.limits.maxBufferedBytes: new requests get 503 NF_CONGESTION
  and the buffered bytes stay near the budget.
- A header list over maxHeaderBytes gets 431 and the connection goes on; an
  HPACK bomb gets 431 then GOAWAY(ENHANCE_YOUR_CALM) while a well-behaved
  client keeps its latency; a CONTINUATION flood gets GOAWAY; maxHeaderBytes
  works up to its maximum (1 MiB); a connection over maxConnections, every
  connection holding a stream, gets GOAWAY(NO_ERROR) with last-stream-id 0.
- An upstream that ignores flow control: every client stream gets an answer
  (the failure rule's, or the next candidate's), never a reset.

Raw HTTP/2 clients and the misbehaving upstream use Debian's python3-h2
(hpack, h2) for encoding only; the assertions are ours. The stream-count
limit (REFUSED_STREAM / GOAWAY) is tested in test_bad_input.py.
"""

import json
import os
import socket
import struct
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
import hpack  # noqa: E402
import h2.config  # noqa: E402
import h2.connection  # noqa: E402
import h2.events  # noqa: E402

from h2frames import (  # noqa: E402 (frame numbers and raw frames: one copy)
    ACK, CONTINUATION, DATA, END_HEADERS, END_STREAM, ENHANCE_YOUR_CALM, GOAWAY, HEADERS,
    NO_ERROR, PREFACE, RST_STREAM, SETTINGS, WINDOW_UPDATE, frame, hpack_int)
from h2frames import S_INITIAL_WINDOW_SIZE as SETTINGS_INITIAL_WINDOW_SIZE  # noqa: E402
SELF = 'nrf-a.test'
BIG = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF'      # ~1 MB with BIG_PROFILES
DISC = '/nnrf-disc/v1/nf-instances?target-nf-type=SMF'     # ~1.3 KB
BIG_PROFILES = 760                                          # extra AMF profiles
MIB = 1 << 20


def request_fields(path, extra=()):
    return [(':method', 'GET'), (':scheme', 'http'), (':authority', SELF),
            (':path', path)] + list(extra)


def header_frames(sid, block, end_stream=True, size=16384):
    """HEADERS + CONTINUATION frames carrying @block."""
    parts = [block[i:i + size] for i in range(0, len(block), size)] or [b'']
    out = b''
    for i, p in enumerate(parts):
        fl = END_HEADERS if i == len(parts) - 1 else 0
        if i == 0:
            out += frame(HEADERS, fl | (END_STREAM if end_stream else 0), sid, p)
        else:
            out += frame(CONTINUATION, fl, sid, p)
    return out


def rss_mib(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024.0
    return 0.0


class Raw:
    """One raw HTTP/2 client connection (frames in, frames out); it
    acknowledges the server's SETTINGS when it reads them (frames())."""

    def __init__(self, port, rcvbuf=None, host='127.0.0.1'):
        self.s = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET)
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.settimeout(5)
        self.s.connect((host, port))
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.buf = b''

    def send(self, data):
        self.s.sendall(data)

    def frames(self, until=lambda f: False, timeout=5.0):
        """Frames until until(frames), the end of the connection or the
        timeout: (frames, how it ended: None, 'eof' or 'reset')."""
        got = []
        end = time.monotonic() + timeout
        while True:
            while len(self.buf) >= 9:
                ln = int.from_bytes(self.buf[:3], 'big')
                if len(self.buf) < 9 + ln:
                    break
                ft, fl = self.buf[3], self.buf[4]
                sid = int.from_bytes(self.buf[5:9], 'big') & 0x7fffffff
                got.append((ft, fl, sid, self.buf[9:9 + ln]))
                self.buf = self.buf[9 + ln:]
                if ft == SETTINGS and not fl & ACK:
                    try:
                        self.send(frame(SETTINGS, ACK, 0))
                    except OSError:
                        pass
            if until(got):
                return got, None
            left = end - time.monotonic()
            if left <= 0:
                return got, None
            self.s.settimeout(left)
            try:
                d = self.s.recv(1 << 16)
            except socket.timeout:
                return got, None
            except ConnectionResetError:
                return got, 'reset'
            if not d:
                return got, 'eof'
            self.buf += d

    def status(self, payload):
        return dict((k.decode() if isinstance(k, bytes) else k,
                     v.decode() if isinstance(v, bytes) else v)
                    for k, v in self.dec.decode(payload)).get(':status')

    def close(self):
        self.s.close()


def goaway(frames):
    """(last-stream-id, error code, debug data) of the first GOAWAY, or None."""
    for ft, _, _, p in frames:
        if ft == GOAWAY:
            return (int.from_bytes(p[:4], 'big') & 0x7fffffff,
                    int.from_bytes(p[4:8], 'big'), p[8:])
    return None


class FlowBreaker:
    """An HTTP/2 server that ignores flow control: every request is answered
    200 with @body_len bytes sent at once, whatever the client's windows
    allow. h2 (python3-h2) reads the client and acknowledges its SETTINGS
    and PINGs; the DATA frames are written raw."""

    def __init__(self, body_len=MIB):
        self.body_len = body_len
        self.requests = 0
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(('127.0.0.1', 0))
        self.ls.listen(16)
        self.port = self.ls.getsockname()[1]
        self.socks = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                s, _ = self.ls.accept()
            except OSError:
                return
            self.socks.append(s)
            threading.Thread(target=self._serve, args=(s,), daemon=True).start()

    def _serve(self, s):
        conn = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=False, validate_inbound_headers=False))
        conn.initiate_connection()
        chunk = b'x' * 16384
        n = self.body_len
        try:
            s.sendall(conn.data_to_send())
            while True:
                d = s.recv(1 << 16)
                if not d:
                    return
                out = b''
                for ev in conn.receive_data(d):
                    if isinstance(ev, h2.events.RequestReceived):
                        self.requests += 1
                        conn.send_headers(ev.stream_id, [(':status', '200'),
                                                         ('content-type', 'application/json')])
                        out += conn.data_to_send()
                        out += b''.join(frame(DATA, END_STREAM if i + 16384 >= n else 0,
                                              ev.stream_id, chunk[:min(16384, n - i)])
                                        for i in range(0, n, 16384))
                out += conn.data_to_send()
                if out:
                    s.sendall(out)
        except Exception:  # noqa: BLE001 - the client went away
            pass
        finally:
            s.close()

    def close(self):
        self.ls.close()
        for s in self.socks:
            try:
                s.close()
            except OSError:
                pass


def open_non_readers(port, nconn, nstreams, path=BIG):
    """@nconn connections that each open @nstreams requests for @path and
    then read nothing more than the server's SETTINGS, which they
    acknowledge (a 4 KiB receive buffer, windows as large as allowed)."""
    conns = []
    for _ in range(nconn):
        c = Raw(port, rcvbuf=4096)
        data = (PREFACE + frame(SETTINGS, 0, 0, struct.pack('>HI', SETTINGS_INITIAL_WINDOW_SIZE,
                                                            (1 << 31) - 1)) +
                frame(WINDOW_UPDATE, 0, 0, struct.pack('>I', (1 << 31) - 1 - 65535)))
        for k in range(nstreams):
            data += header_frames(1 + 2 * k, c.enc.encode(request_fields(path)))
        c.send(data)
        c.frames(lambda f: any(ft == SETTINGS and not fl & ACK for ft, fl, _, _ in f),
                 timeout=2)
        conns.append(c)
    return conns


def buffered(m):
    return H.metric_value(m, 'nrfwd_buffered_bytes')


class Memory(unittest.TestCase):
    """Non-reading clients and the memory budget."""

    @classmethod
    def setUpClass(cls):
        cls.h = H.Harness(prefix='nrfwd-limits-')
        try:
            cls.start()
        except Exception:
            cls.h.cleanup(dump=True)  # setUpClass failing skips tearDownClass
            raise

    @classmethod
    def start(cls):
        prof = H.write_big_profiles(os.path.join(cls.h.tmpdir, 'big.json'),
                                    extra_amf=BIG_PROFILES)
        cls.stub = cls.h.start_stub('local', prof, extra=['--no-record'])
        # Long request timeouts: the held answers are measured, not timed out.
        slow = {'connectMs': 1000, 'perTryMs': 30000, 'requestMs': 30000}
        cls.fwd = cls.h.start_nrfwd(H.nrfwd_config(SELF, local=cls.stub.port, timeouts=slow),
                                    management=True)
        cls.tight = cls.h.start_nrfwd(
            H.nrfwd_config(SELF, local=cls.stub.port, timeouts=slow,
                           limits={'maxBufferedBytes': 16 * MIB}),
            name='nrfwd-tight', management=True)

    @classmethod
    def tearDownClass(cls):
        cls.h.cleanup()

    def warm(self, fwd):
        st, _, body = H.curl(fwd.url(BIG))
        self.assertEqual(st, 200)
        self.assertGreater(len(body), 900000)
        H.h2load(fwd.url(DISC), n=400, c=4, m=8)

    def test_non_reading_clients_of_1mb_answers_are_bounded_and_memory_comes_back(self):
        """9 connections x 64 streams of 1 MB answers, never read: each
        answer holds at most its 64 KiB window (the rest waits upstream), so
        RSS grows by less than 64 MiB (it was +580 MiB before answers were
        bounded, and +70 MiB with 64 KiB held answers but no budget for the
        rest), and is back within 6 MiB of its baseline 10 s after they close
        (pooled memory is given back at half per second, then trimmed)."""
        fwd = self.fwd
        self.warm(fwd)
        time.sleep(1.2)  # a trim tick after the warm-up
        base = rss_mib(fwd.pid)
        conns = open_non_readers(fwd.port, 9, 64)
        try:
            peak = 0.0
            for _ in range(6):
                time.sleep(0.4)
                peak = max(peak, rss_mib(fwd.pid))
            m = H.metrics(fwd)
            held = buffered(m)
            # a well-behaved client meanwhile: its whole 1 MB answer
            st, _, body = H.curl(fwd.url(BIG), timeout=10)
            self.assertEqual(st, 200)
            self.assertGreater(len(body), 900000)
        finally:
            for c in conns:
                c.close()
        sys.stderr.write('\nnon-readers: RSS %.1f MiB -> peak %.1f MiB, buffered %.1f MiB '
                         '(%s)\n' % (base, peak, held / MIB, {
                             dict(k[1]).get('kind'): int(v) for k, v in m.items()
                             if k[0] == 'nrfwd_buffered_bytes'}))
        self.assertLess(peak - base, 64.0)
        # 576 answers of at most 64 KiB each (plus chunk rounding) and their
        # request header blocks
        self.assertLess(held, 576 * (80 + 16) * 1024)
        self.assertGreater(held, 576 * 48 * 1024)  # they are really held
        after = None
        t0 = time.monotonic()
        for _ in range(20):
            time.sleep(0.5)
            after = rss_mib(fwd.pid)
            if after - base < 5.0:
                break
        m = H.metrics(fwd)
        sys.stderr.write('%.1f s after close: RSS %.1f MiB, buffered %d, pooled %d bytes\n' % (
            time.monotonic() - t0, after, buffered(m), H.metric_value(m, 'nrfwd_pooled_bytes')))
        self.assertLess(after - base, 6.0)
        self.assertLess(buffered(m), 1 * MIB)
        self.assertLess(H.metric_value(m, 'nrfwd_pooled_bytes'), 8 * MIB)
        self.assertTrue(fwd.alive())

    def test_over_the_budget_new_requests_get_503_nf_congestion_and_memory_stays_near_it(self):
        fwd = self.tight
        self.warm(fwd)
        m0 = H.metrics(fwd)
        budget = H.metric_value(m0, 'nrfwd_buffer_budget_bytes')
        self.assertEqual(budget, 16 * MIB)
        conns = open_non_readers(fwd.port, 9, 64)
        answers = []
        try:
            time.sleep(1.5)
            m = H.metrics(fwd)
            for _ in range(5):  # at the budget: served or refused, never hung
                st, _, body = H.curl(fwd.url(DISC))
                answers.append(st)
                self.assertIn(st, (200, 503), body)
                if st == 503:
                    self.assertEqual(json.loads(body)['cause'], 'NF_CONGESTION')
        finally:
            for c in conns:
                c.close()
        held = buffered(m)
        rejected = (H.metric_value(m, 'nrfwd_buffer_budget_rejections_total') -
                    H.metric_value(m0, 'nrfwd_buffer_budget_rejections_total'))
        sys.stderr.write('\nbudget 16 MiB: buffered %.1f MiB, %d requests refused, a good '
                         'client got %s\n' % (held / MIB, rejected, answers))
        self.assertGreater(rejected, 0)
        # Admission stops at the budget; what was admitted grows at most by
        # one answer window each of the last few admitted.
        self.assertLess(held, budget + 4 * MIB)
        self.assertGreater(H.metric_value(m, 'nrfwd_requests_total', outcome='overload'), 0)
        # Once they are gone, served again.
        deadline = time.monotonic() + 5
        while True:
            st, _, _ = H.curl(fwd.url(DISC))
            if st == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(st, 200)


    def test_the_budget_changes_live(self):
        fwd = self.tight
        st, _, doc = H.api(fwd, 'PATCH', '/nrf-configuration/v1/runtime',
                           {'limits': {'maxBufferedBytes': 8 * MIB}})
        self.assertEqual(st, 200, doc)
        try:
            deadline = time.monotonic() + 3
            while H.metric_value(H.metrics(fwd), 'nrfwd_buffer_budget_bytes') != 8 * MIB:
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.05)
            st, _, _ = H.curl(fwd.url(DISC))
            self.assertEqual(st, 200)
        finally:
            H.api(fwd, 'PATCH', '/nrf-configuration/v1/runtime',
                  {'limits': {'maxBufferedBytes': 16 * MIB}})


class Headers(unittest.TestCase):
    """Header lists over the limit, HPACK bombs, CONTINUATION floods."""

    @classmethod
    def setUpClass(cls):
        cls.h = H.Harness(prefix='nrfwd-hdrs-')
        try:
            cls.start()
        except Exception:
            cls.h.cleanup(dump=True)
            raise

    @classmethod
    def start(cls):
        cls.stub = cls.h.start_stub('local', 'stub-profiles-a.json', extra=['--no-record'])
        cls.fwd = cls.h.start_nrfwd(H.nrfwd_config(SELF, local=cls.stub.port), management=True)
        # The largest maxHeaderBytes; no local NRF, so a loop is answered by
        # nrfwd itself (nrfstub takes header blocks of 64 KiB at most).
        cls.wide = cls.h.start_nrfwd(H.nrfwd_config('nrf-w.test', limits={
            'maxHeaderBytes': 1048576}), name='nrfwd-wide')
        cls.few = cls.h.start_nrfwd(H.nrfwd_config(SELF, local=cls.stub.port, limits={
            'maxConnections': 2}), name='nrfwd-few', management=True)

    @classmethod
    def tearDownClass(cls):
        cls.h.cleanup()

    def tearDown(self):
        for p in (self.fwd, self.wide, self.few):
            self.assertTrue(p.alive(), p.log())

    def test_header_list_over_max_header_bytes_gets_431_and_the_connection_goes_on(self):
        st, hd, body = H.curl(self.fwd.url(DISC), headers=['x-big: ' + 'a' * 20000])
        self.assertEqual(st, 431, body)
        doc = json.loads(body)
        self.assertEqual(doc['status'], 431)
        self.assertEqual(doc['cause'], 'INVALID_MSG_FORMAT')
        self.assertEqual(hd['content-type'], ['application/problem+json'])
        # on one connection: the over-limit stream, then a good one
        c = Raw(self.fwd.port)
        c.send(PREFACE + frame(SETTINGS, 0, 0) +
               header_frames(1, c.enc.encode(request_fields(DISC, [('x-big', 'b' * 20000)]))) +
               header_frames(3, c.enc.encode(request_fields(DISC))))
        got, how = c.frames(lambda f: {sid for ft, fl, sid, _ in f
                                       if ft in (DATA, HEADERS) and fl & END_STREAM} >= {1, 3})
        st = {sid: c.status(p) for ft, _, sid, p in got if ft == HEADERS}
        self.assertEqual(st, {1: '431', 3: '200'})
        self.assertIsNone(goaway(got))
        c.close()

    def bomb(self, port, wait_close=True):
        """One connection, one HPACK bomb: a 4000-byte field indexed once,
        then referenced 16000 times (64 MB decoded from 20 KB)."""
        c = Raw(port)
        lit = b'\x40' + hpack_int(3, 7) + b'x-b' + hpack_int(4000, 7) + b'v' * 4000
        block = c.enc.encode(request_fields(DISC)) + lit + bytes([0x80 | 62]) * 16000
        c.send(PREFACE + frame(SETTINGS, 0, 0) + header_frames(1, block))
        got, how = c.frames(lambda f: goaway(f) is not None)
        if wait_close:  # nrfwd closes it (0.5 s at most after the GOAWAY)
            rest, how = c.frames(timeout=3)
            got += rest
        c.close()
        return got, how

    def test_hpack_bomb_is_answered_431_then_goaway_and_a_good_client_keeps_its_latency(self):
        got, how = self.bomb(self.fwd.port)
        heads = [(sid, fl) for ft, fl, sid, _ in got if ft == HEADERS]
        self.assertEqual([sid for sid, _ in heads], [1])
        status = Raw.__new__(Raw)
        status.dec = hpack.Decoder()
        self.assertEqual(status.status([p for ft, _, _, p in got if ft == HEADERS][0]), '431')
        self.assertEqual(goaway(got)[:2], (1, ENHANCE_YOUR_CALM))
        self.assertEqual(how, 'eof')  # closed after the GOAWAY, not reset
        # back to back, while a well-behaved client runs
        with tempfile.NamedTemporaryFile(prefix='h2load-', suffix='.log') as log:
            run = H.h2load_start(self.fwd.url(DISC), seconds=3, c=2, m=4, rps=100,
                                 extra=['--log-file=' + log.name])
            bombs = 0
            t_end = time.monotonic() + 2.5
            while time.monotonic() < t_end:
                got, _ = self.bomb(self.fwd.port, wait_close=False)
                self.assertEqual(goaway(got)[1], ENHANCE_YOUR_CALM)
                bombs += 1
            res = run.wait(60)
            with open(log.name) as f:
                lat = sorted(int(line.split()[2]) for line in f if line.strip())
        p99 = lat[int(len(lat) * 0.99) - 1] / 1000.0 if lat else 0
        sys.stderr.write('\nHPACK bombs: %d, good client: %d/%d ok, p99 %.1f ms\n' % (
            bombs, res.get('status_2xx', 0), res.get('done', 0), p99))
        self.assertGreater(bombs, 10)
        self.assertGreater(res.get('done', 0), 100)
        self.assertGreaterEqual(res.get('status_2xx', 0), 0.99 * res.get('done', 1))
        self.assertLess(p99, 50.0)

    def test_continuation_flood_gets_goaway(self):
        c = Raw(self.fwd.port)
        c.send(PREFACE + frame(SETTINGS, 0, 0) +
               frame(HEADERS, END_STREAM, 1, c.enc.encode(request_fields(DISC))) +
               b''.join(frame(CONTINUATION, 0, 1) for _ in range(1000)))
        got, how = c.frames(lambda f: goaway(f) is not None)
        # a client that has not read the GOAWAY yet goes on sending: nrfwd
        # reads and drops it, so its close stays a FIN after the GOAWAY
        # (a socket closed with unread input is reset by the kernel)
        c.send(b''.join(frame(CONTINUATION, 0, 1) for _ in range(100)))
        t0 = time.monotonic()
        rest, how = c.frames(timeout=3)
        took = time.monotonic() - t0
        c.close()
        self.assertEqual(goaway(got)[1], ENHANCE_YOUR_CALM)
        self.assertEqual(how, 'eof')
        # the FIN comes with the GOAWAY (the write side is shut while the
        # input is drained), not when the half second of lingering ends
        self.assertLess(took, 0.2)  # lingering: 0.5 s
        self.assertIn('CONTINUATION', self.fwd.log())

    def test_max_header_bytes_works_up_to_its_maximum(self):
        """maxHeaderBytes 1048576: a 900 KB header list (57 frames of 16 KiB)
        is processed (its Via names this NRF: 508); 1.2 MB gets 431 and the
        connection goes on."""
        own = '2.0 nrf-w.test:%d' % self.wide.port
        fields = [('x-f%03d' % i, 'z' * 9000) for i in range(100)] + [('via', own)]
        big = [('x-g%03d' % i, 'y' * 9000) for i in range(130)]
        enc = hpack.Encoder()  # encoded first: pure-Python HPACK takes seconds
        blocks = [enc.encode(request_fields(DISC, f)) for f in (fields, big, [('via', own)])]
        c = Raw(self.wide.port)
        c.enc = enc
        c.send(PREFACE + frame(SETTINGS, 0, 0) + header_frames(1, blocks[0]) +
               header_frames(3, blocks[1]) + header_frames(5, blocks[2]))
        got, how = c.frames(lambda f: {sid for ft, fl, sid, _ in f
                                       if ft in (DATA, HEADERS) and fl & END_STREAM} >= {1, 3, 5},
                            timeout=10)
        st = {sid: c.status(p) for ft, _, sid, p in got if ft == HEADERS}
        self.assertEqual(st, {1: '508', 3: '431', 5: '508'}, (got[-3:], how))
        c.close()

    def test_a_connection_over_max_connections_gets_goaway_with_last_stream_0(self):
        """With every connection at work (a request whose body is still
        arriving: an open stream); idle ones would give way instead
        (test_idle_eviction.py)."""
        m0 = H.metrics(self.few)
        held = [Raw(self.few.port), Raw(self.few.port)]
        for c in held:
            post = [(':method', 'POST'), (':scheme', 'http'), (':authority', SELF),
                    (':path', '/oauth2/token'), ('content-length', '10')]
            c.send(PREFACE + frame(SETTINGS, 0, 0) +
                   header_frames(1, c.enc.encode(post), end_stream=False))
            c.frames(lambda f: any(ft == SETTINGS for ft, _, _, _ in f), timeout=2)
        time.sleep(0.1)  # nrfwd has read their HEADERS
        c = Raw(self.few.port)
        c.send(PREFACE + frame(SETTINGS, 0, 0) +
               header_frames(1, c.enc.encode(request_fields(DISC))))
        got, _ = c.frames(lambda f: goaway(f) is not None)
        rest, how = c.frames(timeout=3)
        c.close()
        self.assertEqual(got[0][0], SETTINGS)  # the server preface first
        self.assertEqual(goaway(got)[:2], (0, NO_ERROR))
        self.assertNotIn(HEADERS, [ft for ft, _, _, _ in got + rest])  # nothing processed
        self.assertEqual(how, 'eof')
        m = H.metrics(self.few)
        self.assertEqual(H.metric_value(m, 'nrfwd_connections_refused_total') -
                         H.metric_value(m0, 'nrfwd_connections_refused_total'), 1)
        for r in ('handshake', 'idle'):
            self.assertEqual(H.metric_value(m, 'nrfwd_connections_evicted_total', reason=r),
                             H.metric_value(m0, 'nrfwd_connections_evicted_total', reason=r))
        for h in held:  # still there, told nothing
            got, how = h.frames(timeout=0.2)
            self.assertIsNone(how)
            self.assertIsNone(goaway(got))
            h.close()
        deadline = time.monotonic() + 3
        while True:  # the slots come back
            st, _, _ = H.curl(self.few.url(DISC))
            if st == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(st, 200)


class FlowControl(unittest.TestCase):
    """An upstream that sends more DATA than its window."""

    @classmethod
    def setUpClass(cls):
        cls.h = H.Harness(prefix='nrfwd-flow-')
        cls.fb = FlowBreaker()
        try:
            cls.start()
        except Exception:
            cls.h.cleanup(dump=True)
            cls.fb.close()
            raise

    @classmethod
    def start(cls):
        cls.good = cls.h.start_stub('nrf-g', 'stub-profiles-a.json', extra=['--no-record'])
        tmo = {'connectMs': 500, 'perTryMs': 3000, 'requestMs': 6000}
        # the breaker as the local NRF
        cls.local = cls.h.start_nrfwd(H.nrfwd_config(SELF, local=cls.fb.port, timeouts=tmo),
                                      name='nrfwd-local', management=True)
        # the breaker as the first candidate, a good peer after it
        cls.peers = cls.h.start_nrfwd(H.nrfwd_config(SELF, timeouts=tmo, peers=[
            H.peer('nrf-f.test', cls.fb.port, priority=1),
            H.peer('nrf-g.test', cls.good.port, priority=2)]), name='nrfwd-peers',
            management=True)

    @classmethod
    def tearDownClass(cls):
        cls.h.cleanup()
        cls.fb.close()

    def ten_streams(self, fwd):
        c = Raw(fwd.port)
        data = (PREFACE + frame(SETTINGS, 0, 0, struct.pack('>HI', SETTINGS_INITIAL_WINDOW_SIZE,
                                                            (1 << 31) - 1)) +
                frame(WINDOW_UPDATE, 0, 0, struct.pack('>I', (1 << 31) - 1 - 65535)))
        ids = [1 + 2 * k for k in range(10)]
        for sid in ids:
            data += header_frames(sid, c.enc.encode(request_fields(DISC)))
        c.send(data)
        got, _ = c.frames(lambda f: {sid for ft, fl, sid, _ in f
                                     if (ft in (DATA, HEADERS) and fl & END_STREAM) or
                                     ft == RST_STREAM} >= set(ids), timeout=15)
        c.close()
        heads = {sid: c.status(p) for ft, _, sid, p in got if ft == HEADERS}
        resets = [sid for ft, _, sid, _ in got if ft == RST_STREAM]
        return ids, heads, resets, got

    def test_every_stream_gets_the_failure_rules_answer_never_a_reset(self):
        ids, heads, resets, got = self.ten_streams(self.local)
        self.assertEqual(resets, [])
        self.assertEqual(sorted(heads), ids)
        self.assertEqual(set(heads.values()), {'503'})  # NRF_Local_Unavailable
        body = b''.join(p for ft, _, sid, p in got if ft == DATA and sid == 1)
        self.assertEqual(json.loads(body)['cause'], 'NF_SERVICE_FAILURE')
        self.assertIn('beyond its flow-control window', self.local.log())

    def test_the_next_candidate_answers_when_the_first_ignores_flow_control(self):
        ids, heads, resets, got = self.ten_streams(self.peers)
        self.assertEqual(resets, [])
        self.assertEqual(sorted(heads), ids)
        self.assertEqual(set(heads.values()), {'200'})
        m = H.metrics(self.peers)
        self.assertGreaterEqual(H.metric_value(m, 'nrfwd_try_failures_total',
                                               peer='nrf-f.test:%d' % self.fb.port,
                                               reason='reset'), 10)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main(verbosity=2)
