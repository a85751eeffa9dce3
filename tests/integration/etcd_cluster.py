#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An etcd cluster on loopback for tests and benchmarks (Debian's etcd-server),
and a small client of etcd's JSON gateway (standard library only).

    import etcd_cluster as E
    c = E.EtcdCluster(h, members=3)      # h: a nrfwd_harness.Harness
    c.start()                             # waits until the cluster has a leader
    c.endpoints                           # "http://127.0.0.1:P1,http://..."
    E.put(c.url(0), '/nrfwd/x/config', text); E.get(c.url(0), key)
    c.kill(0); c.restart(0); c.kill_all(); c.restart_all()
    c.cleanup()                           # processes (by pid) and data dirs
    t = E.make_tls(h.tmpdir)              # a test CA, server and client certificates
    c = E.EtcdCluster(h, members=1, tls=t)  # https:// clients, certificates required
    E.put(c.url(0), key, text, ctx=c.ctx)

Every member gets free ports, its own data dir under the harness' temp dir
and a unique cluster token; the processes are registered with the harness,
so Harness.cleanup() stops them even when a test fails before c.cleanup().
"""

import base64
import json
import os
import shutil
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request

import nrfwd_harness as H

ETCD = shutil.which('etcd') or '/usr/bin/etcd'


def _b64(s):
    if isinstance(s, str):
        s = s.encode()
    return base64.b64encode(s).decode()


def call(url, path, body, timeout=2.0, ctx=None):
    """POST @body (dict) to the gateway; the answer as a dict (raises on
    transport errors and on non-200 answers). @ctx: the SSL context of an
    https:// member."""
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                 headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
        return json.loads(r.read().decode())


def put(url, key, value, timeout=2.0, ctx=None):
    """Put @key = @value; returns the new revision."""
    ans = call(url, '/v3/kv/put', {'key': _b64(key), 'value': _b64(value)}, timeout, ctx)
    return int(ans['header']['revision'])


def make_tls(d, host='127.0.0.1'):
    """A CA, a server certificate for @host and a client certificate, all
    ECDSA P-256, in folder @d: {'ca', 'cert', 'key', 'client_cert',
    'client_key'} (paths)."""
    def run(*a):
        subprocess.run(['openssl'] + list(a), cwd=d, check=True, capture_output=True,
                       stdin=subprocess.DEVNULL)
    run('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
        '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=test etcd CA')
    for name, cn, ext in (('server', host, 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth,clientAuth'
                           % host),
                          ('client', 'nrfwd', 'extendedKeyUsage=clientAuth')):
        run('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
            '-keyout', name + '.key', '-out', name + '.csr', '-subj', '/CN=' + cn)
        with open(os.path.join(d, name + '.ext'), 'w') as f:
            f.write(ext + '\n')
        run('x509', '-req', '-in', name + '.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key',
            '-CAcreateserial', '-out', name + '.pem', '-days', '2', '-extfile', name + '.ext')
    j = lambda n: os.path.join(d, n)  # noqa: E731
    return {'ca': j('ca.pem'), 'cert': j('server.pem'), 'key': j('server.key'),
            'client_cert': j('client.pem'), 'client_key': j('client.key')}


def get(url, key, prefix=False, timeout=2.0, ctx=None):
    """[(key, value, mod_revision)] of @key (or every key under it)."""
    body = {'key': _b64(key)}
    if prefix:
        end = key[:-1] + chr(ord(key[-1]) + 1)
        body['range_end'] = _b64(end)
    ans = call(url, '/v3/kv/range', body, timeout, ctx)
    out = []
    for kv in ans.get('kvs', []):
        out.append((base64.b64decode(kv['key']).decode(),
                    base64.b64decode(kv.get('value', '')).decode(),
                    int(kv.get('mod_revision', 0))))
    return out


def delete(url, key, timeout=2.0):
    call(url, '/v3/kv/deleterange', {'key': _b64(key)}, timeout)


