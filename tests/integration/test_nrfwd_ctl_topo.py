#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`nrfwd-ctl lint` and `nrfwd-ctl trace` as an operator runs them: the seed's
topologies in conf/demo, exit statuses, JSON, holdings and state files,
pictures (DOT text; SVG only when Graphviz's `dot` is installed), and
topologies fetched from running nrfwd over --api.

Usage: python3 tests/integration/test_nrfwd_ctl_topo.py [--build-dir BUILD] [unittest args]

The agreement of `trace` with running nrfwd processes is test_topo_agreement.py.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

FWD = ['conf/demo/forwarding/nrf-a.json', 'conf/demo/forwarding/nrf-e.json']
FWD_BAD = ['conf/demo/forwarding/nrf-a.json', 'conf/demo/forwarding/nrf-e-misrouted.json']
GRO = ['conf/demo/growth/nrf-a.json', 'conf/demo/growth/nrf-e.json', 'conf/demo/growth/nrf-g.json']
GRO_BAD = ['conf/demo/growth/nrf-a.json', 'conf/demo/growth/nrf-e-misrouted.json',
           'conf/demo/growth/nrf-g.json']
NEF = '/nnrf-disc/v1/nf-instances?target-nf-type=NEF'
A, E = 'nrf-a.seg1.example.com:18080', 'nrf-e.seg2.example.com:18081'


def ctl(*args, timeout=30, env=None):
    return subprocess.run([H.binary('nrfwd-ctl')] + list(args), capture_output=True, text=True,
                          timeout=timeout, cwd=H.ROOT, env=env)


class Lint(unittest.TestCase):
    def lint(self, files, *args):
        r = ctl('lint', *(list(files) + ['--json'] + list(args)))
        doc = json.loads(r.stdout)
        self.assertEqual(doc['exitStatus'], r.returncode)
        return r.returncode, doc

    def codes(self, doc):
        return sorted(f['code'] for f in doc['findings'])

    def test_the_seed_topology_warns_of_a_prevented_cycle_and_exits_1(self):
        rc, doc = self.lint(FWD)
        self.assertEqual(rc, 1)
        self.assertEqual(self.codes(doc), ['cycle-prevented', 'longest-path'])
        self.assertEqual([n['name'] for n in doc['nrfs']], [A, E])

    def test_the_misrouted_seed_topology_has_errors_with_files_and_pointers(self):
        rc, doc = self.lint(FWD_BAD)
        self.assertEqual(rc, 2)
        self.assertEqual(self.codes(doc),
                         ['cycle-loop-detected', 'longest-path', 'peer-unrecognisable'])
        un = [f for f in doc['findings'] if f['code'] == 'peer-unrecognisable'][0]
        self.assertEqual(un['severity'], 'error')
        self.assertEqual(un['refs'][0], {
            'file': FWD_BAD[1], 'pointer': '/forwardingOptions/nrfHostConfig/0',
            'nrf': E, 'note': 'nrf-x.seg1.example.com:18080'})
        self.assertEqual(un['entries'][0]['reaches'], A)
        cy = [f for f in doc['findings'] if f['code'] == 'cycle-loop-detected'][0]
        self.assertEqual(cy['path'], [A, E, A])
        # errors first
        self.assertEqual(doc['findings'][0]['severity'], 'error')

    def test_the_growth_topologies(self):
        rc, doc = self.lint(GRO)
        self.assertEqual(rc, 1)
        self.assertEqual(self.codes(doc), ['cycle-prevented', 'longest-path', 'peer-dangling',
                                           'peer-dangling'])
        rc, doc = self.lint(GRO_BAD)
        self.assertEqual(rc, 2)
        self.assertIn('peer-unrecognisable', self.codes(doc))

    def test_a_clean_topology_exits_0(self):
        rc, doc = self.lint(['conf/demo/forwarding/nrf-a.json'])
        # A alone: its peer E is outside the topology.
        self.assertEqual(rc, 1)
        self.assertEqual(self.codes(doc), ['longest-path', 'peer-dangling'])
        with tempfile.TemporaryDirectory() as d:
            cfg = H.nrfwd_config('solo.test', port=18999, local=18998)
            p = os.path.join(d, 'solo.json')
            with open(p, 'w') as f:
                json.dump(cfg, f)
            rc, doc = self.lint([p])
            self.assertEqual(rc, 0)
            self.assertEqual(doc['summary']['errors'] + doc['summary']['warnings'], 0)

    def test_a_directory_is_every_json_in_it_and_an_invalid_one_is_reported(self):
        with tempfile.TemporaryDirectory() as d:
            for f in FWD:
                shutil.copy(os.path.join(H.ROOT, f), d)
            with open(os.path.join(d, 'zz-bad.json'), 'w') as f:
                f.write('{"generalOptions": {"ocnrfPort": 0}}')
            rc, doc = self.lint([d])
            self.assertEqual(rc, 2)
            bad = [f for f in doc['findings'] if f['code'] == 'config-invalid']
            self.assertEqual(len(bad), 1)
            self.assertTrue(bad[0]['refs'][0]['file'].endswith('zz-bad.json'))
            self.assertIsNone(bad[0]['refs'][0]['nrf'])
            self.assertEqual(len(doc['nrfs']), 2)

    def test_text_output_and_codes(self):
        r = ctl('lint', *FWD_BAD)
        self.assertEqual(r.returncode, 2)
        self.assertIn('error   peer-unrecognisable: ', r.stdout)
        self.assertIn('        %s: /forwardingOptions/nrfHostConfig/0' % FWD_BAD[1], r.stdout)
        self.assertTrue(r.stdout.rstrip().endswith('2 errors, 0 warnings, 1 info'))
        r = ctl('lint', '--codes')
        self.assertEqual(r.returncode, 0)
        self.assertEqual(len(r.stdout.splitlines()), 15)

    def test_usage_errors_exit_4(self):
        self.assertEqual(ctl('lint').returncode, 4)
        self.assertEqual(ctl('lint', '/nonexistent.json').returncode, 4)
        self.assertEqual(ctl('lint', '--bogus', FWD[0]).returncode, 4)

    def test_dot_marks_the_unrecognisable_entry_and_the_dangling_host(self):
        r = ctl('lint', *GRO_BAD, '--dot', '-')
        self.assertEqual(r.returncode, 2)
        dot = r.stdout
        self.assertTrue(dot.startswith('digraph nrfwd {'), dot)
        self.assertIn('subgraph "cluster_0"', dot)
        self.assertIn('label="set1.nrfset.5gc.mnc001.mcc001"', dot)
        self.assertRegex(dot, r'n1 -> n0 \[label="growth set1\S* p1\\nnot recognisable", '
                              r'color=red')
        self.assertIn('x0 [label="nrf-b.seg1.example.com:18083\\n(not in the topology)"', dot)
        self.assertIn('style=dashed', dot)

    @unittest.skipUnless(shutil.which('dot'), 'Graphviz dot not installed')
    def test_svg_is_rendered_by_graphviz(self):
        with tempfile.TemporaryDirectory() as d:
            svg = os.path.join(d, 'g.svg')
            r = ctl('lint', *FWD_BAD, '--svg', svg)
            self.assertEqual(r.returncode, 2, r.stderr)
            with open(svg) as f:
                self.assertIn('<svg', f.read())

    def test_svg_without_graphviz_says_how_to_render_it(self):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, PATH=d)  # no dot there
            dot, svg = os.path.join(d, 'g.dot'), os.path.join(d, 'g.svg')
            r = ctl('lint', *FWD, '--dot', dot, '--svg', svg, env=env)
            self.assertEqual(r.returncode, 4)
            self.assertIn('apt-get install graphviz', r.stderr)
            self.assertTrue(os.path.exists(dot))


