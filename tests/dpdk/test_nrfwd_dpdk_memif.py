#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""nrfwd on a net_memif port (a device with no kernel side).

Usage: python3 tests/dpdk/test_nrfwd_dpdk_memif.py --build-dir BUILD

nrfwd's DPDK port is the client end of a net_memif; its server end is
bench/dpdk_l2bridge, a second DPDK process that joins it to a veth on the
fabric (nrfwd_dpdk_harness.py, pmd='memif'). This is the port
bench/e2e/dpdk_bench.py --device memif measures on (decision 0050): the
checks show nrfwd works there as on af_packet and tap (the local NRF's
404 forwarded to a peer with nrfwd's Via entry, a loop detected, load), and
that the frames really went through the bridge.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_dpdk_harness as D  # noqa: E402

PORT = 8080
MGMT = 9090
SELF = 'nrf-a.seg1.test'
DISC = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'
N = 2000


def frames(fab, host):
    """(rx, tx) frames of the DPDK port so far (nrfwd's /metrics)."""
    r = fab.run(host, ['curl', '-s', '-m', '10', 'http://127.0.0.1:%d/metrics' % MGMT],
                timeout=20)
    got = {}
    for line in r.stdout.decode('utf-8', 'replace').splitlines():
        m = re.match(r'nrfwd_dpdk_frames_total\{.*dir="(rx|tx)".*\} (\S+)$', line)
        if m:
            got[m.group(1)] = got.get(m.group(1), 0) + int(float(m.group(2)))
    D.expect(set(got) == {'rx', 'tx'}, 'no nrfwd_dpdk_frames_total in /metrics')
    return got['rx'], got['tx']


def memif(fab, r):
    a, s, p, c = fab.host('a'), fab.host('s'), fab.host('p'), fab.host('c')
    local = fab.start_stub(s, 'local', fault='status:404')
    peer = fab.start_stub(p, 'peer-e', 'stub-profiles-e.json')
    cfg = D.config(SELF, PORT, local=local, peers=[D.peer('nrf-e.seg2.test', peer, PORT)])
    cfg['runtime']['management'] = {'address': '127.0.0.1', 'port': MGMT}
    fa = fab.start_nrfwd(a, cfg, name='nrfwd-a', pmd='memif')
    bridge = next(x for x in fab.procs if x.name == 'bridge-nrfwd-a')
    D.expect('net_memif' in fa.log(), 'nrfwd is not on net_memif:\n' + fa.log()[-1500:])

    def forwarded():
        fab.stub_clear(peer)
        st, hd, _ = fab.curl(c, fa.url(DISC), headers=['via: 2.0 nrf-x.seg9.test:8080'])
        D.expect_eq((st, hd.get('x-nrfstub')), (200, ['peer-e']), 'answer after the local 404')
        vias = [x.get('via') for x in fab.stub_requests(peer)]
        D.expect_eq(vias, [['2.0 nrf-x.seg9.test:8080', '2.0 %s:%d' % (SELF, PORT)]],
                    'Via the peer received')

    def loop():
        st, _, body = fab.curl(c, fa.url(DISC), headers=['via: 2.0 %s:%d' % (SELF, PORT)])
        D.expect_eq(st, 508, 'own identity in Via\n' + body.decode('utf-8', 'replace')[:300])

    def load():
        res = fab.h2load(c, fa.url(DISC), n=N, c=4, m=8, timeout=120)
        for k, v in (('done', N), ('status_2xx', N), ('errored', 0), ('timeout', 0)):
            D.expect_eq(res.get(k), v, '%s\n%s' % (k, res['raw'][-1500:]))

    def through_bridge():
        got, sent = frames(fab, a)
        # h2load's streams share segments: fewer frames than requests.
        D.expect(sent >= N // 10 and got >= N // 10,
                 'nrfwd sent %d and got %d frames for %d requests' % (sent, got, N))
        fab.stop(fa)
        fab.stop(bridge)
        m = re.search(r'0->1 (\d+) frames \((\d+) dropped\), 1->0 (\d+) frames', bridge.log())
        D.expect(m is not None, 'no frame counts from the bridge:\n' + bridge.log()[-1500:])
        out, dropped, back = (int(x) for x in m.groups())
        # Port 0 is the memif: everything nrfwd sent reached the bridge.
        D.expect(out + dropped >= sent, 'the bridge took %d + %d frames from the memif, nrfwd '
                 'sent %d' % (out, dropped, sent))
        D.expect(back >= got, 'the bridge passed %d frames to the memif, nrfwd got %d'
                 % (back, got))
        print('       nrfwd sent %d and got %d frames; the bridge moved %d out (%d dropped), '
              '%d in' % (sent, got, out, dropped, back))

    r.check('memif: the local 404 forwarded to the peer, Via appended', forwarded)
    r.check('memif: own identity in Via gets 508', loop)
    r.check('memif: %d requests under load, all 200' % N, load)
    r.check('memif: the frames went through the bridge both ways', through_bridge)


if __name__ == '__main__':
    sys.exit(D.test_main(sys.argv, [('memif', memif, 'mf')], needs=('h2load',)))
