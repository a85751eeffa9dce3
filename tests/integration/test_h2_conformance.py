#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""HTTP/2 conformance of nrfwd's front door, one test per case of the h2spec
suite (h2spec 2.6: http2 sections 3.5-8.2, hpack 2.3-6.3, generic 1-5; its
146 default cases and its two --strict ones), plus the cases of the front
frame-header pass (lib/h2/h2_guard.c) that h2spec does not reach.

Usage: python3 tests/integration/test_h2_conformance.py [--build-dir BUILD]

One nrfstub (the local NRF) and one nrfwd in front of it, started once for
the whole file; every case opens its own connection. The client is raw:
frames are built with Debian's python3-h2 libraries (hyperframe for frame
encoding, hpack for header blocks), malformed ones byte by byte, and the
assertions are this file's: each case asserts the outcome nrfwd gives and
RFC 9113 / RFC 7541 require (a GOAWAY with its error code followed by the
connection's close, a RST_STREAM with its code on a connection that still
answers PING, the connection closed, or a response). Where the RFC leaves a
choice (a stream error may be escalated to a connection error, RFC 9113
§5.4), the docstring says which one nrfwd takes.

h2spec itself is lenient in ways these tests are not: it counts any
GOAWAY followed by a close as a pass for a connection error, whatever the
error code.
"""

import os
import socket
import struct
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

try:
    import hpack
    import hyperframe.frame as hf
except ImportError:  # python3 may be an interpreter without Debian's packages
    sys.path.append('/usr/lib/python3/dist-packages')
    import hpack  # noqa: E402
    import hyperframe.frame as hf  # noqa: E402

from h2frames import (  # noqa: E402,F401 (frame numbers: one copy)
    ACK, CANCEL, COMPRESSION_ERROR, CONTINUATION, DATA, END_HEADERS, END_STREAM,
    FLOW_CONTROL_ERROR, FRAME_NAMES, FRAME_SIZE_ERROR, GOAWAY, HEADERS, INTERNAL_ERROR, NO_ERROR,
    PADDED, PING, PREFACE, PRIORITY, PRIORITY_FLAG, PROTOCOL_ERROR, PUSH_PROMISE, REFUSED_STREAM,
    RST_STREAM, SETTINGS, SETTINGS_TIMEOUT, STREAM_CLOSED, WINDOW_UPDATE, error_code)

ERROR_NAMES = ['NO_ERROR', 'PROTOCOL_ERROR', 'INTERNAL_ERROR', 'FLOW_CONTROL_ERROR',
               'SETTINGS_TIMEOUT', 'STREAM_CLOSED', 'FRAME_SIZE_ERROR', 'REFUSED_STREAM',
               'CANCEL', 'COMPRESSION_ERROR']

HEADER_TABLE_SIZE, ENABLE_PUSH, MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE, \
    MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE = range(1, 7)

WAIT = 3.0        # a frame that must come (only a failing test waits this long)
QUIET = 0.3       # "nothing comes": how long silence is taken as an answer
MAX_FRAME = 16384
DUMMY_LEN = 4000  # h2spec's --max-header-length default

CLOSED = 'connection closed'
TIMEOUT = 'timeout'

PORT = None       # nrfwd's port (setUpModule)
_harness = None
_nrfwd = None


def setUpModule():
    global PORT, _harness, _nrfwd
    _harness = H.Harness(prefix='nrfwd-conf-')
    try:
        stub = _harness.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config('nrf-conf.test', local=stub.port,
                             limits={'maxConcurrentStreams': 128})
        _nrfwd = _harness.start_nrfwd(cfg)
    except Exception:
        _harness.cleanup(dump=True)
        raise
    PORT = _nrfwd.port


def tearDownModule():
    if _harness is not None:
        _harness.cleanup(dump=bool(os.environ.get('NRFWD_TEST_LOGS')))


# ---------------------------------------------------------------------------
# Frames

def raw(ftype, flags, sid, payload=b''):
    """Any frame, valid or not, byte by byte (RFC 9113 §4.1)."""
    return struct.pack('>I', len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack('>I', sid) + payload


def fr(frame, *flags):
    for f in flags:
        frame.flags.add(f)
    return frame.serialize()


def headers_frame(sid, block, es=True, eh=True, pad=None, prio=None):
    f = hf.HeadersFrame(sid, data=block)
    if pad is not None:
        f.flags.add('PADDED')
        f.pad_length = pad
    if prio is not None:
        dep, weight, excl = prio
        f.flags.add('PRIORITY')
        f.depends_on, f.stream_weight, f.exclusive = dep, weight, excl
    return fr(f, *((['END_STREAM'] if es else []) + (['END_HEADERS'] if eh else [])))


def data_frame(sid, payload, es=True, pad=None):
    f = hf.DataFrame(sid, data=payload)
    if pad is not None:
        f.flags.add('PADDED')
        f.pad_length = pad
    return fr(f, *(['END_STREAM'] if es else []))


def cont_frame(sid, block, eh=True):
    return fr(hf.ContinuationFrame(sid, data=block), *(['END_HEADERS'] if eh else []))


def priority_frame(sid, dep=0, weight=255, excl=False):
    return hf.PriorityFrame(sid, depends_on=dep, stream_weight=weight,
                            exclusive=excl).serialize()


def rst_frame(sid, code):
    return hf.RstStreamFrame(sid, error_code=code).serialize()


def settings_frame(*pairs):
    return hf.SettingsFrame(0, settings=dict(pairs)).serialize()


def settings_ack():
    return fr(hf.SettingsFrame(0), 'ACK')


def ping_frame(data, ack=False):
    return fr(hf.PingFrame(0, opaque_data=data), *(['ACK'] if ack else []))


def goaway_frame(last, code, debug=b''):
    return hf.GoAwayFrame(0, last_stream_id=last, error_code=code,
                          additional_data=debug).serialize()


def window_update(sid, inc):
    return raw(WINDOW_UPDATE, 0, sid, struct.pack('>I', inc))


class Frame:
    def __init__(self, ftype, flags, sid, payload):
        self.type, self.flags, self.sid, self.payload = ftype, flags, sid, payload
        self.fields = None  # decoded header block (HEADERS)

    @property
    def code(self):
        """Error code of RST_STREAM / GOAWAY."""
        return error_code(self.type, self.payload)

    def __repr__(self):
        name = FRAME_NAMES[self.type] if self.type < len(FRAME_NAMES) else 'type %d' % self.type
        extra = ''
        if self.code is not None:
            extra = ' ' + (ERROR_NAMES[self.code] if self.code < len(ERROR_NAMES)
                           else hex(self.code))
        elif self.fields is not None:
            extra = ' ' + ' '.join('%s=%s' % kv for kv in self.fields if kv[0].startswith(':'))
        return '%s(sid %d, flags 0x%02x, %d bytes%s)' % (name, self.sid, self.flags,
                                                          len(self.payload), extra)


# ---------------------------------------------------------------------------
# Client

class Conn:
    """One raw HTTP/2 client connection to nrfwd."""

    def __init__(self, port=None):
        self.s = socket.create_connection(('127.0.0.1', port or PORT), timeout=WAIT)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b''
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.seen = []          # every frame received, for failure messages
        self.settings = {}      # the server's SETTINGS
        self.closed = False
        self.authority = '127.0.0.1:%d' % (port or PORT)
        self._block = None      # header block being received (HEADERS + CONTINUATION)

    def close(self):
        self.s.close()

    def send(self, *chunks):
        self.s.sendall(b''.join(chunks))

    def common(self, method='GET', path='/'):
        """h2spec's CommonHeaders: a request nrfwd hands to its local NRF."""
        return [(':method', method), (':scheme', 'http'), (':path', path),
                (':authority', self.authority)]

    def encode(self, fields):
        return self.enc.encode(fields)

    def dummy(self, n):
        """h2spec's DummyHeaders: n fields of DUMMY_LEN bytes each."""
        return [('x-dummy%d' % i, 'x' * DUMMY_LEN) for i in range(n)]

    def handshake(self, window=65535):
        """Preface + SETTINGS, then wait for the server's SETTINGS (acked
        here) and the ACK of ours, as h2spec does."""
        self.send(PREFACE, settings_frame((INITIAL_WINDOW_SIZE, window)))
        remote = local = False
        while not (remote and local):
            f = self.next(WAIT)
            if not isinstance(f, Frame):
                raise AssertionError('handshake: %s after %s' % (f, self.seen))
            if f.type != SETTINGS:
                continue
            if f.flags & ACK:
                local = True
            else:
                remote = True
                for i in range(0, len(f.payload) - 5, 6):
                    k, v = struct.unpack('>HI', f.payload[i:i + 6])
                    self.settings[k] = v
                self.send(settings_ack())
        return self

    def next(self, timeout):
        """The next frame, or CLOSED, or TIMEOUT."""
        end = time.monotonic() + timeout
        while True:
            if len(self.buf) >= 9:
                ln = struct.unpack('>I', b'\0' + self.buf[:3])[0]
                if len(self.buf) >= 9 + ln:
                    f = Frame(self.buf[3], self.buf[4],
                              struct.unpack('>I', self.buf[5:9])[0] & 0x7fffffff,
                              self.buf[9:9 + ln])
                    self.buf = self.buf[9 + ln:]
                    self._decode(f)
                    self.seen.append(f)
                    return f
            if self.closed:
                return CLOSED
            left = end - time.monotonic()
            if left <= 0:
                return TIMEOUT
            self.s.settimeout(left)
            try:
                d = self.s.recv(65536)
            except socket.timeout:
                return TIMEOUT
            except (ConnectionResetError, BrokenPipeError):
                d = b''
            if not d:
                self.closed = True
                continue
            self.buf += d

    def _decode(self, f):
        # Keep the HPACK decoder in step with every block nrfwd sends.
        if f.type == HEADERS:
            p = f.payload
            if f.flags & PADDED:
                p = p[1:len(p) - p[0]]
            if f.flags & PRIORITY_FLAG:
                p = p[5:]
            self._block = (f, p)
            if f.flags & END_HEADERS:
                self._finish()
        elif f.type == CONTINUATION and self._block is not None:
            self._block = (self._block[0], self._block[1] + f.payload)
            if f.flags & END_HEADERS:
                self._finish()

    def _finish(self):
        f, block = self._block
        self._block = None
        f.fields = [(k.decode() if isinstance(k, bytes) else k,
                     v.decode() if isinstance(v, bytes) else v)
                    for k, v in self.dec.decode(block)]

    def until(self, pred, timeout=WAIT):
        """Frames until pred(frame) is true: that frame, CLOSED or TIMEOUT."""
        end = time.monotonic() + timeout
        while True:
            f = self.next(max(0.0, end - time.monotonic()))
            if not isinstance(f, Frame) or pred(f):
                return f


