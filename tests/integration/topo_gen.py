#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generated NRF topologies for `nrfwd-ctl lint` / `trace` tests and benchmarks.

Standard library only.

    import topo_gen as G
    rng = random.Random(seed)
    topo = G.random_topology(rng, port=H.free_port)   # 3..8 NRFs, some entries wrong
    for nrf in topo.nrfs:
        doc = G.config(nrf, topo)                    # an nrfwd configuration (dict)
    G.holdings(topo)                                 # the holdings file (dict)
    G.profiles(nrf)                                  # an nrfstub profiles file (dict)

    topo = G.mesh_topology(200, rng)                 # the lint benchmark's topology

A topology is plain data (class Topo / Nrf / Entry below), so a test can say
what it generated when a seed fails.
"""

import json
import os

NF_TYPES = ('AMF', 'SMF', 'UDM', 'AUSF', 'PCF', 'NEF')
CONDITIONS = ('NRF_Forwarding_Loop_Detection', 'NRF_Forwarding_Loop_Prevention',
              'NRF_Forwarding_Hop_Limit', 'NRF_Not_Reachable', 'NRF_Forwarding_Overload',
              'NRF_Local_Unavailable')
DEFAULT_STATUS = {'NRF_Forwarding_Loop_Detection': 508, 'NRF_Forwarding_Loop_Prevention': 508,
                  'NRF_Forwarding_Hop_Limit': 508, 'NRF_Not_Reachable': 504,
                  'NRF_Forwarding_Overload': 503, 'NRF_Local_Unavailable': 503}


class Entry:
    """One peer entry of an NRF: which NRF it is meant for and how it names it.

    style: 'fqdn' (right name + 127.0.0.1), 'ip' (127.0.0.1 only: right only
    when the target calls itself 127.0.0.1), 'alias' (the target's alias as
    fqdn: wrong for loop prevention), 'wrong' (a name nobody has, the
    target's address), 'dangling' (a name nobody has, a port where nothing
    listens)."""

    def __init__(self, target, style, priority, port=None):
        self.target = target      # index of the NRF, or None (dangling)
        self.style = style
        self.priority = priority
        self.port = port          # dangling: its port

    def __repr__(self):
        return 'Entry(%r, %s, p%d)' % (self.target, self.style, self.priority)


class Nrf:
    def __init__(self, i, host, port, set_id):
        self.i = i
        self.host = host
        self.port = port
        self.set_id = set_id
        self.alias = None         # 'alias-N.test'
        self.local = 'stub'       # 'stub', 'down' (a port where nothing listens), None
        self.local_port = None
        self.types = []           # NF types its local NRF holds
        self.fwd = []             # forwarding entries
        self.sets = []            # [(set id, [Entry])]
        self.scope = 'HOST'
        self.max_attempts = 2
        self.max_via = 16

    @property
    def name(self):
        return '%s:%d' % (self.host, self.port)

    @property
    def stub(self):
        return 'stub-%d' % self.i

    def ids(self):
        return ['%d-%s' % (self.i, t) for t in self.types]

    def __repr__(self):
        return ('Nrf(%d %s set=%s local=%s types=%s fwd=%s sets=%s scope=%s att=%d via=%d)'
                % (self.i, self.name, self.set_id, self.local, self.types, self.fwd,
                   self.sets, self.scope, self.max_attempts, self.max_via))


class Topo:
    def __init__(self, nrfs):
        self.nrfs = nrfs

    def __repr__(self):
        return '\n'.join(repr(n) for n in self.nrfs)


def _entry_doc(e, topo):
    if e.target is None:
        return {'apiVersion': 'v1', 'scheme': 'http', 'fqdn': 'gone-%d.test' % e.port,
                'ipv4Address': '127.0.0.1', 'port': e.port, 'priority': e.priority}
    t = topo.nrfs[e.target]
    d = {'apiVersion': 'v1', 'scheme': 'http', 'ipv4Address': '127.0.0.1', 'port': t.port,
         'priority': e.priority}
    if e.style == 'fqdn' and t.host != '127.0.0.1':
        d['fqdn'] = t.host
    elif e.style == 'alias':
        d['fqdn'] = t.alias
    elif e.style == 'wrong':
        d['fqdn'] = 'nrf-x%d.wrong.test' % t.i
    return d


def _errors(nrf):
    """Every condition with a detail naming the NRF: the client can tell who answered."""
    return [{'errorCondition': c, 'errorCode': DEFAULT_STATUS[c],
             'errorDetail': '%s at %s' % (c, nrf.name)} for c in CONDITIONS]


def config(nrf, topo, timeouts=None):
    """The nrfwd configuration document of @nrf (listening on 127.0.0.1)."""
    general = {'ocnrfHost': nrf.host, 'ocnrfPort': nrf.port}
    if nrf.set_id:
        general['nrfSetId'] = nrf.set_id
    if nrf.alias:
        general['aliases'] = ['%s:%d' % (nrf.alias, nrf.port)]
    doc = {
        'generalOptions': general,
        'forwardingOptions': {
            'featureStatus': 'ENABLED' if nrf.fwd else 'DISABLED',
            'maxForwardAttempts': nrf.max_attempts, 'maxViaMembers': nrf.max_via,
            'nrfHostConfig': [_entry_doc(e, topo) for e in nrf.fwd],
            'errorResponses': _errors(nrf),
        },
        'nrfGrowth': {'nrfForwardingOptions': {
            'featureStatus': 'ENABLED' if nrf.sets else 'DISABLED',
            'loopPreventionScope': nrf.scope,
            'nrfHostConfig': {'staticNrfConfigList': [
                {'nrfSetId': sid, 'nrfHostConfigList': [_entry_doc(e, topo) for e in es]}
                for sid, es in nrf.sets]},
            'errorResponses': _errors(nrf),
        }},
        'runtime': {
            'listen': [{'address': '127.0.0.1', 'port': nrf.port}],
            'management': {'address': '127.0.0.1', 'port': 0},
            'timeouts': dict(timeouts or {'connectMs': 500, 'perTryMs': 1500,
                                          'requestMs': 4000}),
        },
    }
    if nrf.local is not None:
        doc['runtime']['localNrf'] = {'scheme': 'http', 'address': '127.0.0.1',
                                      'port': nrf.local_port}
    return doc


def profiles(nrf):
    """The nrfstub profiles file of @nrf's local NRF."""
    return {'nfProfiles': [{'nfInstanceId': '%d-%s' % (nrf.i, t), 'nfType': t,
                            'nfStatus': 'REGISTERED'} for t in nrf.types]}