class Trace(unittest.TestCase):
    def trace(self, files, *args):
        r = ctl('trace', *(list(files) + ['--json'] + list(args)))
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_figure_I1_ends_in_508_at_nrf_a(self):
        doc = self.trace(FWD_BAD, '--at', 'nrf-a', '--path', NEF)
        a = doc['answer']
        self.assertEqual((a['status'], a['cause'], a['answeredBy']), (508, 'LOOP_DETECTED', A))
        self.assertEqual(a['via'], ['2.0 ' + E, '2.0 ' + A])
        self.assertEqual(a['body']['detail'], 'request already passed through ' + A)
        self.assertEqual([h['nrf'] for h in doc['hops']], [A, E, A])
        self.assertEqual(doc['hops'][2]['verdict'], 'loop-detected')
        self.assertEqual(doc['hops'][1]['tries'][0]['reaches'], A)

    def test_figure_I3_is_answered_by_nrf_e(self):
        doc = self.trace(FWD, '--at', A, '--path', NEF)
        self.assertEqual(doc['answer']['answeredBy'], E)
        self.assertEqual(doc['answer']['kind'], 'local')
        self.assertEqual(doc['hops'][1]['skipped'][0]['reason'], 'via-host')
        self.assertEqual(doc['hops'][1]['localNrf']['outcome'], 'claims-absence')

    def test_figure_I4_tries_nrf_b_and_relays_e(self):
        doc = self.trace(GRO, '--at', 'conf/demo/growth/nrf-a.json', '--path', NEF)
        e = doc['hops'][1]
        self.assertEqual(e['tries'][0]['end'], 'failed')
        self.assertIsNone(e['tries'][0]['reaches'])
        self.assertTrue(e['candidates'][0]['covered'])
        self.assertEqual(doc['answer']['answeredBy'], E)

    def test_holdings_from_a_profiles_file(self):
        with tempfile.TemporaryDirectory() as d:
            h = os.path.join(d, 'h.json')
            with open(h, 'w') as f:
                json.dump({'nrfs': {'nrf-e': {'profiles': os.path.join(
                    H.ROOT, 'conf', 'stub-profiles-e.json')}}}, f)
            doc = self.trace(FWD, '--at', 'nrf-a', '--holdings', h,
                             '--path', '/nnrf-disc/v1/nf-instances?target-nf-type=UDM')
            self.assertEqual(doc['answer']['status'], 200)
            self.assertEqual(doc['answer']['answeredBy'], E)
            self.assertEqual(doc['answer']['body']['nfInstances'][0]['nfType'], 'UDM')

    def test_down_nrf_is_tried_last_and_fails(self):
        doc = self.trace(FWD, '--at', 'nrf-a', '--down', 'nrf-e', '--path', NEF)
        a = doc['hops'][0]
        self.assertTrue(a['candidates'][0]['heldDown'])
        self.assertEqual(a['tries'][0]['end'], 'failed')
        self.assertEqual((doc['answer']['status'], doc['answer']['cause']),
                         (504, 'TARGET_NF_NOT_REACHABLE'))

    def test_local_nrf_down_in_the_holdings(self):
        with tempfile.TemporaryDirectory() as d:
            h = os.path.join(d, 'h.json')
            with open(h, 'w') as f:
                json.dump({'nrfs': {A: {'localNrf': 'down'}}}, f)
            doc = self.trace(FWD, '--at', 'nrf-a', '--holdings', h, '--path', NEF)
            self.assertEqual((doc['answer']['status'], doc['answer']['cause']),
                             (503, 'NF_SERVICE_FAILURE'))

    def test_state_carries_rotation_and_held_down_entries(self):
        with tempfile.TemporaryDirectory() as d:
            st = os.path.join(d, 'state.json')
            self.trace(GRO, '--at', 'nrf-a', '--state', st, '--path', NEF)
            with open(st) as f:
                state = json.load(f)['nrfs']
            self.assertEqual(state[A]['rotation'], 1)
            self.assertEqual(state[E]['rotation'], 1)
            self.assertEqual(state[E]['heldDown'], [
                '/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/0/'
                'nrfHostConfigList/1'])
            doc = self.trace(GRO, '--at', 'nrf-a', '--state', st, '--path', NEF)
            self.assertEqual(doc['hops'][0]['rotation'], 1)
            self.assertTrue(doc['hops'][1]['candidates'][0]['heldDown'])

    def test_all_traces_every_nrf_and_type(self):
        r = ctl('trace', *FWD_BAD, '--all')
        self.assertEqual(r.returncode, 0, r.stderr)
        # entering at A: back at A, 508; entering at E: A skips E and answers
        self.assertTrue(r.stdout.rstrip().endswith(
            '2 traces: 1 x 508 LOOP_DETECTED, 1 x 200 from a local NRF'), r.stdout)
        r = ctl('trace', *FWD, '--all', '--json')
        doc = json.loads(r.stdout)
        self.assertEqual(len(doc['traces']), 2)
        self.assertEqual(doc['summary'], {'200 from a local NRF': 2})

    def test_text_output(self):
        r = ctl('trace', *FWD_BAD, '--at', 'nrf-a', '--path', NEF)
        self.assertEqual(r.returncode, 0)
        self.assertIn('hop 3: %s (nrf-a.json)' % A, r.stdout)
        self.assertIn('loop-detected (its own identity is in Via)', r.stdout)
        self.assertIn('answer: 508 LOOP_DETECTED (NRF_Forwarding_Loop_Detection) by %s (hop 3); '
                      'via: 2.0 %s, 2.0 %s' % (A, E, A), r.stdout)

    def test_dot_highlights_the_traced_path(self):
        r = ctl('trace', *FWD_BAD, '--at', 'nrf-a', '--path', NEF, '--dot', '-')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('answer: 508 LOOP_DETECTED', r.stdout)
        self.assertRegex(r.stdout, r'n0 -> n1 \[label="fwd p1\\n#1", color=blue')
        self.assertRegex(r.stdout, r'n1 -> n0 \[label="fwd p1\\nnot recognisable\\n#2", '
                                   r'color=blue')
        self.assertIn('fillcolor=salmon', r.stdout)  # A answered with an error

    def test_usage_errors_exit_4(self):
        self.assertEqual(ctl('trace', *FWD).returncode, 4)            # no --at
        self.assertEqual(ctl('trace', *FWD, '--at', 'nrf-q').returncode, 4)
        self.assertEqual(ctl('trace', *GRO, '--at', 'seg2.example.com').returncode, 4)
        self.assertEqual(ctl('trace', *FWD, '--at', 'nrf-a', '--all').returncode, 4)
        self.assertEqual(ctl('trace', *FWD, '--at', 'nrf-a', '--max-forward-hops',
                             'x').returncode, 4)


