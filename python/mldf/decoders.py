"""Decoders: the first step of a field's pipeline in ``mldf.Loader``. A decoder turns the stored
payloads of a batch of samples into one pre-allocated array (or, for bytes/text/JSON, a list),
in native code, in parallel.

Image decoders take torchvision's names and parameters::

    RandomResizedCrop(224, scale=(0.08, 1.0), ratio=(3/4, 4/3))   # training
    CenterCrop(224, ratio=224/256)                                # evaluation
    Resize((256, 256))                                            # the whole image, squashed

and give HWC uint8 arrays with the field's channels (3, RGB; 1, gray), or ``channels=3`` /
``channels=1`` to convert. JPEG decodes only the rows and
columns the crop needs, at the smallest DCT scale (n/8) that still covers the output size.

Other decoders: ``Int``, ``Float`` (one number per sample), ``Bytes``, ``Text``, ``JSON`` (a
list per batch), ``NDArray`` (fixed shape per field), ``Audio(length, offset, pad, dtype)``.

Every parameter is checked here, in Python, when the decoder is made: a mistake names the
decoder and the parameter before any file is opened.
"""

import math
import numbers

import numpy as np

__all__ = ["Decoder", "RandomResizedCrop", "CenterCrop", "Resize", "Int", "Float", "Bytes", "Text", "JSON",
           "NDArray", "Audio", "IMAGE_TYPES", "AUDIO_TYPES"]

IMAGE_TYPES = ("IMAGE_RAW", "IMAGE_JPEG", "IMAGE_PNG")
AUDIO_TYPES = ("AUDIO_WAVEFORM", "AUDIO_COMPRESSED")

_MAX_SIDE = 1 << 15  # larger outputs are a mistake, not a training image


class Op:
    """A step of a pipeline; ``to_plan()`` is its entry in the plan the native library compiles."""

    op = None  # the plan's name for it

    def params(self):
        """The plan parameters (JSON-ready)."""
        return {}

    def to_plan(self):
        d = {"op": self.op}
        d.update(self.params())
        return d

    def __repr__(self):
        ps = ", ".join("%s=%r" % kv for kv in self.params().items())
        return "%s(%s)" % (type(self).__name__, ps)

    def __eq__(self, other):
        return type(self) is type(other) and self.params() == other.params()

    def __hash__(self):
        return hash(repr(self))


class Decoder(Op):
    """The first step of a pipeline: reads a field of type ``accepts``."""

    accepts = ()  # the field types (mldf.TYPE_NAMES values) this decoder reads
    image = False  # produces an HWC image that image transforms apply to
    variable = False  # a list per batch (bytes/str/objects), not an array


def _err(op, msg):
    return ValueError("%s: %s" % (op, msg))


def _int(op, name, v, lo=1, hi=_MAX_SIDE):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise _err(op, "%s must be an integer, not %r" % (name, v))
    v = int(v)
    if not lo <= v <= hi:
        raise _err(op, "%s must be in [%d, %d], not %d" % (name, lo, hi, v))
    return v


