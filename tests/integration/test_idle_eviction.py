#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""At runtime.limits.maxConnections, connections without work give way to a
newcomer (docs/decisions/0054-idle-connections-give-way-at-max-connections.md),
on kernel sockets.

Usage: python3 tests/integration/test_idle_eviction.py [--build-dir BUILD] [unittest args]

- 1200 idle connections (bare TCP, preface + SETTINGS, preface + SETTINGS +
  ACK) against maxConnections 1000 with timeouts far away (the attack at its
  worst): a well-behaved client started after them (h2load, then one curl
  connection per request) is served >= 99 %; the evictions are counted in
  nrfwd_connections_evicted_total and none is refused; the connections that
  gave way are the oldest ones whose handshake was not done.
- The order, with maxConnections 4: handshake not done first (a bare TCP
  connection is just closed, one that sent its SETTINGS gets GOAWAY), then
  the one idle the longest, which gets GOAWAY(NO_ERROR) naming the last
  stream it had processed.
- TLS: a connection whose TLS handshake never started, or that sent no
  preface inside TLS, is just closed; an idle one gets its GOAWAY inside TLS.
- A connection with a stream in flight (an answer held back by nrfstub's
  delay fault, a request body still arriving) is never evicted and gets its
  answer; with every connection holding a stream, the newcomer is refused
  with GOAWAY(0, NO_ERROR) as before.

