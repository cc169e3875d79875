"""The peers' writers on the jobs of bench/peers.sh, each written the way its documentation
shows, with 2 worker processes where the peer has a way to use them.

    python bench/peers_write.py JOB INPUT OUT [--workers 2]

Image jobs (INPUT: the bench/images.sh ImageFolder; every image resized with Pillow to max
side 256 (Image.thumbnail, which lets libjpeg decode at a reduced scale), JPEG quality 90,
plus the int label = the class folder's index in sorted order, as `convert images` numbers):
  mds-images      MosaicML MDSWriter, a "jpeg" column and an "int" column. MDSWriter has no
                  workers; as MosaicML's parallel-conversion guide does, a 2-process pool writes
                  one MDS directory per process and streaming's merge_index joins the indexes.
                  MDSWriter re-encodes an in-memory image at Pillow's default quality 75; to
                  store the q90 JPEG each process hands MDSWriter the q90 file it wrote on tmpfs
                  (MDSWriter stores a JpegImageFile's file bytes as they are).
  litdata-images  LitData optimize(fn, inputs, num_workers=2): fn returns {"image": q90 JPEG
                  bytes, "label": int}.
  wds-images      WebDataset ShardWriter (one writer) fed by a 2-process Pool that resizes.
  hf-images       Hugging Face datasets: Dataset.from_dict(paths, labels).map(resize,
                  num_proc=2) into Image() and int64 features, then to_parquet.
Text jobs (INPUT: the JSONL of bench/text.sh; the "text" value of every line):
  mds-text        MDSWriter with one "str" column (no workers option: one process).
  litdata-text    LitData optimize over byte ranges of the file, num_workers=2.
  hf-text         datasets.load_dataset("json", num_proc=2), the "text" column, to_parquet.

Prints one JSON line: job, items, seconds (wall, from after the imports to the output closed),
cpu_s (user+sys of this process and its reaped worker processes over the same span),
peak_rss_mib (the largest of this process and its worker processes), bytes (the output's size).
Outputs are not fsynced (convert's are). Needs the test venv (scripts/deps test).
"""
import argparse
import io
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time

MAX_SIDE = 256
QUALITY = 90


def cpu_seconds():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def peak_rss_mib():
    s = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(s, c) / 1024


def size_of(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def folder(root):
    """[(path, label)] of an ImageFolder, classes and files sorted."""
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    return [(os.path.join(root, c, f), label) for label, c in enumerate(classes)
            for f in sorted(os.listdir(os.path.join(root, c)))]


def resize_jpeg(path):
    """The job: decode, resize to max side 256 (no upscaling), JPEG quality 90."""
    from PIL import Image
    with Image.open(path) as im:
        im.thumbnail((MAX_SIDE, MAX_SIDE))
        im = im.convert("RGB")
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=QUALITY)
        return buf.getvalue()


# ---- image jobs

def _mds_part(args):
    part, items, out, scratch = args
    from PIL import Image
    from streaming import MDSWriter
    tmp = os.path.join(scratch, "part%d.jpg" % part)
    with MDSWriter(out=os.path.join(out, str(part)), columns={"image": "jpeg", "label": "int"}) as w:
        for path, label in items:
            with open(tmp, "wb") as f:
                f.write(resize_jpeg(path))
            with Image.open(tmp) as im:
                w.write({"image": im, "label": label})
    os.remove(tmp)


