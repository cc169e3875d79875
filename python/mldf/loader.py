"""``mldf.Loader``: batches of decoded samples for training, decoded in native code (the
project's Go, a C shared library) on every core without the GIL, into pre-allocated numpy
buffers, while the previous batch trains. docs/LOADER.md is the guide.

    loader = mldf.Loader("train.mldf", batch_size=256, pipelines={
        "image": [mldf.decoders.RandomResizedCrop(224), mldf.transforms.RandomHorizontalFlip(),
                  mldf.transforms.Normalize(mldf.transforms.IMAGENET_MEAN, mldf.transforms.IMAGENET_STD,
                                            dtype="float16"), mldf.transforms.ToCHW()],
        "label": [mldf.decoders.Int()]}, order="random", seed=0)
    for epoch in range(90):
        for batch in loader:            # dict of numpy arrays: torch.from_numpy(batch["image"])
            ...
"""

import collections
import ctypes
import json
import numbers
import os
import queue
import sys
import threading
import time
import weakref

import numpy as np

from . import _native
from ._native import ForkError, LoaderError, NativeUnavailable
from .decoders import Decoder
from .transforms import Transform

__all__ = ["Loader", "LoaderError", "ForkError", "NativeUnavailable", "ORDERS"]

ORDERS = ("random", "quasi_random", "sequential")

_STATE_VERSION = 1
_POLL = 0.05  # seconds between checks of the stop flag while the prefetch thread waits for a free slot


def _is_url(path):
    return isinstance(path, str) and "://" in path


def _int_arg(name, v, lo, hi=None):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError("mldf.Loader: %s must be an integer, not %r" % (name, v))
    v = int(v)
    if v < lo or (hi is not None and v > hi):
        rng = "at least %d" % lo if hi is None else "in [%d, %d]" % (lo, hi)
        raise ValueError("mldf.Loader: %s must be %s, not %d" % (name, rng, v))
    return v


def _env_int(name):
    v = os.environ.get(name)
    if v is None or v.strip() == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise ValueError("mldf.Loader: the environment variable %s=%r is not an integer" % (name, v[:40])) from None


def distributed(rank=None, world_size=None):
    """(rank, world_size, source): from the arguments when given; else from torch.distributed when
    torch is already imported and a process group is initialised (torch is never imported here);
    else from the RANK and WORLD_SIZE environment variables (torchrun, SLURM setups that export
    them); else (0, 1)."""
    if rank is not None or world_size is not None:
        if rank is None or world_size is None:
            raise ValueError("mldf.Loader: give both rank and world_size, or neither (got rank=%r, world_size=%r)"
                             % (rank, world_size))
        src = "arguments"
    else:
        td = sys.modules.get("torch.distributed")
        if td is not None and getattr(td, "is_available", lambda: False)() and td.is_initialized():
            rank, world_size, src = td.get_rank(), td.get_world_size(), "torch.distributed"
        else:
            rank, world_size = _env_int("RANK"), _env_int("WORLD_SIZE")
            if rank is None and world_size is None:
                return 0, 1, "default"
            if rank is None or world_size is None:
                raise ValueError("mldf.Loader: the environment sets %s but not %s; set both, or pass rank= and "
                                 "world_size=" % (("RANK", "WORLD_SIZE") if world_size is None
                                                  else ("WORLD_SIZE", "RANK")))
            src = "environment (RANK, WORLD_SIZE)"
    world_size = _int_arg("world_size", world_size, 1)
    rank = _int_arg("rank", rank, 0)
    if rank >= world_size:
        raise ValueError("mldf.Loader: rank %d is not below world_size %d (from the %s)" % (rank, world_size, src))
    return rank, world_size, src


