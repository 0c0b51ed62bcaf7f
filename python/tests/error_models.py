"""Model sources for the error tests of ``python3 -m kgraph.import``
(test_importers.py): one with ops kgraph cannot map, callables that are not
models, and a small valid one."""

import torch


class Unsupported(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.sin(self.fc(x))
        z = torch.cumsum(y, 1)
        return z + torch.erf(x)


def unsupported():
    return Unsupported()


def linear():
    return torch.nn.Linear(16, 8)


def not_a_module():
    return 3


def raises():
    raise RuntimeError("broken")