# ---------------------------------------------------------------------------
# Assertions

class Case(unittest.TestCase):
    """Helpers shared by every section."""

    def setUp(self):
        self.conns = []

    def tearDown(self):
        for c in self.conns:
            c.close()
        self.assertTrue(_nrfwd.alive(), 'nrfwd died:\n' + _nrfwd.log())

    def conn(self, handshake=True, **kw):
        c = Conn()
        self.conns.append(c)
        return c.handshake(**kw) if handshake else c

    def _where(self, c):
        return 'frames received: %s' % (c.seen,)

    def goaway(self, c, *codes):
        """A connection error: GOAWAY with one of @codes, then the close."""
        f = c.until(lambda f: f.type == GOAWAY)
        if not isinstance(f, Frame):
            self.fail('expected GOAWAY(%s), got %s; %s' % (
                '|'.join(ERROR_NAMES[x] for x in codes), f, self._where(c)))
        self.assertIn(f.code, codes, 'GOAWAY with the wrong code; ' + self._where(c))
        after = c.until(lambda f: True)
        self.assertEqual(after, CLOSED, 'connection not closed after GOAWAY; ' + self._where(c))
        return f

    def rst(self, c, sid, *codes):
        """A stream error: RST_STREAM on @sid with one of @codes, no
        response on @sid before it, and the connection still works."""
        f = c.until(lambda f: f.type in (RST_STREAM, GOAWAY) and (f.sid == sid or f.sid == 0) or
                    f.type == HEADERS and f.sid == sid)
        if not isinstance(f, Frame) or f.type != RST_STREAM:
            self.fail('expected RST_STREAM(%d, %s), got %s; %s' % (
                sid, '|'.join(ERROR_NAMES[x] for x in codes), f, self._where(c)))
        self.assertIn(f.code, codes, 'RST_STREAM with the wrong code; ' + self._where(c))
        self.alive(c)
        return f

    def alive(self, c, data=b'nrfalive'):
        """The connection still works: a PING is answered."""
        c.send(ping_frame(data))
        self.ping_ack(c, data)

    def ping_ack(self, c, data):
        f = c.until(lambda f: f.type == GOAWAY or f.type == PING and f.flags & ACK)
        if not isinstance(f, Frame) or f.type != PING:
            self.fail('expected PING ACK, got %s; %s' % (f, self._where(c)))
        self.assertEqual(f.payload, data, 'PING ACK with other data; ' + self._where(c))

    def response(self, c, sid, status=None):
        """A response on @sid: its header fields (dict)."""
        f = c.until(lambda f: f.type == HEADERS and f.sid == sid or f.type == GOAWAY or
                    f.type == RST_STREAM and f.sid == sid)
        if not isinstance(f, Frame) or f.type != HEADERS:
            self.fail('expected a response on stream %d, got %s; %s' % (sid, f, self._where(c)))
        fields = dict(f.fields)
        self.assertRegex(fields.get(':status', ''), r'^[1-5][0-9][0-9]$')
        if status is not None:
            self.assertEqual(int(fields[':status']), status, self._where(c))
        return fields

    def stream_end(self, c, sid):
        """h2spec's VerifyStreamClose: the response on @sid is complete."""
        f = c.until(lambda f: f.type in (HEADERS, DATA) and f.sid == sid and
                    f.flags & END_STREAM or f.type == GOAWAY or
                    f.type == RST_STREAM and f.sid == sid)
        if not isinstance(f, Frame) or f.type not in (HEADERS, DATA):
            self.fail('expected the end of stream %d, got %s; %s' % (sid, f, self._where(c)))

    def data_len(self, c, sid):
        """Length of the next DATA frame on @sid."""
        f = c.until(lambda f: f.type == DATA and f.sid == sid or f.type == GOAWAY or
                    f.type == RST_STREAM and f.sid == sid)
        if not isinstance(f, Frame) or f.type != DATA:
            self.fail('expected DATA on stream %d, got %s; %s' % (sid, f, self._where(c)))
        return len(f.payload)

    def settings_ack(self, c):
        f = c.until(lambda f: f.type == SETTINGS and f.flags & ACK or f.type == GOAWAY)
        if not isinstance(f, Frame) or f.type != SETTINGS:
            self.fail('expected SETTINGS ACK, got %s; %s' % (f, self._where(c)))

    def closed(self, c):
        """The connection is closed (any GOAWAY before it must not carry an error)."""
        f = c.until(lambda f: f.type == GOAWAY and f.code != NO_ERROR)
        self.assertEqual(f, CLOSED, 'expected the connection closed; ' + self._where(c))

    def quiet(self, c, pred, what):
        """Nothing matching @pred comes for QUIET seconds."""
        f = c.until(pred, QUIET)
        self.assertFalse(isinstance(f, Frame), '%s: got %s; %s' % (what, f, self._where(c)))


