# Writes python.safetensors beside this file with Python's own safetensors (0.8.0 when it was
# made) and PyTorch: the fixture tests/io/safetensors_test.cpp reads to check looplab's reader
# against the reference implementation's bytes. Run it again only to remake the fixture:
#   python3 tests/io/data/make_python_safetensors.py
import os

import torch
from safetensors.torch import save_file

here = os.path.dirname(os.path.abspath(__file__))
tensors = {
    "model.weight": torch.tensor([[1.5, -2.0, 0.25], [3.0, 1e-3, -0.0]], dtype=torch.float32),
    "steps": torch.tensor([1, -2, 3000000000], dtype=torch.int64),
    "half": torch.tensor([0.5, -1.25], dtype=torch.bfloat16),
    "scalar": torch.tensor(2.0 ** -20, dtype=torch.float64),
}
save_file(tensors, os.path.join(here, "python.safetensors"), metadata={"format": "pt", "epochs_done": "7"})
