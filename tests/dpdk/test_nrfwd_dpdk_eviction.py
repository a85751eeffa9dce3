#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""runtime.limits.maxConnections with nrfwd on its DPDK transport (lwIP):
idle connections give way to a newcomer, as on kernel sockets
(tests/integration/test_idle_eviction.py has every case;
docs/decisions/0054-idle-connections-give-way-at-max-connections.md).

Usage: python3 tests/dpdk/test_nrfwd_dpdk_eviction.py --build-dir BUILD

One nrfwd on a DPDK port (net_af_packet) with maxConnections 200 and its
timeouts far away, its local NRF (nrfstub) beside it, a client host. Inside
the client's namespace (this script, run again there with --client), 300
idle connections (bare TCP, preface, handshake done) are opened, then a
well-behaved client (h2load on 20 connections, then curl, one connection per
request, each after one more idle connection); the figures come back as
JSON. lwIP's own build has 12 288 TCP PCBs (lwipopts.h, MEMP_NUM_TCP_PCB:
maxConnections + peers + TIME_WAIT) and a listen backlog of 1024 here:
300 idle connections and the closes of the evicted ones (TIME_WAIT in
lwIP) fit many times over.

Exit status: 0 passed, 1 failed, 77 skipped (no root / namespaces).
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'integration'))

SELF = 'nrf-a.test'
PORT = 8080
MGMT = 9090
LIMIT = 200
CROWD = 300
CLIENTS = 20
CURLS = 40


def client(host, port):
    """Inside the client namespace: the crowd, then the client, as JSON."""
    import test_idle_eviction as E

    E.raise_nofile(2000)
    o = E.idle_crowd(host, port, CROWD, CLIENTS, 'http://%s:%d%s' % (host, port, E.PATH),
                     h2load_n=400, curls=CURLS)
    print(json.dumps(o))


def metrics(fab, host):
    r = fab.run(host, ['curl', '-s', '-m', '10', 'http://127.0.0.1:%d/metrics' % MGMT],
                timeout=20)
    out = {}
    for line in r.stdout.decode('utf-8', 'replace').splitlines():
        if line and not line.startswith('#'):
            k, _, v = line.rpartition(' ')
            out[k] = float(v)
    return out


def eviction(fab, r):
    import nrfwd_dpdk_harness as D
    import test_idle_eviction as E

    a = fab.host('a')
    c = fab.host('c')
    stub = fab.start_stub(a, 'local-a', 'stub-profiles-a.json', extra=['--no-record'])
    cfg = D.config(SELF, PORT, local=stub, timeouts=E.FAR, limits={'maxConnections': LIMIT})
    cfg['runtime']['management'] = {'address': '127.0.0.1', 'port': MGMT}
    fwd = fab.start_nrfwd(a, cfg)
    m0 = metrics(fab, a)

    def crowd():
        run = fab.run(c, [sys.executable, os.path.abspath(__file__), '--client', fwd.dpdk_ip,
                          str(PORT)], timeout=120)
        if run.returncode != 0:
            raise AssertionError('client: %s' % (run.stdout + run.stderr).decode()[-3000:])
        o = json.loads(run.stdout.decode().strip().splitlines()[-1])
        m = metrics(fab, a)

        def delta(key):
            return m.get(key, 0) - m0.get(key, 0)

        ev = {k: delta('nrfwd_connections_evicted_total{reason="%s"}' % k)
              for k in ('handshake', 'idle')}
        refused = delta('nrfwd_connections_refused_total')
        served = (o['h2load_ok'] + o['curl_ok']) / float(o['h2load_n'] + o['curls'])
        print('     %d idle connections, maxConnections %d: a client started after them served '
              '%.1f %% (h2load %d/%d on %d connections, curl %d/%d); evicted %s, refused %d'
              % (CROWD, LIMIT, 100.0 * served, o['h2load_ok'], o['h2load_n'], CLIENTS,
                 o['curl_ok'], o['curls'], ev, refused), flush=True)
        D.expect(served >= 0.99, 'served %.1f %%' % (100.0 * served))
        least = CROWD - LIMIT + CLIENTS + CURLS
        total = ev['handshake'] + ev['idle']
        D.expect(least <= total <= least + CURLS, 'evictions %s, expected %d..%d' % (
            ev, least, least + CURLS))
        D.expect_eq(refused, 0, 'refused')
        D.expect_eq(len(o['closed']) + o['refills_closed'], total, 'crowd connections closed')
        D.expect(o['oldest_first'], 'a newer connection gave way before an older one')
        D.expect_eq(o['closed_kinds']['idle'], 0, 'connections with their handshake done closed')
        D.expect_eq(o['preface_goaways'], [[0, 0, 'connection limit reached']],
                    'GOAWAY of those that had sent SETTINGS')
        D.expect_eq(m.get('nrfwd_answer_violations_total', 0), 0, 'answer violations')

    r.check('dpdk: %d idle connections give way to a client (maxConnections %d)'
            % (CROWD, LIMIT), crowd)


def main(argv):
    if len(argv) == 4 and argv[1] == '--client':
        client(argv[2], int(argv[3]))
        return 0
    import nrfwd_dpdk_harness as D
    return D.test_main(argv, [('eviction', eviction, 'ev')], needs=('curl', 'h2load'))


if __name__ == '__main__':
    sys.exit(main(sys.argv))
