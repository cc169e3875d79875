"""One row of bench/loader.sh: one loader, one crop size and batch size, N+1 epochs.

    python bench/loader.py KIND PATH --size S --batch B --epochs N [--workers 2]

KIND is ffcv (FFCV's Loader on a .beton FFCV's writer made), folder (an ImageFolder read with
Pillow in a torch DataLoader), or mldf (our mldf.Loader on a .mldf, a .beton or a bucket URL).
Every loader runs the same training transform: a random-resized crop to SxS (scale 0.08-1,
ratio 3/4-4/3), a random horizontal flip, uint8 CHW batches of B with the int label, shuffled
every epoch, 2 workers or threads. Epoch 0 is a warm-up (FFCV compiles its pipeline with numba
then; page cache, thread pools) and is not counted. Prints one JSON line: images/s of each
measured epoch, their best and median, CPU seconds per image over the measured epochs (user+sys
of this process and its reaped children: DataLoader workers), peak RSS of this process and of
the largest child, the 1-minute load average at the end; for mldf.Loader also its threads'
counters over the measured epochs (loader.stats(): the busy fraction of the decoding threads,
the fraction with no sample queued, the process's CPU per thread-second, the cores used in all
and by Go's threads (decoding, runtime), the prefetch thread and the main thread (this loop and
next()), the share of a decoding thread's time on a core (loader.stats()'s thread clocks), and
the Python side's waits), and for every row the cores each OS thread of the process
used (/proc/self/task, busiest first, the main thread marked). Prints {"available": false, "why": ...} when the loader cannot run here.
"""
import argparse
import json
import math
import os
import random
import resource
import statistics
import sys
import threading
import time


def cpu_seconds():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def task_cpu():
    """CPU seconds (user + system) of each OS thread of this process, by thread id (Linux's
    /proc/self/task; {} elsewhere)."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/self/task/%s/stat" % tid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return out


def ffcv_loader(path, size, batch, workers):
    from ffcv.fields.basics import IntDecoder
    from ffcv.fields.rgb_image import RandomResizedCropRGBImageDecoder
    from ffcv.loader import Loader, OrderOption
    from ffcv.transforms import RandomHorizontalFlip, ToTensor, ToTorchImage

    return Loader(path, batch_size=batch, num_workers=workers, order=OrderOption.RANDOM,
                  os_cache=True, drop_last=False, seed=0,
                  pipelines={"image": [RandomResizedCropRGBImageDecoder((size, size)),
                                       RandomHorizontalFlip(), ToTensor(), ToTorchImage()],
                             "label": [IntDecoder(), ToTensor()]})


class PillowRandomResizedCrop:
    """torchvision's RandomResizedCrop (scale 0.08-1, ratio 3/4-4/3, bilinear) with Pillow."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
        self.size, self.scale, self.ratio = size, scale, ratio

    def __call__(self, im):
        from PIL import Image
        w, h = im.size
        area = w * h
        lr = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(10):
            a = area * random.uniform(*self.scale)
            r = math.exp(random.uniform(*lr))
            cw, ch = int(round(math.sqrt(a * r))), int(round(math.sqrt(a / r)))
            if 0 < cw <= w and 0 < ch <= h:
                x, y = random.randint(0, w - cw), random.randint(0, h - ch)
                break
        else:  # central crop, as torchvision falls back
            r = w / h
            if r < self.ratio[0]:
                cw, ch = w, int(round(w / self.ratio[0]))
            elif r > self.ratio[1]:
                ch, cw = h, int(round(h * self.ratio[1]))
            else:
                cw, ch = w, h
            x, y = (w - cw) // 2, (h - ch) // 2
        return im.resize((self.size, self.size), Image.BILINEAR, box=(x, y, x + cw, y + ch))


class FolderDataset:
    def __init__(self, root, size):
        classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        self.items = [(os.path.join(root, c, f), i) for i, c in enumerate(classes)
                      for f in sorted(os.listdir(os.path.join(root, c)))]
        try:
            import torchvision.transforms as T
            self.crop = T.RandomResizedCrop(size)
            self.flip = T.RandomHorizontalFlip()
            self.how = "torchvision %s" % __import__("torchvision").__version__
        except ImportError:
            self.crop = PillowRandomResizedCrop(size)
            self.flip = lambda im: im.transpose(0) if random.random() < 0.5 else im
            self.how = "Pillow (torchvision absent)"

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        import numpy as np
        import torch
        from PIL import Image
        path, label = self.items[i]
        with Image.open(path) as im:
            im = self.flip(self.crop(im.convert("RGB")))
        a = torch.from_numpy(np.asarray(im).copy()).permute(2, 0, 1)
        return a, label


def folder_loader(path, size, batch, workers):
    import torch
    ds = FolderDataset(path, size)
    dl = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=True, num_workers=workers,
                                     drop_last=False)
    dl.how = ds.how
    return dl


