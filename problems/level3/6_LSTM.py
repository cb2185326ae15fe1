import torch
import torch.nn as nn


class Model(nn.Module):
    """Single-layer LSTM (batch_first) from a given initial state, followed by a
    linear read-out of every step's hidden state.

    x: [batch_size, seq_len, input_size], h0, c0: [1, batch_size, hidden_size]
      -> [batch_size, seq_len, output_size]
    (default 64 x 128 x 256, hidden 512, output 128)
    """

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor) -> torch.Tensor:
        output, _ = self.lstm(x, (h0, c0))
        return self.head(output)


batch_size = 64
seq_len = 128
input_size = 256
hidden_size = 512
output_size = 128

KBV_SMALL = {"batch_size": 2, "seq_len": 8, "input_size": 16, "hidden_size": 32, "output_size": 8}


def get_inputs():
    return [
        torch.rand(batch_size, seq_len, input_size),
        torch.randn(1, batch_size, hidden_size),
        torch.randn(1, batch_size, hidden_size),
    ]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
