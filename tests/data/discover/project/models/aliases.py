import torch
import torch.nn as tnn
from torch import nn
from torch.nn import Module as M
from torch.nn.modules.module import Module as DeepModule


class FromTorchImportNn(nn.Module):
    def forward(self, x):
        return x


class ImportTorch(torch.nn.Module):
    pass


class TorchNnAs(tnn.Module):
    pass


class ModuleAs(M):
    pass


class Deep(DeepModule):
    pass


class Stack(nn.Sequential):
    pass


class Dense(nn.Linear):
    pass


class Layer(nn.TransformerEncoderLayer):
    pass


class SameFile(FromTorchImportNn):
    pass


class Plain:
    def forward(self, x):
        return x


class Weight(nn.Parameter):
    pass


def factory():
    class Local(nn.Module):
        pass

    return Local
