#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of the management listener (docs/rest-api.md): the REST
configuration API, persistence, the bearer token, metrics, health, and
nrfwd-ctl's get/put/patch/metrics.

Usage: python3 tests/integration/test_api.py [--build-dir BUILD] [unittest args]

nrfwd runs with --management 127.0.0.1:0 (the harness learns the port from
the log) in front of nrfstub upstreams on loopback. Standard library only.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

SELF = 'nrf-a.test'
ROOT = '/nrf-configuration/v1/'
GEN = ROOT + 'generalOptions'
FWD = ROOT + 'forwardingOptions'
GROWTH = ROOT + 'nrfGrowth/nrfForwardingOptions'
RUNTIME = ROOT + 'runtime'
ID_AMF1 = '5a1f0b6e-6f0a-4c1e-9a01-0000000a0001'  # only at stub "a" (local)
ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at stub "e" (peer)
PROFILE = '/nnrf-nfm/v1/nf-instances/'


class Base(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness()

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed or bool(os.environ.get('NRFWD_TEST_LOGS')))

    def start(self, workers=2, token_file=None, **kw):
        """Local stub (profiles a), peer stub nrf-e, nrfwd with the API."""
        self.loc = self.h.start_stub('local', 'stub-profiles-a.json')
        self.pe = self.h.start_stub('nrf-e', 'stub-profiles-e.json')
        self.e_name = 'nrf-e.test:%d' % self.pe.port
        cfg = H.nrfwd_config(SELF, local=self.loc.port,
                             peers=[H.peer('nrf-e.test', self.pe.port)], **kw)
        self.fwd = self.h.start_nrfwd(cfg, workers=workers, management=True,
                                      token_file=token_file)
        return self.fwd

    def api(self, method, path, body=None, **kw):
        return H.api(self.fwd, method, path, body, **kw)

    def assertProblem(self, status, hdrs, doc, want):
        self.assertEqual(status, want, doc)
        self.assertEqual(hdrs.get('content-type'), 'application/problem+json')
        self.assertEqual(doc['status'], want)
        self.assertIn('title', doc)
        self.assertIn('cause', doc)
        return doc

    def ctl(self, *args, stdin=None):
        r = subprocess.run([H.binary('nrfwd-ctl')] + list(args), input=stdin,
                           capture_output=True, timeout=30)
        return r.returncode, r.stdout.decode(), r.stderr.decode()


