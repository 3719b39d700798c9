#!/usr/bin/env python3
"""Writes bfloat16 holdout goldens (touchstone-golden/1) the way another tool would: numpy only, no
Touchstone code, no bfloat16 library. numpy has no bfloat16, so values are rounded to it by hand:
round to nearest, ties to even, from float64 in one step (8 significant bits), and stored as the top
16 bits of the float32 that holds the rounded value exactly. Expected outputs are float64 math on the
bfloat16 inputs, as SPEC "Golden files" asks.

  make_bf16_goldens.py DIR           write the files into DIR
  make_bf16_goldens.py --check DIR   exit 1 unless DIR holds what this script writes: the same header
                                     and metadata and the same bytes of every tensor, except the
                                     float64 values numpy computes through BLAS (ROUNDED below),
                                     which must agree within a bound derived from their arithmetic
"""
import json
import math
import struct
import sys

import numpy as np


def bf16(x):
    """float64 -> the nearest bfloat16 value (ties to even), as float64. Normal values only."""
    x = float(x)
    if x == 0.0:
        return 0.0
    f, e = math.frexp(x)            # x = f * 2^e, 0.5 <= |f| < 1
    assert e - 1 >= -126, "no subnormals here"
    return round(f * 256.0) / 256.0 * 2.0 ** e   # 8 significant bits; round() ties to even


def bf16_array(a):
    return np.vectorize(bf16, otypes=[np.float64])(np.asarray(a, dtype=np.float64))


def bf16_bytes(a):
    a = np.asarray(a, dtype=np.float64)
    f32 = a.astype(np.float32)
    assert np.array_equal(f32.astype(np.float64), a), "not a bfloat16 value"
    bits = f32.view(np.uint32)
    assert not np.any(bits & 0xFFFF), "not a bfloat16 value"
    return (bits >> 16).astype("<u2").tobytes()


def golden(op, params, tensors, source):
    """tensors: name -> (safetensors dtype, shape, raw bytes). Written in sorted-name order."""
    header, data = {}, b""
    for name in sorted(tensors):
        dt, shape, raw = tensors[name]
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = {"format": "touchstone-golden/1", "op": op, "dtype": "bfloat16",
                              "params": json.dumps(params, sort_keys=True), "expect": "pass", "source": source}
    h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


SOURCE = "tests/holdout/make_bf16_goldens.py (numpy float64, bfloat16 rounded by hand)"


