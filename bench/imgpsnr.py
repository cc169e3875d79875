#!/usr/bin/env python3
"""PSNR of an MLDF image field against a reference made from the source images.

The reference for each sample is the source decoded at full resolution by Pillow and shrunk to
the stored size with Pillow's area average (Image.resize with BOX), the filter the image field
imitates by default. The stored image is decoded by Pillow too. Samples are matched to source
files in the ImageFolder source's order (class folders sorted, files sorted in each), which the
tool checks against the label column.

    /usr/bin/python3 bench/imgpsnr.py SRC_DIR OUT.mldf [--field image] [--every K]

Prints the mean of the per-image PSNRs (dB, over R, G and B), the PSNR of the pooled mean
squared error, and the worst image. Needs numpy and Pillow (Debian: python3-numpy python3-pil).
"""

import argparse
import io
import math
import os
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import mldf  # noqa: E402

EXTS = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".tif", ".tiff", ".webp"}


def folder_files(root):
    """(path, class index) in the ImageFolder source's order."""
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    out = []
    for k, c in enumerate(classes):
        d = os.path.join(root, c)
        for f in sorted(os.listdir(d)):
            if os.path.splitext(f)[1].lower() in EXTS:
                out.append((os.path.join(d, f), k))
    return out


def psnr(mse):
    return float("inf") if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("mldf")
    ap.add_argument("--field", default="image")
    ap.add_argument("--every", type=int, default=1, help="compare every K-th sample")
    a = ap.parse_args()
    files = folder_files(a.src)
    r = mldf.open(a.mldf, decode_images=False)
    if len(r) != len(files):
        sys.exit("imgpsnr: %d samples in %s, %d files in %s" % (len(r), a.mldf, len(files), a.src))
    labels = r.column("label") if "label" in r.field_names else None
    per, sq, px = [], 0.0, 0
    worst = (float("inf"), None)
    for i in range(0, len(r), a.every):
        path, k = files[i]
        if labels is not None and int(labels[i]) != k:
            sys.exit("imgpsnr: sample %d has label %d, file %s is class %d" % (i, labels[i], path, k))
        enc = r.sample(i)[a.field]
        out = np.asarray(Image.open(io.BytesIO(bytes(enc))).convert("RGB"), dtype=np.float64)
        h, w = out.shape[:2]
        with Image.open(path) as im:
            ref = im.convert("RGB").resize((w, h), Image.BOX)
        d = out - np.asarray(ref, dtype=np.float64)
        m = float(np.mean(d * d))
        per.append(psnr(m))
        sq += m * d.size
        px += d.size
        if per[-1] < worst[0]:
            worst = (per[-1], path)
    print("images %d  mean PSNR %.3f dB  pooled PSNR %.3f dB  worst %.2f dB (%s)"
          % (len(per), sum(per) / len(per), psnr(sq / px), worst[0], worst[1]))


if __name__ == "__main__":
    main()
