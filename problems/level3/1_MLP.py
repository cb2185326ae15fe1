import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-layer perceptron: Linear -> ReLU for every hidden size, then a final Linear.

    x: [batch_size, input_size] -> y: [batch_size, output_size]
    (default 2048 x 4096 -> 4096 -> 4096 -> 1024)
    """

    def __init__(self, input_size: int, hidden_sizes: list, output_size: int):
        super().__init__()
        layers = []
        width = input_size
        for h in hidden_sizes:
            layers.append(nn.Linear(width, h))
            layers.append(nn.ReLU())
            width = h
        layers.append(nn.Linear(width, output_size))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


batch_size = 2048
input_size = 4096
hidden_sizes = [4096, 4096]
output_size = 1024

KBV_SMALL = {"batch_size": 16, "input_size": 128, "hidden_sizes": [96, 64], "output_size": 32}


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, list(hidden_sizes), output_size]
