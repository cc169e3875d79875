"""FFCV's own DatasetWriter on an ImageFolder: the job bench/images.sh times convert on.

    python bench/ffcv_write.py DATA OUT.beton [--workers 2] [--max-resolution 256] [--quality 90]

Writes OUT.beton with an RGBImageField (write_mode "jpg", max_resolution, jpeg_quality) and an
IntField label (the class folder's index in sorted order, as `convert images` numbers them),
then prints one JSON line: images, seconds (wall, the writer alone), images_per_s, cpu_s (user+sys
of this process and its worker processes), peak_rss_mib (this process and, separately, the
largest worker), bytes (the output's size). Needs the test venv (scripts/deps test).
"""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np
from PIL import Image


class Folder:
    """An ImageFolder as FFCV's writer reads it: (HWC uint8 RGB array, int label) per index."""

    def __init__(self, root):
        classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        self.items = []
        for label, c in enumerate(classes):
            for f in sorted(os.listdir(os.path.join(root, c))):
                self.items.append((os.path.join(root, c, f), label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB")), label


def cpu_seconds():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--max-resolution", type=int, default=256)
    ap.add_argument("--quality", type=int, default=90)
    a = ap.parse_args()
    from ffcv.fields import IntField, RGBImageField
    from ffcv.writer import DatasetWriter

    ds = Folder(a.data)
    fields = {
        "image": RGBImageField(write_mode="jpg", max_resolution=a.max_resolution,
                               jpeg_quality=a.quality),
        "label": IntField(),
    }
    c0, t0 = cpu_seconds(), time.perf_counter()
    w = DatasetWriter(a.out, fields, num_workers=a.workers)
    # FFCV prints a tqdm bar; keep stdout for the JSON line.
    out, sys.stdout = sys.stdout, sys.stderr
    try:
        w.from_indexed_dataset(ds, chunksize=100)
    finally:
        sys.stdout = out
    secs = time.perf_counter() - t0
    # FFCV leaves its worker processes to be joined at exit; reap them so their CPU counts.
    import multiprocessing
    while multiprocessing.active_children():
        time.sleep(0.01)
    cpu = cpu_seconds() - c0
    rs = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rc = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({
        "tool": "ffcv.writer.DatasetWriter", "workers": a.workers, "images": len(ds),
        "seconds": round(secs, 3), "images_per_s": round(len(ds) / secs, 1),
        "cpu_s": round(cpu, 3), "cpu_ms_per_image": round(cpu * 1000 / len(ds), 3),
        "peak_rss_mib": round(rs, 1), "peak_rss_worker_mib": round(rc, 1),
        "bytes": os.path.getsize(a.out),
    }))


if __name__ == "__main__":
    main()
