#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`nrfwd-ctl trace` agrees with the real thing.

Usage: python3 tests/integration/test_topo_agreement.py [--build-dir BUILD]
           [--seeds 1,2,10-20] [--requests N] [unittest args]
       NRFWD_AGREEMENT_SEEDS=100-199 (the same as --seeds)

For each seed: a random topology of 3..8 NRFs (tests/integration/topo_gen.py:
random peers, priorities, growth sets and scopes, identities by fqdn, IP or
alias, some deliberately wrong or pointing where nothing listens, local NRFs
that hold random NF types, are down or absent) runs as real nrfwd processes
(one worker each) with real nrfstubs as their local NRFs. Requests go to
random NRFs (discoveries, profile retrievals, some with a client Via line or
3gpp-Sbi-Max-Forward-Hops); before each one `nrfwd-ctl trace --json` predicts
it from the configuration files and the holdings file, carrying the workers'
state (rotation counters, held-down peers) from request to request in a
--state file. The test asserts the status, the ProblemDetails cause, the NRF
that answered (x-nrfstub for a local NRF's answer, the errorDetail, which
names the NRF, for nrfwd's own) and the answer's Via lines. A failing seed is
printed with its topology and the trace.

The default seed list runs in about a minute; more seeds by option.
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402
import topo_gen as G  # noqa: E402

DEFAULT_SEEDS = list(range(1, 19))
REQUESTS = 12


def parse_seeds(text):
    out = []
    for part in text.split(','):
        part = part.strip()
        if not part:
            continue
        if '-' in part:
            a, b = part.split('-', 1)
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def take_args(argv):
    """--seeds and --requests out of @argv (in place)."""
    global REQUESTS
    seeds = None
    if os.environ.get('NRFWD_AGREEMENT_SEEDS'):
        seeds = parse_seeds(os.environ['NRFWD_AGREEMENT_SEEDS'])
    out, i = [argv[0]], 1
    while i < len(argv):
        a = argv[i]
        if a in ('--seeds', '--requests') and i + 1 < len(argv):
            if a == '--seeds':
                seeds = parse_seeds(argv[i + 1])
            else:
                REQUESTS = int(argv[i + 1])
            i += 2
            continue
        out.append(a)
        i += 1
    argv[:] = out
    return seeds if seeds is not None else DEFAULT_SEEDS


class Run:
    """One seed: its topology running, and the requests."""

    def __init__(self, seed, h, tmp):
        self.seed = seed
        self.h = h
        self.tmp = tmp
        self.rng = random.Random(seed)
        self.topo = G.random_topology(self.rng, H.free_port)
        self.files = []

    def start(self):
        topo = self.topo
        for nrf in topo.nrfs:
            if nrf.local == 'stub':
                prof = os.path.join(self.tmp, 'profiles-%d.json' % nrf.i)
                with open(prof, 'w') as f:
                    json.dump(G.profiles(nrf), f)
                self.h.start_stub(nrf.stub, prof, port=nrf.local_port)
        for nrf in topo.nrfs:
            path = os.path.join(self.tmp, 'nrf-%d.json' % nrf.i)
            with open(path, 'w') as f:
                json.dump(G.config(nrf, topo), f, indent=1)
            self.files.append(path)
        for nrf, path in zip(topo.nrfs, self.files):
            self.h.start_nrfwd(path, name='nrfwd-%d' % nrf.i)
        self.holdings = os.path.join(self.tmp, 'holdings.json')
        with open(self.holdings, 'w') as f:
            json.dump(G.holdings(topo), f, indent=1)
        self.state = os.path.join(self.tmp, 'state.json')

    def request(self):
        """A random request: (nrf, path, via lines, max forward hops)."""
        rng, topo = self.rng, self.topo
        nrf = rng.choice(topo.nrfs)
        r = rng.random()
        if r < 0.8:
            path = '/nnrf-disc/v1/nf-instances?target-nf-type=%s&requester-nf-type=SMF' % (
                rng.choice(G.NF_TYPES + ('NRF',)))
        else:
            ids = [i for n in topo.nrfs for i in n.ids()] + ['9-none']
            path = '/nnrf-nfm/v1/nf-instances/%s' % rng.choice(ids)
        via = []
        if rng.random() < 0.1:
            via = ['2.0 %s' % rng.choice(topo.nrfs).name]
        hops = rng.choice((0, 1, 2)) if rng.random() < 0.1 else None
        return nrf, path, via, hops

    def trace(self, nrf, path, via, hops, fmt='--json'):
        cmd = [H.binary('nrfwd-ctl'), 'trace'] + self.files + [
            '--at', nrf.name, '--path', path, '--holdings', self.holdings,
            '--state', self.state]
        if fmt:
            cmd.append(fmt)
        for v in via:
            cmd += ['--via', v]
        if hops is not None:
            cmd += ['--max-forward-hops', str(hops)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


class Agreement(unittest.TestCase):
    SEEDS = DEFAULT_SEEDS

    def test_trace_predicts_what_the_client_gets(self):
        failures = []
        self.tally = {}
        for seed in self.SEEDS:
            with self.subTest(seed=seed):
                msg = self.run_seed(seed)
                if msg:
                    failures.append(seed)
                    sys.stderr.write(msg + '\n')
        sys.stderr.write('seeds %s: outcomes %s\n' % (
            ','.join(map(str, self.SEEDS)),
            ', '.join('%d x %s' % (v, k) for k, v in sorted(self.tally.items()))))
        if failures:
            self.fail('failing seeds: %s (rerun: %s --seeds %s)' % (
                failures, sys.argv[0], ','.join(map(str, failures))))

    def run_seed(self, seed):
        """None when every request agreed, else the story of the first that did not."""
        h = H.Harness(prefix='nrfwd-agree-')
        tmp = tempfile.mkdtemp(prefix='nrfwd-agree-%d-' % seed, dir=h.tmpdir)
        run = Run(seed, h, tmp)
        try:
            run.start()
            for k in range(REQUESTS):
                nrf, path, via, hops = run.request()
                before = ''
                if os.path.exists(run.state):
                    with open(run.state) as f:
                        before = f.read()
                tr = run.trace(nrf, path, via, hops)
                if tr.returncode != 0:
                    return self.story(run, k, nrf, path, via, hops, before,
                                      'trace failed (%d): %s' % (tr.returncode, tr.stderr))
                want = json.loads(tr.stdout)['answer']
                headers = list(('via', v) for v in via)
                if hops is not None:
                    headers.append(('3gpp-Sbi-Max-Forward-Hops', str(hops)))
                st, hd, body = H.curl('http://127.0.0.1:%d%s' % (nrf.port, path),
                                      headers=headers)
                got = self.observed(run, st, hd, body)
                exp = {'status': want['status'], 'cause': want['cause'],
                       'answeredBy': want['answeredBy'], 'via': want['via']}
                if want['kind'] == 'reject':
                    exp['answeredBy'] = got['answeredBy']  # nrfwd's fixed answers name nobody
                key = '%d %s' % (got['status'], got['cause'] or (
                    'local NRF, %d hop(s)' % len(json.loads(tr.stdout)['hops'])))
                self.tally[key] = self.tally.get(key, 0) + 1
                if got != exp:
                    return self.story(run, k, nrf, path, via, hops, before,
                                      'expected %s\n     got %s' % (exp, got))
            return None
        except Exception as e:  # noqa: BLE001 - the seed must be reported
            h.cleanup(dump=True)
            return 'seed %d: %s: %s\ntopology:\n%s' % (seed, type(e).__name__, e, run.topo)
        finally:
            h.cleanup()

    def observed(self, run, st, hd, body):
        """status, cause, answering NRF and Via of what the client got."""
        cause, who = None, None
        try:
            doc = json.loads(body) if body else None
        except ValueError:
            doc = None
        ctype = (hd.get('content-type') or [''])[0]
        if 'problem+json' in ctype and isinstance(doc, dict):
            cause = doc.get('cause')
            detail = doc.get('detail') or ''
            if ' at ' in detail:
                who = detail.rsplit(' at ', 1)[1]
        stub = (hd.get('x-nrfstub') or [None])[0]
        if stub is not None:
            who = run.topo.nrfs[int(stub.split('-')[1])].name
        return {'status': st, 'cause': cause, 'answeredBy': who, 'via': hd.get('via', [])}

    def story(self, run, k, nrf, path, via, hops, state_before, what):
        if state_before:
            with open(run.state, 'w') as f:
                f.write(state_before)
        elif os.path.exists(run.state):
            os.unlink(run.state)
        text = run.trace(nrf, path, via, hops, fmt=None)
        return ('seed %d, request %d: GET %s at %s (via %s, max-forward-hops %s)\n     %s\n'
                'topology:\n%s\ntrace:\n%s%s' % (
                    run.seed, k, path, nrf.name, via, hops, what, run.topo, text.stdout,
                    text.stderr))


if __name__ == '__main__':
    H.parse_args(sys.argv)
    Agreement.SEEDS = take_args(sys.argv)
    unittest.main()