# ---------------------------------------------------------------------------
# http2 (RFC 7540 numbering, as h2spec; the same rules are in RFC 9113)

class Http2_3_5_ConnectionPreface(Case):
    def test_1_server_preface_is_a_settings_frame_first(self):
        c = self.conn(handshake=False)
        c.send(PREFACE, settings_frame((INITIAL_WINDOW_SIZE, 65535)))
        f = c.next(WAIT)
        self.assertIsInstance(f, Frame, f)
        self.assertEqual((f.type, f.flags & ACK), (SETTINGS, 0), c.seen)

    def test_2_invalid_preface_closes_the_connection(self):
        c = self.conn(handshake=False)
        c.send(b'INVALID CONNECTION PREFACE\r\n\r\n')
        self.closed(c)


class Http2_4_1_FrameFormat(Case):
    def test_1_unknown_frame_type_is_ignored(self):
        c = self.conn()
        c.send(raw(0x16, 0, 0, b'\0' * 8), ping_frame(b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)

    def test_2_undefined_flags_are_ignored(self):
        c = self.conn()
        c.send(raw(PING, 0x16, 0, b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)

    def test_3_reserved_bit_of_the_stream_id_is_ignored(self):
        c = self.conn()
        c.send(raw(PING, 0x16, 0x80000000, b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)


class Http2_4_2_FrameSize(Case):
    def test_1_data_frame_of_max_frame_size_is_accepted(self):
        c = self.conn()
        size = c.settings.get(MAX_FRAME_SIZE, MAX_FRAME)
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False),
               data_frame(1, b'x' * size))
        self.response(c, 1, 404)

    def test_2_data_frame_over_max_frame_size_is_frame_size_error(self):
        """RFC: FRAME_SIZE_ERROR; nrfwd (nghttp2) ends the connection."""
        c = self.conn()
        size = c.settings.get(MAX_FRAME_SIZE, MAX_FRAME)
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False),
               data_frame(1, b'x' * (size + 1)))
        self.goaway(c, FRAME_SIZE_ERROR)

    def test_3_headers_frame_over_max_frame_size_is_connection_frame_size_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common() + c.dummy(5))))
        self.goaway(c, FRAME_SIZE_ERROR)


class Http2_4_3_HeaderCompression(Case):
    def test_1_invalid_header_block_is_compression_error(self):
        c = self.conn()
        c.send(raw(HEADERS, END_STREAM | END_HEADERS, 1, b'\x40'))
        self.goaway(c, COMPRESSION_ERROR)

    def test_2_priority_inside_a_header_block_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), es=False, eh=False),
               priority_frame(1),
               cont_frame(1, c.encode(c.dummy(1))))
        self.goaway(c, PROTOCOL_ERROR)

    def test_3_headers_of_another_stream_inside_a_header_block_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), es=False, eh=False),
               headers_frame(3, c.encode(c.common())),
               cont_frame(1, c.encode(c.dummy(1))))
        self.goaway(c, PROTOCOL_ERROR)


class Http2_5_1_StreamStates(Case):
    def test_01_idle_data_is_protocol_error(self):
        c = self.conn()
        c.send(data_frame(1, b'test'))
        self.goaway(c, PROTOCOL_ERROR)

    def test_02_idle_rst_stream_is_protocol_error(self):
        c = self.conn()
        c.send(rst_frame(1, CANCEL))
        self.goaway(c, PROTOCOL_ERROR)

    def test_03_idle_window_update_is_protocol_error(self):
        c = self.conn()
        c.send(window_update(1, 100))
        self.goaway(c, PROTOCOL_ERROR)

    def test_04_idle_continuation_is_protocol_error(self):
        c = self.conn()
        c.send(cont_frame(1, c.encode(c.common())))
        self.goaway(c, PROTOCOL_ERROR)

    def test_05_half_closed_remote_data_is_stream_closed(self):
        """RFC: stream error STREAM_CLOSED; nrfwd (nghttp2, and the pass when
        the answer was already out) ends the connection with STREAM_CLOSED,
        as after END_STREAM (§5.1 "closed")."""
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())), data_frame(1, b'test'))
        self.goaway(c, STREAM_CLOSED)

    def test_06_half_closed_remote_headers_is_stream_closed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())), headers_frame(1, c.encode(c.common())))
        self.goaway(c, STREAM_CLOSED)

    def test_07_half_closed_remote_continuation_is_protocol_error(self):
        """A CONTINUATION after a complete block (§6.10): PROTOCOL_ERROR,
        one of the two codes the case allows."""
        c = self.conn()
        block = c.encode(c.common())
        c.send(headers_frame(1, block), cont_frame(1, block))
        self.goaway(c, PROTOCOL_ERROR)

    def test_08_closed_data_after_rst_stream_is_stream_closed(self):
        """After the client's RST_STREAM, DATA: stream error STREAM_CLOSED
        (§5.1 "closed"). The front pass answers it (nghttp2 keeps no closed
        streams on front sessions and would drop it silently)."""
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), es=False), rst_frame(1, CANCEL),
               data_frame(1, b'test'))
        self.rst(c, 1, STREAM_CLOSED)

    def test_09_closed_headers_after_rst_stream_is_stream_closed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), es=False), rst_frame(1, CANCEL),
               headers_frame(1, c.encode(c.common())))
        self.rst(c, 1, STREAM_CLOSED)

    def test_10_closed_continuation_after_rst_stream_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), es=False), rst_frame(1, CANCEL),
               cont_frame(1, c.encode(c.dummy(1))))
        self.goaway(c, PROTOCOL_ERROR)

    def test_11_closed_data_after_end_stream_is_connection_stream_closed(self):
        """Both ends closed the stream, then DATA: connection error
        STREAM_CLOSED (§5.1 "closed"), from the front pass."""
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())))
        self.stream_end(c, 1)
        c.send(data_frame(1, b'test'))
        self.goaway(c, STREAM_CLOSED)

    def test_12_closed_headers_after_end_stream_is_connection_stream_closed(self):
        c = self.conn()
        block = c.encode(c.common())
        c.send(headers_frame(1, block))
        self.stream_end(c, 1)
        c.send(headers_frame(1, block))
        self.goaway(c, STREAM_CLOSED)

    def test_13_closed_continuation_after_end_stream_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())))
        self.stream_end(c, 1)
        c.send(cont_frame(1, c.encode(c.dummy(1))))
        self.goaway(c, PROTOCOL_ERROR)


