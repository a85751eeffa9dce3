#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Debian package, built, installed, run, reloaded, stopped and purged.

Usage: python3 tests/package/test_package.py [--build-dir BUILD] [--deb FILE]
       [--keep] [unittest args]

1. Build: `git clone` of the repository's HEAD (committed files only, as CI
   sees them) into a temp dir, `dpkg-buildpackage -us -uc -b` with
   DEB_BUILD_OPTIONS="nolto parallel=2" (about 2.5 minutes on 2 cores).
   --deb FILE skips this and tests a package built before.
2. lintian: no error or warning tag; info tags are listed, and each one
   must be in EXPLAINED below with the reason it stays.
3. A throwaway root: a mount namespace (unshare) holding an overlay of /
   whose writable layer is a tmpfs. dpkg -i, the daemon, dpkg --purge all
   run in it (nsenter + chroot); the machine's own root, dpkg database,
   users and systemd are never touched, and when the namespace's holder
   process is killed (by pid, also on failure) every trace goes with it.
   /run of the throwaway root is the empty directory of the root file
   system: the maintainer scripts see no running systemd and start
   nothing.
4. Installed: the nrfwd user exists, /etc/nrfwd and its file belong to it,
   the units are in /lib/systemd/system and pass `systemd-analyze verify`.
5. Run as the unit would: ExecStartPre and ExecStart taken from the
   installed nrfwd.service, $NRFWD_OPTS from /etc/default/nrfwd, as User=
   nrfwd, with NOTIFY_SOCKET naming a socket this test owns; ExecStartPre
   refuses the access log in /var/log/nrfwd until that directory exists
   (LogsDirectory=, made here as systemd would), then nrfwd writes it (Type=notify
   without systemd: systemd-notify --ready semantics). READY=1 with MAINPID;
   a discovery through it is answered by an nrfstub from the build tree;
   ExecReload (SIGHUP) of a changed file: RELOADING=1, READY=1 with
   generation 2; a REST PATCH is persisted by the nrfwd user into
   /etc/nrfwd (ownership right); SIGTERM: STOPPING=1, exit 0.
6. dpkg --purge: nothing of nrfwd left in the throwaway root's writable
   layer (files, the user, the group, statoverrides) beyond dpkg's own
   database and logs.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'integration'))
import nrfwd_harness as H  # noqa: E402
from test_service import Notify  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
DEB = None
KEEP = False
AMF = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'

# lintian info tags that stay, and why.
EXPLAINED = {
    'package-supports-alternative-init-but-no-init.d-script':
        'systemd units only: nrfwd is run by systemd or directly (containers); no sysvinit script',
    'spelling-error-in-binary':
        '"DIRECTORYs" in nrfwd-ctl --help: the plural of the placeholder DIRECTORY, not a word',
}
# paths dpkg and the user tools keep for themselves after a purge
ALLOWED_LEFT = re.compile(r'^(var/lib/dpkg(/|$)|var/log(/|$)|var/cache(/|$)|var/lib/man-db(/|$)|'
                          r'etc/(passwd|group|shadow|gshadow|subuid|subgid)-?$|etc/\.pwd\.lock$|etc/ld\.so\.cache$|'
                          r'etc/systemd(/system)?$|etc$|var$|var/lib$|tmp(/|$)|root(/|$)|usr$|'
                          r'usr/share$|usr/share/man(/.*)?$|usr/lib$|lib$|lib/systemd(/system)?$|'
                          r'etc/default$|usr/lib/sysusers\.d$|usr/share/doc$|usr/bin$|usr/sbin$|run(/|$))')


def run(cmd, **kw):
    kw.setdefault('stdout', subprocess.PIPE)
    kw.setdefault('stderr', subprocess.STDOUT)
    kw.setdefault('text', True)
    return subprocess.run(cmd, **kw)


