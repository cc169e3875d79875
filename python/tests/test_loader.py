"""mldf.Loader end to end over the native library (built by the native_lib fixture; these tests
skip, saying why, without Go). The files come from cmd/mkfixtures: bench_jpeg.mldf holds 300
photo-like 320x240 JPEGs whose INT field "label" is the sample index."""

import gc
import io
import json
import os
import shutil
import signal
import sys
import threading
import warnings

import numpy as np
import pytest

import mldf
from mldf import decoders as D
from mldf import transforms as T


@pytest.fixture(scope="module")
def fx(native_lib, loader_dir):
    return loader_dir


def path(fx, name="bench_jpeg"):
    return os.path.join(fx, name + ".mldf")


N = 300  # samples of bench_jpeg


def prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "mldf-prefetch"]


def labels_of(loader):
    return [b["label"].copy() for b in loader]


def image_loader(fx, **kw):
    pipes = kw.pop("pipelines", None) or {
        "image": [D.RandomResizedCrop(64), T.RandomHorizontalFlip(), T.ToCHW()], "label": [D.Int()]}
    return mldf.Loader(path(fx), pipelines=pipes, **kw)


# ---- shapes, dtypes, sizes


def test_batch_shapes_and_dtypes(fx):
    pipes = {"image": [D.RandomResizedCrop((48, 64)), T.Flip(), T.Normalize(T.IMAGENET_MEAN, T.IMAGENET_STD,
                                                                              dtype="float16"), T.ToCHW()],
             "label": [D.Int()]}
    with mldf.Loader(path(fx), batch_size=64, pipelines=pipes, seed=1) as loader:
        assert len(loader) == 5 and loader.num_samples == N
        sizes = []
        for b in loader:
            assert set(b) == {"image", "label"}
            assert b["image"].dtype == np.float16 and b["image"].shape[1:] == (3, 48, 64)
            assert b["label"].dtype == np.int64 and b["label"].shape == b["image"].shape[:1]
            assert b["image"].flags.c_contiguous
            assert np.isfinite(b["image"]).all() and -3 < b["image"].min() < 0 < b["image"].max() < 3
            sizes.append(len(b["label"]))
        assert sizes == [64, 64, 64, 64, 44]
    with image_loader(fx, batch_size=64, drop_last=True,
                      pipelines={"image": [D.CenterCrop(32)], "label": [D.Int()]}) as loader:
        assert len(loader) == 4
        got = list(b["image"].shape for b in loader)
        assert got == [(64, 32, 32, 3)] * 4
        assert [o["name"] for o in loader.outputs] == ["image", "label"]


def test_every_sample_once_per_epoch(fx):
    for order in mldf.loader.ORDERS:
        with mldf.Loader(path(fx), batch_size=32, order=order, pipelines={"label": [D.Int()]}) as loader:
            for _ in range(2):
                got = np.concatenate(labels_of(loader))
                assert sorted(got.tolist()) == list(range(N)), order
            if order == "sequential":
                assert got.tolist() == list(range(N))


def test_epochs_differ_and_set_epoch(fx):
    loader = mldf.Loader(path(fx), batch_size=50, order="random", seed=3, pipelines={"label": [D.Int()]})
    e0 = np.concatenate(labels_of(loader))
    e1 = np.concatenate(labels_of(loader))
    assert loader.epoch == 2
    assert not np.array_equal(e0, e1)
    loader.set_epoch(0)
    assert np.array_equal(np.concatenate(labels_of(loader)), e0)
    loader.set_epoch(1)
    assert np.array_equal(np.concatenate(labels_of(loader)), e1)
    # an epoch left early counts as done: the next iter() is the next epoch
    loader.set_epoch(0)
    for _ in loader:
        break
    assert np.array_equal(np.concatenate(labels_of(loader)), e1)


# ---- pixels


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