Raw clients are test_timeouts.Raw (frames written by hand, HPACK decoded by
Debian's python3-hpack); the DPDK subset (tests/dpdk/
test_nrfwd_dpdk_eviction.py) runs the same scenarios (idle_crowd(), served())
inside a network namespace.
"""

import json
import os
import resource
import selectors
import socket
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402
import test_timeouts as T  # noqa: E402  (Raw, frames, request blocks)
from h2frames import (  # noqa: E402
    ACK, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, NO_ERROR, PREFACE, SETTINGS, frame)

SELF = T.SELF
PATH = T.PROFILE + T.ID_AMF1  # answered 200 by the local stub
WHY = b'connection limit reached'
# Far away: nothing here is closed by a timeout.
FAR = {'handshakeMs': 60000, 'idleMs': 60000, 'requestHeaderMs': 60000,
       'requestBodyMs': 60000, 'perTryMs': 5000, 'requestMs': 8000}
KINDS = ('bare', 'preface', 'idle')  # idle: preface, SETTINGS and our SETTINGS acknowledged


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(n, 4096)), hard))


def open_crowd(host, port, n):
    """@n connections that open no stream, kinds in turn (KINDS): a list of
    (kind, socket) in the order they were opened (and accepted)."""
    crowd = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        s = socket.create_connection((host, port), timeout=5)
        if kind == 'preface':
            s.sendall(PREFACE + frame(SETTINGS, 0, 0))
        elif kind == 'idle':  # nrfwd's SETTINGS went out at accept
            s.sendall(PREFACE + frame(SETTINGS, 0, 0) + frame(SETTINGS, ACK, 0))
        crowd.append((kind, s))
    return crowd


def closed_by_server(crowd, quiet=1.0, limit=10.0):
    """Indexes of the crowd's connections nrfwd closed (EOF or reset), read
    until nothing new came for @quiet s (@limit at most); what each one
    received is kept: {index: bytes}."""
    sel = selectors.DefaultSelector()
    for i, (_, s) in enumerate(crowd):
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
    got = {}
    closed = set()
    end = time.monotonic() + limit
    last = time.monotonic()
    while time.monotonic() < end and time.monotonic() - last < quiet:
        for key, _ in sel.select(timeout=0.1):
            i = key.data
            try:
                d = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                d = b''
            last = time.monotonic()
            if d:
                got[i] = got.get(i, b'') + d
            else:
                closed.add(i)
                sel.unregister(key.fileobj)
    sel.close()
    return closed, got


def frames_of(data):
    """(type, flags, stream, payload) of each whole frame in @data."""
    out = []
    while len(data) >= 9:
        ln = struct.unpack('>I', b'\0' + data[:3])[0]
        if len(data) < 9 + ln:
            break
        out.append((data[3], data[4], struct.unpack('>I', data[5:9])[0] & 0x7fffffff,
                    data[9:9 + ln]))
        data = data[9 + ln:]
    return out


def goaway_of(data):
    for ft, _, _, p in frames_of(data):
        if ft == GOAWAY:
            last, code = struct.unpack('>II', p[:8])
            return last & 0x7fffffff, code, p[8:]
    return None


def idle_crowd(host, port, n, clients, url, h2load_n=1000, curls=100, curl_prefix=(),
               h2load=None):
    """The scenario of the 1200-connection test, as a dict of figures (also
    run inside a namespace by the DPDK test): @n idle connections, then
    h2load with @clients connections; then the crowd fills the room h2load
    left and @curls requests follow, each on a connection of its own after
    one more bare connection of the crowd (so each meets a full server);
    then what became of the crowd (its first @n: 'closed', indexes in
    opening order; the rest: 'refills_closed')."""
    crowd = open_crowd(host, port, n)
    out = {'opened': n}
    try:
        time.sleep(0.3)  # nrfwd has read what they sent
        r = (h2load or H.h2load)(url, n=h2load_n, c=clients, m=1, timeout=60)
        out['h2load_ok'] = r.get('status_2xx', 0)
        out['h2load_n'] = h2load_n
        time.sleep(0.2)  # h2load's connections are gone
        refills = [('bare', socket.create_connection((host, port), timeout=5))
                   for _ in range(clients)]
        ok = 0
        for _ in range(curls):
            refills.append(('bare', socket.create_connection((host, port), timeout=5)))
            st, _, _ = H.curl(url, timeout=5, prefix=curl_prefix)
            ok += st == 200
        out['curl_ok'] = ok
        out['curls'] = curls
        crowd += refills
        closed, got = closed_by_server(crowd)
        out['refills_closed'] = sum(1 for i in closed if i >= n)
        closed = {i for i in closed if i < n}
        out['closed'] = sorted(closed)
        out['closed_kinds'] = {k: sum(1 for i in closed if crowd[i][0] == k) for k in KINDS}
        # those whose handshake was not done gave way oldest first: the
        # closed ones among them are the first ones opened
        pending = [i for i in range(n) if crowd[i][0] != 'idle']
        k = sum(1 for i in pending if i in closed)
        out['oldest_first'] = set(pending[:k]) == {i for i in pending if i in closed}
        g = [goaway_of(got.get(i, b'')) for i in closed if crowd[i][0] == 'preface']
        out['preface_goaways'] = sorted({(x[0], x[1], x[2].decode('latin-1')) if x else None
                                         for x in g}, key=str)
    finally:
        for _, s in crowd:
            s.close()
    return out


def request_block(method, path, extra=()):
    return T.request_block(method, path, extra)


class Crowd(unittest.TestCase):
    """1200 idle connections against maxConnections 1000 (one worker)."""

    @classmethod
    def setUpClass(cls):
        raise_nofile(3000)  # before nrfwd starts: it inherits the hard limit
        cls.h = H.Harness(prefix='nrfwd-evict-')
        try:
            cls.local = cls.h.start_stub('local', 'stub-profiles-a.json')
            cfg = H.nrfwd_config(SELF, local=cls.local.port, timeouts=FAR,
                                 limits={'maxConnections': 1000})
            cls.fwd = cls.h.start_nrfwd(cfg, management=True)
        except Exception:
            cls.h.cleanup(dump=True)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.h.cleanup(dump=bool(os.environ.get('NRFWD_TEST_LOGS')))

    def test_1200_idle_connections_give_way_to_a_client_started_after_them(self):
        m0 = H.metrics(self.fwd)
        t0 = time.monotonic()
        clients, curls = 50, 100
        o = idle_crowd('127.0.0.1', self.fwd.port, 1200, clients, self.fwd.url(PATH),
                       h2load_n=1000, curls=curls)
        took = time.monotonic() - t0
        m = H.metrics(self.fwd)

        def delta(name, **labels):
            return H.metric_value(m, name, **labels) - H.metric_value(m0, name, **labels)

        served = (o['h2load_ok'] + o['curl_ok']) / float(o['h2load_n'] + o['curls'])
        ev = {r: delta('nrfwd_connections_evicted_total', reason=r) for r in ('handshake', 'idle')}
        sys.stderr.write('\n  1200 idle connections, maxConnections 1000: a client started '
                         'after them served %.1f %% (h2load %d/%d on %d connections, curl %d/%d '
                         'each on its own); evicted %s, refused %d; %.1f s\n' % (
                             100.0 * served, o['h2load_ok'], o['h2load_n'], clients, o['curl_ok'],
                             o['curls'], ev, delta('nrfwd_connections_refused_total'), took))
        self.assertGreaterEqual(served, 0.99)
        # one eviction per connection over the limit: 200 of the crowd,
        # then each of h2load's connections, then each curl (and a refill
        # that came before nrfwd saw the last curl's connection close);
        # every one a connection whose handshake was not done (the crowd
        # has 800 of them), none refused
        least = 200 + clients + curls
        total = ev['handshake'] + ev['idle']
        self.assertEqual(delta('nrfwd_connections_refused_total'), 0)
        self.assertGreaterEqual(total, least)
        self.assertLessEqual(total, least + curls)
        self.assertEqual(ev['handshake'], total)
        # those that gave way are the crowd's oldest: none of its last half
        closed = o['closed']
        self.assertEqual(len(closed) + o['refills_closed'], total,
                         'crowd connections closed by nrfwd')
        self.assertEqual(o['refills_closed'], 0, 'a refill gave way before older ones')
        self.assertTrue(o['oldest_first'], 'a newer connection gave way before an older one')
        self.assertLess(max(closed), 600, 'a connection of the newer half gave way')
        self.assertEqual(o['closed_kinds']['idle'], 0)
        # one that had sent its SETTINGS was told (GOAWAY), a bare one just closed
        self.assertEqual(o['preface_goaways'], [(0, NO_ERROR, WHY.decode())])
        self.assertEqual(H.metric_value(m, 'nrfwd_answer_violations_total'), 0)
        self.assertTrue(self.fwd.alive())


class Order(unittest.TestCase):
    """maxConnections 4 (one worker): who gives way, and who never does."""

    @classmethod
    def setUpClass(cls):
        cls.h = H.Harness(prefix='nrfwd-evict4-')
        try:
            cls.local = cls.h.start_stub('local', 'stub-profiles-a.json')
            cfg = H.nrfwd_config(SELF, local=cls.local.port, timeouts=FAR,
                                 limits={'maxConnections': 4})
            cls.fwd = cls.h.start_nrfwd(cfg, management=True)
        except Exception:
            cls.h.cleanup(dump=True)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.h.cleanup(dump=bool(os.environ.get('NRFWD_TEST_LOGS')))

    def setUp(self):
        self.conns = []
        self.m0 = H.metrics(self.fwd)
        self.wait_open(0)

    def tearDown(self):
        H.stub_fault(self.local.port, 'none')
        for c in self.conns:
            c.close()
        self.assertTrue(self.fwd.alive(), self.fwd.log()[-3000:])

    def delta(self, name, **labels):
        return (H.metric_value(H.metrics(self.fwd), name, **labels) -
                H.metric_value(self.m0, name, **labels))

    def wait_open(self, n, timeout=5.0):
        """Until nrfwd holds @n front connections (the last test's are gone)."""
        end = time.monotonic() + timeout
        while True:
            got = H.metric_value(H.metrics(self.fwd), 'nrfwd_connections_open')
            if got == n or time.monotonic() > end:
                return got
            time.sleep(0.05)

    def raw(self, kind, request=None):
        """A connection: 'bare' (TCP only), 'preface' (preface and SETTINGS,
        ours not acknowledged) or 'h2' (handshake done; with @request, a
        GET of it on stream 1, or the frames given)."""
        c = T.Raw(self.fwd.port, ack=(kind == 'h2'))
        self.conns.append(c)
        if kind == 'bare':
            return c
        c.handshake()
        if isinstance(request, str):
            c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block('GET', request)))
        elif request is not None:
            c.send(request)
        time.sleep(0.1)  # nrfwd has read it
        return c

    def test_handshake_not_done_first_then_the_one_idle_longest(self):
        a = self.raw('h2', PATH)   # answered: idle from then on, last stream 1
        self.assertTrue(a.read(lambda r: r.find(DATA, 1) and r.find(DATA, 1)[1] & END_STREAM))
        b = self.raw('bare')
        c = self.raw('h2')         # idle after a
        d = self.raw('preface')    # SETTINGS sent, ours not acknowledged
        # four newcomers, each served and left open (idle, newest): b,
        # then d give way (handshake not done, in accept order), then a,
        # then c (idle the longest first)
        news = []
        left = [a, b, c, d]
        for victim in (b, d, a, c):
            n = self.raw('h2', PATH)
            self.assertTrue(n.read(lambda r: r.find(DATA, 1) and r.find(DATA, 1)[1] & END_STREAM),
                            'a newcomer was not served')
            self.assertEqual(n.status(1), 200)
            news.append(n)
            victim.read(lambda r: r.closed, timeout=3)
            self.assertTrue(victim.closed, 'the oldest without work did not give way')
            left.remove(victim)
            for x in left:
                x.read(lambda r: r.closed, timeout=0.2)
                self.assertFalse(x.closed, 'a newer one gave way first')
        self.assertTrue(b.closed and b.goaway() is None, b.frames)  # just closed
        self.assertEqual(d.goaway()[:3], (0, NO_ERROR, WHY))
        self.assertEqual(a.goaway()[:3], (1, NO_ERROR, WHY))  # its last stream
        self.assertEqual(c.goaway()[:3], (0, NO_ERROR, WHY))
        self.assertEqual(self.delta('nrfwd_connections_evicted_total', reason='handshake'), 2)
        self.assertEqual(self.delta('nrfwd_connections_evicted_total', reason='idle'), 2)
        self.assertEqual(self.delta('nrfwd_connections_refused_total'), 0)
        for n in news:
            self.assertFalse(n.closed)
        # evicted ones no longer count; the gauge counts them until closed
        self.assertEqual(self.wait_open(4), 4)

    def test_a_stream_in_flight_is_never_evicted_and_a_newcomer_is_refused_when_all_work(self):
        H.stub_fault(self.local.port, 'delay', 1500)
        held = self.raw('h2', PATH)  # the oldest; its answer held 1.5 s upstream
        body = self.raw('h2', frame(HEADERS, END_HEADERS, 1, request_block(
            'POST', '/oauth2/token', [('content-type', 'application/x-www-form-urlencoded'),
                                      ('content-length', '20')])) +
            frame(DATA, 0, 1, b'grant_type=clie'))  # the rest comes later
        i1 = self.raw('h2')
        i2 = self.raw('h2')
        n1 = self.raw('h2', PATH)  # evicts i1
        n2 = self.raw('h2', PATH)  # evicts i2
        for x in (i1, i2):
            x.read(lambda r: r.closed, timeout=3)
            self.assertEqual(x.goaway()[:3], (0, NO_ERROR, WHY))
        # every connection has a stream now: the newcomer is refused
        t_refused = time.monotonic()
        r = T.Raw(self.fwd.port)
        self.conns.append(r)
        r.handshake()
        r.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block('GET', PATH)))
        r.read(lambda x: x.closed, timeout=3)
        self.assertEqual(r.goaway()[:2], (0, NO_ERROR))
        self.assertIsNone(r.find(HEADERS), 'the refused connection processed a stream')
        self.assertLess(time.monotonic() - t_refused, 1.4, 'refused only once the delay ended')
        # the body ends: every held stream gets its answer
        body.send(frame(DATA, END_STREAM, 1, b'ntial'))
        for x in (held, n1, n2, body):
            self.assertTrue(x.read(lambda q: q.find(HEADERS, 1) is not None, timeout=5),
                            'no answer: %s' % x.frames)
            self.assertFalse(x.closed and x.find(HEADERS, 1) is None)
        self.assertEqual([x.status(1) for x in (held, n1, n2)], [200, 200, 200])
        self.assertIsNotNone(body.status(1))
        for x in (held, body, n1, n2):
            self.assertIsNone(x.goaway(), 'a connection with work was told to go')
        self.assertEqual(self.delta('nrfwd_connections_evicted_total', reason='idle'), 2)
        self.assertEqual(self.delta('nrfwd_connections_refused_total'), 1)