def _check_pipelines(pipelines, fields):
    """Validate pipelines ({field: [Decoder, Transform...]}) against the file's fields (from
    mldf_describe) and return the plan's field list."""
    if not isinstance(pipelines, dict) or not pipelines:
        raise TypeError("mldf.Loader: pipelines must be a dict {field name: [decoder, transforms...]} naming at "
                        "least one field; this file has fields %s" % ", ".join(repr(f["name"]) for f in fields))
    by_name = {f["name"]: f for f in fields}
    out = []
    for name, ops in pipelines.items():
        if name not in by_name:
            raise KeyError("mldf.Loader: pipelines name the field %r, which the file does not have (fields: %s)"
                           % (name, ", ".join(repr(f) for f in by_name)))
        if ops is None:
            continue  # a field left out
        if isinstance(ops, Decoder):
            ops = [ops]
        if not isinstance(ops, (list, tuple)) or not ops:
            raise TypeError("mldf.Loader: the pipeline of field %r must be a list [decoder, transforms...], not %r"
                            % (name, ops))
        field = by_name[name]
        dec = ops[0]
        if isinstance(dec, type) and issubclass(dec, (Decoder, Transform)):
            raise TypeError("mldf.Loader: field %r: %s is a class; make an instance, e.g. %s()"
                            % (name, dec.__name__, dec.__name__))
        if not isinstance(dec, Decoder):
            raise TypeError("mldf.Loader: field %r: a pipeline starts with a decoder from mldf.decoders (one of %s), "
                            "not %r" % (name, ", ".join(field.get("ops") or ["none"]), dec))
        allowed = field.get("ops")
        if allowed is not None and dec.op not in allowed:
            raise ValueError("mldf.Loader: field %r is %s; %s does not decode it (decoders for it: %s)"
                             % (name, field.get("type"), type(dec).__name__, ", ".join(allowed) or "none"))
        seen = set()
        last = None
        for t in ops[1:]:
            if isinstance(t, type):
                raise TypeError("mldf.Loader: field %r: %s is a class; make an instance, e.g. %s()"
                                % (name, t.__name__, t.__name__))
            if not isinstance(t, Transform):
                raise TypeError("mldf.Loader: field %r: after the decoder come transforms from mldf.transforms, "
                                "not %r" % (name, t))
            if t.image and not dec.image:
                raise ValueError("mldf.Loader: field %r: %s applies to images, and %s does not make one"
                                 % (name, type(t).__name__, type(dec).__name__))
            if t.op in seen:
                raise ValueError("mldf.Loader: field %r: %s appears twice" % (name, type(t).__name__))
            if last is not None and t.rank < last.rank:
                raise ValueError("mldf.Loader: field %r: %s must come before %s (the order is: decoder, "
                                 "RandomHorizontalFlip, Normalize, ToCHW)"
                                 % (name, type(t).__name__, type(last).__name__))
            seen.add(t.op)
            last = t
        out.append({"field": name, "ops": [o.to_plan() for o in ops]})
    if not out:
        raise ValueError("mldf.Loader: every pipeline is None: name at least one field to load")
    return out


_TOKEN_DTYPES = {"Tokens16": np.dtype("<u2"), "Tokens32": np.dtype("<u4")}


def _present(kind, field):
    """How a variable output's bytes become Python values."""
    if kind == "Text" and field.get("type") in ("TEXT_TOKENIZED", "TEXT_PACKED"):
        kind = {2: "Tokens16", 4: "Tokens32"}.get(field.get("token_width"), "Bytes")
    if kind in _TOKEN_DTYPES:
        dt = _TOKEN_DTYPES[kind]
        return lambda b, i: np.frombuffer(b, dt).copy()
    if kind == "Text":
        return lambda b, i: b.decode("utf-8")
    if kind == "JSON":
        return lambda b, i: json.loads(b)
    return lambda b, i: b


class _Slot:
    """One ring buffer: an index array and one array per output (offsets and data for variable
    outputs)."""

    def __init__(self, outputs, batch_size):
        self.outputs = outputs
        self.batch_size = batch_size
        self.idx = np.empty(batch_size, np.int64)
        self.arrays = [None] * len(outputs)
        self.offsets = [None] * len(outputs)
        for k, o in enumerate(outputs):
            self._alloc(k)

    def _alloc(self, k, data_bytes=0):
        o = self.outputs[k]
        if o["variable"]:
            self.offsets[k] = np.empty(self.batch_size + 1, np.int64)
            self.arrays[k] = np.empty(max(data_bytes, 1), np.uint8)
        else:
            self.arrays[k] = np.empty((self.batch_size,) + tuple(o["shape"]), o["np_dtype"])

    def refresh(self):
        """Give fresh memory to every output array that the consumer still refers to (a batch
        it kept), so a new batch never overwrites one in use."""
        for k in range(len(self.arrays)):
            # references: this list and getrefcount's argument; any more are views held outside
            if not self.outputs[k]["variable"] and sys.getrefcount(self.arrays[k]) > 2:
                self._alloc(k)

    def pointers(self, sizes):
        ptrs = []
        for k, o in enumerate(self.outputs):
            if o["variable"]:
                need = int(sizes[k])
                if self.arrays[k].nbytes < need:
                    self._alloc(k, max(need, 2 * self.arrays[k].nbytes))
                ptrs.append(self.offsets[k].ctypes.data)
            ptrs.append(self.arrays[k].ctypes.data)
        return (ctypes.c_void_p * len(ptrs))(*ptrs)


