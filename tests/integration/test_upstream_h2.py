#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""nrfwd's upstream HTTP/2 leg against an upstream that speaks HTTP/2 in
every legal (and some illegal) way real servers do.

The upstream is written frame by frame in this test (h2up.RawUpstream: a
thread per connection, Debian's python3-hpack for Huffman-coded and
dynamic-table answers, raw bytes for the odd frames); nrfwd runs on kernel
sockets in front of it (tests/integration/nrfwd_harness.py), one nrfwd per
test; the client is a python3-h2 connection (h2up.Client). Each test
checks what the client gets and, where RFC 9113 demands something of an
HTTP/2 client, what nrfwd sent upstream: the preface, its SETTINGS, the
acknowledgements, stream ids, frame sizes, flow control (every DATA frame
of nrfwd is checked against the windows the upstream granted, in every
test), the error codes of its RST_STREAM and GOAWAY frames. Nothing here
depends on what the RFC leaves open (the size or timing of nrfwd's
WINDOW_UPDATEs, how it splits a body into frames within the limits,
whether it coalesces): where the RFC allows several reactions, each one is
accepted and the one nrfwd gives today is named in the comment.

What the client must get when an upstream fails is docs/failures.md:
the upstream here is the local NRF, so a failed local try is
`NRF_Local_Unavailable` (503, cause NF_SERVICE_FAILURE, Retry-After: 1);
an answer that breaks off after its relay began is its status then
RST_STREAM(INTERNAL_ERROR); a stream refused (REFUSED_STREAM, above a
GOAWAY's last-stream-id) or, for GET, lost with its connection is sent
once more on a fresh connection first.

Run: python3 tests/integration/test_upstream_h2.py --build-dir build [Class.test]
NRFWD_TEST_LOGS=1 prints the processes' logs.
"""

import hashlib
import json
import os
import struct
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402
import h2up as U  # noqa: E402
from h2up import (ACK, CONTINUATION, DATA, END_HEADERS, END_STREAM, GOAWAY,  # noqa: E402
                  HEADERS, PING, PRIORITY, RST_STREAM, SETTINGS, WINDOW_UPDATE,
                  S_ENABLE_PUSH, S_INITIAL_WINDOW_SIZE, S_MAX_CONCURRENT_STREAMS,
                  S_MAX_FRAME_SIZE, frame, lit)

SELF = 'nrf-a.test'
PROFILE = '/nnrf-nfm/v1/nf-instances/'
SUBS = '/nnrf-nfm/v1/subscriptions'
TMO = {'connectMs': 500, 'perTryMs': 1500, 'requestMs': 4000}
JSON_CT = ('content-type', 'application/json')


def sha(b):
    return hashlib.sha256(bytes(b)).hexdigest()[:16]


def body_of(n, seed=0):
    """@n bytes that are not one repeated byte (a shifted or lost piece shows)."""
    blk = hashlib.sha256(b'%d' % seed).digest() * 2048  # 64 KiB
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(blk[:32] + struct.pack('>I', i)).digest() + blk[:4064]
        i += 1
    return bytes(out[:n])


class UpstreamH2(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-up-')
        self.ups = []
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()
        for u in self.ups:
            u.close()
        self.h.cleanup(dump=bool(os.environ.get('NRFWD_TEST_LOGS')))

    # -- helpers -------------------------------------------------------------

    def upstream(self, name='local', **kw):
        u = U.RawUpstream(name, **kw)
        self.ups.append(u)
        return u

    def nrfwd(self, local, peers=(), limits=None, timeouts=None):
        cfg = H.nrfwd_config(SELF, local=local.port if local else None,
                             peers=[H.peer('%s.test' % u.name, u.port, priority=i + 1)
                                    for i, u in enumerate(peers)],
                             timeouts=dict(TMO, **(timeouts or {})), limits=limits)
        self.fwd = self.h.start_nrfwd(cfg)
        if local is not None:
            local.ready()
        return self.fwd

    def client(self):
        c = U.Client(self.fwd.port, authority='%s:%d' % (SELF, self.fwd.port))
        self.clients.append(c)
        return c

    def assertNoViolations(self, *ups):
        for u in ups or self.ups:
            self.assertEqual(u.violations(), [],
                             '%s: nrfwd broke RFC 9113 towards the upstream' % u.name)

    def assertAnswered(self, r, status, body=None, what=''):
        self.assertTrue(r.done, '%s: no answer within the time (%r)' % (what, r))
        self.assertIsNone(r.reset, '%s: reset instead of an answer (%r)' % (what, r))
        self.assertEqual(r.finals, 1, '%s: not exactly one final answer (%r)' % (what, r))
        self.assertEqual(r.status, status, '%s: status (%r, body %r)' %
                         (what, r, bytes(r.body[:300])))
        if body is not None:
            self.assertEqual(len(r.body), len(body), '%s: body length' % what)
            self.assertEqual(sha(r.body), sha(body), '%s: body differs' % what)

    def assertLocalUnavailable(self, r, what=''):
        """docs/failures.md: a failed local try (no peer) answers
        NRF_Local_Unavailable: 503 NF_SERVICE_FAILURE, Retry-After: 1."""
        self.assertAnswered(r, 503, what=what)
        doc = json.loads(bytes(r.body))
        self.assertEqual(doc.get('cause'), 'NF_SERVICE_FAILURE', what)
        self.assertEqual(r.header('retry-after'), '1', what)

    def still_serves(self, up, what):
        """nrfwd answers a plain request through @up afterwards. A local NRF
        whose connection nrfwd just closed is never held down (it answered
        its PING), so the next request needs no wait."""
        c = self.client()
        r = c.get(PROFILE + 'after-' + what.replace(' ', '-'))
        self.assertAnswered(r, 200, what='a request after ' + what)

    # ======================================================================
    # 1. Answers in every legal shape

    def test_01_padded_headers_and_data(self):
        """PADDED on HEADERS (with and without PRIORITY) and on DATA: the
        padding is not part of the answer (RFC 9113 §6.1, §6.2)."""
        body = body_of(3000, 1)

        def answer(conn, st):
            conn.headers(st.sid, [(':status', '200'), JSON_CT, ('x-case', 'padded')], pad=37,
                         priority=(0, False, 200) if 'prio' in st.path else None)
            conn.data(st.sid, body[:1000], pad=0)       # PADDED with a pad length of 0
            conn.data(st.sid, body[1000:], pad=255, end=True)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        for path in ('padded', 'padded-prio'):
            r = c.get(PROFILE + path)
            self.assertAnswered(r, 200, body, path)
            self.assertEqual(r.header('x-case'), 'padded', path)
            self.assertEqual(r.header('content-type'), 'application/json', path)
        self.assertNoViolations()

    def test_01b_end_stream_on_headers_and_on_an_empty_data_frame(self):
        """END_STREAM on the HEADERS frame (a 204, no DATA at all), and a
        body whose END_STREAM comes on an empty DATA frame after it."""
        def answer(conn, st):
            if '204' in st.path:
                conn.headers(st.sid, [(':status', '204'), ('x-case', 'empty')], end=True)
            else:
                conn.headers(st.sid, [(':status', '200'), JSON_CT])
                conn.send(frame(DATA, 0, st.sid, b'{"a":'), frame(DATA, 0, st.sid, b'1}'),
                          frame(DATA, END_STREAM, st.sid, b''))
                conn._close_stream(st.sid)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        r = c.get(PROFILE + '204')
        self.assertAnswered(r, 204, b'', '204')
        self.assertEqual(r.header('x-case'), 'empty')
        r = c.get(PROFILE + 'empty-end')
        self.assertAnswered(r, 200, b'{"a":1}', 'empty END_STREAM DATA')
        self.assertNoViolations()

    def test_02_priority_flag_and_priority_frames(self):
        """HEADERS with the PRIORITY flag (exclusive, on stream 0), and
        PRIORITY frames on the open stream and on idle ones: only ordering
        hints (RFC 9113 §5.3.2, §6.3), never an error."""
        def answer(conn, st):
            conn.send(frame(PRIORITY, 0, st.sid, struct.pack('>IB', 0, 10)),
                      frame(PRIORITY, 0, st.sid + 100, struct.pack('>IB', 0x80000000, 3)))
            conn.headers(st.sid, [(':status', '200'), JSON_CT], priority=(0, True, 255))
            conn.data(st.sid, b'{"prio":1}', end=True)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        for i in range(2):
            r = c.get(PROFILE + 'prio-%d' % i)
            self.assertAnswered(r, 200, b'{"prio":1}', 'priority %d' % i)
        conn = up.streams()[-1][0]
        self.assertEqual([f for f in conn.frames if f.type in (GOAWAY, RST_STREAM)], [],
                         'nrfwd reacted to PRIORITY as if it were an error')
        self.assertNoViolations()

    def test_03_header_block_in_headers_and_two_continuations(self):
        """An answer's header block in HEADERS + 2 CONTINUATION frames
        (RFC 9113 §6.10), fields cut anywhere, with a 6000-byte field."""
        big = 'v' * 6000

        def answer(conn, st):
            blk = conn.encode([(':status', '201'), JSON_CT, ('x-big', big),
                               ('location', 'http://up.test/x/1'), ('x-last', 'end')])
            n = len(blk)
            conn.headers(st.sid, blk, split=[n // 3 - 1, n // 3 + 5])
            conn.data(st.sid, b'{"cont":2}', end=True)
        up = self.upstream(on_request=answer)
        self.nrfwd(up, limits={'maxHeaderBytes': 65536})
        c = self.client()
        for i in range(2):
            r = c.get(PROFILE + 'cont-%d' % i)
            self.assertAnswered(r, 201, b'{"cont":2}', 'continuation %d' % i)
            self.assertEqual(r.header('x-big'), big)
            self.assertEqual(r.header('location'), 'http://up.test/x/1')
            self.assertEqual(r.header('x-last'), 'end')
        conn = up.streams()[-1][0]
        self.assertEqual(conn.all(GOAWAY) + conn.all(RST_STREAM), [])
        self.assertNoViolations()

    def test_04b_same_block_bytes_after_the_table_changed(self):
        """The same header block bytes mean other fields once the dynamic
        table changed in between (RFC 7541 §2.3.3): nrfwd, which keeps the
        last block that left the table as it was decoded (decision 0039),
        must decode each answer with the table of its own moment. Blocks by
        hand: x-v inserted ("one"), referenced twice by index 62, replaced
        ("two", inserted again: index 62 is now "two"), and the very same
        referencing block again."""
        def insert(v):
            return (b'\x88' + b'\x40' + bytes([3]) + b'x-v' + bytes([len(v)]) + v +
                    b'\x0f\x0d' + bytes([2]) + b'10')   # content-length 10, not indexed
        ref = b'\x88\xbe\x0f\x0d\x02' + b'10'
        plan = [insert(b'one'), ref, ref, insert(b'two'), ref, ref]
        want = ['one', 'one', 'one', 'two', 'two', 'two']

        def answer(conn, st):
            k = len([1 for _, s in up.streams() if 'k' in s.user])
            st.user['k'] = k
            conn.headers(st.sid, plan[k])
            conn.data(st.sid, b'{"k":%04d}' % k, end=True)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        for k in range(len(plan)):
            r = c.get(PROFILE + 'tbl-%d' % k)
            self.assertAnswered(r, 200, b'{"k":%04d}' % k, 'answer %d' % k)
            self.assertEqual(r.header('x-v'), want[k], 'answer %d' % k)
        self.assertNoViolations()

    def test_04c_empty_block_after_a_block_cut_short_by_a_malformed_field(self):
        """An empty header block has no field (RFC 7541 §2.1): an answer
        without :status is malformed (RFC 9113 §8.1.1), a failed try
        (503 NF_SERVICE_FAILURE). Before it, a plain table-neutral answer
        (200, kept whole by nrfwd, decision 0039), then a block that leaves
        the table as it was but whose second field is malformed (an
        upper-case name): nrfwd began keeping its fields and stopped at the
        bad one; the empty block must not be taken for a kept block (it was:
        the half-kept `:status 200` replayed with the first answer's end of
        checks, a 200 with an empty body). Then a plain answer: nrfwd
        serves on."""
        plan = [b'\x88\x0f\x0d\x010', b'\x88' + b'\x00\x08Bad-Name\x01x', b'']

        def answer(conn, st):
            k = len([1 for _, s in up.streams() if 'k' in s.user])
            st.user['k'] = k
            if k < len(plan):
                conn.headers(st.sid, plan[k], end=True)
            else:
                U.default_answer(conn, st)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        self.assertAnswered(c.get(PROFILE + 'kept'), 200, b'', 'table-neutral answer')
        self.assertLocalUnavailable(c.get(PROFILE + 'bad-field'), 'malformed field')
        self.assertLocalUnavailable(c.get(PROFILE + 'empty-block'), 'empty header block')
        self.still_serves(up, 'an empty header block')
        self.assertNoViolations()

    def test_04_huffman_and_dynamic_table_across_answers(self):
        """Eight answers on one upstream connection from one HPACK encoder:
        Huffman-coded literals, fields indexed in the dynamic table and
        referenced by later answers, dynamic table size updates at the start
        of a block (0 then 4096, which empties the table; later 200, which
        evicts) (RFC 7541 §4.2, §6.3). Each answer reaches the client with
        its own fields and body."""
        seen = []

        def answer(conn, st):
            k = len(seen)
            seen.append((conn.idx, st.sid))
            if k == 3:
                conn.enc.header_table_size = 0     # two updates at the block start
                conn.enc.header_table_size = 4096
            if k == 6:
                conn.enc.header_table_size = 200
            fields = [(':status', '200'), JSON_CT, ('server', 'raw-upstream/1.0'),
                      ('x-nf-set', 'set2.nrfset.5gc.mnc001.mcc001'),
                      ('x-answer', 'answer-%d' % k), ('cache-control', 'max-age=%d' % (k % 2))]
            blk = conn.encode(fields)
            st.user['block'] = blk
            conn.headers(st.sid, blk)
            conn.data(st.sid, b'{"k":%d}' % k, end=True)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        for k in range(8):
            r = c.get(PROFILE + 'hpack-%d' % k)
            self.assertAnswered(r, 200, b'{"k":%d}' % k, 'answer %d' % k)
            self.assertEqual(r.header('x-answer'), 'answer-%d' % k)
            self.assertEqual(r.header('x-nf-set'), 'set2.nrfset.5gc.mnc001.mcc001')
            self.assertEqual(r.header('server'), 'raw-upstream/1.0')
            self.assertEqual(r.header('cache-control'), 'max-age=%d' % (k % 2))
        self.assertEqual(len({ci for ci, _ in seen}), 1,
                         'the answers did not share one upstream connection: %r' % seen)
        blocks = [st.user['block'] for _, st in up.streams() if 'block' in st.user]
        # the test bites: answers 1-2 reuse table entries (shorter blocks),
        # 3 and 6 start with size updates (001xxxxx)
        self.assertLess(len(blocks[1]), len(blocks[0]) - 40)
        self.assertEqual(blocks[3][:2], b'\x20\x3f', 'size update 0 then 4096 expected')
        self.assertEqual(blocks[6][0] & 0xe0, 0x20)
        self.assertNoViolations()

    def test_05_answer_with_trailers(self):
        """An answer with trailers (HEADERS, DATA, HEADERS + END_STREAM): the
        client gets the status, fields and body, once. The trailer fields
        themselves are not relayed by nrfwd today (docs/ promise nothing):
        not asserted either way, but never merged into the header section
        (RFC 9110 §6.5 keeps them apart)."""
        def answer(conn, st):
            conn.answer(st.sid, 200, [JSON_CT, ('x-head', 'h')], b'{"trailers":1}',
                        trailers=[('x-checksum', 'abc123'), ('x-t', '1')])
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        for i in range(2):
            r = c.get(PROFILE + 'trailers-%d' % i)
            self.assertAnswered(r, 200, b'{"trailers":1}', 'trailers')
            self.assertEqual(r.header('content-type'), 'application/json')
            self.assertEqual(r.header('x-head'), 'h')
            self.assertIsNone(r.header('x-checksum'), 'a trailer field in the header section')
            self.assertIn(r.trailers, ([], [('x-checksum', 'abc123'), ('x-t', '1')]))
        self.assertNoViolations()

    def test_06_interim_100_and_103_before_the_final_answer(self):
        """1xx answers before the final one (RFC 9113 §8.1): the client gets
        the final status, fields and body, exactly once. nrfwd does not
        relay interim answers today (not asserted: relaying a 103 would be
        legal too)."""
        def answer(conn, st):
            conn.headers(st.sid, [(':status', '100')])
            conn.headers(st.sid, [(':status', '103'), ('link', '</a.css>; rel=preload')])
            conn.headers(st.sid, [(':status', '200'), JSON_CT, ('x-final', 'yes')])
            conn.data(st.sid, b'{"interim":2}', end=True)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        r = c.get(PROFILE + 'interim')
        self.assertAnswered(r, 200, b'{"interim":2}', 'interim')
        self.assertEqual(r.header('x-final'), 'yes')
        self.assertTrue(all(s in (100, 103) for s, _ in r.interim), r.interim)
        self.assertNoViolations()

    # ======================================================================
    # 2. The upstream's SETTINGS

    def post_body(self, up, n=200 * 1024, headers=(), seed=2, timeout=10.0):
        """POST @n bytes through nrfwd to @up; returns (Result, upstream Stream)."""
        body = body_of(n, seed)
        c = self.client()
        sid = c.request('POST', SUBS, [JSON_CT] + list(headers), body)
        c.run(lambda: c.results[sid].done, timeout)
        r = c.results[sid]
        self.assertAnswered(r, 200, what='POST of %d bytes' % n)
        seen = up.streams(SUBS)
        self.assertEqual(len(seen), 1, 'the POST reached the upstream %d times' % len(seen))
        conn, st = seen[0]
        self.assertTrue(st.ended, 'the body never ended upstream')
        self.assertEqual(len(st.body), n, 'body length upstream')
        self.assertEqual(sha(st.body), sha(body), 'the body upstream is not the client\'s')
        return r, conn, st

    def test_07_max_frame_size_16384_and_larger(self):
        """SETTINGS_MAX_FRAME_SIZE: with 16384 (the default, sent explicitly)
        no frame of nrfwd is larger — a 30 KB request header block goes in
        HEADERS + CONTINUATION, a 200 KB body in several DATA frames; with
        1 MiB frames may be larger but never above it. The body and the
        large field arrive intact either way (RFC 9113 §4.2, §6.5.2)."""
        big = 'h' * 30000
        for mfs in (16384, 1 << 20):
            with self.subTest(max_frame_size=mfs):
                up = self.upstream('mfs%d' % mfs,
                                   settings=[(S_MAX_FRAME_SIZE, mfs),
                                             (S_INITIAL_WINDOW_SIZE, 1 << 20)])
                self.nrfwd(up, limits={'maxHeaderBytes': 65536})
                r, conn, st = self.post_body(up, headers=[('x-big', big)], seed=mfs)
                self.assertEqual(st.field('x-big'), big)
                frames = [f for f in conn.frames]
                self.assertTrue(all(len(f.payload) <= mfs for f in frames),
                                'a frame over %d: %r' % (mfs, max(frames, key=lambda f:
                                                                  len(f.payload))))
                if mfs == 16384:
                    self.assertTrue(any(f.type == CONTINUATION and f.sid == st.sid
                                        for f in frames),
                                    'a 30 KB header block needs CONTINUATION at 16384')
                    self.assertGreater(len(st.data_frames), 200 * 1024 // 16384)
                self.assertNoViolations(up)
                self.h.cleanup()

    def test_08_small_stream_window_body_sent_in_pieces(self):
        """SETTINGS_INITIAL_WINDOW_SIZE 1000: a 200 KB POST body goes up in
        pieces of at most 1000 bytes, each after the upstream's stream
        WINDOW_UPDATE (the upstream credits when the window is used up or
        nrfwd paused 30 ms; the connection window is credited at once).
        Never beyond the window (RFC 9113 §6.9.1), the body intact."""
        def on_data(conn, st, f):
            conn.grant(0, len(f.payload))
            credit(conn, st)

        def credit(conn, st):
            if st.ended or st.closed:
                return
            if st.recv_window <= 0:
                conn.grant(st.sid, 1000 - st.recv_window)
            else:
                mark = len(st.data_frames)
                conn.later(0.03, lambda: len(st.data_frames) == mark and not st.ended and
                           st.recv_window < 1000 and conn.grant(st.sid, 1000 - st.recv_window))
        up = self.upstream(settings=[(S_INITIAL_WINDOW_SIZE, 1000)], on_data=on_data)
        self.nrfwd(up)
        r, conn, st = self.post_body(up, timeout=20)
        stream_wu = [inc for sid, inc in conn.sent_wu if sid == st.sid]
        self.assertGreaterEqual(len(stream_wu), 200 * 1024 // 1000 - 1,
                                'nrfwd did not wait for the stream window')
        self.assertTrue(all(n <= 1000 for n in st.data_frames), st.data_frames)
        self.assertNoViolations()

    def test_08b_small_window_on_a_connection_opened_for_the_request(self):
        """The same 200 KB body forwarded to a peer (the local NRF answers
        404) whose connection nrfwd opens for this request and may use
        before it has read the peer's SETTINGS_INITIAL_WINDOW_SIZE 1000: up
        to 65 535 bytes may go before nrfwd acknowledges the SETTINGS, whose
        decrease then applies to the open stream (RFC 9113 §6.9.2: the
        window may go negative), after which at most 1000 bytes are
        outstanding (the peer credits each frame as it consumes it). The
        body arrives intact at the peer."""
        body = body_of(200 * 1024, 8)

        def local_404(conn, st):
            conn.answer(st.sid, 404, [('content-type', 'application/problem+json')],
                        b'{"status":404}')

        def on_data(conn, st, f):
            # a server that credits what it consumed, frame by frame
            conn.grant(0, len(f.payload))
            if not st.ended:
                conn.grant(st.sid, len(f.payload))
        local = self.upstream('local', on_request=local_404)
        peer = self.upstream('p1', settings=[(S_INITIAL_WINDOW_SIZE, 1000)], on_data=on_data)
        self.nrfwd(local, peers=[peer])
        c = self.client()
        sid = c.request('POST', SUBS, [JSON_CT], body)
        c.run(lambda: c.results[sid].done, 20)
        self.assertAnswered(c.results[sid], 200, what='POST forwarded to p1')
        self.assertIn(b'"up":"p1"', bytes(c.results[sid].body))
        (_, st), = peer.streams(SUBS)
        self.assertEqual(sha(st.body), sha(body), 'the body at the peer is not the client\'s')
        self.assertNoViolations()

    def test_09_connection_window_body_sent_in_pieces(self):
        """The connection window (65 535, never raised at start) limits a
        200 KB POST whose stream window is 1 MiB: the upstream credits the
        connection 16 KiB at a time, only when nrfwd used it up or paused
        30 ms. Never beyond it, the body intact."""
        def on_data(conn, st, f):
            if conn.recv_conn <= 0:
                conn.grant(0, 16384)
                return
            mark = len(st.data_frames)
            conn.later(0.03, lambda: len(st.data_frames) == mark and not st.ended and
                       conn.recv_conn < 16384 and conn.grant(0, 16384))
        up = self.upstream(settings=[(S_INITIAL_WINDOW_SIZE, 1 << 20)], on_data=on_data)
        self.nrfwd(up)
        r, conn, st = self.post_body(up, timeout=20)
        conn_wu = [inc for sid, inc in conn.sent_wu if sid == 0]
        self.assertGreaterEqual(len(conn_wu), (200 * 1024 - 65535) // 16384,
                                'nrfwd did not wait for the connection window')
        self.assertNoViolations()

    def test_10_initial_window_size_changed_mid_stream(self):
        """SETTINGS_INITIAL_WINDOW_SIZE changed while a body is under way
        (RFC 9113 §6.9.2): 1000 → 21000 gives the open stream 20 000 more
        bytes without a WINDOW_UPDATE, which nrfwd sends; 21000 → 1000 makes
        its window negative (-20 000): nothing may be sent until a
        WINDOW_UPDATE of 20 500 brings it to 500, then exactly up to 500.
        Then the window is opened and the body ends intact."""
        steps = []

        def on_data(conn, st, f):
            conn.grant(0, len(f.payload))
            got = len(st.body)
            if got == 1000 and 'up' not in steps:
                steps.append('up')
                conn.send_settings((S_INITIAL_WINDOW_SIZE, 21000))
            elif got == 21000 and 'down' not in steps:
                steps.append('down')
                conn.send_settings((S_INITIAL_WINDOW_SIZE, 1000))
                # once acknowledged the window is 0 - 20000: give 20 500
                conn.when(lambda: conn.acks_received >= 3,
                          lambda: (steps.append('wu'), conn.grant(st.sid, 20500)))
            elif got == 21500 and 'open' not in steps:
                steps.append('open')
                # nothing more may come: the window is 0; open it after 0.2 s
                conn.later(0.2, lambda: (steps.append('opened:%d' % len(st.body)),
                                         conn.grant(st.sid, 1 << 20)))
        up = self.upstream(settings=[(S_INITIAL_WINDOW_SIZE, 1000)], on_data=on_data)
        self.nrfwd(up)
        r, conn, st = self.post_body(up, n=100 * 1024, timeout=10)
        self.assertEqual(steps[:4], ['up', 'down', 'wu', 'open'], steps)
        self.assertEqual(steps[4], 'opened:21500',
                         'nrfwd sent past the window left by the decrease: %r' % steps)
        self.assertNoViolations()

    def test_11_max_concurrent_streams_1(self):
        """SETTINGS_MAX_CONCURRENT_STREAMS 1 and 8 requests at once from
        the client: once nrfwd acknowledged the upstream's SETTINGS, never
        more than one open stream on an upstream connection (RFC 9113
        §5.1.2), every request answered once. Each answer comes 40 ms after
        its request, so they would overlap. Before the ACK the limit is not
        known yet (§6.5.2: no limit) — nrfwd opens a second connection for
        the waiting requests and sends them at once on it, before reading
        the upstream's SETTINGS (legal; counted apart, and reported)."""
        def answer(conn, st):
            conn.later(0.04, lambda: U.default_answer(conn, st))
        up = self.upstream(settings=[(S_MAX_CONCURRENT_STREAMS, 1)], on_request=answer)
        self.nrfwd(up)
        c = self.client()
        sids = [c.request('GET', PROFILE + 'mcs-%d' % i) for i in range(8)]
        self.assertTrue(c.run(timeout=8), [c.results[s] for s in sids])
        for s in sids:
            self.assertAnswered(c.results[s], 200, what='stream %d' % s)
        with up.lock:
            conns = list(up.conns)
        self.assertEqual(sum(len(cn.streams) for cn in conns), 8)
        for cn in conns:
            self.assertLessEqual(cn.max_open, 1, 'connection %d had %d streams open at once '
                                 'after acknowledging SETTINGS_MAX_CONCURRENT_STREAMS 1'
                                 % (cn.idx, cn.max_open))
        early = max(cn.max_open_early for cn in conns)
        if early > 1:
            sys.stderr.write('\n  note: %d streams sent on a new upstream connection before '
                             'its SETTINGS were read (%d connections)\n' % (early, len(conns)))
        self.assertNoViolations()

    def test_11b_max_concurrent_streams_1_enforced_like_nghttp2(self):
        """The same with an upstream that enforces its limit the way an
        nghttp2 server does (nghttpd -m 1 behaves the same): a stream over
        SETTINGS_MAX_CONCURRENT_STREAMS is refused (RST_STREAM(REFUSED_STREAM),
        RFC 9113 §5.1.2, §8.7), also before nrfwd acknowledged the SETTINGS.

        Every request is answered 200: the upstream is healthy. nrfwd sends
        no HEADERS on a new connection before the upstream's SETTINGS, and
        never more open streams than they allow (decision 0039); before
        that, it burst the waiting requests onto a new connection and some
        ended 503 NF_SERVICE_FAILURE after their one retry was refused too.
        Each request reaches the upstream once or twice (a refusal is sent
        again once)."""
        def on_headers(conn, st):
            if conn.open_streams() > 1:
                st.user['refused'] = True
                conn.send(U.rst(st.sid, U.REFUSED_STREAM))
                conn._close_stream(st.sid)

        def on_request(conn, st):
            if not st.user.get('refused'):
                conn.later(0.04, lambda: U.default_answer(conn, st))
        up = self.upstream(settings=[(S_MAX_CONCURRENT_STREAMS, 1)], on_request=on_request,
                           on_headers=on_headers)
        self.nrfwd(up)
        c = self.client()
        sids = [c.request('GET', PROFILE + 'mcs-%d' % i) for i in range(8)]
        self.assertTrue(c.run(timeout=8), [c.results[s] for s in sids])
        refused = sum(1 for _, st in up.streams() if st.user.get('refused'))
        for i, s in enumerate(sids):
            r = c.results[s]
            what = 'stream %d (%d refusals upstream)' % (s, refused)
            self.assertAnswered(r, 200, what=what)
            self.assertLessEqual(len(up.streams(PROFILE + 'mcs-%d' % i)), 2,
                                 'a refused stream is sent again once')
        self.assertNoViolations()

    # ======================================================================
    # 3. nrfwd's own frames

    def test_12_preface_settings_acks_ping_and_stream_ids(self):
        """What nrfwd sends on an upstream connection (RFC 9113 §3.4, §6.5,
        §6.7, §5.1.1): the client preface, then a SETTINGS frame (not ACK)
        with SETTINGS_ENABLE_PUSH 0; one SETTINGS ACK for each SETTINGS of
        the upstream (also one sent later, with a setting id nrfwd does not
        know, §6.5.2); a PING ACK with the same 8 bytes
        for each PING of the upstream; stream ids odd and increasing. Frame
        types it does not know (0xfa, 0x0b) and PRIORITY frames from the
        upstream are ignored: no error, the next answers as usual."""
        def answer(conn, st):
            conn.send(frame(0xfa, 0x5f, 0, b'unknown frame type on stream 0'),
                      frame(0x0b, 0, st.sid, b'\x01\x02\x03'),
                      frame(PRIORITY, 0, st.sid, struct.pack('>IB', 0, 7)))
            U.default_answer(conn, st)
        # NO_RFC7540_PRIORITIES (RFC 9113 §5.3.2) only in the first SETTINGS:
        # changing it later is a connection error nrfwd may raise
        up = self.upstream(settings=[(S_MAX_CONCURRENT_STREAMS, 100), (0x9, 1)],
                           on_request=answer)
        self.nrfwd(up)
        conn = up.ready()
        self.assertEqual(conn.preface, U.PREFACE)
        first = conn.frames[0]
        self.assertEqual((first.type, first.flags & ACK), (SETTINGS, 0),
                         'nrfwd\'s first frame must be a SETTINGS frame: %r' % first)
        self.assertIn((S_ENABLE_PUSH, 0), first.settings(), 'SETTINGS_ENABLE_PUSH 0 missing')
        # a later SETTINGS and two PINGs from the upstream
        # with a setting id nrfwd does not know: ignored
        conn.send_settings((S_MAX_CONCURRENT_STREAMS, 50), (0x99, 7))
        opaque = [b'\x01\x02\x03\x04\x05\x06\x07\x08', b'upstream']
        for o in opaque:
            conn.send(frame(PING, 0, 0, o))
        c = self.client()
        for i in range(5):
            r = c.get(PROFILE + 'ids-%d' % i)
            self.assertAnswered(r, 200, what='request %d' % i)
        self.assertTrue(up.wait(lambda: len([f for f in conn.all(PING) if f.flags & ACK]) >= 2,
                                2.0), conn.all(PING))
        acks = [f.payload for f in conn.all(PING) if f.flags & ACK]
        self.assertEqual(acks, opaque, 'PING ACKs must echo the opaque data, once each')
        settings_acks = [f for f in conn.all(SETTINGS) if f.flags & ACK]
        self.assertEqual(len(settings_acks), 2, 'one SETTINGS ACK per upstream SETTINGS')
        self.assertTrue(all(f.payload == b'' for f in settings_acks))
        ids = [st.sid for _, st in up.streams() if st.conn is conn]
        self.assertEqual(len(ids), 5, 'the requests did not share the kept connection')
        self.assertTrue(all(i % 2 == 1 for i in ids), ids)
        self.assertEqual(ids, sorted(set(ids)), ids)
        self.assertEqual(conn.all(GOAWAY) + conn.all(RST_STREAM), [],
                         'unknown frames or PRIORITY treated as errors')
        self.assertNoViolations()

    def test_12b_upstream_header_table_size(self):
        """The upstream's SETTINGS_HEADER_TABLE_SIZE bounds nrfwd's HPACK
        encoder (RFC 7541 §4.2, RFC 9113 §6.5.2): with 0 at the start, and
        with 256 then 0 sent later, each next request's block must start
        with a table size update within the new bound and never refer to
        entries beyond it — the upstream's decoder refuses any block that
        does not, as nghttp2's does (a violation). Requests with repeated
        fields (so an encoder would index them) all arrive whole."""
        hdrs = [('x-repeat', 'the same value every time'), JSON_CT,
                ('3gpp-sbi-target-apiroot', 'http://up.test:8080')]
        for name, first, later in (('zero', 0, None), ('later', 4096, (256, 0))):
            with self.subTest(case=name):
                up = self.upstream(name, settings=[(U.S_HEADER_TABLE_SIZE, first)])
                self.nrfwd(up)
                conn = up.ready()
                c = self.client()
                sizes = [later[0], later[1]] if later else []
                for i in range(6):
                    if i in (2, 4) and sizes:
                        v = sizes.pop(0)
                        n_acks = conn.acks_received
                        conn.send_settings((U.S_HEADER_TABLE_SIZE, v))
                        self.assertTrue(up.wait(lambda: conn.acks_received > n_acks, 2.0))
                    r = c.get(PROFILE + 'table-%s-%d' % (name, i), hdrs)
                    self.assertAnswered(r, 200, what='%s request %d' % (name, i))
                    st = up.streams(PROFILE + 'table-%s-%d' % (name, i))[0][1]
                    for k, v in hdrs:
                        self.assertEqual(st.field(k), v, '%s request %d: %s' % (name, i, k))
                self.assertNoViolations(up)
                self.h.cleanup()

    def test_12c_request_fields_intact_across_table_evictions(self):
        """240 requests on one upstream connection, 24 at a time, each with
        fields whose values repeat across requests (an encoder indexes
        them), values unique to it, and values of 10-700 bytes, so nrfwd's
        HPACK dynamic table fills and evicts many times: each request's
        fields reach the upstream exactly as the client sent them, decoded
        by one decoder in the order nrfwd sent the blocks (an encoder whose
        table got out of step shows as a wrong field or a decoding error)."""
        up = self.upstream()
        self.nrfwd(up, limits={'maxHeaderBytes': 65536})
        c = self.client()
        sent = {}
        for batch in range(10):
            sids = []
            for j in range(24):
                i = batch * 24 + j
                path = PROFILE + 'evict-%d' % i
                fields = [('x-shared', 'shared-%d' % (i % 5)),
                          ('x-unique', 'u%d-' % i + 'z' * (i % 50)),
                          ('x-long-%d' % (i % 7), ('%d' % i) * (10 + (i * 37) % 690)),
                          ('accept', 'application/json')]
                sent[path] = fields
                sids.append(c.request('GET', path, fields))
            self.assertTrue(c.run(lambda: all(c.results[s].done for s in sids), 10),
                            'batch %d not answered' % batch)
            for s in sids:
                self.assertAnswered(c.results[s], 200, what='stream %d' % s)
        seen = up.streams()
        got = {st.path: st for _, st in seen if st.path in sent}
        self.assertEqual(len(got), len(sent))
        for path, fields in sent.items():
            for k, v in fields:
                self.assertEqual(got[path].field(k), v, '%s: field %s' % (path, k))
        self.assertEqual(len({cn.idx for cn, st in seen if st.path in sent}), 1,
                         'the requests did not share one upstream connection')
        self.assertNoViolations()

    # ======================================================================
    # 4. Big answers

    def test_13_one_mib_answers_with_nrfwd_window_updates(self):
        """1 MiB answers in 16 KiB DATA frames, sent as nrfwd's windows
        allow: relayed intact, which needs nrfwd's WINDOW_UPDATEs (RFC 9113
        §6.9; their sizes and timing are nrfwd's choice, only that they
        come). One answer is past the stream window nrfwd grants
        (SETTINGS_INITIAL_WINDOW_SIZE): stream WINDOW_UPDATEs. nrfwd opens
        its connection window wide at the start (16 MiB today), so 17
        answers of 1 MiB on the connection go past it: connection
        WINDOW_UPDATEs too (asserted once the bytes exceed what nrfwd
        granted the connection before the first answer)."""
        body = body_of(1 << 20, 13)

        def answer(conn, st):
            st.user['t'] = time.monotonic()
            conn.answer(st.sid, 200, [JSON_CT, ('content-length', str(len(body)))], body)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        conn = up.ready()
        c = self.client()
        r = c.get(PROFILE + 'big-0', timeout=15)
        self.assertAnswered(r, 200, body, '1 MiB answer')
        _, st = up.streams(PROFILE + 'big-0')[0]
        wu = [f for f in conn.all(WINDOW_UPDATE) if f.t >= st.user['t']]
        self.assertTrue(any(f.sid == st.sid for f in wu), 'no stream WINDOW_UPDATE')
        conn_grant = 65535 + sum(struct.unpack('>I', f.payload)[0] for f in
                                 conn.all(WINDOW_UPDATE, 0) if f.t < st.user['t'])
        n = conn_grant // len(body) + 1
        for i in range(1, n + 1):
            r = c.get(PROFILE + 'big-%d' % i, timeout=15)
            self.assertAnswered(r, 200, body, '1 MiB answer %d' % i)
        seen = [(cn, s) for cn, s in up.streams() if 'big' in s.path]
        self.assertEqual(len(seen), n + 1)
        self.assertTrue(all(cn is conn for cn, s in seen),
                        'the answers did not share one upstream connection')
        wu = [f for f in conn.all(WINDOW_UPDATE) if f.t >= st.user['t']]
        self.assertTrue(any(f.sid == 0 for f in wu),
                        'no connection WINDOW_UPDATE after %d MiB (granted %d)' %
                        (n + 1, conn_grant))
        self.assertTrue(all(struct.unpack('>I', f.payload)[0] & 0x7fffffff > 0 for f in wu))
        self.assertEqual(conn.all(RST_STREAM) + conn.all(GOAWAY), [])
        self.assertNoViolations()

    def test_14_data_beyond_nrfwd_window_is_a_flow_control_error(self):
        """An answer that sends more DATA at once than the stream window
        nrfwd gave (its SETTINGS_INITIAL_WINDOW_SIZE + 4 KiB), within the
        connection window: a stream error FLOW_CONTROL_ERROR upstream
        (RST_STREAM; a connection error would be allowed too, RFC 9113
        §6.9.1 — nrfwd resets the stream). The client: docs/failures.md, a
        failed try — the answer is held, so 503 NF_SERVICE_FAILURE (or, had
        the relay begun, the status then RST_STREAM(INTERNAL_ERROR)). nrfwd
        then serves the next request."""
        def answer(conn, st):
            if 'flood' not in st.path:
                return U.default_answer(conn, st)
            n = conn.send_initial + 4096
            if conn.send_conn < n:  # the case needs a stream-only overflow
                conn.violations.append('test setup: connection window %d < %d'
                                       % (conn.send_conn, n))
            conn.headers(st.sid, [(':status', '200'), JSON_CT])
            conn.data(st.sid, b'x' * n, end=True, force=True)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        r = c.get(PROFILE + 'flood')
        conn, st = up.streams(PROFILE + 'flood')[0]
        self.assertTrue(up.wait(lambda: conn.find(RST_STREAM, st.sid) or conn.find(GOAWAY)),
                        'nrfwd did not treat the overflow as an error: %r' % conn.frames[-5:])
        f = conn.find(RST_STREAM, st.sid) or conn.find(GOAWAY)
        self.assertEqual(f.code, U.FLOW_CONTROL_ERROR, f)
        if r.reset is not None:
            self.assertEqual((r.status, r.reset), (200, U.INTERNAL_ERROR), r)
        else:
            self.assertLocalUnavailable(r, 'flow-control overflow')
        self.assertEqual(len(up.streams(PROFILE + 'flood')), 1, 'a reset is not retried')
        self.still_serves(up, 'a flow-control error')

    # ======================================================================
    # 5. Stream endings

    def test_15_refused_stream_sent_again_on_a_fresh_connection(self):
        """RST_STREAM(REFUSED_STREAM) before any answer: not processed
        (RFC 9113 §8.7), so nrfwd sends it once more, on a fresh connection
        to the same upstream (docs/failures.md) — also a POST. Answered 200
        from the second try; the upstream saw it twice."""
        def answer(conn, st):
            if len(up.streams(st.path)) == 1:
                conn.send(U.rst(st.sid, U.REFUSED_STREAM))
                conn._close_stream(st.sid)
            else:
                U.default_answer(conn, st)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        sid = c.request('POST', SUBS, [JSON_CT], b'{"refused":1}')
        c.run(lambda: c.results[sid].done)
        self.assertAnswered(c.results[sid], 200, what='refused once')
        seen = up.streams(SUBS)
        self.assertEqual(len(seen), 2, 'sent %d times' % len(seen))
        # docs/failures.md says "on a fresh connection"; for a stream refused
        # on a connection that stays usable nrfwd sends it again on that
        # connection (legal: RFC 9113 §8.7 only says it may be retried), so
        # which connection is not asserted.
        self.assertEqual(bytes(seen[1][1].body), b'{"refused":1}')
        self.assertNoViolations()

    def test_16_refused_twice_goes_to_the_next_candidate_peer(self):
        """Local NRF says 404 (a forwarding trigger); peer p1 refuses the
        stream every time: tried twice (the retry on a fresh connection),
        then the next candidate, p2, answers and that is relayed
        (docs/failures.md: the rule, 2)."""
        def local_404(conn, st):
            conn.answer(st.sid, 404, [('content-type', 'application/problem+json')],
                        b'{"status":404}')

        def refuse(conn, st):
            conn.send(U.rst(st.sid, U.REFUSED_STREAM))
            conn._close_stream(st.sid)
        local = self.upstream('local', on_request=local_404)
        p1 = self.upstream('p1', on_request=refuse)
        p2 = self.upstream('p2')
        self.nrfwd(local, peers=[p1, p2])
        c = self.client()
        r = c.get(PROFILE + 'to-peers')
        self.assertAnswered(r, 200, what='refused by p1, answered by p2')
        self.assertIn(b'"up":"p2"', bytes(r.body))
        self.assertEqual(len(p1.streams()), 2, 'p1: the refused stream is sent again once')
        self.assertEqual(len(p2.streams()), 1)
        via = p2.streams()[0][1].field('via')
        self.assertIn('%s:%d' % (SELF, self.fwd.port), via or '', 'own Via member upstream')
        self.assertNoViolations()

    def test_17_rst_internal_error_mid_body(self):
        """RST_STREAM(INTERNAL_ERROR) after part of the body. A held answer
        (small): a failed try, not sent again (the upstream may have
        processed it) — 503 NF_SERVICE_FAILURE, never half an answer. An
        answer being relayed (over the 64 KiB held): the client gets the
        200 HEADERS, then RST_STREAM(INTERNAL_ERROR) (docs/failures.md)."""
        def answer(conn, st):
            big = 'big' in st.path
            n = 200 * 1024 if big else 100
            conn.headers(st.sid, [(':status', '200'), JSON_CT,
                                  ('content-length', str(n))])
            part = body_of(150 * 1024 if big else 40, 17)
            conn.data(st.sid, part)
            # once all of it is out (for the big one: nrfwd relays beyond
            # its 64 KiB hold, so the relay has begun)
            conn.when(lambda: not conn.pending(st.sid),
                      lambda: (conn.send(U.rst(st.sid, U.INTERNAL_ERROR)),
                               conn._close_stream(st.sid)))
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        r = c.get(PROFILE + 'rst-small')
        self.assertLocalUnavailable(r, 'reset mid-body (held)')
        self.assertEqual(len(up.streams(PROFILE + 'rst-small')), 1)
        r = c.get(PROFILE + 'rst-big', timeout=8)
        self.assertTrue(r.done, r)
        self.assertEqual((r.status, r.finals, r.reset), (200, 1, U.INTERNAL_ERROR), r)
        self.assertFalse(r.ended, 'END_STREAM on a broken answer')
        self.assertLess(len(r.body), 200 * 1024)
        self.assertNoViolations()
        self.still_serves(up, 'a reset mid-body')

    def test_18_goaway_below_in_flight_streams(self):
        """Three POSTs in flight on one upstream connection; the upstream
        answers the first, then GOAWAY(NO_ERROR) with the first's id as
        last-stream-id. The two above it were not processed (RFC 9113 §6.8,
        §8.7): sent again on a fresh connection, answered 200. No new stream
        on the connection after the GOAWAY."""
        state = {}

        def answer(conn, st):
            if conn.idx != state.get('conn', conn.idx):
                return U.default_answer(conn, st)
            state['conn'] = conn.idx
            mine = [s for s in conn.streams.values() if s.ended]
            if len(mine) < 3:
                return
            first = min(s.sid for s in mine)
            U.default_answer(conn, conn.streams[first])
            conn.send(U.goaway(first, U.NO_ERROR, b'going away'))
            state['t_goaway'] = time.monotonic()
            state['last'] = first
            for s in mine:
                conn._close_stream(s.sid)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        sids = [c.request('POST', SUBS, [JSON_CT], b'{"n":%d}' % i) for i in range(3)]
        self.assertTrue(c.run(timeout=6), [c.results[s] for s in sids])
        for s in sids:
            self.assertAnswered(c.results[s], 200, what='stream %d' % s)
        seen = up.streams(SUBS)
        first_conn = [cn for cn, _ in seen if cn.idx == state['conn']][0]
        again = [(cn, st) for cn, st in seen if cn.idx != state['conn']]
        self.assertEqual(len(again), 2, 'the two streams above last-stream-id are sent again')
        self.assertEqual(sorted(bytes(st.body) for _, st in again),
                         sorted(bytes(st.body) for _, st in seen
                                if st.conn is first_conn and st.sid > state['last']))
        late = [f for f in first_conn.all(HEADERS) if f.t > state['t_goaway'] + 0.05]
        self.assertEqual(late, [], 'a stream opened after GOAWAY')
        self.assertNoViolations()

    def test_18b_graceful_goaway_then_the_real_one(self):
        """A graceful shutdown (RFC 9113 §6.8): GOAWAY(2^31-1, NO_ERROR) while
        a request is in flight, the answer 200 ms later, then GOAWAY with
        that stream's id and the close. nrfwd opens no stream on the
        connection after the first GOAWAY: a request made meanwhile goes on
        a new connection. Both answered 200, each sent once."""
        state = {}

        def answer(conn, st):
            if 'slow' not in st.path:
                return U.default_answer(conn, st)
            state['conn'] = conn
            state['t'] = time.monotonic()
            conn.send(U.goaway(0x7fffffff, U.NO_ERROR, b'shutting down'))

            def finish():
                U.default_answer(conn, st)
                conn.send(U.goaway(st.sid, U.NO_ERROR))
                conn.later(0.05, conn.close)
            conn.later(0.2, finish)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        slow = c.request('GET', PROFILE + 'slow')
        self.assertTrue(up.wait(lambda: 't' in state, 3.0))
        time.sleep(0.05)
        fast = c.request('GET', PROFILE + 'meanwhile')
        self.assertTrue(c.run(timeout=5), c.results)
        self.assertAnswered(c.results[slow], 200, what='in flight across the GOAWAY')
        self.assertAnswered(c.results[fast], 200, what='made after the first GOAWAY')
        self.assertEqual(len(up.streams(PROFILE + 'slow')), 1)
        seen = up.streams(PROFILE + 'meanwhile')
        self.assertEqual(len(seen), 1)
        self.assertIsNot(seen[0][0], state['conn'], 'a stream opened after GOAWAY')
        late = [f for f in state['conn'].all(HEADERS) if f.t > state['t'] + 0.05]
        self.assertEqual(late, [], 'HEADERS on the connection after its GOAWAY')
        self.assertNoViolations()

    def test_19_goaway_then_close(self):
        """GOAWAY then the TCP close with a POST in flight. last-stream-id
        0: not processed, sent again on a fresh connection, 200. last-stream-id
        = the stream, never answered: it may have been processed, a POST is
        not sent again (RFC 9113 §8.7), a failed try: 503 NF_SERVICE_FAILURE.
        nrfwd keeps serving (a new connection)."""
        def answer(conn, st):
            if len(up.streams(st.path)) > 1:
                return U.default_answer(conn, st)
            last = 0 if 'unprocessed' in st.path else st.sid
            conn.send(U.goaway(last, U.NO_ERROR))
            conn.later(0.02, conn.close)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        sid = c.request('POST', SUBS + '?case=unprocessed', [JSON_CT], b'{"a":1}')
        c.run(lambda: c.results[sid].done)
        self.assertAnswered(c.results[sid], 200, what='GOAWAY(0) then close')
        self.assertEqual(len(up.streams(SUBS + '?case=unprocessed')), 2)
        up.ready()
        sid = c.request('POST', SUBS + '?case=processed', [JSON_CT], b'{"a":2}')
        c.run(lambda: c.results[sid].done)
        self.assertLocalUnavailable(c.results[sid], 'GOAWAY(stream) then close')
        self.assertEqual(len(up.streams(SUBS + '?case=processed')), 1,
                         'a POST that may have been processed was sent again')
        self.assertNoViolations()
        self.still_serves(up, 'GOAWAY and close')

    def test_20_data_on_a_closed_stream(self):
        """DATA on a stream after its END_STREAM (RFC 9113 §5.1 'closed',
        §6.1: STREAM_CLOSED, as a stream or a connection error). The client
        got its answer once; the connection or a fresh one serves the next
        request. nrfwd today ignores the frame (nghttp2 forgets closed
        client streams): no RST_STREAM, no GOAWAY — both reactions and
        silence are accepted; an error other than STREAM_CLOSED is not."""
        def answer(conn, st):
            U.default_answer(conn, st)
            if 'late' in st.path:
                conn.later(0.05, lambda: conn.send(frame(DATA, 0, st.sid, b'late bytes'),
                                                   frame(DATA, END_STREAM, st.sid, b'!')))
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        c = self.client()
        r = c.get(PROFILE + 'late')
        self.assertAnswered(r, 200, what='answer before the late DATA')
        c.run(lambda: False, 0.3)  # whatever else comes for the stream
        self.assertEqual((r.finals, r.reset), (1, None), r)
        self.assertNotIn(b'late bytes', bytes(r.body))
        conn = up.streams(PROFILE + 'late')[0][0]
        errs = conn.all(RST_STREAM) + conn.all(GOAWAY)
        self.assertTrue(all(f.code == U.STREAM_CLOSED for f in errs), errs)
        self.still_serves(up, 'DATA on a closed stream')
        self.assertNoViolations()

    def test_21_push_promise_is_a_connection_error(self):
        """PUSH_PROMISE although nrfwd's SETTINGS_ENABLE_PUSH is 0 (and
        acknowledged): a connection error PROTOCOL_ERROR, GOAWAY (RFC 9113
        §6.6, §8.4). The GET lost with its connection is sent once more on
        a fresh connection (docs/failures.md), which answers: 200, once."""
        def answer(conn, st):
            if len(up.streams(st.path)) > 1:
                return U.default_answer(conn, st)
            promised = lit(':method', 'GET') + lit(':scheme', 'http') + \
                lit(':authority', 'up.test') + lit(':path', '/pushed')
            conn.send(frame(U.PUSH_PROMISE, END_HEADERS, st.sid,
                            struct.pack('>I', 2) + promised))
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        first = up.ready()
        c = self.client()
        r = c.get(PROFILE + 'push')
        self.assertAnswered(r, 200, what='after PUSH_PROMISE')
        seen = up.streams(PROFILE + 'push')
        self.assertEqual(len(seen), 2)
        pconn = seen[0][0]
        self.assertIs(pconn, first)
        g = pconn.find(GOAWAY)
        self.assertIsNotNone(g, 'no GOAWAY after PUSH_PROMISE: %r' % pconn.frames[-5:])
        self.assertEqual(g.code, U.PROTOCOL_ERROR, g)
        self.assertTrue(up.wait(lambda: pconn.closed, 2.0), 'connection not closed')
        self.assertIsNot(seen[1][0], pconn)
        self.still_serves(up, 'PUSH_PROMISE')
        self.assertNoViolations()

    def test_22_malformed_frames(self):
        """Malformed frames from the upstream before it answers. SETTINGS of
        7 bytes (not a multiple of 6): connection error FRAME_SIZE_ERROR
        (RFC 9113 §6.5) — GOAWAY, and the GET lost with the connection is
        sent again on a fresh one: 200. WINDOW_UPDATE of 0 on the request's
        stream: a stream error PROTOCOL_ERROR (§6.9), which an endpoint may
        make a connection error (§5.4.1): RST_STREAM(PROTOCOL_ERROR) and a
        failed try (503 NF_SERVICE_FAILURE), or GOAWAY(PROTOCOL_ERROR) and
        the GET sent again (200) — nrfwd today does the latter (nghttp2).
        WINDOW_UPDATE of 0 on the connection: connection error
        PROTOCOL_ERROR, sent again, 200. The same for a PING of 7 bytes
        (FRAME_SIZE_ERROR), DATA on stream 0 (PROTOCOL_ERROR), a RST_STREAM
        of 3 bytes (FRAME_SIZE_ERROR), SETTINGS_INITIAL_WINDOW_SIZE 2^31
        (FLOW_CONTROL_ERROR), SETTINGS_MAX_FRAME_SIZE 1000 and
        SETTINGS_ENABLE_PUSH 1 from a server (PROTOCOL_ERROR); a
        WINDOW_UPDATE that takes the stream's window over 2^31-1 is a stream
        error FLOW_CONTROL_ERROR that may be a connection error (nrfwd today:
        RST_STREAM, a failed try, 503). nrfwd keeps serving after each."""
        def answer(conn, st):
            if len(up.streams(st.path)) > 1:
                return U.default_answer(conn, st)
            bad = {
                'settings7': frame(SETTINGS, 0, 0, b'\x00\x04\x00\x01\x00\x00\x00'),
                'wu0-stream': U.window_update(st.sid, 0),
                'wu0-conn': U.window_update(0, 0),
                'ping7': frame(PING, 0, 0, b'1234567'),
                'data-on-0': frame(DATA, 0, 0, b'x'),
                'rst-3-bytes': frame(RST_STREAM, 0, st.sid, b'\x00\x00\x02'),
                'iws-too-big': U.settings_frame((S_INITIAL_WINDOW_SIZE, 0x80000000)),
                'mfs-too-small': U.settings_frame((S_MAX_FRAME_SIZE, 1000)),
                'push-enabled': U.settings_frame((S_ENABLE_PUSH, 1)),
                'wu-overflow-stream': U.window_update(st.sid, 0x7fffffff),
            }
            name = st.path.rsplit('/', 1)[-1]
            if name in bad:
                conn.send(bad[name])
            else:
                U.default_answer(conn, st)
        up = self.upstream(on_request=answer)
        self.nrfwd(up)
        cases = [('settings7', U.FRAME_SIZE_ERROR, False),
                 ('wu0-stream', U.PROTOCOL_ERROR, True),
                 ('wu0-conn', U.PROTOCOL_ERROR, False),
                 ('ping7', U.FRAME_SIZE_ERROR, False),               # §6.7
                 ('data-on-0', U.PROTOCOL_ERROR, False),             # §6.1
                 ('rst-3-bytes', U.FRAME_SIZE_ERROR, False),         # §6.4
                 ('iws-too-big', U.FLOW_CONTROL_ERROR, False),       # §6.5.2
                 ('mfs-too-small', U.PROTOCOL_ERROR, False),         # §6.5.2
                 ('push-enabled', U.PROTOCOL_ERROR, False),          # §6.5.2, to a client
                 ('wu-overflow-stream', U.FLOW_CONTROL_ERROR, True)]  # §6.9.1
        for name, code, stream_error_allowed in cases:
            with self.subTest(case=name):
                up.ready()
                c = self.client()
                r = c.get(PROFILE + name)
                seen = up.streams(PROFILE + name)
                conn, st = seen[0]
                self.assertTrue(up.wait(lambda: conn.find(GOAWAY) or
                                        conn.find(RST_STREAM, st.sid), 2.0),
                                '%s: no RST_STREAM or GOAWAY: %r' % (name, conn.frames[-5:]))
                g = conn.find(GOAWAY)
                f = g or conn.find(RST_STREAM, st.sid)
                self.assertEqual(f.code, code, '%s: %r' % (name, f))
                if g is not None:
                    self.assertAnswered(r, 200, what=name)
                    self.assertEqual(len(seen), 2, '%s: sent again once' % name)
                    self.assertTrue(up.wait(lambda: conn.closed, 2.0),
                                    '%s: connection not closed after GOAWAY' % name)
                else:
                    self.assertTrue(stream_error_allowed, '%s: a connection error is due' % name)
                    self.assertLocalUnavailable(r, name)
                    self.assertEqual(len(seen), 1, '%s: a reset stream is not sent again'
                                     % name)
                self.still_serves(up, name)
        self.assertNoViolations()

if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
