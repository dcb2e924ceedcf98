#!/usr/bin/env python3
"""shrink_dat.py IN OUT [PAGES]: a small seed from a trace-cmd v6 trace.dat.

Keeps the headers and event formats, cuts kallsyms and saved command lines to
under a page each and keeps the first PAGES (default 1) ring-buffer pages of
every CPU.  Whole pages are removed before the CPU data, so its offsets stay
page aligned as libtracecmd's mmap of them needs.  Layout: trace-cmd.dat(5).
"""
import struct
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    pages = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    b = open(src, 'rb').read()
    assert b[:10] == b'\x17\x08Dtracing' and b[10:12] == b'6\0', 'not a v6 trace.dat'
    page = struct.unpack_from('<I', b, 14)[0]
    p = 18
    for name in (b'header_page\0', b'header_event\0'):
        assert b[p:p + len(name)] == name
        p += len(name)
        p += 8 + struct.unpack_from('<Q', b, p)[0]
    n = struct.unpack_from('<I', b, p)[0]
    p += 4
    for _ in range(n):
        p += 8 + struct.unpack_from('<Q', b, p)[0]
    nsys = struct.unpack_from('<I', b, p)[0]
    p += 4
    for _ in range(nsys):
        p = b.index(b'\0', p) + 1
        n = struct.unpack_from('<I', b, p)[0]
        p += 4
        for _ in range(n):
            p += 8 + struct.unpack_from('<Q', b, p)[0]
    head = b[:p]
    ks_len = struct.unpack_from('<I', b, p)[0]
    ks = b[p + 4:p + 4 + ks_len]
    p += 4 + ks_len
    pk_len = struct.unpack_from('<I', b, p)[0]
    pk = b[p:p + 4 + pk_len]
    p += 4 + pk_len
    cl_len = struct.unpack_from('<Q', b, p)[0]
    cl = b[p + 8:p + 8 + cl_len]
    p += 8 + cl_len
    rest_start = p
    ncpu = struct.unpack_from('<I', b, p)[0]
    p += 4
    assert b[p:p + 10] == b'options  \0'
    p += 10
    while True:
        oid = struct.unpack_from('<H', b, p)[0]
        p += 2
        if oid == 0:
            break
        p += 4 + struct.unpack_from('<I', b, p)[0]
    assert b[p:p + 10] == b'flyrecord\0', b[p:p + 10]
    p += 10
    cpus = [struct.unpack_from('<QQ', b, p + 16 * i) for i in range(ncpu)]
    mid = b[rest_start:p]
    first = min(o for o, s in cpus if s) if any(s for _, s in cpus) else len(b)

    # the cut: kallsyms and cmdlines shrink by whole pages in total
    ks_keep = ks[:ks.rfind(b'\n', 0, 2048) + 1]
    cl_keep = cl[:cl.rfind(b'\n', 0, 1024) + 1]
    removed = (len(ks) - len(ks_keep)) + (len(cl) - len(cl_keep))
    pad = removed % page
    ks_keep += b'\n' * pad          # blank lines: kallsyms parsing skips them
    delta = removed - pad
    out = bytearray(head)
    out += struct.pack('<I', len(ks_keep)) + ks_keep + pk
    out += struct.pack('<Q', len(cl_keep)) + cl_keep
    out += mid
    # CPU data: consecutive, PAGES pages each, re-placed after the headers
    gap_end = first - delta
    data = bytearray()
    table = bytearray()
    base = (len(out) + 16 * ncpu + page - 1) // page * page
    for o, s in cpus:
        keep = min(s, pages * page)
        table += struct.pack('<QQ', base + len(data) if keep else 0, keep)
        data += b[o:o + keep]
    out += table
    out += b'\0' * (base - len(out))
    out += data
    # the options after the data (v6 has none we need)
    assert gap_end >= 0
    open(dst, 'wb').write(bytes(out))


main()