class TestResources(Base):
    def test_get_every_resource(self):
        self.start()
        st, hd, doc = self.api('GET', ROOT)
        self.assertEqual(st, 200)
        self.assertEqual(hd.get('content-type'), 'application/json')
        self.assertEqual(set(doc), {'generalOptions', 'forwardingOptions', 'nrfGrowth',
                                    'runtime'})
        self.assertEqual(doc['generalOptions']['ocnrfHost'], SELF)
        for path, key in ((GEN, 'ocnrfPort'), (FWD, 'nrfHostConfig'),
                          (GROWTH, 'loopPreventionScope'), (RUNTIME, 'listen')):
            st, hd, g = self.api('GET', path)
            self.assertEqual(st, 200, path)
            self.assertIn(key, g)
        self.assertEqual(self.api('GET', ROOT.rstrip('/'))[0], 200)
        st, _, body = self.api('HEAD', FWD)
        self.assertEqual((st, body), (200, ''))
        st, _, doc = self.api('GET', '/healthz')
        self.assertEqual((st, doc), (200, {'status': 'alive'}))
        st, _, doc = self.api('GET', '/readyz')
        self.assertEqual(st, 200, doc)
        self.assertEqual(doc['checks'], {'listeners': True, 'configuration': True,
                                         'localNrf': 'up'})
        self.assertEqual((doc['status'], doc['heldDown']), ('ready', []))
        st, hd, text = self.api('GET', '/metrics')
        self.assertEqual(st, 200)
        self.assertTrue(hd['content-type'].startswith('text/plain; version=0.0.4'))
        m = H.parse_metrics(text)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), 1)

    def test_readyz_fails_when_the_local_nrf_is_gone(self):
        self.start()
        self.loc.stop()
        # the workers see their connection go, reconnect, are refused and
        # hold the local NRF down: no request needed
        deadline = time.monotonic() + 2.0
        while True:
            st, _, doc = self.api('GET', '/readyz')
            if st != 200 or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        self.assertEqual(st, 503, doc)
        self.assertEqual(doc['checks']['localNrf'], 'held down')

    def test_put_and_patch_every_group(self):
        self.start()
        st, _, g = self.api('PUT', GEN, {'ocnrfHost': SELF, 'ocnrfPort': self.fwd.port,
                                         'aliases': ['127.0.0.1:%d' % self.fwd.port]})
        self.assertEqual(st, 200, g)
        self.assertEqual(g['aliases'], ['127.0.0.1:%d' % self.fwd.port])
        st, _, g = self.api('PATCH', GEN, {'nrfSetId': 'set1.example'})
        self.assertEqual(st, 200, g)
        self.assertEqual((g['nrfSetId'], g['aliases']),
                         ('set1.example', ['127.0.0.1:%d' % self.fwd.port]))

        st, _, f = self.api('GET', FWD)
        f['maxForwardAttempts'] = 4
        st, _, f2 = self.api('PUT', FWD, f)
        self.assertEqual(st, 200, f2)
        self.assertEqual(f2, f)
        st, _, f3 = self.api('PATCH', FWD, {'maxViaMembers': 9, 'errorResponses': [
            {'errorCondition': 'NRF_Forwarding_Loop_Detection', 'errorCode': 509,
             'errorCause': 'LOOPED'}]})
        self.assertEqual(st, 200, f3)
        self.assertEqual((f3['maxViaMembers'], f3['maxForwardAttempts']), (9, 4))

        gs = self.h.start_stub('nrf-g', 'stub-profiles-g.json')
        st, _, g = self.api('PUT', GROWTH, {
            'featureStatus': 'ENABLED', 'loopPreventionScope': 'SET',
            'nrfHostConfig': {'staticNrfConfigList': [
                {'nrfSetId': 'set2.example',
                 'nrfHostConfigList': [H.peer('nrf-g.test', gs.port)]}]}})
        self.assertEqual(st, 200, g)
        self.assertEqual(g['loopPreventionScope'], 'SET')
        st, _, g = self.api('PATCH', GROWTH, {'loopPreventionScope': 'HOST'})
        self.assertEqual((st, g['loopPreventionScope']), (200, 'HOST'))
        self.assertEqual(len(g['nrfHostConfig']['staticNrfConfigList']), 1)

        st, _, r = self.api('PATCH', RUNTIME, {'timeouts': {'perTryMs': 900}})
        self.assertEqual((st, r['timeouts']['perTryMs']), (200, 900))
        m = H.metrics(self.fwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), 8)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_reloads_total'), 7)
        # Every worker uses the last generation.
        self.assertEqual(H.metric_value(m, 'nrfwd_worker_config_generation', worker='0'), 8)
        self.assertEqual(H.metric_value(m, 'nrfwd_worker_config_generation', worker='1'), 8)
        # The changed error response is in effect.
        st, _, _ = H.curl(self.fwd.url(PROFILE + ID_AMF1),
                          headers=['via: 2.0 %s:%d' % (SELF, self.fwd.port)])
        self.assertEqual(st, 509)


