#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit test of h2load_out.parse() (suite 'unit'; no process started)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h2load_out  # noqa: E402

SUCCESS = """starting benchmark...
spawning thread #0: 10 total client(s). 20000 total requests
Application protocol: h2c
progress: 10% done

finished in 1.25s, 16000.12 req/s, 2.34MB/s
requests: 20000 total, 20000 started, 20000 done, 19990 succeeded, 10 failed, 10 errored, 0 timeout
status codes: 19990 2xx, 0 3xx, 4 4xx, 6 5xx
traffic: 2.93MB (3072000) total, 117.19KB (120000) headers (space savings 90.00%)
"""

FAST_TLS = """TLS Protocol: TLSv1.3
Cipher: TLS_AES_256_GCM_SHA384
Server Temp Key: X25519 253 bits
Application protocol: h2

finished in 812.50ms, 2461.54 req/s, 350.00KB/s
requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 2000 2xx, 0 3xx, 0 4xx, 0 5xx
"""

REFUSED = """starting benchmark...
spawning thread #0: 1 total client(s). 10 total requests
client could not connect to host
"""


class ParseTest(unittest.TestCase):
    def test_counts_rate_and_seconds_of_a_run(self):
        r = h2load_out.parse(SUCCESS, 0)
        self.assertEqual((r['total'], r['started'], r['done'], r['succeeded'], r['failed'],
                          r['errored'], r['timeout']), (20000, 20000, 20000, 19990, 10, 10, 0))
        self.assertEqual((r['status_2xx'], r['status_3xx'], r['status_4xx'], r['status_5xx']),
                         (19990, 0, 4, 6))
        self.assertEqual(r['status'], {'2xx': 19990, '3xx': 0, '4xx': 4, '5xx': 6})
        self.assertAlmostEqual(r['seconds'], 1.25)
        self.assertAlmostEqual(r['rps'], 16000.12)
        self.assertEqual(r['cipher'], '')
        self.assertEqual(r['rc'], 0)
        self.assertIs(r['raw'], SUCCESS)

    def test_milliseconds_and_tls_lines(self):
        r = h2load_out.parse(FAST_TLS, 0)
        self.assertAlmostEqual(r['seconds'], 0.8125)
        self.assertEqual(r['succeeded'], 2000)
        self.assertEqual(r['cipher'], 'TLS Protocol: TLSv1.3 Cipher: TLS_AES_256_GCM_SHA384 ')

    def test_a_run_without_summary_has_no_counts(self):
        r = h2load_out.parse(REFUSED, 1)
        for k in ('total', 'succeeded', 'rps', 'seconds', 'status_2xx'):
            self.assertNotIn(k, r)
        self.assertIsNone(r.get('succeeded'))
        self.assertEqual(r['status'], {})
        self.assertEqual(r['rc'], 1)

    def test_benchlib_view_of_the_same_output(self):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                        'bench', 'e2e'))
        import benchlib
        b = benchlib.parse_h2load(SUCCESS)
        self.assertEqual((b['ok'], b['done'], b['failed'], b['errored']), (19990, 20000, 10, 10))
        self.assertAlmostEqual(b['rps'], 16000.12)
        self.assertAlmostEqual(b['secs'], 1.25)
        self.assertEqual(b['status']['5xx'], 6)
        e = benchlib.parse_h2load(REFUSED)
        self.assertEqual((e['ok'], e['rps'], e['status']), (0, 0.0, {}))
        self.assertNotIn('secs', e)


if __name__ == '__main__':
    unittest.main()
