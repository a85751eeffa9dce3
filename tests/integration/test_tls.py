#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of TLS on both legs of nrfwd (docs/tls.md).

Usage: python3 tests/integration/test_tls.py [--build-dir BUILD] [unittest args]

Certificates are made at test time with the openssl command in a temp dir:
a CA, server certificates for nrf-a.test / nrf-e.test / nrf-f.test (also
valid for 127.0.0.1), a client certificate, one for a wrong name and one
that has expired. The https upstream is a second nrfwd with a TLS listener
in front of an nrfstub (nrfstub speaks h2c only). Clients: curl --http2 over
https, h2load over https, openssl s_client.
"""

import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

try:
    import h2.connection
    import h2.events
except ImportError:  # python3 may be an interpreter without Debian's packages
    sys.path.append('/usr/lib/python3/dist-packages')
    import h2.connection  # noqa: E402
    import h2.events  # noqa: E402

ID_AMF1 = '5a1f0b6e-6f0a-4c1e-9a01-0000000a0001'  # only at stub "a" (local)
ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at stub "e" (peer)
SELF = 'nrf-a.test'
PROFILE = '/nnrf-nfm/v1/nf-instances/'
DISC_UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF'

CERTS = None


def _ossl(*args, cwd):
    subprocess.run(['openssl'] + list(args), cwd=cwd, check=True,
                   stdin=subprocess.DEVNULL, capture_output=True)


def _leaf(d, name, cn, sans, days='2', client=False):
    _ossl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
          '-keyout', name + '.key', '-out', name + '.csr', '-subj', '/CN=' + cn, cwd=d)
    with open(os.path.join(d, name + '.ext'), 'w') as f:
        if sans:
            f.write('subjectAltName=%s\n' % ','.join(sans))
        f.write('extendedKeyUsage=%s\n' % ('clientAuth' if client else 'serverAuth'))
    _ossl('x509', '-req', '-in', name + '.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key',
          '-CAcreateserial', '-out', name + '.pem', '-days', days,
          '-extfile', name + '.ext', cwd=d)
    return os.path.join(d, name + '.pem'), os.path.join(d, name + '.key')


def make_certs(d):
    """CA + leaves in @d; returns a dict name -> (cert, key) and 'ca'."""
    _ossl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
          '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=nrfwd test CA',
          cwd=d)
    c = {'ca': os.path.join(d, 'ca.pem')}
    for n in ('nrf-a.test', 'nrf-e.test', 'nrf-f.test'):
        c[n] = _leaf(d, n, n, ['DNS:' + n, 'IP:127.0.0.1'])
    c['client'] = _leaf(d, 'client', 'amf-1.test', [], client=True)
    c['wrong'] = _leaf(d, 'wrong', 'nrf-x.test', ['DNS:nrf-x.test'])
    c['expired'] = _leaf(d, 'expired', 'nrf-e.test', ['DNS:nrf-e.test'], days='0')
    # a key that belongs to no certificate here
    _ossl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256',
          '-out', 'other.key', cwd=d)
    c['other_key'] = os.path.join(d, 'other.key')
    return c


def setUpModule():
    global CERTS
    d = tempfile.mkdtemp(prefix='nrfwd-tls-certs-')
    CERTS = make_certs(d)
    CERTS['dir'] = d
    time.sleep(1.1)  # the "expired" certificate is valid for 0 days


def tearDownModule():
    if CERTS:
        shutil.rmtree(CERTS['dir'], ignore_errors=True)


def curl_tls(url, headers=(), opts=(), timeout=10.0):
    """curl --http2 over https with the test CA: (rc, status, body, stderr)."""
    with tempfile.TemporaryDirectory(prefix='curl-') as d:
        bfile = os.path.join(d, 'b')
        cmd = ['curl', '-s', '-S', '-o', bfile, '-w', '%{http_code} %{http_version}',
               '--max-time', str(timeout), '--cacert', CERTS['ca']] + list(opts)
        for h in headers:
            cmd += ['-H', h]
        cmd.append(url)
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout + 5)
        out = r.stdout.decode().split()
        status = int(out[0]) if out and out[0].isdigit() else 0
        body = b''
        if os.path.exists(bfile):
            with open(bfile, 'rb') as f:
                body = f.read()
        return r.returncode, status, body, r.stderr.decode('utf-8', 'replace'), \
            (out[1] if len(out) > 1 else '')


def h2_get(s, authority, path, conn=None):
    """GET @path over the TLS socket @s with python-h2 (a new connection, or
    @conn, an H2Connection already used on @s): (status, body)."""
    if conn is None:
        conn = h2.connection.H2Connection()
        conn.initiate_connection()
    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(':method', 'GET'), (':scheme', 'https'),
                            (':authority', authority), (':path', path)], end_stream=True)
    s.sendall(conn.data_to_send())
    status, body, ended = None, b'', False
    deadline = time.monotonic() + 10
    while not ended and time.monotonic() < deadline:
        data = s.recv(65536)
        if not data:
            break
        for ev in conn.receive_data(data):
            if isinstance(ev, h2.events.ResponseReceived) and ev.stream_id == sid:
                status = dict((k.decode() if isinstance(k, bytes) else k,
                               v.decode() if isinstance(v, bytes) else v)
                              for k, v in ev.headers)[':status']
            elif isinstance(ev, h2.events.DataReceived) and ev.stream_id == sid:
                body += ev.data
                conn.acknowledge_received_data(ev.flow_controlled_length, sid)
            elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id == sid:
                ended = True
        s.sendall(conn.data_to_send())
    return status, body


def tls_listen(cfg, name):
    """Turn @cfg's listener into a TLS one with the certificate of @name."""
    cfg['runtime']['listen'][0]['tls'] = True
    cert, key = CERTS[name]
    cfg['runtime']['tls'] = {'certFile': cert, 'keyFile': key}
    return cfg


