#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpora of fuzz_front, fuzz_peer and fuzz_hpack (tests/fuzz/corpus/).

Seeds are small, valid scenes the fuzzer mutates from: a client's requests
(fuzz_front) and an upstream's answers (fuzz_peer), framed with Debian's
python3-hyperframe and python3-hpack. The layout of each input (the two
scene bytes, then the bytes) is described at the top of fuzz_front.c and
fuzz_peer.c. Run again after changing a seed here; inputs the fuzzer
found (crashes turned into tests) are added to the corpus by hand and are
not touched by this script (it only writes files named seed_*).

    /usr/bin/python3 tests/fuzz/seeds.py
"""

import os
import sys

sys.path.append('/usr/lib/python3/dist-packages')
import hpack  # noqa: E402
from hyperframe.frame import (ContinuationFrame, DataFrame, GoAwayFrame,  # noqa: E402
                              HeadersFrame, PingFrame, PriorityFrame, RstStreamFrame,
                              SettingsFrame, WindowUpdateFrame)

HERE = os.path.dirname(os.path.abspath(__file__))
DISC = '/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF'
PROFILE = '/nnrf-nfm/v1/nf-instances/4947a69a-f61b-4bc1-b9da-47c9c5d14b64'
SEP = b'\n--\n'

# fuzz_front byte 0
L_DATA, L_404, L_EMPTY, L_RESET, L_REFUSE, L_SILENT, L_GOAWAY, L_NONE = range(8)
B_DATA, B_404, B_503, B_RESET = (0 << 3, 1 << 3, 2 << 3, 3 << 3)
C_REFUSE, SMALL, GROWTH = 0x20, 0x40, 0x80
# fuzz_front byte 1
RAW, SLOW, CLIENT_RESET = 0x10, 0x20, 0x40


def frames(*fs):
    return b''.join(f.serialize() for f in fs)


class Client:
    """Request frames, one HPACK encoder per connection."""

    def __init__(self):
        self.enc = hpack.Encoder()

    def req(self, sid, method='GET', path=DISC, extra=(), end=True):
        hdrs = [(':method', method), (':scheme', 'http'),
                (':authority', 'nrf-a.fuzz.example:8080'), (':path', path),
                ('accept', 'application/json')] + list(extra)
        flags = ['END_HEADERS'] + (['END_STREAM'] if end else [])
        return HeadersFrame(sid, data=self.enc.encode(hdrs), flags=flags).serialize()


def settings(values=None):
    return SettingsFrame(0, settings=values or {}).serialize()


def front(b0, b1, body):
    return bytes([b0, b1]) + body


def front_seeds():
    s = {}
    c = Client()
    s['get'] = front(L_404, 0, settings() + c.req(1))
    c = Client()
    s['get_local_data'] = front(L_DATA, 0, settings() + c.req(1))
    c = Client()
    s['loop_508'] = front(L_404, 0, settings() + c.req(
        1, extra=[('via', '2.0 nrf-x.example:80, 2.0 nrf-a.fuzz.example:8080')]))
    c = Client()
    s['via_skips_b'] = front(L_404, 0, settings() + c.req(
        1, extra=[('via', '2.0 nrf-b.fuzz.example:8000 (hop)')]))
    c = Client()
    s['bad_via'] = front(L_404, 0, settings() + c.req(1, extra=[('via', '2.0 ((( ,,')]))
    c = Client()
    s['hop_limit_0'] = front(L_404, 0, settings() + c.req(
        1, extra=[('3gpp-sbi-max-forward-hops', '0')]))
    c = Client()
    s['hops_bad'] = front(L_EMPTY, 0, settings() + c.req(
        1, extra=[('3gpp-sbi-max-forward-hops', '1x')]))
    c = Client()
    body = b'{"nfInstanceId":"4947a69a-f61b-4bc1-b9da-47c9c5d14b64","nfType":"AMF"}'
    s['put_register'] = front(L_DATA, 0, settings() + c.req(
        1, 'PUT', PROFILE, extra=[('content-type', 'application/json'),
                                  ('content-length', str(len(body)))], end=False) +
        DataFrame(1, data=body, flags=['END_STREAM']).serialize())
    c = Client()
    s['post_subscription'] = front(L_404 | B_503, 3, settings() + c.req(
        1, 'POST', '/nnrf-nfm/v1/subscriptions', extra=[('content-type', 'application/json')],
        end=False) + DataFrame(1, data=b'{"reqNfType":"SMF"}').serialize() +
        DataFrame(1, data=b'', flags=['END_STREAM']).serialize())
    c = Client()
    s['body_over_limit'] = front(L_404 | SMALL, 0, settings() + c.req(
        1, 'POST', '/nnrf-nfm/v1/subscriptions', extra=[('content-length', '1000')],
        end=False) + DataFrame(1, data=b'x' * 600, flags=['END_STREAM']).serialize())
    c = Client()
    s['header_over_limit'] = front(L_404 | SMALL, 0, settings() + c.req(
        1, extra=[('x-big', 'y' * 1500)]))
    c = Client()
    s['three_streams_one_reset'] = front(L_EMPTY | B_404, 0, settings() + c.req(1) +
        c.req(3, path=PROFILE) + c.req(5, 'HEAD') +
        RstStreamFrame(3, error_code=8).serialize() +
        PingFrame(0, opaque_data=b'12345678').serialize() +
        WindowUpdateFrame(0, window_increment=1000).serialize())
    c = Client()
    block = c.enc.encode([(':method', 'GET'), (':scheme', 'http'),
                          (':authority', 'nrf-a.fuzz.example:8080'), (':path', DISC),
                          ('via', '2.0 nrf-c.fuzz.example:8000')])
    s['continuation'] = front(L_404 | B_RESET, 0, settings() +
        HeadersFrame(1, data=block[:10], flags=['END_STREAM']).serialize() +
        ContinuationFrame(1, data=block[10:], flags=['END_HEADERS']).serialize())
    c = Client()
    s['pieces_of_one'] = front(L_404, 1, settings() + c.req(1))
    c = Client()
    s['pieces_of_nine'] = front(L_RESET, 6, settings() + c.req(1) + c.req(3, path=PROFILE))
    c = Client()
    s['slow_reader'] = front(L_DATA, SLOW, settings() + c.req(1) + c.req(3))
    c = Client()
    s['window_zero'] = front(L_DATA, 0, settings({SettingsFrame.INITIAL_WINDOW_SIZE: 0}) + c.req(1))
    c = Client()
    s['pure_forwarder'] = front(L_NONE | B_503 | C_REFUSE, 0, settings() + c.req(1))
    c = Client()
    s['growth'] = front(L_404 | B_404 | GROWTH, 0, settings() + c.req(1))
    c = Client()
    s['local_silent'] = front(L_SILENT | B_503, 0, settings() + c.req(1))
    c = Client()
    s['local_goaway'] = front(L_GOAWAY, 0, settings() + c.req(1) + c.req(3))
    c = Client()
    s['local_refuses'] = front(L_REFUSE | B_404, CLIENT_RESET, settings() + c.req(1))
    c = Client()
    s['priority_self'] = front(L_404, 0, settings() + c.req(1, end=False) +
        PriorityFrame(1, depends_on=1).serialize())
    c = Client()
    s['ids_backwards'] = front(L_404, 0, settings() + c.req(5) + c.req(3))
    c = Client()
    s['client_goaway'] = front(L_DATA, 0, settings() + c.req(1) +
        GoAwayFrame(0, last_stream_id=0, error_code=0).serialize())
    s['raw_bad_preface'] = front(L_404, RAW, b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    s['raw_preface'] = front(L_404, RAW, b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' + settings())
    return s


class Upstream:
    """Answer frames of one upstream connection."""

    def __init__(self):
        self.enc = hpack.Encoder()

    def hello(self):
        return frames(SettingsFrame(0, settings={3: 100}), SettingsFrame(0, flags=['ACK']),
                      PingFrame(0, opaque_data=b'nrfhealt', flags=['ACK']))

    def answer(self, sid, status=200, body=b'', ctype='application/json', extra=(),
               clen=None, end=True):
        hdrs = [(':status', str(status)), ('content-type', ctype),
                ('content-length', str(len(body) if clen is None else clen))] + list(extra)
        out = HeadersFrame(sid, data=self.enc.encode(hdrs),
                           flags=['END_HEADERS'] + ([] if body or not end else ['END_STREAM']))
        out = out.serialize()
        if body:
            out += DataFrame(sid, data=body, flags=['END_STREAM'] if end else []).serialize()
        return out


DATA = (b'{"validityPeriod":3600,"nfInstances":[{"nfInstanceId":'
        b'"4947a69a-f61b-4bc1-b9da-47c9c5d14b64","nfType":"AMF","nfStatus":"REGISTERED"}]}')
EMPTY = b'{"validityPeriod":3600,"nfInstances":[]}'
P404 = b'{"title":"Not Found","status":404}'
P503 = b'{"title":"Service Unavailable","status":503}'

# fuzz_peer byte 0
F_LOCAL, F_B_LOCAL404, F_B_LOCALDOWN, F_B_NOLOCAL = range(4)
K_DATA, K_EMPTY, K_404, K_REFUSE = (0 << 2, 1 << 2, 2 << 2, 3 << 2)
THREE, SET_B, CLOSE, P_GROWTH = 0x10, 0x20, 0x40, 0x80


def split_headers(sid, block, at, end=False):
    return (HeadersFrame(sid, data=block[:at], flags=['END_STREAM'] if end else []).serialize() +
            ContinuationFrame(sid, data=block[at:], flags=['END_HEADERS']).serialize())


# Raw HPACK (RFC 7541) for blocks whose representation matters: the client
# keeps the last block that leaves the dynamic table as it is and replays
# its fields when the same bytes come again (h2_cli.c, block_replay()).
def hp_int(first, prefix, v):
    m = (1 << prefix) - 1
    if v < m:
        return bytes([first | v])
    out = [first | m]
    v -= m
    while v >= 128:
        out.append(0x80 | (v & 0x7f))
        v >>= 7
    return bytes(out + [v])


def hp_str(s):
    s = s.encode() if isinstance(s, str) else s
    return hp_int(0, 7, len(s)) + s


def hp_indexed(i):
    return hp_int(0x80, 7, i)


def hp_lit(name, value, first=0x00, prefix=4):
    """Literal without indexing (0x00), never indexed (0x10) or with incremental
    indexing (0x40, prefix 6); name a static index or a string."""
    if isinstance(name, int):
        return hp_int(first, prefix, name) + hp_str(value)
    return bytes([first]) + hp_str(name) + hp_str(value)


def hp_neutral(status, body, ctype='application/json'):
    """:status, content-type and content-length, none of them indexed."""
    st = {200: 8, 204: 9, 206: 10, 304: 11, 400: 12, 404: 13, 500: 14}
    head = hp_indexed(st[status]) if status in st else hp_lit(8, str(status))
    return head + hp_lit(31, ctype) + hp_lit(28, str(len(body)))


def hdrs(sid, block, end=False, **kw):
    flags = ['END_HEADERS'] + (['END_STREAM'] if end else []) + kw.pop('flags', [])
    return HeadersFrame(sid, data=block, flags=flags, **kw).serialize()


def data(sid, body, end=True, **kw):
    flags = (['END_STREAM'] if end else []) + kw.pop('flags', [])
    return DataFrame(sid, data=body, flags=flags, **kw).serialize()


def peer(b0, b1, *segments):
    return bytes([b0, b1]) + SEP.join(segments)


def peer_seeds():
    s = {}
    u = Upstream()
    s['local_200'] = peer(F_LOCAL | K_404, 0, u.hello() + u.answer(1, 200, DATA))
    u = Upstream()
    s['local_404_peer_data'] = peer(F_LOCAL | K_DATA, 0, u.hello() + u.answer(1, 404, P404))
    u = Upstream()
    s['local_empty_peer_404'] = peer(F_LOCAL | K_404, 0, u.hello() + u.answer(1, 200, EMPTY))
    u = Upstream()
    s['local_reset_peer_404'] = peer(F_LOCAL | K_404, 0, u.hello() +
                                     RstStreamFrame(1, error_code=2).serialize())
    u = Upstream()
    s['local_truncated_then_eof'] = peer(F_LOCAL | K_EMPTY | CLOSE, 0, u.hello() +
                                         u.answer(1, 200, DATA[:20], clen=len(DATA), end=False))
    u1, u2 = Upstream(), Upstream()
    s['local_goaway_then_retry'] = peer(
        F_LOCAL | K_404 | CLOSE, 0,
        u1.hello() + GoAwayFrame(0, last_stream_id=0, error_code=0).serialize(),
        u2.hello() + u2.answer(1, 200, DATA))
    u = Upstream()
    s['local_three'] = peer(F_LOCAL | K_DATA | THREE, 0, u.hello() + u.answer(3, 404, P404) +
                            u.answer(1, 200, DATA) + u.answer(5, 200, b'', clen=len(DATA)))
    u = Upstream()
    s['local_1xx_continuation'] = peer(
        F_LOCAL | K_404, 0, u.hello() +
        HeadersFrame(1, data=u.enc.encode([(':status', '103'), ('link', '</x>')]),
                     flags=['END_HEADERS']).serialize() +
        split_headers(1, u.enc.encode([(':status', '200'), ('content-type', 'application/json')]),
                      3) +
        DataFrame(1, data=DATA, flags=['END_STREAM']).serialize())
    u = Upstream()
    s['local_silent'] = peer(F_LOCAL | K_DATA, 0, u.hello())
    u = Upstream()
    s['local_set_b'] = peer(F_LOCAL | K_DATA | THREE | SET_B, 0, u.hello() +
                            u.answer(1, 201, b'{"subscriptionId":"1"}') +
                            u.answer(3, 404, P404) + u.answer(5, 200, DATA))
    u = Upstream()
    s['peer_200'] = peer(F_B_LOCAL404 | K_404, 0, u.hello() + u.answer(1, 200, DATA))
    u = Upstream()
    s['peer_503_reroute'] = peer(F_B_LOCAL404 | K_DATA, 0, u.hello() + u.answer(1, 503, P503))
    u = Upstream()
    s['peer_404_local_down'] = peer(F_B_LOCALDOWN | K_404, 0, u.hello() + u.answer(1, 404, P404))
    u = Upstream()
    s['peer_pure_forwarder'] = peer(F_B_NOLOCAL | K_REFUSE, 0, u.hello() +
                                    u.answer(1, 200, EMPTY))
    u = Upstream()
    s['peer_pieces'] = peer(F_B_LOCAL404 | K_DATA | THREE, 5, u.hello() +
                            u.answer(1, 200, DATA) + u.answer(3, 200, DATA) +
                            u.answer(5, 200, b'', clen=len(DATA)))
    u = Upstream()
    s['peer_growth'] = peer(F_B_LOCAL404 | K_404 | P_GROWTH, 0, u.hello() +
                            u.answer(1, 404, P404))
    u = Upstream()
    s['peer_links'] = peer(F_B_LOCAL404 | K_DATA, 0, u.hello() + u.answer(
        1, 200, b'{"nfInstances":[],"_links":{"self":{"href":"http://10.0.0.2:8000/x"}}}'))
    u = Upstream()
    s['peer_bad_length'] = peer(F_B_LOCAL404 | K_EMPTY | CLOSE, 0, u.hello() +
                                u.answer(1, 200, DATA, clen=5))

    # The client's own HTTP/2 (h2_cli.c): padding, priority, CONTINUATION,
    # SETTINGS, WINDOW_UPDATE, GOAWAY and the answer block cache.
    u = Upstream()
    blk = hp_neutral(200, DATA)
    s['cli_pad_priority'] = peer(F_LOCAL | K_404, 0, u.hello() +
                                 hdrs(1, blk, pad_length=7, flags=['PADDED', 'PRIORITY'],
                                      depends_on=0, stream_weight=200) +
                                 data(1, DATA[:40], end=False, pad_length=3, flags=['PADDED']) +
                                 data(1, DATA[40:], pad_length=0, flags=['PADDED']))
    u = Upstream()
    blk = hp_neutral(200, DATA)
    s['cli_continuations'] = peer(F_LOCAL | K_404, 3, u.hello() +
                                  HeadersFrame(1, data=blk[:2], flags=['PADDED'],
                                               pad_length=4).serialize() +
                                  ContinuationFrame(1, data=blk[2:5]).serialize() +
                                  ContinuationFrame(1, data=b'').serialize() +
                                  ContinuationFrame(1, data=blk[5:],
                                                    flags=['END_HEADERS']).serialize() +
                                  data(1, DATA))
    u = Upstream()
    s['cli_settings_mid_body'] = peer(F_LOCAL | K_404, 0, u.hello() +
                                      hdrs(1, hp_neutral(200, DATA)) + data(1, DATA[:30], end=False) +
                                      settings({4: 0, 5: 20000, 1: 0, 3: 1}) +
                                      WindowUpdateFrame(1, window_increment=10).serialize() +
                                      data(1, DATA[30:], end=False) +
                                      settings({4: 70000, 1: 4096}) + data(1, b''))
    u1, u2 = Upstream(), Upstream()
    s['cli_goaway_last_1'] = peer(F_LOCAL | K_DATA | THREE | CLOSE, 0,
                                  u1.hello() + hdrs(1, hp_neutral(200, DATA)) +
                                  GoAwayFrame(0, last_stream_id=1, error_code=0,
                                              additional_data=b'draining').serialize() +
                                  data(1, DATA),
                                  u2.hello() + u2.answer(1, 200, b'', clen=len(DATA)) +
                                  u2.answer(3, 404, P404))
    u = Upstream()
    s['cli_windows_pings'] = peer(F_LOCAL | K_404 | THREE, 0, u.hello() +
                                  WindowUpdateFrame(0, window_increment=1 << 20).serialize() +
                                  WindowUpdateFrame(3, window_increment=0).serialize() +
                                  WindowUpdateFrame(5, window_increment=5000).serialize() +
                                  PingFrame(0, opaque_data=b'12345678').serialize() +
                                  PriorityFrame(1, depends_on=3).serialize() +
                                  b'\x00\x00\x03\xfa\x00\x00\x00\x00\x01abc' +
                                  hdrs(1, hp_neutral(200, DATA)) + data(1, DATA) +
                                  hdrs(5, hp_neutral(404, P404)) + data(5, P404) +
                                  RstStreamFrame(3, error_code=7).serialize())
    u = Upstream()
    blk = hp_neutral(200, DATA)
    s['cli_replay_same_block'] = peer(F_LOCAL | K_404 | THREE, 0, u.hello() +
                                      hdrs(1, blk) + data(1, DATA) + hdrs(3, blk) +
                                      data(3, DATA) + hdrs(5, blk) + data(5, DATA))
    # The same bytes after the dynamic table changed: index 62 is another
    # field the second time (trailers of stream 3 added one).
    u = Upstream()
    blk = hp_indexed(8) + hp_indexed(62) + hp_lit(28, str(len(DATA)))
    s['cli_replay_table_changed'] = peer(
        F_LOCAL | K_404 | THREE, 0, u.hello() +
        hdrs(1, hp_indexed(8) + hp_lit(31, 'application/json', 0x40, 6) +
             hp_lit(28, str(len(DATA)))) + data(1, DATA) +
        hdrs(3, blk) + data(3, DATA, end=False) +
        hdrs(3, hp_lit('x-trailer', 'one', 0x40, 6), end=True) +
        hdrs(5, blk) + data(5, DATA))
    # A block kept whole, one recorded only in part (its second field is
    # malformed), then an empty block: it must decode to no field.
    u = Upstream()
    s['cli_replay_after_bad_field'] = peer(
        F_LOCAL | K_404 | THREE, 0, u.hello() +
        hdrs(1, hp_neutral(200, DATA)) + data(1, DATA) +
        hdrs(3, hp_indexed(8) + hp_lit('Bad-Name', 'x')) +
        hdrs(5, b'', end=True))
    # SETTINGS_MAX_CONCURRENT_STREAMS 1 after three requests went out
    # (they all left before the script speaks), answers out of order.
    u = Upstream()
    s['cli_answer_unsent_stream'] = peer(
        F_LOCAL | K_404 | THREE, 0,
        frames(SettingsFrame(0, settings={3: 1}), SettingsFrame(0, flags=['ACK'])) +
        hdrs(3, hp_neutral(200, DATA)) + data(3, DATA) +
        hdrs(1, hp_neutral(200, DATA)) + data(1, DATA) +
        hdrs(5, hp_neutral(200, DATA)) + data(5, DATA))
    u = Upstream()
    s['cli_table_size_zero'] = peer(
        F_LOCAL | K_404 | THREE, 0, u.hello() +
        hdrs(1, hp_indexed(8) + hp_lit(31, 'application/json', 0x40, 6) +
             hp_lit(28, str(len(DATA)))) + data(1, DATA) +
        hdrs(3, b'\x20' + hp_indexed(8) + hp_lit(28, str(len(DATA)))) + data(3, DATA) +
        hdrs(5, b'\x3f\xe1\x1f' + hp_indexed(8) + hp_lit(28, str(len(DATA)))) + data(5, DATA))
    # A block that decodes far beyond the header limit: one 3000-byte
    # entry, referenced 30 times (the bomb threshold ends the connection),
    # then the GET again on a fresh connection.
    u1, u2 = Upstream(), Upstream()
    s['cli_hpack_bomb'] = peer(
        F_LOCAL | K_404 | CLOSE, 0, u1.hello() +
        hdrs(1, hp_indexed(8) + hp_lit('x-big', 'b' * 3000, 0x40, 6) + hp_indexed(62) * 30,
             end=True),
        u2.hello() + u2.answer(1, 200, DATA))
    # More CONTINUATION frames than a block may take, one byte each.
    u1, u2 = Upstream(), Upstream()
    blk = hp_neutral(200, DATA)
    s['cli_continuation_flood'] = peer(
        F_LOCAL | K_404 | CLOSE, 0, u1.hello() +
        HeadersFrame(1, data=blk[:1]).serialize() +
        b''.join(ContinuationFrame(1, data=blk[i:i + 1]).serialize()
                 for i in range(1, len(blk) - 1)) +
        ContinuationFrame(1, data=blk[-1:], flags=['END_HEADERS']).serialize(),
        u2.hello() + u2.answer(1, 200, DATA))
    # Frames after the end: DATA and HEADERS on a stream that ended, a
    # 1xx, trailers, an unknown frame inside nothing, a PING ack.
    u = Upstream()
    s['cli_after_end'] = peer(
        F_LOCAL | K_404 | THREE, 0, u.hello() +
        hdrs(1, hp_lit(8, '100')) + hdrs(1, hp_neutral(200, DATA)) + data(1, DATA) +
        data(1, b'late') + hdrs(1, hp_neutral(200, b''), end=True) +
        hdrs(3, hp_neutral(200, DATA)) + data(3, DATA, end=False) +
        hdrs(3, hp_lit('x-trailer', 'z'), end=True) +
        PingFrame(0, opaque_data=b'nrfhealt', flags=['ACK']).serialize() +
        hdrs(5, hp_neutral(404, P404)) + data(5, P404[:5], end=False) +
        RstStreamFrame(5, error_code=0).serialize() + data(5, P404[5:]))
    return s


def hpack_seeds():
    """fuzz_hpack: byte 0 (frame piece size - 1; 255 whole blocks), then
    blocks with a 2-byte length each (layout at the top of fuzz_hpack.c)."""
    def blocks(b0, *bl):
        return bytes([b0]) + b''.join(len(b).to_bytes(2, 'big') + b for b in bl)

    h = bytes.fromhex
    c3 = [h('828684410f7777772e6578616d706c652e636f6d'), h('828684be58086e6f2d6361636865'),
          h('828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565')]
    c4 = [h('828684418cf1e3c2e5f23a6ba0ab90f4ff'), h('828684be5886a8eb10649cbf'),
          h('828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf')]
    c6 = [h('488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29a'
            'd171863c78f0b97c8e9ae82ae43d3'), h('4883640effc1c0bf')]
    enc = hpack.Encoder()
    req = [(':method', 'GET'), (':path', DISC), (':scheme', 'http'),
           (':authority', 'nrf-1.example.org:8080'), ('user-agent', 'h2load nghttp2/1.52.0'),
           ('via', '2.0 nrf-x.seg9.example.com:8080, 2.0 nrf-y.seg8.example.com:8080')]
    r1 = enc.encode(req)
    r2 = enc.encode(req + [('x-big', 'v' * 3000)])
    r3 = enc.encode(req, huffman=False)
    s = {}
    s['rfc_c3'] = blocks(255, *c3)
    s['rfc_c4_pieces_of_3'] = blocks(2, *c4)
    s['rfc_c6_byte_by_byte'] = blocks(0, *c6)
    s['requests'] = blocks(255, r1, r2, r3)
    s['requests_pieces_of_7'] = blocks(6, r1, r2, r3)
    s['size_updates'] = blocks(255, h('3fe11f') + c3[0], h('203fe11f82'), h('8220'))
    s['eos'] = blocks(255, h('0f1084ffffffff'))
    s['bad_padding'] = blocks(255, h('0f108100'), h('0f1081ff'))
    s['bad_index'] = blocks(255, h('be'), h('80'))
    s['truncated'] = blocks(3, h('400361'))
    s['long_string'] = blocks(255, h('007f828004'))
    return s


def write(name, seeds):
    d = os.path.join(HERE, 'corpus', name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if f.startswith('seed_'):
            os.unlink(os.path.join(d, f))
    for k, v in sorted(seeds.items()):
        with open(os.path.join(d, 'seed_' + k), 'wb') as f:
            f.write(v)
    print('%s: %d seeds' % (d, len(seeds)))


if __name__ == '__main__':
    write('front', front_seeds())
    write('peer', peer_seeds())
    write('hpack', hpack_seeds())