def holdings(topo):
    """The `nrfwd-ctl trace --holdings` file of @topo."""
    out = {}
    for n in topo.nrfs:
        h = {'nfTypes': list(n.types), 'nfInstanceIds': n.ids()}
        if n.local == 'down':
            h['localNrf'] = 'down'
        out[n.name] = h
    return {'nrfs': out}


def random_topology(rng, port):
    """3..8 NRFs with random peers, priorities, growth sets and scopes;
    identities by fqdn, IP or alias, some deliberately wrong. @port() gives
    a free port."""
    n = rng.randint(3, 8)
    set_ids = ['set%d.nrfset.test' % k for k in range(1, 4)]
    nrfs = []
    for i in range(n):
        host = '127.0.0.1' if rng.random() < 0.2 else 'nrf-%d.seg%d.test' % (
            i, rng.randint(1, 3))
        nrf = Nrf(i, host, port(), rng.choice(set_ids) if rng.random() < 0.85 else '')
        if rng.random() < 0.3:
            nrf.alias = 'alias-%d.test' % i
        r = rng.random()
        nrf.local = 'stub' if r < 0.8 else ('down' if r < 0.9 else None)
        if nrf.local is not None:
            nrf.local_port = port()
        if nrf.local == 'stub':
            nrf.types = [t for t in NF_TYPES if rng.random() < 0.3]
        nrf.max_attempts = rng.randint(1, 3)
        nrf.max_via = rng.choice((2, 3, 4, 16))
        nrf.scope = rng.choice(('HOST', 'SET'))
        nrfs.append(nrf)

    def entry(i):
        r = rng.random()
        prio = rng.randint(1, 3)
        if r < 0.1:
            return Entry(None, 'dangling', prio, port())
        others = [k for k in range(n) if k != i]
        t = rng.choice(others)
        r = rng.random()
        style = ('fqdn' if r < 0.6 else 'ip' if r < 0.75 else
                 'alias' if r < 0.85 and nrfs[t].alias else 'wrong')
        return Entry(t, style, prio)

    for nrf in nrfs:
        used = set()

        def fresh(e):
            if e.target is not None and e.target in used:
                return False
            used.add(e.target)
            return True
        if rng.random() < 0.75:
            for _ in range(rng.randint(1, 3)):
                e = entry(nrf.i)
                if fresh(e):
                    nrf.fwd.append(e)
        if rng.random() < 0.5:
            for sid in rng.sample(set_ids, rng.randint(1, 2)):
                es = []
                for _ in range(rng.randint(1, 3)):
                    e = entry(nrf.i)
                    if fresh(e):
                        es.append(e)
                if es:
                    nrf.sets.append((sid, es))
    return Topo(nrfs)


def mesh_topology(n, rng, base_port=20000, wrong=0.02, dangling=0.02):
    """@n NRFs in segments of 10, each segment two NRF sets of 5: growth
    forwarding to the other set of the segment (every host), forwarding to
    3 NRFs of other segments; a share of entries named wrong or dangling.
    Ports base_port + i (never listened on: for lint only)."""
    nrfs = []
    for i in range(n):
        seg, s = i // 10, (i % 10) // 5
        nrf = Nrf(i, 'nrf-%d.seg%d.example.com' % (i, seg), base_port + i,
                  'set%d.seg%d.nrfset.example.com' % (s, seg))
        nrf.local_port = base_port + 10000 + i
        nrf.max_attempts = 3
        nrf.max_via = 16
        nrfs.append(nrf)

    def style():
        r = rng.random()
        return 'wrong' if r < wrong else 'dangling' if r < wrong + dangling else 'fqdn'

    for nrf in nrfs:
        seg, s = nrf.i // 10, (nrf.i % 10) // 5
        other = [k for k in range(n) if k // 10 == seg and (k % 10) // 5 != s]
        if other:
            es = []
            for k in other:
                st = style()
                es.append(Entry(None if st == 'dangling' else k, st, rng.randint(1, 2),
                                port=base_port + 20000 + nrf.i * 16 + len(es)))
            nrf.sets.append(('set%d.seg%d.nrfset.example.com' % (1 - s, seg), es))
        segs = sorted({k // 10 for k in range(n)} - {seg})
        for k in rng.sample(segs, min(3, len(segs))):
            t = rng.randrange(k * 10, min(k * 10 + 10, n))
            st = style()
            nrf.fwd.append(Entry(None if st == 'dangling' else t, st, rng.randint(1, 3),
                                 port=base_port + 40000 + nrf.i * 4 + len(nrf.fwd)))
    return Topo(nrfs)


def write(topo, directory, timeouts=None):
    """One configuration file per NRF (nrf-NNN.json) into @directory."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for nrf in topo.nrfs:
        p = os.path.join(directory, 'nrf-%03d.json' % nrf.i)
        with open(p, 'w') as f:
            json.dump(config(nrf, topo, timeouts), f, indent=1)
        paths.append(p)
    return paths
