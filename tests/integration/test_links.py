#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of rewriteLinks (docs/decisions/0013-links-past-nrfwd.md).

Usage: python3 tests/integration/test_links.py [--build-dir BUILD] [unittest args]

An upstream's absolute URIs of itself (Location, JSON "href") are pointed at
the apiRoot the client used when the upstream has rewriteLinks, and relayed
as they are without it.

- The local NRF is an nrfstub started with --link-host 127.0.0.1:PORT (its
  own address, as an NRF configured with its apiRoot writes it): nrfwd
  passes the client's :authority to the local NRF, and nrfstub would
  otherwise build its links from that, which needs no rewriting.
- A peer is a plain nrfstub: for a forwarded request nrfwd sets :authority
  to the peer (nrf-e.test:PORT), so its Location points at the peer.
The client (curl) addresses nrfwd as nrf-a.test:PORT (Host, sent as
:authority over HTTP/2).
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

SELF = 'nrf-a.test'
NFI = '/nnrf-nfm/v1/nf-instances'
SUBS = '/nnrf-nfm/v1/subscriptions'
NEW_ID = '3f0c5b2a-7d1e-4e8a-9c11-00000000aa01'


class Base(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness()

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed or bool(os.environ.get('NRFWD_TEST_LOGS')))

    def front(self, nrfwd):
        """The apiRoot the client uses: http://nrf-a.test:PORT."""
        return 'http://%s:%d' % (SELF, nrfwd.port)

    def call(self, nrfwd, path, method='GET', data=None, headers=()):
        hdrs = [('Host', '%s:%d' % (SELF, nrfwd.port))] + list(headers)
        if data is not None:
            hdrs.append(('Content-Type', 'application/json'))
            data = json.dumps(data)
        return H.curl(nrfwd.url(path), method=method, data=data, headers=hdrs)

    def assert_length(self, hd, body):
        """content-length, when sent, is the body's length."""
        for v in hd.get('content-length', []):
            self.assertEqual(int(v), len(body), hd)

    def hrefs(self, doc):
        links = doc['_links']
        return [links['self']['href']] + [i['href'] for i in links['items']]


