#!/usr/bin/env python3
"""PyTorch baseline for bench/run and scripts/gpu-check: the benchmarked looped transformer
written directly from SPEC section 1 (external recall, post norm; neighbourhood attention of
window 5 on 1-D prefix sums, full attention on the 9x9 sudoku grid), the way a user of the
paper's PyTorch code would run it: nn.Modules, torch.optim.AdamW, clip_grad_norm_; eager, or
with --compile the block iteration and the head under torch.compile (inductor, default mode:
what `torch.compile(module)` gives), and with --autocast bfloat16 under torch.autocast
(bfloat16 products over float32 weights, as the paper trained).

  baseline.py step    --task T --batch B --n N --k K --reps R --threads P [--compile] [--autocast bfloat16]
  baseline.py latency --task T --reps R --threads P [--batch B --positions L --width D --heads H] [--compile] [--autocast bfloat16]

Each prints one line `json: {...}` (median seconds, and the seconds the warm-up took, which
holds the compilation), as `looplab bench step|latency` do.
"""
import contextlib
import os

# torch.profiler (--count-ops) logs each start and stop on stderr unless told otherwise.
os.environ.setdefault("KINETO_LOG_LEVEL", "5")
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    """RMSNorm with a learnable scale; epsilon = machine epsilon of the dtype."""

    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        eps = torch.finfo(x.dtype).eps
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * self.weight


def rope_tables(grid, head_dim, base=10000.0):
    """N-D RoPE: per axis k_max = head_dim / (2 n) frequencies, angles concatenated over axes."""
    n = len(grid)
    k_max = head_dim // (2 * n)
    axes = torch.meshgrid(*[torch.arange(g, dtype=torch.float64) for g in grid], indexing="ij")
    coords = torch.stack(axes, -1).reshape(-1, n)
    theta = base ** (-torch.arange(k_max, dtype=torch.float64) / k_max)
    angles = torch.cat([coords[:, a:a + 1] * theta for a in range(n)], -1)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):
    pairs = x.unflatten(-1, (-1, 2))
    re, im = pairs[..., 0], pairs[..., 1]
    return torch.stack((re * cos - im * sin, re * sin + im * cos), -1).flatten(-2)