def mldf_loader(path, size, batch, workers):
    import mldf
    if not hasattr(mldf, "Loader"):
        raise ImportError("mldf.Loader does not exist in this build of the Python package")
    from mldf import decoders, transforms
    return mldf.Loader(path, batch_size=batch, order="random", seed=0, threads=workers,
                       drop_last=False,
                       pipelines={"image": [decoders.RandomResizedCrop(size),
                                            transforms.RandomHorizontalFlip(),
                                            transforms.ToCHW()],
                                  "label": [decoders.Int()]})


def count(b):
    if isinstance(b, dict):
        return len(next(iter(b.values())))
    return len(b[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["ffcv", "folder", "mldf"])
    ap.add_argument("path")
    ap.add_argument("--size", type=int, default=160)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    make = {"ffcv": ffcv_loader, "folder": folder_loader, "mldf": mldf_loader}[a.kind]
    try:
        loader = make(a.path, a.size, a.batch, a.workers)
    except Exception as e:  # report, do not crash the table
        print(json.dumps({"available": False, "why": f"{type(e).__name__}: {e}"[:300]}))
        return
    rates, cpu, n_measured, first, stats = [], 0.0, 0, None, None
    for epoch in range(a.epochs + 1):
        if hasattr(loader, "set_epoch"):
            loader.set_epoch(epoch)
        if epoch == 1:
            tasks0, wall0 = task_cpu(), time.perf_counter()
            if hasattr(loader, "stats"):
                loader.stats(reset=True)  # the engine's counters over the measured epochs
        c0, t0, n = cpu_seconds(), time.perf_counter(), 0
        for b in loader:
            n += count(b)
        dt = time.perf_counter() - t0
        if epoch == 0:
            first = n / dt
            continue
        cpu += cpu_seconds() - c0
        n_measured += n
        rates.append(n / dt)
    # cores each OS thread used over the measured epochs (CPU s per wall s), busiest first;
    # the main thread's marked
    wall = time.perf_counter() - wall0
    tasks1, main_tid = task_cpu(), threading.get_native_id()
    per_task = sorted(((tasks1[t] - tasks0.get(t, 0.0), t) for t in tasks1), reverse=True)
    task_cores = ["%s%.2f" % ("main:" if t == main_tid else "", c / wall) for c, t in per_task if c > 0]
    if hasattr(loader, "stats"):
        st = loader.stats()
        thread_s = st["threads"] * st["wall_seconds"]
        w = st["wall_seconds"]
        py = st["python"]
        # the share of a sample's wall time its thread was on a core (the samples timed with
        # the thread clock: one in 32), and the CPU of the threads that are not Python's (the
        # decoding threads, the Go runtime's): the process's less the prefetch thread's and the
        # main thread's (this loop and next())
        on_core = None
        if st.get("cpu_seconds", -1) > 0 and st.get("cpu_busy_seconds", 0) > 0:
            on_core = st["cpu_seconds"] / st["cpu_busy_seconds"]
        main_cpu = tasks1.get(main_tid, 0.0) - tasks0.get(main_tid, 0.0)
        go_cpu = st["process_cpu_seconds"] - py.get("prefetch_cpu_seconds", 0) - main_cpu
        stats = {"utilisation": round(st["utilisation"], 3),
                 "starved": round(st["starved_seconds"] / thread_s, 3) if thread_s else None,
                 "process_cpu_per_thread_s": round(st["process_cpu_seconds"] / thread_s, 3) if thread_s else None,
                 # cores used in all (process CPU s per wall s), and by: Go's threads (decoding,
                 # runtime), the prefetch thread, the main thread (this loop, next()), next() alone
                 "cores": round(st["process_cpu_seconds"] / w, 3) if w else None,
                 "cores_go": round(go_cpu / w, 3) if w else None,
                 "cores_prefetch": round(py.get("prefetch_cpu_seconds", 0) / w, 3) if w else None,
                 "cores_main": round(main_cpu / w, 3) if w else None,
                 "cores_consumer": round(py.get("consumer_cpu_seconds", 0) / w, 3) if w else None,
                 "on_core": round(on_core, 3) if on_core else None,
                 "moved_samples": st.get("moved_samples"),
                 "python": {k: round(v, 3) for k, v in py.items()}}
    print(json.dumps({
        "available": True, "kind": a.kind, "size": a.size, "batch": a.batch,
        "how": getattr(loader, "how", ""), "images_per_epoch": n_measured // max(a.epochs, 1),
        "warmup_images_per_s": round(first, 1),
        "images_per_s": [round(r, 1) for r in rates], "best": round(max(rates), 1),
        "median": round(statistics.median(rates), 1),
        "cpu_ms_per_image": round(cpu * 1000 / max(n_measured, 1), 3),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "peak_rss_child_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
        "load_average": round(os.getloadavg()[0], 2),
        "threads": stats,
        "task_cores": task_cores,
    }))


if __name__ == "__main__":
    sys.exit(main())
