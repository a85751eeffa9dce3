#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""runtime.timeouts with nrfwd on its DPDK transport (lwIP): the same sweep
as on kernel sockets (tests/integration/test_timeouts.py has every case).

Usage: python3 tests/dpdk/test_nrfwd_dpdk_timeouts.py --build-dir BUILD

One nrfwd on a DPDK port (net_af_packet) with timeouts of a few hundred ms,
its local NRF (nrfstub, with one 2 MB profile) beside it, a client host.
The raw HTTP/2 clients of test_timeouts.py run inside the client's network
namespace (this script, run again there with --client SCENARIO) and print
what they saw as JSON.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'integration'))

SELF = 'nrf-a.test'
PORT = 8080


def client(scenario, host, port):
    """Inside the client namespace: one scenario, its result as JSON."""
    import test_timeouts as T

    out = {}
    t0 = time.monotonic()
    if scenario == 'silent':
        c = T.Raw(port, ack=False, host=host)
        c.read(lambda r: False, timeout=5)
    elif scenario == 'idle':
        c = T.Raw(port, host=host)
        c.handshake()
        c.read(lambda r: r.closed, timeout=5)
    elif scenario == 'body':
        c = T.Raw(port, host=host)
        c.handshake()
        c.send(T.frame(T.HEADERS, T.END_HEADERS, 1,
                       T.request_block('POST', '/oauth2/token', [('content-length', '1000')])) +
               T.frame(T.DATA, 0, 1, b'grant_type'))
        c.read(lambda r: r.find(T.RST_STREAM, 1), timeout=5)
        out['status'] = c.status(1)
        hd = c.find(T.HEADERS, 1)
        out['answer_s'] = hd[5] - t0 if hd else None
    elif scenario == 'stall':
        c = T.Raw(port, host=host)
        c.handshake(struct.pack('>HI', 0x4, 0))
        c.send(T.frame(T.HEADERS, T.END_HEADERS | T.END_STREAM, 1,
                       T.request_block('GET', T.PROFILE + T.ID_BIG)))
        c.read(lambda r: r.find(T.RST_STREAM, 1), timeout=5)
        out['status'] = c.status(1)
    elif scenario == 'flood':
        # test_limits' CONTINUATION flood, with the client still sending
        # after the GOAWAY (it has not read it yet); how the connection
        # ends: 'eof' (FIN, the input drained) or 'reset'.
        import test_limits as L
        c = L.Raw(port, host=host)
        c.send(L.PREFACE + L.frame(L.SETTINGS, 0, 0) +
               L.frame(L.HEADERS, 0x1, 1, c.enc.encode(L.request_fields(L.DISC))) +
               b''.join(L.frame(L.CONTINUATION, 0, 1) for _ in range(1000)))
        got, _ = c.frames(lambda f: L.goaway(f) is not None)
        t_ga = time.monotonic()
        try:
            c.send(b''.join(L.frame(L.CONTINUATION, 0, 1) for _ in range(100)))
        except OSError:
            pass
        _, out['end'] = c.frames(timeout=3)
        out['end_after_goaway_s'] = time.monotonic() - t_ga
        ga = L.goaway(got)
        out['goaway'] = list(ga[:2]) if ga else None
        c.close()
        print(json.dumps(out))
        return
    else:
        raise SystemExit('unknown scenario ' + scenario)
    rst = c.find(T.RST_STREAM, 1)
    if rst:
        out['rst'] = struct.unpack('>I', rst[3])[0]
        out['rst_s'] = rst[5] - t0
    g = c.goaway()
    if g:
        out['goaway'] = [g[0], g[1], g[2].decode('latin-1')]
        out['goaway_s'] = g[3] - t0
    out['closed'] = c.closed
    if c.closed:
        out['closed_s'] = c.t_closed - t0
    c.close()
    print(json.dumps(out))


