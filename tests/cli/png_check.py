#!/usr/bin/env python3
# tests/cli/png_check.py - decode a PNG (8-bit RGB/RGBA, non-interlaced: what
# chromium's --screenshot writes) with the standard library only and print what
# test_html.sh checks:
#   size W H
#   distinct N              distinct colours in the whole image
#   inked P                 per cent of pixels that are not near-white
#   colour NAME COUNT       pixels within 40 (sum of |dRGB|) of each colour given,
#                           inside the box x0,y0,x1,y1 (the plot column)
# usage: png_check.py FILE x0,y0,x1,y1 NAME=RRGGBB...
import struct
import sys
import zlib


def decode(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit('not a PNG')
    pos, idat, w = 8, [], None
    while pos < len(data):
        n, typ = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b'IHDR':
            w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                sys.exit('unsupported PNG: depth %d type %d interlace %d' % (depth, ctype, interlace))
            bpp = 3 if ctype == 2 else 4
        elif typ == b'IDAT':
            idat.append(body)
        pos += 12 + n
    raw = zlib.decompress(b''.join(idat))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        cur = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                cur[i] = (cur[i] + cur[i - bpp]) & 255
        elif f == 2:
            cur = bytearray((a + b) & 255 for a, b in zip(cur, prev))
        elif f == 3:
            for i in range(stride):
                left = cur[i - bpp] if i >= bpp else 0
                cur[i] = (cur[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                cur[i] = (cur[i] + pr) & 255
        rows.append(cur)
        prev = cur
    return w, h, bpp, rows


def main():
    path, box = sys.argv[1], [int(v) for v in sys.argv[2].split(',')]
    want = {}
    for arg in sys.argv[3:]:
        name, hexc = arg.split('=')
        want[name] = tuple(int(hexc[i:i + 2], 16) for i in (0, 2, 4))
    w, h, bpp, rows = decode(path)
    print('size', w, h)
    seen, inked = set(), 0
    count = dict.fromkeys(want, 0)
    for y in range(h):
        row = rows[y]
        px = [tuple(row[i:i + 3]) for i in range(0, w * bpp, bpp)]
        seen.update(px)
        inked += sum(1 for p in px if p[0] + p[1] + p[2] < 720)
        if box[1] <= y < box[3]:
            for p in px[box[0]:box[2]]:
                for name, c in want.items():
                    if abs(p[0] - c[0]) + abs(p[1] - c[1]) + abs(p[2] - c[2]) <= 40:
                        count[name] += 1
    print('distinct', len(seen))
    print('inked', 100 * inked // (w * h))
    for name in want:
        print('colour', name, count[name])


main()
