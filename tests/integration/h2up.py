# SPDX-License-Identifier: BSD-3-Clause
"""A raw HTTP/2 upstream (server side written by hand) and a small HTTP/2
client, for tests of nrfwd's upstream (peer session) leg.

RawUpstream listens on 127.0.0.1 and serves each accepted connection in a
thread of its own. It sends the frames a test asks for byte by byte (odd
ones included), answers SETTINGS and PING like any server unless told not
to, keeps what nrfwd sent (every frame, with the time), and checks the
flow-control rules nrfwd must obey towards it (RFC 9113 §6.9): every DATA
frame against the windows this server granted, with a change of
SETTINGS_INITIAL_WINDOW_SIZE applied to open streams (§6.9.2) — an
increase from the moment it is sent, a decrease once nrfwd acknowledged
it, the reading that never blames nrfwd for a frame that was legal when it
was sent. Its own DATA obeys nrfwd's windows unless a test forces it.
What else nrfwd owes a server is checked on every connection too and
listed by violations(): the preface, frame sizes within this server's
SETTINGS_MAX_FRAME_SIZE, odd and increasing stream ids, well-formed
SETTINGS with values in range, WINDOW_UPDATE increments above 0 and
windows within 2^31-1, request header blocks that decode with this
server's HPACK decoder (kept within the SETTINGS_HEADER_TABLE_SIZE it
announced, RFC 7541 §4.2), request fields by RFC 9113 §8.2/§8.3.1
(request_problems()), content-length equal to the body.

A test gives the upstream an `on_request(conn, st)` callback, called in
the connection's thread when a request is complete (END_STREAM), and
optionally `on_headers` (header block complete) and `on_data` (each DATA
frame). Callbacks must not block: conn.later(delay, fn) runs fn in the
same thread later.

Client: a thin HTTP/2 client on Debian's python3-h2 (h2, hpack): requests
on one connection, bodies sent under nrfwd's flow control, and per stream
what came back (status, fields, interim answers, body, trailers, reset).

Standard library plus python3-h2 / python3-hpack (Debian packages; the
path is appended when the python3 found first does not see them).
"""

import select
import socket
import struct
import sys
import threading
import time

try:
    import hpack  # noqa: E402
    import h2.config  # noqa: E402
    import h2.connection  # noqa: E402
    import h2.events  # noqa: E402
    import h2.exceptions  # noqa: E402
    import h2.settings  # noqa: E402
except ImportError:
    sys.path.append('/usr/lib/python3/dist-packages')
    import hpack  # noqa: E402
    import h2.config  # noqa: E402
    import h2.connection  # noqa: E402
    import h2.events  # noqa: E402
    import h2.exceptions  # noqa: E402
    import h2.settings  # noqa: E402

from h2frames import (  # noqa: E402,F401 (re-exported: from h2up import ...)
    ACK, CANCEL, COMPRESSION_ERROR, CONNECTION_SPECIFIC, CONNECT_ERROR, CONTINUATION, DATA,
    DEFAULT_WINDOW, END_HEADERS, END_STREAM, ENHANCE_YOUR_CALM, FLOW_CONTROL_ERROR, FRAME_NAMES,
    FRAME_SIZE_ERROR, GOAWAY, HEADERS, INTERNAL_ERROR, MAX_WINDOW, NO_ERROR, PADDED, PING,
    PREFACE, PRIORITY, PRIORITY_FLAG, PROTOCOL_ERROR, PUSH_PROMISE, REFUSED_STREAM, RST_STREAM,
    SETTINGS, SETTINGS_TIMEOUT, STREAM_CLOSED, S_ENABLE_PUSH, S_HEADER_TABLE_SIZE,
    S_INITIAL_WINDOW_SIZE, S_MAX_CONCURRENT_STREAMS, S_MAX_FRAME_SIZE, S_MAX_HEADER_LIST_SIZE,
    WINDOW_UPDATE, error_code, fname, frame, goaway, hpack_int, lit, rst, settings_frame,
    window_update)


