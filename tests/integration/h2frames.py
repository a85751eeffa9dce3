# SPDX-License-Identifier: BSD-3-Clause
"""HTTP/2 frames and HPACK bytes written by hand, for the tests that talk
to nrfwd byte for byte (RFC 9113 §4 and §6, RFC 7541 §5): the numbers of
frame types, flags, error codes and settings, one frame of any type,
flags and length, a few common frames, HPACK integers and literals that
touch no table. One copy for h2up.py, test_hostile.py, test_limits.py,
test_bad_input.py, test_timeouts.py and test_h2_conformance.py. Standard
library only."""

import struct

PREFACE = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, \
    WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR, SETTINGS_TIMEOUT, \
    STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL, COMPRESSION_ERROR, \
    CONNECT_ERROR, ENHANCE_YOUR_CALM = range(12)
FRAME_NAMES = ['DATA', 'HEADERS', 'PRIORITY', 'RST_STREAM', 'SETTINGS', 'PUSH_PROMISE',
               'PING', 'GOAWAY', 'WINDOW_UPDATE', 'CONTINUATION']
S_HEADER_TABLE_SIZE, S_ENABLE_PUSH, S_MAX_CONCURRENT_STREAMS, S_INITIAL_WINDOW_SIZE, \
    S_MAX_FRAME_SIZE, S_MAX_HEADER_LIST_SIZE = range(1, 7)
DEFAULT_WINDOW = 65535
MAX_WINDOW = 0x7fffffff
# fields that have no place in HTTP/2 (RFC 9113 §8.2.2)
CONNECTION_SPECIFIC = ('connection', 'keep-alive', 'proxy-connection', 'transfer-encoding',
                       'upgrade')


def frame(ftype, flags, sid, payload=b''):
    """One frame, byte for byte (any length, type and flags)."""
    return struct.pack('>I', len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack('>I', sid) + payload


def settings_frame(*pairs):
    return frame(SETTINGS, 0, 0, b''.join(struct.pack('>HI', k, v) for k, v in pairs))


def rst(sid, code):
    return frame(RST_STREAM, 0, sid, struct.pack('>I', code))


def goaway(last, code, debug=b''):
    return frame(GOAWAY, 0, 0, struct.pack('>II', last, code) + debug)


def window_update(sid, inc):
    return frame(WINDOW_UPDATE, 0, sid, struct.pack('>I', inc))


def hpack_int(v, prefix, first=0):
    mx = (1 << prefix) - 1
    if v < mx:
        return bytes([first | v])
    out = [first | mx]
    v -= mx
    while v >= 128:
        out.append((v & 127) | 128)
        v >>= 7
    out.append(v)
    return bytes(out)


def lit(name, value):
    """A literal field without indexing, new name, no Huffman: touches no
    HPACK table (blocks built from it need no encoder state)."""
    n = name.encode('latin-1') if isinstance(name, str) else name
    v = value.encode('latin-1') if isinstance(value, str) else value
    return b'\x00' + hpack_int(len(n), 7) + n + hpack_int(len(v), 7) + v


def hpack_str(s):
    """An HPACK string literal, raw octets (H = 0)."""
    b = s.encode('latin-1') if isinstance(s, str) else s
    return hpack_int(len(b), 7) + b


def error_code(ftype, payload):
    """The error code a RST_STREAM or GOAWAY payload carries; None for
    other frames."""
    if ftype == RST_STREAM:
        return struct.unpack('>I', payload[:4])[0]
    if ftype == GOAWAY:
        return struct.unpack('>I', payload[4:8])[0]
    return None


def fname(t):
    return FRAME_NAMES[t] if t < len(FRAME_NAMES) else 'type-0x%x' % t
