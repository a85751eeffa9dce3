#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""nrfwd's configuration from an etcd that requires TLS with client
certificates (docs/fleet.md: --etcd-cacert, --etcd-cert, --etcd-key).

Usage: python3 tests/integration/test_fleet_tls.py [--build-dir BUILD] [unittest args]

One etcd member (Debian's etcd-server) serving clients on https:// only and
requiring a client certificate signed by the test CA; the shared document
under /nrfwd/<unique>/config; nrfwd with its runtime in a file:

  1. with the CA and a client certificate: nrfwd starts from the stored
     document, answers by it (nrf-e first), and a change written to etcd
     over TLS is applied (nrf-g first);
  2. without a client certificate: etcd refuses the handshake, nrfwd
     (no cached copy) exits non-zero and says etcd was unreachable, with
     the TLS alert or the connection's end;
  3. without the CA (the system's trust store): the server certificate is
     not trusted, the same exit with curl's "SSL certificate problem".
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nrfwd_harness as H  # noqa: E402
import etcd_cluster as E  # noqa: E402
from test_fleet import answered_by, source_of  # noqa: E402


class TestFleetTls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.h = h = H.Harness(prefix='nrfwd-fleet-tls-')
        cls.cluster = None
        try:
            cls.tls = E.make_tls(h.tmpdir)
            cls.cluster = c = E.EtcdCluster(h, members=1, name='etcd-tls', tls=cls.tls)
            c.start()
            cls.key = '/nrfwd/fleet-tls-%d/config' % os.getpid()
            local = h.start_stub('local', 'stub-profiles-empty.json', extra=['--no-record'])
            e = h.start_stub('nrf-e', 'stub-profiles-e.json', extra=['--no-record'])
            g = h.start_stub('nrf-g', 'stub-profiles-e.json', extra=['--no-record'])
            doc = H.nrfwd_config('nrf-a.test', port=H.free_port(), local=local.port,
                                 peers=[H.peer('nrf-e.test', e.port, priority=1),
                                        H.peer('nrf-g.test', g.port, priority=2)])
            cls.runtime = doc['runtime']
            cls.shared = {k: v for k, v in doc.items() if k != 'runtime'}
            cls.rev0 = E.put(c.url(0), cls.key, json.dumps(cls.shared), ctx=c.ctx)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.h.cleanup(dump=bool(os.environ.get('NRFWD_TEST_LOGS')))
        finally:
            if cls.cluster is not None:
                cls.cluster.cleanup()

    def start(self, name, tls_args, wait=True):
        rt = dict(self.runtime)
        rt['listen'] = [{'address': '127.0.0.1', 'port': H.free_port(), 'tls': False}]
        return self.h.start_nrfwd({'runtime': rt}, name=name, management=True, wait=wait,
                                  extra=['--config-etcd', self.cluster.endpoints,
                                         '--config-key', self.key, '--instance-id', name,
                                         '--config-cache', 'none'] + tls_args)

    def test_1_client_certificate_document_and_changes_over_tls(self):
        t = self.tls
        a = self.start('tls-a', ['--etcd-cacert', t['ca'], '--etcd-cert', t['client_cert'],
                                 '--etcd-key', t['client_key']])
        self.assertEqual(source_of(a).get('appliedRevision'), self.rev0)
        self.assertEqual(answered_by(a), (200, 'nrf-e'))
        changed = json.loads(json.dumps(self.shared))
        for hc in changed['forwardingOptions']['nrfHostConfig']:
            hc['priority'] = 1 if hc['fqdn'] == 'nrf-g.test' else 2
        rev = E.put(self.cluster.url(0), self.key, json.dumps(changed), ctx=self.cluster.ctx)
        took = E.wait_for(lambda: source_of(a).get('appliedRevision', 0) >= rev, 5.0)
        self.assertIsNotNone(took, source_of(a))
        self.assertEqual(answered_by(a), (200, 'nrf-g'))
        E.put(self.cluster.url(0), self.key, json.dumps(self.shared), ctx=self.cluster.ctx)
        a.stop()

    def refused(self, name, tls_args):
        p = self.start(name, tls_args, wait=False)
        p.proc.wait(20)
        self.assertNotEqual(p.proc.returncode, 0, p.log())
        self.assertIn('etcd unreachable', p.log())
        line = [x for x in p.log().splitlines() if 'etcd unreachable' in x][-1]
        sys.stderr.write('\n%s: %s\n' % (name, line.split(' ', 3)[-1]))
        return p.log()

    def test_2_without_a_client_certificate_a_clear_exit(self):
        log = self.refused('tls-b', ['--etcd-cacert', self.tls['ca']])
        # the TLS 1.3 alert comes after the handshake: "bad certificate", or
        # the connection's end when the client's next send or read meets it
        self.assertRegex(log, r'etcd unreachable \(\S+: (.*alert .*certificate|'
                         r'Failure when receiving data from the peer|'
                         r'Failed sending data to the peer)')

    def test_3_without_the_ca_the_server_is_not_trusted(self):
        log = self.refused('tls-c', ['--etcd-cert', self.tls['client_cert'],
                                     '--etcd-key', self.tls['client_key']])
        self.assertRegex(log, r'etcd unreachable \(.*SSL certificate problem')


if __name__ == '__main__':
    H.parse_args(sys.argv)
    unittest.main()