class TestLocalNrf(Base):
    def local(self, rewrite, limits=None, profiles='stub-profiles-a.json'):
        port = H.free_port()
        loc = self.h.start_stub('local', profiles, port=port,
                                extra=['--link-host', '127.0.0.1:%d' % port])
        cfg = H.nrfwd_config(SELF, local=loc.port, limits=limits)
        if rewrite is not None:
            cfg['runtime']['localNrf']['rewriteLinks'] = rewrite
        return self.h.start_nrfwd(cfg), loc

    def test_list_links_point_at_nrfwd(self):
        nrfwd, loc = self.local(True)
        st, hd, body = self.call(nrfwd, NFI)
        self.assertEqual(st, 200, body)
        self.assertEqual(hd.get('x-nrfstub'), ['local'])
        self.assert_length(hd, body)
        hrefs = self.hrefs(json.loads(body))
        self.assertEqual(len(hrefs), 4, body)  # self + three profiles
        for href in hrefs:
            self.assertTrue(href.startswith(self.front(nrfwd) + NFI), href)
        # the path after the origin is the NRF's
        self.assertEqual(hrefs[0], self.front(nrfwd) + NFI)

    def test_links_are_left_alone_by_default(self):
        for rewrite in (None, False):
            with self.subTest(rewriteLinks=rewrite):
                nrfwd, loc = self.local(rewrite)
                st, hd, body = self.call(nrfwd, NFI)
                self.assertEqual(st, 200, body)
                self.assertEqual(body, H.curl(loc.url(NFI))[2])
                for href in self.hrefs(json.loads(body)):
                    self.assertTrue(href.startswith('http://127.0.0.1:%d/' % loc.port), href)
                self.h.cleanup()

    def test_register_location_is_rewritten_and_the_profile_untouched(self):
        nrfwd, loc = self.local(True)
        # An NF on the NRF's own address: its addresses are not NRF links.
        own = '127.0.0.1:%d' % loc.port
        profile = {'nfInstanceId': NEW_ID, 'nfType': 'AUSF', 'nfStatus': 'REGISTERED',
                   'fqdn': '127.0.0.1', 'ipv4Addresses': ['127.0.0.1'],
                   'nfServices': [{'serviceInstanceId': 's1', 'serviceName': 'nausf-auth',
                                   'scheme': 'http', 'fqdn': '127.0.0.1',
                                   'ipEndPoints': [{'ipv4Address': '127.0.0.1',
                                                    'port': loc.port}],
                                   'apiPrefix': 'http://' + own}],
                   'customInfo': {'selfUri': 'http://%s%s/%s' % (own, NFI, NEW_ID)}}
        st, hd, body = self.call(nrfwd, '%s/%s' % (NFI, NEW_ID), method='PUT', data=profile)
        self.assertEqual(st, 201, body)
        self.assertEqual(hd.get('location'), ['%s%s/%s' % (self.front(nrfwd), NFI, NEW_ID)])
        self.assertEqual(json.loads(body), profile)
        self.assert_length(hd, body)
        # following the link goes through nrfwd
        st, hd, body = self.call(nrfwd, hd['location'][0][len(self.front(nrfwd)):])
        self.assertEqual(st, 200, body)
        self.assertEqual(json.loads(body)['nfInstanceId'], NEW_ID)

    def test_a_list_longer_than_64k_is_held_and_rewritten_whole(self):
        # Answers are held up to 64 KiB, those of an upstream with
        # rewriteLinks up to maxBodyBytes (1 MiB here).
        big = H.write_big_profiles(os.path.join(self.h.tmpdir, 'big.json'), extra_amf=1000)
        nrfwd, loc = self.local(True, profiles=big)
        st, hd, body = self.call(nrfwd, NFI)
        self.assertEqual(st, 200, body[:200])
        self.assertGreater(len(body), 64 * 1024)
        self.assert_length(hd, body)
        hrefs = self.hrefs(json.loads(body))
        self.assertEqual(len(hrefs), 1004)
        for href in hrefs:
            self.assertTrue(href.startswith(self.front(nrfwd) + NFI), href)

    def test_an_answer_over_max_body_bytes_is_relayed_as_it_is(self):
        nrfwd, loc = self.local(True, limits={'maxBodyBytes': 128})
        st, hd, body = self.call(nrfwd, NFI)
        self.assertEqual(st, 200, body)
        self.assertGreater(len(body), 128)
        self.assertEqual(body, H.curl(loc.url(NFI))[2])
        self.assertIn('over runtime.limits.maxBodyBytes', nrfwd.log())

    def test_an_answer_without_links_is_relayed_byte_for_byte(self):
        nrfwd, loc = self.local(True)
        disc = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'
        st, hd, body = self.call(nrfwd, disc)
        self.assertEqual(st, 200, body)
        self.assertEqual(body, H.curl(loc.url(disc))[2])
        st, hd, body = self.call(nrfwd, NFI + '/no-such-id')
        self.assertEqual(st, 404, body)
        self.assertEqual(json.loads(body)['cause'], 'DATA_NOT_FOUND')


