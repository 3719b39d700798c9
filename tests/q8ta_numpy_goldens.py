#!/usr/bin/env python3
"""Writes q8ta_linear, q8ta_conv2d and q8ta_add golden files the way another tool would: its own random inputs
(numpy's PCG64, not Touchstone's case data), the expected int8 outputs computed from SPEC's
formulas in float64 numpy, no case id, no tolerance. `touchstone golden verify` must accept every
file exactly (tests/CMakeLists: q8ta_numpy_goldens).

SPEC "q8ta_linear" / "q8ta_add":
  acc = sum_k (x - input_zero_point) * weight            (exact integers)
  out = clamp(round_half_to_even((acc * input_scale * weight_scales[n] + bias[n]) / output_scale)
              + output_zero_point, -128, 127)
  out = clamp(round_half_to_even((a_scale*(a - a_zp) + b_scale*(b - b_zp)) / output_scale) + output_zp, ...)
SPEC "q8ta_conv2d": acc[n,co,oh,ow] = sum_{ci,kh,kw} (x[n, g*Cg+ci, oh*sh-ph+kh*dh, ow*sw-pw+kw*dw] - x_zp)
  * weight[co,ci,kh,kw], padded positions holding x_zp (np.pad of x - x_zp with zeros), then as q8ta_linear.
np.rint rounds half to even. Scales are float32 values written into the JSON params as the float64
they equal, except in numpy-q8ta_add-decimal-scales, whose scales are doubles (0.05) as PyTorch and
ONNX store them: the kernels round those to float32, within the int8 bound.

usage: q8ta_numpy_goldens.py [--half-away] OUT_DIR"""
import json
import os
import struct
import sys

import numpy as np

CODES = {np.dtype("int8"): "I8", np.dtype("float32"): "F32", np.dtype("int32"): "I32", np.dtype("float64"): "F64"}


def write_golden(path, op, params, tensors, expect="pass"):
    header, blobs, at = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        raw = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": CODES[a.dtype], "shape": list(a.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    header["__metadata__"] = {"format": "touchstone-golden/1", "op": op, "dtype": "int8", "expect": expect,
                              "params": json.dumps(params), "source": "numpy (tests/q8ta_numpy_goldens.py)"}
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def f32(v):
    return float(np.float32(v))


TIES = [0]  # exact x.5 values in the power-of-two files (where half-to-even matters)


HALF_AWAY = False  # --half-away: a tool that rounds half away from zero (wrong at ties: verify must fail)


def requantize(v, zp):
    r = np.sign(v) * np.floor(np.abs(v) + 0.5) if HALF_AWAY else np.rint(v)
    return np.clip(r + zp, -128, 127).astype(np.int8)


def linear(rng, M, K, N, bias, pow2, x_zp, out_zp, out_scale_steps=40.0):
    x = rng.integers(-128, 128, size=(M, K), dtype=np.int64)
    w = rng.integers(-128, 128, size=(N, K), dtype=np.int64)
    if pow2:  # every float32 step exact: ties must round to even bit for bit
        x = np.clip(x_zp + rng.integers(-2, 3, size=(M, K)), -128, 127)
        w = rng.integers(-2, 3, size=(N, K))
        input_scale = 2.0 ** -7
        ws = (2.0 ** rng.integers(-9, -6, size=N)).astype(np.float32)
        output_scale = 2.0 ** -13
    else:
        input_scale = f32(rng.uniform(0.004, 0.02))
        ws = rng.uniform(0.002, 0.01, size=N).astype(np.float32)
        output_scale = f32(input_scale * float(ws.mean()) * 74 * 74 * np.sqrt(K) / out_scale_steps)
    acc = (x - x_zp) @ w.T  # int64: exact
    tensors = {"x": x.astype(np.int8), "weight": w.astype(np.int8), "weight_scales": ws}
    y = acc.astype(np.float64) * input_scale * ws.astype(np.float64)
    if bias:
        unit = input_scale * ws.astype(np.float64)
        b = (rng.integers(-60, 61, size=N) * unit if pow2 else rng.uniform(-30, 30, size=N) * output_scale)
        b = b.astype(np.float32)
        tensors["bias"] = b
        y = y + b.astype(np.float64)
    tensors["expected.out"] = requantize(y / output_scale, out_zp)
    if pow2:
        TIES[0] += int(np.count_nonzero(y / output_scale - np.floor(y / output_scale) == 0.5))
    params = {"input_scale": input_scale, "input_zero_point": x_zp, "output_scale": output_scale,
              "output_zero_point": out_zp}
    return params, tensors


