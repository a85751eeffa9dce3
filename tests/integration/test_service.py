#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""nrfwd as a service: the systemd notification protocol, the
watchdog, SIGHUP reload and journal log lines, checked without systemd.

Usage: python3 tests/integration/test_service.py [--build-dir BUILD] [unittest args]

The test plays the service manager: it owns an AF_UNIX datagram socket,
starts nrfwd with NOTIFY_SOCKET naming it (and WATCHDOG_USEC), and reads
what nrfwd sends, as systemd would for Type=notify (sd_notify(3)):
  - READY=1 with MAINPID = nrfwd's pid once it serves (a discovery through
    it is answered by the local nrfstub);
  - WATCHDOG=1 about every half WATCHDOG_USEC while the workers loop;
  - SIGHUP (ExecReload): RELOADING=1 with MONOTONIC_USEC, then READY=1 with a
    STATUS naming the new generation; the change is in effect (REST API shows
    it, /metrics counts a reload); an unchanged file publishes nothing;
  - a file that is not JSON, one that is invalid, one that changes a
    restart-only setting: refused with exactly one log line naming the
    reason (the JSON pointer), the old configuration keeps serving, STATUS
    says "reload refused", nrfwd_config_reload_failures_total counts them;
  - SIGTERM: STOPPING=1, exit 0;
  - with JOURNAL_STREAM naming stderr, every line has a syslog priority
    prefix ("<3>" error ... "<7>" debug) and no timestamp of its own.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

AMF = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'
FWD = '/nrf-configuration/v1/forwardingOptions'
WATCHDOG_USEC = 1000000


class Notify:
    """The service manager's end of the notification socket."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.msgs = []  # (monotonic time, {var: value})

    def close(self):
        self.sock.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def _read(self, timeout):
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data = self.sock.recv(4096)
        except socket.timeout:
            return None
        kv = dict(line.split('=', 1) for line in data.decode().split('\n') if '=' in line)
        self.msgs.append((time.monotonic(), kv))
        return kv

    def wait(self, var, timeout=10.0, value=None):
        """The next message that sets @var (to @value if given)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            kv = self._read(deadline - time.monotonic())
            if kv is not None and var in kv and (value is None or kv[var] == value):
                return kv
        raise AssertionError('no %s=%s within %.1f s; got %r' % (
            var, value or '*', timeout, [m for _, m in self.msgs[-8:]]))

    def drain(self):
        while self._read(0.001) is not None:
            pass


