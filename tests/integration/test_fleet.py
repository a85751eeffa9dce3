#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A fleet of nrfwd instances with one configuration in etcd (docs/fleet.md).

Usage: python3 tests/integration/test_fleet.py [--build-dir BUILD] [unittest args]

Everything on loopback, started by the test:

    etcd m0, m1, m2 (one cluster, Debian's etcd-server)
        ▲ watch + status lease
    a1, a2, a3 (nrfwd, one NRF "nrf-a.test"; runtime in each one's own file,
    │           the shared document under /nrfwd/<unique>/config)
    ├─► local (nrfstub, empty discoveries: every UDM discovery is forwarded)
    ├─► nrf-e (nrfstub, UDM) priority 1
    └─► nrf-g (nrfstub, UDM) priority 2

The cases run in order on one set of processes (each leaves the cluster
whole again):
  1. a change written through a1's REST API is applied by all three within
     1 s (measured, printed) and every instance's answers follow it (nrf-g
     answers instead of nrf-e); a request whose Via names nrf-g is then
     answered by nrf-e (loop prevention still applied); the key holds the
     stored document with the change, no default added;
  2. an invalid document written to etcd is refused by all three, each
     keeps serving what it ran, and `nrfwd-ctl fleet status` names the
     reason (JSON pointer) for every instance;
  3. one etcd member killed: a change still converges on all three;
  4. every member killed: the instances keep serving (h2load through a1
     meanwhile, 0 failed), /readyz stays 200 and says the source is down,
     nrfwd_config_source_up is 0, a REST change answers 503; an instance
     restarted meanwhile starts from its cached copy; without a cache it
     exits with a clear error; once etcd is back, a change made while it
     was down... (written right after) is applied by all;
  5. concurrent REST writes on two instances: one wins, the other gets 409
     (and the store holds the winner's document);
  6. nrfwd-ctl get/put/patch --etcd work on the store directly: a patch is
     validated, written with CAS and applied by all; an invalid one and a
     runtime group are refused with nothing written;
  7. the runtime file of one instance keeps the rules of a plain file
     (decision 0037): a REST runtime change writes only what the file said
     plus the change; after a hand edit not yet reloaded it is refused with
     409 and the file is untouched; SIGHUP reloads the file's runtime and
     keeps the shared groups from etcd; a shared group put into the file is
     refused by the reload with its pointer, and the instance keeps serving.
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402
import etcd_cluster as E  # noqa: E402

UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF'
FWD = '/nrf-configuration/v1/forwardingOptions'
CONVERGE_S = 1.0


def ready(inst):
    st, _, doc = H.api(inst, 'GET', '/readyz', timeout=3.0)
    return st, doc


def source_of(inst):
    try:
        return ready(inst)[1].get('configSource', {})
    except (OSError, ValueError):
        return {}


def answered_by(inst, via=None):
    hdrs = ['via: %s' % via] if via else []
    st, hd, _ = H.curl(inst.url(UDM), headers=hdrs, timeout=5.0)
    return st, (hd.get('x-nrfstub') or [None])[0]


class TestFleet(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.h = h = H.Harness(prefix='nrfwd-fleet-')
        cls.cluster = None
        try:
            cls._start(h)
        except BaseException:
            cls._teardown(dump=True)
            raise

    @classmethod
    def _start(cls, h):
        cls.cluster = c = E.EtcdCluster(h, members=3)
        c.start()
        cls.key = '/nrfwd/fleet-%d/config' % os.getpid()
        local = h.start_stub('local', 'stub-profiles-empty.json', extra=['--no-record'])
        cls.e = h.start_stub('nrf-e', 'stub-profiles-e.json', extra=['--no-record'])
        cls.g = h.start_stub('nrf-g', 'stub-profiles-e.json', extra=['--no-record'])
        ports = [H.free_port() for _ in range(3)]
        peers = [H.peer('nrf-e.test', cls.e.port, priority=1),
                 H.peer('nrf-g.test', cls.g.port, priority=2)]
        docs = [H.nrfwd_config('nrf-a.test', port=p, local=local.port, peers=peers)
                for p in ports]
        shared = {k: v for k, v in docs[0].items() if k != 'runtime'}
        cls.shared = shared
        cls.rev0 = E.put(c.url(0), cls.key, json.dumps(shared))
        cls.inst = []
        for i, d in enumerate(docs):
            cls.inst.append(cls._start_instance(h, i, {'runtime': d['runtime']}))

    @classmethod
    def _start_instance(cls, h, i, local_doc=None, extra=(), wait=True):
        if local_doc is None:
            local_doc = cls.inst[i].config_path
        return h.start_nrfwd(local_doc, name='a%d' % (i + 1), management=True, wait=wait,
                             extra=['--config-etcd', cls.cluster.endpoints,
                                    '--config-key', cls.key,
                                    '--instance-id', 'a%d' % (i + 1),
                                    '--etcd-lease-ttl', '3'] + list(extra))

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

    # ---------------------------------------------------------------- helpers

    def converge(self, rev, insts=None, timeout=CONVERGE_S):
        """Seconds until every instance applied revision >= @rev (None: not)."""
        insts = insts or self.inst
        return E.wait_for(lambda: all(source_of(i).get('appliedRevision', 0) >= rev
                                      for i in insts), timeout)

    def patch(self, inst, body):
        return H.api(inst, 'PATCH', FWD, body, timeout=10.0)

    def hosts(self, e_prio, g_prio):
        fwd = H.api(self.inst[0], 'GET', FWD)[2]
        for hc in fwd['nrfHostConfig']:
            hc['priority'] = e_prio if hc['fqdn'] == 'nrf-e.test' else g_prio
        return {'nrfHostConfig': fwd['nrfHostConfig']}

    def rev_of_store(self):
        kvs = E.get(self.cluster.url(0), self.key)
        return kvs[0][2], json.loads(kvs[0][1])

    # ------------------------------------------------------------------ cases

    def test_1_rest_change_on_one_instance_applies_on_all_within_1s(self):
        for inst in self.inst:
            self.assertEqual(answered_by(inst), (200, 'nrf-e'))
            self.assertEqual(source_of(inst).get('appliedRevision'), self.rev0)
        t0 = time.monotonic()
        st, _, doc = self.patch(self.inst[0], self.hosts(e_prio=2, g_prio=1))
        self.assertEqual(st, 200, doc)
        rev, stored = self.rev_of_store()
        took = self.converge(rev)
        total = time.monotonic() - t0
        self.assertIsNotNone(took, [source_of(i) for i in self.inst])
        print('\nfleet: REST write on a1 -> applied by all 3 instances in %.0f ms '
              '(answer of a1 included)' % (total * 1000), file=sys.stderr)
        self.assertLess(total, CONVERGE_S)
        prios = {hc['fqdn']: hc['priority'] for hc in stored['forwardingOptions']['nrfHostConfig']}
        self.assertEqual(prios, {'nrf-e.test': 2, 'nrf-g.test': 1})
        # Applied to the stored document (decision 0037): its groups and
        # keys as written, the change, no default filled in.
        self.assertEqual(list(stored), list(self.shared))
        self.assertEqual(stored['generalOptions'], self.shared['generalOptions'])
        self.assertEqual(list(stored['forwardingOptions']),
                         list(self.shared['forwardingOptions']))
        for inst in self.inst:
            self.assertEqual(answered_by(inst), (200, 'nrf-g'), inst.name)
            # loop prevention follows the new order: nrf-g in Via -> nrf-e answers
            self.assertEqual(answered_by(inst, via='2.0 nrf-g.test:%d' % self.g.port),
                             (200, 'nrf-e'), inst.name)
            self.assertEqual(H.api(inst, 'GET', FWD)[2]['nrfHostConfig'],
                             stored['forwardingOptions']['nrfHostConfig'])

    def test_2_invalid_document_is_refused_by_all_with_the_reason_in_fleet_status(self):
        rev_ok, good = self.rev_of_store()
        bad = json.loads(json.dumps(good))
        bad['forwardingOptions']['maxViaMembers'] = 0
        bad_rev = E.put(self.cluster.url(1), self.key, json.dumps(bad))
        took = E.wait_for(lambda: all(source_of(i).get('seenRevision', 0) >= bad_rev
                                      for i in self.inst), 2.0)
        self.assertIsNotNone(took)
        for inst in self.inst:
            src = source_of(inst)
            self.assertEqual(src['state'], 'refused', src)
            self.assertEqual(src['appliedRevision'], rev_ok)
            params = [p['param'] for p in src['lastError']['invalidParams']]
            self.assertIn('/forwardingOptions/maxViaMembers', params)
            self.assertIsNotNone(answered_by(inst)[1])  # still serving
            self.assertEqual(H.api(inst, 'GET', FWD)[2]['maxViaMembers'],
                             good['forwardingOptions']['maxViaMembers'])
        # what the operator sees
        r = subprocess.run([H.binary('nrfwd-ctl'), 'fleet', 'status', '--etcd',
                            self.cluster.endpoints, '--config-key', self.key],
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # someone refused
        for name in ('a1', 'a2', 'a3'):
            line = [ln for ln in r.stdout.splitlines() if ln.split()[:1] == [name]]
            self.assertEqual(len(line), 1, r.stdout)
            self.assertIn('refused', line[0])
        self.assertIn('/forwardingOptions/maxViaMembers', r.stdout)
        # the fix goes through as usual
        fixed = E.put(self.cluster.url(2), self.key, json.dumps(good))
        self.assertIsNotNone(self.converge(fixed, timeout=2.0))
        for inst in self.inst:
            self.assertEqual(source_of(inst)['state'], 'applied')
        # the status keys follow: every instance on the fixed revision
        ok = E.wait_for(lambda: subprocess.run(
            [H.binary('nrfwd-ctl'), 'fleet', 'status', '--etcd', self.cluster.endpoints,
             '--config-key', self.key], capture_output=True, timeout=10).returncode == 0, 3.0,
            step=0.1)
        self.assertIsNotNone(ok)
        inst_keys = E.get(self.cluster.url(0), self.key.rsplit('/', 1)[0] + '/instances/',
                          prefix=True)
        self.assertEqual(len(inst_keys), 3)
        for _, value, _ in inst_keys:
            st = json.loads(value)
            self.assertEqual((st['appliedRevision'], st['seenRevision'], st['state']),
                             (fixed, fixed, 'applied'), st)

    def test_3_one_member_killed_a_change_still_converges(self):
        c = self.cluster
        c.kill(0)
        try:
            t0 = time.monotonic()
            st, _, doc = self.patch(self.inst[1], self.hosts(e_prio=1, g_prio=2))
            self.assertEqual(st, 200, doc)
            rev, _ = self.rev_of_store_from(1)
            took = self.converge(rev, timeout=5.0)
            self.assertIsNotNone(took, [source_of(i) for i in self.inst])
            print('\nfleet: one etcd member down: applied by all 3 in %.0f ms'
                  % ((time.monotonic() - t0) * 1000), file=sys.stderr)
            for inst in self.inst:
                self.assertEqual(answered_by(inst), (200, 'nrf-e'))
        finally:
            c.restart(0)
            c.wait_healthy()

    def rev_of_store_from(self, member):
        kvs = E.get(self.cluster.url(member), self.key)
        return kvs[0][2], json.loads(kvs[0][1])

    def test_4_all_members_killed_instances_keep_serving_and_catch_up(self):
        c = self.cluster
        a1, a3 = self.inst[0], self.inst[2]
        rev_before, doc_before = self.rev_of_store()
        load = H.h2load_start(a1.url(UDM), seconds=6, c=2, m=4, rps=100)
        try:
            time.sleep(0.5)
            c.kill_all()
            down = E.wait_for(lambda: all(not source_of(i).get('sourceUp', True)
                                          for i in self.inst), 8.0, step=0.1)
            self.assertIsNotNone(down, [source_of(i) for i in self.inst])
            st, doc = ready(a1)
            self.assertEqual(st, 200, doc)  # the data path is fine
            self.assertFalse(doc['configSource']['sourceUp'])
            m = H.metrics(a1)
            self.assertEqual(H.metric_value(m, 'nrfwd_config_source_up'), 0)
            self.assertEqual(H.metric_value(m, 'nrfwd_config_source_revision'), rev_before)
            self.assertGreater(H.metric_value(m, 'nrfwd_config_source_contact_age_seconds'), 0)
            st, _, doc = self.patch(a1, self.hosts(e_prio=2, g_prio=1))
            self.assertEqual(st, 503, doc)
            self.assertEqual(answered_by(a1), (200, 'nrf-e'))  # nothing changed
            # a restart without etcd: from the cached copy
            self.inst[2].stop()
            a3 = self.inst[2] = self._start_instance(self.h, 2)
            self.assertIn('running on the cached copy', a3.log())
            self.assertEqual(source_of(a3).get('state'), 'cached')
            self.assertEqual(answered_by(a3), (200, 'nrf-e'))
            # ... and with no cache: a clear error, non-zero exit
            with open(a3.config_path) as f:
                rt = json.load(f)['runtime']
            rt['listen'] = [{'address': '127.0.0.1', 'port': H.free_port(), 'tls': False}]
            nc = self._start_instance(self.h, 3, {'runtime': rt},
                                      extra=['--config-cache', 'none'], wait=False)
            nc.proc.wait(15)
            self.assertNotEqual(nc.proc.returncode, 0)
            self.assertIn('etcd unreachable', nc.log())
            res = load.wait(30)
        finally:
            load.stop()
            c.restart_all()
        self.assertGreater(res['succeeded'], 0, res)
        self.assertEqual(res['failed'] + res['errored'] + res['timeout'], 0, res)
        # back: every instance reconnects, then a change reaches all of them
        up = E.wait_for(lambda: all(source_of(i).get('sourceUp') for i in self.inst), 10.0,
                        step=0.05)
        self.assertIsNotNone(up, [source_of(i) for i in self.inst])
        print('\nfleet: etcd back: all 3 instances reconnected within %.1f s' % up,
              file=sys.stderr)
        new = json.loads(json.dumps(doc_before))
        new['forwardingOptions']['maxViaMembers'] = 15
        rev = E.put(c.url(1), self.key, json.dumps(new))
        self.assertIsNotNone(self.converge(rev, timeout=3.0), [source_of(i) for i in self.inst])
        self.assertEqual(source_of(a3)['state'], 'applied')
        for inst in self.inst:
            self.assertEqual(H.api(inst, 'GET', FWD)[2]['maxViaMembers'], 15)

    def test_5_concurrent_rest_writes_one_wins_the_other_gets_409(self):
        conflicts = 0
        for rnd in range(6):
            rev0, _ = self.rev_of_store()
            bodies = [{'maxViaMembers': 20 + 2 * rnd}, {'maxViaMembers': 21 + 2 * rnd}]
            out = [None, None]
            gate = threading.Barrier(2)

            def go(k):
                gate.wait()
                out[k] = self.patch(self.inst[k], bodies[k])

            ts = [threading.Thread(target=go, args=(k,)) for k in (0, 1)]
            for t in ts:
                t.start()
            for t in ts:
                t.join(15)
            codes = [o[0] for o in out]
            self.assertIn(200, codes, out)
            self.assertTrue(set(codes) <= {200, 409}, out)
            rev, stored = self.rev_of_store()
            if codes.count(409) == 1:
                conflicts += 1
                winner = codes.index(200)
                self.assertEqual(stored['forwardingOptions']['maxViaMembers'],
                                 bodies[winner]['maxViaMembers'])
                self.assertIn('changed since revision', out[1 - winner][2]['detail'])
            self.assertIsNotNone(self.converge(rev, timeout=2.0))
            for inst in self.inst:
                self.assertEqual(H.api(inst, 'GET', FWD)[2]['maxViaMembers'],
                                 stored['forwardingOptions']['maxViaMembers'])
            if conflicts >= 2:
                break
        print('\nfleet: concurrent writes: %d round(s) with one 409' % conflicts,
              file=sys.stderr)
        self.assertGreater(conflicts, 0)

    def test_6_nrfwd_ctl_writes_the_store_directly(self):
        ctl = [H.binary('nrfwd-ctl')]
        where = ['--etcd', self.cluster.endpoints, '--config-key', self.key]
        tmp = os.path.join(self.h.tmpdir, 'patch.json')

        def run(*args, data=None):
            if data is not None:
                with open(tmp, 'w') as f:
                    json.dump(data, f)
            return subprocess.run(ctl + list(args) + where, capture_output=True, text=True,
                                  timeout=10)

        r = run('get', 'forwardingOptions')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('nrfHostConfig', json.loads(r.stdout))
        before, _ = self.rev_of_store()
        r = run('patch', 'forwardingOptions', tmp, data={'maxViaMembers': 12})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('written at revision', r.stdout)
        rev, stored = self.rev_of_store()
        self.assertGreater(rev, before)
        self.assertEqual(stored['forwardingOptions']['maxViaMembers'], 12)
        self.assertIsNotNone(self.converge(rev, timeout=2.0))
        for inst in self.inst:
            self.assertEqual(H.api(inst, 'GET', FWD)[2]['maxViaMembers'], 12)
        r = run('patch', 'forwardingOptions', tmp, data={'maxViaMembers': 0})
        self.assertEqual(r.returncode, 1)
        self.assertIn('/forwardingOptions/maxViaMembers', r.stderr)
        r = run('put', 'runtime', tmp, data={})
        self.assertEqual(r.returncode, 2)
        self.assertEqual(self.rev_of_store()[0], rev)  # nothing written
        r = subprocess.run(ctl + ['fleet', 'status'] + where, capture_output=True, text=True,
                           timeout=10)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)  # all on the current revision

    def test_7_runtime_file_hand_edit_409_and_sighup_reload(self):
        a1 = self.inst[0]
        path = a1.config_path
        rtg = '/nrf-configuration/v1/runtime'

        def disk():
            with open(path, 'rb') as f:
                return f.read()

        def write(doc):
            with open(path, 'w') as f:
                json.dump(doc, f, indent=1)

        def hup_and_wait(pattern):
            n = len(a1.log())
            os.kill(a1.pid, signal.SIGHUP)
            t0 = time.time()
            while time.time() - t0 < 5:
                if re.search(pattern, a1.log()[n:]):
                    return a1.log()[n:]
                time.sleep(0.05)
            self.fail('no %r after SIGHUP:\n%s' % (pattern, a1.log()[n:][-1500:]))

        orig = json.loads(disk())
        self.assertEqual(set(orig), {'runtime'})
        fwd_before = H.api(a1, 'GET', FWD)[2]
        # A REST change of runtime: only what the file said plus the change.
        st, _, doc = H.api(a1, 'PATCH', rtg, {'timeouts': {'perTryMs': 1500}}, timeout=10.0)
        self.assertEqual(st, 200, doc)
        now = json.loads(disk())
        self.assertEqual(set(now), {'runtime'})
        self.assertEqual(set(now['runtime']), set(orig['runtime']))  # no defaults added
        self.assertEqual(now['runtime']['timeouts']['perTryMs'], 1500)
        self.assertEqual(now['runtime']['timeouts']['connectMs'],
                         orig['runtime']['timeouts']['connectMs'])
        # A hand edit not reloaded: the next REST change is refused, the
        # file stays as the operator left it.
        edited = json.loads(disk())
        edited['runtime']['timeouts']['perTryMs'] = 1700
        write(edited)
        before = disk()
        st, _, doc = H.api(a1, 'PATCH', rtg, {'timeouts': {'perTryMs': 1600}}, timeout=10.0)
        self.assertEqual(st, 409, doc)
        self.assertIn('changed on disk', doc['detail'])
        self.assertEqual(disk(), before)
        self.assertEqual(H.api(a1, 'GET', rtg)[2]['timeouts']['perTryMs'], 1500)
        # SIGHUP: the file's runtime, the shared groups from etcd kept.
        hup_and_wait(r'configuration generation \d+ applied \(reload of')
        self.assertEqual(H.api(a1, 'GET', rtg)[2]['timeouts']['perTryMs'], 1700)
        self.assertEqual(H.api(a1, 'GET', FWD)[2], fwd_before)
        self.assertEqual(answered_by(a1), answered_by(self.inst[1]))
        # The file is what runs again: REST changes are accepted.
        st, _, doc = H.api(a1, 'PATCH', rtg, {'timeouts': {'perTryMs': 1000}}, timeout=10.0)
        self.assertEqual(st, 200, doc)
        # A shared group in the file: the reload is refused with its
        # pointer, the instance keeps what it runs.
        bad = json.loads(disk())
        bad['forwardingOptions'] = {'maxViaMembers': 3}
        write(bad)
        out = hup_and_wait(r'reload from .* refused')
        self.assertIn('/forwardingOptions', out)
        self.assertEqual(H.api(a1, 'GET', FWD)[2], fwd_before)
        self.assertEqual(answered_by(a1)[0], 200)
        # Put the file back as nrfwd wrote it (the class's later cases).
        del bad['forwardingOptions']
        write(bad)
        hup_and_wait(r'configuration reload from .*: unchanged|configuration generation '
                     r'\d+ applied \(reload of')
        st, _, doc = H.api(a1, 'PATCH', rtg, {'timeouts': {'perTryMs': 1000}}, timeout=10.0)
        self.assertEqual(st, 200, doc)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main(verbosity=2)