def conv2d(rng, N, C_in, H, W, C_out, KH, KW, stride, padding, dilation, groups, bias, pow2, x_zp, out_zp):
    Cg, Cog = C_in // groups, C_out // groups
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    if pow2:  # small values and power-of-two scales: exact, with ties that must round to even
        x = np.clip(x_zp + rng.integers(-2, 3, size=(N, C_in, H, W)), -128, 127)
        w = rng.integers(-2, 3, size=(C_out, Cg, KH, KW))
        input_scale, output_scale = 2.0 ** -7, 2.0 ** -12
        ws = (2.0 ** rng.integers(-9, -6, size=C_out)).astype(np.float32)
    else:
        x = rng.integers(-128, 128, size=(N, C_in, H, W), dtype=np.int64)
        w = rng.integers(-128, 128, size=(C_out, Cg, KH, KW), dtype=np.int64)
        input_scale = f32(rng.uniform(0.004, 0.02))
        ws = rng.uniform(0.002, 0.01, size=C_out).astype(np.float32)
        output_scale = f32(input_scale * float(ws.mean()) * 74 * 74 * np.sqrt(Cg * KH * KW) / 40.0)
    OH = (H + 2 * ph - dh * (KH - 1) - 1) // sh + 1
    OW = (W + 2 * pw - dw * (KW - 1) - 1) // sw + 1
    xp = np.pad(x - x_zp, ((0, 0), (0, 0), (ph, ph), (pw, pw)))  # padding holds x_zp: adds 0
    acc = np.zeros((N, C_out, OH, OW), dtype=np.int64)
    for g in range(groups):
        xs, wg = xp[:, g * Cg:(g + 1) * Cg], w[g * Cog:(g + 1) * Cog]
        for kh in range(KH):
            for kw in range(KW):
                patch = xs[:, :, kh * dh:kh * dh + sh * (OH - 1) + 1:sh, kw * dw:kw * dw + sw * (OW - 1) + 1:sw]
                acc[:, g * Cog:(g + 1) * Cog] += np.einsum("ncij,oc->noij", patch, wg[:, :, kh, kw])
    tensors = {"x": x.astype(np.int8), "weight": w.astype(np.int8), "weight_scales": ws}
    y = acc.astype(np.float64) * input_scale * ws.astype(np.float64)[None, :, None, None]
    if bias:
        unit = input_scale * ws.astype(np.float64)
        b = (rng.integers(-60, 61, size=C_out) * unit if pow2 else rng.uniform(-30, 30, size=C_out) * output_scale)
        b = b.astype(np.float32)
        tensors["bias"] = b
        y = y + b.astype(np.float64)[None, :, None, None]
    v = y / output_scale
    tensors["expected.out"] = requantize(v, out_zp)
    if pow2:
        TIES[0] += int(np.count_nonzero(v - np.floor(v) == 0.5))
    params = {"input_scale": input_scale, "input_zero_point": x_zp, "output_scale": output_scale,
              "output_zero_point": out_zp, "stride": [sh, sw], "padding": [ph, pw], "dilation": [dh, dw],
              "groups": groups}
    return params, tensors


