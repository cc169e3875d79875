# The README's "Use it from PyTorch" example; run from the repository root after scripts/demo:
#   PYTHONPATH=python python3 python/examples/torch_demo.py
import torch
from torch.utils.data import DataLoader
from mldf.torch import MLDFDataset  # pip install ./python

def transform(s):  # {"image": HxWx3 uint8 array, "label": int64} -> (3x224x224 float tensor, int)
    x = torch.from_numpy(s["image"]).permute(2, 0, 1).float().div(255)
    return torch.nn.functional.interpolate(x[None], size=(224, 224), mode="bilinear")[0], int(s["label"])

if __name__ == "__main__":
    loader = DataLoader(MLDFDataset("out/demo.mldf", transform=transform), batch_size=8, shuffle=True, num_workers=2)
    for images, labels in loader:
        print(images.shape, labels)
