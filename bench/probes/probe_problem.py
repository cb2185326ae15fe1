"""A KernelBench problem file as the GPU probes use it: imported by path, and its get_inputs()
drawn onto the GPU."""
import importlib.util

import torch


def load(path):
    spec = importlib.util.spec_from_file_location("problem", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cuda_inputs(problem):
    return [x.cuda() if torch.is_tensor(x) else x for x in problem.get_inputs()]