def rope_llama():
    """Interleaved RoPE, B=1 S=3 Hq=4 Hkv=2 D=10 (a ragged half texel), positions 5..7."""
    rng = np.random.default_rng(20261122)
    B, S, Hq, Hkv, D = 1, 3, 4, 2, 10
    xq = bf16_array(rng.uniform(-2, 2, (B, S, Hq, D)))
    xk = bf16_array(rng.uniform(-2, 2, (B, S, Hkv, D)))
    pos = 5 + np.arange(S)[:, None]
    inv = 10000.0 ** (-2.0 * np.arange(D // 2) / D)
    fc, fs = bf16_array(np.cos(pos * inv)), bf16_array(np.sin(pos * inv))

    def rot(x):
        a, b = x[..., 0::2], x[..., 1::2]
        c, s = fc[None, :, None, :], fs[None, :, None, :]
        out = np.empty_like(x)
        out[..., 0::2] = a * c - b * s
        out[..., 1::2] = a * s + b * c
        return out

    f64 = lambda a: ("F64", a.shape, a.astype("<f8").tobytes())
    b16 = lambda a: ("BF16", a.shape, bf16_bytes(a))
    return golden("rope_llama", {}, {"xq": b16(xq), "xk": b16(xk), "freqs_cos": b16(fc), "freqs_sin": b16(fs),
                                           "expected.xq_out": f64(rot(xq)), "expected.xk_out": f64(rot(xk))}, SOURCE)


def sdpa():
    """Chunked prefill with GQA 2:1: S=3 at input_pos 4, Hq=4 Hkv=2 D=8, cache capacity 9."""
    rng = np.random.default_rng(7)
    S, Hq, Hkv, D, pos, Cmax = 3, 4, 2, 8, 4, 9
    q = bf16_array(rng.uniform(-1, 1, (1, S, Hq, D)))
    k = bf16_array(rng.uniform(-1, 1, (1, S, Hkv, D)))
    v = bf16_array(rng.uniform(-1, 1, (1, S, Hkv, D)))
    kc = bf16_array(rng.uniform(-1, 1, (1, Cmax, Hkv, D)))
    vc = bf16_array(rng.uniform(-1, 1, (1, Cmax, Hkv, D)))
    kc2, vc2 = kc.copy(), vc.copy()
    kc2[0, pos:pos + S], vc2[0, pos:pos + S] = k[0], v[0]
    scale = 1.0 / math.sqrt(D)
    out = np.zeros((1, S, Hq, D))
    for h in range(Hq):
        kvh = h // (Hq // Hkv)
        for s in range(S):
            n = pos + s + 1                                  # causal: keys 0 .. pos + s
            w = scale * (kc2[0, :n, kvh] @ q[0, s, h])
            w = np.exp(w - w.max())
            out[0, s, h] = (w / w.sum()) @ vc2[0, :n, kvh]
    f64 = lambda a: ("F64", a.shape, a.astype("<f8").tobytes())
    b16 = lambda a: ("BF16", a.shape, bf16_bytes(a))
    return golden("sdpa", {"input_pos": pos}, {"q": b16(q), "k": b16(k), "v": b16(v), "k_cache": b16(kc),
                                                     "v_cache": b16(vc), "expected.out": f64(out),
                                                     "expected.k_cache": b16(kc2), "expected.v_cache": b16(vc2)}, SOURCE)


FILES = {"rope_llama-bfloat16-numpy.safetensors": rope_llama, "sdpa-bfloat16-numpy.safetensors": sdpa}

# Tensors whose float64 bytes depend on the CPU, with how far two CPUs may disagree (absolute).
# Everything else is exact on any machine: the inputs and the cache copies are bfloat16 values,
# rope_llama's outputs are single IEEE products and sums (a*c - b*s, correctly rounded whatever the
# CPU), the header is JSON text. sdpa's expected.out goes through `@` (BLAS: its summation order,
# blocking and use of FMA follow the CPU's kernel) and np.exp (numpy's SIMD loops or libm, within
# 1 ulp of each other). With u = 2^-53, inputs in [-1, 1] and D = 8, any order errs by at most:
#  - a score, an 8-term dot product: gamma_8 * sum|k q| <= 8u * 8 = 2^-47, then * 1/sqrt(8) and one
#    rounding: < 2^-47;
#  - exp(w - max): its argument (two scores) by < 2^-46, so the weight relatively by < 2^-46, plus
#    exp's own 1 ulp, 2^-52;
#  - the normalisation w / sum(w) over at most 7 positive terms: relatively by < 7u more, so each
#    probability p_i relatively by < 2^-45;
#  - out = p @ v, a 7-term dot product with sum(p) = 1 and |v| <= 1: sum |dp_i v_i| < 2^-45 from the
#    probabilities plus gamma_7 * sum |p v| <= 7u < 2^-50 from its own summation.
# So |out_a - out_b| < 2^-44; 2^-40 leaves 16x for what the sketch rounds away, and is still 2^-32
# of a bfloat16 ulp at 1, far below any error a wrong formula would make.
ROUNDED = {("sdpa-bfloat16-numpy.safetensors", "expected.out"): 2.0 ** -40}


def parse(data):
    """A safetensors file's header (a dict) and tensors (name -> raw bytes)."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    raw = {name: body[e["data_offsets"][0]:e["data_offsets"][1]] for name, e in header.items() if name != "__metadata__"}
    return header, raw


def differences(name, have, want):
    """Why the file's bytes `have` are not what this script writes (`want`): a list of lines."""
    if have == want:
        return []
    try:
        hh, ht = parse(have)
    except (ValueError, KeyError, struct.error) as e:
        return [f"not a safetensors file: {e}"]
    wh, wt = parse(want)
    if hh != wh:
        return ["the header (names, dtypes, shapes, offsets or metadata) differs"]
    out = []
    for t in sorted(wt):
        bound = ROUNDED.get((name, t))
        if ht[t] == wt[t]:
            continue
        if bound is None:
            out.append(f"{t}: bytes differ (exact on any CPU)")
            continue
        a, b = np.frombuffer(ht[t], dtype="<f8"), np.frombuffer(wt[t], dtype="<f8")
        worst = float(np.max(np.abs(a - b))) if a.size else 0.0
        if not worst <= bound:
            out.append(f"{t}: differs by {worst:.3g}, more than the BLAS bound {bound:.3g}")
    return out


def main(argv):
    check = argv[:1] == ["--check"]
    args = argv[1:] if check else argv
    if len(args) != 1:
        sys.exit(__doc__)
    bad = 0
    for name, make in FILES.items():
        path = f"{args[0]}/{name}"
        data = make()
        if check:
            with open(path, "rb") as f:
                problems = differences(name, f.read(), data)
            print(f"{path}: {'as this script writes it' if not problems else 'DIFFERS from what this script writes'}")
            for p in problems:
                print(f"  {p}")
            bad += bool(problems)
        else:
            with open(path, "wb") as f:
                f.write(data)
            print(f"wrote {path} ({len(data)} bytes)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
