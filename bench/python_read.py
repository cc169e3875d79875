#!/usr/bin/env python3
"""Random-access read speed of the Python reader (python/mldf).

Generates bench_jpeg.mldf (N 320x240 JPEGs stored as they are) and bench_raw.mldf (the same
images as raw HxWx3 pixels) with `go run ./cmd/mkfixtures -bench N`, then reads samples in a
random order and prints samples/s for:

  jpeg bytes      r[i] with decode_images=False, then bytes(image.data) (what a loader hands
                  to its own decoder)
  jpeg decoded    r[i] decoded to an HxWx3 array by Pillow
  raw view        r[i]: a zero-copy HxWx3 view of the memory map
  raw copy        np.array(r[i]["image"]) (what mldf.torch.MLDFDataset returns)

and the pure-Python checksums' speed (CRC-32C over every payload, XXH64 over the tables).
Files are read from the page cache (they were just written): this measures the reader, not
the disk.

Beside them, in the same run, the same JPEGs as an image folder (the payloads of
bench_jpeg.mldf written out as one file each, what `convert images` would read):

  folder open+read        open(path, "rb").read() of each sampled file, warm page cache
  folder open+read cold   the same over every file once in a random order, after evicting
                          the files from the page cache
  jpeg bytes cold         r[i] bytes over every sample once in a random order, after
                          evicting bench_jpeg.mldf from the page cache (a fresh open)

The files are evicted from the page cache one by one with posix_fadvise(POSIX_FADV_DONTNEED)
after an fsync (`fincore FILE` shows 0 pages resident afterwards); with --drop-caches the
whole page cache is dropped through /proc/sys/vm/drop_caches when it is writable (it also
empties the cache of everything else running on the machine). The output says which.

    python3 bench/python_read.py [-n 2000] [--reads 5000] [--dir bench/out/pyread]
"""

import argparse
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

import numpy as np  # noqa: E402

import mldf  # noqa: E402
from mldf import _checksum  # noqa: E402


def rate(fn, idx, repeat=3):
    """Best of `repeat` runs: samples/s of fn over the indices."""
    best = 0.0
    for _ in range(repeat):
        t = time.perf_counter()
        for i in idx:
            fn(i)
        best = max(best, len(idx) / (time.perf_counter() - t))
    return best


def evict(paths, drop_caches):
    """Drop paths from the page cache; returns how ("drop_caches" or "fadvise")."""
    if drop_caches:
        try:
            os.sync()
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("1\n")
            return "/proc/sys/vm/drop_caches"
        except OSError:
            pass
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return "posix_fadvise(DONTNEED) per file"


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=2000, help="images in the generated files")
    ap.add_argument("--reads", type=int, default=5000, help="random reads per measurement")
    ap.add_argument("--dir", default=os.path.join(REPO, "bench", "out", "pyread"))
    ap.add_argument("--drop-caches", action="store_true",
                    help="evict with /proc/sys/vm/drop_caches (the whole page cache) when writable")
    a = ap.parse_args()
    jpeg, raw = (os.path.join(a.dir, n) for n in ("bench_jpeg.mldf", "bench_raw.mldf"))
    if not (os.path.exists(jpeg) and os.path.exists(raw) and len(mldf.open(jpeg)) == a.n):
        print("generating %d images with go run ./cmd/mkfixtures ..." % a.n, flush=True)
        subprocess.run(["go", "run", "./cmd/mkfixtures", "-o", a.dir, "-bench", str(a.n)], cwd=REPO, check=True)
    rng = random.Random(0)
    idx = [rng.randrange(a.n) for _ in range(a.reads)]

    # The image folder: the same JPEG bytes, one file each.
    folder = os.path.join(a.dir, "folder")
    os.makedirs(folder, exist_ok=True)
    files = [os.path.join(folder, "%06d.jpg" % i) for i in range(a.n)]
    with mldf.open(jpeg, decode_images=False) as r:
        if not all(os.path.exists(f) for f in files):
            for i, f in enumerate(files):
                with open(f, "wb") as out:
                    out.write(bytes(r[i]["image"].data))
    every = list(range(a.n))
    rng.shuffle(every)

    rows = []
    with mldf.open(jpeg, decode_images=False) as r:
        sizes = r.column("image")["data_size"]
        rows.append(("jpeg bytes", rate(lambda i: bytes(r[i]["image"].data), idx), sizes.mean()))
    for f in files:
        read_file(f)  # warm
    rows.append(("folder open+read", rate(lambda i: read_file(files[i]), idx), sizes.mean()))
    how = evict(files, a.drop_caches)
    rows.append(("folder open+read cold", rate(lambda i: read_file(files[i]), every, repeat=1), sizes.mean()))
    evict([jpeg], a.drop_caches)
    with mldf.open(jpeg, decode_images=False) as r:
        rows.append(("jpeg bytes cold", rate(lambda i: bytes(r[i]["image"].data), every, repeat=1), sizes.mean()))
    if mldf.HAVE_PIL:
        with mldf.open(jpeg) as r:
            rows.append(("jpeg decoded (Pillow)", rate(lambda i: r[i], idx[:1000], repeat=1), sizes.mean()))
    with mldf.open(raw) as r:
        rsize = r.column("image")["data_size"].mean()
        rows.append(("raw view", rate(lambda i: r[i], idx), rsize))
        rows.append(("raw copy", rate(lambda i: np.array(r[i]["image"]), idx), rsize))
    print("\nPython %s, numpy %s, %d random reads from %d samples" % (
        sys.version.split()[0], np.__version__, a.reads, a.n))
    print("load average %s; cold rows: page cache dropped with %s" % (
        " ".join(open("/proc/loadavg").read().split()[:3]), how))
    print("%-24s %12s %10s" % ("read", "samples/s", "MB/s"))
    for name, sps, size in rows:
        print("%-24s %12.0f %10.1f" % (name, sps, sps * size / 1e6))

    with mldf.open(jpeg) as r:
        at = r.alloc_table()
        t = time.perf_counter()
        _checksum.crc32c_many(r._buf, at["ptr"].astype(np.int64), at["size"].astype(np.int64))
        crc = int(at["size"].sum()) / (time.perf_counter() - t) / 1e6
        one = np.frombuffer(r._buf, dtype=np.uint8, count=16 << 20, offset=r.data_ptr)
        t = time.perf_counter()
        _checksum.crc32c(one)
        crc1 = one.nbytes / (time.perf_counter() - t) / 1e6
        del one
        tables = r._buf[r.metadata_ptr:r.size]
        t = time.perf_counter()
        _checksum.xxh64(tables)
        xx = len(tables) / (time.perf_counter() - t) / 1e6
        t = time.perf_counter()
        r.verify()
        ver = time.perf_counter() - t
    print("\nCRC-32C (pure Python + numpy), crc32c_many over %d payloads of ~%.0f KB: %.0f MB/s"
          % (len(at), sizes.mean() / 1e3, crc))
    print("CRC-32C (pure Python + numpy), crc32c of one 16 MiB buffer: %.0f MB/s" % crc1)
    print("XXH64 (pure Python) over the %d-byte tables: %.1f MB/s" % (len(tables), xx))
    print("verify() of %s (%.1f MB): %.2f s" % (os.path.basename(jpeg), os.path.getsize(jpeg) / 1e6, ver))


if __name__ == "__main__":
    main()
