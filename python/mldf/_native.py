"""ctypes binding of the native loader library (libmldf, the project's Go code built with
``go build -buildmode=c-shared ./cmd/libmldf``; its C ABI is described in docs/LOADER.md).

The library is looked for at $MLDF_LIBRARY, else next to this file in ``_native/``. It is loaded
on first use, not on ``import mldf``: the pure-Python reader works without it.

Fork rule: a Go runtime does not survive ``fork()`` (its threads are not copied into the child;
a call into it there blocks forever). The process id that loaded the library is recorded, and
every call from another process id raises :class:`ForkError` before it reaches Go.

ctypes releases the GIL for the duration of each foreign call, so ``mldf_run`` decodes a
batch on every core while Python threads keep running.
"""

import ctypes
import json
import os
import sys
import threading

__all__ = ["NativeUnavailable", "ForkError", "LoaderError", "library", "library_path", "Handle", "Plan"]

_HERE = os.path.dirname(os.path.abspath(__file__))

if sys.platform == "darwin":
    LIBNAME = "libmldf.dylib"
elif sys.platform == "win32":
    LIBNAME = "mldf.dll"
else:
    LIBNAME = "libmldf.so"


class NativeUnavailable(ImportError):
    """The native loader library is not installed or cannot be loaded (``mldf.Loader`` needs it;
    the reader ``mldf.open`` does not)."""


class ForkError(RuntimeError):
    """A call into the native library from a process forked after the library was loaded."""


class LoaderError(RuntimeError):
    """An error reported by the native library (a bad plan, an unreadable file, a sample whose
    payload does not decode); the message names the file and the sample."""


def library_path():
    """Where the native library is looked for: $MLDF_LIBRARY, else mldf/_native/libmldf.so."""
    return os.environ.get("MLDF_LIBRARY") or os.path.join(_HERE, "_native", LIBNAME)


class _Lib:
    """The loaded library and the id of the process that loaded it."""

    def __init__(self, path):
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise NativeUnavailable(
                "mldf.Loader needs the native library %s and it cannot be loaded: %s. Build it from the "
                "repository root with `go build -buildmode=c-shared -o python/mldf/_native/%s ./cmd/libmldf` "
                "(Go >= 1.26, a C compiler and libturbojpeg0-dev), or reinstall with Go on PATH: "
                "`pip install ./python`; or set MLDF_LIBRARY to its path" % (path, e, LIBNAME)) from None
        self.path = path
        self.pid = os.getpid()
        i64, p = ctypes.c_int64, ctypes.c_void_p
        perr = ctypes.POINTER(ctypes.c_void_p)
        sig = {
            "mldf_open": (i64, [ctypes.c_char_p, ctypes.c_char_p, perr]),
            "mldf_describe": (p, [i64]),
            "mldf_plan": (i64, [i64, ctypes.c_char_p, perr]),
            "mldf_plan_outputs": (p, [i64]),
            "mldf_order": (i64, [i64, ctypes.c_char_p, i64, i64, ctypes.POINTER(i64), perr]),
            "mldf_batch_bytes": (i64, [i64, ctypes.POINTER(i64), i64, ctypes.POINTER(i64), perr]),
            "mldf_run": (ctypes.c_int, [i64, ctypes.POINTER(i64), i64, i64, ctypes.POINTER(p), ctypes.POINTER(i64),
                                        perr]),
            "mldf_submit": (i64, [i64, ctypes.POINTER(i64), i64, i64, ctypes.POINTER(p), ctypes.POINTER(i64), perr]),
            "mldf_wait": (ctypes.c_int, [i64, perr]),
            "mldf_stats": (p, [i64, ctypes.c_int]),
            "mldf_close": (None, [i64]),
            "mldf_plan_close": (None, [i64]),
            "mldf_free": (None, [p]),
            "mldf_version": (p, []),
        }
        missing = []
        for name, (res, args) in sig.items():
            try:
                f = getattr(lib, name)
            except AttributeError:
                missing.append(name)
                continue
            f.restype, f.argtypes = res, args
        if missing:
            raise NativeUnavailable("the native library %s lacks %s: it is from another version of mldf; rebuild it "
                                    "(go build -buildmode=c-shared ./cmd/libmldf)" % (path, ", ".join(missing)))
        self.lib = lib

    def check(self):
        """Raise ForkError when called from a process other than the one that loaded the library."""
        if os.getpid() != self.pid:
            raise ForkError(
                "mldf.Loader: this process (pid %d) was forked from the one that loaded the native library "
                "(pid %d), and a Go runtime does not survive fork(): a call into it here would hang. Create the "
                "Loader in the child process (after the fork, e.g. in a multiprocessing 'spawn' worker), or do "
                "not fork: the Loader decodes in parallel itself (threads=N), no DataLoader workers are needed"
                % (os.getpid(), self.pid))

    def take_string(self, ptr):
        """The UTF-8 C string at ptr (allocated by the library), freed."""
        if not ptr:
            return None
        try:
            return ctypes.string_at(ptr).decode("utf-8", "replace")
        finally:
            self.lib.mldf_free(ptr)

    def error(self, err, what):
        msg = self.take_string(err.value) if err.value else None
        return LoaderError(msg or ("%s failed (the native library gave no message)" % what))

    def version(self):
        self.check()
        s = self.take_string(self.lib.mldf_version())
        return json.loads(s) if s else {}