class Http2_5_1_1_StreamIdentifiers(Case):
    def test_1_even_stream_id_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(2, c.encode(c.common())))
        self.goaway(c, PROTOCOL_ERROR)

    def test_2_stream_id_below_an_earlier_one_is_protocol_error(self):
        """§5.1.1: a new stream's id must be above every id the client used;
        from the front pass (nghttp2 ignores the HEADERS)."""
        c = self.conn()
        c.send(headers_frame(5, c.encode(c.common())), headers_frame(3, c.encode(c.common())))
        self.goaway(c, PROTOCOL_ERROR)

    def test_3_headers_on_a_half_closed_remote_stream_is_stream_closed(self):
        """RFC: stream error STREAM_CLOSED; nrfwd ends the connection."""
        c = self.conn()
        c.send(headers_frame(5, c.encode(c.common())), headers_frame(5, c.encode(c.common())))
        self.goaway(c, STREAM_CLOSED)


class Http2_5_1_2_StreamConcurrency(Case):
    def test_1_streams_over_the_acknowledged_limit_are_protocol_error(self):
        """RFC: stream error PROTOCOL_ERROR or REFUSED_STREAM; nrfwd
        (nghttp2) ends the connection with PROTOCOL_ERROR once the client
        acknowledged the limit."""
        c = self.conn()
        n = c.settings[MAX_CONCURRENT_STREAMS]
        c.send(settings_frame((INITIAL_WINDOW_SIZE, 0)))
        block = c.encode(c.common())
        c.send(b''.join(headers_frame(1 + 2 * i, block) for i in range(n + 1)))
        self.goaway(c, PROTOCOL_ERROR)


class Http2_5_3_1_StreamDependencies(Case):
    def test_1_headers_depending_on_itself_is_protocol_error(self):
        """RFC: stream error PROTOCOL_ERROR; nghttp2 ends the connection when
        the HEADERS opens the stream (it would otherwise be delivered)."""
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), prio=(1, 255, False)))
        self.goaway(c, PROTOCOL_ERROR)

    def test_2_priority_depending_on_itself_is_protocol_error(self):
        """RFC: stream error PROTOCOL_ERROR. The stream is idle, and a
        RST_STREAM on an idle stream is itself a connection error for the
        client (§5.1): the front pass ends the connection instead."""
        c = self.conn()
        c.send(priority_frame(1, dep=1))
        self.goaway(c, PROTOCOL_ERROR)


class Http2_5_4_1_ConnectionErrorHandling(Case):
    def test_1_invalid_ping_closes_the_connection(self):
        c = self.conn()
        c.send(raw(PING, 0, 3, b'\0' * 8))
        self.goaway(c, PROTOCOL_ERROR)

    def test_2_strict_invalid_ping_gets_goaway_before_the_close(self):
        c = self.conn()
        c.send(raw(PING, 0, 3, b'\0' * 8))
        f = self.goaway(c, PROTOCOL_ERROR)
        self.assertEqual(struct.unpack('>I', f.payload[:4])[0] & 0x7fffffff, 0)


class Http2_5_5_ExtendingHttp2(Case):
    def test_1_unknown_extension_frame_is_ignored(self):
        c = self.conn()
        c.send(raw(0x16, 0, 0, b'\0' * 8), ping_frame(b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)

    def test_2_unknown_extension_frame_inside_a_header_block_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), eh=False), raw(0x16, 0, 0, b'\0' * 8))
        self.goaway(c, PROTOCOL_ERROR)


class Http2_6_1_Data(Case):
    def test_1_data_on_stream_0_is_protocol_error(self):
        c = self.conn()
        c.send(raw(DATA, END_STREAM, 0, b'test'))
        self.goaway(c, PROTOCOL_ERROR)

    def test_2_data_on_a_half_closed_remote_stream_is_stream_closed(self):
        """RFC: stream error STREAM_CLOSED; nrfwd ends the connection."""
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST'))), data_frame(1, b'test'))
        self.goaway(c, STREAM_CLOSED)

    def test_3_data_with_invalid_pad_length_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST') + [('content-length', '4')]),
                             es=False),
               raw(DATA, END_STREAM | PADDED, 1, b'\x06Test'))
        self.goaway(c, PROTOCOL_ERROR)


class Http2_6_2_Headers(Case):
    def test_1_priority_after_headers_without_end_headers_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), es=False, eh=False),
               priority_frame(1), cont_frame(1, c.encode(c.dummy(1))))
        self.goaway(c, PROTOCOL_ERROR)

    def test_2_headers_of_another_stream_inside_a_header_block_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), es=False, eh=False),
               headers_frame(3, c.encode(c.common())), cont_frame(1, c.encode(c.dummy(1))))
        self.goaway(c, PROTOCOL_ERROR)

    def test_3_headers_on_stream_0_is_protocol_error(self):
        c = self.conn()
        c.send(raw(HEADERS, END_STREAM | END_HEADERS, 0, c.encode(c.common())))
        self.goaway(c, PROTOCOL_ERROR)

    def test_4_headers_with_invalid_pad_length_is_protocol_error(self):
        """RFC: PROTOCOL_ERROR (h2spec takes a stream or connection error);
        nrfwd (nghttp2) ends the connection."""
        c = self.conn()
        block = c.encode(c.common())
        c.send(raw(HEADERS, END_STREAM | END_HEADERS | PADDED, 1,
                   bytes([len(block) + 2]) + block))
        self.goaway(c, PROTOCOL_ERROR)


class Http2_6_3_Priority(Case):
    def test_1_priority_on_stream_0_is_protocol_error(self):
        """§6.3 (still a MUST in RFC 9113): the front pass ends the
        connection; nghttp2 skips PRIORITY frames once RFC 7540 priorities
        are off (SETTINGS_NO_RFC7540_PRIORITIES)."""
        c = self.conn()
        c.send(raw(PRIORITY, 0, 0, struct.pack('>IB', 0, 255)))
        self.goaway(c, PROTOCOL_ERROR)

    def test_2_priority_of_4_octets_is_frame_size_error(self):
        """RFC: stream error FRAME_SIZE_ERROR; nrfwd (nghttp2) ends the
        connection."""
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())), raw(PRIORITY, 0, 1, b'\x80\0\0\x01'))
        self.goaway(c, FRAME_SIZE_ERROR)

    def test_3_strict_priority_on_an_idle_stream_then_a_lower_stream_is_answered(self):
        c = self.conn()
        c.send(priority_frame(3), headers_frame(1, c.encode(c.common())))
        self.response(c, 1, 404)