def window_index(length, window):
    """[L, W] key positions of each query's window (the same s as window_mask)."""
    starts = (torch.arange(length) - window // 2).clamp(0, max(length - window, 0))
    return starts.unsqueeze(1) + torch.arange(min(window, length))


def window_mask(length, window):
    """Additive [L, L] mask: query i sees keys s..s+w-1, s = clamp(i - w//2, 0, L - w)."""
    mask = torch.full((length, length), float("-inf"))
    for i in range(length):
        s = min(max(i - window // 2, 0), max(length - window, 0))
        mask[i, s:s + window] = 0.0
    return mask


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out_proj = nn.Linear(d, d)
        self.q_norm = RMSNorm(d // heads)
        self.k_norm = RMSNorm(d // heads)

    def forward(self, u, cos, sin, window):
        B, L, d = u.shape
        hd = d // self.heads
        q, k, v = self.qkv(u).view(B, L, 3, self.heads, hd).permute(2, 0, 3, 1, 4)
        q = self.q_norm(apply_rope(q, cos, sin))
        k = self.k_norm(apply_rope(k, cos, sin))
        if window is not None and window.dtype == torch.long:
            # Long inputs: gather each query's W keys ([B, heads, L, W, hd]) rather than scoring
            # all L x L pairs, as one would write neighbourhood attention at 512 tokens.
            kw, vw = k[:, :, window], v[:, :, window]
            scores = torch.einsum("bhld,bhlwd->bhlw", q, kw) / math.sqrt(hd)
            out = torch.einsum("bhlw,bhlwd->bhld", scores.softmax(-1), vw)
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(hd)
            if window is not None:  # an additive [L, L] mask
                scores = scores + window
            out = scores.softmax(-1) @ v
        return self.out_proj(out.transpose(1, 2).reshape(B, L, d))


class Block(nn.Module):
    """External recall r = Wx x + Wh x0, then attention and MLP sublayers, post norm."""

    def __init__(self, d, heads, mlp_ratio):
        super().__init__()
        self.attn = Attention(d, heads)
        self.mlp = nn.Sequential(nn.Linear(d, mlp_ratio * d), nn.GELU(), nn.Linear(mlp_ratio * d, d))
        self.Wx = nn.Linear(d, d)
        self.Wh = nn.Linear(d, d)
        self.post_norm_func = RMSNorm(d)

    def forward(self, x, x0, cos, sin, mask):
        r = self.Wx(x) + self.Wh(x0)
        z = self.post_norm_func(r + self.attn(r, cos, sin, mask))
        return self.post_norm_func(z + self.mlp(z))


class LoopedTransformer(nn.Module):
    def __init__(self, in_channels, out_channels, grid, local, d=256, heads=8, mlp_ratio=4, attention="mask"):
        super().__init__()
        self.projection = nn.Linear(in_channels, d)
        self.recur_blocks = nn.ModuleList([Block(d, heads, mlp_ratio)])
        self.head = nn.Sequential(RMSNorm(d), nn.Linear(d, d), nn.GELU(), nn.Linear(d, out_channels))
        cos, sin = rope_tables(grid, d // heads)
        self.register_buffer("cos", cos.float())  # converted with the model by .to(dtype)
        self.register_buffer("sin", sin.float())
        length = math.prod(grid)
        window = None
        if local:
            window = window_index(length, 5) if attention == "gather" else window_mask(length, 5)
        self.register_buffer("mask", window)

    def iterate(self, x, x0):
        for block in self.recur_blocks:
            x = block(x, x0, self.cos, self.sin, self.mask)
        return x


def setup(args):
    torch.manual_seed(0)
    if args.task == "prefix-sums":
        grid, cin, cout, local = [args.positions], 1, 2, True
        bits = torch.randint(0, 2, (args.batch, args.positions))
        inputs = bits.unsqueeze(-1).float()
        target = bits.cumsum(1) % 2
    elif args.task == "sudoku":
        grid, cin, cout, local = [9, 9], 10, 10, False
        inputs = F.one_hot(torch.randint(0, 10, (args.batch, 81)), 10).float()
        target = torch.randint(0, 10, (args.batch, 81))
    else:
        raise SystemExit(f"unknown task {args.task}")
    dtype = getattr(torch, args.dtype)
    model = LoopedTransformer(cin, cout, grid, local, args.width, args.heads, attention=args.attention)
    model = model.to(args.device, dtype)
    return model, inputs.to(args.device, dtype), target.to(args.device)


def sync(args):
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()


def compiled(model, args):
    """(iterate, head): the model's block iteration and head, under torch.compile with --compile.
    One graph per iteration, reused for every one of the n + k (with and without gradient)."""
    if not args.compile:
        return model.iterate, model.head
    return torch.compile(model.iterate), torch.compile(model.head)


def precision(args):
    """The autocast context of --autocast (a no-op without it)."""
    if args.autocast == "none":
        return contextlib.nullcontext()
    return torch.autocast(device_type=args.device.split(":")[0], dtype=getattr(torch, args.autocast))


def step_command(args):
    model, inputs, target = setup(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)

    iterate, head = compiled(model, args)

    def step():
        optimizer.zero_grad()
        x = None
        with precision(args):
            if args.n > 0:  # n iterations without gradient (the paper's code: torch.no_grad)
                with torch.no_grad():
                    x0 = model.projection(inputs)
                    x = x0
                    for _ in range(args.n):
                        x = iterate(x, x0)
            x0 = model.projection(inputs)
            if x is None:
                x = x0
            for _ in range(args.k):
                x = iterate(x, x0)
            logits = head(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), target.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        sync(args)

    start = time.perf_counter()
    for _ in range(args.warmup):
        step()
    warmup = time.perf_counter() - start
    times = []
    for _ in range(args.reps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    result = {"kind": "step", "task": args.task, "batch": args.batch, "n": args.n, "k": args.k,
              "seconds": statistics.median(times), "times": times, "warmup_seconds": warmup}
    if args.count_ops:
        result["ops"] = step_ops(model, inputs, target, iterate, head, step, args)
    return result


def count_ops(fn):
    """The ATen operators fn dispatches, counted with torch.profiler (CPU activity, every thread):
    {"top": those called from outside any other aten:: operator, "all": every call}, as looplab's
    `bench step --count-ops` counts them through LibTorch's profiler hook."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    top = every = 0
    names = {}
    for event in prof.events():
        if not event.name.startswith("aten::"):
            continue
        every += 1
        parent = event.cpu_parent
        while parent is not None and not parent.name.startswith("aten::"):
            parent = parent.cpu_parent
        if parent is None:
            top += 1
            names[event.name] = names.get(event.name, 0) + 1
    return {"top": top, "all": every, "top_names": names}


def step_ops(model, inputs, target, iterate, head, step, args):
    """One iteration's operators in three phases (each T = 2 iterations less T = 1) and one step's."""
    def forward(T):
        x0 = model.projection(inputs)
        x = x0
        for _ in range(T):
            x = iterate(x, x0)
        return head(x)

    def no_grad(T):
        def run():
            with torch.no_grad(), precision(args):
                forward(T)
            sync(args)
        return count_ops(run)

    def with_grad(T):
        def run():
            with precision(args):
                forward(T)
            sync(args)
        return count_ops(run)

    def backward(T):
        with precision(args):
            logits = forward(T)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), target.reshape(-1))
        def run():
            loss.backward()
            sync(args)
        return count_ops(run)

    def less(a, b):
        names = {n: c - b["top_names"].get(n, 0) for n, c in a["top_names"].items()}
        names.update({n: -c for n, c in b["top_names"].items() if n not in a["top_names"]})
        return {"top": a["top"] - b["top"], "all": a["all"] - b["all"],
                "top_names": {n: c for n, c in sorted(names.items()) if c != 0}}

    counts = {"iteration_no_grad": less(no_grad(2), no_grad(1)),
              "iteration_forward": less(with_grad(2), with_grad(1)),
              "iteration_backward": less(backward(2), backward(1)),
              "step": count_ops(step)}
    return counts


def latency_command(args):
    model, inputs, _ = setup(args)
    model.eval()
    iterate, _ = compiled(model, args)
    # torch.no_grad rather than inference_mode: compiled graphs refuse inference tensors made
    # outside them; without gradient either way.
    with torch.no_grad(), precision(args):
        start = time.perf_counter()
        x0 = model.projection(inputs)
        x = x0
        for _ in range(10):
            x = iterate(x, x0)
        sync(args)
        warmup = time.perf_counter() - start
        times = []
        for _ in range(args.reps):
            start = time.perf_counter()
            x = iterate(x, x0)
            sync(args)
            times.append(time.perf_counter() - start)
    return {"kind": "latency", "task": args.task, "batch": args.batch, "positions": args.positions,
            "attention": args.attention, "seconds": statistics.median(times), "warmup_seconds": warmup}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command", choices=["step", "latency"])
    p.add_argument("--task", default="prefix-sums")
    p.add_argument("--positions", type=int, default=32)
    p.add_argument("--batch", type=int, default=None)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--n", type=int, default=2)
    p.add_argument("--k", type=int, default=2)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--attention", default="auto", choices=["auto", "mask", "gather"],
                   help="neighbourhood window: a dense [L, L] mask or gathered keys (auto: gather above 64 tokens)")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64", "bfloat16", "float16"])
    p.add_argument("--count-ops", action="store_true",
                   help="step: then count the ATen operators of one iteration (without and with gradient, backward) "
                        "and of one step (torch.profiler)")
    p.add_argument("--compile", action="store_true", help="torch.compile the iteration and the head (inductor, default mode)")
    p.add_argument("--autocast", default="none", choices=["none", "bfloat16", "float16"],
                   help="torch.autocast to this dtype over float32 weights (--dtype float32)")
    args = p.parse_args()
    if args.compile and args.warmup < 2:
        args.warmup = 2  # the first steps compile (with and without gradient)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if args.attention == "auto":
        args.attention = "gather" if args.positions > 64 else "mask"
    if args.batch is None:
        args.batch = 1 if args.command == "latency" else 500
    result = step_command(args) if args.command == "step" else latency_command(args)
    result["threads"] = torch.get_num_threads()
    result["torch"] = torch.__version__
    result["mode"] = "compiled" if args.compile else "eager"
    result["autocast"] = args.autocast
    print("json: " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
