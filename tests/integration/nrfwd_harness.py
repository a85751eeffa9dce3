#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for integration tests that run nrfwd in front of nrfstub upstreams.

Standard library only. Typical use in a unittest.TestCase:

    import nrfwd_harness as H

    def setUp(self):
        self.h = H.Harness()                  # temp dir + process registry
    def tearDown(self):
        self.h.cleanup()                      # kills by pid, even on failure

    local = self.h.start_stub('local', 'stub-profiles-a.json')
    peer = self.h.start_stub('nrf-e', 'stub-profiles-e.json', fault='status:503')
    cfg = H.nrfwd_config('nrf-a.test', local=local.port,
                         peers=[H.peer('nrf-e.test', peer.port, priority=1)])
    fwd = self.h.start_nrfwd(cfg)             # waits for "nrfwd listening on"
    status, headers, body = H.curl(fwd.url('/nnrf-disc/v1/nf-instances?...'))
    recs = H.stub_requests(peer.port)

Management API (REST configuration, metrics, health):

    fwd = self.h.start_nrfwd(cfg, management=True)   # --management 127.0.0.1:0
    st, hdrs, doc = H.api(fwd, 'GET', '/nrf-configuration/v1/forwardingOptions')
    st, hdrs, doc = H.api(fwd, 'PATCH', '/nrf-configuration/v1/forwardingOptions',
                          {'maxForwardAttempts': 2})   # merge-patch by default
    m = H.metrics(fwd)                                 # parsed /metrics
    H.metric_value(m, 'nrfwd_loop_preventions_total', peer='nrf-e.test:1234')

Module-level start_stub()/start_nrfwd()/cleanup() use one default Harness for
scripts that do not want an object. Call parse_args(sys.argv) first to pick
up --build-dir (default: build).