def _num(op, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
        raise _err(op, "%s must be a finite number, not %r" % (name, v))
    return float(v)


def _size(op, size, single="square"):
    """torchvision's size: an int or a sequence of one or two ints (height, width)."""
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        s = _int(op, "size", size)
        return [s, s]
    if isinstance(size, (list, tuple)) and len(size) in (1, 2):
        hw = [_int(op, "size", s) for s in size]
        return hw * 2 if len(hw) == 1 else hw
    raise _err(op, "size must be an int or (height, width), not %r" % (size,))


def _range(op, name, v, lo=None, hi=None):
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        raise _err(op, "%s must be a pair (min, max), not %r" % (name, v))
    a, b = _num(op, name, v[0]), _num(op, name, v[1])
    if a > b:
        raise _err(op, "%s must be (min, max) with min <= max, not %r" % (name, tuple(v)))
    if lo is not None and a <= lo:
        raise _err(op, "%s must be above %g, not %r" % (name, lo, tuple(v)))
    if hi is not None and b > hi:
        raise _err(op, "%s must be at most %g, not %r" % (name, hi, tuple(v)))
    return [a, b]


def _interpolation(op, v, antialias):
    # torchvision.transforms.InterpolationMode.BILINEAR has .value == "bilinear"
    name = getattr(v, "value", v)
    if not isinstance(name, str) or name.lower() != "bilinear":
        raise _err(op, "interpolation must be 'bilinear' (the only one implemented: antialiased bilinear, "
                       "as torchvision's default), not %r" % (v,))
    if antialias is not True:
        raise _err(op, "antialias must be True (downscaling always averages every source pixel, as "
                       "torchvision's antialias=True and Pillow do), not %r" % (antialias,))


def dtype_name(v):
    """'float32' for "float32", np.float32 or np.dtype("float32"); v itself when it is none."""
    try:
        return np.dtype(v).name if v is not None else None
    except TypeError:
        return v


def _channels(op, v):
    if v is None:
        return None
    if v not in (1, 3):
        raise _err(op, "channels must be 3 (RGB) or 1 (gray), not %r" % (v,))
    return v


def _with_channels(d, channels, jpeg="accurate"):
    if channels is not None:
        d["channels"] = channels
    if jpeg != "accurate":
        d["jpeg"] = jpeg
    return d


def _jpeg(op, v):
    if v not in ("accurate", "fast"):
        raise _err(op, "jpeg must be 'accurate' (libjpeg's accurate IDCT and interpolated chroma, as Pillow "
                       "decodes) or 'fast' (fast IDCT, replicated chroma, as FFCV decodes), not %r" % (v,))
    return v


class _Image(Decoder):
    accepts = IMAGE_TYPES
    image = True


class RandomResizedCrop(_Image):
    """torchvision.transforms.RandomResizedCrop: a crop of a random area (``scale``, a fraction
    of the image) and aspect ratio (``ratio``, width/height; log-uniform), resized to ``size``
    (an int for a square, or (height, width)). Ten tries, then a center crop, as torchvision.
    The box is a pure function of (seed, epoch, sample index), the same for every thread count.
    ``jpeg="fast"`` decodes JPEGs with the fast IDCT and replicated chroma (about 2% less CPU,
    a few dB of PSNR; see docs/LOADER.md). Output: uint8 (height, width, channels)."""

    op = "RandomResizedCrop"

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation="bilinear",
                 antialias=True, channels=None, jpeg="accurate"):
        self.size = _size(self.op, size)
        self.scale = _range(self.op, "scale", scale, lo=0.0, hi=1.0)
        self.ratio = _range(self.op, "ratio", ratio, lo=0.0)
        _interpolation(self.op, interpolation, antialias)
        self.channels = _channels(self.op, channels)
        self.jpeg = _jpeg(self.op, jpeg)

    def params(self):
        return _with_channels({"size": self.size, "scale": self.scale, "ratio": self.ratio}, self.channels,
                              self.jpeg)


class CenterCrop(_Image):
    """The evaluation crop: the centered square whose side is ``ratio`` times the image's shorter
    side, resized to ``size`` (an int or (height, width)). With the default ratio 224/256 it is
    torchvision's ``Resize(size * 256 // 224)`` followed by ``CenterCrop(size)`` in one step (and
    FFCV's CenterCropRGBImageDecoder). ``ratio=1`` takes the largest centered square.
    Output: uint8 (height, width, channels)."""

    op = "CenterCrop"

    def __init__(self, size, ratio=224.0 / 256.0, interpolation="bilinear", antialias=True, channels=None,
                 jpeg="accurate"):
        self.size = _size(self.op, size)
        self.ratio = _num(self.op, "ratio", ratio)
        if not 0.0 < self.ratio <= 1.0:
            raise _err(self.op, "ratio must be in (0, 1], not %r" % (ratio,))
        _interpolation(self.op, interpolation, antialias)
        self.channels = _channels(self.op, channels)
        self.jpeg = _jpeg(self.op, jpeg)

    def params(self):
        return _with_channels({"size": self.size, "ratio": self.ratio}, self.channels, self.jpeg)


class Resize(_Image):
    """torchvision.transforms.Resize((height, width)): the whole image resized to exactly that
    size (the aspect ratio is not kept). One int is refused: in torchvision it sizes the shorter
    side and keeps the aspect ratio, which gives every image its own shape, and a batch needs one
    (use CenterCrop(size, ratio=1) for a square that keeps the aspect ratio).
    Output: uint8 (height, width, channels)."""

    op = "Resize"

    def __init__(self, size, interpolation="bilinear", antialias=True, channels=None, jpeg="accurate"):
        if not (isinstance(size, (list, tuple)) and len(size) == 2):
            raise _err(self.op, "size must be (height, width), not %r: one int means 'the shorter side' in "
                                "torchvision, which keeps each image's aspect ratio and so its own shape, and a "
                                "batch needs one shape; for a square crop use CenterCrop(size, ratio=1)" % (size,))
        self.size = _size(self.op, size)
        _interpolation(self.op, interpolation, antialias)
        self.channels = _channels(self.op, channels)
        self.jpeg = _jpeg(self.op, jpeg)

    def params(self):
        return _with_channels({"size": self.size}, self.channels, self.jpeg)


