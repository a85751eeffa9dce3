#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What the package ships besides the binaries, checked against the code.

Usage: python3 tests/integration/test_dist.py [--build-dir BUILD] [unittest args]

- Alert rules (dist/prometheus): `promtool check rules` and `promtool test
  rules` (the rules' own unit tests) pass.
- Grafana dashboard and alert rules reference only metrics nrfwd exports:
  a running nrfwd (with an nrfstub local NRF, a peer that is down, and a
  loop, so the upstream and loop series exist) is scraped, and every metric
  name in an expression must be a family of /metrics, every label an
  expression groups or filters by must be a label of a metric it uses.
- Man pages: every option of `nrfwd --help` is in nrfwd(8)'s OPTIONS and
  every option there is in the help; the same for the commands and options
  of `nrfwd-ctl --help` and nrfwd-ctl(8); nrfwd.json(5), generated from
  docs/config.md at build time, names every field of its tables.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

ROOT = H.ROOT
DASH = os.path.join(ROOT, 'dist', 'grafana', 'nrfwd-dashboard.json')
RULES = os.path.join(ROOT, 'dist', 'prometheus', 'nrfwd-alerts.yml')
RULE_TESTS = os.path.join(ROOT, 'dist', 'prometheus', 'nrfwd-alerts.test.yml')
AMF = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'
UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=SMF'
# labels Prometheus adds (target) or histogram buckets carry
OUTER_LABELS = {'instance', 'job', 'le'}


def dashboard_exprs():
    with open(DASH) as f:
        d = json.load(f)
    out = []
    for p in d['panels']:
        for t in p.get('targets', []):
            out.append(t['expr'])
    for v in d['templating']['list']:
        q = v.get('query')
        if isinstance(q, dict):
            out.append(q['query'])
    return out


def rule_exprs():
    # the rule file is YAML; its expressions are the "expr:" values (one
    # line, or a "|" block indented below)
    exprs, cur = [], None
    with open(RULES) as f:
        for line in f:
            mt = re.match(r'^(\s*)expr:\s*(.*)$', line)
            if mt:
                if cur is not None:
                    exprs.append(cur)
                cur = '' if mt.group(2).strip() == '|' else mt.group(2)
                indent = len(mt.group(1))
                if cur:
                    exprs.append(cur)
                    cur = None
                continue
            if cur is not None:
                if line.strip() and len(line) - len(line.lstrip()) > indent:
                    cur += ' ' + line.strip()
                else:
                    exprs.append(cur)
                    cur = None
    if cur:
        exprs.append(cur)
    return exprs


def scrape_families(text):
    """{family: set(label names)} from the exposition text."""
    fams, types = {}, {}
    for line in text.splitlines():
        mt = re.match(r'^# TYPE (\S+) (\S+)', line)
        if mt:
            types[mt.group(1)] = mt.group(2)
            fams.setdefault(mt.group(1), set())
            continue
        if not line or line.startswith('#'):
            continue
        mt = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ', line)
        name = mt.group(1)
        for suf in ('_bucket', '_sum', '_count'):
            if name.endswith(suf) and types.get(name[:-len(suf)]) == 'histogram':
                name = name[:-len(suf)]
        fams.setdefault(name, set()).update(
            re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', mt.group(2) or ''))
    return fams


def dpdk_documented():
    """{metric: set(label names)} of the nrfwd_dpdk_* rows of docs/metrics.md."""
    out = {}
    with open(os.path.join(H.ROOT, 'docs', 'metrics.md')) as f:
        for line in f:
            mt = re.match(r'^\| `(nrfwd_dpdk_[a-z0-9_]+)` \|[^|]*\|([^|]*)\|', line)
            if mt:
                out[mt.group(1)] = set(re.findall(r'`([a-z_]+)`', mt.group(2)))
    return out


DPDK_DOC = dpdk_documented()


def expr_metrics(expr):
    return set(re.findall(r'\b(nrfwd_[a-z0-9_]+)', expr))


def expr_labels(expr):
    labels = set()
    for grp in re.findall(r'\b(?:by|without|on|ignoring)\s*\(([^)]*)\)', expr):
        labels.update(x.strip() for x in grp.split(',') if x.strip())
    for sel in re.findall(r'\{([^}]*)\}', expr):
        labels.update(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)', sel))
    return labels - OUTER_LABELS


class TestRules(unittest.TestCase):
    def test_promtool_check_and_unit_tests(self):
        promtool = shutil.which('promtool')
        self.assertIsNotNone(promtool, 'promtool missing: scripts/setup.sh installs prometheus')
        r = subprocess.run([promtool, 'check', 'rules', RULES], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r'SUCCESS: \d+ rules found')
        r = subprocess.run([promtool, 'test', 'rules', os.path.basename(RULE_TESTS)],
                           capture_output=True, text=True, cwd=os.path.dirname(RULE_TESTS))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn('SUCCESS', r.stdout)


class TestMetricsReferenced(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-dist-')

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed)
        if not failed:
            shutil.rmtree(self.h.tmpdir, ignore_errors=True)

    def test_dashboard_and_rules_use_only_exported_metrics(self):
        local = self.h.start_stub('local', 'stub-profiles-a.json')
        down = H.free_port()  # nothing listens: try failures, held down
        cfg = H.nrfwd_config('nrf-a.dist.test', local=local.port,
                             peers=[H.peer('nrf-e.dist.test', down, priority=1)])
        fwd = self.h.start_nrfwd(cfg, workers=2, management=True)
        self.assertEqual(H.curl(fwd.url(AMF))[0], 200)
        H.curl(fwd.url(UDM))  # not held locally: forwarded to the peer that is down
        st, _, _ = H.curl(fwd.url(AMF), headers=['via: 2.0 nrf-a.dist.test:%d' % fwd.port])
        self.assertEqual(st, 508)
        st, _, text = H.api(fwd, 'GET', '/metrics')
        self.assertEqual(st, 200)
        fams = scrape_families(text)
        # the exposition passes Prometheus' own lint (names, units, help)
        promtool = shutil.which('promtool')
        if promtool is not None:
            r = subprocess.run([promtool, 'check', 'metrics'], input=text,
                               capture_output=True, text=True)
            self.assertEqual((r.returncode, r.stdout + r.stderr), (0, ''))

        exprs = [('dashboard', e) for e in dashboard_exprs()] + \
                [('rules', e) for e in rule_exprs()]
        self.assertGreater(len(exprs), 20)
        used = set()
        for where, e in exprs:
            ms = set()
            for m in expr_metrics(e):
                for suf in ('_bucket', '_sum', '_count'):
                    if m.endswith(suf) and m[:-len(suf)] in fams and m not in fams:
                        m = m[:-len(suf)]
                ms.add(m)
            self.assertTrue(ms, '%s: no nrfwd metric in %r' % (where, e))
            # The DPDK transport's series exist only with runtime.transport
            # dpdk (not this nrfwd): their names and labels come from
            # docs/metrics.md's table instead.
            dp = {m for m in ms if m.startswith('nrfwd_dpdk_')}
            for m in dp:
                self.assertIn(m, DPDK_DOC, '%s: %s is not in docs/metrics.md (expr %r)'
                              % (where, m, e))
            ms_k = ms - dp
            for m in ms_k:
                self.assertIn(m, fams, '%s: %s is not exported (expr %r)' % (where, m, e))
            have = set().union(*(fams[m] for m in ms_k), *(DPDK_DOC[m] for m in dp))
            for lab in expr_labels(e):
                self.assertIn(lab, have, '%s: label %s not on %s (expr %r)' % (
                    where, lab, sorted(ms), e))
            used |= ms
        # the list is all there
        for m in ('nrfwd_requests_total', 'nrfwd_loop_detections_total',
                  'nrfwd_loop_preventions_total', 'nrfwd_try_failures_total',
                  'nrfwd_request_duration_seconds', 'nrfwd_worker_busy_ratio',
                  'nrfwd_config_generation', 'nrfwd_upstream_up',
                  'nrfwd_config_reload_failures_total'):
            self.assertIn(m, used)


def long_options(text):
    return set(re.findall(r'(?<![\w-])--([a-z][a-z0-9-]*)', text))


def man_section(path, name):
    with open(path) as f:
        text = f.read().replace('\\-', '-')
    mt = re.search(r'^\.SH %s\n(.*?)(?=^\.SH )' % name, text, re.S | re.M)
    return mt.group(1) if mt else ''


class TestManPages(unittest.TestCase):
    def help(self, prog):
        r = subprocess.run([H.binary(prog), '--help'], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        return r.stdout

    def test_every_program_prints_the_same_version(self):
        out = {}
        for prog in ('nrfwd', 'nrfwd-ctl', 'nrfstub'):
            r = subprocess.run([H.binary(prog), '--version'], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            words = r.stdout.split()
            self.assertEqual(words[0], prog)
            self.assertRegex(words[1], r'^[0-9]+\.[0-9]+\.[0-9]+')
            out[prog] = words[1]
        self.assertEqual(len(set(out.values())), 1, out)
        with open(os.path.join(ROOT, 'meson.build')) as f:
            self.assertIn("version: '%s'" % out['nrfwd'], f.read())

    def test_short_l_is_the_eals_not_nrfwds(self):
        """-l is the EAL's lcore list: after "--" (or without EAL options)
        nrfwd refuses it with the reason and names --log-level."""
        r = subprocess.run([H.binary('nrfwd'), '-l', 'debug', '--config', '/nonexistent'],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("-l is the EAL's lcore list", r.stderr)
        self.assertIn('--log-level', r.stderr)
        self.assertNotIn('-l,', self.help('nrfwd'))

    def test_internal_options_are_not_in_the_help(self):
        self.assertNotIn('--mp-worker', self.help('nrfwd'))

    def test_nrfwd_options_match_help(self):
        text = self.help('nrfwd')
        own = text.split('\nTransport')[0]  # the EAL part is the EAL's
        help_opts = long_options(own) | {'pci-nic'}
        man_opts = long_options(man_section(os.path.join(ROOT, 'man', 'nrfwd.8'), 'OPTIONS'))
        self.assertEqual(help_opts, man_opts)

    def test_nrfwd_ctl_commands_and_options_match_help(self):
        text = self.help('nrfwd-ctl')
        cmds = set(re.findall(r'nrfwd-ctl ([a-z]+)', text))
        man = os.path.join(ROOT, 'man', 'nrfwd-ctl.8')
        man_cmds = set(re.findall(r'^\.B ([a-z]+)$',
                                  man_section(man, 'COMMANDS'), re.M))
        self.assertEqual(cmds, man_cmds)
        man_opts = long_options(man_section(man, 'OPTIONS'))
        self.assertEqual(long_options(text) | {'help'}, man_opts)
        with open(man) as f:
            syn = man_section(man, 'SYNOPSIS')
        self.assertEqual(set(re.findall(r'^\.B nrfwd-ctl ([a-z]+)', syn, re.M)), cmds)

    def test_config_man_page_names_every_field(self):
        page = os.path.join(H.BUILD_DIR, 'man', 'nrfwd.json.5')
        self.assertTrue(os.path.exists(page), 'ninja builds man/nrfwd.json.5')
        with open(page) as f:
            roff = f.read().replace('\\-', '-')
        with open(os.path.join(ROOT, 'docs', 'config.md')) as f:
            md = f.read()
        fields = re.findall(r'^\| `([A-Za-z0-9_.\[\]]+)` \|', md, re.M)
        self.assertGreater(len(fields), 80)
        for fld in fields:
            self.assertIn('\\fB%s\\fR' % fld, roff, fld)
        # no markup or source-tree notes leak into the page (comments aside);
        # inline code is closed on the line it opens
        text = '\n'.join(ln for ln in roff.splitlines() if not ln.startswith('.\\"'))
        for leak in ('<!--', '-->', 'tests/', '`'):
            self.assertNotIn(leak, text)
        for ln in text.splitlines():
            self.assertEqual(ln.count('\\fB'), ln.count('\\fR'), ln)


class TestDocsMatchCode(unittest.TestCase):
    def test_access_log_outcomes_are_the_codes(self):
        with open(os.path.join(ROOT, 'lib', 'rt', 'rt.c')) as f:
            code = set(re.findall(r'\[NRF_RT_OUT_[A-Z_]+\] = "([a-z_]+)"', f.read()))
        self.assertGreater(len(code), 10)
        with open(os.path.join(ROOT, 'docs', 'access-log.md')) as f:
            row = [ln for ln in f if ln.startswith('| outcome |')][0]
        listed = set(re.findall(r'`([a-z_]+)`', row.split('outcome}`:')[1]))
        self.assertEqual(listed, code)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
