"""PyTorch integration: ``MLDFDataset``, a map-style ``torch.utils.data.Dataset`` over an MLDF
file. Importing this module imports torch; importing ``mldf`` does not.

The dataset never shares a memory map across processes: it opens the file on the first
``__getitem__`` in each process (the reader is keyed by the process id), so it is safe with
``DataLoader(num_workers > 0)`` under fork, spawn and forkserver, and pickles without the map.
"""

import os

import numpy as np
import torch.utils.data as _data

from . import reader as _reader

__all__ = ["MLDFDataset"]


def _own(v):
    """Copy values that view the memory map, so tensors made from them are writable and
    outlive the reader."""
    if isinstance(v, np.ndarray) and not v.flags.writeable:
        return np.array(v)
    if isinstance(v, memoryview):
        return v.tobytes()
    return v


class MLDFDataset(_data.Dataset):
    """Samples of the MLDF file at ``path`` as dicts {field name: value} (numpy arrays,
    numpy scalars, str, parsed JSON, bytes), passed through ``transform`` when given.

    ``fields`` selects some fields (default: all). ``decode_images=False`` returns JPEG/PNG as
    ``mldf.EncodedImage`` (decode them yourself, e.g. with torchvision.io)."""

    def __init__(self, path, transform=None, fields=None, decode_images=True):
        self.path = os.fspath(path)
        self.transform = transform
        self.fields = None if fields is None else list(fields)
        self.decode_images = decode_images
        self._reader = None
        self._pid = None
        r = _reader.open(self.path, decode_images=decode_images)  # validate now, in the parent
        try:
            self._len = len(r)
            if self.fields is not None:
                for name in self.fields:
                    r.field(name)
        finally:
            r.close()

    def __len__(self):
        return self._len

    @property
    def reader(self):
        """This process's reader, opened on first use (and again after a fork)."""
        pid = os.getpid()
        if self._reader is None or self._pid != pid:
            # a reader inherited through fork belongs to the parent: leave it alone
            self._reader = _reader.open(self.path, decode_images=self.decode_images)
            self._pid = pid
        return self._reader

    def __getitem__(self, i):
        s = self.reader.sample(i, self.fields)
        s = {k: _own(v) for k, v in s.items()}
        if self.transform is not None:
            s = self.transform(s)
        return s

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_reader"] = None
        state["_pid"] = None
        return state

    def close(self):
        """Close this process's reader (it reopens on the next access)."""
        if self._reader is not None and self._pid == os.getpid():
            self._reader.close()
        self._reader = None
        self._pid = None
