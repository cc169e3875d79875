"""mldf: read MLDF files (the random-access ML dataset format written by ``convert``) with
nothing but numpy.

    import mldf
    with mldf.open("train.mldf") as r:
        print(len(r), r.fields)
        sample = r[0]                 # {"image": HxWxC uint8 array, "label": np.int64(3)}
        labels = r.column("label")    # zero-copy int64 view of the metadata table
        batch = r[[4, 1, 7]]          # list of dicts
        r.verify()                    # every structural rule, CRC-32C and header xxhash64

Pillow (optional) decodes JPEG/PNG images; without it they come back as EncodedImage.
``mldf.Loader`` decodes batches for training in native code (docs/LOADER.md); it needs the native
library that ``pip install ./python`` builds when Go is present, and only it does.
``mldf.torch.MLDFDataset`` wraps a file as a PyTorch Dataset; importing ``mldf`` does not import
torch.
"""

from . import decoders, transforms
from ._checksum import crc32c, xxh64
from ._format import TYPE_NAMES
from .reader import (HAVE_PIL, HAVE_SOUNDFILE, ChecksumError, EncodedAudio, EncodedImage, Field, FormatError,
                     Reader, VersionError, open)
from .loader import ForkError, Loader, LoaderError, NativeUnavailable

__version__ = "0.1.0"

__all__ = ["open", "Reader", "Field", "FormatError", "VersionError", "ChecksumError", "EncodedImage",
           "EncodedAudio", "HAVE_PIL", "HAVE_SOUNDFILE", "TYPE_NAMES", "crc32c", "xxh64", "__version__",
           "Loader", "LoaderError", "ForkError", "NativeUnavailable", "decoders", "transforms"]


def __getattr__(name):
    # `mldf.torch` imports torch only when asked for.
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'mldf' has no attribute %r" % name)