class Frame:
    """A frame nrfwd sent to the upstream."""
    __slots__ = ('type', 'flags', 'sid', 'payload', 't')

    def __init__(self, ftype, flags, sid, payload, t):
        self.type, self.flags, self.sid, self.payload, self.t = ftype, flags, sid, payload, t

    @property
    def code(self):
        return error_code(self.type, self.payload)

    def settings(self):
        p = self.payload
        return [struct.unpack('>HI', p[i:i + 6]) for i in range(0, len(p) - len(p) % 6, 6)]

    def __repr__(self):
        c = self.code
        return '%s(sid %d, flags 0x%x, %d bytes%s)' % (
            fname(self.type), self.sid, self.flags, len(self.payload),
            '' if c is None else ', code %d' % c)


class Stream:
    """A request nrfwd sent upstream, as this upstream saw it."""

    def __init__(self, conn, sid, t):
        self.conn = conn
        self.sid = sid
        self.t_open = t
        self.fields = []          # decoded header block, in order
        self.trailers = []
        self.body = bytearray()
        self.data_frames = []     # payload length of each DATA frame (padding included)
        self.ended = False        # END_STREAM received
        self.closed = False       # this side ended it (END_STREAM or RST_STREAM sent)
        self.recv_window = conn.recv_initial  # what nrfwd may still send on it
        self.send_window = conn.send_initial  # what this upstream may still send
        self.user = {}

    def field(self, name):
        for k, v in self.fields:
            if k == name:
                return v
        return None

    @property
    def path(self):
        return self.field(':path')

    @property
    def method(self):
        return self.field(':method')


