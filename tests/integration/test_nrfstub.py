#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests for app/nrfstub (the NRF stand-in).

Usage: python3 tests/integration/test_nrfstub.py [--build-dir BUILD] [unittest args]

Starts real nrfstub processes on free loopback ports and talks to them with
curl (--http2-prior-knowledge, one request per invocation), nghttp, h2load
and raw sockets. Every process started here is stopped by pid in cleanup.
Standard library only. NRFSTUB_TEST_WRAPPER (e.g. "valgrind -q
--error-exitcode=9 --leak-check=full") runs every stub under a wrapper; a
non-zero exit of a stub stopped by SIGTERM then fails the test.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_DIR = 'build'
# e.g. NRFSTUB_TEST_WRAPPER="valgrind -q --error-exitcode=9 --leak-check=full"
WRAPPER = os.environ.get('NRFSTUB_TEST_WRAPPER', '').split()

ID_AMF1 = '5a1f0b6e-6f0a-4c1e-9a01-0000000a0001'
ID_SMF1 = '5a1f0b6e-6f0a-4c1e-9a01-0000000a0011'


def stub_bin():
    b = BUILD_DIR
    if not os.path.isabs(b) and not os.path.isdir(b):
        b = os.path.join(ROOT, b)
    return os.path.join(b, 'app', 'nrfstub', 'nrfstub')


def conf(name):
    return os.path.join(ROOT, 'conf', name)


def free_port(family=socket.AF_INET, host='127.0.0.1'):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def have_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(('::1', 0))
        return True
    except OSError:
        return False


class Stub:
    """One nrfstub process; stderr goes to a file read for the ready line."""

    def __init__(self, tmpdir, profiles='stub-profiles-a.json', name='nrf-a',
                 host='127.0.0.1', extra=(), port=None):
        family = socket.AF_INET6 if ':' in host else socket.AF_INET
        self.port = port or free_port(family, host)
        self.name = name
        hp = '[%s]' % host if ':' in host else host
        self.base = 'http://%s:%d' % (hp, self.port)
        self.logpath = os.path.join(tmpdir, '%s-%d.log' % (name, self.port))
        self.log = open(self.logpath, 'wb')
        cmd = WRAPPER + [stub_bin(), '--listen', '%s:%d' % (hp, self.port),
               '--profiles', conf(profiles), '--name', name] + list(extra)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=self.log)
        ready = 'nrfstub %s listening on %s:%d' % (name, hp, self.port)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if ready in self.stderr():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        out = self.stderr()
        self.stop()
        raise RuntimeError('nrfstub did not start: ' + out)

    def stderr(self):
        with open(self.logpath, 'rb') as f:
            return f.read().decode('utf-8', 'replace')

    def stop(self, sig=signal.SIGTERM, timeout=5):
        """Stop by pid; returns the exit code."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def url(self, path):
        return self.base + path


class Resp:
    def __init__(self, rc, status, headers, body, elapsed):
        self.rc = rc
        self.status = status
        self.headers = headers  # list of (lower-case name, value)
        self.body = body
        self.elapsed = elapsed

    def header(self, name):
        for k, v in self.headers:
            if k == name:
                return v
        return None

    def json(self):
        return json.loads(self.body)


def curl(url, method=None, data=None, data_file=None, headers=(), max_time=5):
    """One request per curl run (curl 7.88 cannot reuse an h2c connection)."""
    with tempfile.TemporaryDirectory() as td:
        body_path = os.path.join(td, 'body')
        cmd = ['curl', '--http2-prior-knowledge', '-s', '-D', '-', '-o', body_path,
               '--max-time', str(max_time)]
        if method:
            cmd += ['-X', method]
        for h in headers:
            cmd += ['-H', h]
        if data is not None:
            dpath = os.path.join(td, 'data')
            with open(dpath, 'wb') as f:
                f.write(data.encode() if isinstance(data, str) else data)
            cmd += ['--data-binary', '@' + dpath]
        if data_file is not None:
            cmd += ['--data-binary', '@' + data_file]
        cmd.append(url)
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           timeout=max_time + 10)
        elapsed = time.monotonic() - t0
        status, hdrs = 0, []
        for line in p.stdout.decode('latin-1').split('\r\n'):
            m = re.match(r'HTTP/\S+ (\d{3})', line)
            if m:
                status, hdrs = int(m.group(1)), []
            elif ':' in line:
                k, v = line.split(':', 1)
                hdrs.append((k.strip().lower(), v.strip()))
        body = b''
        if os.path.exists(body_path):
            with open(body_path, 'rb') as f:
                body = f.read()
        return Resp(p.returncode, status, hdrs, body, elapsed)


def write_big_profiles(path, extra_amf=24):
    """The A profile set plus @extra_amf more AMF profiles: an AMF discovery
    answer of about 30 KB (over the bigdrop default of 16 KiB), while
    `limit=1`, SMF and profile answers stay near 1 KB."""
    with open(conf('stub-profiles-a.json')) as f:
        doc = json.load(f)
    amf = doc['nfProfiles'][0]
    for i in range(extra_amf):
        p = json.loads(json.dumps(amf))
        p['nfInstanceId'] = '5a1f0b6e-6f0a-4c1e-9a01-0000000b%04d' % i
        p['nfInstanceName'] = 'amf-big-%d' % i
        doc['nfProfiles'].append(p)
    with open(path, 'w') as f:
        json.dump(doc, f)
    return path


def nghttp_codes(out):
    """{path: status} of the streams nghttp -s completed."""
    return {m.group(2): int(m.group(1)) for m in
            re.finditer(r'^\s*\d+\s+\S+\s+\S+\s+\S+\s+(\d{3})\s+\S+\s+(\S+)\s*$', out,
                        re.M)}


def run(cmd, timeout=60):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout).stdout.decode('utf-8', 'replace')


class StubCase(unittest.TestCase):
    """Base: a temp dir and stubs stopped in cleanup, even on failure."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='nrfstub-test-')
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def start(self, **kw):
        s = Stub(self.tmp, **kw)
        self.addCleanup(self.stop_checked, s)
        return s

    def stop_checked(self, s):
        running = s.proc.poll() is None
        rc = s.stop()
        if running:
            self.assertEqual(rc, 0, 'nrfstub exit %s: %s' % (rc, s.stderr()[-2000:]))

    def set_fault(self, stub, mode, arg=None, count=None):
        body = dict(mode) if isinstance(mode, dict) else {'mode': mode}
        if arg is not None:
            body['arg'] = arg
        if count is not None:
            body['count'] = count
        r = curl(stub.url('/_stub/fault'), 'PUT', json.dumps(body))
        self.assertEqual(r.status, 200, r.body)
        return r.json()

    def records(self, stub, query=''):
        r = curl(stub.url('/_stub/requests' + query))
        self.assertEqual(r.status, 200)
        return r.json()

    def stats(self, stub):
        r = curl(stub.url('/_stub/stats'))
        self.assertEqual(r.status, 200)
        return r.json()

    def assertProblem(self, r, status):
        self.assertEqual(r.status, status, r.body)
        self.assertEqual(r.header('content-type'), 'application/problem+json')
        self.assertEqual(r.json()['status'], status)


class CliTest(StubCase):
    def bad(self, args, what):
        p = subprocess.run([stub_bin()] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=10)
        self.assertEqual(p.returncode, 2, what)
        lines = p.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn('error', lines[0])

    def test_bad_arguments_exit_2_with_one_line(self):
        port = str(free_port())
        lst = '127.0.0.1:' + port
        badjson = os.path.join(self.tmp, 'bad.json')
        with open(badjson, 'w') as f:
            f.write('{"nfProfiles": [ {"nfType": "AMF"} ]}')
        broken = os.path.join(self.tmp, 'broken.json')
        with open(broken, 'w') as f:
            f.write('{"nfProfiles": [')
        prof = conf('stub-profiles-a.json')
        self.bad([], 'no args')
        self.bad(['--listen', lst], 'no profiles')
        self.bad(['--profiles', prof], 'no listen')
        self.bad(['--listen', lst, '--profiles', '/nonexistent.json'], 'missing file')
        self.bad(['--listen', lst, '--profiles', broken], 'broken json')
        self.bad(['--listen', lst, '--profiles', badjson], 'profile without id')
        self.bad(['--listen', 'nonsense', '--profiles', prof], 'bad listen')
        self.bad(['--listen', '127.0.0.1:99999', '--profiles', prof], 'bad port')
        self.bad(['--listen', lst, '--profiles', prof, '--fault', 'explode'], 'bad fault')
        self.bad(['--listen', lst, '--profiles', prof, '--fault', 'status:99'], 'bad status')
        self.bad(['--listen', lst, '--profiles', prof, '--log-level', 'loud'], 'bad level')
        self.bad(['--listen', lst, '--profiles', prof, '--bogus'], 'unknown option')
        self.bad(['--listen', lst, '--profiles', prof, '--name', 'a b'], 'bad name')

    def test_help_exits_0(self):
        p = subprocess.run([stub_bin(), '--help'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=10)
        self.assertEqual(p.returncode, 0)
        self.assertIn(b'--listen', p.stdout)

    def test_sigterm_and_sigint_exit_0_promptly(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            s = self.start()
            self.set_fault(s, 'blackhole')
            # a stream left open must not hold up the exit
            hang = subprocess.Popen(['curl', '--http2-prior-knowledge', '-s',
                                     '--max-time', '5', s.url('/x')],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.addCleanup(lambda p=hang: p.poll() is None and os.kill(p.pid, signal.SIGKILL))
            time.sleep(0.2)
            t0 = time.monotonic()
            rc = s.stop(sig)
            self.assertEqual(rc, 0, s.stderr())
            self.assertLess(time.monotonic() - t0, 2.0)
            hang.wait(10)

    @unittest.skipUnless(have_ipv6_loopback(), 'no IPv6 loopback')
    def test_ipv6_listen(self):
        s = self.start(host='::1')
        r = curl(s.url('/nnrf-nfm/v1/nf-instances/' + ID_AMF1))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json()['nfType'], 'AMF')


class ApiTest(StubCase):
    """The NRF operations, on the A profile set (AMF x2 + SMF)."""

    def setUp(self):
        super().setUp()
        self.s = self.start()

    def test_discovery_by_type(self):
        r = curl(self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'
                            '&requester-nf-type=SMF'))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header('content-type'), 'application/json')
        self.assertEqual(r.header('x-nrfstub'), 'nrf-a')
        j = r.json()
        self.assertEqual(j['validityPeriod'], 3600)
        self.assertEqual(len(j['nfInstances']), 2)
        self.assertTrue(all(p['nfType'] == 'AMF' for p in j['nfInstances']))
        # served twice (second from the cache): same answer
        self.assertEqual(curl(self.s.url(
            '/nnrf-disc/v1/nf-instances?target-nf-type=AMF')).json(), j)

    def test_head_answer_has_headers_and_no_body(self):
        # A body on a HEAD answer is an HTTP/2 protocol error for the client.
        r = subprocess.run(['curl', '--http2-prior-knowledge', '-s', '-I', '--max-time', '5',
                            self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF')],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith('HTTP/2 '), r.stdout)
        self.assertIn('x-nrfstub: nrf-a', r.stdout)

    def test_discovery_filters(self):
        u = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'
        j = curl(self.s.url(u + '&target-nf-instance-id=' + ID_AMF1)).json()
        self.assertEqual([p['nfInstanceId'] for p in j['nfInstances']], [ID_AMF1])
        j = curl(self.s.url(u + '&limit=1')).json()
        self.assertEqual(len(j['nfInstances']), 1)
        j = curl(self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=SMF'
                            '&service-names=nsmf-pdusession,nfoo')).json()
        self.assertEqual(len(j['nfInstances']), 1)
        j = curl(self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=SMF'
                            '&service-names=nfoo')).json()
        self.assertEqual(j['nfInstances'], [])

    def test_discovery_unknown_type_is_empty_200(self):
        r = curl(self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=UDM'
                            '&requester-nf-type=AMF'))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json(), {'validityPeriod': 3600, 'nfInstances': []})

    def test_discovery_without_target_type_is_400(self):
        r = curl(self.s.url('/nnrf-disc/v1/nf-instances?requester-nf-type=AMF'))
        self.assertProblem(r, 400)
        self.assertEqual(r.header('x-nrfstub'), 'nrf-a')

    def test_profile_retrieval(self):
        r = curl(self.s.url('/nnrf-nfm/v1/nf-instances/' + ID_SMF1))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json()['nfInstanceId'], ID_SMF1)
        r = curl(self.s.url('/nnrf-nfm/v1/nf-instances/no-such-id'))
        self.assertProblem(r, 404)

    def test_list(self):
        r = curl(self.s.url('/nnrf-nfm/v1/nf-instances'))
        self.assertEqual(r.status, 200)
        items = r.json()['_links']['items']
        self.assertEqual(len(items), 3)
        self.assertTrue(items[0]['href'].startswith(
            self.s.base + '/nnrf-nfm/v1/nf-instances/'))
        r = curl(self.s.url('/nnrf-nfm/v1/nf-instances?nf-type=SMF'))
        self.assertEqual(len(r.json()['_links']['items']), 1)

    def test_register_then_discover_update_deregister(self):
        nid = '11111111-2222-3333-4444-555555555555'
        prof = {'nfInstanceId': nid, 'nfType': 'NEF', 'nfStatus': 'REGISTERED',
                'fqdn': 'nef-1.seg1.example.com'}
        u = self.s.url('/nnrf-nfm/v1/nf-instances/' + nid)
        r = curl(u, 'PUT', json.dumps(prof), headers=['content-type: application/json'])
        self.assertEqual(r.status, 201)
        self.assertEqual(r.json(), prof)
        self.assertEqual(r.header('location'), u)
        r = curl(u, 'PUT', json.dumps(prof))
        self.assertEqual(r.status, 200)
        j = curl(self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=NEF')).json()
        self.assertEqual([p['nfInstanceId'] for p in j['nfInstances']], [nid])
        # heartbeat-style JSON Patch: SUSPENDED is not discoverable
        r = curl(u, 'PATCH', json.dumps([{'op': 'replace', 'path': '/nfStatus',
                                          'value': 'SUSPENDED'}]),
                 headers=['content-type: application/json-patch+json'])
        self.assertEqual(r.status, 204)
        j = curl(self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=NEF')).json()
        self.assertEqual(j['nfInstances'], [])
        self.assertEqual(curl(u).json()['nfStatus'], 'SUSPENDED')
        self.assertEqual(curl(u, 'DELETE').status, 204)
        self.assertEqual(curl(u).status, 404)
        self.assertEqual(curl(u, 'DELETE').status, 404)
        r = curl(u, 'PUT', '{"nfType": "NEF"}')
        self.assertProblem(r, 400)
        r = curl(u, 'PUT', 'not json')
        self.assertProblem(r, 400)

    def test_subscriptions(self):
        body = {'nfStatusNotificationUri': 'http://amf-1.seg1.example.com/notify',
                'reqNfType': 'AMF', 'subscrCond': {'nfType': 'SMF'}}
        r = curl(self.s.url('/nnrf-nfm/v1/subscriptions'), 'POST', json.dumps(body),
                 headers=['content-type: application/json'])
        self.assertEqual(r.status, 201)
        j = r.json()
        sid = j.pop('subscriptionId')
        self.assertEqual(j, body)
        loc = self.s.url('/nnrf-nfm/v1/subscriptions/' + sid)
        self.assertEqual(r.header('location'), loc)
        r = curl(loc, 'PATCH', json.dumps([{'op': 'replace', 'path': '/reqNfType',
                                            'value': 'SMF'}]))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json()['reqNfType'], 'SMF')
        self.assertEqual(r.json()['subscriptionId'], sid)
        r = curl(loc, 'PATCH', json.dumps({'validityTime': '2030-01-01T00:00:00Z'}))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json()['validityTime'], '2030-01-01T00:00:00Z')
        self.assertEqual(curl(loc, 'DELETE').status, 204)
        self.assertProblem(curl(loc, 'DELETE'), 404)
        self.assertProblem(curl(loc, 'PATCH', '{}'), 404)
        self.assertProblem(curl(self.s.url('/nnrf-nfm/v1/subscriptions'), 'POST',
                                '[1]'), 400)

    def test_access_token(self):
        r = curl(self.s.url('/oauth2/token'), 'POST',
                 'grant_type=client_credentials&nfInstanceId=' + ID_AMF1 +
                 '&nfType=AMF&targetNfType=UDM&scope=nudm-sdm%20nudm-uecm',
                 headers=['content-type: application/x-www-form-urlencoded'])
        self.assertEqual(r.status, 200)
        j = r.json()
        self.assertEqual(j['token_type'], 'Bearer')
        self.assertEqual(j['expires_in'], 3600)
        self.assertEqual(j['scope'], 'nudm-sdm nudm-uecm')
        self.assertTrue(j['access_token'])
        r2 = curl(self.s.url('/oauth2/token'), 'POST', 'grant_type=client_credentials')
        self.assertNotEqual(r2.json()['access_token'], j['access_token'])
        r = curl(self.s.url('/oauth2/token'), 'POST', 'scope=x')
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json()['error'], 'invalid_request')

    def test_unknown_path_404_wrong_method_405(self):
        self.assertProblem(curl(self.s.url('/nnrf-disc/v2/nf-instances')), 404)
        self.assertProblem(curl(self.s.url('/')), 404)
        r = curl(self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'), 'POST', '{}')
        self.assertProblem(r, 405)
        self.assertEqual(r.header('allow'), 'GET')
        self.assertProblem(curl(self.s.url('/oauth2/token')), 405)
        self.assertProblem(curl(self.s.url('/nnrf-nfm/v1/subscriptions')), 405)
        self.assertProblem(curl(self.s.url('/nnrf-nfm/v1/subscriptions/x'), 'GET'), 405)

    def test_body_limit_413(self):
        big = os.path.join(self.tmp, 'big')
        with open(big, 'wb') as f:
            f.write(b'x' * ((1 << 20) + 1))
        r = curl(self.s.url('/nnrf-nfm/v1/subscriptions'), 'POST', data_file=big)
        self.assertProblem(r, 413)


class ProfileSetTest(StubCase):
    def test_nrfs_know_different_nf_types(self):
        want = {'stub-profiles-a.json': {'AMF', 'SMF'},
                'stub-profiles-e.json': {'UDM', 'AUSF'},
                'stub-profiles-g.json': {'PCF'},
                'stub-profiles-empty.json': set()}
        for fname, types in want.items():
            s = self.start(profiles=fname, name='nrf-' + fname.split('-')[-1][:-5])
            for t in ('AMF', 'SMF', 'UDM', 'AUSF', 'PCF'):
                j = curl(s.url('/nnrf-disc/v1/nf-instances?target-nf-type=%s'
                               '&requester-nf-type=AMF' % t)).json()
                self.assertEqual(bool(j['nfInstances']), t in types, (fname, t))
            if fname == 'stub-profiles-e.json':
                tok = curl(s.url('/oauth2/token'), 'POST',
                           'grant_type=client_credentials').json()
                self.assertEqual(tok['expires_in'], 1800)  # file override


class RecordingTest(StubCase):
    def setUp(self):
        super().setUp()
        self.s = self.start()

    def test_records_via_lines_separately_in_order(self):
        self.assertEqual(curl(self.s.url('/_stub/requests'), 'DELETE').status, 204)
        vias = ['2.0 nrf-x.seg1.example.com:8080',
                '2.0 nrf-y.seg2.example.com:8080 (comment, with comma)']
        r = curl(self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'),
                 headers=['via: ' + vias[0], 'via: ' + vias[1], 'x-test: 1'])
        self.assertEqual(r.status, 200)
        recs = self.records(self.s)
        self.assertEqual(len(recs), 1)
        rec = recs[0]
        self.assertEqual(rec['method'], 'GET')
        self.assertEqual(rec['path'], '/nnrf-disc/v1/nf-instances?target-nf-type=AMF')
        self.assertEqual(rec['via'], vias)
        names = [h[0] for h in rec['headers']]
        self.assertEqual([h[1] for h in rec['headers'] if h[0] == 'via'], vias)
        self.assertLess(names.index('via'), names.index('x-test'))
        self.assertEqual(rec['status'], 200)
        self.assertTrue(rec['complete'])
        self.assertEqual(rec['fault'], 'none')

    def test_control_requests_are_not_recorded(self):
        curl(self.s.url('/_stub/requests'), 'DELETE')
        self.stats(self.s)
        self.set_fault(self.s, 'none')
        self.assertEqual(self.records(self.s), [])

    def test_bodies_small_and_large(self):
        curl(self.s.url('/_stub/requests'), 'DELETE')
        small = json.dumps({'nfStatusNotificationUri': 'http://n/x'})
        curl(self.s.url('/nnrf-nfm/v1/subscriptions'), 'POST', small)
        big = os.urandom(1 << 20)
        bigf = os.path.join(self.tmp, 'big')
        with open(bigf, 'wb') as f:
            f.write(big)
        curl(self.s.url('/upload/blob'), 'POST', data_file=bigf)
        recs = self.records(self.s)
        self.assertEqual(len(recs), 2)
        self.assertEqual(recs[0]['body'], small)
        self.assertEqual(recs[0]['body_sha256'], hashlib.sha256(small.encode()).hexdigest())
        self.assertFalse(recs[0]['body_truncated'])
        self.assertEqual(recs[1]['body_len'], 1 << 20)
        self.assertEqual(recs[1]['body_sha256'], hashlib.sha256(big).hexdigest())
        self.assertTrue(recs[1]['body_truncated'])
        self.assertLessEqual(len(recs[1].get('body_base64', '')), 4096 * 4 // 3 + 4)
        self.assertEqual(recs[1]['status'], 404)
        # since= and limit= select by sequence number
        self.assertEqual(len(self.records(self.s, '?since=%d' % recs[0]['seq'])), 1)
        self.assertEqual(self.records(self.s, '?limit=1')[0]['seq'], recs[1]['seq'])

    def test_no_record_option(self):
        s = self.start(name='nrf-quiet', extra=['--no-record'])
        curl(s.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'))
        self.assertEqual(self.records(s), [])
        st = self.stats(s)
        self.assertFalse(st['recording'])
        self.assertEqual(st['requests'], 1)

    def test_stats(self):
        curl(self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'))
        curl(self.s.url('/nope'))
        st = self.stats(self.s)
        self.assertEqual(st['name'], 'nrf-a')
        self.assertEqual(st['requests'], 2)
        self.assertEqual(st['responses'], {'200': 1, '404': 1})
        self.assertEqual(st['profiles'], 3)
        self.assertEqual(st['fault']['mode'], 'none')


class FaultTest(StubCase):
    URL = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'

    def setUp(self):
        super().setUp()
        self.s = self.start()

    def test_delay_does_not_block_other_streams(self):
        self.set_fault(self.s, 'delay', 400)
        r = curl(self.s.url(self.URL))
        self.assertEqual(r.status, 200)
        self.assertGreaterEqual(r.elapsed, 0.38)
        self.assertLess(r.elapsed, 3.0)
        # 10 concurrent streams on one connection: ~0.4 s, not 4 s
        t0 = time.monotonic()
        out = run(['nghttp', '-n', '-s', '-m', '10', self.s.url(self.URL)], 30)
        el = time.monotonic() - t0
        self.assertEqual(len(re.findall(r'\b200\b', out)), 10, out)
        self.assertLess(el, 2.0)
        # control endpoints are never delayed
        t0 = time.monotonic()
        self.stats(self.s)
        self.assertLess(time.monotonic() - t0, 0.35)

    def test_reset(self):
        self.set_fault(self.s, 'reset')
        r = curl(self.s.url(self.URL))
        self.assertNotEqual(r.rc, 0)
        self.assertEqual(r.status, 0)
        self.set_fault(self.s, 'reset', 7)  # REFUSED_STREAM
        self.assertNotEqual(curl(self.s.url(self.URL)).rc, 0)

    def test_status(self):
        self.set_fault(self.s, 'status', 503)
        r = curl(self.s.url(self.URL))
        self.assertProblem(r, 503)
        self.assertEqual(r.header('x-nrfstub'), 'nrf-a')
        self.set_fault(self.s, 'status', 404)
        self.assertProblem(curl(self.s.url(self.URL)), 404)

    def test_count_limits_the_fault(self):
        self.set_fault(self.s, 'status', 503, count=2)
        self.assertEqual(curl(self.s.url(self.URL)).status, 503)
        self.assertEqual(curl(self.s.url(self.URL)).status, 503)
        self.assertEqual(curl(self.s.url(self.URL)).status, 200)
        self.assertEqual(curl(self.s.url('/_stub/fault')).json()['mode'], 'none')

    def test_blackhole(self):
        self.set_fault(self.s, 'blackhole')
        r = curl(self.s.url(self.URL), max_time=1)
        self.assertEqual(r.rc, 28)  # timed out
        self.assertGreaterEqual(r.elapsed, 0.9)
        # the stub forgets the stream once the client has gone
        st = self.stats(self.s)
        self.assertEqual(st['streams_active'], 1)  # this request
        self.assertEqual(st['connections']['active'], 1)
        self.assertEqual(st['faults']['blackhole'], 1)

    def test_garbage_and_close(self):
        for mode, arg in (('garbage', None), ('close', None), ('close', 1)):
            self.set_fault(self.s, mode, arg)
            r = curl(self.s.url(self.URL))
            self.assertNotEqual(r.rc, 0, mode)
            self.assertEqual(r.status, 0, mode)
        self.set_fault(self.s, 'none')
        self.assertEqual(curl(self.s.url(self.URL)).status, 200)

    def test_faulted_requests_are_recorded(self):
        curl(self.s.url('/_stub/requests'), 'DELETE')
        self.set_fault(self.s, 'reset')
        curl(self.s.url(self.URL), headers=['via: 2.0 nrf-x:8080'])
        rec = self.records(self.s)[-1]
        self.assertEqual(rec['fault'], 'reset')
        self.assertEqual(rec['via'], ['2.0 nrf-x:8080'])

    def test_bad_fault_requests_are_400(self):
        for body in ('{"mode":"explode"}', '{"mode":"delay","arg":-1}', 'nope',
                     '{"mode":"status","arg":700}', '{"arg":1}'):
            r = curl(self.s.url('/_stub/fault'), 'PUT', body)
            self.assertProblem(r, 400)
        self.assertEqual(curl(self.s.url('/_stub/fault')).json()['mode'], 'none')

    def test_fault_from_command_line(self):
        s = self.start(name='nrf-slow', extra=['--fault', 'status:503'])
        self.assertEqual(curl(s.url(self.URL)).status, 503)

    def test_drop_sends_part_of_the_answer_then_closes_the_connection(self):
        full = curl(self.s.url(self.URL))
        self.assertGreater(len(full.body), 100)
        self.set_fault(self.s, 'drop', 100)
        r = curl(self.s.url(self.URL))
        self.assertEqual(r.status, 200)      # the headers came
        self.assertEqual(r.rc, 18)           # partial file: the body was cut
        self.assertEqual(r.body, full.body[:100])
        # every stream of the connection dies with it
        out = run(['nghttp', '-n', '-s', self.s.url(self.URL),
                   self.s.url('/nnrf-nfm/v1/nf-instances/' + ID_SMF1)], 30)
        self.assertEqual(nghttp_codes(out), {}, out)
        # an answer not longer than ARG is not cut; the connection stays
        self.set_fault(self.s, 'drop', 1000000)
        self.assertEqual(curl(self.s.url(self.URL)).rc, 0)
        st = self.stats(self.s)
        self.assertEqual(st['faults']['drop'], 4)
        self.assertGreaterEqual(st['connections']['accepted'], 5)

    def test_drop_once_then_normal_answers(self):
        self.set_fault(self.s, 'drop', 0, count=1)
        r = curl(self.s.url(self.URL))
        self.assertEqual((r.status, r.rc), (200, 18))
        self.assertEqual(r.body, b'')
        self.assertEqual(curl(self.s.url(self.URL)).rc, 0)
        self.assertEqual(curl(self.s.url('/_stub/fault')).json()['mode'], 'none')
        rec = self.records(self.s)
        self.assertEqual([x['fault'] for x in rec], ['drop', 'none'])


class BigDropTest(StubCase):
    """bigdrop: a real NRF that drops its whole connection (no GOAWAY) when
    one answer is over 16 KiB, while other streams are in flight."""
    DISC = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF'

    def setUp(self):
        super().setUp()
        prof = write_big_profiles(os.path.join(self.tmp, 'big.json'))
        self.s = self.start(profiles=prof, name='nrf-big')

    def test_only_an_answer_over_the_limit_drops_the_connection(self):
        big = curl(self.s.url(self.DISC))
        small = curl(self.s.url(self.DISC + '&limit=1'))
        self.assertGreater(len(big.body), 16384)
        self.assertLess(len(small.body), 4096)
        self.assertEqual(self.set_fault(self.s, 'bigdrop'),
                         {'mode': 'bigdrop', 'arg': 16384, 'count': -1, 'hold': 0,
                          'mute': False, 'dropped': False})
        curl(self.s.url('/_stub/requests'), 'DELETE')
        r = curl(self.s.url(self.DISC + '&limit=1'))
        self.assertEqual((r.rc, r.status), (0, 200))
        self.assertEqual(r.body, small.body)
        r = curl(self.s.url(self.DISC))
        self.assertNotEqual(r.rc, 0)
        self.assertEqual(r.status, 0)   # no headers: the answer was never sent
        self.assertEqual(curl(self.s.url('/nnrf-nfm/v1/nf-instances/' + ID_SMF1)).status, 200)
        rec = self.records(self.s)
        self.assertEqual([(x['fault'], x['status']) for x in rec],
                         [('none', 200), ('bigdrop', None), ('none', 200)])
        st = self.stats(self.s)
        self.assertEqual(st['faults']['bigdrop'], 1)
        self.assertTrue(st['fault']['dropped'])
        # a lower limit catches the small answers too
        self.set_fault(self.s, 'bigdrop', 100)
        self.assertEqual(curl(self.s.url(self.DISC + '&limit=1')).status, 0)

    def test_streams_held_at_the_first_drop_die_with_the_connection(self):
        self.set_fault(self.s, 'bigdrop', 16384)
        # hold: the small answers wait, so they are in flight at the drop
        r = curl(self.s.url('/_stub/fault'), 'PUT',
                 json.dumps({'mode': 'bigdrop', 'hold': 3000}))
        self.assertEqual(r.json()['hold'], 3000)
        urls = [self.s.url(self.DISC + '&limit=1'), self.s.url(self.DISC + '&limit=2'),
                self.s.url(self.DISC)]
        t0 = time.monotonic()
        out = run(['nghttp', '-n', '-s'] + urls, 30)
        self.assertLess(time.monotonic() - t0, 2.0)  # not held up by the hold
        self.assertEqual(nghttp_codes(out), {}, out)
        st = self.stats(self.s)
        self.assertEqual(st['faults']['bigdrop'], 1)
        self.assertTrue(st['fault']['dropped'])
        # after the first drop nothing is held: the small answers go out at
        # once, and answers made before the drop are sent before the FIN
        t0 = time.monotonic()
        out = run(['nghttp', '-n', '-s'] + urls, 30)
        self.assertLess(time.monotonic() - t0, 2.0)
        codes = nghttp_codes(out)
        self.assertEqual(sorted(codes.values()), [200, 200], out)
        self.assertNotIn('/nnrf-disc/v1/nf-instances?target-nf-type=AMF', codes)
        self.assertEqual(self.stats(self.s)['faults']['bigdrop'], 2)

    def test_count_limits_the_drops_not_the_small_answers(self):
        r = curl(self.s.url('/_stub/fault'), 'PUT',
                 json.dumps({'mode': 'bigdrop', 'count': 1}))
        self.assertEqual(r.status, 200)
        for _ in range(3):
            self.assertEqual(curl(self.s.url(self.DISC + '&limit=1')).status, 200)
        self.assertEqual(curl(self.s.url(self.DISC)).status, 0)
        self.assertEqual(curl(self.s.url(self.DISC)).status, 200)
        self.assertEqual(curl(self.s.url('/_stub/fault')).json()['mode'], 'none')

    def ping_then_big(self, mute):
        """A PING and the big request in one write: (PING ACK seen, closed)."""
        self.assertEqual(self.set_fault(self.s, {'mode': 'bigdrop', 'mute': mute})['mute'], mute)
        sys.path.append('/usr/lib/python3/dist-packages')  # Debian's python3-h2
        import h2.config
        import h2.connection
        import h2.events
        c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        c.initiate_connection()
        c.ping(b'nrfstub!')
        c.send_headers(1, [(':method', 'GET'), (':scheme', 'http'), (':authority', 'nrf'),
                           (':path', self.DISC)], end_stream=True)
        sk = socket.create_connection(('127.0.0.1', self.s.port), timeout=5)
        sk.sendall(c.data_to_send())
        acked = closed = False
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not closed:
            data = sk.recv(65536)
            if not data:
                closed = True
                break
            for ev in c.receive_data(data):
                acked = acked or isinstance(ev, h2.events.PingAckReceived)
        sk.close()
        return acked, closed

    def test_mute_writes_nothing_more_not_even_the_ping_ack(self):
        self.assertEqual(self.ping_then_big(False), (True, True))
        self.assertEqual(self.ping_then_big(True), (False, True))

    def test_command_line_and_bad_arguments(self):
        s = self.start(profiles=os.path.join(self.tmp, 'big.json'), name='nrf-big2',
                       extra=['--fault', 'bigdrop:20000:50'])
        self.assertEqual(curl(s.url('/_stub/fault')).json(),
                         {'mode': 'bigdrop', 'arg': 20000, 'count': -1, 'hold': 50,
                          'mute': False, 'dropped': False})
        r = curl(s.url(self.DISC + '&limit=1'))
        self.assertEqual(r.status, 200)
        self.assertGreaterEqual(r.elapsed, 0.04)
        s2 = self.start(profiles=os.path.join(self.tmp, 'big.json'), name='nrf-big3',
                        extra=['--fault', 'bigdrop:20000:0:mute'])
        self.assertTrue(curl(s2.url('/_stub/fault')).json()['mute'])
        for arg in ('bigdrop:1:x', 'bigdrop:x', 'delay:1:2', 'bigdrop:1:-1', 'bigdrop:1:0:loud',
                    'delay:1:0:mute'):
            p = subprocess.run([stub_bin(), '--listen', '127.0.0.1:%d' % free_port(),
                                '--profiles', conf('stub-profiles-a.json'), '--fault', arg],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
            self.assertEqual(p.returncode, 2, arg)
        for body in ('{"mode":"delay","hold":5}', '{"mode":"bigdrop","hold":-1}',
                     '{"mode":"bigdrop","hold":"1"}', '{"mode":"delay","mute":true}',
                     '{"mode":"bigdrop","mute":1}'):
            self.assertProblem(curl(s.url('/_stub/fault'), 'PUT', body), 400)


class RestartTest(StubCase):
    def test_a_stub_restarts_on_the_same_port_at_once(self):
        """Restart tests stop a stub with connections open and start it again
        on the same port: SO_REUSEADDR lets it bind despite TIME_WAIT."""
        s = self.start(name='nrf-r')
        port = s.port
        conns = [socket.create_connection(('127.0.0.1', port)) for _ in range(4)]
        for c in conns:
            c.sendall(PREFACE)
        time.sleep(0.1)
        self.assertEqual(s.stop(), 0)   # the stub closes first: TIME_WAIT on its side
        for c in conns:
            c.close()
        for _ in range(3):
            s2 = self.start(name='nrf-r', port=port)   # raises when bind fails
            self.assertEqual(curl(s2.url('/nnrf-nfm/v1/nf-instances/' + ID_AMF1)).status, 200)
            self.assertEqual(s2.stop(), 0)


def h2_frame(ftype, flags, sid, payload=b''):
    return (len(payload).to_bytes(3, 'big') + bytes([ftype, flags]) +
            sid.to_bytes(4, 'big') + payload)


def hpack_lit(index, value):
    """Literal header field without indexing, indexed name, no Huffman."""
    v = value.encode()
    assert index < 15 and len(v) < 127
    return bytes([index, len(v)]) + v


PREFACE = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' + h2_frame(4, 0, 0)


class RobustnessTest(StubCase):
    def setUp(self):
        super().setUp()
        self.s = self.start()

    def raw(self, data, read=True):
        with socket.create_connection(('127.0.0.1', self.s.port), timeout=2) as c:
            c.sendall(data)
            got = b''
            if not read:
                time.sleep(0.3)  # let the stub read it before our close
            else:
                try:
                    while True:
                        b = c.recv(65536)
                        if not b:
                            break
                        got += b
                except socket.timeout:
                    pass
            return got

    def alive(self):
        self.assertEqual(curl(self.s.url('/nnrf-nfm/v1/nf-instances/' + ID_AMF1)).status, 200)

    def test_garbage_and_http1_input(self):
        self.raw(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        self.raw(os.urandom(4096))
        self.raw(PREFACE + os.urandom(2048))
        self.raw(PREFACE + h2_frame(1, 4, 1, b'\xff\xff\xff\xff'))  # bad HPACK
        self.raw(PREFACE + h2_frame(0, 1, 1, b'data on idle stream'))
        self.alive()

    def test_client_gone_mid_request(self):
        curl(self.s.url('/_stub/requests'), 'DELETE')
        # :method POST, :scheme http, :path, :authority; no END_STREAM
        hdrs = b'\x83\x86' + hpack_lit(4, '/nnrf-nfm/v1/subscriptions') + \
            hpack_lit(1, 'nrf-test:8080')
        self.raw(PREFACE + h2_frame(1, 4, 1, hdrs) + h2_frame(0, 0, 1, b'{"partial":'),
                 read=False)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            st = self.stats(self.s)
            if st['connections']['active'] == 1:
                break
            time.sleep(0.05)
        self.assertEqual(st['incomplete'], 1)
        self.assertEqual(st['streams_active'], 1)
        rec = self.records(self.s)[-1]
        self.assertFalse(rec['complete'])
        self.assertEqual(rec['method'], 'POST')
        self.assertEqual(rec['body_len'], len(b'{"partial":'))
        self.alive()

    def test_client_gone_with_blackholed_and_delayed_streams(self):
        for mode, arg in (('blackhole', None), ('delay', 5000)):
            self.set_fault(self.s, mode, arg)
            run(['nghttp', '-n', '-t', '1', '-m', '50',
                 self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF')], 30)
            self.set_fault(self.s, 'none')
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                st = self.stats(self.s)
                if st['streams_active'] == 1:
                    break
                time.sleep(0.05)
            self.assertEqual(st['streams_active'], 1, mode)
        self.alive()

    def test_many_concurrent_streams(self):
        out = run(['h2load', '-n', '5000', '-c', '2', '-m', '1000',
                   self.s.url('/nnrf-nfm/v1/nf-instances/' + ID_SMF1)], 120)
        self.assertRegex(out, r'requests: 5000 total, 5000 started, 5000 done, '
                              r'5000 succeeded, 0 failed, 0 errored', out)

    def test_h2load_20000(self):
        url = self.s.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'
                         '&requester-nf-type=SMF')
        out = run(['h2load', '-n', '20000', '-c', '4', '-m', '32', url], 120)
        self.assertRegex(out, r'requests: 20000 total, 20000 started, 20000 done, '
                              r'20000 succeeded, 0 failed, 0 errored', out)
        self.assertIn('20000 2xx', out)
        recs = self.records(self.s)
        self.assertEqual(len(recs), 1000)  # the last 1000 are kept
        seqs = [r['seq'] for r in recs]
        self.assertEqual(seqs, sorted(seqs))
        self.assertEqual(seqs[-1], self.stats(self.s)['record_seq'])
        # a large answer (hundreds of KiB) goes through flow control
        r = curl(self.s.url('/_stub/requests'))
        self.assertEqual(len(r.json()), 1000)


def main():
    global BUILD_DIR
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument('--build-dir', default='build')
    args, rest = ap.parse_known_args()
    BUILD_DIR = args.build_dir
    if not os.access(stub_bin(), os.X_OK):
        print('nrfstub binary not found: %s' % stub_bin(), file=sys.stderr)
        return 2
    prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
