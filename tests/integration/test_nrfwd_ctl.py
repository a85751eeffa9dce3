#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of `nrfwd-ctl explain`: the verdict for a request, and its failure
branches (decision.branches, decision.whenNoCandidateAnswers): what the
client gets when the local NRF or a candidate answers, claims absence or is
down, as docs/failures.md says and lib/fwd's rule computes.

Usage: python3 tests/integration/test_nrfwd_ctl.py [--build-dir BUILD] [unittest args]

Only nrfwd-ctl runs (no servers): the comparison with a running nrfwd is in
test_nrfwd_basic.py (TestExplainMatchesTheDataPath).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

SELF = 'nrf-a.test'
PORT = 18080
DISC = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF'
PROFILE = '/nnrf-nfm/v1/nf-instances/5a1f0b6e-6f0a-4c1e-9a01-0000000a0001'
E = 'nrf-e.test:18081'
F = 'nrf-f.test:18082'


def config(local=True, peers=((E, 1), (F, 2)), **kw):
    ps = [H.peer(n.split(':')[0], int(n.split(':')[1]), priority=p, ipv4=None)
          for n, p in peers]
    return H.nrfwd_config(SELF, port=PORT, local=18180 if local else None, peers=ps, **kw)


class Explain(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix='nrfwd-ctl-')

    def tearDown(self):
        self.dir.cleanup()

    def run_ctl(self, cfg, *args):
        path = os.path.join(self.dir.name, 'c.json')
        with open(path, 'w') as f:
            json.dump(cfg, f)
        return subprocess.run([H.binary('nrfwd-ctl'), 'explain', path] + list(args),
                              capture_output=True, text=True, timeout=10)

    def explain(self, cfg, *args):
        r = self.run_ctl(cfg, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def branch(self, doc, local):
        got = [b for b in doc['decision']['branches'] if b['local'] == local]
        self.assertEqual(len(got), 1, doc['decision']['branches'])
        return got[0]

    def assertRelay(self, ans, frm, via='2.0 %s:%d' % (SELF, PORT)):
        self.assertEqual(ans['kind'], 'relay', ans)
        self.assertEqual(ans['from'], frm)
        self.assertEqual(ans['via'], via)

    def assertError(self, ans, condition, status, cause):
        self.assertEqual(ans.get('kind', 'error'), 'error', ans)
        self.assertEqual(ans['condition'], condition)
        self.assertEqual(ans['status'], status)
        self.assertEqual(ans['problemDetails']['status'], status)
        self.assertEqual(ans['problemDetails']['cause'], cause)
        self.assertEqual(ans['headers']['content-type'], 'application/problem+json')

    # -- forwarding with a local NRF ---------------------------------------
    def test_local_answers_data_is_relayed_and_nothing_is_forwarded(self):
        b = self.branch(self.explain(config()), 'answers')
        self.assertRelay(b['answer'], 'local NRF')
        self.assertNotIn('candidates', b)

    def test_local_claims_absence_then_the_first_candidate_to_answer_is_relayed(self):
        doc = self.explain(config())
        b = self.branch(doc, 'claimsAbsence')
        self.assertEqual([c['peer'] for c in b['candidates']], [E, F])
        for c in b['candidates']:
            self.assertRelay(c['answersData'], c['peer'])
            self.assertRelay(c['claimsAbsence'], c['peer'])  # every NRF asked said so
            self.assertIn('404', c['claimsAbsence']['what'])
            self.assertFalse(c['heldDown'])
        self.assertError(b['everyCandidateDown'], 'NRF_Not_Reachable', 504,
                         'TARGET_NF_NOT_REACHABLE')
        self.assertRelay(b['everyCandidateInVia'], 'local NRF')
        self.assertEqual(doc['decision']['whenNoCandidateAnswers']['condition'],
                         'NRF_Not_Reachable')

    def test_local_down_never_turns_into_absence(self):
        b = self.branch(self.explain(config()), 'down')
        for c in b['candidates']:
            self.assertRelay(c['answersData'], c['peer'])
            self.assertError(c['claimsAbsence'], 'NRF_Local_Unavailable', 503,
                             'NF_SERVICE_FAILURE')
            self.assertEqual(c['claimsAbsence']['headers']['retry-after'], '1')
        self.assertError(b['everyCandidateDown'], 'NRF_Local_Unavailable', 503,
                         'NF_SERVICE_FAILURE')
        self.assertError(b['everyCandidateInVia'], 'NRF_Local_Unavailable', 503,
                         'NF_SERVICE_FAILURE')

    def test_the_absence_a_candidate_claims_follows_forwarding_triggers(self):
        trig = {'statusCodes': {'pattern': '^410$'}, 'emptyDiscoveryResult': True}
        cfg = config(forwarding={'forwardingTriggers': trig})
        doc = self.explain(cfg, '--path', DISC)
        self.assertIn('410', self.branch(doc, 'claimsAbsence')['candidates'][0]
                      ['claimsAbsence']['what'])
        self.assertError(self.branch(doc, 'down')['candidates'][0]['claimsAbsence'],
                         'NRF_Local_Unavailable', 503, 'NF_SERVICE_FAILURE')
        # statuses a peer answer is rerouted on never stand for absence
        trig['statusCodes']['pattern'] = '^5'
        doc = self.explain(cfg, '--path', DISC)
        c = self.branch(doc, 'claimsAbsence')['candidates'][0]
        self.assertIn('200 with an empty nfInstances', c['claimsAbsence']['what'])
        self.assertError(self.branch(doc, 'down')['candidates'][0]['claimsAbsence'],
                         'NRF_Local_Unavailable', 503, 'NF_SERVICE_FAILURE')
        # no answer claims absence at all: no such branch
        trig['emptyDiscoveryResult'] = False
        doc = self.explain(cfg, '--path', DISC)
        self.assertNotIn('claimsAbsence', self.branch(doc, 'down')['candidates'][0])

    def test_configured_error_responses_are_rendered(self):
        err = [{'errorCondition': 'NRF_Local_Unavailable', 'errorCode': 502,
                'errorCause': 'LOCAL_GONE', 'errorTitle': 'Gone \u00e9', 'retryAfter': '7'}]
        b = self.branch(self.explain(config(error_responses=err)), 'down')
        ans = b['everyCandidateDown']
        self.assertError(ans, 'NRF_Local_Unavailable', 502, 'LOCAL_GONE')
        self.assertEqual(ans['problemDetails']['title'], 'Gone \u00e9')
        self.assertEqual(ans['headers']['retry-after'], '7')
        self.assertEqual(ans['errorResponsesOf'], 'forwarding')

    # -- candidates skipped, held down, hop limit ----------------------------
    def test_every_candidate_in_via_gives_the_local_answer_or_loop_prevention(self):
        via = ['2.0 %s, 2.0 %s' % (E, F)]
        doc = self.explain(config(), '--via', via[0])
        self.assertEqual(doc['decision']['candidates'], [])
        self.assertEqual(doc['decision']['whenNoCandidateAnswers'], 'local answer')
        b = self.branch(doc, 'claimsAbsence')
        self.assertEqual(b['candidates'], [])
        self.assertRelay(b['everyCandidateDown'], 'local NRF')
        self.assertError(self.branch(doc, 'down')['everyCandidateDown'],
                         'NRF_Local_Unavailable', 503, 'NF_SERVICE_FAILURE')
        doc = self.explain(config(local=False), '--via', via[0])
        self.assertEqual(len(doc['decision']['branches']), 1)
        b = self.branch(doc, None)
        self.assertError(b['everyCandidateDown'], 'NRF_Forwarding_Loop_Prevention', 508,
                         'LOOP_PREVENTED')
        self.assertError(doc['decision']['whenNoCandidateAnswers'],
                         'NRF_Forwarding_Loop_Prevention', 508, 'LOOP_PREVENTED')

    def test_pure_forwarder(self):
        doc = self.explain(config(local=False))
        self.assertIsNone(doc['decision']['localNrf'])
        b = self.branch(doc, None)
        self.assertNotIn('answer', b)
        self.assertEqual([c['peer'] for c in b['candidates']], [E, F])
        self.assertRelay(b['candidates'][1]['claimsAbsence'], F)
        self.assertError(b['everyCandidateDown'], 'NRF_Not_Reachable', 504,
                         'TARGET_NF_NOT_REACHABLE')
        self.assertError(b['everyCandidateInVia'], 'NRF_Forwarding_Loop_Prevention', 508,
                         'LOOP_PREVENTED')

    def test_held_down_candidates_are_tried_last(self):
        doc = self.explain(config(), '--down', E)
        b = self.branch(doc, 'claimsAbsence')
        self.assertEqual([(c['peer'], c['heldDown']) for c in b['candidates']],
                         [(F, False), (E, True)])
        self.assertError(b['everyCandidateDown'], 'NRF_Not_Reachable', 504,
                         'TARGET_NF_NOT_REACHABLE')

    def test_a_held_down_candidate_left_out_is_not_absence(self):
        # maxForwardAttempts 1: E (down) is not tried at all; a local 404
        # is then not the whole truth.
        doc = self.explain(config(forwarding={'maxForwardAttempts': 1}), '--down', E)
        self.assertEqual([s['reason'] for s in doc['decision']['skipped']], ['down'])
        b = self.branch(doc, 'claimsAbsence')
        self.assertEqual([c['peer'] for c in b['candidates']], [F])
        self.assertError(b['everyCandidateDown'], 'NRF_Not_Reachable', 504,
                         'TARGET_NF_NOT_REACHABLE')

    def test_max_forward_hops_zero_stops_forwarding_with_the_hop_limit(self):
        doc = self.explain(config(), '--max-forward-hops', '0')
        self.assertEqual(doc['request']['maxForwardHops'], 0)
        b = self.branch(doc, 'claimsAbsence')
        self.assertEqual(b['candidates'], [])
        self.assertError(b['everyCandidateDown'], 'NRF_Forwarding_Hop_Limit', 508,
                         'MAX_HOPS_REACHED')
        self.assertError(self.branch(doc, 'down')['everyCandidateDown'],
                         'NRF_Local_Unavailable', 503, 'NF_SERVICE_FAILURE')
        doc = self.explain(config(), '--max-forward-hops', '3')
        self.assertEqual(len(self.branch(doc, 'claimsAbsence')['candidates']), 2)
        self.assertIsNone(self.explain(config())['request']['maxForwardHops'])
        for bad in ('-1', 'x', '1000000000'):
            r = self.run_ctl(config(), '--max-forward-hops', bad)
            self.assertEqual(r.returncode, 2, bad)

    # -- local only, at once, Via switched off -------------------------------
    def test_local_only_operation(self):
        doc = self.explain(config(), '--method', 'PUT', '--path', PROFILE)
        self.assertEqual(doc['decision']['verdict'], 'local-only')
        self.assertEqual([b['local'] for b in doc['decision']['branches']],
                         ['answers', 'down'])
        self.assertRelay(self.branch(doc, 'answers')['answer'], 'local NRF')
        self.assertError(self.branch(doc, 'down')['answer'], 'NRF_Local_Unavailable', 503,
                         'NF_SERVICE_FAILURE')
        doc = self.explain(config(local=False), '--method', 'PUT', '--path', PROFILE)
        ans = self.branch(doc, None)['answer']
        self.assertEqual((ans['status'], ans['problemDetails']['cause']),
                         (501, 'UNSUPPORTED_RESOURCE'))

    def test_answers_given_at_once_have_no_branches(self):
        doc = self.explain(config(), '--via', '2.0 %s:%d' % (SELF, PORT))
        self.assertEqual(doc['decision']['verdict'], 'loop-detected')
        self.assertNotIn('branches', doc['decision'])
        self.assertNotIn('whenNoCandidateAnswers', doc['decision'])

    def test_relayed_answers_carry_no_via_when_switched_off(self):
        cfg = config()
        cfg['generalOptions']['viaOnResponses'] = False
        doc = self.explain(cfg)
        self.assertRelay(self.branch(doc, 'answers')['answer'], 'local NRF', via=None)
        self.assertRelay(self.branch(doc, 'down')['candidates'][0]['answersData'], E,
                         via=None)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