def add(rng, shape, pow2, a_zp, b_zp, out_zp, decimal=False):
    a = rng.integers(-128, 128, size=shape, dtype=np.int64)
    b = rng.integers(-128, 128, size=shape, dtype=np.int64)
    if decimal:  # as PyTorch and ONNX store scales: doubles, not float32 values
        a_scale, b_scale, output_scale = 0.05, 0.03, 0.07
    elif pow2:
        a_scale, b_scale, output_scale = 2.0 ** -6, 2.0 ** -8, 2.0 ** -5
    else:
        a_scale, b_scale = f32(rng.uniform(0.01, 0.05)), f32(rng.uniform(0.01, 0.05))
        output_scale = f32((a_scale + b_scale) * 2.5)
    v = (a_scale * (a - a_zp).astype(np.float64) + b_scale * (b - b_zp).astype(np.float64)) / output_scale
    if pow2:
        TIES[0] += int(np.count_nonzero(v - np.floor(v) == 0.5))
    params = {"a_scale": a_scale, "a_zero_point": a_zp, "b_scale": b_scale, "b_zero_point": b_zp,
              "output_scale": output_scale, "output_zero_point": out_zp}
    return params, {"a": a.astype(np.int8), "b": b.astype(np.int8), "expected.out": requantize(v, out_zp)}


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20240611)
    files = {
        "numpy-q8ta_linear-bias.safetensors": ("q8ta_linear", linear(rng, 5, 19, 7, True, False, 3, -5)),
        "numpy-q8ta_linear-gemv.safetensors": ("q8ta_linear", linear(rng, 1, 70, 9, False, False, -128, 127)),
        "numpy-q8ta_linear-saturating.safetensors": ("q8ta_linear", linear(rng, 4, 33, 4, True, False, 0, 0, 2.0)),
        "numpy-q8ta_linear-pow2-ties.safetensors": ("q8ta_linear", linear(rng, 6, 5, 8, True, True, 3, -1)),
        "numpy-q8ta_conv2d-grouped.safetensors": ("q8ta_conv2d", conv2d(rng, 2, 6, 7, 6, 4, 3, 3, (2, 1), (1, 2), (1, 2), 2, True, False, 5, -3)),
        "numpy-q8ta_conv2d-depthwise.safetensors": ("q8ta_conv2d", conv2d(rng, 1, 5, 6, 5, 5, 3, 3, (1, 1), (1, 1), (1, 1), 5, False, False, -128, 127)),
        "numpy-q8ta_conv2d-pow2-ties.safetensors": ("q8ta_conv2d", conv2d(rng, 1, 4, 5, 5, 4, 3, 3, (1, 1), (1, 1), (1, 1), 1, True, True, 3, -1)),
        "numpy-q8ta_add-rank3.safetensors": ("q8ta_add", add(rng, (3, 6, 5), False, 10, -20, 7)),
        "numpy-q8ta_add-pow2-ties.safetensors": ("q8ta_add", add(rng, (4, 9), True, 1, -3, 5)),
        "numpy-q8ta_add-extremes.safetensors": ("q8ta_add", add(rng, (2, 3, 4, 5), False, -128, 127, -128)),
        "numpy-q8ta_add-decimal-scales.safetensors": ("q8ta_add", add(rng, (5, 8), False, 2, -1, 3, decimal=True)),
    }
    for name, (op, (params, tensors)) in files.items():
        if op == "q8ta_linear" and name.endswith("gemv.safetensors"):
            params["impl"] = "gemv"
        if op == "q8ta_conv2d" and "pow2" in name:
            params["impl"] = "im2col"
        write_golden(os.path.join(out, name), op, params, tensors)
    # A reject golden: a zero point outside int8 (rule zero_point_range), no expected tensors.
    params, tensors = add(rng, (4,), False, 0, 0, 0)
    params["output_zero_point"] = 200
    del tensors["expected.out"]
    write_golden(os.path.join(out, "numpy-q8ta_add-reject-zero_point_range.safetensors"), "q8ta_add", params, tensors,
                 expect="reject")
    print(f"wrote {len(files) + 1} q8ta goldens to {out} ({TIES[0]} exact ties in the power-of-two ones)")
    assert TIES[0] > 0, "the power-of-two goldens should hold exact ties"


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--half-away"]:
        HALF_AWAY, args = True, args[1:]
    if len(args) != 1:
        sys.exit("usage: q8ta_numpy_goldens.py [--half-away] OUT_DIR")
    main(args[0])