class Throwaway:
    """A mount namespace with an overlay of / on a tmpfs, kept alive by one
    holder process; in(), write(), read() act inside it."""

    def __init__(self, tmp, share):
        self.base = tempfile.mkdtemp(prefix='ns-', dir=tmp)
        self.root = os.path.join(self.base, 'root')
        script = '''set -e
mount -t tmpfs -o size=1g,mode=0755 nrfwd-pkg-test "$0"
mkdir "$0/upper" "$0/work" "$0/root"
mount -t overlay overlay -o lowerdir=/,upperdir="$0/upper",workdir="$0/work" "$0/root"
for m in proc sys dev; do mount --rbind /$m "$0/root/$m"; done
mkdir -p "$0/root$1"
mount --bind "$1" "$0/root$1"
echo ready
exec sleep 3600
'''
        self.holder = subprocess.Popen(
            ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script,
             self.base, share], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        line = self.holder.stdout.readline()
        if line.strip() != 'ready':
            rest = self.holder.stdout.read() if self.holder.poll() is not None else ''
            self.close()
            raise RuntimeError('throwaway root not set up: %s%s' % (line, rest))

    def path(self, p):
        """@p (absolute, in the throwaway root) as seen from here."""
        return '/proc/%d/root%s%s' % (self.holder.pid, self.root, p)

    def upper(self):
        return '/proc/%d/root%s/upper' % (self.holder.pid, self.base)

    def cmd(self, argv, user=None):
        c = ['nsenter', '-t', str(self.holder.pid), '-m', '--', 'chroot']
        if user:
            c.append('--userspec=%s:%s' % (user, user))
        return c + [self.root] + list(argv)

    def run(self, argv, user=None, check=True, **kw):
        r = run(self.cmd(argv, user), **kw)
        if check and r.returncode != 0:
            raise AssertionError('%s: exit %d\n%s' % (' '.join(argv), r.returncode, r.stdout))
        return r

    def close(self):
        if self.holder.poll() is None:
            os.killpg(self.holder.pid, signal.SIGKILL)
            self.holder.wait(10)


def build_deb(tmp):
    src = os.path.join(tmp, 'src', 'nrfwd')
    r = run(['git', 'clone', '-q', ROOT, src])
    if r.returncode != 0:
        raise RuntimeError('git clone: ' + r.stdout)
    env = dict(os.environ, DEB_BUILD_OPTIONS='nolto parallel=2')
    t0 = time.monotonic()
    r = run(['nice', 'dpkg-buildpackage', '-us', '-uc', '-b'], cwd=src, env=env)
    sys.stderr.write('package build: %.0f s, exit %d\n' % (time.monotonic() - t0, r.returncode))
    if r.returncode != 0:
        raise RuntimeError('dpkg-buildpackage failed:\n' + r.stdout[-6000:])
    debs = [f for f in os.listdir(os.path.dirname(src))
            if f.startswith('nrfwd_') and f.endswith('.deb')]
    return os.path.join(os.path.dirname(src), debs[0])


def unit_line(text, key):
    mt = re.search(r'^%s=(.*)$' % re.escape(key), text, re.M)
    return mt.group(1) if mt else None


class TestPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='nrfwd-pkg-')
        cls.deb = DEB or build_deb(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        if not KEEP:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-pkg-run-')
        self.share = tempfile.mkdtemp(prefix='nrfwd-pkg-share-')
        os.chmod(self.share, 0o755)
        shutil.copy(self.deb, self.share)
        self.notify_dir = os.path.join(self.share, 'notify')
        os.mkdir(self.notify_dir)
        os.chmod(self.notify_dir, 0o777)
        self.notify = Notify(os.path.join(self.notify_dir, 'notify.sock'))
        os.chmod(self.notify.path, 0o777)
        self.ns = None
        self.daemon = None

    def tearDown(self):
        failed = not getattr(self._outcome, 'success', True)
        if self.daemon is not None and self.daemon.poll() is None:
            os.killpg(self.daemon.pid, signal.SIGKILL)
            self.daemon.wait(10)
        if failed and getattr(self, 'daemon_log', None) and os.path.exists(self.daemon_log):
            with open(self.daemon_log) as f:
                sys.stderr.write('---- nrfwd (package) log ----\n' + f.read())
        if self.ns is not None:
            self.ns.close()
        self.notify.close()
        self.h.cleanup(dump=failed)
        if not failed:
            shutil.rmtree(self.h.tmpdir, ignore_errors=True)
        shutil.rmtree(self.share, ignore_errors=True)

    def test_lintian_clean_or_explained(self):
        r = run(['lintian', '--no-cfg', '-I', '--pedantic', '--profile', 'debian', self.deb])
        tags = [ln for ln in r.stdout.splitlines() if re.match(r'^[EWIPX]: ', ln)]
        bad = [t for t in tags if t[0] in 'EW']
        self.assertEqual(bad, [], r.stdout)
        for t in tags:
            name = t.split()[2]
            self.assertIn(name, EXPLAINED, 'lintian tag without an explanation: ' + t)
        sys.stderr.write('lintian: %d tag(s), all info and explained\n' % len(tags))

    def test_install_run_reload_stop_purge(self):
        ns = self.ns = Throwaway(self.tmp, self.share)
        debname = os.path.join(self.share, os.path.basename(self.deb))
        r = ns.run(['dpkg', '-i', debname])
        self.assertNotIn('warning', r.stdout.lower().replace('warning: not stopping', ''),
                         r.stdout)

        # Installed as it should be.
        pw = ns.run(['getent', 'passwd', 'nrfwd']).stdout
        self.assertRegex(pw, r'^nrfwd:x:\d+:\d+:')
        for p, mode in (('/etc/nrfwd', 0o750), ('/etc/nrfwd/nrfwd.json', 0o640)):
            st = os.stat(ns.path(p))
            self.assertEqual(st.st_mode & 0o777, mode, p)
            self.assertEqual(ns.run(['stat', '-c', '%U:%G', p]).stdout.strip(), 'nrfwd:nrfwd')
        for u in ('nrfwd.service', 'nrfwd@.service'):
            self.assertTrue(os.path.exists(ns.path('/lib/systemd/system/' + u)), u)
        r = ns.run(['sh', '-c', 'command -v systemd-analyze >/dev/null || exit 0; '
                    'exec systemd-analyze verify "$@"', 'verify', '/lib/systemd/system/nrfwd.service',
                    '/lib/systemd/system/nrfwd@demo.service'], check=False)
        # verify prints problems of the units named (and of other units it
        # loads on the way, which are not ours): none of ours
        ours = [ln for ln in r.stdout.splitlines() if 'nrfwd' in ln]
        self.assertEqual(ours, [], r.stdout)
        # the man pages format without a groff warning (man itself would
        # leave cat pages in /var/cache/man)
        for page in ('nrfwd.8', 'nrfwd-ctl.8', 'nrfwd.json.5'):
            r = ns.run(['sh', '-c', 'gzip -dc "$1" | groff -man -Tutf8 -ww -z', 'groff',
                        '/usr/share/man/man%s/%s.gz' % (page[-1], page)])
            self.assertEqual(r.stdout, '', page)
            r = ns.run(['sh', '-c', 'gzip -dc "$1"', 'cat',
                        '/usr/share/man/man%s/%s.gz' % (page[-1], page)])
            text = '\n'.join(ln for ln in r.stdout.splitlines() if not ln.startswith('.\\"'))
            for leak in ('<!--', '-->', 'tests/'):
                self.assertNotIn(leak, text, page)

        # The documentation is installed as in the tree (README.md beside
        # docs/), uncompressed, and every relative link in it resolves there.
        docdir = ns.path('/usr/share/doc/nrfwd')
        docs = os.path.join(ROOT, 'docs')
        for md in sorted(os.listdir(docs)):
            if md.endswith('.md'):
                self.assertTrue(os.path.exists(os.path.join(docdir, 'docs', md)), md)
        link = re.compile(r'\]\(([^)#:\s]+)(#[^)]*)?\)')
        checked = 0
        for dirpath, _, files in os.walk(docdir):
            for name in files:
                if not name.endswith('.md'):
                    continue
                with open(os.path.join(dirpath, name)) as f:
                    text = f.read()
                for m in link.finditer(text):
                    target = os.path.normpath(os.path.join(dirpath, m.group(1)))
                    if target.startswith(docdir):
                        checked += 1
                        self.assertTrue(os.path.exists(target), '%s: %s' % (name, m.group(1)))
        self.assertGreater(checked, 50)

        # Configure: our ports, an nrfstub (build tree) as the local NRF.
        local = self.h.start_stub('local', 'stub-profiles-a.json')
        with open(ns.path('/etc/nrfwd/nrfwd.json')) as f:
            cfg = json.load(f)
        port, mport = H.free_port(), H.free_port()
        cfg['generalOptions']['ocnrfPort'] = port
        cfg['runtime']['listen'][0]['port'] = port
        cfg['runtime']['localNrf']['port'] = local.port
        cfg['runtime']['management']['port'] = mport
        # the access log where docs/access-log.md puts it: the unit's
        # LogsDirectory=, which systemd creates owned by User= (here by
        # hand, as systemd would); check refuses it until it exists
        cfg['runtime']['accessLog'] = {'path': '/var/log/nrfwd/access.log', 'flushMs': 10}
        self.write_cfg(cfg)
        self.assertTrue(os.path.exists(ns.path('/etc/logrotate.d/nrfwd')))
        r = ns.run(['sh', '-c', 'command -v logrotate >/dev/null || exit 0; '
                    'exec logrotate -d -s /tmp/lr.state /etc/logrotate.d/nrfwd'], check=False)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertNotIn('error', r.stdout.lower())

        with open(ns.path('/lib/systemd/system/nrfwd.service')) as f:
            unit = f.read()
        self.assertEqual(unit_line(unit, 'Type'), 'notify')
        user = unit_line(unit, 'User')
        with open(ns.path('/etc/default/nrfwd')) as f:
            default = f.read()
        opts = re.search(r'^NRFWD_OPTS="(.*)"$', default, re.M).group(1).split()
        pre = unit_line(unit, 'ExecStartPre').split()
        pre = [w for w in pre if w != '$NRFWD_OPTS'] + opts
        self.assertEqual(unit_line(unit, 'LogsDirectory'), 'nrfwd')
        r = ns.run(pre, user=user, check=False)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn('/runtime/accessLog/path: directory /var/log/nrfwd', r.stdout)
        ns.run(['install', '-d', '-o', user, '-g', user, '-m', '0755', '/var/log/nrfwd'])
        self.assertIn('OK', ns.run(pre, user=user).stdout)
        start = unit_line(unit, 'ExecStart').split()
        start = [w for w in start if w != '$NRFWD_OPTS'] + opts
        self.assertEqual(pre[2:], start[1:], 'check and nrfwd get the same options')
        self.daemon_log = os.path.join(self.share, 'nrfwd.log')
        env = ['env', '-i', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin',
               'NOTIFY_SOCKET=' + self.notify.path, 'WATCHDOG_USEC=2000000']
        with open(self.daemon_log, 'wb') as log:
            self.daemon = subprocess.Popen(ns.cmd(env + start, user=user), stdout=log,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)
        ready = self.notify.wait('READY', value='1', timeout=20)
        mainpid = int(ready['MAINPID'])
        self.assertEqual(ns.run(['stat', '-c', '%U', '/proc/%d' % mainpid]).stdout.strip(),
                         user)
        self.notify.wait('WATCHDOG', value='1', timeout=5)
        st, hdrs, _ = H.curl('http://127.0.0.1:%d%s' % (port, AMF))
        self.assertEqual(st, 200)
        deadline = time.monotonic() + 5
        alog = ns.path('/var/log/nrfwd/access.log')
        while time.monotonic() < deadline and not (os.path.exists(alog) and os.path.getsize(alog)):
            time.sleep(0.05)
        with open(alog) as f:
            self.assertIn('nnrf-disc', f.read())
        self.assertEqual(ns.run(['stat', '-c', '%U', '/var/log/nrfwd/access.log']).stdout.strip(),
                         user)

        # ExecReload with a changed file.
        cfg['forwardingOptions']['maxForwardAttempts'] = 3
        self.write_cfg(cfg)
        reload_cmd = unit_line(unit, 'ExecReload').replace('$MAINPID', str(mainpid)).split()
        self.notify.drain()
        ns.run(reload_cmd)
        self.notify.wait('RELOADING', value='1')
        r = self.notify.wait('READY', value='1')
        self.assertIn('generation 2', r.get('STATUS', ''))
        st, hdrs, _ = H.curl('http://127.0.0.1:%d%s' % (port, AMF))
        self.assertEqual(st, 200)

        # The REST API persists into /etc/nrfwd as the nrfwd user.
        st, _, body = H.api('127.0.0.1:%d' % mport, 'PATCH',
                            '/nrf-configuration/v1/forwardingOptions', {'maxViaMembers': 12})
        self.assertEqual(st, 200, body)
        with open(ns.path('/etc/nrfwd/nrfwd.json')) as f:
            self.assertEqual(json.load(f)['forwardingOptions']['maxViaMembers'], 12)

        # Stop.
        self.notify.drain()
        os.kill(mainpid, signal.SIGTERM)
        self.notify.wait('STOPPING', value='1')
        self.daemon.wait(20)
        self.assertEqual(self.daemon.returncode, 0)

        # Purge: nothing left.
        ns.run(['dpkg', '--purge', 'nrfwd'])
        self.assertNotEqual(ns.run(['getent', 'passwd', 'nrfwd'], check=False).returncode, 0)
        self.assertNotEqual(ns.run(['getent', 'group', 'nrfwd'], check=False).returncode, 0)
        self.assertNotIn('nrfwd', ns.run(['dpkg-statoverride', '--list']).stdout)
        left = []
        upper = self.ns.upper()
        for d, dirs, files in os.walk(upper):
            for n in dirs + files:
                rel = os.path.relpath(os.path.join(d, n), upper)
                if ALLOWED_LEFT.match(rel) and 'nrfwd' not in n:
                    continue
                # man-db's cache of formatted pages (its trigger makes them;
                # its daily job removes those of pages that are gone)
                if rel.startswith('var/cache/man/'):
                    continue
                # a directory the machine has too: copied up, not added
                if os.path.isdir(os.path.join(d, n)) and os.path.isdir('/' + rel) and \
                        'nrfwd' not in n:
                    continue
                if rel.startswith(self.share.lstrip('/')):
                    continue
                left.append(rel)
        self.assertEqual(left, [], 'left behind after purge')
        with open(ns.path('/etc/passwd')) as f, open('/etc/passwd') as g:
            self.assertEqual(f.read(), g.read())

    def write_cfg(self, cfg):
        tmp = self.ns.path('/etc/nrfwd/nrfwd.json')
        with open(tmp, 'w') as f:
            json.dump(cfg, f, indent=2)


def main():
    global DEB, KEEP
    argv = sys.argv
    if '--deb' in argv:
        k = argv.index('--deb')
        DEB = os.path.abspath(argv[k + 1])
        del argv[k:k + 2]
    if '--keep' in argv:
        KEEP = True
        argv.remove('--keep')
    if os.geteuid() != 0:
        print('test_package: needs root (mount namespace, dpkg in a throwaway root)')
        sys.exit(77)
    H.parse_args(argv)
    unittest.main(argv=argv)


if __name__ == '__main__':
    main()
