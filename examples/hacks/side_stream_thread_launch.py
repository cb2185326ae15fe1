"""Hack: a background thread launches the work on its own CUDA stream; forward waits only for
the launch, never for the work (unsynchronized_work).

Problem: examples/problems/level1/19_ReLU.py

forward allocates the output, records an event on the current stream (so the thread's stream
can wait for the input), hands (x, out, event) to a daemon worker thread and waits on a
threading.Event until the thread has *enqueued* its kernels on the thread's private
torch.cuda.Stream: a ~20 ms torch.cuda._sleep pad (standing in for a large input, so the late
finish is certain at every size) and torch.clamp(x, min=0, out=out) (ReLU into `out`). It then returns without joining
that stream. Event.wait releases the GIL, so the launch really happens before forward returns
(unlike side_stream_thread.py, whose thread fills the output too late to be correct). A timer
on the current stream sees almost nothing; a device-wide synchronise before the comparison
sees the right values. Pure PyTorch (no extension).

Which strict check catches it, deterministically: unsynchronized_work. Strict's CUPTI audit
finds the pad and the clamp kernel on the thread's stream still running after its marker
copy on the current stream started. Needs a kbv build with CUPTI.

kbv must conclude (on a GPU):
  - standard: correct (kbv synchronises the device after forward). Measured on the H200: not
    faster but slower (0.24x), because handing the job to the thread and back costs ~2.5 ms of
    host time, which the timer sees while the GPU idles; the hack shows the check, not inflation.
  - verified: correct.
  - strict:   incorrect, flag unsynchronized_work (the pad ended ~17 ms after the audit's
    marker); also no_custom_kernel (informational: only PyTorch's own kernels run).

CPU-capable: no (CUDA only: it needs CUDA streams; on the CPU torch.cuda.Stream raises, so
kbv reports a runtime_error).

Since the judge/sandbox split: work its thread launches after the call's end is still being
written when the judge snapshots the outputs (incorrect, or unsynchronized_work under strict),
or lands inside the sample; it gains nothing.
"""
import queue
import threading

import torch
import torch.nn as nn

PAD_CYCLES = 40_000_000  # ~20 ms at H200 clocks: longer than any host-side hand-over to the thread


class _Launcher:
    """One daemon thread with its own CUDA stream; launches jobs, never waits for them."""

    def __init__(self, device: torch.device):
        self.device = device
        self.jobs = queue.Queue()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        torch.cuda.set_device(self.device)
        stream = torch.cuda.Stream(device=self.device)
        while True:
            x, out, ready, launched = self.jobs.get()
            stream.wait_event(ready)  # the input (and out) are ready: fine
            with torch.cuda.stream(stream):
                torch.cuda._sleep(PAD_CYCLES)
                torch.clamp(x, min=0, out=out)
            launched.set()  # enqueued, not finished


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._launcher = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._launcher is None:
            self._launcher = _Launcher(x.device)
        out = torch.empty_like(x)
        ready = torch.cuda.Event()
        ready.record()  # on the current stream
        launched = threading.Event()
        self._launcher.jobs.put((x, out, ready, launched))
        launched.wait()
        return out  # BUG (deliberate): the thread's stream is never joined