class TestErrors(Base):
    def test_invalid_changes_are_refused_with_every_problem_and_change_nothing(self):
        self.start()
        _, _, before = self.api('GET', ROOT)
        st, hd, doc = self.api('PATCH', FWD, {'maxViaMembers': 0, 'maxForwardAttempts': 99,
                                              'nrfHostConfig': [{'port': 70000}]})
        self.assertProblem(st, hd, doc, 400)
        params = {p['param'] for p in doc['invalidParams']}
        self.assertIn('/forwardingOptions/maxViaMembers', params)
        self.assertIn('/forwardingOptions/maxForwardAttempts', params)
        self.assertTrue(any(p.startswith('/forwardingOptions/nrfHostConfig/0')
                            for p in params), params)
        for p in doc['invalidParams']:
            self.assertTrue(p['reason'])
        # Not JSON, PUT of a non-object, unknown field
        st, hd, doc = self.api('PUT', GEN, '{"ocnrfHost": ')
        self.assertProblem(st, hd, doc, 400)
        self.assertEqual(doc['cause'], 'INVALID_MSG_FORMAT')
        st, hd, doc = self.api('PUT', GEN, [1, 2])
        self.assertProblem(st, hd, doc, 400)
        self.assertEqual(doc['invalidParams'][0]['param'], '/generalOptions')
        st, hd, doc = self.api('PATCH', GEN, {'bogus': 1})
        self.assertProblem(st, hd, doc, 400)
        self.assertEqual(doc['invalidParams'][0]['param'], '/generalOptions/bogus')
        # Restart-only settings are named
        st, hd, doc = self.api('PATCH', RUNTIME, {
            'listen': [{'address': '127.0.0.1', 'port': H.free_port()}],
            'limits': {'maxConcurrentStreams': 5}})
        self.assertProblem(st, hd, doc, 400)
        self.assertEqual({p['param'] for p in doc['invalidParams']},
                         {'/runtime/listen', '/runtime/limits/maxConcurrentStreams'})
        _, _, after = self.api('GET', ROOT)
        self.assertEqual(after, before)
        m = H.metrics(self.fwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), 1)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_reload_failures_total'), 5)

    def test_protocol_errors(self):
        self.start()
        st, hd, doc = self.api('GET', ROOT + 'nope')
        self.assertProblem(st, hd, doc, 404)
        st, hd, doc = self.api('GET', '/')
        self.assertProblem(st, hd, doc, 404)
        st, hd, doc = self.api('DELETE', FWD)
        self.assertProblem(st, hd, doc, 405)
        self.assertEqual(hd['allow'], 'GET, HEAD, PUT, PATCH')
        st, hd, doc = self.api('PUT', ROOT, {})
        self.assertProblem(st, hd, doc, 405)
        self.assertEqual(hd['allow'], 'GET, HEAD')
        st, hd, doc = self.api('POST', '/metrics', {})
        self.assertProblem(st, hd, doc, 405)
        st, hd, doc = self.api('PATCH', FWD, {}, content_type='application/json')
        self.assertProblem(st, hd, doc, 415)
        self.assertEqual(hd['accept-patch'], 'application/merge-patch+json')
        st, hd, doc = self.api('PUT', FWD, {}, content_type='application/merge-patch+json')
        self.assertProblem(st, hd, doc, 415)
        st, hd, doc = self.api('PUT', FWD, {}, content_type='text/plain')
        self.assertProblem(st, hd, doc, 415)
        big = {'ocnrfHost': 'x' * (1024 * 1024 + 10)}
        st, hd, doc = self.api('PUT', GEN, big)
        self.assertProblem(st, hd, doc, 413)
        self.assertEqual(H.metric_value(H.metrics(self.fwd), 'nrfwd_config_generation'), 1)


class TestPersistence(Base):
    def test_restart_comes_back_with_the_last_accepted_change(self):
        fwd = self.start()
        st, _, _ = self.api('PATCH', FWD, {'maxViaMembers': 5})
        self.assertEqual(st, 200)
        st, _, _ = self.api('PATCH', GEN, {'aliases': ['10.9.8.7:8080']})
        self.assertEqual(st, 200)
        st, _, _ = self.api('PATCH', FWD, {'maxViaMembers': 0})  # refused
        self.assertEqual(st, 400)
        with open(fwd.config_path) as f:
            on_disk = json.load(f)
        self.assertEqual(on_disk['forwardingOptions']['maxViaMembers'], 5)
        self.assertEqual(on_disk['generalOptions']['aliases'], ['10.9.8.7:8080'])
        self.assertFalse([n for n in os.listdir(os.path.dirname(fwd.config_path))
                          if n.endswith('.nrfwd-tmp')])
        self.assertEqual(fwd.stop(), 0)
        self.fwd = self.h.start_nrfwd(fwd.config_path, workers=1, management=True,
                                      name='nrfwd-restarted')
        st, _, f = self.api('GET', FWD)
        self.assertEqual(f['maxViaMembers'], 5)
        st, _, g = self.api('GET', GEN)
        self.assertEqual(g['aliases'], ['10.9.8.7:8080'])
        # The alias is an own identity again after the restart: loop detected.
        st, _, _ = H.curl(self.fwd.url(PROFILE + ID_AMF1), headers=['via: 2.0 10.9.8.7:8080'])
        self.assertEqual(st, 508)

    def test_a_hand_edit_is_not_overwritten_and_the_file_keeps_its_own_keys(self):
        fwd = self.start()
        with open(fwd.config_path) as f:
            doc = json.load(f)
        # Edited by hand, not reloaded yet; spacing of the operator's own.
        doc['forwardingOptions']['maxViaMembers'] = 7
        edited = json.dumps(doc, indent=4) + '\n'
        with open(fwd.config_path, 'w') as f:
            f.write(edited)
        st, hd, p = self.api('PATCH', GEN, {'aliases': ['10.9.8.7:8080']})
        self.assertProblem(st, hd, p, 409)
        self.assertEqual(p['cause'], 'CONFIGURATION_CONFLICT')
        self.assertIn('changed on disk', p['detail'])
        self.assertIn(fwd.config_path, p['detail'])
        with open(fwd.config_path) as f:
            self.assertEqual(f.read(), edited)  # untouched
        st, _, g = self.api('GET', GEN)
        self.assertEqual(g['aliases'], [])  # not applied either
        st, _, fo = self.api('GET', FWD)
        self.assertNotEqual(fo['maxViaMembers'], 7)
        m = H.metrics(fwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), 1)
        # Reloaded (SIGHUP): the edit runs, and a change is written again.
        os.kill(fwd.pid, signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline:
            st, _, fo = self.api('GET', FWD)
            if fo.get('maxViaMembers') == 7:
                break
            time.sleep(0.05)
        self.assertEqual(fo['maxViaMembers'], 7)
        st, _, g = self.api('PATCH', GEN, {'aliases': ['10.9.8.7:8080']})
        self.assertEqual((st, g['aliases']), (200, ['10.9.8.7:8080']))
        with open(fwd.config_path) as f:
            on_disk = json.load(f)
        # What the operator wrote, plus the change: no default filled in,
        # keys in the operator's order.
        doc['generalOptions']['aliases'] = ['10.9.8.7:8080']
        self.assertEqual(on_disk, doc)
        self.assertEqual(list(on_disk), list(doc))
        self.assertEqual(list(on_disk['generalOptions']), list(doc['generalOptions']))
        # The file as written is nrfwd's again: the next change goes through.
        st, _, fo = self.api('PATCH', FWD, {'maxViaMembers': 6})
        self.assertEqual(st, 200)
        with open(fwd.config_path) as f:
            self.assertEqual(json.load(f)['forwardingOptions']['maxViaMembers'], 6)

    def test_a_change_that_cannot_be_persisted_is_not_applied(self):
        fwd = self.start()
        with open(fwd.config_path) as f:
            before = f.read()
        d, base = os.path.split(fwd.config_path)
        blocker = os.path.join(d, '.%s.nrfwd-tmp' % base)
        os.mkdir(blocker)  # the temp file cannot be created (also as root)
        try:
            st, hd, doc = self.api('PATCH', GEN, {'aliases': ['10.9.8.7:8080']})
            self.assertProblem(st, hd, doc, 500)
            self.assertIn('nrfwd-tmp', doc.get('detail', ''))
        finally:
            os.rmdir(blocker)
        with open(fwd.config_path) as f:
            self.assertEqual(f.read(), before)
        st, _, g = self.api('GET', GEN)
        self.assertEqual(g['aliases'], [])
        st, _, _ = H.curl(fwd.url(PROFILE + ID_AMF1), headers=['via: 2.0 10.9.8.7:8080'])
        self.assertEqual(st, 200)  # not an own identity: not applied
        m = H.metrics(fwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_reload_failures_total'), 1)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), 1)


class TestToken(Base):
    def test_bearer_token_is_required_for_changes(self):
        tok = os.path.join(self.h.tmpdir, 'token')
        with open(tok, 'w') as f:
            f.write('t0ken-Secret.42\n')
        self.start(token_file=tok)
        st, hd, doc = self.api('PATCH', FWD, {'maxViaMembers': 5})
        self.assertProblem(st, hd, doc, 401)
        self.assertTrue(hd['www-authenticate'].startswith('Bearer'))
        st, hd, doc = self.api('PUT', GEN, {'ocnrfHost': 'x', 'ocnrfPort': 1}, token='wrong')
        self.assertProblem(st, hd, doc, 401)
        st, _, f = self.api('PATCH', FWD, {'maxViaMembers': 5}, token='t0ken-Secret.42')
        self.assertEqual((st, f['maxViaMembers']), (200, 5))
        # Reads need no token and never show it.
        for path in (ROOT, GEN, FWD, GROWTH, RUNTIME, '/metrics', '/readyz'):
            st, _, body = self.api('GET', path)
            self.assertEqual(st, 200, path)
            self.assertNotIn('t0ken-Secret', json.dumps(body) if not isinstance(body, str)
                             else body)
        self.assertNotIn('t0ken-Secret', self.fwd.log())
        # nrfwd-ctl with and without the token file
        patch = os.path.join(self.h.tmpdir, 'p.json')
        with open(patch, 'w') as f:
            json.dump({'maxViaMembers': 6}, f)
        api = '--api=http://127.0.0.1:%d' % self.fwd.mgmt_port
        rc, out, err = self.ctl('patch', 'forwardingOptions', patch, api)
        self.assertEqual(rc, 1, out + err)
        self.assertIn('401', err)
        rc, out, err = self.ctl('patch', 'forwardingOptions', patch, api, '--token-file', tok)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)['maxViaMembers'], 6)
        # every refused and accepted change is in the log with its client
        log = self.fwd.log()
        self.assertRegex(log, r'WARN.*configuration change refused \(PATCH '
                         r'/nrf-configuration/v1/forwardingOptions from 127\.0\.0\.1:\d+\): '
                         r'401 Unauthorized: no bearer token')
        self.assertRegex(log, r'configuration change refused \(PUT '
                         r'/nrf-configuration/v1/generalOptions from 127\.0\.0\.1:\d+\): '
                         r'401 Unauthorized: wrong bearer token')
        self.assertEqual(len(re.findall(r'refused .* 401 Unauthorized', log)), 3, log)
        self.assertEqual(len(re.findall(r'applied \(PATCH forwardingOptions from '
                                        r'127\.0\.0\.1:\d+\)', log)), 2, log)
        self.assertNotIn('need no token', log)

    def test_no_token_is_warned_at_start_and_changes_name_their_client(self):
        self.start()
        self.assertIn('configuration changes (PUT/PATCH) need no token', self.fwd.log())
        st, _, doc = self.api('PATCH', FWD, {'maxViaMembers': 3})
        self.assertEqual(st, 200, doc)
        st, _, doc = self.api('PATCH', FWD, {'maxViaMembers': 'x'})
        self.assertEqual(st, 400, doc)
        log = self.fwd.log()
        self.assertRegex(log, r'applied \(PATCH forwardingOptions from 127\.0\.0\.1:\d+\)')
        self.assertRegex(log, r'WARN.*configuration change refused \(PATCH forwardingOptions '
                         r'from 127\.0\.0\.1:\d+\): 400')