def tls_client(cfg, client_cert=False):
    tc = {'caFile': CERTS['ca']}
    if client_cert:
        tc['certFile'], tc['keyFile'] = CERTS['client']
    cfg['runtime']['tlsClient'] = tc
    return cfg


class Base(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness()

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed or bool(os.environ.get('NRFWD_TEST_LOGS')))

    def url(self, proc, path):
        return 'https://%s:%d%s' % (SELF, proc.port, path)

    def resolve(self, proc):
        return ['--resolve', '%s:%d:127.0.0.1' % (SELF, proc.port)]

    def https_peer(self, fqdn, cert_name, stub_profiles='stub-profiles-e.json',
                   verify_client=False, priority=1):
        """nrfwd `fqdn` with a TLS listener (certificate @cert_name) in front
        of an nrfstub; returns (nrfwd proc, stub proc, peer entry)."""
        stub = self.h.start_stub(fqdn.split('.')[0], stub_profiles)
        cfg = H.nrfwd_config(fqdn, local=stub.port)
        tls_listen(cfg, cert_name)
        if verify_client:
            cfg['runtime']['tls'].update({'verifyClient': True, 'caFile': CERTS['ca']})
        fwd = self.h.start_nrfwd(cfg, name='nrfwd-' + fqdn.split('.')[0])
        return fwd, stub, H.peer(fqdn, fwd.port, scheme='https', priority=priority)

    def front(self, peers=(), local=True, client_cert=False, cfg_tls=None, **kw):
        """nrfwd A with a TLS listener, local stub a (h2c) and @peers;
        @cfg_tls: more runtime.tls settings."""
        loc = self.h.start_stub('local', 'stub-profiles-a.json') if local else None
        cfg = H.nrfwd_config(SELF, local=loc.port if loc else None, peers=peers, **kw)
        tls_listen(cfg, SELF)
        cfg['runtime']['tls'].update(cfg_tls or {})
        tls_client(cfg, client_cert)
        return self.h.start_nrfwd(cfg), loc