class EtcdCluster:
    def __init__(self, harness, members=3, name='etcd', tls=None):
        """@tls: make_tls()'s files: clients on https:// with client
        certificates required (peers stay on http://)."""
        self.h = harness
        self.tls = tls
        self.ctx = None
        if tls is not None:
            self.ctx = ssl.create_default_context(cafile=tls['ca'])
            self.ctx.load_cert_chain(tls['client_cert'], tls['client_key'])
        self.n = members
        self.name = name
        self.token = '%s-%d-%d' % (name, os.getpid(), int(time.time() * 1000))
        self.client = [H.free_port() for _ in range(members)]
        self.peer = [H.free_port() for _ in range(members)]
        self.dirs = [os.path.join(harness.tmpdir, '%s-%d.data' % (name, i))
                     for i in range(members)]
        self.procs = [None] * members
        self.initial = ','.join('m%d=http://127.0.0.1:%d' % (i, self.peer[i])
                                for i in range(members))

    @property
    def endpoints(self):
        return ','.join(self.url(i) for i in range(self.n))

    def url(self, i):
        return '%s://127.0.0.1:%d' % ('https' if self.tls else 'http', self.client[i])

    def _cmd(self, i):
        tls = []
        if self.tls is not None:
            tls = ['--cert-file', self.tls['cert'], '--key-file', self.tls['key'],
                   '--trusted-ca-file', self.tls['ca'], '--client-cert-auth']
        return [ETCD, '--name', 'm%d' % i, '--data-dir', self.dirs[i]] + tls + [
                '--listen-client-urls', self.url(i),
                '--advertise-client-urls', self.url(i),
                '--listen-peer-urls', 'http://127.0.0.1:%d' % self.peer[i],
                '--initial-advertise-peer-urls', 'http://127.0.0.1:%d' % self.peer[i],
                '--initial-cluster', self.initial,
                '--initial-cluster-token', self.token,
                '--initial-cluster-state', 'new',
                # loopback: short timers make elections and restarts quick
                '--heartbeat-interval', '50', '--election-timeout', '500',
                '--log-level', 'warn', '--logger', 'zap']

    def _spawn(self, i):
        self.procs[i] = self.h._spawn('%s-m%d' % (self.name, i), self._cmd(i), self.client[i])

    def start(self, timeout=20.0):
        for i in range(self.n):
            self._spawn(i)
        self.wait_healthy(timeout)

    def wait_healthy(self, timeout=20.0, members=None):
        """Until a put through each running member works."""
        deadline = time.monotonic() + timeout
        todo = [i for i in (members if members is not None else range(self.n))
                if self.procs[i] is not None and self.procs[i].alive()]
        while todo and time.monotonic() < deadline:
            i = todo[0]
            try:
                put(self.url(i), '/health-probe/%s' % self.token, 'x', timeout=1.0,
                    ctx=self.ctx)
                todo.pop(0)
            except (OSError, urllib.error.URLError, ValueError):
                if not self.procs[i].alive():
                    raise RuntimeError('etcd member %d exited:\n%s' % (i, self.procs[i].log()))
                time.sleep(0.05)
        if todo:
            raise RuntimeError('etcd cluster not healthy after %.0f s:\n%s'
                               % (timeout, self.procs[todo[0]].log()[-3000:]))

    def kill(self, i, sig=signal.SIGKILL):
        p = self.procs[i]
        if p is not None and p.alive():
            p.stop(sig, timeout=5.0)

    def kill_all(self):
        for i in range(self.n):
            self.kill(i)

    def restart(self, i):
        """Start member @i again on its data dir (the --initial-* flags are
        ignored once the data dir holds a member)."""
        self.kill(i)
        self._spawn(i)

    def restart_all(self, timeout=20.0):
        for i in range(self.n):
            self.restart(i)
        self.wait_healthy(timeout)

    def cleanup(self):
        for i in range(self.n):
            try:
                self.kill(i)
            except Exception:  # noqa: BLE001 - cleanup goes on
                pass
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


def wait_for(pred, timeout, step=0.01):
    """Poll @pred until true; returns the seconds it took, or None."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return time.monotonic() - t0
        time.sleep(step)
    return None


def kill_pid(proc):
    try:
        os.kill(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass
