#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Loops observed by running nrfwd: GET /loops, nrfwd-ctl loops --api and
nrfwd-ctl fleet loops (docs/behaviour.md, "How to find a loop in
production").

Usage: python3 tests/integration/test_loops.py [--build-dir BUILD] [unittest args]

Three nrfwd, each its own NRF with its own key in one etcd (one member),
each with a local nrfstub that finds nothing (every discovery is
forwarded), in a misrouted ring:

    client -> A (nrf-a.test) --nrfHostConfig/0--> B (nrf-b.test)
              B --nrfHostConfig/0--> C (nrf-c.test)
              C --nrfHostConfig/0--> A, named nrf-a.test: loop prevention
                                      skips it (A is in Via)
              C --nrfHostConfig/1--> A (its second listen address,
                                      127.0.0.2), named nrf-x.test: not
                                      recognisable, so the request goes back
                                      to A: 508

Every discovery sent to A is therefore detected at A (Via: a, b, c) and
prevented at C (Via: a, b; nrf-a.test skipped). One more request to A
spells the same path differently (case, trailing dot, leading zeros): it
counts on the same entry. A request with 3gpp-Sbi-Max-Forward-Hops: 1
stops at B (hop limit, Via: a). Checked:
  - /loops of each shows exactly these paths and counts, the skipped
    entry's pointer at C, and nrfwd_loop_paths in /metrics;
  - nrfwd-ctl loops --api over the three names the cycle once
    (nrf-a -> nrf-b -> nrf-c -> nrf-a) with both kinds, the entry at A, at
    B and the two at C (the unrecognisable one marked), and lint's
    prediction; --dot marks the observed edges;
  - nrfwd-ctl fleet loops over the three keys says the same from the
    summaries the instances publish with their etcd status.
"""

import json
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402
import etcd_cluster as E  # noqa: E402

UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF'
LOOPED = 5


def ctl(*args, timeout=20.0):
    p = subprocess.run([H.binary('nrfwd-ctl')] + list(args), capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def loops(inst):
    st, _, doc = H.api(inst, 'GET', '/loops')
    assert st == 200, (st, doc)
    return doc


class TestLoops(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.h = H.Harness(prefix='nrfwd-loops-')
        cls.cluster = None
        try:
            cls._start()
        except BaseException:
            cls._teardown(dump=True)
            raise

    @classmethod
    def _start(cls):
        h = cls.h
        cls.cluster = c = E.EtcdCluster(h, members=1, name='etcd-loops')
        c.start()
        locs = [h.start_stub('local-%s' % n, 'stub-profiles-empty.json', extra=['--no-record'])
                for n in 'abc']
        pa, pb, pc = (H.free_port() for _ in range(3))
        cls.ports = {'a': pa, 'b': pb, 'c': pc}
        cls.name = {n: 'nrf-%s.test:%d' % (n, p) for n, p in cls.ports.items()}
        docs = {
            'a': H.nrfwd_config('nrf-a.test', port=pa, local=locs[0].port,
                                peers=[H.peer('nrf-b.test', pb)]),
            'b': H.nrfwd_config('nrf-b.test', port=pb, local=locs[1].port,
                                peers=[H.peer('nrf-c.test', pc)]),
            'c': H.nrfwd_config('nrf-c.test', port=pc, local=locs[2].port,
                                peers=[H.peer('nrf-a.test', pa, priority=1),
                                       H.peer('nrf-x.test', pa, priority=2,
                                              ipv4='127.0.0.2')]),
        }
        # A also listens on 127.0.0.2, where C's misnamed entry connects (one
        # address may not be the identity of two entries)
        docs['a']['runtime']['listen'].append({'address': '127.0.0.2', 'port': pa,
                                               'tls': False})
        tag = '%d-%d' % (os.getpid(), int(time.time()))
        cls.keys = {}
        cls.inst = {}
        for n in 'abc':
            key = '/nrfwd/loops-%s-%s/config' % (tag, n)
            cls.keys[n] = key
            E.put(c.url(0), key, json.dumps({k: v for k, v in docs[n].items()
                                              if k != 'runtime'}))
            cls.inst[n] = h.start_nrfwd(
                {'runtime': docs[n]['runtime']}, name='nrfwd-%s' % n, management=True,
                extra=['--config-etcd', c.endpoints, '--config-key', key,
                       '--instance-id', 'inst-%s' % n, '--etcd-lease-ttl', '3'])
        a = cls.inst['a']
        for _ in range(LOOPED):
            st, _, _ = H.curl(a.url(UDM), timeout=10.0)
            assert st == 508, st
        # the same path, spelled otherwise, straight to A
        via = '2.0 NRF-A.test.:0%d, HTTP/2.0 nrf-b.TEST:%d, 2.0 nrf-c.test:%d (x)' % (pa, pb, pc)
        st, _, _ = H.curl(a.url(UDM), headers=['via: ' + via], timeout=10.0)
        assert st == 508, st
        # one hop allowed: A forwards it, B may not
        st, _, _ = H.curl(a.url(UDM), headers=['3gpp-sbi-max-forward-hops: 1'], timeout=10.0)
        assert st != 200, st

    @classmethod
    def _teardown(cls, dump=False):
        try:
            cls.h.cleanup(dump=dump)
        finally:
            if cls.cluster is not None:
                cls.cluster.cleanup()

    @classmethod
    def tearDownClass(cls):
        cls._teardown(dump=getattr(cls, 'failed', False))

    def run(self, result=None):
        r = super().run(result)
        if result is not None and (result.failures or result.errors):
            type(self).failed = True
        return r

    def api_url(self, n):
        i = self.inst[n]
        return 'http://%s:%d' % (i.mgmt_host, i.mgmt_port)

    # -- per instance ------------------------------------------------------

    def test_1_paths_and_counts(self):
        nm = self.name
        a, b, c = (loops(self.inst[n]) for n in 'abc')
        self.assertEqual(a['identity'], nm['a'])
        self.assertEqual(a['distinctPaths'], 1, a)
        pa = a['paths'][0]
        self.assertEqual(pa['kind'], 'detected')
        self.assertEqual(pa['path'], [nm['a'], nm['b'], nm['c']])
        self.assertEqual(pa['count'], LOOPED + 1)
        self.assertIsNone(pa['skipped'])
        self.assertTrue(pa['client'].startswith('127.0.0.1:'), pa)
        self.assertFalse(pa['truncated'])

        self.assertEqual(c['distinctPaths'], 1, c)
        pc = c['paths'][0]
        self.assertEqual(pc['kind'], 'prevented')
        self.assertEqual(pc['path'], [nm['a'], nm['b']])
        self.assertEqual(pc['count'], LOOPED)
        self.assertEqual(pc['skipped'], nm['a'])
        self.assertEqual(pc['entry'], '/forwardingOptions/nrfHostConfig/0')

        self.assertEqual(b['distinctPaths'], 1, b)
        pb = b['paths'][0]
        self.assertEqual(pb['kind'], 'hop-limit')
        self.assertEqual(pb['path'], [nm['a']])
        self.assertEqual(pb['count'], 1)
        for d in (a, b, c):
            self.assertEqual(d['dropped'], 0)

        m = H.metrics(self.inst['a'])
        self.assertEqual(H.metric_value(m, 'nrfwd_loop_paths'), 1)
        self.assertEqual(H.metric_value(m, 'nrfwd_loop_paths_dropped_total'), 0)
        st, _, doc = H.api(self.inst['a'], 'GET', '/loops?limit=0')
        self.assertEqual(st, 400, doc)

    # -- merged over the management listeners ------------------------------

    def check_merged(self, doc):
        nm = self.name
        cycle = '%s -> %s -> %s -> %s' % (nm['a'], nm['b'], nm['c'], nm['a'])
        cycles = [c for c in doc['cycles'] if c['cycle'] == cycle]
        self.assertEqual(len(cycles), 1, json.dumps(doc['cycles'], indent=1))
        self.assertEqual(len(doc['cycles']), 1, [c['cycle'] for c in doc['cycles']])
        cy = cycles[0]
        self.assertEqual(cy['counts'], {'detected': LOOPED + 1, 'prevented': LOOPED,
                                        'hopLimit': 0})
        self.assertGreater(cy['ratePerSecond'], 0)
        self.assertIn('%s (from a client)' % nm['a'], cy['enteredAt'])
        ents = {(e['from'], e['pointer'], e['to'], e['recognised']) for e in cy['entries']}
        self.assertEqual(ents, {
            (nm['a'], '/forwardingOptions/nrfHostConfig/0', nm['b'], True),
            (nm['b'], '/forwardingOptions/nrfHostConfig/0', nm['c'], True),
            (nm['c'], '/forwardingOptions/nrfHostConfig/0', nm['a'], True),
            (nm['c'], '/forwardingOptions/nrfHostConfig/1', nm['a'], False)})
        self.assertTrue(cy['lint']['predicted'], cy['lint'])
        self.assertIn('cycle-loop-detected', cy['lint']['codes'])
        kinds = sorted((o['at'], o['kind']) for o in cy['observations'])
        self.assertEqual(kinds, [(nm['a'], 'detected'), (nm['c'], 'prevented')])
        # the hop limit at B is a path without a cycle
        self.assertEqual([(p['at'], p['kind'], p['path']) for p in doc['otherPaths']],
                         [(nm['b'], 'hop-limit', [nm['a']])])

    def test_2_ctl_loops_api(self):
        args = []
        for n in 'abc':
            args += ['--api', self.api_url(n)]
        rc, out, err = ctl('loops', *args, '--json')
        self.assertEqual(rc, 1, err)  # 508s were observed
        self.check_merged(json.loads(out))
        rc, out, err = ctl('loops', *args)
        self.assertEqual(rc, 1, err)
        nm = self.name
        cycle = '%s -> %s -> %s -> %s' % (nm['a'], nm['b'], nm['c'], nm['a'])
        self.assertEqual(out.count('cycle %s' % cycle), 1, out)
        # the table: one line a path
        self.assertRegex(out, r'\n%s +detected +%d ' % (re.escape(nm['a']), LOOPED + 1))
        self.assertRegex(out, r'\n%s +prevented +%d .* -> %s /forwardingOptions/nrfHostConfig/0\n'
                         % (re.escape(nm['c']), LOOPED, re.escape(nm['a'])))
        self.assertIn('/forwardingOptions/nrfHostConfig/1 (nrf-x.test:%d) -> %s  '
                      '[loop prevention cannot recognise it]' % (self.ports['a'], nm['a']), out)
        self.assertIn('lint:     predicted (cycle-loop-detected', out)
        dot = os.path.join(self.h.tmpdir, 'loops.dot')
        svg = os.path.join(self.h.tmpdir, 'loops.svg')
        rc, out, err = ctl('loops', *args, '--dot', dot, '--svg', svg)
        self.assertEqual(rc, 1, err)
        with open(dot) as f:
            text = f.read()
        # the three steps of the cycle at A, B and C (C's two entries)
        self.assertEqual(text.count('\\nobserved '), 4, text)
        self.assertEqual(text.count(', color=purple'), 3, text)
        self.assertEqual(text.count('not recognisable\\nobserved'), 1, text)
        with open(svg) as f:
            self.assertIn('<svg', f.read())

    # -- merged through etcd -----------------------------------------------

    def test_3_fleet_loops(self):
        args = ['fleet', 'loops', '--etcd', self.cluster.endpoints]
        for n in 'abc':
            args += ['--config-key', self.keys[n]]
        deadline = time.monotonic() + 10.0
        doc = None
        while time.monotonic() < deadline:
            rc, out, err = ctl(*args, '--json')
            if rc in (0, 1):
                doc = json.loads(out)
                cy = doc['cycles']
                if (len(cy) == 1 and cy[0]['counts']['detected'] == LOOPED + 1 and
                        cy[0]['counts']['prevented'] == LOOPED and doc['otherPaths']):
                    break
            time.sleep(0.5)
        self.assertIsNotNone(doc, err)
        self.assertEqual(sorted(i['instance'].rsplit('/', 1)[1] for i in doc['instances']),
                         ['inst-a', 'inst-b', 'inst-c'])
        self.check_merged(doc)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main(verbosity=2)
