#!/usr/bin/env python3
"""Reads a .beton file with numpy alone, from the layout in docs/BETON.md (FFCV format 2),
and prints every sample's fields as JSON lines: ints and floats as numbers, payloads as
{"sha256", "size"} (JSON fields also as "json": the decoded value; images with mode, width,
height; arrays with dtype and shape). Exits non-zero on any structural problem.

    python3 check_beton.py FILE.beton
"""
import hashlib
import json
import sys

import numpy as np

HEADER = np.dtype([('version', '<u2'), ('num_fields', '<u2'), ('page_size', '<u4'),
                   ('num_samples', '<u8'), ('alloc_table_ptr', '<u8')], align=True)
DESC = np.dtype([('type_id', '<u1'), ('name', ('<u1', 16)), ('arguments', ('<u1', 1024))], align=True)
ALLOC = np.dtype([('sample_id', '<u8'), ('ptr', '<u8'), ('size', '<u8')])
IMAGE = np.dtype([('mode', '<u1'), ('width', '<u2'), ('height', '<u2'), ('data_ptr', '<u8')])
BLOB = np.dtype([('ptr', '<u8'), ('size', '<u8')])
META = {0: np.dtype('<f8'), 1: np.dtype('<i8'), 2: IMAGE, 3: BLOB, 4: np.dtype('<u8'), 5: BLOB}


def fail(msg):
    print("check_beton: " + msg, file=sys.stderr)
    sys.exit(1)


def main(path):
    raw = np.fromfile(path, dtype='<u1')
    header = raw[:HEADER.itemsize].view(HEADER)[0]
    if header['version'] != 2:
        fail("version %d" % header['version'])
    nf, ns, page = int(header['num_fields']), int(header['num_samples']), int(header['page_size'])
    assert HEADER.itemsize == 24 and DESC.itemsize == 1041 and IMAGE.itemsize == 13
    descs = raw[24:24 + nf * DESC.itemsize].view(DESC)
    fields = []
    for d in descs:
        name = bytes(d['name']).rstrip(b'\0').decode('ascii')
        t = int(d['type_id'])
        if t not in META:
            fail("field %s: type %d" % (name, t))
        extra = {}
        if t == 4:
            args = d['arguments']
            shape = [int(x) for x in args[:256].view('<u8') if x != 0]
            tl = int(args[256:264].view('<u8')[0])
            descr = json.loads(bytes(args[264:264 + tl]).decode('ascii'))
            extra = {'dtype': np.dtype([tuple(x) for x in descr])['f0'], 'shape': tuple(shape)}
        fields.append((name, t, extra))
    row = np.dtype([(n, META[t]) for n, t, _ in fields], align=True)
    meta_off = 24 + nf * DESC.itemsize
    meta = raw[meta_off:meta_off + ns * row.itemsize].view(row)
    data_start = -(-(meta_off + ns * row.itemsize) // page) * page
    alloc = raw[int(header['alloc_table_ptr']):].view(ALLOC)
    if np.any(np.diff(alloc['ptr'].astype(np.int64)) <= 0):
        fail("allocation table not sorted by ptr")
    sizes = dict(zip(alloc['ptr'].tolist(), zip(alloc['size'].tolist(), alloc['sample_id'].tolist())))

    def payload(i, ptr):
        ptr = int(ptr)
        if ptr not in sizes:
            fail("sample %d: ptr %d not in the allocation table" % (i, ptr))
        size, sid = sizes[ptr]
        if sid != i:
            fail("sample %d: ptr %d belongs to sample %d" % (i, ptr, sid))
        if ptr < data_start or ptr // page != (ptr + max(size, 1) - 1) // page:
            fail("sample %d: allocation %d+%d outside the data region or across pages" % (i, ptr, size))
        return raw[ptr:ptr + size].tobytes()

    for i in range(ns):
        out = {}
        for name, t, extra in fields:
            m = meta[i][name]
            if t in (0, 1):
                out[name] = m.item()
            elif t == 2:
                b = payload(i, m['data_ptr'])
                if m['mode'] == 1 and len(b) != int(m['width']) * int(m['height']) * 3:
                    fail("sample %d: raw image size" % i)
                if m['mode'] == 0 and not (b[:2] == b'\xff\xd8' and b[-2:] == b'\xff\xd9'):
                    fail("sample %d: not a JPEG" % i)
                out[name] = {'mode': int(m['mode']), 'width': int(m['width']), 'height': int(m['height']),
                             'size': len(b), 'sha256': hashlib.sha256(b).hexdigest()}
            elif t in (3, 5):
                b = payload(i, m['ptr'])
                if len(b) != int(m['size']):
                    fail("sample %d: size %d in the row, %d in the table" % (i, int(m['size']), len(b)))
                v = {'size': len(b), 'sha256': hashlib.sha256(b).hexdigest()}
                if t == 5:
                    if not b.endswith(b'\0'):
                        fail("sample %d: JSON without its NUL" % i)
                    v['json'] = json.loads(b[:-1].decode('utf-8'))
                out[name] = v
            else:
                b = payload(i, m)
                arr = np.frombuffer(b, dtype=extra['dtype']).reshape(extra['shape'])
                out[name] = {'dtype': arr.dtype.str, 'shape': list(arr.shape), 'size': len(b),
                             'sha256': hashlib.sha256(b).hexdigest(), 'first': arr.reshape(-1)[:1].tolist()}
        print(json.dumps(out, sort_keys=True))


if __name__ == '__main__':
    main(sys.argv[1])