class TestService(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-svc-')
        self.notify = Notify(os.path.join(self.h.tmpdir, 'notify.sock'))

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed or bool(os.environ.get('NRFWD_TEST_LOGS')))
        self.notify.close()
        if not failed:
            shutil.rmtree(self.h.tmpdir, ignore_errors=True)

    def start(self, cfg, watchdog=True):
        env = {'NOTIFY_SOCKET': self.notify.path}
        if watchdog:
            env['WATCHDOG_USEC'] = str(WATCHDOG_USEC)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            fwd = self.h.start_nrfwd(cfg, management=True)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        return fwd

    def discover(self, fwd):
        st, hdrs, _ = H.curl(fwd.url(AMF))
        self.assertEqual(st, 200)
        return hdrs

    def write_cfg(self, fwd, doc):
        tmp = fwd.config_path + '.tmp'
        with open(tmp, 'w') as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
        os.replace(tmp, fwd.config_path)

    def hup(self, fwd):
        """SIGHUP; returns the READY=1 message that ends the reload."""
        self.notify.drain()
        os.kill(fwd.pid, signal.SIGHUP)
        rl = self.notify.wait('RELOADING', value='1')
        self.assertRegex(rl.get('MONOTONIC_USEC', ''), r'^\d+$')
        return self.notify.wait('READY', value='1')

    def refusals(self, fwd):
        return len(re.findall(r'configuration reload from .* refused', fwd.log()))

    def test_notify_watchdog_reload_stop(self):
        local = self.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config('nrf-a.svc.test', local=local.port)
        fwd = self.start(cfg)

        ready = self.notify.wait('READY', value='1')
        self.assertEqual(ready.get('MAINPID'), str(fwd.pid))
        self.assertIn('generation 1', ready.get('STATUS', ''))
        self.discover(fwd)

        # Watchdog: pings at about half the interval while workers loop.
        self.notify.drain()
        t0 = time.monotonic()
        self.notify.wait('WATCHDOG', value='1', timeout=3.0)
        self.notify.wait('WATCHDOG', value='1', timeout=3.0)
        self.assertLess(time.monotonic() - t0, 2.5)

        # A live change through the file: maxForwardAttempts 3 -> 2.
        doc = json.loads(json.dumps(cfg))
        doc['forwardingOptions']['maxForwardAttempts'] = 2
        self.write_cfg(fwd, doc)
        r = self.hup(fwd)
        self.assertIn('generation 2', r.get('STATUS', ''))
        st, _, body = H.api(fwd, 'GET', FWD)
        self.assertEqual(st, 200)
        self.assertEqual(body['maxForwardAttempts'], 2)
        m = H.metrics(fwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), 2)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_reloads_total'), 1)
        self.assertEqual(H.metric_value(m, 'nrfwd_worker_config_generation'), 2)
        self.discover(fwd)

        # The same file again: nothing published.
        r = self.hup(fwd)
        self.assertIn('generation 2', r.get('STATUS', ''))
        self.assertIn('unchanged', fwd.log())
        self.assertEqual(H.metric_value(H.metrics(fwd), 'nrfwd_config_generation'), 2)

        # Not JSON, invalid, restart-only: one line each, old config stays.
        cases = [
            ('{"generalOptions": ', r'refused.*invalid.*\(root\)|refused.*invalid'),
            (dict(doc, forwardingOptions=dict(doc['forwardingOptions'],
                                              maxForwardAttempts='many')),
             r'refused.*/forwardingOptions/maxForwardAttempts'),
            (dict(doc, runtime=dict(doc['runtime'], listen=[
                {'address': '127.0.0.1', 'port': H.free_port(), 'tls': False}])),
             r'refused.*restart-only.*/runtime/listen'),
        ]
        for n, (bad, rx) in enumerate(cases, 1):
            before = self.refusals(fwd)
            self.write_cfg(fwd, bad)
            r = self.hup(fwd)
            self.assertIn('reload refused', r.get('STATUS', ''))
            self.assertIn('generation 2', r.get('STATUS', ''))
            self.assertEqual(self.refusals(fwd), before + 1)
            line = [ln for ln in fwd.log().splitlines() if 'refused' in ln][-1]
            self.assertRegex(line, rx)
            m = H.metrics(fwd)
            self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), 2)
            self.assertEqual(H.metric_value(m, 'nrfwd_config_reload_failures_total'), n)
            self.discover(fwd)
        self.assertTrue(fwd.alive())

        # A good file again is taken.
        doc['forwardingOptions']['maxForwardAttempts'] = 1
        self.write_cfg(fwd, doc)
        r = self.hup(fwd)
        self.assertIn('generation 3', r.get('STATUS', ''))

        self.notify.drain()
        os.kill(fwd.pid, signal.SIGTERM)
        self.notify.wait('STOPPING', value='1')
        fwd.proc.wait(15)
        self.assertEqual(fwd.proc.returncode, 0)

    def test_without_management_listener_reload_still_works(self):
        local = self.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config('nrf-a.svc.test', local=local.port)
        path = os.path.join(self.h.tmpdir, 'nomgmt.json')
        with open(path, 'w') as f:
            json.dump(cfg, f)  # runtime.management.port 0: no listener
        saved = os.environ.get('NOTIFY_SOCKET')
        os.environ['NOTIFY_SOCKET'] = self.notify.path
        try:
            fwd = self.h.start_nrfwd(path)
        finally:
            if saved is None:
                os.environ.pop('NOTIFY_SOCKET', None)
            else:
                os.environ['NOTIFY_SOCKET'] = saved
        self.notify.wait('READY', value='1')
        cfg['forwardingOptions']['maxViaMembers'] = 12
        self.write_cfg(fwd, cfg)
        r = self.hup(fwd)
        self.assertIn('generation 2', r.get('STATUS', ''))
        self.discover(fwd)
        self.assertIn('configuration generation 2 applied (reload of', fwd.log())

    def test_journal_lines_carry_priority(self):
        bad = os.path.join(self.h.tmpdir, 'bad.json')
        with open(bad, 'w') as f:
            f.write('{"generalOptions": {}}')
        logpath = os.path.join(self.h.tmpdir, 'journal.log')
        with open(logpath, 'wb') as log:
            st = os.fstat(log.fileno())
            env = dict(os.environ, JOURNAL_STREAM='%d:%d' % (st.st_dev, st.st_ino))
            rc = subprocess.call([H.binary('nrfwd'), '--config', bad], env=env,
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 timeout=30)
        self.assertEqual(rc, 1)
        with open(logpath) as f:
            lines = [ln for ln in f.read().splitlines() if ln.startswith('<')]
        self.assertTrue(lines)
        self.assertRegex(lines[0], r'^<3>ERROR nrfwd: configuration .* rejected')
        for ln in lines:
            self.assertRegex(ln, r'^<[3467]>(ERROR|WARN|INFO|DEBUG) ')
        # Not the journal (another file): the usual timestamped lines.
        other = os.path.join(self.h.tmpdir, 'plain.log')
        with open(other, 'wb') as log:
            env = dict(os.environ, JOURNAL_STREAM='%d:%d' % (st.st_dev, st.st_ino))
            subprocess.call([H.binary('nrfwd'), '--config', bad], env=env,
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log, timeout=30)
        with open(other) as f:
            self.assertRegex(f.read(), r'^\d{4}-\d\d-\d\dT\S+Z ERROR nrfwd: ')


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