class Int(Decoder):
    """An INT field: one int64 per sample, a (batch,) array."""

    op = "Int"
    accepts = ("INT",)


class Float(Decoder):
    """A FLOAT field: one float64 per sample, a (batch,) array."""

    op = "Float"
    accepts = ("FLOAT",)


class Bytes(Decoder):
    """Any field's stored payload as ``bytes``, a list per batch (an image stays encoded)."""

    op = "Bytes"
    accepts = None  # every type
    variable = True


class Text(Decoder):
    """A text field: a list per batch of ``str`` (TEXT_RAW, UTF-8) or of arrays of token ids
    (TEXT_TOKENIZED, TEXT_PACKED: uint32 or uint16, the stored id width; ``bytes`` when the
    field does not record its width)."""

    op = "Text"
    accepts = ("TEXT_RAW", "TEXT_TOKENIZED", "TEXT_PACKED")
    variable = True


class JSON(Decoder):
    """A JSON field: a list of parsed values per batch."""

    op = "JSON"
    accepts = ("JSON",)
    variable = True


class NDArray(Decoder):
    """An NDARRAY field as a (batch, *shape) array. A field stored with a fixed layout has its own
    dtype and shape (give none, or the same); a field of .npy payloads needs ``dtype`` and
    ``shape``, and a sample whose array differs is an error naming it."""

    op = "NDArray"
    accepts = ("NDARRAY",)

    def __init__(self, dtype=None, shape=None):
        self.dtype = None
        if dtype is not None:
            try:
                self.dtype = np.dtype(dtype).str  # the .npy descr, e.g. "<f4"
            except TypeError:
                raise _err(self.op, "dtype must be a numpy dtype, not %r" % (dtype,)) from None
        self.shape = None
        if shape is not None:
            if isinstance(shape, numbers.Integral):
                shape = (shape,)
            if not isinstance(shape, (list, tuple)) or len(shape) > 32:
                raise _err(self.op, "shape must be a tuple of ints, not %r" % (shape,))
            self.shape = [_int(self.op, "shape", d, lo=0, hi=1 << 31) for d in shape]

    def params(self):
        d = {}
        if self.dtype is not None:
            d["dtype"] = self.dtype
        if self.shape is not None:
            d["shape"] = self.shape
        return d


_AUDIO_OFFSETS = ("random", "start", "center")
_AUDIO_DTYPES = ("float32", "int16")


class Audio(Decoder):
    """An audio field (PCM waveform or FLAC), cropped or padded to ``length`` frames per channel:
    a (batch, channels, length) array of ``dtype`` (float32 on the [-1, 1) scale, or int16).
    ``offset`` places a longer clip's window: "random" (a pure function of seed, epoch and
    sample), "start" or "center". A shorter clip is padded with ``pad`` after it (around it for
    "center"). ``channels`` is 1 by default (the mean of the clip's channels); another count
    must equal every clip's."""

    op = "Audio"
    accepts = AUDIO_TYPES

    def __init__(self, length, offset="random", pad=0, dtype="float32", channels=None):
        self.length = _int(self.op, "length", length, hi=1 << 26)
        if offset not in _AUDIO_OFFSETS:
            raise _err(self.op, "offset must be one of %s, not %r" % (", ".join(_AUDIO_OFFSETS), offset))
        self.offset = offset
        self.pad = _num(self.op, "pad", pad)
        dtype = dtype_name(dtype)
        if dtype not in _AUDIO_DTYPES:
            raise _err(self.op, "dtype must be one of %s, not %r" % (", ".join(_AUDIO_DTYPES), dtype))
        if dtype == "int16" and not -32768 <= self.pad <= 32767:
            raise _err(self.op, "pad %r is outside int16" % (pad,))
        self.dtype = dtype
        self.channels = None if channels is None else _int(self.op, "channels", channels, hi=8)

    def params(self):
        d = {"length": self.length, "offset": self.offset, "pad": self.pad, "dtype": self.dtype}
        if self.channels is not None:
            d["channels"] = self.channels
        return d
