#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""runtime.timeouts: nothing a client or peer holds open is kept for ever
(docs/config.md, "Timeouts"; counted in nrfwd_timeouts_total{reason}).

Usage: python3 tests/integration/test_timeouts.py [--build-dir BUILD] [unittest args]

nrfwd runs with timeouts of a few hundred milliseconds in front of nrfstub
upstreams on loopback; raw HTTP/2 clients (frames built here, HPACK decoded
with Debian's python3-hpack, which comes with python3-h2) do what curl and
h2load never do: connect and say nothing, send half a request, stop reading.
"""

import json
import os
import resource
import socket
import ssl
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

try:
    import hpack  # noqa: E402
except ImportError:  # a pyenv python3 without Debian's packages
    sys.path.append('/usr/lib/python3/dist-packages')
    import hpack  # noqa: E402

SELF = 'nrf-a.test'
from h2frames import (  # noqa: E402,F401 (frame numbers and raw frames: one copy)
    ACK, CANCEL, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, NO_ERROR, PING, PREFACE,
    RST_STREAM, SETTINGS, SETTINGS_TIMEOUT, WINDOW_UPDATE, frame)
ID_AMF1 = '5a1f0b6e-6f0a-4c1e-9a01-0000000a0001'  # only at the local stub
ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at peer stub "e"
ID_BIG = '5a1f0b6e-6f0a-4c1e-9a01-00000000b16b'   # a 2 MB profile, local stub
PROFILE = '/nnrf-nfm/v1/nf-instances/'

# Short timeouts: the sweep runs every 75 ms (a quarter of the shortest).
TMO = {'handshakeMs': 300, 'requestHeaderMs': 300, 'requestBodyMs': 500,
       'idleMs': 400, 'stalledReaderMs': 500, 'upstreamIdleMs': 400}
SLACK = 1.5  # seconds beyond a timeout within which it must have acted


def request_block(method, path, extra=()):
    enc = hpack.Encoder()
    return enc.encode([(':method', method), (':scheme', 'http'), (':authority', SELF),
                       (':path', path)] + list(extra))


class Raw:
    """A raw HTTP/2 client: frames out, frames in (HPACK decoded)."""

    def __init__(self, port, ack=True, tls=False, host='127.0.0.1'):
        self.s = socket.create_connection((host, port), timeout=5)
        if tls:  # h2 over TLS; the test certificate is not checked
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_alpn_protocols(['h2'])
            self.s = ctx.wrap_socket(self.s, server_hostname=SELF)
        self.buf = b''
        self.ack = ack
        self.frames = []
        self.closed = False
        self.dec = hpack.Decoder()
        self.t0 = time.monotonic()

    def send(self, data):
        self.s.sendall(data)

    def handshake(self, settings=b''):
        """Preface and SETTINGS; with @ack, wait for nrfwd's SETTINGS and
        acknowledge them (a client that does it late meets handshakeMs)."""
        self.send(PREFACE + frame(SETTINGS, 0, 0, settings))
        if self.ack:
            self.read(lambda r: r.find(SETTINGS))

    def read(self, until, timeout=5.0):
        """Read until until(self) holds or the connection closes; True if it held."""
        end = time.monotonic() + timeout
        while not until(self):
            if self.closed or time.monotonic() > end:
                return until(self)
            self.s.settimeout(max(0.01, min(0.2, end - time.monotonic())))
            try:
                d = self.s.recv(65536)
            except socket.timeout:
                continue
            except (ConnectionResetError, ssl.SSLError):
                d = b''
            if not d:
                self.closed = True
                self.t_closed = time.monotonic()
                continue
            self.buf += d
            while len(self.buf) >= 9:
                ln = struct.unpack('>I', b'\0' + self.buf[:3])[0]
                if len(self.buf) < 9 + ln:
                    break
                ft, fl = self.buf[3], self.buf[4]
                sid = struct.unpack('>I', self.buf[5:9])[0] & 0x7fffffff
                p = self.buf[9:9 + ln]
                self.buf = self.buf[9 + ln:]
                hdrs = self.dec.decode(p) if ft == HEADERS else None
                self.frames.append((ft, fl, sid, p, hdrs, time.monotonic()))
                if ft == SETTINGS and not fl & ACK and self.ack:
                    self.send(frame(SETTINGS, ACK, 0))
        return True

    def find(self, ftype, sid=None):
        for f in self.frames:
            if f[0] == ftype and (sid is None or f[2] == sid):
                return f
        return None

    def goaway(self):
        """(last stream id, error code, debug data, time) of the first GOAWAY."""
        f = self.find(GOAWAY)
        if f is None:
            return None
        last, code = struct.unpack('>II', f[3][:8])
        return last & 0x7fffffff, code, f[3][8:], f[5]

    def status(self, sid):
        f = self.find(HEADERS, sid)
        return int(dict(f[4])[':status']) if f else None

    def close(self):
        self.s.close()


def write_big_profiles(path):
    """stub-profiles-a.json plus one profile of about 2 MB (ID_BIG)."""
    with open(H.conf('stub-profiles-a.json')) as f:
        doc = json.load(f)
    doc['nfProfiles'].append({'nfInstanceId': ID_BIG, 'nfType': 'AMF', 'nfStatus': 'REGISTERED',
                              'blob': 'x' * 2000000})
    with open(path, 'w') as f:
        json.dump(doc, f)


def stub_stats(stub):
    st, _, body = H.curl(stub.url('/_stub/stats'))
    assert st == 200, st
    return json.loads(body)


class Timeouts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.h = H.Harness(prefix='nrfwd-tmo-')
        big = os.path.join(cls.h.tmpdir, 'profiles-big.json')
        write_big_profiles(big)
        cls.local = cls.h.start_stub('local', big)
        cls.peer = cls.h.start_stub('nrf-e', 'stub-profiles-e.json')
        cfg = H.nrfwd_config(SELF, local=cls.local.port,
                             peers=[H.peer('nrf-e.test', cls.peer.port)],
                             timeouts=TMO, limits={'maxConnections': 1000})
        cls.nrfwd = cls.h.start_nrfwd(cfg, management=True)

    @classmethod
    def tearDownClass(cls):
        cls.h.cleanup(dump=bool(os.environ.get('NRFWD_TEST_LOGS')))

    def setUp(self):
        self.before = H.metrics(self.nrfwd)

    def tearDown(self):
        self.assertTrue(self.nrfwd.alive(), self.nrfwd.log())

    def counted(self, reason):
        """nrfwd_timeouts_total{reason} since setUp()."""
        m = H.metrics(self.nrfwd)
        return (H.metric_value(m, 'nrfwd_timeouts_total', reason=reason) -
                H.metric_value(self.before, 'nrfwd_timeouts_total', reason=reason))

    def assertWithin(self, elapsed, ms):
        self.assertGreaterEqual(elapsed, ms / 1000.0 - 0.02)
        self.assertLess(elapsed, ms / 1000.0 + SLACK)

    def test_silent_tcp_connection_is_closed_at_the_handshake_timeout(self):
        c = Raw(self.nrfwd.port, ack=False)
        c.read(lambda r: False, timeout=TMO['handshakeMs'] / 1000.0 + SLACK + 1)
        self.assertTrue(c.closed)
        self.assertWithin(c.t_closed - c.t0, TMO['handshakeMs'])
        g = c.goaway()  # cleartext: nrfwd's SETTINGS, then a GOAWAY, then FIN
        self.assertIsNotNone(g)
        self.assertEqual(g[:3], (0, NO_ERROR, b'handshake timeout'))
        self.assertEqual(self.counted('handshake'), 1)
        c.close()

    def test_unacknowledged_settings_end_with_goaway_settings_timeout(self):
        c = Raw(self.nrfwd.port, ack=False)
        c.handshake()
        c.read(lambda r: r.closed, timeout=TMO['handshakeMs'] / 1000.0 + SLACK + 1)
        self.assertTrue(c.closed)
        self.assertEqual(c.goaway()[1], SETTINGS_TIMEOUT)
        self.assertEqual(self.counted('handshake'), 1)
        c.close()

    def test_preface_only_connection_gets_goaway_no_error_at_the_idle_timeout(self):
        c = Raw(self.nrfwd.port)
        c.handshake()
        c.read(lambda r: r.closed, timeout=TMO['idleMs'] / 1000.0 + SLACK + 1)
        self.assertTrue(c.closed)
        last, code, why, at = c.goaway()
        self.assertEqual((last, code, why), (0, NO_ERROR, b'idle timeout'))
        self.assertWithin(at - c.t0, TMO['idleMs'])
        self.assertEqual(self.counted('idle'), 1)
        self.assertEqual(self.counted('handshake'), 0)
        c.close()

    def test_idle_connection_after_a_request_reports_its_last_stream(self):
        c = Raw(self.nrfwd.port)
        c.handshake()
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block('GET', PROFILE + ID_AMF1)))
        self.assertTrue(c.read(lambda r: r.find(DATA, 1) and r.find(DATA, 1)[1] & END_STREAM))
        t = time.monotonic()
        c.read(lambda r: r.closed, timeout=TMO['idleMs'] / 1000.0 + SLACK + 1)
        self.assertEqual(c.status(1), 200)
        last, code, _, at = c.goaway()
        self.assertEqual((last, code), (1, NO_ERROR))
        self.assertWithin(at - t, TMO['idleMs'])
        c.close()

    def test_1200_idle_connections_do_not_lock_out_a_real_client(self):
        """maxConnections 1000: 1200 connections that never speak. Those
        beyond the limit take the place of the oldest (closed at once,
        test_idle_eviction.py), the others are closed at the handshake
        timeout, and a real client is served right after."""
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < 1400:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
        socks = []
        try:
            t0 = time.monotonic()
            for _ in range(1200):
                socks.append(socket.create_connection(('127.0.0.1', self.nrfwd.port),
                                                      timeout=5))
            opened = time.monotonic() - t0
            served = None
            deadline = time.monotonic() + TMO['handshakeMs'] / 1000.0 + SLACK + 2
            while time.monotonic() < deadline:
                st, _, _ = H.curl(self.nrfwd.url(PROFILE + ID_AMF1), timeout=2)
                if st == 200:
                    served = time.monotonic() - t0
                    break
                time.sleep(0.05)
            self.assertIsNotNone(served, 'no request served')
            self.assertLess(served, opened + TMO['handshakeMs'] / 1000.0 + SLACK)
            sys.stderr.write('\n  1200 idle connections opened in %.2f s; a client served '
                             '%.2f s after the first\n' % (opened, served))
            # every one of them was closed by nrfwd (refused or timed out)
            closed = 0
            for s in socks:
                s.settimeout(TMO['handshakeMs'] / 1000.0 + SLACK)
                try:
                    while s.recv(65536):
                        pass
                    closed += 1
                except ConnectionResetError:
                    closed += 1
                except socket.timeout:
                    pass
            self.assertEqual(closed, 1200)
        finally:
            for s in socks:
                s.close()
        m = H.metrics(self.nrfwd)
        refused = (H.metric_value(m, 'nrfwd_connections_refused_total') -
                   H.metric_value(self.before, 'nrfwd_connections_refused_total'))
        evicted = (H.metric_value(m, 'nrfwd_connections_evicted_total', reason='handshake') -
                   H.metric_value(self.before, 'nrfwd_connections_evicted_total',
                                  reason='handshake'))
        # each one gave way to a newer one over the limit, or timed out (the
        # first ones may time out before the last are accepted, leaving room
        # for some of those; on a slow host all 1200 may open over more than
        # one handshake timeout, and then none need give way); none has a
        # stream, so none is refused
        if opened < TMO['handshakeMs'] / 1000.0:
            self.assertGreater(evicted, 0)
        self.assertEqual(refused, 0)
        self.assertGreaterEqual(self.counted('handshake'), 1000 - 1)
        self.assertGreaterEqual(self.counted('handshake') + evicted, 1200)

    def test_body_that_never_arrives_gets_408_then_reset_no_error(self):
        c = Raw(self.nrfwd.port)
        c.handshake()
        c.send(frame(HEADERS, END_HEADERS, 1,
                     request_block('POST', '/oauth2/token',
                                   [('content-type', 'application/x-www-form-urlencoded'),
                                    ('content-length', '1000')])) +
               frame(DATA, 0, 1, b'grant_type'))
        t = time.monotonic()
        self.assertTrue(c.read(lambda r: r.find(RST_STREAM, 1),
                               timeout=TMO['requestBodyMs'] / 1000.0 + SLACK + 1))
        hd = c.find(HEADERS, 1)
        self.assertEqual(c.status(1), 408)
        self.assertWithin(hd[5] - t, TMO['requestBodyMs'])
        self.assertEqual(dict(hd[4])['content-type'], 'application/problem+json')
        body = b''.join(f[3] for f in c.frames if f[0] == DATA and f[2] == 1)
        self.assertEqual(json.loads(body)['status'], 408)
        rst = c.find(RST_STREAM, 1)
        self.assertEqual(struct.unpack('>I', rst[3])[0], NO_ERROR)
        self.assertGreater(rst[5], hd[5])  # after the answer
        self.assertIsNone(c.goaway())  # the connection stays
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 3, request_block('GET', PROFILE + ID_AMF1)))
        self.assertTrue(c.read(lambda r: r.find(HEADERS, 3)))
        self.assertEqual(c.status(3), 200)
        self.assertEqual(self.counted('body'), 1)
        m = H.metrics(self.nrfwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_requests_total', operation='AccessToken',
                                        outcome='request_timeout') -
                         H.metric_value(self.before, 'nrfwd_requests_total',
                                        operation='AccessToken', outcome='request_timeout'), 1)
        c.close()

    def test_many_posts_whose_bodies_never_come_are_all_answered(self):
        """20 connections x 16 POSTs (content-length 1000, 10 bytes sent):
        every stream gets its 408 within the body timeout."""
        conns = []
        for _ in range(20):
            c = Raw(self.nrfwd.port)
            c.handshake()
            blk = b''
            for i in range(16):
                blk += frame(HEADERS, END_HEADERS, 2 * i + 1,
                             request_block('POST', '/oauth2/token',
                                           [('content-length', '1000')]))
                blk += frame(DATA, 0, 2 * i + 1, b'0123456789')
            c.send(blk)
            conns.append(c)
        t = time.monotonic()
        for c in conns:
            self.assertTrue(c.read(lambda r: len({f[2] for f in r.frames if f[0] == RST_STREAM})
                                   == 16, timeout=TMO['requestBodyMs'] / 1000.0 + SLACK + 2))
            self.assertEqual({c.status(2 * i + 1) for i in range(16)}, {408})
        self.assertLess(time.monotonic() - t, TMO['requestBodyMs'] / 1000.0 + SLACK + 1)
        self.assertEqual(self.counted('body'), 320)
        for c in conns:
            c.close()

    def test_header_block_that_never_ends_closes_the_connection(self):
        c = Raw(self.nrfwd.port)
        c.handshake()
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block('GET', PROFILE + ID_AMF1)))
        self.assertTrue(c.read(lambda r: r.find(HEADERS, 1)))
        blk = request_block('GET', PROFILE + ID_AMF1)
        c.send(frame(HEADERS, END_STREAM, 3, blk[:8]))  # no END_HEADERS, no CONTINUATION
        t = time.monotonic()
        c.read(lambda r: r.closed, timeout=TMO['requestHeaderMs'] / 1000.0 + SLACK + 1)
        self.assertTrue(c.closed)
        last, code, why, at = c.goaway()
        self.assertEqual((last, code, why), (1, NO_ERROR, b'header timeout'))
        self.assertWithin(at - t, TMO['requestHeaderMs'])
        self.assertEqual(self.counted('header'), 1)
        c.close()

    def test_client_that_stops_reading_is_reset_and_the_upstream_stream_cancelled(self):
        """A 2 MB answer to a client whose stream window stays at 0: the front
        stream is reset (CANCEL) after stalledReaderMs, and so is the stream
        to the local NRF (which had filled its 256 KiB window and waits)."""
        c = Raw(self.nrfwd.port)
        c.handshake(struct.pack('>HI', 0x4, 0))  # SETTINGS_INITIAL_WINDOW_SIZE = 0
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block('GET', PROFILE + ID_BIG)))
        self.assertTrue(c.read(lambda r: r.find(HEADERS, 1)))
        t = c.find(HEADERS, 1)[5]
        self.assertEqual(c.status(1), 200)
        self.assertEqual(stub_stats(self.local)['streams_active'] - 1, 1)  # held upstream
        self.assertTrue(c.read(lambda r: r.find(RST_STREAM, 1),
                               timeout=TMO['stalledReaderMs'] / 1000.0 + SLACK + 1))
        rst = c.find(RST_STREAM, 1)
        self.assertEqual(struct.unpack('>I', rst[3])[0], CANCEL)
        self.assertWithin(rst[5] - t, TMO['stalledReaderMs'])
        self.assertIsNone(c.find(DATA, 1))
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and stub_stats(self.local)['streams_active'] > 1:
            time.sleep(0.05)
        self.assertEqual(stub_stats(self.local)['streams_active'] - 1, 0)  # cancelled
        self.assertEqual(self.counted('stalled_reader'), 1)
        # the connection itself is fine
        c.send(frame(SETTINGS, 0, 0, struct.pack('>HI', 0x4, 65535)) +
               frame(HEADERS, END_HEADERS | END_STREAM, 3, request_block('GET', PROFILE + ID_AMF1)))
        self.assertTrue(c.read(lambda r: r.find(HEADERS, 3)))
        self.assertEqual(c.status(3), 200)
        c.close()

    def test_idle_upstream_connections_are_closed_but_the_local_nrf_keeps_one(self):
        # NFProfileRetrieval of a profile only the peer has: local 404, then the peer
        st, _, _ = H.curl(self.nrfwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200)
        deadline = time.monotonic() + TMO['upstreamIdleMs'] / 1000.0 + SLACK + 1
        while time.monotonic() < deadline and self.counted('upstream_idle') < 1:
            time.sleep(0.05)
        time.sleep(0.2)
        self.assertGreaterEqual(self.counted('upstream_idle'), 1)  # the peer's
        # this stats request is the stub's only connection: nrfwd's is gone
        self.assertEqual(stub_stats(self.peer)['connections']['active'], 1)
        # the local NRF's last connection stays (and still serves)
        self.assertEqual(stub_stats(self.local)['connections']['active'], 2)
        st, _, _ = H.curl(self.nrfwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200)  # a new connection to the peer

    def test_timeouts_change_live(self):
        st, _, doc = H.api(self.nrfwd, 'PATCH', '/nrf-configuration/v1/runtime',
                           {'timeouts': {'idleMs': 60000}})
        self.assertEqual(st, 200, doc)
        try:
            self.assertEqual(doc['timeouts']['idleMs'], 60000)
            time.sleep(0.3)
            c = Raw(self.nrfwd.port)
            c.handshake()
            c.read(lambda r: r.closed, timeout=TMO['idleMs'] / 1000.0 + 1.0)
            self.assertFalse(c.closed)  # no longer 400 ms
            self.assertIsNone(c.goaway())
            c.close()
        finally:
            st, _, doc = H.api(self.nrfwd, 'PATCH', '/nrf-configuration/v1/runtime',
                               {'timeouts': {'idleMs': TMO['idleMs']}})
            self.assertEqual(st, 200, doc)
        time.sleep(0.3)
        c = Raw(self.nrfwd.port)
        c.handshake()
        c.read(lambda r: r.closed, timeout=TMO['idleMs'] / 1000.0 + SLACK + 1)
        self.assertTrue(c.closed)
        c.close()


class TimeoutsTls(unittest.TestCase):
    """handshakeMs on a TLS listener: the TLS handshake counts in it."""

    @classmethod
    def setUpClass(cls):
        cls.h = H.Harness(prefix='nrfwd-tmo-tls-')
        d = cls.h.tmpdir
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                        'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem',
                        '-days', '2', '-subj', '/CN=' + SELF,
                        '-addext', 'subjectAltName=DNS:%s,IP:127.0.0.1' % SELF],
                       cwd=d, check=True, capture_output=True, stdin=subprocess.DEVNULL)
        cls.local = cls.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config(SELF, local=cls.local.port, timeouts=TMO)
        cfg['runtime']['listen'][0]['tls'] = True
        cfg['runtime']['tls'] = {'certFile': os.path.join(d, 'c.pem'),
                                 'keyFile': os.path.join(d, 'k.pem')}
        cls.nrfwd = cls.h.start_nrfwd(cfg, management=True)

    @classmethod
    def tearDownClass(cls):
        cls.h.cleanup(dump=bool(os.environ.get('NRFWD_TEST_LOGS')))

    def handshakes(self):
        return H.metric_value(H.metrics(self.nrfwd), 'nrfwd_timeouts_total', reason='handshake')

    def test_tcp_connection_that_never_starts_tls_is_closed_bare(self):
        before = self.handshakes()
        s = socket.create_connection(('127.0.0.1', self.nrfwd.port), timeout=5)
        t = time.monotonic()
        s.settimeout(TMO['handshakeMs'] / 1000.0 + SLACK + 1)
        self.assertEqual(s.recv(4096), b'')  # not one byte: no TLS, no frame
        self.assertLess(time.monotonic() - t, TMO['handshakeMs'] / 1000.0 + SLACK)
        self.assertGreaterEqual(time.monotonic() - t, TMO['handshakeMs'] / 1000.0 - 0.02)
        s.close()
        self.assertEqual(self.handshakes() - before, 1)

    def test_tls_without_a_preface_gets_goaway_inside_tls(self):
        before = self.handshakes()
        c = Raw(self.nrfwd.port, ack=False, tls=True)
        self.assertEqual(c.s.selected_alpn_protocol(), 'h2')
        c.read(lambda r: r.closed, timeout=TMO['handshakeMs'] / 1000.0 + SLACK + 1)
        self.assertTrue(c.closed)
        self.assertEqual(c.goaway()[:3], (0, NO_ERROR, b'handshake timeout'))
        c.close()
        self.assertEqual(self.handshakes() - before, 1)

    def test_tls_client_that_speaks_http2_is_served_and_then_idles_out(self):
        c = Raw(self.nrfwd.port, tls=True)
        c.handshake()
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block('GET', PROFILE + ID_AMF1)))
        self.assertTrue(c.read(lambda r: r.find(HEADERS, 1)))
        self.assertEqual(c.status(1), 200)
        c.read(lambda r: r.closed, timeout=TMO['idleMs'] / 1000.0 + SLACK + 1)
        self.assertEqual(c.goaway()[:2], (1, NO_ERROR))
        c.close()

    def test_tls_connection_error_ends_with_goaway_then_close_notify(self):
        # A CONTINUATION flood over TLS: GOAWAY(ENHANCE_YOUR_CALM), then
        # close_notify and FIN at once (the write side shut while the
        # input is drained), though the client goes on sending
        c = Raw(self.nrfwd.port, tls=True)
        c.handshake()
        c.send(frame(HEADERS, END_STREAM, 1, request_block('GET', PROFILE + ID_AMF1)) +
               b''.join(frame(9, 0, 1) for _ in range(1000)))  # CONTINUATION
        self.assertTrue(c.read(lambda r: r.find(GOAWAY)))
        t0 = time.monotonic()
        try:
            c.send(b''.join(frame(9, 0, 1) for _ in range(100)))
        except OSError:
            pass
        c.read(lambda r: r.closed, timeout=3)
        self.assertTrue(c.closed)
        self.assertLess(c.t_closed - t0, 0.2)  # lingering: 0.5 s
        self.assertEqual(c.goaway()[:2], (1, 0xb))
        c.close()


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
