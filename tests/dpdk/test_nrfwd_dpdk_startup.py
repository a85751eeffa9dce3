#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Start-up problems of nrfwd on DPDK: one clear line, non-zero exit.

Usage: python3 tests/dpdk/test_nrfwd_dpdk_startup.py --build-dir BUILD

Each case runs nrfwd once inside a network namespace of its own fabric
(nrfwd_dpdk_harness.py; PCI bus hidden) and expects its exit status and
exactly one line of output naming the cause: an unknown EAL option, EAL
arguments without --no-pci / -a, an EAL option value the EAL rejects, a
port that does not start (its interface does not exist), --workers 2, no
hugepages (only where none are reserved), --no-huge with --in-memory, an
address another host already uses, and a configuration without the port's
address.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_dpdk_harness as D  # noqa: E402

H = D.H


def startup(fab, r):
    host = fab.host('n')
    other = fab.host('o')  # owns the address of the conflict case
    cfg = D.config('nrf-a.test', 8080)
    cfg['runtime']['transport'] = 'dpdk'
    cfg['runtime']['dpdk'] = {'ipv4Address': fab.dpdk_ip(host), 'arpProbeMs': 300}
    path = os.path.join(fab.tmpdir, 'nrfwd.json')
    D.cfg_args(cfg, path)
    mem = fab.mem
    safe = ['--no-pci', '--no-telemetry', '-l', '0'] + mem

    def run(eal, app=(), ns=host, cfg_path=path):
        cmd = fab.wrap([H.binary('nrfwd')] + eal + ['--', '--config', cfg_path] + list(app))
        try:
            p = subprocess.run(['ip', 'netns', 'exec', ns.ns] + cmd, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            raise AssertionError('nrfwd did not exit: it started')
        lines = [l for l in (p.stdout + p.stderr).splitlines() if l.strip()]
        return p.returncode, lines

    def expect_one_line(eal, rc_want, pattern, app=(), ns=host, cfg_path=path, n_lines=1):
        rc, lines = run(eal, app, ns, cfg_path)
        out = '\n'.join(lines)
        D.expect(rc == rc_want, 'exit status %d, want %d:\n%s' % (rc, rc_want, out))
        D.expect(len(lines) == n_lines, '%d lines, want %d:\n%s' % (len(lines), n_lines, out))
        D.expect(re.search(pattern, out), 'no /%s/ in:\n%s' % (pattern, out))
        print('       ' + lines[-1][25:][:300])

    def vdev(iface):
        return '--vdev=net_af_packet0,iface=%s,qpairs=1,qdisc_bypass=1' % iface

    missing = 'nfd%dnone' % (os.getpid() % 100000)
    r.check('startup: unknown EAL option', expect_one_line,
            safe + ['--no-such-eal-option', vdev(missing)], 2,
            r'unknown EAL option "--no-such-eal-option"')
    r.check('startup: EAL arguments without --no-pci / -a', expect_one_line,
            [a for a in safe if a != '--no-pci'] + [vdev(missing)], 2,
            r'refusing to start DPDK: .*neither --no-pci nor -a.*--pci-nic')
    r.check('startup: EAL rejects an option value', expect_one_line,
            ['--no-pci', '--no-telemetry', '-l', '97'] + mem + [vdev(missing)], 1,
            r'EAL initialisation failed.*\[DPDK: .*97')
    fab.prefixes.append('nfdst%d' % os.getpid())
    r.check('startup: port that will not start (no such interface)', expect_one_line,
            safe + ['--file-prefix=nfdst%d' % os.getpid(), vdev(missing)], 1,
            r'no DPDK port: the --vdev device did not start.*\[DPDK: .*No such device')
    r.check('startup: --workers 2 on DPDK', expect_one_line, safe + [vdev(missing)], 2,
            r'--workers 2: the DPDK transport runs one worker per process', app=['--workers', '2'])
    if D.free_hugepages() == 0:
        r.check('startup: no hugepages reserved', expect_one_line,
                ['--no-pci', '--no-telemetry', '-l', '0', vdev(missing)], 1,
                r'no free hugepages: reserve some .* or run with --no-huge')
    else:
        print('skip no-hugepages case (hugepages are reserved here)')
    r.check('startup: --no-huge with --in-memory', expect_one_line,
            ['--no-pci', '--no-telemetry', '-l', '0', '--no-huge', '--in-memory', vdev(missing)],
            1, r'--no-huge cannot be combined with --in-memory')

    bad = dict(cfg)
    bad['runtime'] = dict(cfg['runtime'], dpdk={}, localNrf={'address': '127.0.0.1',
                                                              'port': 8081})
    bad_path = os.path.join(fab.tmpdir, 'bad.json')
    D.cfg_args(bad, bad_path)
    r.check('startup: configuration without the port address', expect_one_line,
            safe + [vdev(missing)], 1,
            r'/runtime/dpdk/ipv4Address: missing required field(.|\n)*'
            r'/runtime/localNrf/address: not reachable over the DPDK port',
            cfg_path=bad_path, n_lines=3)

    caps = D.build_caps(H.BUILD_DIR)
    if caps is not None and caps['max_mtu'] < 9000:
        # Debian's liblwip: its compiled TCP_MSS caps the MTU (test_nrfwd_dpdk_jumbo.py
        # skips on such a build).
        big = dict(cfg)
        big['runtime'] = dict(cfg['runtime'], dpdk=dict(cfg['runtime']['dpdk'], mtu=9000))
        big_path = os.path.join(fab.tmpdir, 'big.json')
        D.cfg_args(big, big_path)
        r.check('startup: MTU above what this build\'s lwIP carries', expect_one_line,
                safe + [vdev(missing)], 1,
                r'DPDK port MTU 9000: this build\'s lwIP \(.*\) carries at most MTU %d'
                % caps['max_mtu'], cfg_path=big_path)


        def check_says_so():
            p = subprocess.run([H.binary('nrfwd-ctl'), 'check', '--config', big_path],
                               capture_output=True, text=True, timeout=30)
            D.expect(p.returncode == 1 and re.search(
                r'/runtime/dpdk/mtu: MTU 9000: .* carries at most MTU %d' % caps['max_mtu'],
                p.stderr), 'nrfwd-ctl check: rc %d\n%s' % (p.returncode, p.stderr))
        r.check('startup: nrfwd-ctl check names the MTU this build carries', check_says_so)
    else:
        print('skip MTU-capability refusal (this build carries jumbo frames)')

    def conflict():
        # The other host takes the address nrfwd wants, on the same segment.
        D.sh('ip', 'addr', 'add', fab.dpdk_ip(host) + '/24', 'dev', other.dev, ns=other.ns)
        dev = fab.dpdk_dev(host)
        expect_one_line(fab.eal('conflict', 'net_af_packet0,iface=%s,qpairs=1,qdisc_bypass=1'
                                % dev), 1, r'address %s is already in use' %
                        re.escape(fab.dpdk_ip(host)))

    r.check('startup: address conflict on the segment', conflict)


if __name__ == '__main__':
    sys.exit(D.test_main(sys.argv, [('startup', startup, 'u')]))