_lock = threading.Lock()
_loaded = {}  # path -> _Lib; one load per process (a forked child sees the parent's and refuses)


def _after_fork_in_child():
    # another thread may have held the lock at the fork: the child's copy would stay locked
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def library():
    """The native library, loaded on first call. Raises NativeUnavailable when it is missing and
    ForkError in a process forked after it was loaded."""
    path = library_path()
    with _lock:
        lib = _loaded.get(path)
        if lib is None:
            if not os.path.exists(path):
                raise NativeUnavailable(
                    "mldf.Loader needs the native library and %s does not exist. This mldf was installed "
                    "without it (Go was not on PATH, or MLDF_NO_NATIVE was set, when it was built). Install "
                    "Go >= 1.26, a C compiler and libturbojpeg0-dev, then `pip install ./python` from the "
                    "repository again, or build it in place with `go build -buildmode=c-shared -o "
                    "python/mldf/_native/%s ./cmd/libmldf`, or set MLDF_LIBRARY. The reader (mldf.open) works "
                    "without it." % (path, LIBNAME))
            lib = _Lib(path)
            _loaded[path] = lib
    lib.check()
    return lib


def available():
    """True when the native library exists and loads in this process."""
    try:
        library()
        return True
    except (NativeUnavailable, ForkError):
        return False


def _json_arg(v):
    return json.dumps(v, separators=(",", ":")).encode("utf-8")