class TestTlsFront(Base):
    def test_curl_http2_over_https_is_relayed_from_the_local_nrf(self):
        a, _ = self.front()
        rc, st, body, err, ver = curl_tls(self.url(a, PROFILE + ID_AMF1), opts=['--http2'] +
                                          self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)
        self.assertEqual(ver, '2')
        self.assertEqual(json.loads(body)['nfInstanceId'], ID_AMF1)

    def test_client_offering_other_protocols_is_refused_with_alert_120(self):
        a, _ = self.front()
        rc, st, _, err, _ = curl_tls(self.url(a, PROFILE + ID_AMF1),
                                     opts=['--http1.1'] + self.resolve(a))
        self.assertNotEqual(rc, 0)
        self.assertEqual(st, 0)
        r = subprocess.run(['openssl', 's_client', '-connect', '127.0.0.1:%d' % a.port,
                            '-alpn', 'http/1.1', '-CAfile', CERTS['ca']],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
        self.assertIn('no application protocol', r.stdout.decode() + r.stderr.decode())
        # the listener still serves h2 clients
        rc, st, _, err, _ = curl_tls(self.url(a, PROFILE + ID_AMF1),
                                     opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)

    def test_client_without_alpn_completes_the_handshake_and_is_served_h2(self):
        a, _ = self.front()
        # openssl s_client offering no ALPN: the handshake completes
        r = subprocess.run(['openssl', 's_client', '-connect', '127.0.0.1:%d' % a.port,
                            '-servername', SELF, '-CAfile', CERTS['ca'], '-brief'],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
        out = (r.stdout + r.stderr).decode('utf-8', 'replace')  # h2 frames too
        self.assertNotIn('no application protocol', out)
        self.assertRegex(out, r'Protocol version: TLSv1\.3')
        self.assertIn('Verification: OK', out)
        # a raw client without ALPN speaks h2 on it and is answered
        ctx = ssl.create_default_context(cafile=CERTS['ca'])
        with socket.create_connection(('127.0.0.1', a.port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname=SELF) as s:
                self.assertIsNone(s.selected_alpn_protocol())
                status, body = h2_get(s, '%s:%d' % (SELF, a.port), PROFILE + ID_AMF1)
                self.assertEqual(status, '200')
                self.assertEqual(json.loads(body)['nfInstanceId'], ID_AMF1)

    def test_testssl_scan(self):
        """Debian's testssl.sh (when installed) audits the listener: the
        protocols and ciphers it reports offered."""
        testssl = shutil.which('testssl') or shutil.which('testssl.sh')
        if testssl is None:
            self.skipTest('testssl.sh is not installed (Debian package testssl.sh)')
        a, _ = self.front()
        out = os.path.join(self.h.tmpdir, 'testssl.json')
        t0 = time.monotonic()
        r = subprocess.run([testssl, '--quiet', '--color', '0', '--warnings', 'off',
                            '--jsonfile', out, '-p', '-e', '127.0.0.1:%d' % a.port],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=300)
        sys.stderr.write('testssl.sh: %.0f s\n' % (time.monotonic() - t0))
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-2000:])
        with open(out) as f:
            found = {x['id']: x['finding'] for x in json.load(f)}
        for proto in ('SSLv2', 'SSLv3', 'TLS1', 'TLS1_1'):
            self.assertEqual(found.get(proto), 'not offered', proto)
        for proto in ('TLS1_2', 'TLS1_3'):
            self.assertTrue(found.get(proto, '').startswith('offered'), (proto, found))
        self.assertEqual(found.get('ALPN_HTTP2'), 'h2')
        ciphers = sorted(v.split()[1] for k, v in found.items() if k.startswith('cipher_x'))
        self.assertEqual(ciphers, sorted([
            'ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384',
            'ECDHE-ECDSA-CHACHA20-POLY1305', 'TLS_AES_128_GCM_SHA256',
            'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']))

    def offered(self, a, version, cipher_opt, names):
        """The names of @names a client offering only one of them at a time
        (TLS @version) gets a handshake with."""
        ok = []
        for n in names:
            r = subprocess.run(['openssl', 's_client', '-connect', '127.0.0.1:%d' % a.port,
                                '-servername', SELF, version, cipher_opt, n, '-alpn', 'h2',
                                '-brief'], stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=10)
            out = (r.stdout + r.stderr).decode('utf-8', 'replace')
            if 'Ciphersuite: ' + n in out:
                ok.append(n)
        return ok

    def test_protocols_and_ciphers_offered(self):
        """What a TLS scanner sees: TLS 1.2 and 1.3 only, and in TLS 1.2
        ECDHE with AEAD only (no CBC, no static RSA) by default; the
        "ciphers" setting replaces that default."""
        a, _ = self.front()
        for v, ok in (('-tls1', False), ('-tls1_1', False), ('-tls1_2', True),
                      ('-tls1_3', True)):
            r = subprocess.run(['openssl', 's_client', '-connect', '127.0.0.1:%d' % a.port,
                                '-servername', SELF, v, '-alpn', 'h2', '-brief'],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
            out = (r.stdout + r.stderr).decode('utf-8', 'replace')
            self.assertEqual('Ciphersuite:' in out, ok, (v, out))
        names = subprocess.run(['openssl', 'ciphers', '-tls1_2', '-s', 'ALL:COMPLEMENTOFALL'],
                               capture_output=True, text=True).stdout.strip().split(':')
        names = [n for n in names if n and 'PSK' not in n and 'SRP' not in n]
        self.assertGreater(len(names), 20)
        got = self.offered(a, '-tls1_2', '-cipher', names)
        # the certificate is ECDSA: the ECDHE-ECDSA AEAD suites
        self.assertEqual(sorted(got), sorted(['ECDHE-ECDSA-AES128-GCM-SHA256',
                                              'ECDHE-ECDSA-AES256-GCM-SHA384',
                                              'ECDHE-ECDSA-CHACHA20-POLY1305']), got)
        tls13 = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384',
                 'TLS_CHACHA20_POLY1305_SHA256']
        self.assertEqual(self.offered(a, '-tls1_3', '-ciphersuites', tls13), tls13)
        # configurable: a CBC suite when the operator asks for it
        self.h.cleanup()
        b, _ = self.front(cfg_tls={'ciphers': 'ECDHE-ECDSA-AES128-SHA'})
        self.assertEqual(self.offered(b, '-tls1_2', '-cipher', names),
                         ['ECDHE-ECDSA-AES128-SHA'])

    def test_tls12_and_tls13_are_both_accepted(self):
        a, _ = self.front()
        for v in (['--tlsv1.2', '--tls-max', '1.2'], ['--tlsv1.3']):
            rc, st, _, err, _ = curl_tls(self.url(a, PROFILE + ID_AMF1),
                                         opts=['--http2'] + v + self.resolve(a))
            self.assertEqual((rc, st), (0, 200), (v, err))

    def test_h2load_over_https(self):
        a, _ = self.front()
        r = H.h2load('https://127.0.0.1:%d%s' % (a.port, PROFILE + ID_AMF1),
                     n=2000, c=8, m=8)
        self.assertEqual(r.get('succeeded'), 2000, r['raw'])
        self.assertEqual(r.get('status_2xx'), 2000, r['raw'])


class TestMutualTls(Base):
    def front_mtls(self):
        loc = self.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config(SELF, local=loc.port)
        tls_listen(cfg, SELF)
        cfg['runtime']['tls'].update({'verifyClient': True, 'caFile': CERTS['ca']})
        return self.h.start_nrfwd(cfg)

    def test_client_certificate_is_accepted(self):
        a = self.front_mtls()
        cert, key = CERTS['client']
        rc, st, _, err, _ = curl_tls(self.url(a, PROFILE + ID_AMF1),
                                     opts=['--http2', '--cert', cert, '--key', key] +
                                     self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)

    def test_client_without_certificate_is_refused(self):
        a = self.front_mtls()
        rc, st, _, err, _ = curl_tls(self.url(a, PROFILE + ID_AMF1),
                                     opts=['--http2'] + self.resolve(a))
        self.assertNotEqual(rc, 0)
        self.assertEqual(st, 0)
        self.assertIn('handshake with client', a.log())

    def test_forwarding_to_an_mtls_peer_uses_the_client_certificate(self):
        e, _, pe = self.https_peer('nrf-e.test', 'nrf-e.test', verify_client=True)
        a, _ = self.front(peers=[pe], client_cert=True)
        rc, st, body, err, _ = curl_tls(self.url(a, PROFILE + ID_UDM1),
                                        opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)
        self.assertEqual(json.loads(body)['nfInstanceId'], ID_UDM1)


class TestTlsForwarding(Base):
    """The seed's scenarios with TLS on both legs of every nrfwd."""

    def test_forward_to_https_peer_with_via(self):
        e, stub_e, pe = self.https_peer('nrf-e.test', 'nrf-e.test')
        a, _ = self.front(peers=[pe])
        rc, st, body, err, _ = curl_tls(self.url(a, DISC_UDM),
                                        opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)
        self.assertTrue(json.loads(body)['nfInstances'])
        recs = H.stub_requests(stub_e.port)
        self.assertEqual(len(recs), 1)
        via = ','.join(v for k, v in recs[0]['headers'] if k == 'via')
        self.assertEqual(via, '2.0 nrf-a.test:%d' % a.port)
        # a second request goes over the pooled TLS connection
        rc, st, _, err, _ = curl_tls(self.url(a, PROFILE + ID_UDM1),
                                     opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)
        self.assertEqual(len(H.stub_requests(stub_e.port)), 2)

    def test_loop_detection_over_tls_answers_508(self):
        a, loc = self.front()
        rc, st, body, err, _ = curl_tls(
            self.url(a, PROFILE + ID_AMF1),
            headers=['Via: 2.0 nrf-x.test:80, 2.0 nrf-a.test:%d' % a.port],
            opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 508), err)
        self.assertEqual(json.loads(body)['cause'], 'LOOP_DETECTED')
        self.assertEqual(H.stub_requests(loc.port), [])

    def test_loop_prevention_over_tls_skips_the_peer_in_via(self):
        e, stub_e, pe = self.https_peer('nrf-e.test', 'nrf-e.test', priority=1)
        f, stub_f, pf = self.https_peer('nrf-f.test', 'nrf-f.test', priority=2)
        a, _ = self.front(peers=[pe, pf])
        rc, st, body, err, _ = curl_tls(
            self.url(a, DISC_UDM),
            headers=['Via: 2.0 nrf-e.test:%d' % e.port],
            opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)
        self.assertEqual(H.stub_requests(stub_e.port), [])
        self.assertEqual(len(H.stub_requests(stub_f.port)), 1)

    def test_every_peer_in_via_gives_loop_prevention_508(self):
        e, _, pe = self.https_peer('nrf-e.test', 'nrf-e.test')
        a, _ = self.front(peers=[pe], local=False)
        rc, st, body, err, _ = curl_tls(
            self.url(a, DISC_UDM), headers=['Via: 2.0 nrf-e.test:%d' % e.port],
            opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 508), err)
        self.assertEqual(json.loads(body)['cause'], 'LOOP_PREVENTED')

    def test_request_returned_to_its_origin_is_detected_over_tls(self):
        # A -> E -> back to A (E knows A by address only, which A never
        # puts in Via; the certificate name check is on 127.0.0.1): A
        # answers 508, E relays it.
        a_port = H.free_port()
        stub_e = self.h.start_stub('nrf-e', 'stub-profiles-empty.json')
        a_for_e = {'scheme': 'https', 'ipv4Address': '127.0.0.1', 'port': a_port,
                   'priority': 1}
        cfg_e = H.nrfwd_config('nrf-e.test', local=stub_e.port, peers=[a_for_e])
        tls_listen(cfg_e, 'nrf-e.test')
        tls_client(cfg_e)
        e = self.h.start_nrfwd(cfg_e, name='nrfwd-e')
        loc = self.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config(SELF, port=a_port, local=loc.port,
                             peers=[H.peer('nrf-e.test', e.port, scheme='https')])
        tls_listen(cfg, SELF)
        tls_client(cfg)
        a = self.h.start_nrfwd(cfg)
        rc, st, body, err, _ = curl_tls(self.url(a, PROFILE + ID_UDM1),
                                        opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 508), err)
        self.assertEqual(json.loads(body)['cause'], 'LOOP_DETECTED')
        self.assertEqual(len(H.stub_requests(loc.port)), 1)  # processed once at A

    # The same two figures in NRF Growth forwarding (I-2, I-4).

    def test_growth_loop_prevention_over_tls_skips_the_set_host_in_via(self):
        e, stub_e, pe = self.https_peer('nrf-e.test', 'nrf-e.test', priority=1)
        f, stub_f, pf = self.https_peer('nrf-f.test', 'nrf-f.test', priority=2)
        a, _ = self.front(growth_sets=[('set2.nrfset.5gc.mnc001.mcc001', [pe, pf])])
        rc, st, body, err, _ = curl_tls(
            self.url(a, DISC_UDM),
            headers=['Via: 2.0 nrf-e.test:%d' % e.port],
            opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)
        self.assertEqual(H.stub_requests(stub_e.port), [])
        self.assertEqual(len(H.stub_requests(stub_f.port)), 1)

    def test_growth_request_returned_to_its_origin_is_detected_over_tls(self):
        a_port = H.free_port()
        stub_e = self.h.start_stub('nrf-e', 'stub-profiles-empty.json')
        a_for_e = {'scheme': 'https', 'ipv4Address': '127.0.0.1', 'port': a_port,
                   'priority': 1}
        cfg_e = H.nrfwd_config('nrf-e.test', local=stub_e.port,
                               growth_sets=[('set1.nrfset.5gc.mnc001.mcc001', [a_for_e])])
        tls_listen(cfg_e, 'nrf-e.test')
        tls_client(cfg_e)
        e = self.h.start_nrfwd(cfg_e, name='nrfwd-e')
        loc = self.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config(SELF, port=a_port, local=loc.port, growth_sets=[
            ('set2.nrfset.5gc.mnc001.mcc001', [H.peer('nrf-e.test', e.port, scheme='https')])])
        tls_listen(cfg, SELF)
        tls_client(cfg)
        a = self.h.start_nrfwd(cfg)
        rc, st, body, err, _ = curl_tls(self.url(a, PROFILE + ID_UDM1),
                                        opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 508), err)
        self.assertEqual(json.loads(body)['cause'], 'LOOP_DETECTED')
        self.assertEqual(len(H.stub_requests(loc.port)), 1)  # processed once at A

    def test_h2load_through_nrfwd_to_an_https_peer(self):
        e, _, pe = self.https_peer('nrf-e.test', 'nrf-e.test')
        a, _ = self.front(peers=[pe])
        r = H.h2load('https://127.0.0.1:%d%s' % (a.port, PROFILE + ID_UDM1),
                     n=3000, c=8, m=8)
        self.assertEqual(r.get('succeeded'), 3000, r['raw'])
        self.assertEqual(r.get('status_2xx'), 3000, r['raw'])