class _Carry:
    """Batches of the next epoch submitted by an epoch's prefetch thread once it had submitted
    its own last batch (the order of epoch e+1 is a pure function of (seed, e+1), so the native
    threads go on from epoch e's last image to e+1's first without a pause). The next iter()
    adopts them when it starts epoch e+1 from its first sample; anything else (another epoch,
    a resumed position, close()) discards them: their decoding is waited for and the slots are
    free again. The loader owns one; the prefetch thread puts, the loader's thread takes."""

    def __init__(self):
        self._lock = threading.Lock()
        self._items = []  # (epoch, k, slot, ticket, error of the submission), batch order

    def put(self, items):
        with self._lock:
            self._items.extend(items)

    def take(self):
        with self._lock:
            items, self._items = self._items, []
        return items

    def discard(self, plan):
        for _, _, _, ticket, _ in self.take():
            if ticket is not None:
                try:
                    plan.wait(ticket)
                except BaseException:  # noqa: B036 - a dropped batch; its memory is free again
                    pass


class _Epoch:
    """What the prefetch thread and the consumer share for one pass over an epoch. The thread
    holds no reference to the iterator, so dropping the iterator stops it."""

    def __init__(self, loader, epoch, start, nbatches, slots, carried=(), ahead=False):
        self.plan = loader._plan
        self.handle = loader._handle
        self.outputs = loader._outputs
        self.present = loader._present
        self.order = dict(loader._order_spec, epoch=epoch)
        self.epoch = epoch
        self.start = start
        self.bs = loader.batch_size
        self.length = loader.num_samples
        self.nbatches = nbatches
        self.copy = loader.copy
        self.free = queue.Queue()
        self.ready = queue.Queue()
        self.stop = threading.Event()
        # batches of this epoch the previous epoch's thread submitted (from its first), and
        # whether this thread submits the next epoch's first batches after its own last one
        self.carried = list(carried)
        busy = {id(c[2]) for c in self.carried}
        for s in slots:
            if id(s) not in busy:
                self.free.put(s)
        self.carry = loader._carry
        self.ahead = None
        if ahead and start + nbatches * self.bs >= self.length:
            # (epoch, order, batches): the next epoch from its start
            self.ahead = (epoch + 1, dict(loader._order_spec, epoch=epoch + 1), loader._nbatches_from(0))
        self.nvar = sum(1 for o in self.outputs if o["variable"])
        self.sizes = np.zeros(len(self.outputs), np.int64)
        self.depth = max(len(slots) - 2, 1)  # batches submitted ahead: the slots the consumer does not hold
        self.stats = loader._pystats

    def bounds(self, k, start=None):
        lo = (self.start if start is None else start) + k * self.bs
        return lo, min(self.bs, self.length - lo)

    def submit(self, slot, k, ahead=None):
        """Queue batch k (of the next epoch, from its start, when ``ahead`` is that epoch's
        (epoch, order, batches)) for decoding into slot; return the native ticket."""
        epoch, order, start = (self.epoch, self.order, None) if ahead is None else (ahead[0], ahead[1], 0)
        lo, n = self.bounds(k, start)
        self.handle.order(order, lo, n, slot.idx)
        slot.refresh()
        if self.nvar:
            self.plan.batch_bytes(slot.idx, n, self.sizes)
        ptrs = slot.pointers(self.sizes)
        return self.plan.submit(slot.idx, n, epoch, ptrs, self.sizes)

    def fill(self, slot, k):
        """Decode batch k into slot in this thread; return the batch dict."""
        self.plan.wait(self.submit(slot, k))
        return self.batch(slot, k)

    def batch(self, slot, k):
        """The batch dict of the decoded batch k in slot."""
        lo, n = self.bounds(k)
        batch = {}
        for j, o in enumerate(self.outputs):
            if o["variable"]:
                off, data = slot.offsets[j], slot.arrays[j]
                conv = self.present[j]
                vals = []
                for t in range(n):
                    b = data[off[t]:off[t + 1]].tobytes()
                    try:
                        vals.append(conv(b, t))
                    except ValueError as e:
                        raise LoaderError("%s: sample %d, field %r: %s" % (self.handle.info.get("path"),
                                                                          int(slot.idx[t]), o["name"], e)) from None
                batch[o["name"]] = vals
            else:
                a = slot.arrays[j][:n]
                batch[o["name"]] = a.copy() if self.copy else a
        return batch

    def produce(self):
        """The prefetch thread: decode batches in order into free slots until the epoch ends or
        stop is set. It keeps up to ``depth`` batches submitted to the native threads, so they
        start the next batch's samples while the thread hands a finished one over (no pause
        between batches). Once its own last batch is submitted it submits the next epoch's first
        batches into the free slots (``ahead``), which it leaves to the loader's carry when it
        ends. Every outcome of its own epoch, an error too, goes to the ready queue, in batch
        order; its own batches submitted are always waited for before the thread ends."""
        # (epoch, k, slot, ticket, error of the submission)
        inflight = collections.deque(self.carried)
        self.carried = []
        st = self.stats
        clock = time.perf_counter
        cpu_mark = time.thread_time()
        ahead = self.ahead
        try:
            k = len(inflight)
            nk = 0  # batches of the next epoch submitted
            while True:
                if self.stop.is_set():
                    return
                mine = k < self.nbatches
                nxt = not mine and ahead is not None and nk < ahead[2]
                slot = None
                if (mine or nxt) and len(inflight) < self.depth:
                    t0 = clock()
                    # block (until a slot, stop or _POLL) when nothing of this epoch is in flight;
                    # the consumer frees a slot when it asks for the batch after the next
                    idle = not inflight or inflight[0][0] != self.epoch
                    try:
                        slot = self.free.get(timeout=_POLL) if idle else self.free.get_nowait()
                    except queue.Empty:
                        pass
                    if mine:  # (a wait for a slot for the next epoch is not the consumer's slowness)
                        st["slot_wait_seconds"] += clock() - t0
                    if slot is None and mine and not inflight:
                        continue
                if slot is not None:
                    t0 = clock()
                    if mine:
                        try:
                            inflight.append((self.epoch, k, slot, self.submit(slot, k), None))
                        except BaseException as e:  # noqa: B036 - raised after the batches before it
                            inflight.append((self.epoch, k, slot, None, e))
                            k, ahead = self.nbatches, None
                        k += 1
                    else:
                        try:
                            inflight.append((ahead[0], nk, slot, self.submit(slot, nk, ahead), None))
                        except BaseException as e:  # noqa: B036 - raised in that epoch, in order
                            inflight.append((ahead[0], nk, slot, None, e))
                            ahead = None
                        nk += 1
                    st["python_seconds"] += clock() - t0
                    continue
                if not inflight or inflight[0][0] != self.epoch:
                    break  # this epoch is handed over; what is left belongs to the next
                _, kk, slot, ticket, err = inflight.popleft()
                if err is not None:
                    raise err
                t0 = clock()
                try:
                    self.plan.wait(ticket)
                finally:
                    t1 = clock()
                    st["decode_wait_seconds"] += t1 - t0
                batch = self.batch(slot, kk)
                st["python_seconds"] += clock() - t1
                self.ready.put((kk, slot, batch, None))
                batch = None
                now = time.thread_time()
                st["prefetch_cpu_seconds"] += now - cpu_mark
                cpu_mark = now
        except BaseException as e:  # noqa: B036 - handed to the consumer, which re-raises it
            self.ready.put((None, None, None, e))
        finally:
            st["prefetch_cpu_seconds"] += time.thread_time() - cpu_mark
            carry = []
            for item in inflight:
                if item[0] != self.epoch:
                    carry.append(item)
                elif item[3] is not None:
                    try:
                        self.plan.wait(item[3])
                    except BaseException:  # noqa: B036 - the batch is dropped; its memory is free again
                        pass
            self.carry.put(carry)
            self.ready.put(None)


