#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""TLS (lib/tp/tp_tls.c, docs/tls.md) over the DPDK + lwIP transport.

Usage: python3 tests/dpdk/test_nrfwd_dpdk_tls.py --build-dir BUILD

On a fabric of network namespaces (nrfwd_dpdk_harness.py): nrfwd A on a
DPDK port (net_af_packet) with a TLS listener and a local nrfstub (h2c);
its forwarding peer E is a second nrfwd on a DPDK port with a TLS listener
in front of an nrfstub, reached over https (A's runtime.tlsClient checks
E's certificate against the test CA and the name nrf-e.test). Certificates
are made at test time with the openssl command (as tests/integration/
test_tls.py does), valid for the NRF names and the DPDK port addresses.
Clients in a namespace of their own: curl --http2 over https, h2load over
https. Checks: a local answer over TLS (ALPN h2), a request forwarded over
https to E (Via at E's NRF), h2load -n 2000 through A to E, and loop
detection: a Via naming A itself gets 508 over TLS, A's NRF not asked.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_dpdk_harness as D  # noqa: E402
import test_tls as T  # noqa: E402  (tests/integration: openssl certificate helpers)

A, E = 'nrf-a.test', 'nrf-e.test'
PORT = 8080
ID_AMF1 = '5a1f0b6e-6f0a-4c1e-9a01-0000000a0001'  # only at A's local stub
ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at E's stub
PROFILE = '/nnrf-nfm/v1/nf-instances/'
DISC_UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF'


def make_certs(d, ips):
    """A CA and a server certificate per NRF name in @ips (name -> DPDK address)."""
    T._ossl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
            '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2',
            '-subj', '/CN=nrfwd dpdk test CA', cwd=d)
    c = {'ca': os.path.join(d, 'ca.pem')}
    for name, ip in ips.items():
        c[name] = T._leaf(d, name, name, ['DNS:' + name, 'IP:' + ip])
    return c


def tls(fab, r):
    if shutil.which('openssl') is None:
        raise RuntimeError('openssl not installed')
    ha, he, c = fab.host('a'), fab.host('e'), fab.host('c')
    ip_a, ip_e = fab.dpdk_ip(ha), fab.dpdk_ip(he)
    certdir = tempfile.mkdtemp(prefix='certs-', dir=fab.tmpdir)
    certs = make_certs(certdir, {A: ip_a, E: ip_e})
    stub_a = fab.start_stub(ha, 'stub-a', 'stub-profiles-a.json')
    stub_e = fab.start_stub(he, 'stub-e', 'stub-profiles-e.json')

    def listen_tls(cfg, name):
        cfg['runtime']['listen'][0]['tls'] = True
        cert, key = certs[name]
        cfg['runtime']['tls'] = {'certFile': cert, 'keyFile': key}
        return cfg

    cfg_e = listen_tls(D.config(E, PORT, local=stub_e), E)
    cfg_a = listen_tls(D.config(A, PORT, local=stub_a,
                                peers=[D.peer(E, ip_e, PORT, scheme='https')]), A)
    cfg_a['runtime']['tlsClient'] = {'caFile': certs['ca']}
    fa, fe = fab.start_all([(ha, cfg_a, {'name': 'nrfwd-a'}),
                            (he, cfg_e, {'name': 'nrfwd-e'})])

    def curl(path, headers=()):
        """curl --http2 over https to A (its name resolved to the DPDK port):
        (status, http version, body)."""
        with tempfile.TemporaryDirectory(prefix='curl-') as d:
            bfile = os.path.join(d, 'b')
            cmd = ['curl', '-s', '-S', '-o', bfile, '-w', '%{http_code} %{http_version}',
                   '--max-time', '10', '--http2', '--cacert', certs['ca'],
                   '--resolve', '%s:%d:%s' % (A, PORT, D.H.hostport_host(ip_a))]
            for h in headers:
                cmd += ['-H', h]
            res = fab.run(c, cmd + ['https://%s:%d%s' % (A, PORT, path)], timeout=15)
            out = res.stdout.decode().split()
            D.expect(res.returncode == 0, 'curl rc=%d: %s' % (
                res.returncode, res.stderr.decode('utf-8', 'replace').strip()))
            with open(bfile, 'rb') as f:
                body = f.read()
            return int(out[0]), out[1] if len(out) > 1 else '', body

    def local_answer():
        st, ver, body = curl(PROFILE + ID_AMF1)
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq(ver, '2', 'HTTP version (ALPN h2)')
        D.expect_eq(json.loads(body)['nfInstanceId'], ID_AMF1, 'profile')

    def forwarded():
        fab.stub_clear(stub_e)
        st, ver, body = curl(DISC_UDM)
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect(json.loads(body)['nfInstances'], 'no instances from E')
        st, ver, body = curl(PROFILE + ID_UDM1)  # over the pooled TLS connection
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        D.expect_eq(json.loads(body)['nfInstanceId'], ID_UDM1, 'profile')
        recs = fab.stub_requests(stub_e)
        D.expect_eq([x.get('via') for x in recs], [['2.0 %s:%d' % (A, PORT)]] * 2,
                    "Via at E's NRF")

    def h2load():
        res = fab.h2load(c, 'https://%s:%d%s' % (D.H.hostport_host(ip_a), PORT, PROFILE + ID_UDM1),
                         n=2000, c=8, m=8, timeout=60)
        D.expect_eq(res.get('succeeded'), 2000, res['raw'][-1500:])
        D.expect_eq(res.get('status_2xx'), 2000, res['raw'][-1500:])
        D.expect('Application protocol: h2' in res['raw'],
                 'h2load did not negotiate h2:\n' + res['raw'][-1500:])

    def loop_detected():
        fab.stub_clear(stub_a)
        fab.stub_clear(stub_e)
        st, ver, body = curl(PROFILE + ID_AMF1,
                             headers=['Via: 2.0 nrf-x.test:80, 2.0 %s:%d' % (A, PORT)])
        D.expect_eq(st, 508, 'status (%s)' % body[:200])
        D.expect_eq(json.loads(body)['cause'], 'LOOP_DETECTED', 'cause')
        D.expect_eq(fab.stub_requests(stub_a), [], "A's NRF asked")
        D.expect_eq(fab.stub_requests(stub_e), [], "E's NRF asked")

    r.check('tls: curl --http2 over https, local answer', local_answer)
    r.check('tls: forwarded over https to a TLS peer, Via', forwarded)
    r.check('tls: h2load -n 2000 over https through A to E', h2load)
    r.check('tls: own identity in Via -> 508 over TLS', loop_detected)
    for p in (fa, fe):
        D.expect(p.alive(), '%s exited:\n%s' % (p.name, p.log()[-2000:]))


if __name__ == '__main__':
    sys.exit(D.test_main(sys.argv, [('tls', tls, 't')], needs=('h2load', 'openssl')))