class TestPeerCertificates(Base):
    def check_skipped(self, bad_cert, why):
        bad, stub_bad, pb = self.https_peer('nrf-e.test', bad_cert, priority=1)
        good, stub_good, pg = self.https_peer('nrf-f.test', 'nrf-f.test', priority=2)
        a, _ = self.front(peers=[pb, pg])
        rc, st, body, err, _ = curl_tls(self.url(a, DISC_UDM),
                                        opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)
        self.assertEqual(H.stub_requests(stub_bad.port), [])
        self.assertEqual(len(H.stub_requests(stub_good.port)), 1)
        self.assertRegex(a.log(), r'handshake with nrf-e\.test .*failed: .*%s' % why)

    def test_peer_with_wrong_name_is_skipped_and_the_next_one_used(self):
        self.check_skipped('wrong', 'mismatch')

    def test_peer_with_expired_certificate_is_skipped(self):
        self.check_skipped('expired', 'expired')

    def test_only_peer_failing_tls_gives_not_reachable(self):
        bad, stub_bad, pb = self.https_peer('nrf-e.test', 'wrong')
        a, _ = self.front(peers=[pb], local=False)
        rc, st, body, err, _ = curl_tls(self.url(a, DISC_UDM),
                                        opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 504), err)
        self.assertEqual(json.loads(body)['cause'], 'TARGET_NF_NOT_REACHABLE')

    def test_https_local_nrf(self):
        e, stub_e, _ = self.https_peer('nrf-e.test', 'nrf-e.test')
        cfg = H.nrfwd_config(SELF, local=e.port)
        cfg['runtime']['localNrf']['scheme'] = 'https'
        tls_client(cfg)
        a = self.h.start_nrfwd(cfg)
        st, _, body = H.curl(a.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200)
        self.assertEqual(len(H.stub_requests(stub_e.port)), 1)