class Http2_6_4_RstStream(Case):
    def test_1_rst_stream_on_stream_0_is_protocol_error(self):
        c = self.conn()
        c.send(raw(RST_STREAM, 0, 0, struct.pack('>I', CANCEL)))
        self.goaway(c, PROTOCOL_ERROR)

    def test_2_rst_stream_on_an_idle_stream_is_protocol_error(self):
        c = self.conn()
        c.send(rst_frame(1, CANCEL))
        self.goaway(c, PROTOCOL_ERROR)

    def test_3_rst_stream_of_3_octets_is_frame_size_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())), raw(RST_STREAM, 0, 1, b'\0\0\0'))
        self.goaway(c, FRAME_SIZE_ERROR)


class Http2_6_5_Settings(Case):
    def test_1_settings_ack_with_payload_is_frame_size_error(self):
        c = self.conn()
        c.send(raw(SETTINGS, ACK, 0, b'\0'))
        self.goaway(c, FRAME_SIZE_ERROR)

    def test_2_settings_on_stream_1_is_protocol_error(self):
        c = self.conn()
        c.send(raw(SETTINGS, 0, 1, b'\x00\x03\x00\x00\x00\x64'))
        self.goaway(c, PROTOCOL_ERROR)

    def test_3_settings_not_a_multiple_of_6_octets_is_frame_size_error(self):
        c = self.conn()
        c.send(raw(SETTINGS, 0, 0, b'\x00\x03\x00\x00\x00\x64\x00\x02\x00'))
        self.goaway(c, FRAME_SIZE_ERROR)


class Http2_6_5_2_DefinedSettings(Case):
    def test_1_enable_push_of_2_is_protocol_error(self):
        c = self.conn()
        c.send(settings_frame((ENABLE_PUSH, 2)))
        self.goaway(c, PROTOCOL_ERROR)

    def test_2_initial_window_size_over_2_31_minus_1_is_flow_control_error(self):
        c = self.conn()
        c.send(settings_frame((INITIAL_WINDOW_SIZE, 1 << 31)))
        self.goaway(c, FLOW_CONTROL_ERROR)

    def test_3_max_frame_size_below_16384_is_protocol_error(self):
        c = self.conn()
        c.send(settings_frame((MAX_FRAME_SIZE, 16383)))
        self.goaway(c, PROTOCOL_ERROR)

    def test_4_max_frame_size_over_2_24_minus_1_is_protocol_error(self):
        c = self.conn()
        c.send(settings_frame((MAX_FRAME_SIZE, 1 << 24)))
        self.goaway(c, PROTOCOL_ERROR)

    def test_5_unknown_setting_is_ignored(self):
        c = self.conn()
        c.send(settings_frame((0xff, 1)), ping_frame(b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)


class Http2_6_5_3_SettingsSynchronization(Case):
    def test_1_settings_values_apply_in_order(self):
        c = self.conn()
        c.send(settings_frame((INITIAL_WINDOW_SIZE, 100), (INITIAL_WINDOW_SIZE, 1)))
        self.settings_ack(c)
        c.send(headers_frame(1, c.encode(c.common())))
        self.assertEqual(self.data_len(c, 1), 1)

    def test_2_settings_are_acknowledged(self):
        c = self.conn()
        c.send(settings_frame((ENABLE_PUSH, 0)))
        self.settings_ack(c)


class Http2_6_7_Ping(Case):
    def test_1_ping_is_answered_with_the_same_data(self):
        c = self.conn()
        c.send(ping_frame(b'h2spec\0\0'))
        self.ping_ack(c, b'h2spec\0\0')

    def test_2_ping_ack_is_not_answered(self):
        c = self.conn()
        c.send(ping_frame(b'invalid\0', ack=True), ping_frame(b'h2spec\0\0'))
        self.ping_ack(c, b'h2spec\0\0')

    def test_3_ping_on_stream_1_is_protocol_error(self):
        c = self.conn()
        c.send(raw(PING, 0, 1, b'\0' * 8))
        self.goaway(c, PROTOCOL_ERROR)

    def test_4_ping_of_6_octets_is_a_connection_error(self):
        """The frame (6 octets, stream 1) breaks two rules: FRAME_SIZE_ERROR
        (§6.7 length, nghttp2 checks it first) or PROTOCOL_ERROR (stream)."""
        c = self.conn()
        c.send(raw(PING, 0, 1, b'\0' * 6))
        self.goaway(c, FRAME_SIZE_ERROR, PROTOCOL_ERROR)


class Http2_6_8_Goaway(Case):
    def test_1_goaway_on_stream_1_is_protocol_error(self):
        c = self.conn()
        c.send(raw(GOAWAY, 0, 1, b'\0' * 8))
        self.goaway(c, PROTOCOL_ERROR)


class Http2_6_9_WindowUpdate(Case):
    def test_1_connection_window_update_of_0_is_protocol_error(self):
        c = self.conn()
        c.send(window_update(0, 0))
        self.goaway(c, PROTOCOL_ERROR)

    def test_2_stream_window_update_of_0_is_protocol_error(self):
        """RFC: stream error PROTOCOL_ERROR; nrfwd (nghttp2) ends the
        connection."""
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), es=False), window_update(1, 0))
        self.goaway(c, PROTOCOL_ERROR)

    def test_3_window_update_of_3_octets_is_frame_size_error(self):
        c = self.conn()
        c.send(raw(WINDOW_UPDATE, 0, 0, b'\0\0\x01'))
        self.goaway(c, FRAME_SIZE_ERROR)


class Http2_6_9_1_FlowControlWindow(Case):
    def test_1_initial_window_of_1_gets_data_of_1_octet(self):
        c = self.conn()
        c.send(settings_frame((INITIAL_WINDOW_SIZE, 1)))
        self.settings_ack(c)
        c.send(headers_frame(1, c.encode(c.common())))
        self.assertEqual(self.data_len(c, 1), 1)

    def test_2_connection_window_over_2_31_minus_1_is_flow_control_error(self):
        c = self.conn()
        c.send(window_update(0, 0x7fffffff), window_update(0, 0x7fffffff))
        self.goaway(c, FLOW_CONTROL_ERROR)

    def test_3_stream_window_over_2_31_minus_1_is_stream_flow_control_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), es=False),
               window_update(1, 0x7fffffff), window_update(1, 0x7fffffff))
        self.rst(c, 1, FLOW_CONTROL_ERROR)


