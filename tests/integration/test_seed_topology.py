#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The seed's four figures end to end, and multi-hop forwarding.

Usage: python3 tests/integration/test_seed_topology.py [--build-dir BUILD]

Every NRF is a real nrfwd with a real nrfstub as its local NRF, on loopback
ports chosen at run time. NRF-A is in Segment 1 / Set 1, NRF-E in Segment 2 /
Set 2, NRF-G a second NRF of Set 2, NRF-F a third NRF for multi-hop. A client
(curl) asks A for an NF type only some NRFs know; the stubs record the Via
lines of what reached them, which shows the path the request took.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

A, E, G, F, B, X = ('nrf-a.seg1.test', 'nrf-e.seg2.test', 'nrf-g.seg2.test',
                    'nrf-f.seg3.test', 'nrf-b.seg1.test', 'nrf-x.seg1.test')
SET1, SET2 = 'set1.nrfset.5gc.mnc001.mcc001', 'set2.nrfset.5gc.mnc001.mcc001'


def disc(nf_type):
    return '/nnrf-disc/v1/nf-instances?target-nf-type=%s&requester-nf-type=AMF' % nf_type


class Topology(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-seed-')
        self.port = {k: H.free_port() for k in 'aegfbx'}
        self.stub = {}

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed)

    def nrf(self, key, host, profiles, peers=(), growth_sets=None, **kw):
        """Start the local stub of NRF @key, then nrfwd @key."""
        self.stub[key] = self.h.start_stub('stub-' + key, profiles)
        cfg = H.nrfwd_config(host, port=self.port[key], local=self.stub[key].port,
                             peers=peers, growth_sets=growth_sets, **kw)
        if growth_sets and not peers:
            cfg['nrfGrowth']['nrfForwardingOptions']['errorResponses'] = [{
                'errorCondition': 'NRF_Forwarding_Loop_Detection', 'errorCode': 508,
                'errorCause': 'LOOP_DETECTED', 'errorTitle': 'Loop Detected',
                'errorDetail': 'loop at %s:%d' % (host, self.port[key])}]
        else:
            cfg['forwardingOptions']['errorResponses'] = [{
                'errorCondition': 'NRF_Forwarding_Loop_Detection', 'errorCode': 508,
                'errorCause': 'LOOP_DETECTED', 'errorTitle': 'Loop Detected',
                'errorDetail': 'loop at %s:%d' % (host, self.port[key])}]
        return self.h.start_nrfwd(cfg, name='nrfwd-' + key)

    def peer(self, key, fqdn, priority=1):
        return H.peer(fqdn, self.port[key], priority=priority)

    def via_at(self, key):
        """Via lines of every request the local NRF of @key received."""
        return [r.get('via', []) for r in H.stub_requests(self.stub[key].port)]

    def ident(self, key, host):
        return '2.0 %s:%d' % (host, self.port[key])

    # -- NRF forwarding ---------------------------------------------------

    def test_figure_I1_loop_detection_in_nrf_forwarding(self):
        """A -> E -> (misrouted) A: A finds its own identity and answers 508."""
        # E's peer entry carries a wrong name with A's address: E cannot
        # recognise A, so the request really comes back to A.
        self.nrf('e', E, 'stub-profiles-e.json', peers=[self.peer('a', X)])
        a = self.nrf('a', A, 'stub-profiles-a.json', peers=[self.peer('e', E)])
        st, hd, body = H.curl(a.url(disc('NEF')))
        self.assertEqual(st, 508, body)
        doc = json.loads(body)
        self.assertEqual(doc['cause'], 'LOOP_DETECTED')
        self.assertEqual(doc['detail'], 'loop at %s:%d' % (A, self.port['a']))
        self.assertEqual(hd['content-type'], ['application/problem+json'])
        # A's local NRF saw the request once (the second visit was stopped
        # before processing); E's saw it with A's member.
        self.assertEqual(self.via_at('a'), [[]])
        self.assertEqual(self.via_at('e'), [[self.ident('a', A)]])

    def test_figure_I3_loop_prevention_in_nrf_forwarding(self):
        """A -> E; E's next destination is A, already in Via: not forwarded."""
        self.nrf('e', E, 'stub-profiles-e.json', peers=[self.peer('a', A)])
        a = self.nrf('a', A, 'stub-profiles-a.json', peers=[self.peer('e', E)])
        st, hd, body = H.curl(a.url(disc('NEF')))
        # docs/behaviour.md, step 8: every candidate skipped by loop prevention, and E has
        # a local NRF: E's local answer (an empty result) is the answer.
        self.assertEqual(st, 200, body)
        self.assertEqual(json.loads(body)['nfInstances'], [])
        self.assertEqual(hd['x-nrfstub'], ['stub-e'])
        self.assertEqual(self.via_at('a'), [[]])
        self.assertEqual(self.via_at('e'), [[self.ident('a', A)]])

    def test_figure_I3_without_local_nrf_answers_loop_prevention(self):
        """E as a pure forwarder: every candidate skipped -> 508 LOOP_PREVENTED."""
        cfg = H.nrfwd_config(E, port=self.port['e'], local=None, peers=[self.peer('a', A)])
        self.h.start_nrfwd(cfg, name='nrfwd-e')
        a = self.nrf('a', A, 'stub-profiles-a.json', peers=[self.peer('e', E)])
        st, _, body = H.curl(a.url(disc('NEF')))
        self.assertEqual(st, 508, body)
        self.assertEqual(json.loads(body)['cause'], 'LOOP_PREVENTED')
        self.assertEqual(self.via_at('a'), [[]])

    def test_multi_hop_a_e_f_records_the_via_path(self):
        """A -> E -> F: F's NRF sees A's member then E's, each appended last."""
        self.nrf('f', F, 'stub-profiles-g.json', peers=[self.peer('a', A)])
        self.nrf('e', E, 'stub-profiles-e.json',
                 peers=[self.peer('a', A, 1), self.peer('f', F, 2)])
        a = self.nrf('a', A, 'stub-profiles-a.json', peers=[self.peer('e', E)])
        st, hd, body = H.curl(a.url(disc('PCF')))
        self.assertEqual(st, 200, body)
        self.assertEqual([p['nfType'] for p in json.loads(body)['nfInstances']], ['PCF'])
        self.assertEqual(hd['x-nrfstub'], ['stub-f'])
        self.assertEqual(self.via_at('f'), [[self.ident('a', A), self.ident('e', E)]])
        # E skipped A (in Via) and went on to F; A's NRF was asked once.
        self.assertEqual(self.via_at('a'), [[]])

    def test_known_nf_is_answered_by_the_peer_segment(self):
        self.nrf('e', E, 'stub-profiles-e.json', peers=[self.peer('a', A)])
        a = self.nrf('a', A, 'stub-profiles-a.json', peers=[self.peer('e', E)])
        st, hd, body = H.curl(a.url(disc('UDM')))
        self.assertEqual(st, 200, body)
        self.assertEqual([p['nfType'] for p in json.loads(body)['nfInstances']], ['UDM'])
        self.assertEqual(hd['x-nrfstub'], ['stub-e'])

    # -- NRF Growth forwarding ----------------------------------------------

    def growth_a(self):
        return self.nrf('a', A, 'stub-profiles-a.json', growth_sets=[
            (SET2, [self.peer('e', E, 1), self.peer('g', G, 2)])])

    def test_figure_I2_loop_detection_in_nrf_growth_forwarding(self):
        self.nrf('e', E, 'stub-profiles-e.json', growth_sets=[
            (SET1, [self.peer('a', X, 1), self.peer('b', B, 2)])])
        a = self.growth_a()
        st, _, body = H.curl(a.url(disc('NEF')))
        self.assertEqual(st, 508, body)
        doc = json.loads(body)
        self.assertEqual(doc['cause'], 'LOOP_DETECTED')
        self.assertEqual(doc['detail'], 'loop at %s:%d' % (A, self.port['a']))
        self.assertEqual(self.via_at('a'), [[]])
        self.assertEqual(self.via_at('e'), [[self.ident('a', A)]])

    def test_figure_I4_loop_prevention_in_nrf_growth_forwarding(self):
        """E (Set 2) skips A (Set 1) found in Via and tries B, which is down."""
        self.nrf('e', E, 'stub-profiles-e.json', growth_sets=[
            (SET1, [self.peer('a', A, 1), self.peer('b', B, 2)])])
        a = self.growth_a()
        st, hd, body = H.curl(a.url(disc('NEF')))
        self.assertEqual(st, 200, body)
        self.assertEqual(json.loads(body)['nfInstances'], [])
        self.assertEqual(hd['x-nrfstub'], ['stub-e'])
        self.assertEqual(self.via_at('a'), [[]])

    def test_growth_scope_host_tries_the_other_host_of_the_set(self):
        b = self.h.start_stub('nrf-b', 'stub-profiles-empty.json', port=self.port['b'])
        self.nrf('e', E, 'stub-profiles-e.json', growth_sets=[
            (SET1, [self.peer('a', A, 1), self.peer('b', B, 2)])])
        a = self.growth_a()
        st, _, _ = H.curl(a.url(disc('NEF')))
        self.assertEqual(st, 200)
        recs = H.stub_requests(b.port)
        self.assertEqual([r['via'] for r in recs],
                         [[self.ident('a', A), self.ident('e', E)]])

    def test_growth_scope_set_skips_the_whole_set(self):
        b = self.h.start_stub('nrf-b', 'stub-profiles-empty.json', port=self.port['b'])
        e = H.nrfwd_config(E, port=self.port['e'], local=None, growth_sets=[
            (SET1, [self.peer('a', A, 1), self.peer('b', B, 2)])])
        e['nrfGrowth']['nrfForwardingOptions']['loopPreventionScope'] = 'SET'
        self.h.start_nrfwd(e, name='nrfwd-e')
        a = self.growth_a()
        st, _, body = H.curl(a.url(disc('NEF')))
        self.assertEqual(st, 508, body)
        self.assertEqual(json.loads(body)['cause'], 'LOOP_PREVENTED')
        self.assertEqual(H.stub_requests(b.port), [])

    def test_growth_fails_over_to_the_second_host_of_the_set(self):
        """E is down: A forwards to G, the next host of Set 2."""
        self.nrf('g', G, 'stub-profiles-g.json', growth_sets=[(SET1, [self.peer('a', A)])])
        a = self.growth_a()
        st, hd, body = H.curl(a.url(disc('PCF')))
        self.assertEqual(st, 200, body)
        self.assertEqual(hd['x-nrfstub'], ['stub-g'])
        self.assertEqual(self.via_at('g'), [[self.ident('a', A)]])


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