class UpConn:
    """One connection accepted by a RawUpstream (one thread)."""

    def __init__(self, up, sock, idx):
        self.up = up
        self.s = sock
        self.idx = idx
        self.t0 = time.monotonic()
        self.lock = threading.RLock()
        self.frames = []          # every frame nrfwd sent, in order
        self.preface = None       # the first 24 bytes nrfwd sent
        self.streams = {}         # sid -> Stream
        self.order = []           # stream ids in the order nrfwd opened them
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.dec.max_header_list_size = 1 << 24
        self.block = None         # (sid, bytes, is_trailer) of a header block being read
        self.violations = []      # flow-control or protocol rules nrfwd broke
        self.closed = False       # nrfwd closed it (EOF) or it was closed here
        self.t_closed = None
        self.timers = []          # (due, fn)
        self.out = []             # (sid, bytearray, end, max_frame) flow-controlled DATA queued
        # what nrfwd may send here (RFC 9113 §6.9): this upstream's grants
        self.recv_conn = DEFAULT_WINDOW
        self.recv_initial = DEFAULT_WINDOW
        self.settings_sent = []   # [(pairs)] not yet acknowledged, in order
        self.acks_received = 0
        # what this upstream may send to nrfwd: nrfwd's grants
        self.send_conn = DEFAULT_WINDOW
        self.send_initial = DEFAULT_WINDOW
        self.peer_settings = {}   # nrfwd's SETTINGS, as applied
        self.max_open = 0         # most streams open at once (HEADERS seen, not closed
        #                           here) once nrfwd acknowledged this side's SETTINGS
        self.max_open_early = 0   # the same before that (RFC 9113 §6.5.2: no limit yet)
        self.sent_wu = []         # (sid, increment) WINDOW_UPDATEs this side sent

    # -- sending -----------------------------------------------------------

    def send(self, *chunks):
        data = b''.join(chunks)
        if not data:
            return
        try:
            self.s.sendall(data)
        except OSError:
            self.closed = True

    def send_settings(self, *pairs):
        """SETTINGS from this upstream. An increase of INITIAL_WINDOW_SIZE
        counts from now, a decrease once nrfwd acknowledged it."""
        with self.lock:
            self.settings_sent.append(pairs)
            for k, v in pairs:
                if k == S_INITIAL_WINDOW_SIZE and v > self.recv_initial:
                    self._apply_recv_initial(v)
        self.send(settings_frame(*pairs))

    def _apply_recv_initial(self, v):
        delta = v - self.recv_initial
        self.recv_initial = v
        for st in self.streams.values():
            if not st.ended:
                st.recv_window += delta

    def grant(self, sid, inc):
        """WINDOW_UPDATE(@sid, @inc) to nrfwd, counted in the windows checked."""
        with self.lock:
            if sid == 0:
                self.recv_conn += inc
            elif sid in self.streams:
                self.streams[sid].recv_window += inc
            self.sent_wu.append((sid, inc))
        self.send(window_update(sid, inc))

    def encode(self, fields, huffman=True):
        """A header block from this connection's HPACK encoder (Huffman,
        dynamic table)."""
        return self.enc.encode(fields, huffman=huffman)

    def headers(self, sid, block, end=False, pad=None, priority=None, split=None):
        """An answer header block on @sid: @block bytes (or a field list,
        encoded with encode()). @pad: padding length (PADDED); @priority:
        (dependency, exclusive, weight) (PRIORITY flag); @split: sizes of
        the first pieces, the rest in CONTINUATION frames."""
        if not isinstance(block, (bytes, bytearray)):
            block = self.encode(block)
        pieces = []
        if split:
            pos = 0
            for n in split:
                pieces.append(block[pos:pos + n])
                pos += n
            pieces.append(block[pos:])
        else:
            pieces = [block]
        flags = END_STREAM if end else 0
        first = pieces[0]
        pre = b''
        if priority is not None:
            dep, excl, weight = priority
            pre = struct.pack('>I', dep | (0x80000000 if excl else 0)) + bytes([weight])
            flags |= PRIORITY_FLAG
        if pad is not None:
            first = bytes([pad]) + pre + first + b'\0' * pad
            flags |= PADDED
        else:
            first = pre + first
        out = []
        for i, p in enumerate(pieces):
            last = i == len(pieces) - 1
            if i == 0:
                out.append(frame(HEADERS, flags | (END_HEADERS if last else 0), sid, first))
            else:
                out.append(frame(CONTINUATION, END_HEADERS if last else 0, sid, p))
        if end:
            self._close_stream(sid)
        self.send(*out)

    def data(self, sid, payload, end=False, pad=None, force=False, max_frame=16384):
        """DATA on @sid. Obeys nrfwd's windows (queued until they allow)
        unless @force: then sent at once in frames of @max_frame, whatever
        the windows say. @pad: padding per frame (PADDED)."""
        if force:
            out = []
            pos = 0
            while True:
                chunk = payload[pos:pos + max_frame]
                pos += len(chunk)
                last = pos >= len(payload)
                out.append(frame(DATA, END_STREAM if (end and last) else 0, sid, chunk))
                if last:
                    break
            with self.lock:
                self.send_conn -= len(payload)
                if sid in self.streams:
                    self.streams[sid].send_window -= len(payload)
                if end:
                    self._close_stream(sid)
            self.send(*out)
            return
        with self.lock:
            self.out.append([sid, bytearray(payload), end, pad, max_frame])
        self._flush()

    def answer(self, sid, status=200, fields=(), body=b'', trailers=None):
        """A plain answer (HEADERS from the encoder, DATA under flow control)."""
        hd = [(':status', str(status))] + list(fields)
        self.headers(sid, hd, end=not body and trailers is None)
        if body:
            self.data(sid, body, end=trailers is None)
        if trailers is not None:
            self.later(0, lambda: self._trailers_when_sent(sid, trailers))

    def _trailers_when_sent(self, sid, trailers):
        with self.lock:
            pending = any(o[0] == sid for o in self.out)
        if pending:
            self.later(0.005, lambda: self._trailers_when_sent(sid, trailers))
            return
        self.headers(sid, trailers, end=True)

    def _close_stream(self, sid):
        st = self.streams.get(sid)
        if st is not None:
            st.closed = True

    def later(self, delay, fn):
        with self.lock:
            self.timers.append((time.monotonic() + delay, fn))

    def when(self, pred, fn, poll=0.005, timeout=5.0):
        """Run fn() in this connection's thread once pred() holds (checked
        every @poll s, given up after @timeout s)."""
        end = time.monotonic() + timeout

        def check():
            if pred():
                fn()
            elif time.monotonic() < end:
                self.later(poll, check)
        self.later(0, check)

    def pending(self, sid):
        """DATA of @sid still queued (waiting for nrfwd's windows)."""
        with self.lock:
            return any(o[0] == sid for o in self.out)

    def _flush(self):
        """Send queued DATA as far as nrfwd's windows allow."""
        out = []
        with self.lock:
            keep = []
            for item in self.out:
                sid, buf, end, pad, mx = item
                st = self.streams.get(sid)
                if st is None or (st.closed and buf):
                    continue
                overhead = (pad + 1) if pad is not None else 0
                while buf or end:
                    room = min(self.send_conn, st.send_window) - overhead
                    n = min(len(buf), mx - overhead, max(room, 0))
                    if n <= 0 and buf:
                        break
                    chunk = bytes(buf[:n])
                    del buf[:n]
                    last = end and not buf
                    p = chunk if pad is None else bytes([pad]) + chunk + b'\0' * pad
                    out.append(frame(DATA, (END_STREAM if last else 0) |
                                     (PADDED if pad is not None else 0), sid, p))
                    self.send_conn -= len(p)
                    st.send_window -= len(p)
                    if last:
                        st.closed = True
                        end = False
                    if not buf:
                        break
                if buf or end:
                    item[2] = end
                    keep.append(item)
            self.out = keep
        self.send(*out)

    def close(self):
        self.closed = True
        try:
            self.s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.s.close()
        except OSError:
            pass

    # -- what nrfwd sent ----------------------------------------------------

    def find(self, ftype, sid=None, after=None):
        with self.lock:
            for f in self.frames:
                if f.type == ftype and (sid is None or f.sid == sid) and \
                        (after is None or f.t >= after):
                    return f
        return None

    def all(self, ftype, sid=None):
        with self.lock:
            return [f for f in self.frames if f.type == ftype and (sid is None or f.sid == sid)]

    def open_streams(self):
        return sum(1 for st in self.streams.values() if not st.closed)

    # -- the connection's thread -------------------------------------------

    def serve(self):
        buf = b''
        try:
            self.s.setblocking(False)
            if self.up.settings is not None:
                self.send_settings(*self.up.settings)
            while not self.closed and not self.up.done:
                with self.lock:
                    due = [t for t in self.timers if t[0] <= time.monotonic()]
                    self.timers = [t for t in self.timers if t[0] > time.monotonic()]
                for _, fn in sorted(due, key=lambda t: t[0]):
                    fn()
                if self.closed:
                    break
                try:
                    r, _, _ = select.select([self.s], [], [], 0.005 if self.timers else 0.05)
                except (OSError, ValueError):
                    break  # closed by close()
                if not r:
                    continue
                try:
                    d = self.s.recv(262144)
                except BlockingIOError:
                    continue
                except OSError:
                    d = b''
                if not d:
                    break
                buf += d
                if self.preface is None:
                    if len(buf) < len(PREFACE):
                        continue
                    self.preface = buf[:len(PREFACE)]
                    buf = buf[len(PREFACE):]
                    if self.preface != PREFACE:
                        self.violations.append('bad preface %r' % self.preface)
                        break
                while len(buf) >= 9 and not self.closed:
                    ln = struct.unpack('>I', b'\0' + buf[:3])[0]
                    if len(buf) < 9 + ln:
                        break
                    f = Frame(buf[3], buf[4], struct.unpack('>I', buf[5:9])[0] & 0x7fffffff,
                              buf[9:9 + ln], time.monotonic())
                    buf = buf[9 + ln:]
                    with self.lock:
                        self.frames.append(f)
                    self._on_frame(f)
                self._flush()
        except OSError:
            pass  # closed under it (RawUpstream.close())
        finally:
            self.t_closed = time.monotonic()
            self.closed = True
            try:
                self.s.close()
            except OSError:
                pass

    def _on_frame(self, f):
        up = self.up
        mfs = self.up.max_frame_size
        if len(f.payload) > mfs:
            self.violations.append('%r over this upstream\'s MAX_FRAME_SIZE %d' % (f, mfs))
        if f.type == SETTINGS:
            if f.flags & ACK:
                with self.lock:
                    self.acks_received += 1
                    if self.settings_sent:
                        for k, v in self.settings_sent.pop(0):
                            if k == S_INITIAL_WINDOW_SIZE and v < self.recv_initial:
                                self._apply_recv_initial(v)
                            elif k == S_HEADER_TABLE_SIZE:
                                # from now on the encoder of nrfwd must keep its
                                # table within v, and signal a smaller size at
                                # the start of its next block (RFC 7541 §4.2);
                                # hpack's decoder then refuses a block that
                                # does not (as nghttp2's inflater does)
                                self.dec.max_allowed_table_size = v
                return
            if len(f.payload) % 6 or f.sid != 0:
                self.violations.append('malformed SETTINGS %r' % f)
            with self.lock:
                for k, v in f.settings():
                    if (k == S_ENABLE_PUSH and v > 1) or \
                            (k == S_INITIAL_WINDOW_SIZE and v > MAX_WINDOW) or \
                            (k == S_MAX_FRAME_SIZE and not 16384 <= v <= 16777215):
                        self.violations.append('SETTINGS %d = %d out of range' % (k, v))
                    if k == S_INITIAL_WINDOW_SIZE:
                        delta = v - self.send_initial
                        self.send_initial = v
                        for st in self.streams.values():
                            st.send_window += delta
                    self.peer_settings[k] = v
            if up.auto_settings_ack:
                self.send(frame(SETTINGS, ACK, 0))
        elif f.type == PING:
            if not f.flags & ACK and up.auto_ping:
                self.send(frame(PING, ACK, 0, f.payload))
        elif f.type == WINDOW_UPDATE:
            inc = struct.unpack('>I', f.payload[:4])[0] & 0x7fffffff
            if inc == 0 or len(f.payload) != 4:
                self.violations.append('WINDOW_UPDATE of %d (%r)' % (inc, f))
            with self.lock:
                if f.sid == 0:
                    self.send_conn += inc
                    if self.send_conn > MAX_WINDOW:
                        self.violations.append('connection window over 2^31-1')
                elif f.sid in self.streams:
                    st = self.streams[f.sid]
                    st.send_window += inc
                    if st.send_window > MAX_WINDOW and not st.closed:
                        self.violations.append('window of stream %d over 2^31-1' % f.sid)
        elif f.type == HEADERS:
            p = f.payload
            if f.flags & PADDED:
                p = p[1:len(p) - p[0]]
            if f.flags & PRIORITY_FLAG:
                p = p[5:]
            with self.lock:
                trailer = f.sid in self.streams
                if not trailer:
                    if f.sid % 2 == 0 or (self.order and f.sid <= self.order[-1]):
                        self.violations.append('stream id %d after %s' % (f.sid, self.order))
                    st = Stream(self, f.sid, f.t)
                    self.streams[f.sid] = st
                    self.order.append(f.sid)
                    if self.acks_received:
                        self.max_open = max(self.max_open, self.open_streams())
                    else:
                        self.max_open_early = max(self.max_open_early, self.open_streams())
            self.block = (f.sid, p, trailer, bool(f.flags & END_STREAM))
            if f.flags & END_HEADERS:
                self._block_done(f)
        elif f.type == CONTINUATION:
            if self.block is None or self.block[0] != f.sid:
                self.violations.append('CONTINUATION out of place: %r' % f)
                return
            self.block = self.block[:1] + (self.block[1] + f.payload,) + self.block[2:]
            if f.flags & END_HEADERS:
                self._block_done(f)
        elif f.type == DATA:
            st = self.streams.get(f.sid)
            with self.lock:
                self.recv_conn -= len(f.payload)
                if self.recv_conn < 0:
                    self.violations.append('DATA beyond the connection window (%d)' %
                                           self.recv_conn)
                if st is not None:
                    st.recv_window -= len(f.payload)
                    if st.recv_window < 0:
                        self.violations.append('DATA beyond the window of stream %d (%d)' %
                                               (f.sid, st.recv_window))
            if st is None:
                self.violations.append('DATA on a stream never opened: %r' % f)
                return
            p = f.payload
            if f.flags & PADDED:
                p = p[1:len(p) - p[0]]
            st.body += p
            st.data_frames.append(len(f.payload))
            if f.flags & END_STREAM:
                st.ended = True
            if up.on_data:
                up.on_data(self, st, f)
            elif f.payload:
                # like any server that reads: the window back at once
                self.grant(0, len(f.payload))
                if not f.flags & END_STREAM:
                    self.grant(f.sid, len(f.payload))
            if f.flags & END_STREAM:
                cl = st.field('content-length')
                if cl is not None and int(cl) != len(st.body):
                    self.violations.append('stream %d: content-length %s, body %d bytes'
                                           % (f.sid, cl, len(st.body)))
            if f.flags & END_STREAM and up.on_request:
                self._dispatch(st)
        elif f.type == RST_STREAM:
            st = self.streams.get(f.sid)
            if st is not None:
                st.closed = True

    def _dispatch(self, st):
        # requests a test makes to check that nrfwd still serves
        # (paths with /after-) get the plain answer, whatever the case
        if '/after-' in (st.path or ''):
            default_answer(self, st)
        else:
            self.up.on_request(self, st)

    def _block_done(self, f):
        sid, blk, trailer, end = self.block
        self.block = None
        try:
            fields = [(k.decode() if isinstance(k, bytes) else k,
                       v.decode('latin-1') if isinstance(v, bytes) else v)
                      for k, v in self.dec.decode(bytes(blk), raw=True)]
        except Exception as e:  # noqa: BLE001 - recorded, the test fails on it
            self.violations.append('request header block does not decode: %s' % e)
            return
        st = self.streams[sid]
        if trailer:
            st.trailers = fields
            if any(k.startswith(':') for k, _ in fields):
                self.violations.append('pseudo-header in trailers of stream %d' % sid)
        else:
            st.fields = fields
            for problem in request_problems(fields):
                self.violations.append('stream %d: %s' % (sid, problem))
        if end:
            st.ended = True
        if not trailer and self.up.on_headers:
            self.up.on_headers(self, st)
        if st.ended and self.up.on_request:
            self._dispatch(st)