class Http2_6_9_2_InitialWindowSize(Case):
    def test_1_a_larger_initial_window_releases_data(self):
        c = self.conn()
        c.send(settings_frame((INITIAL_WINDOW_SIZE, 0)))
        self.settings_ack(c)
        c.send(headers_frame(1, c.encode(c.common())))
        c.send(settings_frame((INITIAL_WINDOW_SIZE, 1)))
        self.settings_ack(c)
        self.assertEqual(self.data_len(c, 1), 1)

    def test_2_a_negative_window_is_tracked(self):
        c = self.conn()
        c.send(settings_frame((INITIAL_WINDOW_SIZE, 3)))
        self.settings_ack(c)
        c.send(headers_frame(1, c.encode(c.common())))
        self.assertEqual(self.data_len(c, 1), 3)
        c.send(settings_frame((INITIAL_WINDOW_SIZE, 2)))  # window -1
        self.settings_ack(c)
        c.send(window_update(1, 2))                       # window 1
        self.assertEqual(self.data_len(c, 1), 1)

    def test_3_initial_window_over_2_31_minus_1_is_flow_control_error(self):
        c = self.conn()
        c.send(raw(SETTINGS, 0, 0, b'\x00\x04\x80\x00\x00\x00'))
        self.goaway(c, FLOW_CONTROL_ERROR)


class Http2_6_10_Continuation(Case):
    def test_1_multiple_continuation_frames_are_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), eh=False),
               cont_frame(1, c.encode(c.dummy(1)), eh=False),
               cont_frame(1, c.encode(c.dummy(1))))
        self.response(c, 1, 404)

    def test_2_data_after_an_unfinished_continuation_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False, eh=False),
               cont_frame(1, c.encode(c.dummy(1)), eh=False), data_frame(1, b'test'))
        self.goaway(c, PROTOCOL_ERROR)

    def test_3_continuation_on_stream_0_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), eh=False),
               raw(CONTINUATION, END_HEADERS, 0, c.encode(c.dummy(1))))
        self.goaway(c, PROTOCOL_ERROR)

    def test_4_continuation_after_end_headers_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())), cont_frame(1, c.encode(c.dummy(1))))
        self.goaway(c, PROTOCOL_ERROR)

    def test_5_continuation_after_a_finished_continuation_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), eh=False),
               cont_frame(1, c.encode(c.dummy(1))), cont_frame(1, c.encode(c.dummy(1))))
        self.goaway(c, PROTOCOL_ERROR)

    def test_6_continuation_after_data_is_protocol_error(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False, eh=False),
               data_frame(1, b'test'),
               cont_frame(1, c.encode(c.dummy(1)), eh=False),
               raw(CONTINUATION, END_HEADERS, 0, c.encode(c.dummy(1))))
        self.goaway(c, PROTOCOL_ERROR)


class Http2_7_ErrorCodes(Case):
    def test_1_goaway_with_an_unknown_code_just_closes(self):
        c = self.conn()
        c.send(goaway_frame(0, 0xff))
        self.closed(c)

    def test_2_rst_stream_with_an_unknown_code_is_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False), rst_frame(1, 0xff),
               ping_frame(b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)


class Http2_8_1_RequestResponseExchange(Case):
    def test_1_trailers_without_end_stream_are_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False),
               data_frame(1, b'test', es=False),
               headers_frame(1, c.encode([('x-test', 'ok')]), es=False))
        self.rst(c, 1, PROTOCOL_ERROR)


class Http2_8_1_2_HeaderFields(Case):
    def test_1_upper_case_field_name_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common() + [('X-TEST', 'ok')])))
        self.rst(c, 1, PROTOCOL_ERROR)


class Http2_8_1_2_1_PseudoHeaderFields(Case):
    def test_1_unknown_pseudo_header_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common() + [(':test', 'ok')])))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_2_response_pseudo_header_in_a_request_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common() + [(':status', '200')])))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_3_pseudo_header_in_trailers_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False),
               data_frame(1, b'test', es=False),
               headers_frame(1, c.encode([(':method', 'POST')]), es=False))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_4_pseudo_header_after_a_regular_field_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode([('x-test', 'ok')] + c.common())))
        self.rst(c, 1, PROTOCOL_ERROR)


class Http2_8_1_2_2_ConnectionSpecificFields(Case):
    def test_1_connection_field_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common() + [('connection', 'keep-alive')])))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_2_te_other_than_trailers_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common() + [('trailers', 'test'),
                                                       ('te', 'trailers, deflate')])))
        self.rst(c, 1, PROTOCOL_ERROR)


class Http2_8_1_2_3_RequestPseudoHeaderFields(Case):
    def _without(self, c, name):
        return [kv for kv in c.common() if kv[0] != name]

    def test_1_empty_path_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common(path=''))))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_2_missing_method_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(self._without(c, ':method'))))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_3_missing_scheme_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(self._without(c, ':scheme'))))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_4_missing_path_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(self._without(c, ':path'))))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_5_duplicated_method_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common() + [(':method', 'GET')])))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_6_duplicated_scheme_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common() + [(':scheme', 'http')])))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_7_duplicated_method_with_another_value_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common() + [(':method', '/')])))
        self.rst(c, 1, PROTOCOL_ERROR)


class Http2_8_1_2_6_MalformedRequests(Case):
    def test_1_content_length_other_than_the_data_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST') + [('content-length', '1')]),
                             es=False),
               data_frame(1, b'test'))
        self.rst(c, 1, PROTOCOL_ERROR)

    def test_2_content_length_other_than_several_data_frames_is_malformed(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST') + [('content-length', '1')]),
                             es=False),
               data_frame(1, b'test', es=False), data_frame(1, b'test'))
        self.rst(c, 1, PROTOCOL_ERROR)


class Http2_8_2_ServerPush(Case):
    def test_1_push_promise_from_a_client_is_protocol_error(self):
        c = self.conn()
        c.send(raw(PUSH_PROMISE, END_HEADERS, 1, struct.pack('>I', 3) + c.encode(c.common())))
        self.goaway(c, PROTOCOL_ERROR)


# ---------------------------------------------------------------------------
# hpack (RFC 7541): decoding errors are connection errors COMPRESSION_ERROR

class Hpack_Base(Case):
    def block_error(self, prefix=b'', suffix=b''):
        c = self.conn()
        c.send(headers_frame(1, prefix + c.encode(c.common()) + suffix))
        self.goaway(c, COMPRESSION_ERROR)


class Hpack_2_3_3_IndexAddressSpace(Hpack_Base):
    def test_1_index_beyond_both_tables_is_a_decoding_error(self):
        self.block_error(suffix=b'\xfe')


class Hpack_4_2_MaximumTableSize(Hpack_Base):
    def test_1_table_size_update_at_the_end_of_a_block_is_a_decoding_error(self):
        self.block_error(suffix=b'\x21')


class Hpack_5_2_StringLiterals(Hpack_Base):
    def test_1_huffman_padding_longer_than_7_bits_is_a_decoding_error(self):
        self.block_error(suffix=b'\x00\x85\xf2\xb2\x4a\x84\xff\x84\x49\x50\x9f\xff')

    def test_2_huffman_padding_of_zeros_is_a_decoding_error(self):
        self.block_error(suffix=b'\x00\x85\xf2\xb2\x4a\x84\xff\x83\x49\x50\x90')

    def test_3_huffman_eos_symbol_is_a_decoding_error(self):
        self.block_error(suffix=b'\x00\x85\xf2\xb2\x4a\x87\xff\xff\xff\xfd\x25\x42\x7f')


