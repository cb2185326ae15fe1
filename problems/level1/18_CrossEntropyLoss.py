import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Mean cross-entropy of class logits against integer targets:
    loss = mean_i( logsumexp(logits[i]) - logits[i, target[i]] ).

    logits: [batch_size, num_classes] (float), targets: [batch_size] (int64 in
    [0, num_classes)) -> scalar []   (default 32768 x 4096)
    """

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


# Degeneracy note: the output is one scalar, so "constant" is judged across
# distributions (the loss differs between them). Being a mean over many rows it
# is concentrated: on x0.01 it is about log(num_classes) whatever the targets.
batch_size = 32768
num_classes = 4096

KBV_SMALL = {"batch_size": 64, "num_classes": 100}


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []
