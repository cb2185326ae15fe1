import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Pre-norm transformer encoder layer (no mask, no dropout):
    h = x + W_o(attention(layernorm1(x)))      multi-head, scaled dot product
    y = h + W_2(gelu(W_1(layernorm2(h))))

    x: [batch_size, seq_len, embed_dim] -> y: [batch_size, seq_len, embed_dim]
    (default 8 x 512 x 1024, 16 heads, feed-forward width 4096)
    """

    def __init__(self, embed_dim: int, num_heads: int, ffn_dim: int):
        super().__init__()
        assert embed_dim % num_heads == 0
        self.num_heads = num_heads
        self.norm1 = nn.LayerNorm(embed_dim)
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)
        self.norm2 = nn.LayerNorm(embed_dim)
        self.fc1 = nn.Linear(embed_dim, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, e = x.shape
        qkv = self.qkv(self.norm1(x)).view(b, s, 3, self.num_heads, e // self.num_heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        a = F.scaled_dot_product_attention(q, k, v)
        h = x + self.proj(a.transpose(1, 2).reshape(b, s, e))
        return h + self.fc2(F.gelu(self.fc1(self.norm2(h))))


batch_size = 8
seq_len = 512
embed_dim = 1024
num_heads = 16
ffn_dim = 4096

KBV_SMALL = {"batch_size": 2, "seq_len": 16, "embed_dim": 64, "num_heads": 4, "ffn_dim": 128}


def get_inputs():
    return [torch.rand(batch_size, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads, ffn_dim]