class TestRotation(Base):
    """A certificate renewed at the same path (what certbot and cert-manager
    do) is loaded by SIGHUP: new connections get it, an open connection
    keeps its own and is served; a broken new pair is refused with the
    reason and the running one kept; the expiry metric follows."""

    def serial(self, port):
        der = ssl.get_server_certificate(('127.0.0.1', port))
        r = subprocess.run(['openssl', 'x509', '-noout', '-serial', '-enddate'],
                           input=der.encode(), capture_output=True, timeout=10)
        out = r.stdout.decode()
        end = re.search(r'notAfter=(.*)', out).group(1).strip()
        return re.search(r'serial=(\w+)', out).group(1), int(ssl.cert_time_to_seconds(end))

    def serial_other_than(self, port, *old):
        """The certificate served once it is none of @old (a published
        snapshot reaches the workers within milliseconds, not at once)."""
        deadline = time.monotonic() + 5
        while True:
            got = self.serial(port)
            if got[0] not in old or time.monotonic() > deadline:
                return got
            time.sleep(0.05)

    def hup_and_wait(self, fwd, pattern):
        n = len(re.findall(pattern, fwd.log()))
        os.kill(fwd.pid, signal.SIGHUP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(re.findall(pattern, fwd.log())) == n:
            time.sleep(0.05)
        self.assertGreater(len(re.findall(pattern, fwd.log())), n, fwd.log())

    def test_sighup_loads_files_renewed_at_the_same_path(self):
        d = os.path.join(self.h.tmpdir, 'live')
        os.mkdir(d)
        cert, key = os.path.join(d, 'cert.pem'), os.path.join(d, 'key.pem')
        shutil.copy(CERTS[SELF][0], cert)
        shutil.copy(CERTS[SELF][1], key)
        loc = self.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config(SELF, local=loc.port)
        cfg['runtime']['listen'][0]['tls'] = True
        cfg['runtime']['tls'] = {'certFile': cert, 'keyFile': key}
        a = self.h.start_nrfwd(cfg, management=True)
        old_serial, old_end = self.serial(a.port)
        m = H.metrics(a)
        self.assertEqual(H.metric_value(m, 'nrfwd_tls_certificate_expiry_timestamp_seconds',
                                        role='server'), old_end)

        # an open connection, served before and after the rotation
        ctx = ssl.create_default_context(cafile=CERTS['ca'])
        ctx.set_alpn_protocols(['h2'])
        raw = socket.create_connection(('127.0.0.1', a.port), timeout=10)
        held = ctx.wrap_socket(raw, server_hostname=SELF)
        conn = h2.connection.H2Connection()
        conn.initiate_connection()
        auth = '%s:%d' % (SELF, a.port)
        self.assertEqual(h2_get(held, auth, PROFILE + ID_AMF1, conn)[0], '200')

        # renewed: another key and certificate (3 days) written over the files
        nd = os.path.join(self.h.tmpdir, 'renewed')
        os.mkdir(nd)
        for f in ('ca.pem', 'ca.key'):
            shutil.copy(os.path.join(CERTS['dir'], f), nd)
        ncert, nkey = _leaf(nd, 'renewed', SELF, ['DNS:' + SELF, 'IP:127.0.0.1'], days='3')
        for src, dst in ((ncert, cert), (nkey, key)):
            with open(src, 'rb') as f, open(dst, 'wb') as g:
                g.write(f.read())
        self.hup_and_wait(a, r'TLS files changed on disk')
        new_serial, new_end = self.serial_other_than(a.port, old_serial)
        self.assertNotEqual(new_serial, old_serial)
        self.assertGreater(new_end, old_end)
        m = H.metrics(a)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), 2)
        self.assertEqual(H.metric_value(m, 'nrfwd_tls_certificate_expiry_timestamp_seconds',
                                        role='server'), new_end)
        rc, st, _, err, _ = curl_tls(self.url(a, PROFILE + ID_AMF1),
                                     opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)
        # the connection opened before keeps its certificate and is served
        self.assertEqual(h2_get(held, auth, PROFILE + ID_AMF1, conn)[0], '200')
        self.assertEqual(held.getpeercert()['notAfter'],
                         ssl._ssl._test_decode_cert(CERTS[SELF][0])['notAfter'])
        held.close()

        # the same files again: nothing to do
        self.hup_and_wait(a, r'unchanged \(generation 2\)')

        # a broken pair (the key of another certificate): refused, kept
        with open(CERTS['client'][1], 'rb') as f, open(key, 'wb') as g:
            g.write(f.read())
        self.hup_and_wait(a, r'refused')
        line = [ln for ln in a.log().splitlines() if 'refused' in ln][-1]
        self.assertIn('/runtime/tls/keyFile', a.log())
        self.assertRegex(line, r'refused')
        self.assertEqual(self.serial(a.port)[0], new_serial)
        m = H.metrics(a)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), 2)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_reload_failures_total'), 1)
        rc, st, _, err, _ = curl_tls(self.url(a, PROFILE + ID_AMF1),
                                     opts=['--http2'] + self.resolve(a))
        self.assertEqual((rc, st), (0, 200), err)

        # a REST change publishes a snapshot, which loads the files as they are now
        ncert, nkey = _leaf(nd, 'third', SELF, ['DNS:' + SELF, 'IP:127.0.0.1'], days='4')
        for src, dst in ((ncert, cert), (nkey, key)):
            with open(src, 'rb') as f, open(dst, 'wb') as g:
                g.write(f.read())
        st, _, body = H.api(a, 'PATCH', '/nrf-configuration/v1/forwardingOptions',
                            {'maxViaMembers': 12})
        self.assertEqual(st, 200, body)
        third_serial, third_end = self.serial_other_than(a.port, old_serial, new_serial)
        self.assertNotIn(third_serial, (old_serial, new_serial))
        self.assertGreater(third_end, new_end)