class TestLive(Base):
    def test_identity_and_peer_changes_take_effect_at_once(self):
        fwd = self.start()
        via_x = 'via: 2.0 nrf-x.test:7000'
        st, _, _ = H.curl(fwd.url(PROFILE + ID_AMF1), headers=[via_x])
        self.assertEqual(st, 200)
        st, _, _ = self.api('PATCH', GEN, {'aliases': ['nrf-x.test:7000']})
        self.assertEqual(st, 200)
        for _ in range(4):  # every worker
            st, _, _ = H.curl(fwd.url(PROFILE + ID_AMF1), headers=[via_x])
            self.assertEqual(st, 508)
        # A new peer of higher priority (lower value) is preferred at once...
        gs = self.h.start_stub('nrf-g', 'stub-profiles-e.json')
        st, _, f = self.api('PATCH', FWD, {'nrfHostConfig': [
            H.peer('nrf-e.test', self.pe.port, priority=2),
            H.peer('nrf-g.test', gs.port, priority=1)]})
        self.assertEqual(st, 200, f)
        for _ in range(4):
            st, hd, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
            self.assertEqual((st, hd.get('x-nrfstub')), (200, ['nrf-g']))
        # ... and gone at once when removed.
        st, _, f = self.api('PATCH', FWD, {'nrfHostConfig': [
            H.peer('nrf-e.test', self.pe.port, priority=2)]})
        self.assertEqual(st, 200, f)
        for _ in range(4):
            st, hd, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
            self.assertEqual((st, hd.get('x-nrfstub')), (200, ['nrf-e']))
        self.assertIn('nrf-g.test:%d no longer configured' % gs.port, fwd.log())