@pytest.mark.parametrize("jpeg", ["accurate", "fast"])
def test_center_crop_matches_pillow(fx, jpeg):
    """A CenterCrop batch equals Pillow's decode + crop of the centered square + antialiased
    bilinear resize within 30 dB PSNR (each image, and the batch), with either JPEG decode."""
    Image = pytest.importorskip("PIL.Image")
    size, ratio = 96, 0.875
    n = 24
    with mldf.Loader(path(fx), batch_size=n, order="sequential",
                     pipelines={"image": [D.CenterCrop(size, ratio=ratio, jpeg=jpeg)], "label": [D.Int()]}) as loader:
        batch = next(iter(loader))
        got, idx = batch["image"].copy(), batch["label"].copy()
    assert got.shape == (n, size, size, 3) and got.dtype == np.uint8
    ref = np.empty_like(got)
    with mldf.open(path(fx), decode_images=False) as r:
        for k, i in enumerate(idx):
            img = Image.open(io.BytesIO(bytes(r.payload(int(i), "image")))).convert("RGB")
            w, h = img.size
            side = ratio * min(w, h)
            box = ((w - side) / 2, (h - side) / 2, (w + side) / 2, (h + side) / 2)
            ref[k] = np.asarray(img.resize((size, size), Image.BILINEAR, box=box))
    each = [psnr(got[k], ref[k]) for k in range(n)]
    print("jpeg=%s: worst image %.1f dB, batch %.1f dB against Pillow" % (jpeg, min(each), psnr(got, ref)))
    assert min(each) >= 30, each
    assert psnr(got, ref) >= 30


def test_resize_and_gray(fx):
    with mldf.Loader(path(fx), batch_size=8, order="sequential",
                     pipelines={"image": [D.Resize((24, 40), channels=1)], "label": [D.Int()]}) as loader:
        b = next(iter(loader))
    assert b["image"].shape == (8, 24, 40, 1) and b["image"].dtype == np.uint8


# ---- determinism


def test_same_seed_same_batches_any_threads(fx):
    runs = []
    for threads, prefetch in [(1, 0), (2, 2), (4, 1), (0, 3)]:
        with image_loader(fx, batch_size=40, seed=7, threads=threads, prefetch=prefetch, copy=True) as loader:
            runs.append([(b["image"], b["label"]) for b in loader])
    ref = runs[0]
    for run in runs[1:]:
        assert len(run) == len(ref)
        for (ai, al), (bi, bl) in zip(ref, run):
            assert np.array_equal(al, bl) and np.array_equal(ai, bi)
    with image_loader(fx, batch_size=40, seed=8, copy=True) as loader:
        other = [(b["image"], b["label"]) for b in loader]
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(ref, other))


def epoch_batches(fx, epoch, start=0, **kw):
    """The batches of one epoch from a fresh loader (no batch submitted ahead by an earlier epoch)."""
    with image_loader(fx, copy=True, **kw) as loader:
        loader.set_epoch(epoch)
        if start:
            st = loader.state_dict()
            loader.load_state_dict(dict(st, samples_done=start))
        return [(b["image"], b["label"]) for b in loader]


def same_batches(a, b):
    return len(a) == len(b) and all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a, b))


@pytest.mark.parametrize("threads,prefetch", [(1, 1), (2, 2), (3, 3)])
def test_next_epoch_starts_before_this_one_is_handed_over(fx, threads, prefetch):
    """Epochs iterated back to back: the prefetch thread submits epoch e+1's first batches once
    e's last is submitted, and the next iter() takes them over; the batches are exactly those of
    each epoch read on its own, for any thread count and prefetch depth. Anything but the next
    epoch from its start (set_epoch to another, load_state_dict mid-epoch, a break, close())
    discards them and still gives the right batches, with no thread left."""
    kw = dict(batch_size=48, seed=3, threads=threads, prefetch=prefetch)
    ref = {e: epoch_batches(fx, e, **kw) for e in (0, 1, 2, 5)}
    before = len(prefetch_threads())
    with image_loader(fx, copy=True, **kw) as loader:
        ahead = 0
        for e in range(3):
            got = [(b["image"], b["label"]) for b in loader]
            assert same_batches(got, ref[e]), "epoch %d" % e
            carried = loader._carry._items
            assert all(c[0] == e + 1 and c[1] == i for i, c in enumerate(carried))
            ahead += len(carried)
        # (whether a slot was free in time is the threads' timing; in three epochs one was)
        assert ahead >= 1
        # set_epoch to another epoch: the batches submitted for epoch 3 are dropped
        loader.set_epoch(5)
        assert same_batches([(b["image"], b["label"]) for b in loader], ref[5])
        # set_epoch to the very epoch that was submitted ahead (DistributedSampler's habit): kept
        loader.set_epoch(6)
        assert same_batches([(b["image"], b["label"]) for b in loader], epoch_batches(fx, 6, **kw))
        # a break after the epoch's last batch: the next epoch is the one submitted ahead
        loader.set_epoch(0)
        for i, _ in enumerate(loader):
            if i == len(loader) - 1:
                break
        assert same_batches([(b["image"], b["label"]) for b in loader], ref[1])
        # resuming mid-epoch 2 (after epoch 1 submitted epoch 2's first batches)
        state = loader.state_dict()
        assert state["epoch"] == 2 and state["samples_done"] == 0
        loader.load_state_dict(dict(state, samples_done=96))
        assert same_batches([(b["image"], b["label"]) for b in loader], ref[2][2:])
        # epoch 3's batches, if any were submitted, are left for close() to discard
    assert not loader._carry._items and len(prefetch_threads()) == before