def run_client(fab, host, scenario, fwd):
    r = fab.run(host, [sys.executable, os.path.abspath(__file__), '--client', scenario,
                       fwd.dpdk_ip, str(PORT)], timeout=30)
    if r.returncode != 0:
        raise AssertionError('client %s: %s' % (scenario, (r.stdout + r.stderr).decode()))
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def timeouts(fab, r):
    import nrfwd_dpdk_harness as D
    import test_timeouts as T

    a = fab.host('a')
    c = fab.host('c')
    big = os.path.join(fab.tmpdir, 'profiles-big.json')
    T.write_big_profiles(big)
    stub = fab.start_stub(a, 'local-a', big)
    tmo = T.TMO
    fwd = fab.start_nrfwd(a, D.config(SELF, PORT, local=stub, timeouts=tmo))
    slack = T.SLACK

    def within(s, ms, what):
        D.expect(s is not None and ms / 1000.0 - 0.02 <= s < ms / 1000.0 + slack,
                 '%s after %s s (timeout %d ms)' % (what, s, ms))

    def silent():
        o = run_client(fab, c, 'silent', fwd)
        D.expect(o['closed'], 'not closed: %r' % o)
        within(o['closed_s'], tmo['handshakeMs'], 'closed')
        D.expect_eq(o.get('goaway'), [0, 0, 'handshake timeout'], 'GOAWAY')

    def idle():
        o = run_client(fab, c, 'idle', fwd)
        D.expect_eq(o.get('goaway'), [0, 0, 'idle timeout'], 'GOAWAY')
        within(o['goaway_s'], tmo['idleMs'], 'GOAWAY')
        D.expect(o['closed'], 'not closed: %r' % o)

    def body():
        o = run_client(fab, c, 'body', fwd)
        D.expect_eq(o.get('status'), 408, 'status')
        within(o['answer_s'], tmo['requestBodyMs'], '408')
        D.expect_eq(o.get('rst'), 0, 'RST_STREAM code after the 408')

    def stall():
        o = run_client(fab, c, 'stall', fwd)
        D.expect_eq(o.get('status'), 200, 'status')
        D.expect_eq(o.get('rst'), 8, 'RST_STREAM code')
        within(o['rst_s'], tmo['stalledReaderMs'], 'RST_STREAM')
        deadline = time.monotonic() + 3
        left = None
        while time.monotonic() < deadline:
            st, _, b = fab.curl(a, stub.url('/_stub/stats'))
            left = json.loads(b)['streams_active'] - 1 if st == 200 else None
            if left == 0:
                break
            time.sleep(0.1)
        D.expect_eq(left, 0, 'streams still open at the local NRF')

    def flood():
        # GOAWAY, then at once the end (lwIP's FIN after it: lingering
        # with the write side shut), not a reset, though the client
        # went on sending after the GOAWAY
        o = run_client(fab, c, 'flood', fwd)
        D.expect_eq(o.get('goaway'), [1, 0xb], 'GOAWAY(last 1, ENHANCE_YOUR_CALM)')
        D.expect_eq(o.get('end'), 'eof', 'how the connection ended')
        D.expect(o.get('end_after_goaway_s', 9) < 0.2,
                 'the end %s s after the GOAWAY: not before the lingering ran out' %
                 o.get('end_after_goaway_s'))

    def served():
        st, _, body = fab.curl(c, fwd.url(T.PROFILE + T.ID_AMF1))
        D.expect_eq(st, 200, 'status (%s)' % body[:200])
        log = fwd.log()
        for line in ('connection handshake not done', 'request on stream 1 not complete',
                     'answer on stream 1 not taken'):
            D.expect(line in log, 'no "%s" in the log' % line)

    r.check('dpdk timeouts: silent connection, handshakeMs', silent)
    r.check('dpdk timeouts: preface only, idleMs', idle)
    r.check('dpdk timeouts: body never arrives, 408', body)
    r.check('dpdk timeouts: reader takes nothing, RST + upstream', stall)
    r.check('dpdk: CONTINUATION flood, GOAWAY then FIN', flood)
    r.check('dpdk timeouts: still serving', served)


def main(argv):
    if len(argv) == 5 and argv[1] == '--client':
        client(argv[2], argv[3], int(argv[4]))
        return 0
    import nrfwd_dpdk_harness as D
    return D.test_main(argv, [('timeouts', timeouts, 'tm')], needs=('curl',))


if __name__ == '__main__':
    sys.exit(main(sys.argv))