class TestMetrics(Base):
    def test_metric_values_match_the_requests_sent(self):
        fwd = self.start()
        own = 'via: 2.0 %s:%d' % (SELF, fwd.port)
        e_via = 'via: 2.0 %s' % self.e_name
        n_fwd, n_loop, n_prev, n_local = 3, 2, 4, 5
        for _ in range(n_fwd):  # local 404 -> nrf-e 200
            st, hd, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
            self.assertEqual((st, hd.get('x-nrfstub')), (200, ['nrf-e']))
        for _ in range(n_loop):  # own identity in Via
            self.assertEqual(H.curl(fwd.url(PROFILE + ID_UDM1), headers=[own])[0], 508)
        for _ in range(n_prev):  # nrf-e in Via: skipped, the local 404 answers
            st, hd, _ = H.curl(fwd.url(PROFILE + ID_UDM1), headers=[e_via])
            self.assertEqual((st, hd.get('x-nrfstub')), (404, ['local']))
        for _ in range(n_local):  # local 200 relayed
            self.assertEqual(H.curl(fwd.url(PROFILE + ID_AMF1))[0], 200)
        m = H.metrics(fwd)
        v = lambda name, **kw: H.metric_value(m, name, **kw)  # noqa: E731
        op = 'NFProfileRetrieval'
        self.assertEqual(v('nrfwd_requests_total', operation=op, outcome='peer'), n_fwd)
        self.assertEqual(v('nrfwd_requests_total', operation=op, outcome='loop_detected'),
                         n_loop)
        self.assertEqual(v('nrfwd_requests_total', operation=op, outcome='local'),
                         n_prev + n_local)
        self.assertEqual(v('nrfwd_requests_total'), n_fwd + n_loop + n_prev + n_local)
        self.assertEqual(v('nrfwd_loop_detections_total'), n_loop)
        self.assertEqual(v('nrfwd_loop_preventions_total', peer=self.e_name), n_prev)
        self.assertEqual(v('nrfwd_loop_prevention_skips_total'), n_prev)
        self.assertEqual(v('nrfwd_forwards_total', peer=self.e_name, status='200'), n_fwd)
        self.assertEqual(v('nrfwd_forwards_total'), n_fwd)
        self.assertEqual(v('nrfwd_tries_total', peer=self.e_name, role='peer'), n_fwd)
        self.assertEqual(v('nrfwd_tries_total', role='local'),
                         n_fwd + n_prev + n_local)
        self.assertEqual(v('nrfwd_local_nrf_answers_total', status='404'), n_fwd + n_prev)
        self.assertEqual(v('nrfwd_local_nrf_answers_total', status='200'), n_local)
        self.assertEqual(v('nrfwd_try_failures_total'), 0)
        total = n_fwd + n_loop + n_prev + n_local
        self.assertEqual(v('nrfwd_request_duration_seconds_count', operation=op), total)
        self.assertEqual(v('nrfwd_request_duration_seconds_bucket', operation=op, le='+Inf'),
                         total)
        self.assertEqual(v('nrfwd_connections_accepted_total'), total)
        self.assertEqual(len([k for k in m if k[0] == 'nrfwd_worker_busy_ratio']), 2)
        # per-upstream try latency: every answered try counted once, by upstream
        lat = 'nrfwd_upstream_response_seconds'
        self.assertEqual(v(lat + '_count', peer=self.e_name, role='peer'), n_fwd)
        self.assertEqual(v(lat + '_count', role='local'), n_fwd + n_prev + n_local)
        self.assertEqual(v(lat + '_bucket', peer=self.e_name, le='+Inf'), n_fwd)
        self.assertGreater(v(lat + '_sum', peer=self.e_name), 0)
        self.assertLess(v(lat + '_sum', peer=self.e_name), n_fwd * 1.0)  # loopback stubs
        les = sorted((float(dict(k[1])['le']), val) for k, val in m.items()
                     if k[0] == lat + '_bucket' and dict(k[1]).get('peer') == self.e_name)
        self.assertEqual([c for _, c in les], sorted(c for _, c in les))  # cumulative
        # nrfwd-ctl shows the same
        rc, out, err = self.ctl('metrics', '--api', 'http://127.0.0.1:%d' % fwd.mgmt_port)
        self.assertEqual(rc, 0, err)
        m2 = H.parse_metrics(out)
        self.assertEqual(H.metric_value(m2, 'nrfwd_loop_preventions_total', peer=self.e_name),
                         n_prev)

    def test_failures_are_counted_by_peer_and_reason(self):
        dead = H.free_port()
        loc = self.h.start_stub('local', 'stub-profiles-empty.json')
        cfg = H.nrfwd_config(SELF, local=loc.port, peers=[H.peer('nrf-d.test', dead)])
        fwd = self.h.start_nrfwd(cfg, management=True)
        st, _, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 504)  # the only peer failed: not the local 404
        m = H.metrics(fwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_try_failures_total',
                                        peer='nrf-d.test:%d' % dead, reason='connect'), 1)
        self.assertEqual(H.metric_value(m, 'nrfwd_requests_total', outcome='not_reachable'), 1)


    def test_upstream_latency_histogram_sees_a_slow_local_nrf(self):
        loc = self.h.start_stub('local', 'stub-profiles-a.json', fault='delay:300')
        fwd = self.h.start_nrfwd(H.nrfwd_config(SELF, local=loc.port), management=True)
        for _ in range(3):
            self.assertEqual(H.curl(fwd.url(PROFILE + ID_AMF1))[0], 200)
        m = H.metrics(fwd)
        lat = 'nrfwd_upstream_response_seconds'
        self.assertEqual(H.metric_value(m, lat + '_count', role='local'), 3)
        self.assertEqual(H.metric_value(m, lat + '_bucket', role='local', le='0.25'), 0)
        self.assertEqual(H.metric_value(m, lat + '_bucket', role='local', le='1'), 3)
        self.assertGreaterEqual(H.metric_value(m, lat + '_sum', role='local'), 0.9)

    def test_build_info_process_metrics_and_busy_window(self):
        fwd = self.start()
        t0 = time.time()
        tck = os.sysconf('SC_CLK_TCK')

        def cpu_now():  # utime + stime from /proc, in clock ticks
            with open('/proc/%d/stat' % fwd.pid) as f:
                st = f.read().rsplit(')', 1)[1].split()
            return (int(st[11]) + int(st[12])) / tck
        cpu0 = cpu_now()
        status, _, text = self.api('GET', '/metrics')
        self.assertEqual(status, 200)
        m = H.parse_metrics(text)
        v = lambda name, **kw: H.metric_value(m, name, **kw)  # noqa: E731
        ver = subprocess.run([H.binary('nrfwd'), '--version'], capture_output=True,
                             text=True).stdout.split()[1]
        self.assertEqual(v('nrfwd_build_info', version=ver), 1)
        # the process_* series describe nrfwd's own process (from /proc)
        with open('/proc/%d/stat' % fwd.pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        with open('/proc/stat') as f:
            btime = int([ln for ln in f if ln.startswith('btime')][0].split()[1])
        start = btime + int(fields[19]) / tck
        self.assertAlmostEqual(v('process_start_time_seconds'), start, delta=0.05)
        self.assertLessEqual(v('process_start_time_seconds'), t0)
        # a fresh nrfwd may have used less than a clock tick: the series
        # lies between what /proc said before and after the scrape
        self.assertGreaterEqual(v('process_cpu_seconds_total'), cpu0)
        self.assertLessEqual(v('process_cpu_seconds_total'), cpu_now() + 1.0 / tck)
        rss = int(fields[21]) * os.sysconf('SC_PAGE_SIZE')
        self.assertGreater(v('process_resident_memory_bytes'), 1 << 20)
        self.assertLess(abs(v('process_resident_memory_bytes') - rss), 16 << 20)
        nfd = len(os.listdir('/proc/%d/fd' % fwd.pid))
        self.assertGreater(v('process_open_fds'), 3)
        self.assertLessEqual(abs(v('process_open_fds') - nfd), 2)
        self.assertGreater(v('process_max_fds'), v('process_open_fds'))
        # the exposition is valid
        promtool = shutil.which('promtool')
        if promtool is not None:
            r = subprocess.run([promtool, 'check', 'metrics'], input=text,
                               capture_output=True, text=True)
            # promtool's lint complains about names, not syntax: only a parse
            # error fails the test (its message says "error parsing")
            self.assertNotIn('error parsing', r.stdout + r.stderr)
            self.assertNotIn('text format parsing error', r.stdout + r.stderr)
        # busy ratio: a trailing window of 10 s, the same for two scrapers.
        # Work for ~1.5 s, then two scrapes right after each other agree
        # (before, the second saw ~0 over the few ms since the first).
        deadline = time.time() + 1.5
        while time.time() < deadline:
            H.curl(fwd.url(PROFILE + ID_AMF1))
        b1 = H.metrics(fwd)
        b2 = H.metrics(fwd)
        for w in ('0', '1'):
            r1 = H.metric_value(b1, 'nrfwd_worker_busy_ratio', worker=w)
            r2 = H.metric_value(b2, 'nrfwd_worker_busy_ratio', worker=w)
            self.assertAlmostEqual(r1, r2, delta=0.01)
        self.assertGreater(sum(H.metric_value(b2, 'nrfwd_worker_busy_ratio', worker=w)
                               for w in ('0', '1')), 0)


class TestCtl(Base):
    def test_get_put_patch_and_readable_errors(self):
        fwd = self.start(workers=1)
        api = ['--api', 'http://127.0.0.1:%d' % fwd.mgmt_port]
        rc, out, err = self.ctl('get', *api)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)['generalOptions']['ocnrfHost'], SELF)
        rc, out, err = self.ctl('get', 'nrfGrowth', *api)
        self.assertEqual(rc, 0, err)
        self.assertIn('loopPreventionScope', json.loads(out))
        rc, out, err = self.ctl('get', 'bogus', *api)
        self.assertEqual(rc, 2)

        f = os.path.join(self.h.tmpdir, 'g.json')
        with open(f, 'w') as fh:
            json.dump({'ocnrfHost': SELF, 'ocnrfPort': fwd.port, 'nrfSetId': 'set9'}, fh)
        rc, out, err = self.ctl('put', 'generalOptions', f, *api)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)['nrfSetId'], 'set9')
        rc, out, err = self.ctl('patch', 'forwardingOptions', '-', *api,
                                stdin=b'{"maxViaMembers": 0, "maxForwardAttempts": 0}')
        self.assertEqual(rc, 1)
        lines = err.splitlines()
        self.assertIn('400', lines[0])
        self.assertIn('  /forwardingOptions/maxViaMembers: ', err)
        self.assertIn('  /forwardingOptions/maxForwardAttempts: ', err)
        rc, out, err = self.ctl('patch', 'forwardingOptions', '-', *api,
                                stdin=b'{"maxViaMembers": 3}')
        self.assertEqual((rc, json.loads(out)['maxViaMembers']), (0, 3), err)
        rc, out, err = self.ctl('metrics', '--api', 'http://127.0.0.1:%d' % H.free_port())
        self.assertEqual(rc, 3)
        self.assertIn('cannot connect', err)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