Every process writes stderr to a file in the harness' temp dir (never a pipe
that could fill up and block it); Proc.log() reads it, and a failing test's
logs are printed by cleanup(dump=True).
"""

import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h2load_out  # noqa: E402  (the one h2load parser)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_DIR = os.path.join(ROOT, 'build')
# e.g. NRFWD_TEST_WRAPPER="valgrind -q --error-exitcode=9" runs nrfwd under it.
WRAPPER = os.environ.get('NRFWD_TEST_WRAPPER', '').split()


def parse_args(argv):
    """Take --build-dir DIR out of @argv (in place) and remember it."""
    global BUILD_DIR
    out = [argv[0]]
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == '--build-dir' and i + 1 < len(argv):
            BUILD_DIR = argv[i + 1]
            i += 2
            continue
        if a.startswith('--build-dir='):
            BUILD_DIR = a.split('=', 1)[1]
            i += 1
            continue
        out.append(a)
        i += 1
    if not os.path.isabs(BUILD_DIR):
        BUILD_DIR = os.path.join(os.getcwd(), BUILD_DIR)
    argv[:] = out
    return out


def sanitized():
    """The b_sanitize option of the build under test ('none' when plain). An
    ASan build keeps freed memory in quarantine and runs several times
    slower: bounds about nrfwd as it ships (RSS, latency, a burst drained
    within the queue's target) are reported but not asserted there; every
    answer and timeout is."""
    try:
        with open(os.path.join(BUILD_DIR, 'meson-info', 'intro-buildoptions.json')) as f:
            opts = {o['name']: o['value'] for o in json.load(f)}
    except (OSError, ValueError):
        return 'none'
    return str(opts.get('b_sanitize', 'none'))


def binary(name):
    """Path of app/NAME/NAME in the build dir."""
    return os.path.join(BUILD_DIR, 'app', name, name)


def conf(name):
    """Path of a file under conf/."""
    return os.path.join(ROOT, 'conf', name)


_ports_given = set()


def free_port(host='127.0.0.1'):
    """A TCP port free right now on @host, never the same twice per process."""
    fam = socket.AF_INET6 if ':' in host else socket.AF_INET
    for _ in range(100):
        with socket.socket(fam, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            p = s.getsockname()[1]
        if p not in _ports_given:
            _ports_given.add(p)
            return p
    raise RuntimeError('no free port')


class Proc:
    """A started process with its port and log file."""

    def __init__(self, name, proc, port, logpath, host='127.0.0.1'):
        self.name = name
        self.proc = proc
        self.pid = proc.pid
        self.port = port
        self.host = host
        self.logpath = logpath
        self.mgmt_host = None  # management listener, when started with one
        self.mgmt_port = None

    def url(self, path='/'):
        return 'http://%s:%d%s' % (hostport_host(self.host), self.port, path)

    def api_url(self, path='/'):
        """URL on the management listener (start_nrfwd(management=True))."""
        return 'http://%s:%d%s' % (self.mgmt_host, self.mgmt_port, path)

    def log(self):
        try:
            with open(self.logpath, 'rb') as f:
                return f.read().decode('utf-8', 'replace')
        except OSError:
            return ''

    def alive(self):
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=10.0):
        """Send @sig and wait; SIGKILL after @timeout. Returns the exit code."""
        if self.proc.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.proc.wait(5)
        return self.proc.returncode


def _wait_for_line(proc, pattern, timeout):
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern)
    while time.monotonic() < deadline:
        if rx.search(proc.log()):
            return True
        if not proc.alive():
            return False
        time.sleep(0.02)
    return False


def hostport_host(host):
    """@host as it goes before ':port' in a URL: an IPv6 literal bracketed."""
    return '[%s]' % host if ':' in host and not host.startswith('[') else host


def peer(fqdn, port, priority=1, ipv4='127.0.0.1', api_prefix='', scheme='http', **extra):
    """One nrfHostConfig entry (forwarding peer or growth set host)."""
    d = {'apiVersion': 'v1', 'scheme': scheme, 'fqdn': fqdn, 'port': port,
         'apiPrefix': api_prefix, 'priority': priority}
    if ipv4:
        d['ipv4Address'] = ipv4
    d.update(extra)
    return d


def nrfwd_config(host, port=None, local=None, peers=(), growth_sets=None,
                 timeouts=None, limits=None, forwarding=None, listen_host='127.0.0.1',
                 error_responses=None):
    """A configuration document (docs/config.md) for one nrfwd on loopback.

    @host/@port: ocnrfHost/ocnrfPort (port: a free one when None; nrfwd
    listens on it). @local: local NRF port on 127.0.0.1 (None: pure
    forwarder). @peers: forwarding peers (see peer()). @growth_sets: list of
    (nrfSetId, [peer(...)]) for NRF Growth forwarding. @timeouts/@limits/
    @forwarding: dicts merged over the defaults used here.
    """
    if port is None:
        port = free_port(listen_host)
    fwd = {
        'featureStatus': 'ENABLED' if peers else 'DISABLED',
        'discoveryStatus': 'ENABLED', 'profileRetrievalStatus': 'ENABLED',
        'subscriptionStatus': 'ENABLED', 'accessTokenStatus': 'ENABLED',
        'forwardingTriggers': {'statusCodes': {'pattern': '^404$'},
                               'emptyDiscoveryResult': True},
        'nrfRerouteOnResponseHttpStatusCodes': {'pattern': '^5[0-9]{2}$'},
        'maxForwardAttempts': 3, 'maxViaMembers': 16,
        'nrfHostConfig': list(peers),
        'errorResponses': list(error_responses or []),
    }
    if forwarding:
        fwd.update(forwarding)
    doc = {
        'generalOptions': {'ocnrfHost': host, 'ocnrfPort': port},
        'forwardingOptions': fwd,
        'runtime': {
            'listen': [{'address': listen_host, 'port': port, 'tls': False}],
            'management': {'address': '127.0.0.1', 'port': 0},
            'timeouts': {'connectMs': 500, 'perTryMs': 1000, 'requestMs': 4000},
            'limits': {'maxConnections': 1000, 'maxConcurrentStreams': 128,
                       'maxHeaderBytes': 16384, 'maxBodyBytes': 1048576},
        },
    }
    if growth_sets:
        doc['nrfGrowth'] = {'nrfForwardingOptions': {
            'featureStatus': 'ENABLED', 'loopPreventionScope': 'HOST',
            'nrfHostConfig': {'staticNrfConfigList': [
                {'nrfSetId': sid, 'nrfHostConfigList': list(hosts)}
                for sid, hosts in growth_sets]},
            'errorResponses': []}}
    if local is not None:
        doc['runtime']['localNrf'] = {'scheme': 'http', 'address': '127.0.0.1',
                                      'port': local}
    if timeouts:
        doc['runtime']['timeouts'].update(timeouts)
    if limits:
        doc['runtime']['limits'].update(limits)
    return doc


class Harness:
    """Starts processes, remembers them, and stops them all in cleanup()."""

    def __init__(self, prefix='nrfwd-it-'):
        self.tmpdir = tempfile.mkdtemp(prefix=prefix)
        self.procs = []
        self._n = 0

    def _log(self, name):
        self._n += 1
        os.makedirs(self.tmpdir, exist_ok=True)  # again after a cleanup()
        return os.path.join(self.tmpdir, '%02d-%s.log' % (self._n, name))

    def _spawn(self, name, cmd, port, host='127.0.0.1'):
        logpath = self._log(name)
        with open(logpath, 'wb') as log:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        proc = Proc(name, p, port, logpath, host)
        self.procs.append(proc)
        return proc

    def start_stub(self, name, profiles='stub-profiles-a.json', fault=None, port=None,
                   extra=(), timeout=10.0):
        """Start nrfstub @name (profiles: a file under conf/ or a path) on
        127.0.0.1; @fault e.g. 'delay:3000', 'status:503', 'reset', 'close',
        'blackhole', 'drop', 'bigdrop:16384:300'. @port: a given port (a
        restart on the port of a stopped stub). Waits until it listens.
        Returns a Proc (.port, .url())."""
        port = port or free_port()
        prof = profiles if os.path.isabs(profiles) else conf(profiles)
        cmd = [binary('nrfstub'), '--listen', '127.0.0.1:%d' % port, '--profiles', prof,
               '--name', name] + (['--fault', fault] if fault else []) + list(extra)
        proc = self._spawn(name, cmd, port)
        if not _wait_for_line(proc, r'nrfstub %s listening on' % re.escape(name), timeout):
            raise RuntimeError('nrfstub %s did not start:\n%s' % (name, proc.log()))
        return proc

    def start_nrfwd(self, config, workers=1, extra=(), name='nrfwd', timeout=10.0,
                    wait=True, log_level='info', management=False, token_file=None):
        """Write @config (dict) to the temp dir and start nrfwd on it; a str
        @config is the path of an existing file, used as it is (e.g. to
        restart on a file the REST API rewrote). With @wait, returns once
        "nrfwd listening on" was logged (raises if it exits first). Returns
        a Proc whose .port is the first listen port.

        @management: True starts the management listener on 127.0.0.1 with a
        free port (--management 127.0.0.1:0; the port is learnt from the
        "nrfwd management on" line: Proc.mgmt_port, Proc.api_url()); a str
        is passed as ADDR:PORT. @token_file: --api-token-file."""
        if isinstance(config, str):
            path = config
            with open(path) as f:
                config = json.load(f)
        else:
            os.makedirs(self.tmpdir, exist_ok=True)  # again after a cleanup()
            path = os.path.join(self.tmpdir, '%s-%d.json' % (name, self._n + 1))
            with open(path, 'w') as f:
                json.dump(config, f, indent=2)
        port = config['runtime']['listen'][0]['port']
        host = config['runtime']['listen'][0].get('address', '127.0.0.1')
        cmd = WRAPPER + [binary('nrfwd'), '--config', path, '--workers', str(workers),
                         '--log-level', log_level] + list(extra)
        if management:
            cmd += ['--management',
                    management if isinstance(management, str) else '127.0.0.1:0']
        if token_file:
            cmd += ['--api-token-file', token_file]
        proc = self._spawn(name, cmd, port, host)
        proc.config_path = path
        if wait and not _wait_for_line(proc, r'nrfwd listening on', timeout):
            raise RuntimeError('nrfwd did not start:\n%s' % proc.log())
        if wait and management:
            rx = r'nrfwd management on (\[[0-9a-fA-F:.]+\]|[0-9.]+):(\d+)'
            if not _wait_for_line(proc, rx, timeout):
                raise RuntimeError('nrfwd management listener did not start:\n%s'
                                   % proc.log())
            mt = re.search(rx, proc.log())
            proc.mgmt_host = mt.group(1)
            proc.mgmt_port = int(mt.group(2))
        return proc

    def cleanup(self, dump=False):
        """Stop every process started here (SIGTERM, then SIGKILL), by pid."""
        for p in reversed(self.procs):
            try:
                p.stop(signal.SIGTERM, timeout=5.0)
            except Exception:  # noqa: BLE001 - cleanup must go on
                try:
                    os.kill(p.pid, signal.SIGKILL)
                except OSError:
                    pass
            if dump:
                sys.stderr.write('---- %s (pid %d) log ----\n%s\n' % (p.name, p.pid, p.log()))
        self.procs = []
        # The logs and configurations go too, unless they were asked for
        # (NRFWD_TEST_LOGS dumps them; NRFWD_KEEP_TMP keeps the folder).
        if not dump and not os.environ.get('NRFWD_KEEP_TMP'):
            shutil.rmtree(self.tmpdir, ignore_errors=True)


def curl(url, method='GET', headers=(), data=None, timeout=10.0, http2=True, prefix=()):
    """One request with curl (HTTP/2 prior knowledge): (status, headers, body).

    @headers: iterable of "Name: value" strings or (name, value) pairs.
    @data: bytes/str body (sent byte for byte). Status 0 when no answer.
    @prefix: command words run before curl, e.g. ['ip', 'netns', 'exec', NS].
    Returned headers: dict of lower-case name -> list of values.
    """
    with tempfile.TemporaryDirectory(prefix='curl-') as d:
        hfile = os.path.join(d, 'h')
        bfile = os.path.join(d, 'b')
        cmd = ['curl', '-s', '-S', '-g', '-D', hfile, '-o', bfile,
               '-w', '%{http_code}', '--max-time', str(timeout)]
        # -X HEAD would make curl wait for a body that never comes.
        cmd += ['-I'] if method == 'HEAD' else ['-X', method]
        if http2:
            cmd.append('--http2-prior-knowledge')
        for h in headers:
            cmd += ['-H', h if isinstance(h, str) else '%s: %s' % h]
        if data is not None:
            dfile = os.path.join(d, 'd')
            with open(dfile, 'wb') as f:
                f.write(data.encode() if isinstance(data, str) else data)
            cmd += ['--data-binary', '@' + dfile]
        cmd.append(url)
        r = subprocess.run(list(prefix) + cmd, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout + 5)
        try:
            status = int(r.stdout.decode().strip() or '0')
        except ValueError:
            status = 0
        hdrs = {}
        if os.path.exists(hfile):
            with open(hfile, 'rb') as f:
                for line in f.read().decode('latin-1').splitlines():
                    if ':' in line and not line.startswith('HTTP/'):
                        k, v = line.split(':', 1)
                        hdrs.setdefault(k.strip().lower(), []).append(v.strip())
        body = b''
        if os.path.exists(bfile):
            with open(bfile, 'rb') as f:
                body = f.read()
        return status, hdrs, body


def write_big_profiles(path, extra_amf=24, base='stub-profiles-a.json'):
    """Write a profiles file to @path: @base (under conf/) plus @extra_amf
    copies of its first AMF profile with new ids. With the A set, an AMF
    discovery answer is then about 30 KB (over nrfstub's bigdrop limit of
    16 KiB) while `limit=1`, SMF discovery and profile answers stay near
    1.3 KB. Returns @path."""
    with open(conf(base)) as f:
        doc = json.load(f)
    amf = next(p for p in doc['nfProfiles'] if p['nfType'] == 'AMF')
    for i in range(extra_amf):
        p = json.loads(json.dumps(amf))
        p['nfInstanceId'] = '5a1f0b6e-6f0a-4c1e-9a01-0000000b%04d' % i
        p['nfInstanceName'] = 'amf-big-%d' % i
        doc['nfProfiles'].append(p)
    with open(path, 'w') as f:
        json.dump(doc, f)
    return path


def rss_bytes(pid):
    """VmRSS of process @pid in bytes; None when it is gone."""
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def stub_requests(port, since=0, limit=0):
    """Requests recorded by the nrfstub on @port (list of dicts, oldest first)."""
    q = []
    if since:
        q.append('since=%d' % since)
    if limit:
        q.append('limit=%d' % limit)
    url = 'http://127.0.0.1:%d/_stub/requests%s' % (port, ('?' + '&'.join(q)) if q else '')
    status, _, body = curl(url)
    if status != 200:
        raise RuntimeError('GET /_stub/requests on %d: %d' % (port, status))
    return json.loads(body)


def stub_clear(port):
    """Forget the requests recorded by the nrfstub on @port."""
    curl('http://127.0.0.1:%d/_stub/requests' % port, method='DELETE')


def stub_fault(port, mode, arg=None, count=None, hold=None):
    """Set the fault mode of the nrfstub on @port (PUT /_stub/fault);
    @hold: bigdrop's hold in ms."""
    doc = {'mode': mode}
    if arg is not None:
        doc['arg'] = arg
    if count is not None:
        doc['count'] = count
    if hold is not None:
        doc['hold'] = hold
    status, _, body = curl('http://127.0.0.1:%d/_stub/fault' % port, method='PUT',
                           headers=['content-type: application/json'],
                           data=json.dumps(doc))
    if status != 200:
        raise RuntimeError('PUT /_stub/fault on %d: %d %s' % (port, status, body))


def _h2load_parse(out, rc):
    """h2load_out.parse(): one parser for tests and benchmarks."""
    return h2load_out.parse(out, rc)


def h2load(url, n=1000, c=10, m=10, threads=1, timeout=120, extra=()):
    """Run h2load; returns a dict: total, succeeded, failed, errored, timeout,
    status_2xx..5xx, rps, seconds, and the raw output."""
    cmd = ['h2load', '-n', str(n), '-c', str(c), '-m', str(m), '-t', str(threads)]
    cmd += list(extra) + [url]
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    return _h2load_parse(r.stdout.decode('utf-8', 'replace'), r.returncode)


class H2loadRun:
    """h2load running in the background (see h2load_start())."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def running(self):
        return self.proc.poll() is None

    def stop(self):
        """Kill it if it still runs (cleanup after a failure)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()

    def wait(self, timeout=120):
        """Wait for the end; returns the dict of h2load()."""
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        return _h2load_parse(out.decode('utf-8', 'replace'), self.proc.returncode)


def h2load_start(url, seconds=None, n=None, c=4, m=8, rps=None, threads=1, extra=()):
    """Start h2load in the background: for @seconds (-D) or @n requests, @c
    clients, @m streams each, at most @rps requests/s per client. Returns an
    H2loadRun; call .wait() for the result dict."""
    cmd = ['h2load', '-c', str(c), '-m', str(m), '-t', str(threads)]
    cmd += ['-D', str(seconds)] if seconds else ['-n', str(n or 1000)]
    if rps:
        cmd += ['--rps', str(rps)]
    return H2loadRun(cmd + list(extra) + [url])


def api(target, method, path, body=None, content_type=None, token=None, headers=None,
        timeout=10.0):
    """One HTTP/1.1 request to the management listener of @target (a Proc
    started with management=True, or 'host:port'). @body: dict/list (sent
    as JSON), str or bytes. @content_type: default application/json for PUT,
    application/merge-patch+json for PATCH. Returns (status, headers dict with
    lower-case names, body parsed as JSON when it is JSON, else text)."""
    if isinstance(target, str):
        host, port = target.rsplit(':', 1)
    else:
        host, port = target.mgmt_host, target.mgmt_port
    conn = http.client.HTTPConnection(host.strip('[]'), int(port), timeout=timeout)
    hdrs = dict(headers or {})
    data = None
    if body is not None:
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode()
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = body
        if content_type is None:
            content_type = ('application/merge-patch+json' if method == 'PATCH'
                            else 'application/json')
    if content_type:
        hdrs['Content-Type'] = content_type
    if token:
        hdrs['Authorization'] = 'Bearer ' + token
    try:
        conn.request(method, path, body=data, headers=hdrs)
        r = conn.getresponse()
        raw = r.read()
        rh = {k.lower(): v for k, v in r.getheaders()}
        status = r.status
    finally:
        conn.close()
    text = raw.decode('utf-8', 'replace')
    ctype = rh.get('content-type', '')
    if 'json' in ctype and text.strip():
        return status, rh, json.loads(text)
    return status, rh, text


_METRIC_RX = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
_LABEL_RX = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """Prometheus text format -> {(name, ((label, value), ...)): float}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        mt = _METRIC_RX.match(line)
        if not mt:
            raise ValueError('bad metrics line: %r' % line)
        labels = tuple(sorted(_LABEL_RX.findall(mt.group(2) or '')))
        out[(mt.group(1), labels)] = float(mt.group(3))
    return out


def metrics(target):
    """GET /metrics of @target (see api()), parsed with parse_metrics()."""
    status, _, text = api(target, 'GET', '/metrics')
    if status != 200:
        raise RuntimeError('GET /metrics: %d %s' % (status, text))
    return parse_metrics(text)


def metric_value(m, name, **labels):
    """Sum of the series of @name whose labels include @labels (0 if none)."""
    total = 0.0
    want = set(labels.items())
    for (n, ls), v in m.items():
        if n == name and want <= set(ls):
            total += v
    return total


def sha256_hex(data):
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


# Module-level convenience: one default harness.
_default = None


def _h():
    global _default
    if _default is None:
        _default = Harness()
    return _default


def start_stub(name, profiles='stub-profiles-a.json', fault=None, **kw):
    """start_stub() of the default Harness: returns a Proc (.proc, .port)."""
    return _h().start_stub(name, profiles, fault, **kw)


def start_nrfwd(config, **kw):
    """start_nrfwd() of the default Harness: returns a Proc (.proc, .port)."""
    return _h().start_nrfwd(config, **kw)


def cleanup(dump=False):
    """Stop everything started through the module-level functions."""
    if _default is not None:
        _default.cleanup(dump)
