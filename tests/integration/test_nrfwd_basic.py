#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of the nrfwd data path on kernel sockets (docs/behaviour.md).

Usage: python3 tests/integration/test_nrfwd_basic.py [--build-dir BUILD] [unittest args]

Real processes on loopback: nrfstub as the local NRF and as peer NRFs,
nrfwd in front, curl (HTTP/2 prior knowledge, one request per invocation)
and h2load as clients. Every process is stopped by pid in tearDown.
Standard library only; helpers in nrfwd_harness.py.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

ID_AMF1 = '5a1f0b6e-6f0a-4c1e-9a01-0000000a0001'  # only at stub "a" (local)
ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at stub "e" (peer)
SELF = 'nrf-a.test'
PROFILE = '/nnrf-nfm/v1/nf-instances/'
DISC_UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF'


def raw_answer(url, headers=(), method=None):
    """One request with curl: (status, [(name, value)] in wire order, body bytes).
    @method 'HEAD' uses curl -I."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        cmd = ['curl', '-s', '--http2-prior-knowledge', '-D', d + '/h', '-o', d + '/b',
               '--max-time', '10']
        if method == 'HEAD':
            cmd.append('-I')
        elif method:
            cmd += ['-X', method]
        r = subprocess.run(cmd + sum([['-H', h] for h in headers], []) + [url], timeout=15)
        assert r.returncode == 0, 'curl exit %d' % r.returncode
        with open(d + '/h', 'rb') as f:
            head = f.read()
        lines = head.decode('latin-1').split('\r\n')
        body = b''
        if os.path.exists(d + '/b'):
            with open(d + '/b', 'rb') as f:
                body = f.read()
        if method == 'HEAD' and body.startswith(head):
            body = body[len(head):]  # curl -I writes the header block as output too
    fields = [tuple(x.strip() for x in l.split(':', 1)) for l in lines[1:] if l]
    # The request id nrfwd adds to its own answers (docs/access-log.md;
    # test_access_log checks it) is not part of what explain renders.
    rids = [f for f in fields if f[0] == 'x-request-id']
    assert len(rids) <= 1, fields
    fields = [f for f in fields if f[0] != 'x-request-id']
    return int(lines[0].split()[1]), fields, body


def nghttp_frames(url, method='GET', headers=()):
    """nghttp -v: the frames it received on request streams, as (type, flags)."""
    cmd = ['nghttp', '-v', '--no-dep', '-H', ':method: ' + method]
    for h in headers:
        cmd += ['-H', h]
    r = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=15)
    return [(m.group(1), int(m.group(2), 16))
            for m in re.finditer(r'recv (\w+) frame <length=\d+, flags=0x([0-9a-f]+), '
                                 r'stream_id=(\d+)>', r.stdout)
            if int(m.group(3)) % 2 == 1], r.returncode


class Base(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness()

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed or bool(os.environ.get('NRFWD_TEST_LOGS')))

    # -- helpers --------------------------------------------------------
    def problem(self, body):
        doc = json.loads(body)
        self.assertIn('status', doc)
        self.assertIn('title', doc)
        return doc

    def fwd(self, local=True, peers=(), workers=1, **kw):
        """Local stub (profiles a) + nrfwd with @peers; returns (nrfwd, local)."""
        loc = self.h.start_stub('local', 'stub-profiles-a.json') if local else None
        cfg = H.nrfwd_config(SELF, local=loc.port if loc else None, peers=peers, **kw)
        return self.h.start_nrfwd(cfg, workers=workers), loc


class TestRelay(Base):
    def test_local_200_is_relayed_and_not_forwarded(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, loc = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        st, hd, body = H.curl(nrfwd.url(PROFILE + ID_AMF1))
        self.assertEqual(st, 200)
        self.assertEqual(hd.get('x-nrfstub'), ['local'])
        self.assertEqual(json.loads(body)['nfInstanceId'], ID_AMF1)
        self.assertEqual(H.stub_requests(pe.port), [])
        recs = H.stub_requests(loc.port)
        self.assertEqual(len(recs), 1)
        self.assertEqual(recs[0]['via'], [])  # the local NRF gets no Via of ours

    def test_local_404_is_forwarded_with_own_via_member_last(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, loc = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        st, hd, body = H.curl(nrfwd.url(PROFILE + ID_UDM1),
                              headers=['via: 2.0 scp-1.example.com:443 (SCP)',
                                       'x-test: kept'])
        self.assertEqual(st, 200, body)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-e'])
        self.assertEqual(json.loads(body)['nfInstanceId'], ID_UDM1)
        self.assertEqual(len(H.stub_requests(loc.port)), 1)
        recs = H.stub_requests(pe.port)
        self.assertEqual(len(recs), 1)
        r = recs[0]
        self.assertEqual(r['method'], 'GET')
        self.assertEqual(r['path'], PROFILE + ID_UDM1)
        self.assertEqual(r['authority'], 'nrf-e.test:%d' % pe.port)
        self.assertEqual(r['via'], ['2.0 scp-1.example.com:443 (SCP)',
                                    '2.0 %s:%d' % (SELF, nrfwd.port)])
        hdrs = {k: v for k, v in r['headers']}
        self.assertEqual(hdrs.get('3gpp-sbi-target-apiroot'), 'http://nrf-e.test:%d' % pe.port)
        self.assertEqual(hdrs.get('x-test'), 'kept')

    def test_api_prefix_of_the_peer_is_prepended(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', pe.port, api_prefix='/pfx')])
        st, _, _ = H.curl(nrfwd.url(PROFILE + ID_UDM1 + '?x=1'))
        r = H.stub_requests(pe.port)[0]
        self.assertEqual(r['path'], '/pfx' + PROFILE + ID_UDM1 + '?x=1')
        hdrs = {k: v for k, v in r['headers']}
        self.assertEqual(hdrs.get('3gpp-sbi-target-apiroot'),
                         'http://nrf-e.test:%d/pfx' % pe.port)
        self.assertIn(st, (200, 404))

    def test_empty_discovery_result_is_forwarded(self):
        loc = self.h.start_stub('local', 'stub-profiles-empty.json')
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        cfg = H.nrfwd_config(SELF, local=loc.port, peers=[H.peer('nrf-e.test', pe.port)])
        nrfwd = self.h.start_nrfwd(cfg)
        st, hd, body = H.curl(nrfwd.url(DISC_UDM))
        self.assertEqual(st, 200, body)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-e'])
        self.assertTrue(json.loads(body)['nfInstances'])

    def test_post_token_body_is_relayed_byte_for_byte(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, loc = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        # Local answers 404: the token request is forwarded, body included.
        H.stub_fault(loc.port, 'status', arg=404)
        pad = bytes(range(33, 127)) * 1200  # ~110 KB: several chunks, windows
        body = b'grant_type=client_credentials&nfInstanceId=ab&scope=nnrf-disc&pad=' + pad
        st, hd, rbody = H.curl(nrfwd.url('/oauth2/token'), method='POST', data=body,
                               headers=['content-type: application/x-www-form-urlencoded'])
        self.assertEqual(st, 200, rbody)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-e'])
        self.assertIn('access_token', json.loads(rbody))
        sha = H.sha256_hex(body)
        lr = H.stub_requests(loc.port)[0]
        pr = H.stub_requests(pe.port)[0]
        for r in (lr, pr):
            self.assertEqual(r['method'], 'POST')
            self.assertEqual(r['body_len'], len(body))
            self.assertEqual(r['body_sha256'], sha)
            self.assertTrue(r['complete'])

    def test_large_response_body_is_relayed_intact(self):
        # A discovery answer of several chunks through flow control.
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, loc = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        direct = H.curl(loc.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'
                                '&requester-nf-type=SMF'))
        via = H.curl(nrfwd.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'
                               '&requester-nf-type=SMF'))
        self.assertEqual(via[0], 200)
        self.assertEqual(json.loads(via[2])['nfInstances'],
                         json.loads(direct[2])['nfInstances'])


class TestLoops(Base):
    def test_own_identity_in_via_is_answered_508_and_not_processed(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, loc = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        st, hd, body = H.curl(nrfwd.url(PROFILE + ID_AMF1),
                              headers=['via: 2.0 nrf-x.test:1, 2.0 NRF-A.TEST.:%d'
                                       % nrfwd.port])
        self.assertEqual(st, 508)
        self.assertEqual(hd.get('content-type'), ['application/problem+json'])
        doc = self.problem(body)
        self.assertEqual(doc['status'], 508)
        self.assertEqual(doc['cause'], 'LOOP_DETECTED')
        self.assertEqual(H.stub_requests(loc.port), [])
        self.assertEqual(H.stub_requests(pe.port), [])

    def test_answers_given_at_once_are_byte_for_byte_what_explain_renders(self):
        """508s (and 400s) are answered before any transaction exists, from
        headers and a body held in the stream itself: status, header fields
        in wire order and body bytes must be the configured ProblemDetails
        exactly as `nrfwd-ctl explain` renders it (compact JSON, UTF-8)."""
        err = [{'errorCondition': 'NRF_Forwarding_Loop_Detection', 'errorCode': 508,
                'errorTitle': 'Loop "here"', 'errorDetail': 'd\u00e9j\u00e0 vu \\ /',
                'retryAfter': '5'}]
        cfg = H.nrfwd_config(SELF, peers=[H.peer('nrf-e.test', H.free_port())],
                             error_responses=err, forwarding={'maxViaMembers': 3})
        nrfwd = self.h.start_nrfwd(cfg)
        cfgfile = os.path.join(self.h.tmpdir, 'explain.json')
        with open(cfgfile, 'w') as f:
            json.dump(cfg, f)
        own = '2.0 nrf-a.test:%d' % nrfwd.port
        for name, vias in [('loop detected', ['2.0 scp.test:80', own]),
                           ('hop limit', ['2.0 a.test:1, 2.0 b.test:2', '2.0 c.test:3, 2.0 d.test:4'])]:
            with self.subTest(name):
                ex = subprocess.run([H.binary('nrfwd-ctl'), 'explain', cfgfile] +
                                    sum([['--via', v] for v in vias], []),
                                    capture_output=True, timeout=10, check=True)
                want = json.loads(ex.stdout)['decision']['error']
                st, fields, body = raw_answer(
                    nrfwd.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'),
                    headers=['via: ' + v for v in vias])
                self.assertEqual(st, want['status'])
                expect = [('content-type', want['headers']['content-type']),
                          ('content-length', str(len(body)))]
                if 'retry-after' in want['headers']:
                    expect.append(('retry-after', want['headers']['retry-after']))
                self.assertEqual(fields, expect)
                self.assertEqual(body, json.dumps(want['problemDetails'], separators=(',', ':'),
                                                  ensure_ascii=False).encode())

    def test_identity_inside_a_comment_is_not_a_loop(self):
        nrfwd, loc = self.fwd()
        st, _, _ = H.curl(nrfwd.url(PROFILE + ID_AMF1),
                          headers=['via: 2.0 scp.test:80 (was nrf-a.test:%d)' % nrfwd.port])
        self.assertEqual(st, 200)

    def test_hop_limit(self):
        nrfwd, loc = self.fwd(forwarding={'maxViaMembers': 2})
        st, _, body = H.curl(nrfwd.url(PROFILE + ID_AMF1),
                             headers=['via: 2.0 a.test:1, 2.0 b.test:2', 'via: 2.0 c.test:3'])
        self.assertEqual(st, 508)
        self.assertEqual(self.problem(body)['cause'], 'MAX_HOPS_REACHED')
        self.assertEqual(H.stub_requests(loc.port), [])

    def test_max_forward_hops_is_decremented_on_every_forward(self):
        # TS 29.500 §6.10.10: one hop less on the forwarded request; the
        # local NRF gets the request as the client sent it.
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, loc = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        st, hd, body = H.curl(nrfwd.url(PROFILE + ID_UDM1),
                              headers=['3gpp-Sbi-Max-Forward-Hops: 3'])
        self.assertEqual(st, 200, body)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-e'])
        fwd = {k: v for k, v in H.stub_requests(pe.port)[0]['headers']}
        self.assertEqual(fwd.get('3gpp-sbi-max-forward-hops'), '2')
        lh = [v for k, v in H.stub_requests(loc.port)[0]['headers']
              if k == '3gpp-sbi-max-forward-hops']
        self.assertEqual(lh, ['3'])

    def test_max_forward_hops_is_never_added_when_absent(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        st, _, _ = H.curl(nrfwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200)
        names = [k for k, _ in H.stub_requests(pe.port)[0]['headers']]
        self.assertNotIn('3gpp-sbi-max-forward-hops', names)

    def test_max_forward_hops_at_zero_is_the_hop_limit_not_a_forward(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, loc = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        st, _, body = H.curl(nrfwd.url(PROFILE + ID_UDM1),
                             headers=['3gpp-Sbi-Max-Forward-Hops: 0'])
        self.assertEqual(st, 508, body)
        self.assertEqual(self.problem(body)['cause'], 'MAX_HOPS_REACHED')
        self.assertEqual(len(H.stub_requests(loc.port)), 1)  # the local NRF is asked
        self.assertEqual(H.stub_requests(pe.port), [])
        # A local answer needs no forward: hops 0 does not matter then.
        st, hd, _ = H.curl(nrfwd.url(PROFILE + ID_AMF1),
                           headers=['3gpp-Sbi-Max-Forward-Hops: 0'])
        self.assertEqual(st, 200)
        self.assertEqual(hd.get('x-nrfstub'), ['local'])

    def test_malformed_max_forward_hops_gives_400(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, loc = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        for bad in ('-1', 'two', '1, 2', '99999999999'):
            st, _, body = H.curl(nrfwd.url(PROFILE + ID_UDM1),
                                 headers=['3gpp-Sbi-Max-Forward-Hops: ' + bad])
            self.assertEqual(st, 400, bad)
            self.assertEqual(self.problem(body)['cause'], 'INVALID_MSG_FORMAT')
        self.assertEqual(H.stub_requests(loc.port), [])

    def test_every_peer_skipped_by_via_gives_the_local_answer(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, loc = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        st, hd, body = H.curl(nrfwd.url(PROFILE + ID_UDM1),
                              headers=['via: 2.0 nrf-e.test:%d' % pe.port])
        self.assertEqual(st, 404)  # step 8: local answer
        self.assertEqual(hd.get('x-nrfstub'), ['local'])
        self.assertEqual(H.stub_requests(pe.port), [])

    def test_every_peer_skipped_by_via_without_local_nrf_gives_loop_prevention(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(local=False, peers=[H.peer('nrf-e.test', pe.port)])
        st, _, body = H.curl(nrfwd.url(PROFILE + ID_UDM1),
                             headers=['via: 2.0 127.0.0.1:%d' % pe.port])
        self.assertEqual(st, 508)
        self.assertEqual(self.problem(body)['cause'], 'LOOP_PREVENTED')
        self.assertEqual(H.stub_requests(pe.port), [])

    def test_peer_in_via_is_skipped_for_the_next_one(self):
        p1 = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        p2 = self.h.start_stub('nrf-f', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', p1.port, priority=1),
                                   H.peer('nrf-f.test', p2.port, priority=2)])
        st, hd, _ = H.curl(nrfwd.url(PROFILE + ID_UDM1),
                           headers=['via: 2.0 nrf-e.test:%d' % p1.port])
        self.assertEqual(st, 200)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-f'])
        self.assertEqual(H.stub_requests(p1.port), [])

    def test_peer_508_is_relayed_not_rerouted(self):
        p1 = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='status:508')
        p2 = self.h.start_stub('nrf-f', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', p1.port, priority=1),
                                   H.peer('nrf-f.test', p2.port, priority=2)])
        st, hd, _ = H.curl(nrfwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 508)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-e'])
        self.assertEqual(H.stub_requests(p2.port), [])


class TestTwoNrfs(Base):
    """The seed's figures with two real nrfwd processes (segments 1 and 2)."""

    def two(self, e_knows_a_as_ip):
        a_port, e_port = H.free_port(), H.free_port()
        la = self.h.start_stub('local-a', 'stub-profiles-a.json')
        le = self.h.start_stub('local-e', 'stub-profiles-empty.json')
        # NRF-E's entry for NRF-A: by name (matches A's Via member) or, when
        # misconfigured, by an address A never puts in Via.
        if e_knows_a_as_ip:
            a_for_e = {'scheme': 'http', 'ipv4Address': '127.0.0.1', 'port': a_port,
                       'priority': 1}
        else:
            a_for_e = H.peer('nrf-a.seg1.test', a_port)
        cfg_a = H.nrfwd_config('nrf-a.seg1.test', port=a_port, local=la.port,
                               peers=[H.peer('nrf-e.seg2.test', e_port)])
        cfg_e = H.nrfwd_config('nrf-e.seg2.test', port=e_port, local=le.port, peers=[a_for_e])
        a = self.h.start_nrfwd(cfg_a, name='nrfwd-a')
        e = self.h.start_nrfwd(cfg_e, name='nrfwd-e')
        return a, e, la, le

    def test_request_returned_to_its_origin_is_detected_as_a_loop(self):
        # Figure I-1: A -> E -> (wrongly) back to A: A answers 508, E relays it.
        a, e, la, le = self.two(e_knows_a_as_ip=True)
        st, hd, body = H.curl(a.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 508, body)
        self.assertEqual(self.problem(body)['cause'], 'LOOP_DETECTED')
        # A's own 508 carries no Via; E relayed it, then A did: both members
        self.assertEqual(hd.get('via'), ['2.0 nrf-e.seg2.test:%d' % e.port,
                                         '2.0 nrf-a.seg1.test:%d' % a.port])
        self.assertEqual(len(H.stub_requests(la.port)), 1)  # processed once at A
        recs = H.stub_requests(le.port)
        self.assertEqual(len(recs), 1)
        self.assertEqual(recs[0]['via'], ['2.0 nrf-a.seg1.test:%d' % a.port])

    def test_destination_already_in_via_is_skipped(self):
        # Figure I-3: E would forward back to A, sees A in Via and does not.
        a, e, la, le = self.two(e_knows_a_as_ip=False)
        st, hd, body = H.curl(a.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 404, body)  # E's local answer, relayed by A
        self.assertEqual(hd.get('x-nrfstub'), ['local-e'])
        self.assertEqual(hd.get('via'), ['2.0 nrf-e.seg2.test:%d' % e.port,
                                         '2.0 nrf-a.seg1.test:%d' % a.port])
        self.assertEqual(len(H.stub_requests(la.port)), 1)
        self.assertIn('loop_prevented=1', self.stop_log(e))

    def stop_log(self, p):
        self.assertEqual(p.stop(), 0)
        return p.log()


class TestFailover(Base):
    def test_closed_primary_port_fails_over_to_the_next_peer(self):
        dead = H.free_port()
        p2 = self.h.start_stub('nrf-f', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', dead, priority=1),
                                   H.peer('nrf-f.test', p2.port, priority=2)])
        for _ in range(3):
            st, hd, body = H.curl(nrfwd.url(PROFILE + ID_UDM1))
            self.assertEqual(st, 200, body)
            self.assertEqual(hd.get('x-nrfstub'), ['nrf-f'])
        self.assertEqual(len(H.stub_requests(p2.port)), 3)
        self.assertIn('nrf-e.test:%d down' % dead, nrfwd.log())

    def test_reroute_on_503_to_the_next_peer(self):
        p1 = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='status:503')
        p2 = self.h.start_stub('nrf-f', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', p1.port, priority=1),
                                   H.peer('nrf-f.test', p2.port, priority=2)])
        st, hd, body = H.curl(nrfwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200, body)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-f'])
        self.assertEqual(len(H.stub_requests(p1.port)), 1)
        # Both peers saw this NRF's member last, the second one too.
        for p in (p1, p2):
            self.assertEqual(H.stub_requests(p.port)[0]['via'][-1],
                             '2.0 %s:%d' % (SELF, nrfwd.port))

    def test_per_try_timeout_moves_to_the_next_peer(self):
        p1 = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='delay:3000')
        p2 = self.h.start_stub('nrf-f', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', p1.port, priority=1),
                                   H.peer('nrf-f.test', p2.port, priority=2)],
                            timeouts={'perTryMs': 400, 'requestMs': 4000})
        t0 = time.monotonic()
        st, hd, body = H.curl(nrfwd.url(PROFILE + ID_UDM1))
        took = time.monotonic() - t0
        self.assertEqual(st, 200, body)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-f'])
        self.assertGreaterEqual(took, 0.35)
        self.assertLess(took, 2.5)

    def test_reset_stream_moves_to_the_next_peer(self):
        p1 = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='reset')
        p2 = self.h.start_stub('nrf-f', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', p1.port, priority=1),
                                   H.peer('nrf-f.test', p2.port, priority=2)])
        st, hd, _ = H.curl(nrfwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-f'])

    def test_answer_broken_off_mid_body_moves_to_the_next_peer(self):
        # Headers and 10 body bytes, then RST_STREAM: the client must get
        # the next peer's whole answer, not a reset after the headers.
        p1 = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='truncate:10')
        p2 = self.h.start_stub('nrf-f', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', p1.port, priority=1),
                                   H.peer('nrf-f.test', p2.port, priority=2)])
        direct = H.curl(p2.url(PROFILE + ID_UDM1))
        st, hd, body = H.curl(nrfwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200, body)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-f'])
        self.assertEqual(body, direct[2])
        self.assertEqual(len(H.stub_requests(p1.port)), 1)
        self.assertIn('stream reset', nrfwd.log())

    def test_connection_close_moves_to_the_next_peer(self):
        p1 = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='close')
        p2 = self.h.start_stub('nrf-f', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', p1.port, priority=1),
                                   H.peer('nrf-f.test', p2.port, priority=2)])
        for _ in range(2):
            st, hd, _ = H.curl(nrfwd.url(PROFILE + ID_UDM1))
            self.assertEqual(st, 200)
            self.assertEqual(hd.get('x-nrfstub'), ['nrf-f'])

    def test_all_failing_without_local_nrf_gives_504(self):
        p1 = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='status:503')
        dead = H.free_port()
        nrfwd, _ = self.fwd(local=False, peers=[H.peer('nrf-e.test', p1.port, priority=1),
                                                H.peer('nrf-f.test', dead, priority=2)])
        st, hd, body = H.curl(nrfwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 504)
        self.assertEqual(self.problem(body)['cause'], 'TARGET_NF_NOT_REACHABLE')
        self.assertEqual(hd.get('content-type'), ['application/problem+json'])

    def test_local_absence_with_every_peer_failing_is_504_not_the_local_404(self):
        # docs/failures.md: the local 404 is not the whole truth when the
        # peers that should have been asked could not be.
        p1 = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='status:503')
        dead = H.free_port()
        nrfwd, _ = self.fwd(peers=[H.peer('nrf-e.test', p1.port, priority=1),
                                   H.peer('nrf-f.test', dead, priority=2)])
        st, hd, body = H.curl(nrfwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 504, body)
        self.assertEqual(self.problem(body)['cause'], 'TARGET_NF_NOT_REACHABLE')
        self.assertNotIn('x-nrfstub', hd)

    def test_peer_black_hole_ends_in_504_within_request_timeout(self):
        p1 = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='blackhole')
        p2 = self.h.start_stub('nrf-f', 'stub-profiles-e.json', fault='blackhole')
        nrfwd, _ = self.fwd(local=False, peers=[H.peer('nrf-e.test', p1.port, priority=1),
                                                H.peer('nrf-f.test', p2.port, priority=2)],
                            timeouts={'perTryMs': 600, 'requestMs': 900})
        t0 = time.monotonic()
        st, _, body = H.curl(nrfwd.url(PROFILE + ID_UDM1))
        took = time.monotonic() - t0
        self.assertEqual(st, 504, body)
        self.assertGreaterEqual(took, 0.85)
        self.assertLess(took, 2.0)
        self.assertIn('request timeout', nrfwd.log())

    def test_local_nrf_down_for_a_local_only_request_gives_503_local_unavailable(self):
        dead = H.free_port()
        cfg = H.nrfwd_config(SELF, local=dead)
        nrfwd = self.h.start_nrfwd(cfg)
        st, hd, body = H.curl(nrfwd.url('/nnrf-nfm/v1/nf-instances'))
        self.assertEqual(st, 503, body)
        self.assertEqual(self.problem(body)['cause'], 'NF_SERVICE_FAILURE')
        self.assertEqual(hd.get('retry-after'), ['1'])

    def test_local_only_operation_without_local_nrf_gives_501(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(local=False, peers=[H.peer('nrf-e.test', pe.port)])
        st, _, body = H.curl(nrfwd.url(PROFILE + 'abc'), method='PUT', data='{}',
                             headers=['content-type: application/json'])
        self.assertEqual(st, 501)
        self.problem(body)
        self.assertEqual(H.stub_requests(pe.port), [])


class TestLimits(Base):
    def test_body_over_max_body_bytes_gives_413(self):
        nrfwd, loc = self.fwd(limits={'maxBodyBytes': 1024})
        st, _, body = H.curl(nrfwd.url('/oauth2/token'), method='POST', data='x' * 5000)
        self.assertEqual(st, 413)
        self.problem(body)
        self.assertEqual(H.stub_requests(loc.port), [])
        st, _, _ = H.curl(nrfwd.url(PROFILE + ID_AMF1))  # still serving
        self.assertEqual(st, 200)

    def test_header_list_over_max_header_bytes_gives_431(self):
        nrfwd, loc = self.fwd(limits={'maxHeaderBytes': 2048})
        st, _, body = H.curl(nrfwd.url(PROFILE + ID_AMF1), headers=['x-big: ' + 'y' * 3000])
        self.assertEqual(st, 431)
        self.assertEqual(self.problem(body)['cause'], 'INVALID_MSG_FORMAT')
        self.assertEqual(H.stub_requests(loc.port), [])

    def test_malformed_via_gives_400(self):
        nrfwd, loc = self.fwd()
        st, _, body = H.curl(nrfwd.url(PROFILE + ID_AMF1), headers=['via: 2.0 a.test:1 (open'])
        self.assertEqual(st, 400)
        self.assertEqual(self.problem(body)['cause'], 'INVALID_MSG_FORMAT')


    def test_full_peer_queue_answers_overload(self):
        # While the first connection to a peer is being opened (peers are
        # connected on demand; the local NRF is connected at start), tries
        # wait in its queue; with peerQueueDepth 1 the rest of a burst is
        # answered NRF_Forwarding_Overload (503).
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, _ = self.fwd(local=False, peers=[H.peer('nrf-e.test', pe.port)],
                            limits={'peerQueueDepth': 1})
        r = H.h2load(nrfwd.url(PROFILE + ID_UDM1), n=20, c=1, m=20)
        self.assertEqual(r.get('status_2xx', 0) + r.get('status_5xx', 0), 20, r['raw'])
        self.assertGreater(r.get('status_5xx', 0), 0, r['raw'])
        self.assertEqual(nrfwd.stop(), 0)
        m = re.search(r'overload=(\d+)', nrfwd.log())
        self.assertTrue(m and int(m.group(1)) == r['status_5xx'], nrfwd.log())

    def test_client_reset_cancels_the_upstream_stream(self):
        loc = self.h.start_stub('local', 'stub-profiles-a.json', fault='delay:3000')
        nrfwd = self.h.start_nrfwd(H.nrfwd_config(SELF, local=loc.port,
                                                  timeouts={'perTryMs': 4000,
                                                            'requestMs': 5000}))
        cl = subprocess.Popen(['curl', '-s', '--http2-prior-knowledge', '-o', '/dev/null',
                               nrfwd.url(PROFILE + ID_AMF1)])
        try:
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline and self.stub_streams(loc) == 0:
                time.sleep(0.05)
            self.assertEqual(self.stub_streams(loc), 1)
        finally:
            cl.kill()
            cl.wait()
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and self.stub_streams(loc) != 0:
            time.sleep(0.05)
        self.assertEqual(self.stub_streams(loc), 0)  # well before the 3 s delay
        self.assertEqual(nrfwd.stop(), 0)
        self.assertIn('client_resets=1', nrfwd.log())

    def stub_streams(self, stub):
        st, _, body = H.curl(stub.url('/_stub/stats'))
        return json.loads(body)['streams_active'] - 1  # minus this request


class TestExplainMatchesTheDataPath(Base):
    """`nrfwd-ctl explain` renders what the client gets when NRFs fail
    (decision.branches): a real nrfwd must answer exactly that, status,
    header fields in wire order and body bytes."""

    ERR = [{'errorCondition': 'NRF_Local_Unavailable', 'errorCode': 503,
            'errorTitle': 'Local "down"', 'errorDetail': 'l\u00e0-bas \\ /', 'retryAfter': '3'},
           {'errorCondition': 'NRF_Not_Reachable', 'errorCode': 504,
            'errorCause': 'NO_NRF', 'errorDetail': '\u00fcberall still'}]

    def explain(self, cfg, path):
        cfgfile = os.path.join(self.h.tmpdir, 'explain-%d.json' % cfg['generalOptions']['ocnrfPort'])
        with open(cfgfile, 'w') as f:
            json.dump(cfg, f)
        ex = subprocess.run([H.binary('nrfwd-ctl'), 'explain', cfgfile, '--path', path],
                            capture_output=True, timeout=10, check=True)
        doc = json.loads(ex.stdout)
        return {b['local']: b for b in doc['decision']['branches']}

    def expect(self, url, want):
        st, fields, body = raw_answer(url)
        self.assertEqual(want['kind'], 'error', want)
        self.assertEqual(st, want['status'])
        expect = [('content-type', want['headers']['content-type']),
                  ('content-length', str(len(body)))]
        if 'retry-after' in want['headers']:
            expect.append(('retry-after', want['headers']['retry-after']))
        self.assertEqual(fields, expect)
        self.assertEqual(body, json.dumps(want['problemDetails'], separators=(',', ':'),
                                          ensure_ascii=False).encode())

    def test_local_nrf_down(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        dead_local, dead_peer = H.free_port(), H.free_port()
        cases = [
            # (name, peers, path, branch, pick)
            ('no peer, local-only answer', [], PROFILE + ID_AMF1, 'down',
             lambda b: b['answer']),
            ('the only candidate down', [H.peer('nrf-x.test', dead_peer)], PROFILE + ID_AMF1,
             'down', lambda b: b['everyCandidateDown']),
            ('the candidate claims absence', [H.peer('nrf-e.test', pe.port)], PROFILE + ID_AMF1,
             'down', lambda b: b['candidates'][0]['claimsAbsence']),
            ('both candidates down, held down or not', [H.peer('nrf-x.test', dead_peer),
                                                        H.peer('nrf-y.test', H.free_port(),
                                                               priority=2)],
             DISC_UDM, 'down', lambda b: b['everyCandidateDown']),
        ]
        for name, peers, path, local, pick in cases:
            with self.subTest(name):
                cfg = H.nrfwd_config(SELF, local=dead_local, peers=peers,
                                     error_responses=self.ERR)
                nrfwd = self.h.start_nrfwd(cfg)
                want = pick(self.explain(cfg, path)[local])
                self.assertEqual(want['condition'], 'NRF_Local_Unavailable')
                for _ in range(2):  # the local NRF refusing, then held down
                    self.expect(nrfwd.url(path), want)
        # a peer's data is relayed, with its fields and nrfwd's Via member
        cfg = H.nrfwd_config(SELF, local=dead_local, peers=[H.peer('nrf-e.test', pe.port)],
                             error_responses=self.ERR)
        nrfwd = self.h.start_nrfwd(cfg)
        want = self.explain(cfg, PROFILE + ID_UDM1)['down']['candidates'][0]['answersData']
        self.assertEqual((want['kind'], want['from']), ('relay', 'nrf-e.test:%d' % pe.port))
        st, fields, _ = raw_answer(nrfwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200)
        self.assertIn(('x-nrfstub', 'nrf-e'), fields)
        self.assertEqual(fields[-1], ('via', want['via']))
        self.assertEqual(want['via'], '2.0 %s:%d' % (SELF, nrfwd.port))

    def test_local_nrf_claims_absence_and_every_candidate_is_down(self):
        loc = self.h.start_stub('local', 'stub-profiles-empty.json')
        cfg = H.nrfwd_config(SELF, local=loc.port, peers=[H.peer('nrf-x.test', H.free_port())],
                             error_responses=self.ERR)
        nrfwd = self.h.start_nrfwd(cfg)
        want = self.explain(cfg, PROFILE + ID_UDM1)['claimsAbsence']['everyCandidateDown']
        self.assertEqual(want['condition'], 'NRF_Not_Reachable')
        self.expect(nrfwd.url(PROFILE + ID_UDM1), want)


class TestHttpDetails(Base):
    def test_head_answered_with_a_body_ends_at_its_headers(self):
        """An upstream that sends a body on HEAD (nrfstub --head-body) must
        not cost the client its answer: status and fields, END_STREAM on
        HEADERS, the upstream stream cancelled, nothing counted as failed."""
        for head_body in (True, False):
            with self.subTest(head_body=head_body):
                loc = self.h.start_stub('local', 'stub-profiles-a.json',
                                        extra=['--head-body'] if head_body else [])
                nrfwd = self.h.start_nrfwd(H.nrfwd_config(SELF, local=loc.port),
                                           management=True)
                url = nrfwd.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF')
                _, _, get_body = raw_answer(url)
                st, fields, body = raw_answer(url, method='HEAD')
                self.assertEqual(st, 200)
                self.assertEqual(body, b'')
                self.assertIn(('content-length', str(len(get_body))), fields)
                self.assertIn(('x-nrfstub', 'local'), fields)
                self.assertEqual(fields[-1], ('via', '2.0 %s:%d' % (SELF, nrfwd.port)))
                frames, rc = nghttp_frames(url, 'HEAD')
                self.assertEqual(rc, 0, frames)
                self.assertEqual(frames, [('HEADERS', 0x05)])  # END_STREAM | END_HEADERS
                # the upstream connection is still good
                st, _, body = raw_answer(url)
                self.assertEqual((st, body), (200, get_body))
                m = H.metrics(nrfwd)
                self.assertEqual(H.metric_value(m, 'nrfwd_relay_aborts_total'), 0)
                self.assertEqual(H.metric_value(m, 'nrfwd_try_failures_total'), 0)
                self.assertEqual(H.metric_value(m, 'nrfwd_requests_total', outcome='local'), 4)
                self.assertEqual([r['method'] for r in H.stub_requests(loc.port)],
                                 ['GET', 'HEAD', 'HEAD', 'GET'])
                self.h.cleanup()

    def test_an_answer_without_a_body_is_relayed_with_end_stream_on_its_headers(self):
        for name, peer in (('local', False), ('peer', True)):
            with self.subTest(name):
                pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='status:204')
                loc = self.h.start_stub('local', 'stub-profiles-a.json',
                                        fault='status:404' if peer else 'status:204')
                nrfwd = self.h.start_nrfwd(H.nrfwd_config(
                    SELF, local=loc.port, peers=[H.peer('nrf-e.test', pe.port)]))
                frames, rc = nghttp_frames(nrfwd.url(PROFILE + ID_UDM1))
                self.assertEqual(rc, 0, frames)
                self.assertEqual(frames, [('HEADERS', 0x05)])  # no empty DATA frame
                st, hd, _ = H.curl(nrfwd.url(PROFILE + ID_UDM1))
                self.assertEqual((st, hd.get('x-nrfstub')), (204, ['nrf-e' if peer else 'local']))
                self.h.cleanup()

    def test_head_answers_nrfwd_gives_itself_have_no_body(self):
        nrfwd, loc = self.fwd()
        url = nrfwd.url(PROFILE + ID_AMF1)
        own = 'via: 2.0 %s:%d' % (SELF, nrfwd.port)
        _, get_fields, get_body = raw_answer(url, headers=[own])
        st, fields, body = raw_answer(url, headers=[own], method='HEAD')
        self.assertEqual(st, 508)
        self.assertEqual(body, b'')
        self.assertEqual(fields, get_fields)  # content-length of the GET answer
        self.assertIn(('content-length', str(len(get_body))), fields)
        frames, rc = nghttp_frames(url, 'HEAD', headers=[own])
        self.assertEqual(rc, 0, frames)
        self.assertEqual(frames, [('HEADERS', 0x05)])
        self.assertEqual(H.stub_requests(loc.port), [])

    def test_relayed_answers_carry_own_via_member_last(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        nrfwd, loc = self.fwd(peers=[H.peer('nrf-e.test', pe.port)])
        mine = ('via', '2.0 %s:%d' % (SELF, nrfwd.port))
        for name, path, hdrs, stub in [
                ('local answer', PROFILE + ID_AMF1, [], 'local'),
                ('peer answer', PROFILE + ID_UDM1, [], 'nrf-e'),
                ('kept local answer', PROFILE + ID_UDM1,
                 ['via: 2.0 nrf-e.test:%d' % pe.port], 'local')]:
            with self.subTest(name):
                st, fields, _ = raw_answer(nrfwd.url(path), headers=hdrs)
                self.assertIn(('x-nrfstub', stub), fields)
                self.assertEqual([f for f in fields if f[0] == 'via'], [mine])
                self.assertEqual(fields[-1], mine)
        # nrfwd's own answers carry none
        st, fields, _ = raw_answer(nrfwd.url(PROFILE + ID_AMF1),
                                   headers=['via: 2.0 %s:%d' % (SELF, nrfwd.port)])
        self.assertEqual(st, 508)
        self.assertEqual([f for f in fields if f[0] == 'via'], [])

    def test_answers_relayed_with_rewritten_links_carry_own_via_member_too(self):
        port = H.free_port()
        loc = self.h.start_stub('local', 'stub-profiles-a.json', port=port,
                                extra=['--link-host', '127.0.0.1:%d' % port])
        cfg = H.nrfwd_config(SELF, local=loc.port)
        cfg['runtime']['localNrf']['rewriteLinks'] = True
        nrfwd = self.h.start_nrfwd(cfg)
        st, fields, body = raw_answer(nrfwd.url('/nnrf-nfm/v1/nf-instances'))
        self.assertEqual(st, 200, body)
        self.assertIn(nrfwd.url('/nnrf-nfm/v1/nf-instances'), body.decode())  # rewritten
        self.assertIn(('content-length', str(len(body))), fields)
        self.assertEqual([f for f in fields if f[0] == 'via'],
                         [('via', '2.0 %s:%d' % (SELF, nrfwd.port))])
        self.assertEqual(fields[-1][0], 'via')

    def test_via_on_responses_switched_off_live(self):
        loc = self.h.start_stub('local', 'stub-profiles-a.json')
        nrfwd = self.h.start_nrfwd(H.nrfwd_config(SELF, local=loc.port), management=True)
        _, hd, _ = H.curl(nrfwd.url(PROFILE + ID_AMF1))
        self.assertEqual(hd.get('via'), ['2.0 %s:%d' % (SELF, nrfwd.port)])
        st, _, doc = H.api(nrfwd, 'PATCH', '/nrf-configuration/v1/generalOptions',
                           {'viaOnResponses': False})
        self.assertEqual(st, 200, doc)
        self.assertIs(doc['viaOnResponses'], False)
        deadline = time.monotonic() + 5
        while True:
            st, hd, _ = H.curl(nrfwd.url(PROFILE + ID_AMF1))
            if 'via' not in hd or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(st, 200)
        self.assertNotIn('via', hd)
        st, _, doc = H.api(nrfwd, 'PATCH', '/nrf-configuration/v1/generalOptions',
                           {'viaOnResponses': 'no'})
        self.assertEqual(st, 400, doc)


class TestLoad(Base):
    def test_h2load_20000_requests_relayed_by_the_local_nrf(self):
        nrfwd, _ = self.fwd()
        r = H.h2load(nrfwd.url(PROFILE + ID_AMF1), n=20000, c=10, m=10)
        sys.stderr.write('\n  h2load local relay: %.0f req/s\n' % r.get('rps', 0))
        self.assertEqual(r.get('succeeded'), 20000, r['raw'])
        self.assertEqual(r.get('failed'), 0)
        self.assertEqual(r.get('errored'), 0)
        self.assertEqual(r.get('status_2xx'), 20000)

    def test_h2load_forwarded_requests_with_two_workers(self):
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        loc = self.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config(SELF, local=loc.port, peers=[H.peer('nrf-e.test', pe.port)])
        nrfwd = self.h.start_nrfwd(cfg, workers=2)
        r = H.h2load(nrfwd.url(PROFILE + ID_UDM1), n=5000, c=20, m=10)
        sys.stderr.write('\n  h2load forwarded (local 404 -> peer): %.0f req/s\n'
                         % r.get('rps', 0))
        self.assertEqual(r.get('succeeded'), 5000, r['raw'])
        self.assertEqual(r.get('status_2xx'), 5000)


class TestLifecycle(Base):
    def test_sigterm_drains_and_exits_0(self):
        nrfwd, _ = self.fwd()
        st, _, _ = H.curl(nrfwd.url(PROFILE + ID_AMF1))
        self.assertEqual(st, 200)
        rc = nrfwd.stop(signal.SIGTERM, timeout=10)
        self.assertEqual(rc, 0, nrfwd.log())
        self.assertIn('nrfwd stopped', nrfwd.log())

    def test_sigterm_lets_a_request_in_flight_finish(self):
        loc = self.h.start_stub('local', 'stub-profiles-a.json', fault='delay:600')
        cfg = H.nrfwd_config(SELF, local=loc.port, timeouts={'perTryMs': 2000,
                                                             'requestMs': 3000})
        nrfwd = self.h.start_nrfwd(cfg)
        import threading
        res = {}
        t = threading.Thread(target=lambda: res.update(r=H.curl(nrfwd.url(PROFILE + ID_AMF1))))
        t.start()
        time.sleep(0.2)
        os.kill(nrfwd.pid, signal.SIGTERM)
        t.join(10)
        self.assertEqual(res['r'][0], 200)
        self.assertEqual(nrfwd.proc.wait(10), 0)

    def test_bad_configuration_exits_1_listing_every_problem(self):
        cfg = H.nrfwd_config(SELF, local=H.free_port())
        cfg['generalOptions']['ocnrfPort'] = 0
        cfg['runtime']['timeouts']['perTryMs'] = -5
        nrfwd = self.h.start_nrfwd(cfg, wait=False)
        self.assertEqual(nrfwd.proc.wait(10), 1)
        log = nrfwd.log()
        self.assertIn('/generalOptions/ocnrfPort: ', log)
        self.assertIn('/runtime/timeouts/perTryMs: ', log)

    def test_leading_double_dash_is_accepted(self):
        cfg = H.nrfwd_config(SELF, local=None)
        nrfwd = self.h.start_nrfwd(cfg, extra=())
        self.assertTrue(nrfwd.alive())
        # same binary with EAL-style arguments before "--"
        cfg2 = H.nrfwd_config(SELF)
        path = os.path.join(self.h.tmpdir, 'dd.json')
        with open(path, 'w') as f:
            json.dump(cfg2, f)
        proc = self.h._spawn('nrfwd-dd', [H.binary('nrfwd'), '--no-pci', '-l', '0', '--',
                                          '--config', path],
                             cfg2['runtime']['listen'][0]['port'])
        self.assertTrue(H._wait_for_line(proc, 'nrfwd listening on', 10), proc.log())


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