class Hpack_6_1_IndexedField(Hpack_Base):
    def test_1_index_0_is_a_decoding_error(self):
        self.block_error(suffix=b'\x80')


class Hpack_6_3_DynamicTableSizeUpdate(Hpack_Base):
    def test_1_size_update_over_settings_header_table_size_is_a_decoding_error(self):
        c = self.conn()
        size = c.settings.get(HEADER_TABLE_SIZE, 4096) + 1
        rep = bytearray()
        if size < 31:
            rep.append(0x20 | size)
        else:
            rep.append(0x20 | 31)
            size -= 31
            while size >= 128:
                rep.append(0x80 | (size & 0x7f))
                size >>= 7
            rep.append(size)
        c.send(headers_frame(1, bytes(rep) + c.encode(c.common())))
        self.goaway(c, COMPRESSION_ERROR)


# ---------------------------------------------------------------------------
# generic: what every server must accept

class Generic_1_StartingHttp2(Case):
    def test_1_server_preface_is_a_settings_frame_first(self):
        c = self.conn(handshake=False)
        c.send(PREFACE, settings_frame((INITIAL_WINDOW_SIZE, 65535)))
        f = c.next(WAIT)
        self.assertIsInstance(f, Frame, f)
        self.assertEqual((f.type, f.flags & ACK), (SETTINGS, 0), c.seen)


class Generic_2_StreamsAndMultiplexing(Case):
    def test_1_priority_on_an_idle_stream_is_accepted(self):
        c = self.conn()
        c.send(priority_frame(1), ping_frame(b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)

    def test_2_window_update_on_a_half_closed_remote_stream_is_accepted(self):
        c = self.conn()
        c.send(settings_frame((INITIAL_WINDOW_SIZE, 0)), headers_frame(1, c.encode(c.common())),
               window_update(1, 1))
        self.assertEqual(self.data_len(c, 1), 1)

    def test_3_priority_on_a_half_closed_remote_stream_is_accepted(self):
        c = self.conn()
        c.send(settings_frame((INITIAL_WINDOW_SIZE, 0)), headers_frame(1, c.encode(c.common())),
               priority_frame(1), window_update(1, 1))
        self.assertEqual(self.data_len(c, 1), 1)

    def test_4_rst_stream_on_a_half_closed_remote_stream_is_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())), rst_frame(1, CANCEL),
               ping_frame(b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)

    def test_5_priority_on_a_closed_stream_is_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())))
        self.stream_end(c, 1)
        c.send(priority_frame(1), ping_frame(b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)


class Generic_3_1_Data(Case):
    def test_1_data_frame_is_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False), data_frame(1, b'test'))
        self.response(c, 1, 404)

    def test_2_multiple_data_frames_are_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False),
               data_frame(1, b'test', es=False), data_frame(1, b'test'))
        self.response(c, 1, 404)

    def test_3_data_frame_with_padding_is_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False),
               raw(DATA, END_STREAM | PADDED, 1, b'\x06' + b'test' + b'padded'))
        self.response(c, 1, 404)


class Generic_3_2_Headers(Case):
    def test_1_headers_frame_is_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())))
        self.response(c, 1, 404)

    def test_2_headers_frame_with_padding_is_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), pad=8))
        self.response(c, 1, 404)

    def test_3_headers_frame_with_priority_is_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), prio=(0, 255, False)))
        self.response(c, 1, 404)


class Generic_3_3_Priority(Case):
    def test_1_priority_weight_1_is_accepted(self):
        c = self.conn()
        c.send(priority_frame(1, weight=0), headers_frame(1, c.encode(c.common())))
        self.response(c, 1, 404)

    def test_2_priority_weight_256_is_accepted(self):
        c = self.conn()
        c.send(priority_frame(1, weight=255), headers_frame(1, c.encode(c.common())))
        self.response(c, 1, 404)

    def test_3_priority_with_a_dependency_is_accepted(self):
        c = self.conn()
        c.send(priority_frame(3, dep=1, weight=0), headers_frame(1, c.encode(c.common())))
        self.response(c, 1, 404)

    def test_4_exclusive_priority_is_accepted(self):
        c = self.conn()
        c.send(priority_frame(1, weight=0, excl=True), headers_frame(1, c.encode(c.common())))
        self.response(c, 1, 404)

    def test_5_priority_on_an_idle_stream_then_a_lower_stream_is_answered(self):
        c = self.conn()
        c.send(priority_frame(3), headers_frame(1, c.encode(c.common())))
        self.response(c, 1, 404)


class Generic_3_4_RstStream(Case):
    def test_1_rst_stream_is_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common()), es=False), rst_frame(1, CANCEL),
               ping_frame(b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)


class Generic_3_5_Settings(Case):
    def test_1_settings_frame_is_acknowledged(self):
        c = self.conn()
        c.send(settings_frame((HEADER_TABLE_SIZE, 4096), (ENABLE_PUSH, 1),
                              (MAX_CONCURRENT_STREAMS, 100), (INITIAL_WINDOW_SIZE, 65535),
                              (MAX_FRAME_SIZE, 16384), (MAX_HEADER_LIST_SIZE, 100)))
        self.settings_ack(c)


class Generic_3_7_Ping(Case):
    def test_1_ping_is_answered(self):
        c = self.conn()
        c.send(ping_frame(b'h2spec\0\0'))
        self.ping_ack(c, b'h2spec\0\0')


class Generic_3_8_Goaway(Case):
    def test_1_goaway_is_accepted_and_the_connection_closed(self):
        c = self.conn()
        c.send(goaway_frame(0, NO_ERROR, b'h2spec'))
        self.closed(c)


class Generic_3_9_WindowUpdate(Case):
    def test_1_window_update_on_stream_0_is_accepted(self):
        c = self.conn()
        c.send(window_update(0, 1), ping_frame(b'\0' * 8))
        self.ping_ack(c, b'\0' * 8)

    def test_2_window_update_on_stream_1_is_accepted(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())), window_update(1, 1))
        self.response(c, 1, 404)


class Generic_3_10_Continuation(Case):
    def test_1_continuation_is_accepted(self):
        c = self.conn()
        block = c.encode(c.common())
        c.send(headers_frame(1, block[:5], eh=False), cont_frame(1, block[5:]))
        self.response(c, 1, 404)

    def test_2_multiple_continuation_frames_are_accepted(self):
        c = self.conn()
        block = c.encode(c.common())
        c.send(headers_frame(1, block[:5], eh=False), cont_frame(1, block[5:10], eh=False),
               cont_frame(1, block[10:]))
        self.response(c, 1, 404)


class Generic_4_HttpMessageExchanges(Case):
    def test_1_get_is_answered(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())))
        self.response(c, 1, 404)

    def test_2_head_is_answered(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('HEAD'))))
        self.response(c, 1)

    def test_3_post_is_answered(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False), data_frame(1, b'test'))
        self.response(c, 1, 404)

    def test_4_post_with_trailers_is_answered(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST') + [('trailer', 'x-test')]),
                             es=False),
               data_frame(1, b'test', es=False),
               headers_frame(1, c.encode([('x-test', 'ok')])))
        self.response(c, 1, 404)