class FromRunningNrfwd(unittest.TestCase):
    """--api URL: the running document of each nrfwd, listen addresses included."""

    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-ctl-topo-')

    def tearDown(self):
        self.h.cleanup(dump=not getattr(self._outcome, 'success', True))

    def test_lint_and_trace_over_the_rest_api(self):
        pa, pe = H.free_port(), H.free_port()
        a = self.h.start_nrfwd(H.nrfwd_config('a.test', port=pa,
                                              peers=[H.peer('e.test', pe)]),
                               name='nrfwd-a', management=True)
        e = self.h.start_nrfwd(H.nrfwd_config('e.test', port=pe,
                                              peers=[H.peer('x.test', pa)]),
                               name='nrfwd-e', management=True)
        urls = ['--api', a.api_url(''), '--api', e.api_url('')]
        r = ctl('lint', '--json', *urls)
        self.assertEqual(r.returncode, 2, r.stderr)
        doc = json.loads(r.stdout)
        self.assertIn('peer-unrecognisable', [f['code'] for f in doc['findings']])
        self.assertEqual(doc['nrfs'][0]['source'], a.api_url(''))
        r = ctl('trace', '--json', *urls, '--at', 'a.test')
        self.assertEqual(r.returncode, 0, r.stderr)
        t = json.loads(r.stdout)['answer']
        # and the real thing agrees
        st, _, body = H.curl(a.url('/nnrf-disc/v1/nf-instances?target-nf-type=AMF'))
        self.assertEqual((t['status'], t['cause']), (st, json.loads(body)['cause']))
        self.assertEqual((st, t['answeredBy']), (508, 'a.test:%d' % pa))

    def test_an_api_that_does_not_answer_exits_3(self):
        r = ctl('lint', '--api', 'http://127.0.0.1:%d' % H.free_port())
        self.assertEqual(r.returncode, 3)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
