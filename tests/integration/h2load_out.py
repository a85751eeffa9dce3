# SPDX-License-Identifier: BSD-3-Clause
"""h2load's summary, parsed once for every test and benchmark.

The integration harness (nrfwd_harness.h2load), the DPDK harness
(tests/dpdk/nrfwd_dpdk_harness.parse_h2load) and the end-to-end benchmarks
(bench/e2e/benchlib.parse_h2load) all read h2load's output through parse().
Python 3 standard library only. Its unit test: test_h2load_out.py (suite
'unit').

The summary lines read (h2load 1.52):

    finished in 1.23s, 8130.08 req/s, 1.02MB/s
    requests: 10000 total, 10000 started, 10000 done, 9990 succeeded, 10 failed, 10 errored, 0 timeout
    status codes: 9990 2xx, 0 3xx, 0 4xx, 10 5xx
    TLS Protocol: TLSv1.3
    Cipher: TLS_AES_256_GCM_SHA384
"""

import re

_REQUESTS = re.compile(r'requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, '
                       r'(\d+) failed, (\d+) errored, (\d+) timeout')
_FINISHED = re.compile(r'finished in ([\d.]+)(m?s), ([\d.]+) req/s')
_STATUS = re.compile(r'status codes:((?:\s*\d+ \w+,?)+)')


def parse(out, rc=0):
    """The summary of one h2load run as a dict.

    Always: 'raw' (the output), 'rc' (its exit code), 'status' (a dict
    {'2xx': n, ...}, empty when there is no status line), 'cipher' (the TLS
    lines joined, '' without TLS). Only when h2load printed the line (a run
    that failed early has none, and callers tell that apart with .get()):
    total, started, done, succeeded, failed, errored, timeout (ints);
    status_2xx .. status_5xx (ints); seconds, rps (floats).
    """
    res = {'raw': out, 'rc': rc, 'status': {}, 'cipher': ''}
    mt = _REQUESTS.search(out)
    if mt:
        for k, v in zip(('total', 'started', 'done', 'succeeded', 'failed', 'errored',
                         'timeout'), mt.groups()):
            res[k] = int(v)
    ms = _STATUS.search(out)
    if ms:
        for part in ms.group(1).split(','):
            part = part.strip()
            if part:
                cnt, code = part.split()
                res['status'][code] = int(cnt)
        for code in ('2xx', '3xx', '4xx', '5xx'):
            if code in res['status']:
                res['status_' + code] = res['status'][code]
    mf = _FINISHED.search(out)
    if mf:
        res['seconds'] = float(mf.group(1)) / (1000.0 if mf.group(2) == 'ms' else 1.0)
        res['rps'] = float(mf.group(3))
    for line in out.splitlines():
        line = line.strip()
        if line.startswith('Cipher:') or line.startswith('TLS Protocol:'):
            res['cipher'] += line + ' '
    return res
