import torch
import torch.nn as nn


class Model(nn.Module):
    """Stacked GRU over a batch of sequences (batch_first), from a given initial
    hidden state; returns the top layer's hidden state at every step.

    x: [batch_size, seq_len, input_size], h0: [num_layers, batch_size, hidden_size]
      -> [batch_size, seq_len, hidden_size]
    (default 64 x 64 x 256, 2 layers of 512)
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers=num_layers, batch_first=True)

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        output, _ = self.gru(x, h0)
        return output


batch_size = 64
seq_len = 64
input_size = 256
hidden_size = 512
num_layers = 2

KBV_SMALL = {"batch_size": 2, "seq_len": 8, "input_size": 16, "hidden_size": 32}


def get_inputs():
    return [torch.rand(batch_size, seq_len, input_size), torch.randn(num_layers, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
