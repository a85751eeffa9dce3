#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Live reconfiguration under load (docs/rest-api.md: "applied to every data-path
core without dropping or failing requests in flight").

Usage: python3 tests/integration/test_reconfig.py [--build-dir BUILD]
       [--seconds 20] [--changes 200] [unittest args]

Topology, all on loopback:

    h2load ──► A (nrfwd, 2 workers; local NRF answers empty discoveries)
                 ├─► E (nrfwd, 1 worker) ──► local-e (nrfstub, UDM profiles)
                 ├─► G (nrfstub nrf-g, UDM profiles)
                 └─► X (nrfstub nrf-x, UDM profiles; configured now and then)

h2load discovers UDM through A for the whole run; every answer is a 200 from
whichever peer A prefers. Meanwhile the test applies the changes over the
REST API, in this cycle of six:
  0. swap the priorities on A: G preferred      -> G takes every new request
  1. add X to A with the best priority          -> X takes them
  2. remove X from A                            -> G takes them again
  3. swap back: E preferred                     -> E takes them
  4. add A's identity to E's peer list          -> E skips A (loop prevention)
  5. remove it from E's peer list               -> E no longer skips A
After each change the test checks that the decisions follow within 1 s,
from the counters (every PUT/PATCH is answered once every worker uses the
new configuration; requests that started before may finish their tries on
the old one for a few more milliseconds, so the check looks for a window
between two scrapes): on A, nrfwd_tries_total of the expected peer grows
and no other peer's does; on E, nrfwd_loop_preventions_total{peer=A} grows
while A is in its list and stands still (while E keeps deciding requests)
once it is gone. Every few cycles a curl probe
checks end to end which NRF answered (x-nrfstub). At the end: h2load saw no
failed, errored or timed-out request and only 2xx answers, and both nrfwd
counted every change and no failure.
"""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

SECONDS = 20
CHANGES = 200
UDM = '/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF'
PCF = '/nnrf-disc/v1/nf-instances?target-nf-type=PCF&requester-nf-type=AMF'
FWD = '/nrf-configuration/v1/forwardingOptions'


class TestReconfigUnderLoad(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness()

    def tearDown(self):
        if getattr(self, 'load', None) is not None:
            self.load.stop()
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed or bool(os.environ.get('NRFWD_TEST_LOGS')))

    def patch(self, proc, doc):
        st, _, body = H.api(proc, 'PATCH', FWD, doc)
        self.assertEqual(st, 200, body)
        return body

    def wait_for(self, what, check, timeout=1.0):
        """Run @check until it is true; returns the seconds it took."""
        t0 = time.monotonic()
        while True:
            if check():
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                self.fail('decision did not follow within %.1f s: %s' % (timeout, what))
            time.sleep(0.02)

    def test_changes_under_load_fail_no_request(self):
        h = self.h
        loc_a = h.start_stub('local-a', 'stub-profiles-empty.json', extra=['--no-record'])
        loc_e = h.start_stub('local-e', 'stub-profiles-e.json', extra=['--no-record'])
        g = h.start_stub('nrf-g', 'stub-profiles-e.json', extra=['--no-record'])
        x = h.start_stub('nrf-x', 'stub-profiles-e.json', extra=['--no-record'])

        e_cfg = H.nrfwd_config('nrf-e.test', local=loc_e.port,
                               forwarding={'featureStatus': 'ENABLED'})
        e = h.start_nrfwd(e_cfg, workers=1, management=True, name='nrf-e')
        a_port = H.free_port()
        pe = lambda prio: H.peer('nrf-e.test', e.port, priority=prio)  # noqa: E731
        pg = lambda prio: H.peer('nrf-g.test', g.port, priority=prio)  # noqa: E731
        px = H.peer('nrf-x.test', x.port, priority=0)
        a_cfg = H.nrfwd_config('nrf-a.test', port=a_port, local=loc_a.port,
                               peers=[pe(1), pg(2)])
        a = h.start_nrfwd(a_cfg, workers=2, management=True, name='nrf-a')
        a_name = 'nrf-a.test:%d' % a_port
        answerer = {'e': 'local-e', 'g': 'nrf-g', 'x': 'nrf-x'}

        names = {'e': 'nrf-e.test:%d' % e.port, 'g': 'nrf-g.test:%d' % g.port,
                 'x': 'nrf-x.test:%d' % x.port}

        def tries(m):
            return {k: H.metric_value(m, 'nrfwd_tries_total', peer=n) for k, n in names.items()}

        def a_prefers(who):
            """Within the time allowed, a window of new tries goes to @who only.
            (Requests that started before the change may still make their
            tries on the old configuration for a few ms: the window slides.)"""
            state = {'t0': tries(H.metrics(a))}

            def check():
                t0, t1 = state['t0'], tries(H.metrics(a))
                state['t0'] = t1
                others = all(t1[k] == t0[k] for k in names if k != who)
                return others and t1[who] - t0[who] >= 3
            return check

        def e_prevented(m=None):
            return H.metric_value(m or H.metrics(e), 'nrfwd_loop_preventions_total',
                                  peer=a_name)

        def e_local_tries(m):
            return H.metric_value(m, 'nrfwd_tries_total', role='local')

        def answered_by(who):
            st, hd, _ = H.curl(a.url(UDM), timeout=5)
            return st == 200 and hd.get('x-nrfstub') == [answerer[who]]

        self.assertTrue(answered_by('e'))
        load = self.load = H.h2load_start(a.url(UDM), seconds=SECONDS, c=4, m=8, rps=250)
        time.sleep(0.5)  # load is flowing
        t_start = time.monotonic()
        spacing = (SECONDS - 3.0) / CHANGES
        delays = []
        applied_under_load = 0
        for i in range(CHANGES):
            due = t_start + i * spacing
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            step = i % 6
            if step == 0:
                self.patch(a, {'nrfHostConfig': [pe(2), pg(1)]})
                delays.append(self.wait_for('G preferred', a_prefers('g')))
            elif step == 1:
                self.patch(a, {'nrfHostConfig': [pe(2), pg(1), px]})
                delays.append(self.wait_for('X added', a_prefers('x')))
            elif step == 2:
                self.patch(a, {'nrfHostConfig': [pe(2), pg(1)]})
                delays.append(self.wait_for('X removed', a_prefers('g')))
            elif step == 3:
                self.patch(a, {'nrfHostConfig': [pe(1), pg(2)]})
                delays.append(self.wait_for('E preferred', a_prefers('e')))
            elif step == 4:
                self.patch(e, {'nrfHostConfig': [H.peer('nrf-a.test', a_port)]})
                base = e_prevented()
                delays.append(self.wait_for('A added to E', lambda: e_prevented() > base))
            else:
                self.patch(e, {'nrfHostConfig': []})
                state = {'m0': H.metrics(e)}

                def not_skipped():
                    m0, m1 = state['m0'], H.metrics(e)
                    state['m0'] = m1
                    return (e_prevented(m1) == e_prevented(m0) and
                            e_local_tries(m1) - e_local_tries(m0) >= 3)
                delays.append(self.wait_for('A removed from E', not_skipped))
            if step in (0, 3) and (i // 6) % 8 == 0:  # end to end, now and then
                self.assertTrue(answered_by('g' if step == 0 else 'e'))
            if load.running():
                applied_under_load += 1
        res = load.wait(timeout=SECONDS + 60)

        sys.stderr.write('\n  %d changes (%d while h2load ran) in %.1f s; decision '
                         'followed after max %.0f ms, median %.0f ms; h2load: %s done, '
                         '%.0f req/s\n' % (
                             CHANGES, applied_under_load, time.monotonic() - t_start,
                             max(delays) * 1e3, sorted(delays)[len(delays) // 2] * 1e3,
                             res.get('done'), res.get('rps', 0)))
        self.assertEqual(res.get('rc'), 0, res['raw'])
        self.assertGreater(res.get('done', 0), 0, res['raw'])
        self.assertEqual((res['failed'], res['errored'], res['timeout']), (0, 0, 0), res['raw'])
        self.assertEqual(res['status_2xx'], res['done'], res['raw'])
        self.assertGreaterEqual(applied_under_load, CHANGES * 9 // 10)

        ma, me = H.metrics(a), H.metrics(e)
        n_e = len([i for i in range(CHANGES) if i % 6 >= 4])
        self.assertEqual(H.metric_value(ma, 'nrfwd_config_reloads_total'), CHANGES - n_e)
        self.assertEqual(H.metric_value(me, 'nrfwd_config_reloads_total'), n_e)
        # h2load -D cancels what it has in flight when its time is up: those
        # streams (started, not done) are the only client resets allowed.
        in_flight_at_end = res.get('started', res['done']) - res['done']
        for m in (ma, me):
            self.assertEqual(H.metric_value(m, 'nrfwd_config_reload_failures_total'), 0)
            self.assertEqual(H.metric_value(m, 'nrfwd_relay_aborts_total'), 0)
        for m in (ma, me):
            self.assertLessEqual(H.metric_value(m, 'nrfwd_client_resets_total'), in_flight_at_end)
        self.assertEqual(H.metric_value(ma, 'nrfwd_requests_total', outcome='not_reachable'),
                         0)
        self.assertEqual(H.metric_value(ma, 'nrfwd_try_failures_total'), 0)
        n4 = len([i for i in range(CHANGES) if i % 6 == 4])
        self.assertGreaterEqual(H.metric_value(me, 'nrfwd_config_generation'), 1 + n4)
        # X's pool was closed every time X was removed (and its counters stay).
        self.assertIn('nrf-x.test:%d no longer configured' % x.port, a.log())
        self.assertGreater(H.metric_value(ma, 'nrfwd_tries_total',
                                          peer='nrf-x.test:%d' % x.port), 0)


if __name__ == '__main__':
    argv = H.parse_args(sys.argv)
    for opt in ('--seconds', '--changes'):
        if opt in argv:
            k = argv.index(opt)
            val = int(argv[k + 1])
            del argv[k:k + 2]
            if opt == '--seconds':
                SECONDS = val
            else:
                CHANGES = val
    sys.argv[:] = argv
    unittest.main()