class _Iterator:
    """One pass over (the rest of) an epoch. Closing it (end, break, exception, garbage
    collection, a newer iter(loader), loader.close()) stops and joins its prefetch thread."""

    def __init__(self, loader, epoch, start, carried=()):
        self._loader = loader  # a loader made in the for statement lives as long as its iterator
        self._nbatches = loader._nbatches_from(start)
        self._ep = _Epoch(loader, epoch, start, self._nbatches, loader._take_slots(), carried,
                          ahead=loader.prefetch > 0)
        self._k = 0
        self._held = []  # slots of batches yielded, returned to the ring one batch later
        self._done = False
        self._closed_why = None
        self._thread = None
        if loader.prefetch > 0 and self._nbatches > 0:
            self._thread = threading.Thread(target=self._ep.produce, name="mldf-prefetch", daemon=True)
            self._thread.start()

    def __iter__(self):
        return self

    def __len__(self):
        return self._nbatches - self._k

    def __next__(self):
        if self._closed_why is not None:
            raise RuntimeError("this mldf.Loader iterator was closed: %s" % self._closed_why)
        if self._done:
            raise StopIteration
        cpu0 = time.thread_time()
        try:
            return self._next()
        finally:
            self._ep.stats["consumer_cpu_seconds"] += time.thread_time() - cpu0

    def _next(self):
        loader = self._loader
        _native.library().check()
        # The slot of the batch before the previous one goes back to the ring: the consumer's
        # loop variable has moved on from it (the previous batch may still be bound to it).
        while len(self._held) > 1:
            self._ep.free.put(self._held.pop(0))
        if self._k >= self._nbatches:
            self._finish(loader)
            raise StopIteration
        ep = self._ep
        try:
            if self._thread is None:
                slot = ep.free.get_nowait()
                k, batch = self._k, ep.fill(slot, self._k)
            else:
                t0 = time.perf_counter()
                item = ep.ready.get()
                ep.stats["consumer_wait_seconds"] += time.perf_counter() - t0
                if item is None:  # the thread ended without the batch: it was stopped
                    raise RuntimeError("the prefetch thread stopped before batch %d of epoch %d" % (self._k, ep.epoch))
                k, slot, batch, err = item
                if err is not None:
                    raise err
        except BaseException:
            self.close("it raised an error")
            raise
        assert k == self._k
        self._held.append(slot)
        self._k += 1
        lo, n = ep.bounds(k)
        loader._pos = lo + n  # batches yielded count as consumed (state_dict)
        loader._partial = True
        return batch

    def _finish(self, loader):
        self._done = True
        self._stop_thread()
        loader._epoch_done(self)

    def _stop_thread(self):
        ep = getattr(self, "_ep", None)
        if ep is None:
            return
        ep.stop.set()
        ep.free.put(None)  # wakes the thread if it waits for a slot
        t, self._thread = self._thread, None
        if t is not None and t is not threading.current_thread():
            t.join()
        self._held = []

    def close(self, why="close() was called"):
        """Stop the prefetch thread and wait for it (a batch being decoded finishes first)."""
        if self._closed_why is None and not self._done:
            self._closed_why = why
        self._stop_thread()
        loader = getattr(self, "_loader", None)
        if loader is not None:
            loader._iter_closed(self)

    def __del__(self):
        try:
            self.close("it was garbage-collected")
        except Exception:
            pass