class Generic_5_Hpack(Case):
    def accepted(self, rep, prefix=False):
        c = self.conn()
        block = c.encode(c.common())
        c.send(headers_frame(1, rep + block if prefix else block + rep))
        self.response(c, 1, 404)

    def test_01_indexed_field(self):
        self.accepted(b'\xba')

    def test_02_incremental_indexing_indexed_name(self):
        self.accepted(b'\x40\x87\xb5\x05\xb1\x61\xcc\x5a\x93\x84\x9c\x48\xac\xa4')

    def test_03_incremental_indexing_indexed_name_huffman(self):
        self.accepted(b'\x40\x0a\x75\x73\x65\x72\x2d\x61\x67\x65\x6e\x74'
                      b'\x06\x68\x32\x73\x70\x65\x63')

    def test_04_incremental_indexing_new_name(self):
        self.accepted(b'\x40\x06\x78\x2d\x74\x65\x73\x74\x06\x68\x32\x73\x70\x65\x63')

    def test_05_incremental_indexing_new_name_huffman(self):
        self.accepted(b'\x40\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4')

    def test_06_without_indexing_indexed_name(self):
        self.accepted(b'\x00\x0a\x75\x73\x65\x72\x2d\x61\x67\x65\x6e\x74'
                      b'\x06\x68\x32\x73\x70\x65\x63')

    def test_07_without_indexing_indexed_name_huffman(self):
        self.accepted(b'\x00\x87\xb5\x05\xb1\x61\xcc\x5a\x93\x84\x9c\x48\xac\xa4')

    def test_08_without_indexing_new_name(self):
        self.accepted(b'\x00\x06\x78\x2d\x74\x65\x73\x74\x06\x68\x32\x73\x70\x65\x63')

    def test_09_without_indexing_new_name_huffman(self):
        self.accepted(b'\x00\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4')

    def test_10_never_indexed_indexed_name(self):
        self.accepted(b'\x10\x0a\x75\x73\x65\x72\x2d\x61\x67\x65\x6e\x74'
                      b'\x06\x68\x32\x73\x70\x65\x63')

    def test_11_never_indexed_indexed_name_huffman(self):
        self.accepted(b'\x10\x87\xb5\x05\xb1\x61\xcc\x5a\x93\x84\x9c\x48\xac\xa4')

    def test_12_never_indexed_new_name(self):
        self.accepted(b'\x10\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4')

    def test_13_never_indexed_new_name_huffman(self):
        self.accepted(b'\x10\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4')

    def test_14_dynamic_table_size_update(self):
        self.accepted(b'\x20', prefix=True)

    def test_15_two_dynamic_table_size_updates(self):
        self.accepted(b'\x20\x3f\xe1\x1f', prefix=True)


# ---------------------------------------------------------------------------
# The front pass beyond h2spec: what it must answer, and what it must leave
# alone (frames a well-behaved client can still send).

class FrontPass(Case):
    def test_data_after_nrfwd_reset_the_stream_is_ignored(self):
        """RFC 9113 §5.1: frames that arrive after our RST_STREAM must be
        ignored (the client may have sent them before it saw the reset)."""
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST') + [('content-length', '1')]),
                             es=False),
               data_frame(1, b'test', es=False))
        self.rst(c, 1, PROTOCOL_ERROR)
        c.send(data_frame(1, b'more', es=False), data_frame(1, b'end'))
        self.alive(c)
        self.quiet(c, lambda f: f.type in (GOAWAY, RST_STREAM), 'reset again')
        c.send(headers_frame(3, c.encode(c.common())))
        self.response(c, 3, 404)

    def test_trailers_after_nrfwd_reset_the_stream_are_ignored(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST') + [('content-length', '1')]),
                             es=False),
               data_frame(1, b'test', es=False))
        self.rst(c, 1, PROTOCOL_ERROR)
        c.send(headers_frame(1, c.encode([('x-test', 'ok')])))
        self.alive(c)
        c.send(headers_frame(3, c.encode(c.common())))
        self.response(c, 3, 404)

    def test_priority_depending_on_itself_resets_an_open_stream_unanswered(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False),
               priority_frame(1, dep=1), data_frame(1, b'test'))
        self.rst(c, 1, PROTOCOL_ERROR)
        self.quiet(c, lambda f: f.sid == 1 and f.type in (HEADERS, DATA), 'answered')

    def test_trailers_depending_on_themselves_reset_the_stream_unanswered(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False),
               data_frame(1, b'test', es=False),
               headers_frame(1, c.encode([('x-test', 'ok')]), prio=(1, 16, False)))
        self.rst(c, 1, PROTOCOL_ERROR)
        self.quiet(c, lambda f: f.sid == 1 and f.type in (HEADERS, DATA), 'answered')

    def test_data_on_a_stream_id_the_client_skipped_is_stream_closed(self):
        c = self.conn()
        c.send(headers_frame(5, c.encode(c.common('POST')), es=False), data_frame(3, b'test'))
        self.goaway(c, STREAM_CLOSED)

    def test_frame_headers_split_across_reads_are_followed(self):
        """5.1.1/2 and 5.1/8 sent a few bytes at a time: every frame header
        and PRIORITY payload is cut between two reads of nrfwd."""
        c = self.conn()
        payload = headers_frame(5, c.encode(c.common())) + \
            headers_frame(7, c.encode(c.common('POST')), es=False) + rst_frame(7, CANCEL) + \
            priority_frame(9) + data_frame(7, b'test')
        for i in range(0, len(payload), 4):
            c.send(payload[i:i + 4])
            time.sleep(0.002)
        self.rst(c, 7, STREAM_CLOSED)
        c.send(headers_frame(3, c.encode(c.common())))
        self.goaway(c, PROTOCOL_ERROR)

    def test_many_streams_on_one_connection_are_all_answered(self):
        """Stream ids well past the pass's window of remembered streams."""
        c = self.conn()
        block = c.encode(c.common())
        sid = 1
        for _ in range(3):
            ids = list(range(sid, sid + 200, 2))
            c.send(b''.join(headers_frame(i, block) for i in ids))
            for i in ids:
                self.stream_end(c, i)
            sid += 200
        c.send(data_frame(sid - 2, b'late'))  # a stream that is closed and remembered
        self.goaway(c, STREAM_CLOSED)

    def test_a_stream_older_than_the_window_is_forgotten_and_ignored(self):
        """Memory per connection is bounded: a frame on a stream more than
        128 streams behind the newest one is left to nghttp2, which drops it."""
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common())))
        self.stream_end(c, 1)
        c.send(headers_frame(1001, c.encode(c.common())))
        self.stream_end(c, 1001)
        c.send(data_frame(1, b'late'))
        self.alive(c)

    def test_client_cancel_then_new_streams_keep_working(self):
        c = self.conn()
        c.send(headers_frame(1, c.encode(c.common('POST')), es=False), rst_frame(1, CANCEL),
               headers_frame(3, c.encode(c.common())))
        self.response(c, 3, 404)
        self.alive(c)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