def request_problems(fields):
    """What is wrong with a request header list by RFC 9113 §8.2 and §8.3.1
    (what an HTTP/2 client owes a server): [] when nothing."""
    out = []
    seen_regular = False
    pseudo = {}
    for k, v in fields:
        if k != k.lower() or not k:
            out.append('field name %r not lower case' % k)
        if k.startswith(':'):
            if seen_regular:
                out.append('pseudo-header %s after a regular field' % k)
            if k not in (':method', ':scheme', ':authority', ':path'):
                out.append('pseudo-header %s in a request' % k)
            if k in pseudo:
                out.append('%s twice' % k)
            pseudo[k] = v
        else:
            seen_regular = True
            if k in CONNECTION_SPECIFIC or (k == 'te' and v.lower() != 'trailers'):
                out.append('connection-specific field %s' % k)
        if v != v.strip(' \t') or any(c in v for c in '\0\r\n'):
            out.append('field %s: value %r' % (k, v))
    for k in (':method', ':scheme', ':path'):
        if not pseudo.get(k):
            out.append('%s missing or empty' % k)
    return out


class RawUpstream:
    """An HTTP/2 server on 127.0.0.1 written frame by frame.

    @settings: the pairs of its first SETTINGS frame (None: no SETTINGS at
    all). @on_request(conn, st): a request is complete; default answers 200
    with a small JSON body. @on_headers(conn, st), @on_data(conn, st, frame):
    optional hooks. @max_frame_size: the largest frame nrfwd may send here
    (its own SETTINGS_MAX_FRAME_SIZE, default 16384)."""

    def __init__(self, name='up', settings=(), on_request=None, on_headers=None, on_data=None,
                 max_frame_size=16384):
        self.name = name
        self.settings = list(settings) if settings is not None else None
        for k, v in self.settings or ():
            if k == S_MAX_FRAME_SIZE:
                max_frame_size = v
        self.max_frame_size = max_frame_size
        self.on_request = on_request if on_request is not None else default_answer
        self.on_headers = on_headers
        self.on_data = on_data
        self.auto_ping = True
        self.auto_settings_ack = True
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.conns = []
        self.threads = []
        self.done = False
        self.th = threading.Thread(target=self._accept, daemon=True)
        self.th.start()

    def _accept(self):
        self.sock.settimeout(0.05)
        while not self.done:
            try:
                s, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                c = UpConn(self, s, len(self.conns))
                self.conns.append(c)
            th = threading.Thread(target=c.serve, daemon=True)
            self.threads.append(th)
            th.start()

    def streams(self, path=None):
        """Every request seen, in the order of arrival: [(conn, Stream)]."""
        out = []
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            with c.lock:
                out += [(c, st) for st in c.streams.values()
                        if path is None or st.path == path]
        return sorted(out, key=lambda cs: cs[1].t_open)

    def violations(self):
        with self.lock:
            return [(c.idx, v) for c in self.conns for v in c.violations]

    def wait(self, pred, timeout=5.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return True
            time.sleep(0.005)
        return pred()

    def ready(self, timeout=5.0):
        """Wait for a connection from nrfwd that acknowledged this
        upstream's SETTINGS (nrfwd keeps one to its local NRF); returns it."""
        def ok():
            with self.lock:
                return any(c.acks_received >= 1 and not c.closed and c.preface
                           for c in self.conns)
        if not self.wait(ok, timeout):
            raise AssertionError('%s: no connection from nrfwd with SETTINGS acknowledged '
                                 'within %.1f s' % (self.name, timeout))
        with self.lock:
            return [c for c in self.conns if c.acks_received >= 1 and not c.closed][-1]

    def close(self):
        self.done = True
        self.th.join(2)
        try:
            self.sock.close()
        except OSError:
            pass
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            c.close()
        for th in self.threads:
            th.join(2)


def default_answer(conn, st):
    body = ('{"nfInstanceId":"%s","up":"%s","conn":%d,"sid":%d}' % (
        (st.path or '').rsplit('/', 1)[-1], conn.up.name, conn.idx, st.sid)).encode()
    conn.answer(st.sid, 200, [('content-type', 'application/json')], body)


# ---------------------------------------------------------------------------
# The client

class Result:
    def __init__(self, sid):
        self.sid = sid
        self.status = None
        self.headers = []
        self.interim = []         # [(status, fields)] of 1xx answers
        self.body = bytearray()
        self.trailers = []
        self.ended = False
        self.reset = None         # RST_STREAM code from nrfwd
        self.finals = 0           # final answers (HEADERS with a non-1xx :status)

    @property
    def done(self):
        return self.ended or self.reset is not None

    def header(self, name):
        for k, v in self.headers:
            if k == name:
                return v
        return None

    def __repr__(self):
        return 'Result(sid %d, status %s, %d body bytes, ended %s, reset %s, finals %d)' % (
            self.sid, self.status, len(self.body), self.ended, self.reset, self.finals)


class Client:
    """An HTTP/2 client connection to nrfwd (python3-h2)."""

    def __init__(self, port, authority='nrf-a.test'):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=5)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.authority = authority
        cfg = h2.config.H2Configuration(client_side=True, header_encoding='utf-8')
        self.h = h2.connection.H2Connection(cfg)
        # a client that reads: large windows, so nrfwd's relay is never
        # held back by this side
        self.h.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20})
        self.h.initiate_connection()
        self.h.increment_flow_control_window(1 << 24)
        self.results = {}
        self.pending = {}         # sid -> bytearray of body still to send
        self.terminated = None    # GOAWAY from nrfwd: (error code, last stream id)
        self.closed = False
        self._write()

    def _write(self):
        d = self.h.data_to_send()
        if d:
            self.s.sendall(d)

    def request(self, method, path, headers=(), body=None):
        sid = self.h.get_next_available_stream_id()
        hd = [(':method', method), (':scheme', 'http'), (':authority', self.authority),
              (':path', path)] + list(headers)
        if body is not None:
            hd.append(('content-length', str(len(body))))
        self.h.send_headers(sid, hd, end_stream=not body)
        self.results[sid] = Result(sid)
        if body:
            self.pending[sid] = bytearray(body)
        self._send_bodies()
        self._write()
        return sid

    def _send_bodies(self):
        for sid in list(self.pending):
            buf = self.pending[sid]
            while buf:
                try:
                    room = min(self.h.local_flow_control_window(sid),
                               self.h.max_outbound_frame_size)
                except h2.exceptions.StreamClosedError:
                    del self.pending[sid]
                    break
                if room <= 0:
                    break
                n = min(room, len(buf))
                self.h.send_data(sid, bytes(buf[:n]), end_stream=(n == len(buf)))
                del buf[:n]
            if not buf and sid in self.pending:
                del self.pending[sid]

    def run(self, until=None, timeout=5.0):
        """Read until every request is done (or until() holds), nrfwd closes,
        or @timeout. True when done."""
        if until is None:
            def until():
                return all(r.done for r in self.results.values())
        end = time.monotonic() + timeout
        while not until() and not self.closed and time.monotonic() < end:
            r, _, _ = select.select([self.s], [], [], min(0.05, max(0, end - time.monotonic())))
            if not r:
                continue
            try:
                d = self.s.recv(262144)
            except OSError:
                d = b''
            if not d:
                self.closed = True
                break
            for ev in self.h.receive_data(d):
                self._event(ev)
            self._send_bodies()
            self._write()
        return until()

    def _event(self, ev):
        r = self.results.get(getattr(ev, 'stream_id', None))
        if isinstance(ev, h2.events.ResponseReceived):
            r.status = int(dict(ev.headers)[':status'])
            r.headers = list(ev.headers)
            r.finals += 1
        elif isinstance(ev, h2.events.InformationalResponseReceived):
            r.interim.append((int(dict(ev.headers)[':status']), list(ev.headers)))
        elif isinstance(ev, h2.events.DataReceived):
            r.body += ev.data
            try:
                self.h.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            except h2.exceptions.StreamClosedError:
                pass
        elif isinstance(ev, h2.events.TrailersReceived):
            r.trailers = list(ev.headers)
        elif isinstance(ev, h2.events.StreamEnded):
            r.ended = True
        elif isinstance(ev, h2.events.StreamReset):
            r.reset = ev.error_code
        elif isinstance(ev, h2.events.ConnectionTerminated):
            self.terminated = (ev.error_code, ev.last_stream_id)

    def get(self, path, headers=(), timeout=5.0):
        """One GET, run to its end: its Result."""
        sid = self.request('GET', path, headers)
        self.run(lambda: self.results[sid].done, timeout)
        return self.results[sid]

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass
