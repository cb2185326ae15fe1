import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-head self-attention written out with matmuls and softmax (no mask):
    q, k, v = split(x @ W_qkv^T + b_qkv); per head
    a = softmax(q @ k^T / sqrt(head_dim)) @ v; y = concat_heads(a) @ W_o^T + b_o.

    x: [batch_size, seq_len, embed_dim] -> y: [batch_size, seq_len, embed_dim]
    (default 8 x 1024 x 1024, 16 heads of 64)
    """

    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        assert embed_dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.out = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, e = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each [b, heads, s, head_dim]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        weights = torch.softmax(scores, dim=-1)
        a = torch.matmul(weights, v)  # [b, heads, s, head_dim]
        a = a.transpose(1, 2).reshape(b, s, e)
        return self.out(a)


batch_size = 8
seq_len = 1024
embed_dim = 1024
num_heads = 16

KBV_SMALL = {"batch_size": 2, "seq_len": 32, "embed_dim": 64, "num_heads": 4}


def get_inputs():
    return [torch.rand(batch_size, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads]
