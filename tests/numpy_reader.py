#!/usr/bin/env python3
"""Reads touchstone-golden/1 files with numpy alone (no safetensors package, no Touchstone): the
format is plain safetensors. For rope_half goldens it recomputes expected.out in numpy and checks
it against the file: out = x*cos + rotate_half(x)*sin."""
import json
import struct
import sys

import numpy as np

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I8": "i1", "I32": "<i4"}


def read_golden(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta, body, tensors = header.pop("__metadata__"), data[8 + n:], {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        a = np.frombuffer(body[begin:end], dtype=DTYPES[t["dtype"]])
        if t["dtype"] == "BF16":  # bfloat16 is the upper half of a float32
            a = (a.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = a.reshape(t["shape"])
    return meta, tensors


def check_rope_half(path):
    meta, t = read_golden(path)
    assert meta["format"] == "touchstone-golden/1" and meta["op"] == "rope_half", meta
    assert meta["expect"] == "pass" and json.loads(meta["params"]) == {}, meta
    x, cos, sin = (t[k].astype(np.float64) for k in ("x", "cos", "sin"))
    B, H, S, D = x.shape
    assert cos.shape == sin.shape == (S, D), (x.shape, cos.shape)
    assert t["expected.out"].dtype == np.float64 and t["expected.out"].shape == x.shape
    rotated = np.concatenate([-x[..., D // 2:], x[..., :D // 2]], axis=-1)
    err = np.abs(x * cos + rotated * sin - t["expected.out"]).max()
    assert err <= 1e-12, f"{path}: numpy and the golden differ by {err}"
    print(f"{path}: {meta['dtype']} x{list(x.shape)} ok, max |numpy - golden| = {err:.3g}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: numpy_reader.py ROPE_HALF_GOLDEN...")
    for p in sys.argv[1:]:
        check_rope_half(p)