class TestForwarded(Base):
    def forwarded(self, rewrite, management=False):
        """Local NRF answering 404 to everything, one peer (a plain stub)."""
        loc = self.h.start_stub('local', 'stub-profiles-empty.json', fault='status:404')
        pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        cfg = H.nrfwd_config(SELF, local=loc.port,
                             peers=[H.peer('nrf-e.test', pe.port, rewriteLinks=rewrite)])
        return self.h.start_nrfwd(cfg, management=management), pe

    def subscription(self, pe):
        peer = 'http://nrf-e.test:%d' % pe.port
        return peer, {
            'nfStatusNotificationUri': peer + '/callback',  # the consumer's: never touched
            'subscrCond': {'nfType': 'UDM'},
            'reqNotifEvents': ['NF_REGISTERED'],
            # echoed by nrfstub: a HAL link of the peer in a forwarded body
            '_links': {'self': {'href': peer + SUBS}},
        }

    def test_subscribe_location_and_links_point_at_nrfwd(self):
        nrfwd, pe = self.forwarded(True)
        peer, sub = self.subscription(pe)
        st, hd, body = self.call(nrfwd, SUBS, method='POST', data=sub)
        self.assertEqual(st, 201, body)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-e'])
        # the premise: the peer was addressed as itself
        self.assertEqual(H.stub_requests(pe.port)[-1]['authority'], 'nrf-e.test:%d' % pe.port)
        doc = json.loads(body)
        sid = doc['subscriptionId']
        self.assertEqual(hd.get('location'), ['%s%s/%s' % (self.front(nrfwd), SUBS, sid)])
        self.assertEqual(doc['_links']['self']['href'], self.front(nrfwd) + SUBS)
        self.assertEqual(doc['nfStatusNotificationUri'], peer + '/callback')
        self.assert_length(hd, body)
        # following the link: through nrfwd (local 404), forwarded, done
        st, hd, body = self.call(nrfwd, hd['location'][0][len(self.front(nrfwd)):],
                                 method='DELETE')
        self.assertEqual(st, 204, body)
        self.assertEqual(hd.get('x-nrfstub'), ['nrf-e'])

    def test_forwarded_links_point_at_the_peer_by_default(self):
        nrfwd, pe = self.forwarded(False)
        peer, sub = self.subscription(pe)
        st, hd, body = self.call(nrfwd, SUBS, method='POST', data=sub)
        self.assertEqual(st, 201, body)
        doc = json.loads(body)
        self.assertEqual(hd.get('location'), ['%s%s/%s' % (peer, SUBS, doc['subscriptionId'])])
        self.assertEqual(doc['_links']['self']['href'], peer + SUBS)

    def test_rewrite_links_changes_live(self):
        nrfwd, pe = self.forwarded(False, management=True)
        peer, sub = self.subscription(pe)
        for rewrite, origin in ((True, self.front(nrfwd)), (False, peer)):
            st, _, f = H.api(nrfwd, 'PATCH', '/nrf-configuration/v1/forwardingOptions',
                             {'nrfHostConfig': [H.peer('nrf-e.test', pe.port,
                                                       rewriteLinks=rewrite)]})
            self.assertEqual(st, 200, f)
            self.assertIs(f['nrfHostConfig'][0]['rewriteLinks'], rewrite)
            st, hd, body = self.call(nrfwd, SUBS, method='POST', data=sub)
            self.assertEqual(st, 201, body)
            self.assertTrue(hd['location'][0].startswith(origin + SUBS + '/'), hd)
            self.assertEqual(json.loads(body)['_links']['self']['href'], origin + SUBS)
        # the peer's connection pool was kept: the option is not its address
        self.assertNotIn('no longer configured', nrfwd.log())

    def test_a_link_of_another_host_is_left_alone(self):
        nrfwd, pe = self.forwarded(True)
        peer, sub = self.subscription(pe)
        other = 'http://nrf-e.test:%d%s' % (pe.port + 1, SUBS)  # not the peer's port
        sub['_links'] = {'self': {'href': other},
                         'items': [{'href': 'http://nrf-e.test.evil:%d/x' % pe.port}]}
        st, hd, body = self.call(nrfwd, SUBS, method='POST', data=sub)
        self.assertEqual(st, 201, body)
        doc = json.loads(body)
        self.assertEqual(doc['_links'], sub['_links'])
        # Location is still the peer's own: rewritten
        self.assertTrue(hd['location'][0].startswith(self.front(nrfwd) + SUBS), hd)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