class Tls(unittest.TestCase):
    """maxConnections 3 on a TLS listener: the TLS handshake is part of the
    connection's handshake."""

    @classmethod
    def setUpClass(cls):
        cls.h = H.Harness(prefix='nrfwd-evict-tls-')
        try:
            d = cls.h.tmpdir
            subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                            'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'k.pem', '-out',
                            'c.pem', '-days', '2', '-subj', '/CN=' + SELF,
                            '-addext', 'subjectAltName=DNS:%s,IP:127.0.0.1' % SELF],
                           cwd=d, check=True, capture_output=True, stdin=subprocess.DEVNULL)
            cls.local = cls.h.start_stub('local', 'stub-profiles-a.json')
            cfg = H.nrfwd_config(SELF, local=cls.local.port, timeouts=FAR,
                                 limits={'maxConnections': 3})
            cfg['runtime']['listen'][0]['tls'] = True
            cfg['runtime']['tls'] = {'certFile': os.path.join(d, 'c.pem'),
                                     'keyFile': os.path.join(d, 'k.pem')}
            cls.fwd = cls.h.start_nrfwd(cfg, management=True)
        except Exception:
            cls.h.cleanup(dump=True)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.h.cleanup(dump=bool(os.environ.get('NRFWD_TEST_LOGS')))

    def test_tls_handshake_not_done_goes_first_bare_then_idle_gets_goaway_inside_tls(self):
        m0 = H.metrics(self.fwd)
        conns = []
        try:
            tcp = socket.create_connection(('127.0.0.1', self.fwd.port), timeout=5)
            conns.append(tcp)                       # TLS never started
            quiet = T.Raw(self.fwd.port, ack=False, tls=True)
            conns.append(quiet)                     # TLS up, no preface
            used = T.Raw(self.fwd.port, tls=True)  # served, then idle
            conns.append(used)
            used.handshake()
            used.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block('GET', PATH)))
            self.assertTrue(used.read(lambda r: r.find(HEADERS, 1)))
            time.sleep(0.1)
            for victim in ('tcp', 'quiet', 'used'):
                n = T.Raw(self.fwd.port, tls=True)
                conns.append(n)
                n.handshake()
                n.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block('GET', PATH)))
                self.assertTrue(n.read(lambda r: r.find(HEADERS, 1)), victim)
                self.assertEqual(n.status(1), 200)
                if victim == 'tcp':
                    tcp.settimeout(3)
                    try:
                        self.assertEqual(tcp.recv(4096), b'')  # no TLS, not one byte
                    except ConnectionResetError:
                        pass
                elif victim == 'quiet':
                    quiet.read(lambda r: r.closed, timeout=3)
                    self.assertTrue(quiet.closed)
                    self.assertIsNone(quiet.goaway())  # no preface: nothing to tell
                else:
                    used.read(lambda r: r.closed, timeout=3)
                    self.assertTrue(used.closed)
                    self.assertEqual(used.goaway()[:3], (1, NO_ERROR, WHY))
            m = H.metrics(self.fwd)
            for reason, n in (('handshake', 2), ('idle', 1)):
                self.assertEqual(
                    H.metric_value(m, 'nrfwd_connections_evicted_total', reason=reason) -
                    H.metric_value(m0, 'nrfwd_connections_evicted_total', reason=reason), n)
        finally:
            for c in conns:
                c.close()
        self.assertTrue(self.fwd.alive())


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