def test_stats_count_the_work(fx):
    """loader.stats(): the threads' counters (busy, starved, per worker) and the Python side's
    waits; sane values, not timings."""
    for threads, prefetch in [(2, 2), (1, 0)]:
        with image_loader(fx, batch_size=64, threads=threads, prefetch=prefetch) as loader:
            st = loader.stats(reset=True)
            assert st["samples"] == 0 and st["batches"] == 0
            n = sum(len(b["label"]) for b in loader)
            st = loader.stats()
            assert st["threads"] == threads and len(st["workers"]) == threads
            # with prefetch, the threads may have started the next epoch's first batches
            ahead = prefetch
            assert n == N and N <= st["samples"] <= N + ahead * 64
            assert len(loader) <= st["batches"] <= len(loader) + ahead
            assert sum(w["samples"] for w in st["workers"]) == st["samples"]
            assert 0 < st["busy_seconds"] == pytest.approx(sum(w["busy_seconds"] for w in st["workers"]))
            assert st["busy_seconds"] <= st["running_seconds"] * 1.001 + 1e-3
            assert st["running_seconds"] <= threads * st["wall_seconds"] * 1.001 + 1e-3
            assert st["starved_seconds"] >= 0 and st["wait_seconds"] >= 0
            assert 0 < st["utilisation"] <= 1.001
            assert st["process_cpu_seconds"] > 0 or sys.platform == "win32"
            py = st["python"]
            assert set(py) == {"consumer_wait_seconds", "decode_wait_seconds", "slot_wait_seconds", "python_seconds",
                               "prefetch_cpu_seconds", "consumer_cpu_seconds"}
            assert all(v >= 0 for v in py.values())
            assert py["consumer_cpu_seconds"] > 0 and (py["prefetch_cpu_seconds"] > 0) == (prefetch > 0)
            if sys.platform.startswith("linux"):
                # the threads' CPU time while decoding: measured, within the wall time it was measured over
                assert 0 < st["cpu_seconds"] <= st["cpu_busy_seconds"] + 2e-3
                assert st["cpu_busy_seconds"] <= st["busy_seconds"] * 1.001 + 1e-6
                assert st["cpu_seconds"] == pytest.approx(sum(w["cpu_seconds"] for w in st["workers"]))
                # one sample in 32 per thread is timed with the thread clock
                assert st["samples"] // 32 <= st["timed_samples"] + st["moved_samples"] <= st["samples"] // 32 + threads
            if prefetch:
                assert py["decode_wait_seconds"] > 0
            loader.stats(reset=True)
            again = loader.stats()
            # (the next epoch's first batches, started ahead, may still be decoding after the reset)
            assert again["samples"] <= ahead * 64 and all(v == 0 for v in again["python"].values())
            if not ahead:
                assert again["samples"] == 0 and again["busy_seconds"] == 0
        with pytest.raises(ValueError, match="closed"):
            loader.stats()


def test_random_ops_do_not_depend_on_batch_composition(fx):
    """A sample's crop and flip are a function of (seed, epoch, sample): the same in a batch of
    7 in sequential order as in a batch of 64 in random order."""
    pipes = {"image": [D.RandomResizedCrop(32), T.Flip()], "label": [D.Int()]}
    by = {}
    with mldf.Loader(path(fx), batch_size=7, order="sequential", seed=5, pipelines=pipes) as a:
        for b in a:
            for img, lab in zip(b["image"], b["label"]):
                by[int(lab)] = img.copy()
    with mldf.Loader(path(fx), batch_size=64, order="random", seed=5, pipelines=pipes) as a:
        for b in a:
            for img, lab in zip(b["image"], b["label"]):
                assert np.array_equal(by[int(lab)], img)


# ---- buffers and threads