class Loader:
    """Batches of the MLDF file (or FFCV ``.beton`` file) at ``path`` (a local path, or an
    s3://, gs://, az:// URL), one epoch per ``iter()``: dicts {field: array} (a list for Bytes/Text/JSON fields).

    ``pipelines``: {field: [decoder, transforms...]} from ``mldf.decoders`` and
    ``mldf.transforms`` (fields not named are not read). ``order``: "random" (a uniform
    shuffle, a pure function of (seed, epoch)), "quasi_random" (windows of ``window_pages``
    pages, default 32, in random order, shuffled within: local reads, for buckets and disks)
    or "sequential". Random ops
    (crop boxes, flips, audio offsets) are a pure function of (seed, epoch, sample): the same
    batches for every ``threads`` and ``prefetch``.

    ``rank``/``world_size``: this process's share (default: torch.distributed when initialised,
    else $RANK/$WORLD_SIZE, else the whole file); every rank gets a disjoint, equal share of
    each epoch (padded by wrapping around, or the tail dropped when ``drop_last``, which also
    drops a last batch smaller than ``batch_size``). ``len()`` is the rank's batches per epoch.

    ``threads``: decoding threads (0: every core). ``prefetch``: batches decoded ahead by a
    background thread while the current one is used (0: decode in the caller's thread).

    Buffers: a batch's arrays are views of a ring of pre-allocated buffers. A buffer is reused
    for a later batch only once nothing refers to the arrays of the batch it held (the loader
    checks before it decodes into it, and allocates fresh memory for a batch you kept), so
    keeping batches, or tensors from ``torch.from_numpy``, is safe. ``copy=True`` yields copies.

    The epoch advances by one with each ``iter()`` (an epoch left early, after some batches,
    counts as done; an iterator that yielded nothing does not), or is set with ``set_epoch``. ``state_dict()``/``load_state_dict()`` resume mid-epoch with exactly
    the samples still to come.

    Fork: the native library runs a Go runtime, which does not survive ``fork()``; a Loader used
    in a forked child raises ``mldf.ForkError``. Make the Loader in the child, or use threads.
    """

    def __init__(self, path, batch_size=256, pipelines=None, order="random", seed=0, drop_last=False, threads=0,
                 rank=None, world_size=None, prefetch=2, verify_checksums=False, cache_bytes=None,
                 readahead_bytes=None, copy=False, epoch=0, window_pages=None):
        self._closed = True
        self._iter = None
        self._carry = _Carry()
        self._config = dict(path=path, batch_size=batch_size, pipelines=pipelines, order=order, seed=seed,
                            drop_last=drop_last, threads=threads, rank=rank, world_size=world_size, prefetch=prefetch,
                            verify_checksums=verify_checksums, cache_bytes=cache_bytes,
                            readahead_bytes=readahead_bytes, copy=copy, window_pages=window_pages)
        path = path if _is_url(path) else os.fspath(path)
        if not _is_url(path) and not os.path.exists(path):
            raise FileNotFoundError("mldf.Loader: %s does not exist" % path)
        self.path = path
        self.batch_size = _int_arg("batch_size", batch_size, 1, 1 << 24)
        if order not in ORDERS:
            raise ValueError("mldf.Loader: order must be one of %s, not %r" % (", ".join(ORDERS), order))
        self.order = order
        if window_pages is not None:
            window_pages = _int_arg("window_pages", window_pages, 1, 1 << 30)
            if order != "quasi_random":
                raise ValueError("mldf.Loader: window_pages applies to order='quasi_random', not %r" % order)
        self.window_pages = window_pages
        self.seed = _int_arg("seed", seed, 0, (1 << 64) - 1)
        self.drop_last = bool(drop_last)
        self.threads = _int_arg("threads", threads, 0, 1 << 16)
        self.prefetch = _int_arg("prefetch", prefetch, 0, 1 << 10)
        self.copy = bool(copy)
        self.verify_checksums = bool(verify_checksums)
        self.rank, self.world_size, self.distributed_from = distributed(rank, world_size)
        opts = {"verify_checksums": self.verify_checksums, "threads": self.threads}
        if cache_bytes is not None:
            opts["cache_bytes"] = _int_arg("cache_bytes", cache_bytes, 0)
        if readahead_bytes is not None:
            opts["readahead_bytes"] = _int_arg("readahead_bytes", readahead_bytes, 0)
        self._handle = _native.Handle(path, opts)  # NativeUnavailable / ForkError / LoaderError
        try:
            info = self._handle.info
            self.fields = info.get("fields") or []
            self.class_names = info.get("class_names") or {}
            plan = {"seed": self.seed, "fields": _check_pipelines(pipelines, self.fields)}
            self.pipelines = {k: list(v) if isinstance(v, (list, tuple)) else [v]
                              for k, v in pipelines.items() if v is not None}
            self._plan = self._handle.plan(plan)
            self._outputs = []
            for o in self._plan.outputs:
                o = dict(o)
                o["np_dtype"] = np.dtype(o["dtype"])
                o["shape"] = tuple(o.get("shape") or ())
                self._outputs.append(o)
            by_name = {f["name"]: f for f in self.fields}
            self._present = [_present(o.get("kind"), by_name.get(o["name"], {})) for o in self._outputs]
            self._order_spec = {"mode": self.order, "seed": self.seed, "rank": self.rank, "world": self.world_size,
                                "drop_last": self.drop_last}
            if window_pages is not None:
                self._order_spec["window_pages"] = window_pages
            self.num_samples = self._handle.order(dict(self._order_spec, epoch=0), 0, 0)
            self.file_samples = int(info.get("num_samples", 0))
        except BaseException:
            self._handle.close()
            raise
        self._slots = []
        self._pystats = _new_pystats()
        self._epoch = _int_arg("epoch", epoch, 0)
        self._pos = 0
        self._partial = False  # an iterator yielded batches of the epoch and did not finish it
        self._closed = False

    # ---- sizes

    def _nbatches_from(self, start):
        rest = max(self.num_samples - start, 0)
        return rest // self.batch_size if self.drop_last else -(-rest // self.batch_size)

    def __len__(self):
        """Batches per epoch for this rank."""
        return self._nbatches_from(0)

    @property
    def outputs(self):
        """The batch's arrays: [{"name", "dtype", "shape" (per sample), "variable"}]."""
        return [{"name": o["name"], "dtype": o["np_dtype"], "shape": o["shape"], "variable": o["variable"]}
                for o in self._outputs]

    @property
    def epoch(self):
        """The epoch the next iter() yields (or the current one, while iterating)."""
        return self._epoch

    # ---- iteration

    def _take_slots(self):
        need = self.prefetch + 2
        while len(self._slots) < need:
            self._slots.append(_Slot(self._outputs, self.batch_size))
        return self._slots[:need]

    def __iter__(self):
        if self._closed:
            raise ValueError("mldf.Loader: the loader is closed")
        _native.library().check()
        if self._iter is not None:
            old = self._iter()
            if old is not None:
                old.close("a newer iter(loader) replaced it")
            self._iter = None
        if self._partial:
            # the previous pass yielded batches and stopped early: that epoch counts as done
            self._epoch += 1
            self._pos = 0
        if self._pos > 0 and self._nbatches_from(self._pos) == 0:
            self._epoch += 1  # a state saved after the epoch's last batch
            self._pos = 0
        self._partial = False
        carried = self._carry.take()
        if carried and (self._pos != 0 or any(c[0] != self._epoch for c in carried)):
            self._carry.put(carried)  # another epoch or a resumed position: not what comes next
            self._carry.discard(self._plan)
            carried = ()
        it = _Iterator(self, self._epoch, self._pos, carried)
        self._iter = weakref.ref(it)
        return it

    def _epoch_done(self, it):
        if self._iter is not None and self._iter() is it:
            self._epoch += 1
            self._pos = 0
            self._partial = False
            self._iter = None

    def _iter_closed(self, it):
        if self._iter is not None and self._iter() is it:
            self._iter = None

    def set_epoch(self, epoch):
        """Make the next iter() yield epoch ``epoch`` from its start (as DistributedSampler)."""
        self._epoch = _int_arg("epoch", epoch, 0)
        self._pos = 0
        self._partial = False

    # ---- diagnostics

    def stats(self, reset=False):
        """How busy the decoding threads were, since the loader was made or the last
        ``stats(reset=True)`` (which starts a new period): a dict with

        - ``threads``, ``wall_seconds`` (the period), ``batches``, ``samples``;
        - ``busy_seconds``: wall time the threads spent decoding samples, summed over threads,
          and ``utilisation`` = busy_seconds / (threads × wall_seconds);
        - ``cpu_seconds``: the threads' CPU time (per-thread clocks) while decoding the
          ``timed_samples`` (one in 32 per thread), over ``cpu_busy_seconds`` of wall time:
          their ratio is the share of the time the threads were on a core (below 1 when other
          threads or processes took the cores; -1 where the platform has no thread clock);
          ``moved_samples``: samples picked for timing whose goroutine changed OS thread
          meanwhile (not timed);
        - ``starved_seconds``: thread time with no sample queued (the threads waited for the
          next batch to be submitted);
        - ``workers``: samples, busy_seconds, timed_samples, cpu_seconds, cpu_busy_seconds and
          moved_samples per thread;
        - ``python``: seconds the consumer waited in ``next()`` for a batch
          (``consumer_wait_seconds``), and the prefetch thread's seconds waiting for the native
          threads (``decode_wait_seconds``), for a free ring slot (``slot_wait_seconds``: the
          consumer is the slower side) and in its own Python code (``python_seconds``), and
          the CPU time of the prefetch thread (``prefetch_cpu_seconds``) and of the consumer's
          ``next()`` calls (``consumer_cpu_seconds``).

        The counters include batches of the next epoch submitted ahead at the end of an epoch.

        Counters, not a benchmark: in a loop that does nothing else, ``utilisation`` near 1 and
        a small ``starved_seconds`` mean the threads never waited for Python."""
        if self._closed:
            raise ValueError("mldf.Loader: the loader is closed")
        st = self._handle.stats(reset)
        busy, threads, wall = st.get("busy_seconds", 0.0), st.get("threads", 0), st.get("wall_seconds", 0.0)
        st["utilisation"] = busy / (threads * wall) if threads and wall > 0 else 0.0
        st["python"] = dict(self._pystats)
        if reset:
            for key in self._pystats:
                self._pystats[key] = 0.0
        return st

    # ---- resuming

    def state_dict(self):
        """Where the loader is: the epoch and the samples of it already yielded to this rank,
        with the settings that fix the order (checked by load_state_dict). JSON-serialisable."""
        epoch, pos = self._epoch, self._pos
        if pos > 0 and self._nbatches_from(pos) == 0:
            epoch, pos = epoch + 1, 0  # after the epoch's last batch: the next epoch is to come
        return {"version": _STATE_VERSION, "epoch": epoch, "samples_done": pos, "order": self.order,
                "seed": self.seed, "rank": self.rank, "world_size": self.world_size, "drop_last": self.drop_last,
                "window_pages": self.window_pages, "file_samples": self.file_samples,
                "rank_samples": self.num_samples, "batch_size": self.batch_size}

    def load_state_dict(self, state):
        """Resume from ``state_dict()``: the next iter() yields the rest of that epoch, exactly
        the samples that were still to come, then the epochs after it. The order, seed, world
        size, rank and file must be the same (the batch size may differ)."""
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION:
            raise ValueError("mldf.Loader.load_state_dict: not a state from Loader.state_dict() (version %r)"
                             % (state.get("version") if isinstance(state, dict) else state,))
        mine = self.state_dict()
        for key in ("order", "seed", "rank", "world_size", "drop_last", "file_samples", "window_pages"):
            if state.get(key) != mine[key]:
                raise ValueError("mldf.Loader.load_state_dict: the state was saved with %s=%r and this loader has "
                                 "%r; the remaining samples would differ" % (key, state.get(key), mine[key]))
        epoch = _int_arg("epoch", state.get("epoch"), 0)
        pos = _int_arg("samples_done", state.get("samples_done"), 0, self.num_samples)
        if self._iter is not None:
            old = self._iter()
            if old is not None:
                old.close("load_state_dict() was called")
            self._iter = None
        self._epoch, self._pos, self._partial = epoch, pos, False

    # ---- lifetime

    def close(self):
        """Stop any iteration (joining its thread) and release the file. Idempotent."""
        if getattr(self, "_closed", True):
            return
        if self._iter is not None:
            old = self._iter()
            if old is not None:
                old.close("the loader was closed")
            self._iter = None
        self._closed = True
        self._carry.discard(self._plan)
        self._slots = []
        plan, handle = self._plan, self._handle
        plan.close()
        handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __reduce__(self):
        # a Loader travels to a spawned process as its settings and position; it reopens there
        return (_restore, (self._config, self.state_dict()))

    def __repr__(self):
        return ("mldf.Loader(%r, batch_size=%d, order=%r, seed=%d, rank=%d/%d, %d samples/rank, %d batches, fields=%s)"
                % (self.path, self.batch_size, self.order, self.seed, self.rank, self.world_size, self.num_samples,
                   len(self), list(self.pipelines)))


def _new_pystats():
    return {"consumer_wait_seconds": 0.0, "decode_wait_seconds": 0.0, "slot_wait_seconds": 0.0,
            "python_seconds": 0.0, "prefetch_cpu_seconds": 0.0, "consumer_cpu_seconds": 0.0}


def _restore(config, state):
    loader = Loader(**config)
    loader.load_state_dict(state)
    return loader


def native_version():
    """The native library's version and codecs, or raises NativeUnavailable."""
    return _native.library().version()