class Handle:
    """An open file in the native library (mldf_open). Close it (or let it be collected); a
    handle inherited through fork is never touched."""

    def __init__(self, path, options):
        self._lib = library()
        err = ctypes.c_void_p()
        h = self._lib.lib.mldf_open(os.fsencode(path), _json_arg(options), ctypes.byref(err))
        if h <= 0:
            raise self._lib.error(err, "opening %s" % path)
        self.h = h
        try:
            self.info = json.loads(self._lib.take_string(self._lib.lib.mldf_describe(h)) or "null")
        except ValueError as e:
            self.close()
            raise LoaderError("the native library described %s in invalid JSON: %s" % (path, e)) from None
        if not isinstance(self.info, dict):
            self.close()
            raise LoaderError("the native library gave no description of %s" % path)

    def plan(self, plan):
        return Plan(self, plan)

    def order(self, order, start, count, out=None):
        """The rank's epoch length; fills out (an int64 array of count) with positions
        [start, start+count) of the rank's sequence."""
        self._lib.check()
        err = ctypes.c_void_p()
        ptr = None if out is None else out.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        n = self._lib.lib.mldf_order(self.h, _json_arg(order), start, count, ptr, ctypes.byref(err))
        if n < 0:
            raise self._lib.error(err, "computing the sample order")
        return n

    def stats(self, reset=False):
        """The decoding threads' counters (mldf_stats) since the open or the last reset."""
        self._lib.check()
        s = self._lib.take_string(self._lib.lib.mldf_stats(self.h, 1 if reset else 0))
        return json.loads(s) if s else {}

    def close(self):
        h, self.h = getattr(self, "h", 0), 0
        if h and os.getpid() == self._lib.pid:
            self._lib.lib.mldf_close(h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Plan:
    """A compiled set of pipelines (mldf_plan) and its outputs (name, dtype, shape, variable)."""

    def __init__(self, handle, plan):
        self._lib = handle._lib
        self._handle = handle  # keeps the file open while the plan lives
        err = ctypes.c_void_p()
        self._lib.check()
        p = self._lib.lib.mldf_plan(handle.h, _json_arg(plan), ctypes.byref(err))
        if p <= 0:
            raise self._lib.error(err, "compiling the pipelines")
        self.p = p
        s = self._lib.take_string(self._lib.lib.mldf_plan_outputs(p))
        try:
            self.outputs = json.loads(s or "[]")
        except ValueError as e:
            self.close()
            raise LoaderError("the native library listed the plan's outputs in invalid JSON: %s" % e) from None

    def batch_bytes(self, idx, n, sizes):
        """Fill sizes (int64, one per output) with the data bytes the samples idx[:n] need."""
        self._lib.check()
        err = ctypes.c_void_p()
        r = self._lib.lib.mldf_batch_bytes(self.p, idx.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), n,
                                           sizes.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), ctypes.byref(err))
        if r < 0:
            raise self._lib.error(err, "sizing the outputs of a batch (samples %s)" % _sample_list(idx[:n]))
        return r

    def run(self, idx, n, epoch, ptrs, sizes):
        """Decode the samples idx[:n] into the buffers whose addresses are ptrs (a ctypes array
        of void pointers in output order; two, offsets and data, for a variable output), the
        data buffers being sizes[k] bytes (from batch_bytes). Releases the GIL while Go works."""
        self._lib.check()
        err = ctypes.c_void_p()
        rc = self._lib.lib.mldf_run(self.p, idx.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), n, epoch, ptrs,
                                    sizes.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), ctypes.byref(err))
        if rc != 0:
            raise self._lib.error(err, "decoding a batch")

    def submit(self, idx, n, epoch, ptrs, sizes):
        """Queue the samples idx[:n] for decoding (as run) and return at once with a ticket for
        wait(). The buffers (ptrs) must stay alive and untouched until wait returns; the next
        batch can be submitted before, so the threads go from one batch to the next without
        a pause."""
        self._lib.check()
        err = ctypes.c_void_p()
        t = self._lib.lib.mldf_submit(self.p, idx.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), n, epoch, ptrs,
                                      sizes.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), ctypes.byref(err))
        if t <= 0:
            raise self._lib.error(err, "decoding a batch")
        return t

    def wait(self, ticket):
        """Wait for a submitted batch (GIL released); raises its error, naming the sample."""
        self._lib.check()
        err = ctypes.c_void_p()
        if self._lib.lib.mldf_wait(ticket, ctypes.byref(err)) != 0:
            raise self._lib.error(err, "decoding a batch")

    def close(self):
        p, self.p = getattr(self, "p", 0), 0
        if p and os.getpid() == self._lib.pid:
            self._lib.lib.mldf_plan_close(p)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _sample_list(idx, limit=8):
    items = [str(int(i)) for i in idx[:limit]]
    if len(idx) > limit:
        items.append("... (%d in all)" % len(idx))
    return ", ".join(items)
