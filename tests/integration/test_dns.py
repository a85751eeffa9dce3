#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of peer names re-resolved off the data path (runtime.dns;
docs/behaviour.md, "Peer names").

Usage: python3 tests/integration/test_dns.py [--build-dir BUILD] [unittest args]

The resolver is one the test controls: nrfwd runs in a private mount
namespace (unshare -m) where a temp file is bind-mounted over /etc/hosts
(glibc reads it at every lookup) and another over /etc/resolv.conf (a
nameserver on 127.0.0.1 where nothing listens: a name missing from the
hosts file fails at once instead of asking the host's DNS). The namespace
lives and dies with the nrfwd process; the files are rewritten in place
(same inode, so the bind mount sees the change).

What is checked: a peer configured by fqdn only starts at the address the
hosts file gives; the hosts file moves the name to a second nrfstub on
another loopback address while h2load runs through nrfwd, and new requests
reach the second stub within the refresh interval with no failed request;
the change is one "peer NAME: A -> B" line, a new configuration generation,
a changed resolution in the metrics and the new address in GET /peers; a
name that stops resolving keeps its last address (requests still answered,
/peers shows the error); `nrfwd-ctl check` warns about a name that does not
resolve and still exits 0. Standard library only; helpers in
nrfwd_harness.py. Needs root (unshare -m, mount --bind).

DnsTtl: a real DNS server (dnsmasq, from Debian's dnsmasq-base) in a
network namespace the test creates (deleted with its /etc/netns entry even
on failure), nrfwd, the stubs and the clients inside it: the DNS TTL (2 s),
not refreshMs (10 min), brings a changed address in.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402

ID_UDM1 = '7c3d9e20-1b2a-4f5e-8d02-0000000e0001'  # only at stub "e" (the peer)
PROFILE = '/nnrf-nfm/v1/nf-instances/'
NAME = 'peer-x.nrfwd-dns.test'
REFRESH_MS = 300


def write_in_place(path, text):
    """Rewrite @path without replacing its inode (a bind mount points at it)."""
    with open(path, 'r+') as f:
        f.seek(0)
        f.write(text)
        f.truncate()


def in_namespace(hosts, resolv, cmd):
    """@cmd run in a private mount namespace with @hosts over /etc/hosts and
    @resolv over /etc/resolv.conf (exec'd: the pid is @cmd's)."""
    script = ('mount --bind "$0" /etc/hosts && mount --bind "$1" /etc/resolv.conf '
              '&& shift && exec "$@"')
    return ['unshare', '-m', '--propagation', 'private', 'sh', '-c', script,
            hosts, resolv] + list(cmd)


def stub_count(addr, port):
    st, _, body = H.curl('http://%s:%d/_stub/requests' % (addr, port))
    assert st == 200, (addr, port, st)
    return len(json.loads(body))


def stub_clear_at(addr, port):
    st, _, _ = H.curl('http://%s:%d/_stub/requests' % (addr, port), method='DELETE')
    assert st in (200, 204), (addr, port, st)


def peers(fwd):
    st, _, doc = H.api(fwd, 'GET', '/peers')
    assert st == 200, (st, doc)
    return {u['name']: u for u in doc['upstreams']}


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError('timed out waiting for ' + what)


@unittest.skipUnless(os.geteuid() == 0 and shutil.which('unshare'),
                     'needs root and unshare (mount namespace)')
class Dns(unittest.TestCase):
    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-dns-')
        self.hosts = os.path.join(self.h.tmpdir, 'hosts')
        self.resolv = os.path.join(self.h.tmpdir, 'resolv.conf')
        with open(self.resolv, 'w') as f:
            f.write('nameserver 127.0.0.1\noptions timeout:1 attempts:1\n')
        self.run_ = None

    def tearDown(self):
        if self.run_ is not None:
            self.run_.stop()
        self.h.cleanup(dump=bool(os.environ.get('NRFWD_TEST_DUMP')))

    def start_stub_at(self, name, addr, port):
        cmd = [H.binary('nrfstub'), '--listen', '%s:%d' % (addr, port),
               '--profiles', H.conf('stub-profiles-e.json'), '--name', name]
        proc = self.h._spawn(name, cmd, port, addr)
        if not H._wait_for_line(proc, r'nrfstub %s listening on' % re.escape(name), 10):
            raise RuntimeError('nrfstub %s did not start:\n%s' % (name, proc.log()))
        return proc

    def start_named(self, dns, second=False):
        """A local NRF, the peer NAME on 127.0.0.2 (and, with @second,
        another at 127.0.0.3 on the same port) with /etc/hosts saying
        127.0.0.2, and nrfwd in the namespace with runtime.dns = @dns.
        Returns (nrfwd, port, the peer's name in /peers)."""
        local = self.h.start_stub('local', 'stub-profiles-a.json')
        port = H.free_port()
        self.start_stub_at('first', '127.0.0.2', port)
        if second:
            self.start_stub_at('second', '127.0.0.3', port)
        with open(self.hosts, 'w') as f:
            f.write('127.0.0.1 localhost\n127.0.0.2 %s\n' % NAME)
        cfg = H.nrfwd_config('nrf-a.test', local=local.port,
                             peers=[H.peer(NAME, port, ipv4=None)])
        cfg['runtime']['dns'] = dns
        return self.start_nrfwd_ns(cfg), port, '%s:%d' % (NAME, port)

    def start_nrfwd_ns(self, cfg):
        path = os.path.join(self.h.tmpdir, 'nrfwd.json')
        with open(path, 'w') as f:
            json.dump(cfg, f, indent=2)
        cmd = in_namespace(self.hosts, self.resolv, H.WRAPPER + [
            H.binary('nrfwd'), '--config', path, '--workers', '2', '--log-level', 'info',
            '--management', '127.0.0.1:0'])
        port = cfg['runtime']['listen'][0]['port']
        proc = self.h._spawn('nrfwd', cmd, port)
        if not H._wait_for_line(proc, r'nrfwd listening on', 60 if H.WRAPPER else 10):
            raise RuntimeError('nrfwd did not start:\n%s' % proc.log())
        rx = r'nrfwd management on ([0-9.]+):(\d+)'
        if not H._wait_for_line(proc, rx, 10):
            raise RuntimeError('no management listener:\n%s' % proc.log())
        mt = re.search(rx, proc.log())
        proc.mgmt_host, proc.mgmt_port = mt.group(1), int(mt.group(2))
        return proc

    def test_01_address_change_is_applied_live(self):
        fwd, port, pname = self.start_named({'refreshMs': REFRESH_MS, 'minTtlMs': 100,
                                             'maxTtlMs': 60000, 'timeoutMs': 1000},
                                            second=True)
        url = fwd.url(PROFILE + ID_UDM1)

        st, _, _ = H.curl(url)
        self.assertEqual(st, 200)
        self.assertEqual(stub_count('127.0.0.2', port), 1)
        self.assertEqual(stub_count('127.0.0.3', port), 0)
        p = peers(fwd)[pname]
        self.assertEqual(p['address'], '127.0.0.2:%d' % port)
        self.assertEqual(p['dns']['name'], NAME)
        self.assertIsNone(p['dns']['lastError'])
        self.assertFalse(p['dns']['ttl'], 'an /etc/hosts answer has no TTL')
        self.assertLessEqual(p['dns']['nextInSeconds'], REFRESH_MS / 1000 + 0.05)
        gen0 = H.metric_value(H.metrics(fwd), 'nrfwd_config_generation')

        # Load across the switch: every request answered 200.
        self.run_ = H.h2load_start(url, seconds=4, c=4, m=4, rps=100)
        time.sleep(1.0)
        write_in_place(self.hosts, '127.0.0.1 localhost\n127.0.0.3 %s\n' % NAME)
        t_switch = time.monotonic()
        before = stub_count('127.0.0.3', port)
        wait_for(lambda: stub_count('127.0.0.3', port) > before, 3.0,
                 'requests at the second stub')
        took = time.monotonic() - t_switch
        sys.stderr.write('\nhosts file rewritten -> first request at the new address: %.3f s '
                         '(refreshMs %d)\n' % (took, REFRESH_MS))
        r = self.run_.wait(timeout=30)
        self.run_ = None
        sys.stderr.write('h2load across the switch: %s requests, %s failed, %s errored, %s 2xx\n'
                         % (r['total'], r['failed'], r['errored'], r['status_2xx']))
        self.assertGreater(r['total'], 100, r)
        self.assertEqual(r['failed'], 0, r)
        self.assertEqual(r['errored'], 0, r)
        self.assertEqual(r['status_2xx'], r['total'], r)
        # within the refresh interval (+ a request's round trip, + the poll)
        self.assertLess(took, REFRESH_MS / 1000 + 1.0)

        stub_clear_at('127.0.0.2', port)
        stub_clear_at('127.0.0.3', port)
        st, _, _ = H.curl(url)
        self.assertEqual(st, 200)
        self.assertEqual(stub_count('127.0.0.2', port), 0, 'new requests go to B')
        self.assertEqual(stub_count('127.0.0.3', port), 1)
        self.assertIn('dns: peer %s: 127.0.0.2 -> 127.0.0.3' % NAME, fwd.log())
        self.assertEqual(len(re.findall(r'dns: peer %s: ' % re.escape(NAME) +
                                        r'127\.0\.0\.2 -> 127\.0\.0\.3', fwd.log())), 1)
        m = H.metrics(fwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_dns_resolutions_total', result='changed'), 1)
        self.assertGreaterEqual(
            H.metric_value(m, 'nrfwd_dns_resolutions_total', result='unchanged'), 1)
        self.assertEqual(H.metric_value(m, 'nrfwd_dns_names'), 1)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), gen0 + 1)
        p = peers(fwd)[pname]
        self.assertEqual(p['address'], '127.0.0.3:%d' % port)
        self.assertEqual(p['state'], 'up')

        # The name stops resolving: the last address stays.
        failed0 = H.metric_value(m, 'nrfwd_dns_resolutions_total', result='failed')
        write_in_place(self.hosts, '127.0.0.1 localhost\n')
        wait_for(lambda: H.metric_value(H.metrics(fwd), 'nrfwd_dns_resolutions_total',
                                        result='failed') >= failed0 + 2, 5.0,
                 'two failed resolutions')
        p = peers(fwd)[pname]
        self.assertEqual(p['address'], '127.0.0.3:%d' % port)
        self.assertIsNotNone(p['dns']['lastError'])
        r = subprocess.run([H.binary('nrfwd-ctl'), 'peers', '--api',
                            'http://127.0.0.1:%d' % fwd.mgmt_port],
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 0, r.stderr)
        row = [x for x in r.stdout.splitlines() if x.startswith(pname)]
        self.assertEqual(len(row), 1, r.stdout)
        self.assertIn('127.0.0.3:%d' % port, row[0])
        self.assertIn('dns: ' + p['dns']['lastError'], row[0])
        stub_clear_at('127.0.0.3', port)
        st, _, _ = H.curl(url)
        self.assertEqual(st, 200)
        self.assertEqual(stub_count('127.0.0.3', port), 1)
        # one log line for the failing name, not one per failure
        self.assertEqual(len(re.findall(r'dns: peer %s: cannot be resolved' %
                                        re.escape(NAME), fwd.log())), 1, fwd.log())
        self.assertIn('it stays at 127.0.0.3', fwd.log())
        m = H.metrics(fwd)
        self.assertEqual(H.metric_value(m, 'nrfwd_config_generation'), gen0 + 1,
                         'a failure publishes nothing')

        # It comes back at the first address: applied again.
        write_in_place(self.hosts, '127.0.0.1 localhost\n127.0.0.2 %s\n' % NAME)
        wait_for(lambda: peers(fwd)[pname]['address'] == '127.0.0.2:%d' % port, 3.0,
                 'the address back at A')
        self.assertIn('dns: peer %s: resolves again' % NAME, fwd.log())
        stub_clear_at('127.0.0.2', port)
        st, _, _ = H.curl(url)
        self.assertEqual(st, 200)
        self.assertEqual(stub_count('127.0.0.2', port), 1)
        self.assertTrue(fwd.alive())

    def test_02_rest_change_keeps_the_resolved_address(self):
        """A REST change compiles a new snapshot: the peer stays at the
        resolver's address, and a name added by REST is re-resolved too."""
        fwd, port, pname = self.start_named({'refreshMs': REFRESH_MS, 'minTtlMs': 100})
        # The name stops resolving, then a REST change: still the old address.
        write_in_place(self.hosts, '127.0.0.1 localhost\n')
        wait_for(lambda: peers(fwd)[pname]['dns']['lastError'] is not None, 3.0,
                 'a failed resolution')
        st, _, doc = H.api(fwd, 'PATCH', '/nrf-configuration/v1/forwardingOptions',
                           {'maxForwardAttempts': 2})
        self.assertEqual(st, 200, doc)
        self.assertEqual(peers(fwd)[pname]['address'], '127.0.0.2:%d' % port)
        st, _, _ = H.curl(fwd.url(PROFILE + ID_UDM1))
        self.assertEqual(st, 200)
        # runtime.dns is live: refreshMs 0 stops the periodic resolution.
        st, _, doc = H.api(fwd, 'PATCH', '/nrf-configuration/v1/runtime',
                           {'dns': {'refreshMs': 0}})
        self.assertEqual(st, 200, doc)
        self.assertIsNone(peers(fwd)[pname]['dns']['nextInSeconds'])
        # ... and a refreshMs again resumes it at once.
        st, _, doc = H.api(fwd, 'PATCH', '/nrf-configuration/v1/runtime',
                           {'dns': {'refreshMs': REFRESH_MS}})
        self.assertEqual(st, 200, doc)
        wait_for(lambda: peers(fwd)[pname]['dns']['nextInSeconds'] is not None, 3.0,
                 'the next lookup planned again')

    def test_04_a_dns_server_that_does_not_answer(self):
        """Lookups end after timeoutMs (the last address stays), and a REST
        change does not wait for DNS for a name the resolver knows."""
        hole = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # takes queries, never answers
        self.addCleanup(hole.close)
        try:
            hole.bind(('127.0.0.54', 53))
        except OSError as e:
            self.skipTest('cannot bind 127.0.0.54:53: %s' % e)
        with open(self.resolv, 'w') as f:
            f.write('nameserver 127.0.0.54\noptions timeout:3 attempts:1\n')
        fwd, port, pname = self.start_named({'refreshMs': REFRESH_MS, 'minTtlMs': 100,
                                             'timeoutMs': 300})
        url = fwd.url(PROFILE + ID_UDM1)
        # From /etc/hosts: no DNS query.
        self.assertEqual(H.curl(url)[0], 200)
        # Gone from the hosts file: the query goes to a server that never
        # answers; each lookup gives up after 300 ms.
        write_in_place(self.hosts, '127.0.0.1 localhost\n')
        p = wait_for(lambda: (lambda q: q if q['dns']['lastError'] else None)(
            peers(fwd)[pname]), 3.0, 'a failed lookup')
        self.assertIn('timed out after 300 ms', p['dns']['lastError'])
        self.assertEqual(p['address'], '127.0.0.2:%d' % port)
        t0 = time.monotonic()
        st, _, doc = H.api(fwd, 'PATCH', '/nrf-configuration/v1/forwardingOptions',
                           {'maxForwardAttempts': 2})
        took = time.monotonic() - t0
        sys.stderr.write('\nPATCH with a DNS server that never answers: %.3f s\n' % took)
        self.assertEqual(st, 200, doc)
        self.assertLess(took, 1.5, 'the change waited for DNS (%.2f s)' % took)
        self.assertEqual(peers(fwd)[pname]['address'], '127.0.0.2:%d' % port)
        self.assertEqual(H.curl(url)[0], 200)
        # one lookup in flight per name: the pending one (glibc waits 3 s
        # for the server) is not started again meanwhile
        time.sleep(0.7)
        self.assertLess(time.monotonic() - t0, 2.5, 'glibc gives up after 3 s')
        self.assertEqual(peers(fwd)[pname]['dns']['lastError'],
                         'the previous lookup has not returned yet')
        self.assertEqual(fwd.log().count('cannot be resolved'), 1, fwd.log())
        self.assertTrue(fwd.alive())

    def test_03_ctl_check_warns_about_names_that_do_not_resolve(self):
        with open(self.hosts, 'w') as f:
            f.write('127.0.0.1 localhost\n127.0.0.2 %s\n' % NAME)
        cfg = H.nrfwd_config('nrf-a.test', local=18090,
                             peers=[H.peer(NAME, 8080, ipv4=None),
                                    H.peer('gone.nrfwd-dns.test', 8080, ipv4=None,
                                           priority=2),
                                    H.peer('numeric.nrfwd-dns.test', 8080, priority=3)])
        path = os.path.join(self.h.tmpdir, 'check.json')
        with open(path, 'w') as f:
            json.dump(cfg, f)
        r = subprocess.run(in_namespace(self.hosts, self.resolv,
                                        [H.binary('nrfwd-ctl'), 'check', path]),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(': OK: ', r.stdout)
        warn = [x for x in r.stderr.splitlines() if 'warning' in x]
        self.assertEqual(len(warn), 1, r.stderr)
        self.assertIn('/forwardingOptions/nrfHostConfig/1', warn[0])
        self.assertIn('"gone.nrfwd-dns.test" does not resolve (', warn[0])
        self.assertNotIn(NAME, r.stderr)
        self.assertNotIn('numeric', r.stderr, 'a peer with an address is not resolved')


@unittest.skipUnless(os.geteuid() == 0 and shutil.which('dnsmasq') and shutil.which('ip'),
                     'needs root, ip and dnsmasq (dnsmasq-base)')
class DnsTtl(unittest.TestCase):
    """A real DNS server (dnsmasq) in a network namespace the test creates:
    the answer's TTL, not refreshMs, schedules the next lookup."""

    TTL_S = 2

    def setUp(self):
        self.h = H.Harness(prefix='nrfwd-dnsttl-')
        self.ns = 'nrfwd-dns-%d' % os.getpid()
        self.etc = '/etc/netns/' + self.ns
        self.addCleanup(self.teardown_ns)
        subprocess.run(['ip', 'netns', 'add', self.ns], check=True)
        subprocess.run(['ip', '-n', self.ns, 'link', 'set', 'lo', 'up'], check=True)
        # ip netns exec bind-mounts these over /etc/resolv.conf and /etc/hosts
        os.makedirs(self.etc, exist_ok=True)
        with open(os.path.join(self.etc, 'resolv.conf'), 'w') as f:
            f.write('nameserver 127.0.0.1\noptions timeout:1 attempts:1\n')
        with open(os.path.join(self.etc, 'hosts'), 'w') as f:
            f.write('127.0.0.1 localhost\n')
        self.zone = os.path.join(self.h.tmpdir, 'zone-hosts')
        with open(self.zone, 'w') as f:
            f.write('127.0.0.2 %s\n' % NAME)
        self.dns = self.h._spawn('dnsmasq', self.nsx([
            'dnsmasq', '-k', '-C', '/dev/null', '--no-resolv', '--no-hosts',
            '--addn-hosts=' + self.zone, '--local-ttl=%d' % self.TTL_S,
            '--listen-address=127.0.0.1', '--bind-interfaces', '--port=53',
            '--user=root', '--pid-file=', '--log-facility=-']), 53)
        if not H._wait_for_line(self.dns, r'read .*zone-hosts - 1 names', 5):
            raise RuntimeError('dnsmasq did not start:\n%s' % self.dns.log())

    def teardown_ns(self):
        self.h.cleanup(dump=bool(os.environ.get('NRFWD_TEST_DUMP')))
        subprocess.run(['ip', 'netns', 'del', self.ns], capture_output=True)
        shutil.rmtree(self.etc, ignore_errors=True)

    def nsx(self, cmd):
        return ['ip', 'netns', 'exec', self.ns] + list(cmd)

    def spawn_ns(self, name, cmd, port, pattern):
        proc = self.h._spawn(name, self.nsx(cmd), port)
        if not H._wait_for_line(proc, pattern, 10):
            raise RuntimeError('%s did not start:\n%s' % (name, proc.log()))
        return proc

    def get(self, url, http2=True):
        st, _, body = H.curl(url, http2=http2, prefix=self.nsx([]))
        return st, body

    def test_01_the_dns_ttl_schedules_the_next_lookup(self):
        lport, port = H.free_port(), H.free_port()
        self.spawn_ns('local', [H.binary('nrfstub'), '--listen', '127.0.0.1:%d' % lport,
                                '--profiles', H.conf('stub-profiles-a.json'), '--name',
                                'local'], lport, r'nrfstub local listening on')
        for name, addr in (('first', '127.0.0.2'), ('second', '127.0.0.3')):
            self.spawn_ns(name, [H.binary('nrfstub'), '--listen', '%s:%d' % (addr, port),
                                 '--profiles', H.conf('stub-profiles-e.json'), '--name',
                                 name], port, r'nrfstub %s listening on' % name)
        cfg = H.nrfwd_config('nrf-a.test', local=lport, peers=[H.peer(NAME, port, ipv4=None)])
        # refreshMs far away: only the TTL can bring the change in time
        cfg['runtime']['dns'] = {'refreshMs': 600000, 'minTtlMs': 500, 'maxTtlMs': 60000,
                                 'timeoutMs': 1000}
        path = os.path.join(self.h.tmpdir, 'nrfwd.json')
        with open(path, 'w') as f:
            json.dump(cfg, f)
        fwd = self.spawn_ns('nrfwd', H.WRAPPER + [
            H.binary('nrfwd'), '--config', path, '--workers', '1',
            '--management', '127.0.0.1:0'], cfg['runtime']['listen'][0]['port'],
            r'nrfwd management on')
        mport = int(re.search(r'nrfwd management on [0-9.]+:(\d+)', fwd.log()).group(1))
        url = fwd.url(PROFILE + ID_UDM1)
        pname = '%s:%d' % (NAME, port)

        def peer():
            st, body = self.get('http://127.0.0.1:%d/peers' % mport, http2=False)
            self.assertEqual(st, 200, body)
            return {u['name']: u for u in json.loads(body)['upstreams']}[pname]

        self.assertEqual(self.get(url)[0], 200)
        # the first lookup after start learns the TTL
        p = wait_for(lambda: (lambda q: q if q['dns']['ttl'] else None)(peer()), 3.0,
                     'a lookup with a TTL')
        self.assertEqual(p['address'], '127.0.0.2:%d' % port)
        self.assertLessEqual(p['dns']['nextInSeconds'], self.TTL_S + 0.05)

        with open(self.zone, 'w') as f:
            f.write('127.0.0.3 %s\n' % NAME)
        self.dns.proc.send_signal(1)  # SIGHUP: dnsmasq reads its hosts file again
        t0 = time.monotonic()
        wait_for(lambda: peer()['address'] == '127.0.0.3:%d' % port, self.TTL_S + 2.0,
                 'the address from DNS after one TTL')
        sys.stderr.write('\nDNS record changed -> address applied: %.3f s (TTL %d s)\n'
                         % (time.monotonic() - t0, self.TTL_S))
        self.assertLess(time.monotonic() - t0, self.TTL_S + 1.0)
        self.assertEqual(self.get(url)[0], 200)
        st, body = self.get('http://127.0.0.3:%d/_stub/requests' % port)
        self.assertEqual(st, 200)
        self.assertEqual(len(json.loads(body)), 1, 'the new request went to the new address')
        self.assertIn('dns: peer %s: 127.0.0.2 -> 127.0.0.3' % NAME, fwd.log())


if __name__ == '__main__':
    sys.argv[:] = H.parse_args(sys.argv)
    unittest.main()
