import torch
import torch.nn as nn


class Model(nn.Module):
    """Small image classifier: three 3 x 3 conv + ReLU stages (the first two
    followed by 2 x 2 max pooling), global average pooling, linear classifier.

    x: [batch_size, 3, image_size, image_size] -> logits [batch_size, num_classes]
    (default 64 images of 224 x 224, channels 3 -> 32 -> 64 -> 128, 1000 classes)
    """

    def __init__(self, num_classes: int):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1),
            nn.ReLU(),
        )
        self.classifier = nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.features(x)
        h = h.mean(dim=(2, 3))
        return self.classifier(h)


batch_size = 64
image_size = 224
num_classes = 1000

KBV_SMALL = {"batch_size": 2, "image_size": 32, "num_classes": 10}


def get_inputs():
    return [torch.rand(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [num_classes]