def test_kept_batches_are_not_overwritten(fx):
    """Batches kept past the next iteration keep their values (the ring gives fresh memory to a
    slot whose arrays are still referenced); only unreferenced slots are reused."""
    with image_loader(fx, batch_size=16, seed=2, prefetch=1) as loader:
        kept = list(loader)  # every batch held at once
    with image_loader(fx, batch_size=16, seed=2, copy=True) as loader:
        ref = list(loader)
    assert len(kept) == len(ref)
    for a, b in zip(kept, ref):
        assert np.array_equal(a["image"], b["image"]) and np.array_equal(a["label"], b["label"])
    # not kept: the ring's memory is reused (a few distinct buffers for many batches)
    with image_loader(fx, batch_size=8, seed=2, prefetch=2) as loader:
        addrs = {b["image"].__array_interface__["data"][0] for b in loader}
    assert len(addrs) <= 4


def test_torch_from_numpy_shares_memory(fx):
    torch = pytest.importorskip("torch")
    with image_loader(fx, batch_size=16) as loader:
        b = next(iter(loader))
        t = torch.from_numpy(b["image"])
        assert t.data_ptr() == b["image"].__array_interface__["data"][0]


def test_no_thread_outlives_iteration(fx):
    before = len(prefetch_threads())
    loader = image_loader(fx, batch_size=16, prefetch=3)
    for i, _ in enumerate(loader):
        if i == 2:
            break
    gc.collect()
    assert len(prefetch_threads()) == before
    with pytest.raises(ZeroDivisionError):
        for i, _ in enumerate(loader):
            1 / (i - 3)
    gc.collect()
    assert len(prefetch_threads()) == before
    it = iter(loader)
    next(it)
    it2 = iter(loader)  # a newer iterator replaces the older one
    with pytest.raises(RuntimeError, match="newer iter"):
        next(it)
    next(it2)
    loader.close()
    assert len(prefetch_threads()) == before
    with pytest.raises(RuntimeError, match="closed"):
        next(it2)
    # a loader made in the for statement lives as long as its iterator
    n = sum(len(b["label"]) for b in image_loader(fx, batch_size=100))
    assert n == N and len(prefetch_threads()) == before


def test_ctrl_c_stops_the_loop_and_its_thread(fx):
    """SIGINT while batches are decoded raises KeyboardInterrupt in the loop (the Go runtime
    leaves SIGINT to Python), and the prefetch thread ends with the iterator."""
    before = len(prefetch_threads())
    loader = image_loader(fx, batch_size=16, prefetch=2)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in range(10000):
                for _ in loader:
                    pass
    finally:
        timer.cancel()
    gc.collect()
    assert len(prefetch_threads()) == before
    assert sum(len(b["label"]) for b in loader) == N


# ---- errors


def test_damaged_file_is_named(fx):
    bad = os.path.join(fx, "bad_signature.mldf")
    with pytest.raises(mldf.LoaderError, match="bad_signature.mldf"):
        mldf.Loader(bad, pipelines={"label": [D.Int()]})


def corrupt_copy(fx, tmp_path, sample, how):
    """A copy of bench_jpeg.mldf with sample's JPEG payload changed in place by how(bytearray)."""
    src = path(fx)
    with mldf.open(src, decode_images=False) as r:
        payload = bytes(r.payload(sample, "image"))
    data = bytearray(open(src, "rb").read())
    at = data.find(payload)
    assert at > 0 and data.find(payload, at + 1) < 0
    chunk = bytearray(payload)
    how(chunk)
    data[at:at + len(chunk)] = chunk
    out = tmp_path / "bad.mldf"
    out.write_bytes(bytes(data))
    return str(out)


def test_corrupt_payload_names_the_sample(fx, tmp_path):
    def smash(b):  # no JPEG start-of-image marker, a garbled header
        b[0:64] = b"\x00" * 64

    bad = corrupt_copy(fx, tmp_path, 37, smash)
    before = len(prefetch_threads())
    with mldf.Loader(bad, batch_size=16, order="sequential",
                     pipelines={"image": [D.CenterCrop(32)], "label": [D.Int()]}) as loader:
        seen = []
        with pytest.raises(mldf.LoaderError) as e:
            for b in loader:
                seen.extend(b["label"].tolist())
        assert "sample 37" in str(e.value) and "bad.mldf" in str(e.value) and "image" in str(e.value)
        assert seen == list(range(32))  # the batches before the bad one came through
        gc.collect()
        assert len(prefetch_threads()) == before
        # the loader is still usable: another epoch ends at the same sample
        with pytest.raises(mldf.LoaderError, match="sample 37"):
            for b in loader:
                pass
    # the process lives on; another loader on a good file works
    with image_loader(fx, batch_size=100) as ok:
        assert sum(len(b["label"]) for b in ok) == N


def test_verify_checksums_detects_a_flipped_byte(fx, tmp_path):
    def flip(b):
        b[len(b) // 2] ^= 0x01  # in the entropy-coded data: decodes, but the CRC no longer matches

    bad = corrupt_copy(fx, tmp_path, 123, flip)
    pipes = {"image": [D.CenterCrop(32)], "label": [D.Int()]}
    with mldf.Loader(bad, batch_size=50, order="sequential", verify_checksums=True, pipelines=pipes) as loader:
        with pytest.raises(mldf.LoaderError) as e:
            for _ in loader:
                pass
    msg = str(e.value)
    assert "sample 123" in msg and ("checksum" in msg.lower() or "crc" in msg.lower()), msg
    with mldf.Loader(path(fx), batch_size=50, verify_checksums=True, pipelines=pipes) as loader:
        assert sum(len(b["label"]) for b in loader) == N


def test_bad_plans_are_named(fx):
    with pytest.raises(ValueError, match="field 'label' is INT; RandomResizedCrop does not decode it"):
        mldf.Loader(path(fx), pipelines={"label": [D.RandomResizedCrop(8)]})
    with pytest.raises(KeyError, match="'imag'"):
        mldf.Loader(path(fx), pipelines={"imag": [D.CenterCrop(8)]})
    with pytest.raises(mldf.LoaderError, match="bad plan"):
        # a parameter the Python side lets through but the file cannot satisfy
        mldf.Loader(path(fx, "ndarray"), pipelines={"fixed": [D.NDArray("float64", (3, 4))]})


# ---- other field types


def expected(fx, name):
    with open(os.path.join(fx, name + ".expected.json")) as f:
        return json.load(f)


def test_scalars_bytes_json(fx):
    with mldf.Loader(path(fx, "scalars"), batch_size=16, order="sequential",
                     pipelines={"label": [D.Int()], "score": [D.Float()], "meta": [D.JSON()],
                                "blob": [D.Bytes()]}) as loader:
        got = {"label": [], "score": [], "meta": [], "blob": []}
        for b in loader:
            assert b["label"].dtype == np.int64 and b["score"].dtype == np.float64
            assert isinstance(b["meta"], list) and isinstance(b["blob"], list)
            for k in got:
                got[k].extend(b[k].tolist() if isinstance(b[k], np.ndarray) else b[k])
    with mldf.open(path(fx, "scalars")) as r:
        assert got["label"] == r.column("label").tolist()
        assert np.array_equal(np.array(got["score"]), r.column("score"), equal_nan=True)
        for i in range(len(r)):
            s = r[i]
            assert got["meta"][i] == s["meta"]
            assert got["blob"][i] == bytes(r.payload(i, "blob"))


def test_text_and_ndarray(fx):
    with mldf.open(path(fx, "text")) as r:
        want = [r[i] for i in range(len(r))]
    with mldf.Loader(path(fx, "text"), batch_size=4, order="sequential",
                     pipelines={"text": [D.Text()], "cl100k": [D.Text()]}) as loader:
        got = [(t, c) for b in loader for t, c in zip(b["text"], b["cl100k"])]
    assert len(got) == len(want)
    for (t, c), w in zip(got, want):
        assert t == w["text"]  # str
        assert c.dtype == np.uint32 and np.array_equal(c.astype(np.int64), w["cl100k"].astype(np.int64))
    with mldf.Loader(path(fx, "ndarray"), batch_size=5, order="sequential",
                     pipelines={"fixed": [D.NDArray()], "idx": [D.Int()]}) as loader:
        arrs = [(b["fixed"].copy(), b["idx"].copy()) for b in loader]
    with mldf.open(path(fx, "ndarray")) as r:
        for a, idx in arrs:
            assert a.shape[1:] == (3, 4) and a.dtype == np.float32
            for k, i in enumerate(idx):
                assert np.array_equal(a[k], r[int(i)]["fixed"])


def test_audio(fx):
    """PCM and FLAC cut to a length (and padded), against the reader's PCM samples."""
    with mldf.Loader(path(fx, "audio"), batch_size=6, order="sequential",
                     pipelines={"pcm16": [D.Audio(80, offset="start", dtype="int16")],
                                "flac": [D.Audio(80, offset="start", dtype="int16")],
                                "f32": [D.Audio(1000, offset="random")]}) as loader:
        b = next(iter(loader))
    assert b["pcm16"].shape == (6, 1, 80) and b["pcm16"].dtype == np.int16
    assert b["f32"].shape == (6, 1, 1000) and b["f32"].dtype == np.float32 and np.abs(b["f32"]).max() <= 1.0
    with mldf.open(path(fx, "audio")) as r:
        for i in range(6):
            pcm = r[i]["pcm16"]
            if pcm.shape[1] != 1:
                continue  # a stereo clip is mixed down to the mean of its channels
            n = min(80, pcm.shape[0])
            assert np.array_equal(b["pcm16"][i, 0, :n], pcm[:n, 0])
            assert not b["pcm16"][i, 0, n:].any()  # padded with 0
            assert np.array_equal(b["flac"][i], b["pcm16"][i])  # FLAC is lossless


# ---- distributed and resuming


@pytest.mark.parametrize("world, drop_last", [(3, False), (3, True), (4, False), (7, True)])
def test_distributed_shares(fx, world, drop_last):
    shares = []
    for rank in range(world):
        with mldf.Loader(path(fx), batch_size=16, order="random", seed=9, rank=rank, world_size=world,
                         drop_last=drop_last, pipelines={"label": [D.Int()]}) as loader:
            got = np.concatenate(labels_of(loader)) if len(loader) else np.array([], np.int64)
            per = N // world if drop_last else -(-N // world)
            assert loader.num_samples == per
            assert len(loader) == (per // 16 if drop_last else -(-per // 16))
            assert len(got) == (per // 16 * 16 if drop_last else per)
            shares.append(got)
    assert len({len(s) for s in shares}) == 1  # equal
    allv = np.concatenate(shares)
    if drop_last:
        assert len(set(allv.tolist())) == len(allv)  # disjoint
    else:
        assert set(allv.tolist()) == set(range(N))  # covering (padded by wrapping around)
        assert len(allv) - len(set(allv.tolist())) == (-N) % world


def test_distributed_from_environment(fx, monkeypatch):
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with mldf.Loader(path(fx), batch_size=10, pipelines={"label": [D.Int()]}) as loader:
        assert (loader.rank, loader.world_size) == (1, 2) and loader.num_samples == N // 2


@pytest.mark.parametrize("order", ["random", "quasi_random", "sequential"])
@pytest.mark.parametrize("k", [0, 3, 9])
def test_state_dict_resumes_with_the_rest(fx, order, k):
    kw = dict(batch_size=32, order=order, seed=11, copy=True)
    full = image_loader(fx, **kw)
    full.set_epoch(2)
    ref = [(b["image"], b["label"]) for b in full]
    a = image_loader(fx, **kw)
    a.set_epoch(2)
    it = iter(a)
    for _ in range(k):
        next(it)
    state = json.loads(json.dumps(a.state_dict()))  # it survives JSON (a checkpoint)
    assert state["epoch"] == 2 and state["samples_done"] == min(k * 32, N)
    del it
    b = image_loader(fx, **kw)
    b.load_state_dict(state)
    assert len(b) == len(ref) and len(iter(b)) == len(ref) - k  # an unused iterator moves nothing
    rest = [(x["image"], x["label"]) for x in b]
    assert len(rest) == len(ref) - k
    for (ri, rl), (xi, xl) in zip(ref[k:], rest):
        assert np.array_equal(rl, xl) and np.array_equal(ri, xi)
    # then the next epoch, as the uninterrupted loader's
    full_next = np.concatenate(labels_of(full))
    assert np.array_equal(np.concatenate(labels_of(b)), full_next)


def test_state_dict_after_the_epoch_and_mismatch(fx):
    a = mldf.Loader(path(fx), batch_size=100, seed=1, pipelines={"label": [D.Int()]})
    for _ in a:
        pass
    s = a.state_dict()
    assert (s["epoch"], s["samples_done"]) == (1, 0)
    other = mldf.Loader(path(fx), batch_size=100, seed=2, pipelines={"label": [D.Int()]})
    with pytest.raises(ValueError, match="seed=1"):
        other.load_state_dict(s)
    with pytest.raises(ValueError, match="not a state"):
        other.load_state_dict({"epoch": 1})
    # a different batch size resumes at the same sample
    b = mldf.Loader(path(fx), batch_size=7, seed=1, pipelines={"label": [D.Int()]})
    it = iter(a)
    first = next(it)["label"].copy()
    st = a.state_dict()
    rest_a = np.concatenate([first] + labels_of(it))
    b.load_state_dict(st)
    assert np.array_equal(np.concatenate(labels_of(b)), rest_a[100:])


def test_quasi_random_reads_stay_local(fx):
    """quasi_random with windows of 1 page: each window's run of the order draws from one block
    of page_samples consecutive samples (the last also from the tail); random does not."""
    with mldf.Loader(path(fx), batch_size=N, order="quasi_random", window_pages=1, seed=4,
                     pipelines={"label": [D.Int()]}) as loader:
        per = loader._handle.info["page_samples"]
        order = np.concatenate(labels_of(loader))
    assert sorted(order.tolist()) == list(range(N))
    full = N // per
    assert full >= 2, "the fixture should span several pages"
    runs = [order[w * per:(w + 1) * per] for w in range(full - 1)]
    for run in runs:
        assert len(set((run // per).tolist())) == 1
    assert not np.array_equal(order, np.arange(N))
    with mldf.Loader(path(fx), batch_size=N, order="random", seed=4, pipelines={"label": [D.Int()]}) as loader:
        rnd = np.concatenate(labels_of(loader))
    assert max(len(set((rnd[w * per:(w + 1) * per] // per).tolist())) for w in range(full - 1)) > 1


# ---- fork


def test_fork_is_refused(fx):
    """A Loader used in a forked child raises ForkError (naming fork and the fix) instead of
    hanging in a Go runtime that did not survive the fork; the parent's loader still works."""
    if not hasattr(os, "fork"):
        pytest.skip("no os.fork on this platform")
    loader = image_loader(fx, batch_size=32)
    next(iter(loader))
    r, w = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a multi-threaded process
        pid = os.fork()
    if pid == 0:  # the child: report, never return into pytest
        code = 1
        try:
            os.close(r)
            signal.alarm(60)  # a hang would be the bug under test
            msgs = []
            for attempt in (lambda: next(iter(loader)), lambda: image_loader(fx, batch_size=32)):
                try:
                    attempt()
                    msgs.append("NO ERROR")
                except mldf.ForkError as e:
                    msgs.append(str(e))
            os.write(w, "\n".join(msgs).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    out = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        out += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    msgs = out.decode().split("\n")
    assert len(msgs) == 2 and all("fork" in m and "Go runtime" in m and "threads=N" in m for m in msgs), msgs
    assert sum(len(b["label"]) for b in loader) == N  # the parent is unharmed


def test_pickles_for_spawn(fx):
    import pickle

    a = image_loader(fx, batch_size=50, seed=3)
    it = iter(a)
    next(it)
    b = pickle.loads(pickle.dumps(a))
    assert np.array_equal(np.concatenate(labels_of(b)), np.concatenate(labels_of(it)))


# ---- buckets


BUCKET_CHECK = r"""
import sys, numpy as np, mldf
from mldf import decoders as D, transforms as T
local, url = sys.argv[1], sys.argv[2]
pipes = {"image": [D.RandomResizedCrop(48), T.Flip()], "label": [D.Int()]}
def run(p):
    with mldf.Loader(p, batch_size=64, order="quasi_random", seed=5, pipelines=pipes, cache_bytes=1 << 21,
                     copy=True) as loader:
        return [(b["image"], b["label"]) for b in loader]
a, b = run(local), run(url)
assert len(a) == len(b) and len(a) > 0
for (ai, al), (bi, bl) in zip(a, b):
    assert np.array_equal(al, bl) and np.array_equal(ai, bi)
try:
    mldf.Loader(url + ".missing", pipelines=pipes)
except mldf.LoaderError as e:
    assert ".missing" in str(e), e
else:
    raise SystemExit("no error for a missing object")
print("OK", sum(len(l) for _, l in b))
"""


def test_bucket_matches_local(fx, tmp_path):
    """The same batches from s3:// (versitygw on loopback, as the Go tests use) as from the
    local file, with a block cache smaller than the file. Runs in a child process: the Go
    runtime reads the AWS_* environment when the library loads."""
    import socket
    import subprocess
    import time

    vgw = shutil.which("versitygw") or os.path.join(os.path.expanduser("~"), "go", "bin", "versitygw")
    if not os.path.isfile(vgw):
        pytest.skip("versitygw is not installed (scripts/deps test installs it)")
    data = tmp_path / "s3"
    (data / "bucket").mkdir(parents=True)
    shutil.copyfile(path(fx), data / "bucket" / "train.mldf")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    addr = "127.0.0.1:%d" % s.getsockname()[1]
    s.close()
    key, secret = "mldf-test-key", "mldf-test-secret"
    log = open(tmp_path / "versitygw.log", "wb")
    proc = subprocess.Popen([vgw, "--port", addr, "--keep-alive", "--quiet", "posix", str(data)], stdout=log,
                            stderr=log, env=dict(os.environ, ROOT_ACCESS_KEY=key, ROOT_SECRET_KEY=secret))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(addr.split(":"), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.skip("versitygw did not start: %s" % (tmp_path / "versitygw.log").read_text()[-500:])
                time.sleep(0.05)
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret, AWS_ENDPOINT_URL_S3="http://" + addr,
                   AWS_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true",
                   AWS_CONFIG_FILE=os.path.join(os.devnull, "none"),
                   AWS_SHARED_CREDENTIALS_FILE=os.path.join(os.devnull, "none"))
        for k in ("AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_REGION"):
            env.pop(k, None)
        out = subprocess.run([sys.executable, "-c", BUCKET_CHECK, path(fx), "s3://bucket/train.mldf"], env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout.strip() == "OK %d" % N
    finally:
        proc.kill()
        proc.wait()
        log.close()


# ---- FFCV .beton files


@pytest.fixture(scope="module")
def beton_pair(native_lib, tmp_path_factory):
    """The same 40 photo-like JPEGs (two classes, sizes vary) converted by `convert images` to an
    .mldf and to a .beton (--format beton), as bench/loader.sh does."""
    import subprocess

    from PIL import Image

    from interop_util import REPO

    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not on PATH: the test converts with cmd/convert")
    d = tmp_path_factory.mktemp("beton")
    rng = np.random.default_rng(7)
    for i in range(40):
        h, w = 90 + i % 13, 120 + (7 * i) % 31
        y, x = np.mgrid[0:h, 0:w]
        img = np.stack([(x * 2 + i) % 256, (y * 3 + 2 * i) % 256, (x + y + 5 * i) % 256], -1).astype(np.int16)
        img = np.clip(img + rng.integers(-12, 12, img.shape), 0, 255).astype(np.uint8)
        cls = d / "src" / ("cat", "dog")[i % 2]
        cls.mkdir(parents=True, exist_ok=True)
        Image.fromarray(img).save(cls / ("%02d.jpg" % i), quality=90)
    out = {}
    for ext, extra in (("mldf", []), ("beton", ["--format", "beton"])):
        out[ext] = str(d / ("d." + ext))
        proc = subprocess.run([go, "run", "./cmd/convert", "images", str(d / "src"), out[ext], "--mode", "jpeg",
                               "--max-resolution", "96", "--workers", "2"] + extra, cwd=REPO, capture_output=True,
                              text=True, timeout=1800)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def beton_pipes(size=48):
    return {"image": [D.RandomResizedCrop(size), T.RandomHorizontalFlip(),
                      T.Normalize(T.IMAGENET_MEAN, T.IMAGENET_STD, dtype="float16"), T.ToCHW()],
            "label": [D.Int()]}


@pytest.mark.parametrize("order", ["random", "sequential"])
def test_beton_gives_the_batches_of_the_mldf(beton_pair, order):
    """mldf.Loader reads our .beton: the same batches as from the .mldf of the same images, for a
    random-resized crop with flip and Normalize, and a center crop."""
    for pipes in (beton_pipes(), {"image": [D.CenterCrop(40)], "label": [D.Int()]}):
        with mldf.Loader(beton_pair["mldf"], batch_size=16, pipelines=pipes, order=order, seed=3) as a, \
                mldf.Loader(beton_pair["beton"], batch_size=16, pipelines=pipes, order=order, seed=3, threads=2) as b:
            assert len(a) == len(b) == 3 and a.num_samples == b.num_samples == 40
            n = 0
            for x, y in zip(a, b):
                assert set(x) == set(y) == {"image", "label"}
                assert x["image"].dtype == y["image"].dtype and x["image"].shape == y["image"].shape
                assert np.array_equal(x["image"], y["image"]) and np.array_equal(x["label"], y["label"])
                n += len(x["label"])
            assert n == 40


def test_beton_describes_itself_and_refuses_verify(beton_pair):
    with mldf.Loader(beton_pair["beton"], batch_size=8, pipelines=beton_pipes()) as b:
        types = {f["name"]: f["type"] for f in b.fields}
        assert types == {"image": "RGBImage", "label": "Int"}
        assert sorted(np.concatenate([x["label"] for x in b]).tolist()) == [0] * 20 + [1] * 20
    with pytest.raises(mldf.LoaderError, match=r"d\.beton.*FFCV \.beton file carries no checksums"):
        mldf.Loader(beton_pair["beton"], pipelines=beton_pipes(), verify_checksums=True)
