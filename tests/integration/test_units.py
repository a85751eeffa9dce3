#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The systemd units' own command lines, run as systemd would run them
(without systemd): ExecStartPre (nrfwd-ctl check) and ExecStart (nrfwd)
taken from dist/systemd/*.service, the unit's variables expanded the way
systemd expands "$VAR" (split on white space) and "%i", the installed
paths replaced by the build tree's binaries and a temp dir for /etc/nrfwd.

Usage: python3 tests/integration/test_units.py [--build-dir BUILD] [unittest args]

- A fleet instance (runtime-only file, --config-etcd and its options in
  NRFWD_OPTS) under nrfwd.service and nrfwd@.service: ExecStartPre exits 0
  and ExecStart serves a discovery with the shared groups from etcd (a
  one-member etcd cluster on loopback); check writes no cached copy.
- The same runtime-only file without --config-etcd: check refuses it as
  nrfwd does (exit 1, the missing field's pointer), and so does nrfwd.
- A shared group in the fleet file: check and nrfwd refuse it with the
  same pointer.
- What start would fail on, found by check with exit 1 and a pointer: the
  management port equal to a listen port (from the file and from
  --management), two listeners on one port (a wildcard included), an
  access log whose directory is missing or not writable, a certificate
  file that cannot be read, an unreadable --api-token-file; nrfwd itself
  fails to start on the clash, and its start failure keeps the errno text.
- Logs: both units have LogsDirectory=nrfwd, the path docs/access-log.md
  uses is in it and matched by the shipped logrotate stanza
  (dist/logrotate/nrfwd), whose postrotate sends SIGUSR1 to the main
  process of both units. With logrotate installed: `logrotate -d` of the
  stanza is clean, and the stanza (paths moved to a temp dir, its
  postrotate signalling the test's nrfwd) rotates a running nrfwd's access
  log: old lines in the rotated file, new ones in the new file.
- conf/examples/: every example configuration passes `nrfwd-ctl check`
  (TLS with client certificates: its files made at test time and its paths
  moved to them; the fleet's runtime-only file with its shared document in
  etcd, through the unit's own ExecStartPre line).
- `nrfwd-ctl check --help` prints the usage (exit 0), and every option of
  `nrfwd --help` is accepted by check.
"""

import json
import os
import re
import fnmatch
import shlex
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402
import etcd_cluster as E  # noqa: E402

UNITS = os.path.join(H.ROOT, 'dist', 'systemd')
LOGROTATE = os.path.join(H.ROOT, 'dist', 'logrotate', 'nrfwd')
EXAMPLES = os.path.join(H.ROOT, 'conf', 'examples')
AMF = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'


def unit_values(path):
    """{key: [values]} of the [Service] section (continuation lines joined)."""
    out = {}
    with open(path) as f:
        text = f.read().replace('\\\n', ' ')
    for line in text.splitlines():
        mt = re.match(r'^([A-Za-z]+)=(.*)$', line)
        if mt:
            out.setdefault(mt.group(1), []).append(mt.group(2))
    return out


def unit_env(values):
    """The unit's Environment= assignments (later ones win, as in systemd)."""
    env = {}
    for v in values.get('Environment', []):
        for word in shlex.split(v):
            k, _, val = word.partition('=')
            env[k] = val
    return env


def expand(line, env, etc, instance=None):
    """One Exec line as argv: "$VAR" alone is split into words (empty: no
    word), "${VAR}" is one word, %i is the instance; /usr/(s)bin and
    /etc/nrfwd are the build tree's binaries and @etc."""
    if instance is not None:
        line = line.replace('%i', instance)
    argv = []
    for word in shlex.split(line):
        mt = re.match(r'^\$([A-Za-z_][A-Za-z0-9_]*)$', word)
        if mt:
            argv += env.get(mt.group(1), '').split()
            continue
        word = re.sub(r'\$\{([A-Za-z_][A-Za-z0-9_]*)\}', lambda m: env.get(m.group(1), ''),
                      word)
        argv.append(word)
    for prog in ('nrfwd', 'nrfwd-ctl'):
        for d in ('/usr/bin/', '/usr/sbin/'):
            if argv[0] == d + prog:
                argv[0] = H.binary(prog)
    return [a.replace('/etc/nrfwd/', etc + '/') for a in argv]


def run(argv, timeout=30):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


class UnitCase(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-units-')
        self.etc = os.path.join(self.h.tmpdir, 'etc-nrfwd')
        os.mkdir(self.etc)

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        self.h.cleanup(dump=failed)
        if not failed:
            shutil.rmtree(self.h.tmpdir, ignore_errors=True)

    def write(self, name, doc):
        path = os.path.join(self.etc, name)
        with open(path, 'w') as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
        return path

    def ctl(self, *args):
        return run([H.binary('nrfwd-ctl')] + list(args))


class TestFleetUnderUnits(UnitCase):
    def setUp(self):
        super().setUp()
        self.cluster = None

    def tearDown(self):
        try:
            super().tearDown()
        finally:
            if self.cluster is not None:
                self.cluster.cleanup()

    def test_fleet_instance_starts_under_both_units(self):
        c = self.cluster = E.EtcdCluster(self.h, members=1)
        c.start()
        key = '/nrfwd/units-%d/config' % os.getpid()
        local = self.h.start_stub('local', 'stub-profiles-a.json')
        port, mport = H.free_port(), H.free_port()
        doc = H.nrfwd_config('nrf-a.units.test', port=port, local=local.port)
        doc['runtime']['management'] = {'address': '127.0.0.1', 'port': mport}
        E.put(c.url(0), key, json.dumps({k: v for k, v in doc.items() if k != 'runtime'}))
        fleet_opts = '--workers 1 --config-etcd %s --config-key %s --instance-id u1' % (
            c.endpoints, key)

        for unit, name, extra_env in (('nrfwd.service', 'nrfwd', {}),
                                      ('nrfwd@.service', 'edge1', {})):
            with self.subTest(unit=unit):
                vals = unit_values(os.path.join(UNITS, unit))
                env = unit_env(vals)
                env.update(extra_env)
                env['NRFWD_OPTS'] = fleet_opts
                inst = name if '@' in unit else None
                cfg = self.write('%s.json' % name, {'runtime': doc['runtime']})
                cache = cfg + '.etcd-cache'
                if os.path.exists(cache):
                    os.unlink(cache)
                pre = expand(vals['ExecStartPre'][0], env, self.etc, inst)
                start = expand(vals['ExecStart'][0], env, self.etc, inst)
                self.assertEqual(pre[0], H.binary('nrfwd-ctl'))
                self.assertEqual(start[0], H.binary('nrfwd'))
                # the same options after the program (check's own word aside)
                self.assertEqual(pre[2:], start[1:], 'the units pass the same options')

                r = run(pre)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn('OK: self nrf-a.units.test', r.stdout)
                self.assertFalse(os.path.exists(cache), 'check writes no cached copy')

                # the same file without the fleet options: refused by both
                env0 = dict(env, NRFWD_OPTS='--workers 1')
                r = run(expand(vals['ExecStartPre'][0], env0, self.etc, inst))
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                self.assertIn('/generalOptions/ocnrfHost', r.stderr)
                r = run(expand(vals['ExecStart'][0], env0, self.etc, inst))
                self.assertNotEqual(r.returncode, 0)
                self.assertIn('/generalOptions/ocnrfHost', r.stdout + r.stderr)

                # a shared group in the fleet's file: the same pointer from both
                bad = self.write('%s.json' % name, {'runtime': doc['runtime'],
                                                    'forwardingOptions': doc['forwardingOptions']})
                r = run(pre)
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                self.assertIn('/forwardingOptions', r.stderr)
                r = run(start)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn('/forwardingOptions', r.stdout + r.stderr)
                self.assertEqual(bad, cfg)

                # ExecStart serves, with the shared groups from etcd
                self.write('%s.json' % name, {'runtime': doc['runtime']})
                proc = self.h._spawn(name, start, port)
                self.assertTrue(H._wait_for_line(proc, r'nrfwd listening on', 15), proc.log())
                st, _, _ = H.curl('http://127.0.0.1:%d%s' % (port, AMF))
                self.assertEqual(st, 200)
                self.assertIn('read from etcd', proc.log())
                proc.stop()
                self.assertTrue(os.path.exists(cache), 'nrfwd writes its cached copy')


    def test_fleet_example_passes_check_under_the_unit(self):
        c = self.cluster = E.EtcdCluster(self.h, members=1)
        c.start()
        key = '/nrfwd/examples-%d/config' % os.getpid()
        with open(os.path.join(EXAMPLES, 'fleet-shared.json')) as f:
            E.put(c.url(0), key, f.read())
        with open(os.path.join(EXAMPLES, 'fleet-runtime.json')) as f:
            text = f.read().replace('/var/log/nrfwd', self.h.tmpdir)
        self.write('nrfwd.json', text)
        vals = unit_values(os.path.join(UNITS, 'nrfwd.service'))
        env = dict(unit_env(vals), NRFWD_OPTS='--config-etcd %s --config-key %s' % (
            c.endpoints, key))
        r = run(expand(vals['ExecStartPre'][0], env, self.etc))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn('OK: self nrf-a.seg1.example.com:8080', r.stdout)


class TestExamples(UnitCase):
    def test_examples_pass_check(self):
        names = sorted(os.listdir(EXAMPLES))
        self.assertEqual(names, ['dpdk.json', 'fleet-runtime.json', 'fleet-shared.json',
                                 'ipv6.json', 'tls-client-certificates.json'])
        for name in ('dpdk.json', 'ipv6.json'):
            r = self.ctl('check', '--config', os.path.join(EXAMPLES, name))
            self.assertEqual(r.returncode, 0, name + ': ' + r.stderr)
        # TLS: as shipped, check names the files it cannot read
        tls = os.path.join(EXAMPLES, 'tls-client-certificates.json')
        with open(tls) as f:
            text = f.read()
        if not os.path.exists('/etc/nrfwd/tls/server.pem'):
            r = self.ctl('check', '--config', tls)
            self.assertEqual(r.returncode, 1)
            self.assertIn('/runtime/tls/certFile', r.stderr)
        t = E.make_tls(self.etc)
        for old, new in (('/etc/nrfwd/tls/server.pem', t['cert']),
                         ('/etc/nrfwd/tls/server.key', t['key']),
                         ('/etc/nrfwd/tls/nf-ca.pem', t['ca']),
                         ('/etc/nrfwd/tls/nrf-ca.pem', t['ca']),
                         ('/etc/nrfwd/tls/client.pem', t['client_cert']),
                         ('/etc/nrfwd/tls/client.key', t['client_key']),
                         ('/var/log/nrfwd', self.h.tmpdir)):
            text = text.replace(old, new)
        self.assertNotIn('/etc/nrfwd/tls', text)
        r = self.ctl('check', '--config', self.write('tls.json', text))
        self.assertEqual(r.returncode, 0, r.stderr)


class TestCheckFindsStartFailures(UnitCase):
    def base(self):
        self.port, self.mport = H.free_port(), H.free_port()
        doc = H.nrfwd_config('nrf-a.units.test', port=self.port, local=H.free_port())
        doc['runtime']['management'] = {'address': '127.0.0.1', 'port': self.mport}
        return doc

    def check_fails(self, path, rx, *opts):
        r = self.ctl('check', '--config', path, *opts)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stderr, rx)
        self.assertNotIn('(invalid configuration)', r.stderr)
        return r

    def test_port_clashes(self):
        doc = self.base()
        ok = self.write('ok.json', doc)
        r = self.ctl('check', '--config', ok)
        self.assertEqual(r.returncode, 0, r.stderr)
        # management port = listen port, from the file
        doc['runtime']['management']['port'] = self.port
        clash = self.write('clash.json', doc)
        self.check_fails(clash, r'/runtime/management: 127\.0\.0\.1 port %d clashes with '
                         r'/runtime/listen/0' % self.port)
        # nrfwd itself cannot start on it (the check is not stricter than nrfwd)
        r = run([H.binary('nrfwd'), '--config', clash], timeout=20)
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        # --management given: it replaces the file's (which then does not count)
        r = self.ctl('check', '--config', clash, '--management', '127.0.0.1:0')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_fails(ok, r'--management: 127\.0\.0\.1 port %d clashes' % self.port,
                         '--management', '127.0.0.1:%d' % self.port)
        # the short form (no --config) checks the ports too
        r = self.ctl('check', clash)
        self.assertEqual(r.returncode, 1, r.stderr)
        # two listeners: a wildcard and a loopback address on one port
        doc = self.base()
        doc['runtime']['listen'].append({'address': '0.0.0.0', 'port': self.port,
                                         'tls': False})
        self.check_fails(self.write('two.json', doc),
                         r'/runtime/listen/1: 0\.0\.0\.0 port %d clashes with '
                         r'/runtime/listen/0' % self.port)
        # "::" of a listener takes IPv4 too; other ports do not clash
        doc = self.base()
        doc['runtime']['listen'].append({'address': '::', 'port': self.port, 'tls': False})
        self.check_fails(self.write('v6.json', doc), r'/runtime/listen/1: :: port')
        doc['runtime']['listen'][1]['port'] = H.free_port()
        r = self.ctl('check', '--config', self.write('v6ok.json', doc))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_access_log_directory(self):
        doc = self.base()
        logs = os.path.join(self.h.tmpdir, 'logs')
        doc['runtime']['accessLog'] = {'path': os.path.join(logs, 'access.log')}
        path = self.write('alog.json', doc)
        self.check_fails(path, r'/runtime/accessLog/path: directory %s of .*: '
                         r'No such file or directory' % re.escape(logs))
        # nrfwd's own failure keeps the errno text
        r = run([H.binary('nrfwd'), '--config', path, '--management', '127.0.0.1:0'],
                timeout=20)
        self.assertNotEqual(r.returncode, 0)
        out = r.stdout + r.stderr
        self.assertIn('No such file or directory', out)
        self.assertNotIn('input/output error', out)
        os.mkdir(logs)
        r = self.ctl('check', '--config', path)
        self.assertEqual(r.returncode, 0, r.stderr)
        if os.geteuid() != 0:  # root writes anywhere: mode bits do not stop it
            os.chmod(logs, 0o555)
            self.check_fails(path, r'/runtime/accessLog/path: .* cannot be created in')
        doc['runtime']['accessLog']['path'] = logs
        self.check_fails(self.write('alogdir.json', doc), r'is a directory')

    def test_unreadable_files(self):
        doc = self.base()
        doc['runtime']['listen'][0]['tls'] = True
        doc['runtime']['tls'] = {'certFile': os.path.join(self.h.tmpdir, 'none.pem'),
                                 'keyFile': os.path.join(self.h.tmpdir, 'none.key')}
        self.check_fails(self.write('tls.json', doc), r'/runtime/tls/certFile')
        ok = self.write('ok.json', self.base())
        self.check_fails(ok, r'--api-token-file: .*/none: No such file or directory',
                         '--api-token-file', os.path.join(self.h.tmpdir, 'none'))

    def test_help_and_options(self):
        r = self.ctl('check', '--help')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('usage: nrfwd-ctl check', r.stdout)
        # every option of nrfwd is accepted by check (with a value when
        # nrfwd's help names one)
        r = run([H.binary('nrfwd'), '--help'])
        own = r.stdout.split('\nTransport')[0]
        ok = self.write('ok.json', self.base())
        values = {'workers': '2', 'log-level': 'debug', 'management': '127.0.0.1:0',
                  'config': ok, 'etcd-lease-ttl': '5'}
        seen = 0
        for mt in re.finditer(r'^\s+(?:-[a-zA-Z], )?--([a-z][a-z0-9-]*)(?: ([A-Z][A-Z:_]*|F))?',
                              own, re.M):
            opt, arg = mt.group(1), mt.group(2)
            if opt in ('help', 'version', 'config') or opt.startswith('etcd-') and \
                    opt != 'etcd-lease-ttl' or opt.startswith('config-') or \
                    opt in ('instance-id', 'api-token-file'):
                continue
            argv = ['check', '--config', ok, '--' + opt]
            if arg:
                argv.append(values.get(opt, 'x'))
            r = self.ctl(*argv)
            self.assertEqual(r.returncode, 0, '%s: %s' % (opt, r.stderr))
            seen += 1
        self.assertGreaterEqual(seen, 5)
        r = self.ctl('check', '--config', ok, '--workers', '0')
        self.assertEqual(r.returncode, 2)
        r = self.ctl('check', '--config', ok, '--no-such-option')
        self.assertEqual(r.returncode, 2)