def mds_images(inp, out, workers):
    from streaming.base.util import merge_index
    items = folder(inp)
    scratch = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    parts = [(k, items[k::workers], out, scratch) for k in range(workers)]
    try:
        with multiprocessing.Pool(workers) as pool:
            pool.map(_mds_part, parts)
        merge_index([os.path.join(out, str(k), "index.json") for k in range(workers)], out, keep_local=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return len(items)


def _lit_fn(item):
    path, label = item
    return {"image": resize_jpeg(path), "label": label}


def litdata_images(inp, out, workers):
    from litdata import optimize
    items = folder(inp)
    optimize(fn=_lit_fn, inputs=items, output_dir=out, num_workers=workers, chunk_bytes="64MB")
    return len(items)


def _wds_fn(item):
    path, label = item
    return resize_jpeg(path), label


def wds_images(inp, out, workers):
    import webdataset as wds
    items = folder(inp)
    os.makedirs(out)
    with multiprocessing.Pool(workers) as pool, \
            wds.ShardWriter(os.path.join(out, "shard-%06d.tar"), maxcount=100000, maxsize=1 << 30, verbose=0) as w:
        for i, (jpg, label) in enumerate(pool.imap(_wds_fn, items, chunksize=16)):
            w.write({"__key__": "%06d" % i, "jpg": jpg, "cls": label})
    return len(items)


def _hf_fn(ex):
    return {"image": {"bytes": resize_jpeg(ex["path"]), "path": None}}


def hf_images(inp, out, workers):
    import datasets
    items = folder(inp)
    feats = datasets.Features({"label": datasets.Value("int64"), "image": datasets.Image()})
    ds = datasets.Dataset.from_dict({"path": [p for p, _ in items], "label": [l for _, l in items]})
    ds = ds.map(_hf_fn, num_proc=workers, remove_columns=["path"], features=feats)
    ds.to_parquet(out)
    return len(items)


# ---- text jobs

def mds_text(inp, out, workers):
    from streaming import MDSWriter
    n = 0
    with MDSWriter(out=out, columns={"text": "str"}) as w, open(inp, "rb") as f:
        for line in f:
            w.write({"text": json.loads(line)["text"]})
            n += 1
    return n


def _ranges(path, parts):
    """Byte ranges of the file cut at line ends, about 4 MB each (and at least `parts`)."""
    size = os.path.getsize(path)
    step = max(1, min(4 << 20, size // max(1, parts)))
    out, start = [], 0
    with open(path, "rb") as f:
        while start < size:
            f.seek(min(size, start + step))
            f.readline()
            end = min(size, f.tell())
            out.append((path, start, end))
            start = end
    return out


def _lit_text(r):
    path, start, end = r
    with open(path, "rb") as f:
        f.seek(start)
        for line in f.read(end - start).splitlines():
            yield {"text": json.loads(line)["text"]}


def litdata_text(inp, out, workers):
    from litdata import optimize
    optimize(fn=_lit_text, inputs=_ranges(inp, workers), output_dir=out, num_workers=workers, chunk_bytes="64MB")
    with open(inp, "rb") as f:
        return sum(1 for _ in f)


def hf_text(inp, out, workers):
    import datasets
    cache = tempfile.mkdtemp(prefix="peers-hf-", dir=os.path.dirname(os.path.abspath(out)))
    try:
        ds = datasets.load_dataset("json", data_files=inp, split="train", num_proc=workers, cache_dir=cache)
        ds.select_columns(["text"]).to_parquet(out)
        return len(ds)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


JOBS = {"mds-images": mds_images, "litdata-images": litdata_images, "wds-images": wds_images,
        "hf-images": hf_images, "mds-text": mds_text, "litdata-text": litdata_text, "hf-text": hf_text}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("job", choices=sorted(JOBS))
    ap.add_argument("input")
    ap.add_argument("out")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    # Import the peer's package before the clock starts (torch and friends take seconds).
    mod = {"mds": "streaming", "litdata": "litdata", "wds": "webdataset", "hf": "datasets"}[a.job.split("-")[0]]
    __import__(mod)
    import PIL.Image  # noqa: F401
    if os.path.exists(a.out):
        shutil.rmtree(a.out) if os.path.isdir(a.out) else os.remove(a.out)
    # The peers and their worker processes print progress bars: point file descriptor 1 at
    # stderr while they run and keep the real stdout for the JSON line.
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    c0, t0 = cpu_seconds(), time.perf_counter()
    try:
        n = JOBS[a.job](a.input, a.out, a.workers)
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
    secs = time.perf_counter() - t0
    while multiprocessing.active_children():
        time.sleep(0.01)
    print(json.dumps({"job": a.job, "items": n, "seconds": round(secs, 3), "cpu_s": round(cpu_seconds() - c0, 3),
                      "peak_rss_mib": round(peak_rss_mib(), 1), "bytes": size_of(a.out)}))


if __name__ == "__main__":
    main()