class TestBadTlsConfiguration(Base):
    def start_bad(self, tls):
        cfg = H.nrfwd_config(SELF)
        cfg['runtime']['listen'][0]['tls'] = True
        cfg['runtime']['tls'] = tls
        p = self.h.start_nrfwd(cfg, wait=False)
        p.proc.wait(timeout=10)
        self.assertNotEqual(p.proc.returncode, 0)
        return p.log(), p.config_path

    def ctl_check(self, path):
        r = subprocess.run([H.binary('nrfwd-ctl'), 'check', path], capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=10)
        return r.returncode, r.stdout.decode() + r.stderr.decode()

    def test_missing_certificate_file_is_named(self):
        log, path = self.start_bad({'certFile': '/nonexistent/cert.pem',
                                    'keyFile': CERTS[SELF][1]})
        self.assertIn('/runtime/tls/certFile', log)
        self.assertIn('/nonexistent/cert.pem: No such file or directory', log)
        rc, out = self.ctl_check(path)
        self.assertEqual(rc, 1, out)
        self.assertIn('/nonexistent/cert.pem', out)

    def test_key_that_does_not_match_is_named(self):
        log, path = self.start_bad({'certFile': CERTS[SELF][0],
                                    'keyFile': CERTS['other_key']})
        self.assertIn('/runtime/tls/keyFile', log)
        self.assertIn('does not match', log)
        rc, out = self.ctl_check(path)
        self.assertEqual(rc, 1, out)
        self.assertIn('does not match', out)

    def test_not_a_certificate_is_named(self):
        log, _ = self.start_bad({'certFile': CERTS['ca'].replace('ca.pem', 'ca.key'),
                                 'keyFile': CERTS[SELF][1]})
        self.assertIn('/runtime/tls/certFile', log)
        self.assertIn('cannot load', log)

    def test_tls_listener_without_certificate_is_refused(self):
        log, _ = self.start_bad({})
        self.assertIn('/runtime/tls/certFile', log)

    def test_check_accepts_good_files(self):
        cfg = tls_listen(H.nrfwd_config(SELF), SELF)
        path = os.path.join(self.h.tmpdir, 'good.json')
        with open(path, 'w') as f:
            json.dump(cfg, f)
        rc, out = self.ctl_check(path)
        self.assertEqual(rc, 0, out)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