class TestLogs(UnitCase):
    def test_units_and_stanza_cover_the_documented_path(self):
        with open(os.path.join(H.ROOT, 'docs', 'access-log.md')) as f:
            doc_path = re.search(r'"path": "(/var/log/[^"]+)"', f.read()).group(1)
        for unit in ('nrfwd.service', 'nrfwd@.service'):
            vals = unit_values(os.path.join(UNITS, unit))
            self.assertEqual(vals.get('LogsDirectory'), ['nrfwd'], unit)
            self.assertTrue(doc_path.startswith('/var/log/nrfwd/'), doc_path)
        with open(LOGROTATE) as f:
            stanza = f.read()
        pattern = re.search(r'^(/\S+) \{', stanza, re.M).group(1)
        self.assertTrue(fnmatch.fnmatch(doc_path, pattern), (doc_path, pattern))
        post = re.search(r'postrotate\n(.*?)endscript', stanza, re.S).group(1)
        for unit in ('nrfwd.service', "'nrfwd@*.service'"):
            self.assertRegex(post, r'systemctl kill --kill-whom=main --signal=SIGUSR1 %s'
                             % re.escape(unit))

    def test_logrotate_rotates_a_running_nrfwd(self):
        lr = shutil.which('logrotate') or ('/usr/sbin/logrotate'
                                           if os.path.exists('/usr/sbin/logrotate') else None)
        if lr is None:
            self.skipTest('logrotate is not installed (Debian package logrotate)')
        # the shipped file as it is: parses, nothing to do (debug mode)
        state = os.path.join(self.h.tmpdir, 'state')
        r = run([lr, '-d', '-s', state, LOGROTATE])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotRegex(r.stdout + r.stderr, r'(?i)error')
        self.assertIn('/var/log/nrfwd/*.log', r.stdout + r.stderr)

        logs = os.path.join(self.h.tmpdir, 'log')
        os.mkdir(logs)
        local = self.h.start_stub('local', 'stub-profiles-a.json')
        cfg = H.nrfwd_config('nrf-a.units.test', local=local.port)
        cfg['runtime']['accessLog'] = {'path': os.path.join(logs, 'access.log'),
                                       'flushMs': 10}
        fwd = self.h.start_nrfwd(cfg, management=True)
        with open(LOGROTATE) as f:
            stanza = f.read().replace('/var/log/nrfwd', logs)
        stanza = re.sub(r'postrotate\n.*?endscript',
                        'postrotate\n\t\tkill -USR1 %d\n\tendscript' % fwd.pid, stanza,
                        flags=re.S)
        conf = self.write('logrotate.conf', stanza)

        def lines(path):
            with open(path) as f:
                return [ln for ln in f.read().splitlines() if ln]

        for _ in range(3):
            self.assertEqual(H.curl(fwd.url(AMF))[0], 200)
        alog = os.path.join(logs, 'access.log')
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(lines(alog)) < 3:
            time.sleep(0.05)
        self.assertEqual(len(lines(alog)), 3)
        r = run([lr, '-f', '-s', state, conf])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(H._wait_for_line(fwd, r'access log reopened', 5), fwd.log())
        for _ in range(2):
            self.assertEqual(H.curl(fwd.url(AMF))[0], 200)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(lines(alog)) < 2:
            time.sleep(0.05)
        self.assertEqual(len(lines(alog)), 2)
        self.assertEqual(len(lines(alog + '.1')), 3)  # delaycompress: the first stays plain
        self.assertTrue(fwd.alive())
        fwd.stop(signal.SIGTERM)


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
