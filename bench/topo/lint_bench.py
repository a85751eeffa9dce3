#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""How long `nrfwd-ctl lint` takes on big generated topologies.

Usage: python3 bench/topo/lint_bench.py [--build-dir build] [--sizes 50,100,200,400]
                                        [--runs 7] [--seed 1]

Topologies: tests/integration/topo_gen.py mesh_topology(N, seed): segments of
10 NRFs, two NRF sets of 5 per segment, growth forwarding to every host of
the other set, forwarding to 3 NRFs of other segments, 2% of the entries
named wrong and 2% pointing at nothing (so lint has errors to report). One
configuration file per NRF in a temporary directory.

Methods, interleaved (run 1 of every method, then run 2, ...) after one
warm-up run each, so that a change of load on this shared machine reaches
them alike; wall time per process and its CPU time (user + system):

  load      `nrfwd-ctl trace DIR --at nrf-000 --path /x`: read, validate and
            resolve every configuration (identity databases, tables, the
            address index), then a one-hop trace: what every topology
            command pays;
  lint-1    `nrfwd-ctl lint DIR --budget 1`: everything but the long-path
            search (entries, identities, cycles with their witness walks,
            sets, patterns);
  lint      `nrfwd-ctl lint DIR`: the whole lint (path search budget 50000).

Prints the median and min-max per method and size, and lint's median over
load's. The figure the issue asks for: lint of 200 NRFs under a second.
"""

import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'integration'))
import topo_gen as G  # noqa: E402


def arg(argv, name, default):
    if name in argv:
        return argv[argv.index(name) + 1]
    return default


def run(cmd):
    """(wall seconds, cpu seconds, exit status) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r.returncode


def main(argv):
    build = arg(argv, '--build-dir', os.path.join(ROOT, 'build'))
    sizes = [int(s) for s in arg(argv, '--sizes', '50,100,200,400').split(',')]
    runs = int(arg(argv, '--runs', '7'))
    seed = int(arg(argv, '--seed', '1'))
    ctl = os.path.join(build, 'app', 'nrfwd-ctl', 'nrfwd-ctl')
    tmp = tempfile.mkdtemp(prefix='lint-bench-')
    try:
        print('%-6s %-8s %22s %22s %s' % ('NRFs', 'method', 'wall ms (min-max)',
                                          'cpu ms (min-max)', 'exit'))
        for n in sizes:
            d = os.path.join(tmp, 'n%d' % n)
            G.write(G.mesh_topology(n, random.Random(seed)), d)
            methods = [
                ('load', [ctl, 'trace', d, '--at', 'nrf-000', '--path', '/x']),
                ('lint-1', [ctl, 'lint', d, '--budget', '1']),
                ('lint', [ctl, 'lint', d]),
            ]
            res = {m: [] for m, _ in methods}
            for m, cmd in methods:
                run(cmd)  # warm-up: page cache, binary
            for _ in range(runs):
                for m, cmd in methods:
                    res[m].append(run(cmd))
            med = {}
            for m, _ in methods:
                w = [x[0] * 1e3 for x in res[m]]
                c = [x[1] * 1e3 for x in res[m]]
                med[m] = statistics.median(w)
                print('%-6d %-8s %8.0f (%4.0f-%4.0f) %8.0f (%4.0f-%4.0f) %s' % (
                    n, m, med[m], min(w), max(w), statistics.median(c), min(c), max(c),
                    sorted({x[2] for x in res[m]})))
            print('%-6d lint / load: %.2f' % (n, med['lint'] / med['load']))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
