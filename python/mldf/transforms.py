"""Transforms: steps after an image decoder in a ``mldf.Loader`` pipeline, run in native code on
the decoded batch, with torchvision's names and parameters::

    RandomHorizontalFlip(p=0.5)       # alias Flip; a pure function of (seed, epoch, sample)
    Normalize(mean, std, dtype="float32")
    ToCHW()                           # (batch, C, H, W) instead of (batch, H, W, C)

``Normalize`` takes torchvision's mean and std, of pixels scaled to [0, 1] (ImageNet:
mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)), and computes (x / 255 - mean) / std in
the output dtype (float32 or float16; bfloat16 is not a numpy dtype).

In a pipeline they come in this order, each at most once: the decoder, RandomHorizontalFlip,
Normalize, ToCHW (they run fused, in one pass over each decoded image).
"""

import numbers

from .decoders import Op, _err, _num, dtype_name

__all__ = ["Transform", "RandomHorizontalFlip", "Flip", "Normalize", "ToCHW", "IMAGENET_MEAN", "IMAGENET_STD"]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class Transform(Op):
    """A step after the decoder; ``image`` transforms need an image decoder before them and come
    in ``rank`` order."""

    image = True
    rank = 0


class RandomHorizontalFlip(Transform):
    """torchvision.transforms.RandomHorizontalFlip(p): mirror left-right with probability p
    (decided per sample from the seed, the epoch and the sample index)."""

    op = "RandomHorizontalFlip"

    def __init__(self, p=0.5):
        self.p = _num(self.op, "p", p)
        if not 0.0 <= self.p <= 1.0:
            raise _err(self.op, "p must be a probability in [0, 1], not %r" % (p,))

    def params(self):
        return {"p": self.p}


Flip = RandomHorizontalFlip

_NORM_DTYPES = ("float32", "float16")


def _per_channel(op, name, v):
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return [_num(op, name, v)]
    if isinstance(v, (list, tuple)) or hasattr(v, "tolist"):
        vs = v.tolist() if hasattr(v, "tolist") else list(v)
        if isinstance(vs, list) and 1 <= len(vs) <= 4:
            return [_num(op, name, x) for x in vs]
    raise _err(op, "%s must be a number or one number per channel, not %r" % (name, v))


class Normalize(Transform):
    """torchvision.transforms.Normalize(mean, std) on pixels scaled to [0, 1]: the output is
    (x / 255 - mean) / std per channel, of ``dtype`` (float32 or float16). One number
    applies to every channel; else one per channel of the decoder's output."""

    op = "Normalize"
    rank = 1

    def __init__(self, mean, std, dtype="float32", inplace=False):
        self.mean = _per_channel(self.op, "mean", mean)
        self.std = _per_channel(self.op, "std", std)
        if len(self.mean) != len(self.std):
            raise _err(self.op, "mean and std must have as many values (one per channel): %d and %d"
                       % (len(self.mean), len(self.std)))
        if any(s <= 0 for s in self.std):
            raise _err(self.op, "every std must be above 0, not %r" % (std,))
        if any(abs(m) > 1.0 for m in self.mean) or any(s > 1.0 for s in self.std):
            raise _err(self.op, "mean and std are those of pixels scaled to [0, 1] as in torchvision "
                                "(ImageNet: mean=%r, std=%r), not 0..255: divide them by 255 (got mean=%r, std=%r)"
                       % (IMAGENET_MEAN, IMAGENET_STD, mean, std))
        name = dtype_name(dtype)
        if name not in _NORM_DTYPES:
            raise _err(self.op, "dtype must be one of %s, not %r" % (", ".join(_NORM_DTYPES), dtype))
        self.dtype = name
        del inplace  # torchvision's parameter; the output is always a new buffer here

    def params(self):
        return {"mean": self.mean, "std": self.std, "dtype": self.dtype}


class ToCHW(Transform):
    """Channels first: (batch, C, H, W), what torch models take (torchvision's ToTensor layout,
    without its scaling: use Normalize for that)."""

    op = "ToCHW"
    rank = 2
