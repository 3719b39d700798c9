#pragma once
// What q8ta_conv2d's plan (gpu/plans/q8ta_conv2d.cpp) reads of its contract: the geometry, and
// which implementation a problem runs.
#include <algorithm>
#include <cstdint>

#include "core/op.h"

namespace ts::q8ta {

// The geometry of a problem, read from its params and tensors. `ok` is false when the params are
// malformed (a golden's; a case id cannot make them so).
struct Geom {
  int64_t N = 0, C_in = 0, H = 0, W = 0, C_out = 0, Cg = 0, KH = 0, KW = 0;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  bool ok = true;
  // floor((H + 2ph - dh (KH-1) - 1) / sh) + 1, a floor division (the numerator may be negative).
  static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t d) {
    const int64_t num = in + 2 * pad - d * (k - 1) - 1;
    if (s < 1) return 0;
    return (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  }
  int64_t OH() const { return out_size(H, KH, sh, ph, dh); }
  int64_t OW() const { return out_size(W, KW, sw, pw, dw); }
  int64_t K() const { return Cg * KH * KW; }  // one output's reduction length
  Shape out() const { return {N, C_out, std::max<int64_t>(OH(), 0), std::max<int64_t>(OW(), 0)}; }
};

Geom geometry(const Problem& p);
// Whether the problem runs im2col: impl=im2col, or impl=auto where its rule holds.
bool uses_im2col(const Problem& p, const Geom& g);

}  // namespace ts::q8ta
