#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Jumbo frames on the DPDK port (runtime.dpdk.mtu 9000).

Usage: python3 tests/dpdk/test_nrfwd_dpdk_jumbo.py --build-dir BUILD

A fabric whose bridge and links have a 9000-byte MTU (nrfwd_dpdk_harness.py;
nrfwd's port on net_af_packet with a framesz that holds such frames). A
discovery answer of about 100 KB from the local NRF (nrfstub) is relayed
whole, in fewer frames than 1500-byte frames could carry it (so lwIP sent
and took segments above 1460 bytes), under load too; a client whose own
link stays at 1500 bytes on the same segment is served as well (TCP's MSS
option: nrfwd sends it 1460-byte segments). And a port asked for an MTU its
interface does not have refuses to start, with one line naming the fix.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_dpdk_harness as D  # noqa: E402

H = D.H
PORT = 8080
MGMT = 9090
DISC_AMF = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'


def frames(fab, host):
    """(rx, tx) frames of the DPDK port so far, from nrfwd's /metrics."""
    r = fab.run(host, ['curl', '-s', '-m', '10', 'http://127.0.0.1:%d/metrics' % MGMT],
                timeout=20)
    rx = tx = 0.0
    for line in r.stdout.decode('utf-8', 'replace').splitlines():
        if line.startswith('nrfwd_dpdk_frames_total{'):
            v = float(line.rpartition(' ')[2])
            if 'dir="rx"' in line:
                rx += v
            elif 'dir="tx"' in line:
                tx += v
    return rx, tx


def jumbo(fab, r):
    a, s, c = fab.host('a'), fab.host('s'), fab.host('c')
    small = fab.host('m', mtu=1500)  # a client whose link stays at 1500 bytes
    big = H.write_big_profiles(os.path.join(fab.tmpdir, 'big.json'), extra_amf=80)
    stub = fab.start_stub(s, 'stub-s', big, extra=['--no-record'])
    cfg = D.config('nrf-a.seg1.test', PORT, local=stub)
    cfg['runtime']['management'] = {'address': '127.0.0.1', 'port': MGMT}
    fa = fab.start_nrfwd(a, cfg, name='nrfwd-a')
    D.expect('mtu 9000' in fa.log(), 'port not up with MTU 9000:\n' + fa.log()[-1500:])
    st, _, direct = fab.curl(c, 'http://%s:%d%s' % (stub.host, stub.port, DISC_AMF))
    D.expect_eq(st, 200, 'the stub answers directly')
    want = len(json.loads(direct)['nfInstances'])

    def one_big_answer():
        rx0, tx0 = frames(fab, a)
        st, hd, body = fab.curl(c, fa.url(DISC_AMF))
        rx1, tx1 = frames(fab, a)
        D.expect_eq((st, hd.get('x-nrfstub')), (200, ['stub-s']), 'relayed answer')
        D.expect_eq(len(json.loads(body)['nfInstances']), want, 'profiles in the answer')
        D.expect(len(body) > 90000, 'answer of %d bytes: too small for the test' % len(body))
        # 1460-byte segments need len/1460 frames for the answer alone (and as
        # many again to take it in from the stub).
        least_std = len(body) // 1460
        D.expect(tx1 - tx0 < least_std and rx1 - rx0 < least_std,
                 '%d bytes relayed in %d TX / %d RX frames: 1500-byte frames need at least %d'
                 % (len(body), tx1 - tx0, rx1 - rx0, least_std))
        print('       %d bytes relayed in %d TX / %d RX frames (at least %d each at MTU 1500)'
              % (len(body), tx1 - tx0, rx1 - rx0, least_std))

    def load():
        res = fab.h2load(c, fa.url(DISC_AMF), n=2000, c=4, m=8, timeout=120)
        for k, v in (('done', 2000), ('status_2xx', 2000), ('errored', 0), ('timeout', 0)):
            D.expect_eq(res.get(k), v, '%s\n%s' % (k, res['raw'][-1500:]))

    def small_client():
        st, hd, body = fab.curl(small, fa.url(DISC_AMF))
        D.expect_eq((st, hd.get('x-nrfstub')), (200, ['stub-s']), 'answer to a 1500-MTU client')
        D.expect_eq(len(json.loads(body)['nfInstances']), want, 'profiles in the answer')

    r.check('jumbo: a 100 KB answer relayed in 9000-byte frames', one_big_answer)
    r.check('jumbo: 2000 big answers under load, all 200', load)
    r.check('jumbo: a client on a 1500-byte link of the same segment (MSS)', small_client)


def refused(fab, r):
    host = fab.host('n')
    cfg = D.config('nrf-a.test', PORT)
    cfg['runtime']['transport'] = 'dpdk'
    cfg['runtime']['dpdk'] = {'ipv4Address': fab.dpdk_ip(host), 'mtu': 9000}
    path = os.path.join(fab.tmpdir, 'nrfwd.json')
    D.cfg_args(cfg, path)

    def start():
        eal = fab.eal('mtu', 'net_af_packet0,iface=%s,qpairs=1,qdisc_bypass=1'
                      % fab.dpdk_dev(host))
        cmd = fab.wrap([H.binary('nrfwd')] + eal + ['--', '--config', path])
        try:
            p = subprocess.run(['ip', 'netns', 'exec', host.ns] + cmd, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            raise AssertionError('nrfwd did not exit: it started')
        out = '\n'.join(l for l in (p.stdout + p.stderr).splitlines() if l.strip())
        D.expect_eq(p.returncode, 1, 'exit status\n' + out)
        D.expect('MTU 9000 needs the interface\'s MTU at least as large (it is 1500'
                 in out, 'no cause in:\n' + out)
        print('       ' + out.splitlines()[-1][25:][:300])

    r.check('jumbo: MTU 9000 on a 1500-byte interface refused', start)


if __name__ == '__main__':
    # A build with Debian's liblwip carries at most MTU 1500 (its TCP_MSS is
    # compiled in) and refuses more at start: test_nrfwd_dpdk_startup.py
    # checks that refusal.
    sys.exit(D.test_main(sys.argv, [('jumbo', jumbo, 'j', {'mtu': 9000}),
                                    ('refused', refused, 'r')], needs=('h2load',),
                         needs_caps=lambda c: None if c['max_mtu'] >= 9000 else
                         'this build\'s lwIP (%s) carries at most MTU %d: no jumbo frames'
                         % (c['lwip'], c['max_mtu'])))
