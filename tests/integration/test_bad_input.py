#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Bad input at nrfwd's front door: clear HTTP/2 errors or ProblemDetails,
and nrfwd keeps serving other clients.

Usage: python3 tests/integration/test_bad_input.py [--build-dir BUILD]

A tiny raw HTTP/2 client (frames + literal HPACK, stdlib only) sends what
curl and h2load refuse to send.
"""

import json
import os
import socket
import struct
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

from h2frames import (  # noqa: E402,F401 (frame numbers and raw frames: one copy)
    ACK, COMPRESSION_ERROR, DATA, END_HEADERS, END_STREAM, FRAME_SIZE_ERROR, GOAWAY, HEADERS,
    PING, PREFACE, PROTOCOL_ERROR, REFUSED_STREAM, RST_STREAM, SETTINGS, WINDOW_UPDATE, frame,
    hpack_int, hpack_str)
DISC = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'


def header_block(path=DISC, authority='nrf-a.test', extra=()):
    # :method GET (static 2), :scheme http (static 6), then literals without
    # indexing: :path (name index 4), :authority (name index 1), others by name.
    b = b'\x82\x86' + hpack_int(4, 4, 0) + hpack_str(path) + hpack_int(1, 4, 0) + hpack_str(authority)
    for name, value in extra:
        b += b'\x00' + hpack_str(name) + hpack_str(value)
    return b


class Conn:
    def __init__(self, port, ack=True):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=5)
        self.buf = b''
        self.ack = ack

    def send(self, data):
        self.s.sendall(data)

    def start(self):
        self.send(PREFACE + frame(SETTINGS, 0, 0))

    def frames(self, until, timeout=5.0):
        """Read frames until until(frames) is true, the peer closes, or timeout."""
        got = []
        end = time.time() + timeout
        while time.time() < end:
            while len(self.buf) >= 9:
                ln = struct.unpack('>I', b'\0' + self.buf[:3])[0]
                if len(self.buf) < 9 + ln:
                    break
                ft, fl = self.buf[3], self.buf[4]
                sid = struct.unpack('>I', self.buf[5:9])[0] & 0x7fffffff
                got.append((ft, fl, sid, self.buf[9:9 + ln]))
                self.buf = self.buf[9 + ln:]
                if ft == SETTINGS and not fl & ACK and self.ack:
                    self.send(frame(SETTINGS, ACK, 0))
            if until(got):
                return got, False
            self.s.settimeout(max(0.05, end - time.time()))
            try:
                d = self.s.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                return got, True
            if not d:
                return got, True
            self.buf += d
        return got, False

    def close(self):
        self.s.close()


def goaway_code(frames):
    for ft, _, _, p in frames:
        if ft == GOAWAY:
            return struct.unpack('>I', p[4:8])[0]
    return None


class BadInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.h = H.Harness(prefix='nrfwd-bad-')
        cls.stub = cls.h.start_stub('local', 'stub-profiles-a.json')
        cls.slow = cls.h.start_stub('slow', 'stub-profiles-a.json', fault='delay:400')
        cfg = H.nrfwd_config('nrf-a.test', local=cls.stub.port,
                             limits={'maxConcurrentStreams': 16, 'maxHeaderBytes': 16384})
        cls.nrfwd = cls.h.start_nrfwd(cfg)
        big = H.nrfwd_config('nrf-big.test', local=cls.stub.port,
                             limits={'maxHeaderBytes': 65536})
        cls.big = cls.h.start_nrfwd(big, name='nrfwd-big')
        slow = H.nrfwd_config('nrf-slow.test', local=cls.slow.port,
                              limits={'maxConcurrentStreams': 16})
        cls.slowfwd = cls.h.start_nrfwd(slow, name='nrfwd-slow')

    @classmethod
    def tearDownClass(cls):
        cls.h.cleanup()

    def tearDown(self):
        # After every abuse, nrfwd still serves a well-behaved client.
        for p in (self.nrfwd, self.big, self.slowfwd):
            self.assertTrue(p.alive(), p.log())
        st, _, _ = H.curl(self.nrfwd.url(DISC))
        self.assertEqual(st, 200)

    def test_frame_on_the_wrong_stream_gets_goaway_protocol_error(self):
        c = Conn(self.nrfwd.port)
        c.start()
        c.send(frame(DATA, 0, 0, b'x'))  # DATA on stream 0 is a connection error
        got, closed = c.frames(lambda f: goaway_code(f) is not None)
        self.assertEqual(goaway_code(got), PROTOCOL_ERROR)
        c.close()

    def test_not_http2_at_all_is_closed(self):
        c = Conn(self.nrfwd.port)
        c.send(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        got, closed = c.frames(lambda f: False, timeout=3)
        self.assertTrue(closed or goaway_code(got) is not None)
        c.close()

    def test_oversized_frame_gets_goaway_frame_size_error(self):
        c = Conn(self.nrfwd.port)
        c.start()
        c.send(struct.pack('>I', 1 << 20)[1:] + bytes([HEADERS, END_HEADERS]) + struct.pack('>I', 1))
        got, _ = c.frames(lambda f: goaway_code(f) is not None)
        self.assertEqual(goaway_code(got), FRAME_SIZE_ERROR)
        c.close()

    def test_broken_hpack_gets_goaway_compression_error(self):
        c = Conn(self.nrfwd.port)
        c.start()
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, b'\xff\xff\xff\xff\xff\xff'))
        got, _ = c.frames(lambda f: goaway_code(f) is not None)
        self.assertEqual(goaway_code(got), COMPRESSION_ERROR)
        c.close()

    def test_streams_over_the_announced_limit_are_refused_and_the_rest_served(self):
        """Streams opened before the client acknowledged SETTINGS: the ones
        over MAX_CONCURRENT_STREAMS get RST_STREAM(REFUSED_STREAM), safe to
        retry; every other stream is answered."""
        c = Conn(self.slowfwd.port, ack=False)
        n = 40  # limit is 16; the stub holds each answer 400 ms
        c.send(PREFACE + frame(SETTINGS, 0, 0) +
               b''.join(frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, header_block())
                        for i in range(n)))
        ids = {2 * i + 1 for i in range(n)}

        def done(fs):
            return ids <= {sid for ft, _, sid, _ in fs if ft in (HEADERS, RST_STREAM)}
        got, _ = c.frames(done, timeout=10)
        answered = {sid for ft, _, sid, _ in got if ft == HEADERS}
        refused = {sid for ft, _, sid, _ in got if ft == RST_STREAM}
        self.assertEqual(answered | refused, ids)
        self.assertFalse(answered & refused)
        self.assertEqual(len(answered), 16)
        for ft, _, sid, p in got:
            if ft == RST_STREAM:
                self.assertEqual(struct.unpack('>I', p)[0], REFUSED_STREAM)
        self.assertIsNone(goaway_code(got))
        c.close()

    def test_ignoring_an_acknowledged_stream_limit_is_a_connection_error(self):
        c = Conn(self.slowfwd.port)
        c.start()
        c.frames(lambda f: any(ft == SETTINGS and fl & ACK for ft, fl, _, _ in f), timeout=2)
        c.send(b''.join(frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, header_block())
                        for i in range(40)))
        got, _ = c.frames(lambda f: goaway_code(f) is not None)
        self.assertEqual(goaway_code(got), PROTOCOL_ERROR)
        c.close()

    def test_nul_byte_in_via_is_refused_on_that_stream_only(self):
        c = Conn(self.nrfwd.port)
        c.start()
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1,
                     header_block(extra=[('via', '2.0 a\x00b:1')])))
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 3, header_block()))
        got, _ = c.frames(lambda f: {sid for ft, _, sid, _ in f if ft in (HEADERS, RST_STREAM)} >= {1, 3})
        kinds = {sid: ft for ft, _, sid, _ in got if ft in (HEADERS, RST_STREAM)}
        self.assertEqual(kinds.get(3), HEADERS)  # the good stream is served
        self.assertIn(kinds.get(1), (HEADERS, RST_STREAM))
        c.close()

    def test_unbalanced_comment_in_via_gives_400_problem(self):
        st, hd, body = H.curl(self.nrfwd.url(DISC), headers=['via: 2.0 nrf-x.test:1 (oops'])
        self.assertEqual(st, 400, body)
        self.assertEqual(json.loads(body)['cause'], 'INVALID_MSG_FORMAT')

    def test_via_of_1000_members_over_the_header_limit_gives_431(self):
        via = ', '.join('2.0 nrf-%04d.example.com:8080' % i for i in range(1000))
        st, _, body = H.curl(self.nrfwd.url(DISC), headers=['via: ' + via])
        self.assertEqual(st, 431, body)

    def test_via_of_1000_members_within_the_header_limit_hits_the_hop_limit(self):
        via = ', '.join('2.0 n%d.ex:1' % i for i in range(1000))
        st, _, body = H.curl(self.big.url(DISC), headers=['via: ' + via])
        self.assertEqual(st, 508, body)
        self.assertEqual(json.loads(body)['cause'], 'MAX_HOPS_REACHED')
        # ...and with our own identity at the end, a loop is reported instead.
        st, _, body = H.curl(self.big.url(DISC),
                             headers=['via: %s, 2.0 nrf-big.test:%d' % (via, self.big.port)])
        self.assertEqual(st, 508, body)
        self.assertEqual(json.loads(body)['cause'], 'LOOP_DETECTED')

    def test_non_ascii_via_is_handled(self):
        st, _, body = H.curl(self.nrfwd.url(DISC), headers=['via: 2.0 nrf-\xe9.test:1'.encode('latin-1').decode('latin-1')])
        self.assertIn(st, (200, 400), body)

    def test_connection_dropped_mid_request_leaves_nrfwd_serving(self):
        for _ in range(20):
            c = Conn(self.slowfwd.port)
            c.start()
            c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, header_block()))
            c.close()
        time.sleep(0.6)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
