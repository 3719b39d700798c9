// q8ta_conv2d's plan: a direct convolution, or im2col and a tiled GEMM.
#include "gpu/plans/common.h"
#include "gpu/plans/emulate.h"
#include "gpu/plans/q8ta_emulate.h"
#include "reference/q8ta_common.h"
#include "reference/q8ta_conv2d.h"

namespace ts {
namespace {

using namespace q8ta;

std::vector<BufferSpec> buffers(const Problem& p) {
  const Geom g = geometry(p);
  std::vector<BufferSpec> b = {{"out", g.out(), DType::i8}};
  // im2col's columns: one row of K taps per output pixel (raw int8, x_zp at padding).
  if (uses_im2col(p, g)) b.push_back({"col", {g.N * g.OH() * g.OW(), g.K()}, DType::i8, BufferSpec::Role::scratch});
  return b;
}

// The dispatches (bindings the same in GLSL and WGSL):
//   general: TS_INPUT(x, 0)  TS_INPUT(weight, 1)  float weight_scales[] (2)  float bias[] (3)
//            TS_OUTPUT(out, 4); one invocation per texel of out.
//   im2col:  TS_INPUT(x, 0)  TS_OUTPUT(col, 1); one invocation per texel (4 taps) of col, K % 4 = 0.
//   gemm:    q8ta_linear_tiled's interface with x bound to col, N = C_out, and OHW (= OH * OW) to
//            place out[n, co, oh, ow] for row m = (n, oh, ow); one invocation per 4x4 tile.
// Uniforms as q8ta_linear's (inv_out_scale: 1 / output_scale rounded once on the host; no bias:
// `bias` binds weight_scales and has_bias = 0) plus the geometry.
std::vector<Dispatch> plan(const Problem& p) {
  const Geom g = geometry(p);
  const bool bias = p.inputs.count("bias") > 0;
  const int64_t OH = g.OH(), OW = g.OW();
  std::map<std::string, double> geom = {{"KH", double(g.KH)}, {"KW", double(g.KW)}, {"sh", double(g.sh)},
                                        {"sw", double(g.sw)}, {"ph", double(g.ph)}, {"pw", double(g.pw)},
                                        {"dh", double(g.dh)}, {"dw", double(g.dw)},
                                        {"x_zp", double(zero_point_param(p.params, "input_zero_point"))}};
  std::map<std::string, double> quant = {{"x_zp", double(zero_point_param(p.params, "input_zero_point"))},
                                         {"out_zp", double(zero_point_param(p.params, "output_zero_point"))},
                                         {"input_scale", scale_param(p.params, "input_scale")},
                                         {"inv_out_scale", double(float(1.0 / scale_param(p.params, "output_scale")))},
                                         {"has_bias", bias ? 1.0 : 0.0}};
  if (uses_im2col(p, g)) {
    const int64_t M = g.N * OH * OW, K = g.K();
    Dispatch cols;
    cols.kernel = "q8ta_conv2d_im2col";
    cols.uniforms = geom;
    cols.uniforms["K"] = double(K);
    cols.uniforms["OH"] = double(OH);
    cols.uniforms["OW"] = double(OW);
    cols.invocations = uint64_t(M * K / 4);
    Dispatch gemm;
    gemm.kernel = "q8ta_conv2d_gemm";
    gemm.uniforms = quant;
    gemm.uniforms["M"] = double(M);
    gemm.uniforms["K"] = double(K);
    gemm.uniforms["N"] = double(g.C_out);
    gemm.uniforms["OHW"] = double(OH * OW);
    gemm.bind["x"] = "col";
    if (!bias) gemm.bind["bias"] = "weight_scales";
    gemm.invocations = uint64_t((M + 3) / 4) * uint64_t((g.C_out + 3) / 4);
    gemm.rows = M, gemm.cols = g.C_out, gemm.tile_rows = 4, gemm.tile_cols = 4;
    return {cols, gemm};
  }
  Dispatch d;
  d.kernel = "q8ta_conv2d_general";
  d.uniforms = quant;
  d.uniforms.insert(geom.begin(), geom.end());
  d.uniforms["Cg"] = double(g.Cg);
  d.uniforms["Cog"] = double(g.C_out / g.groups);
  if (!bias) d.bind["bias"] = "weight_scales";
  d.invocations = out_texels(p, "out", g.out());
  return {d};
}

Tolerance tolerance(const Problem& p) { return int8_tolerance("out", geometry(p).out(), conv2d_requant(p)); }

// x, the weights, their scales and the bias read once, out written once (im2col's scratch is the
// implementation's own traffic, not the operator's).
double bytes_moved(const Problem& p) {
  double b = 0;
  for (auto& [name, t] : p.inputs) b += tensor_bytes(t);
  return b + double(numel(geometry(p).out()));
}

// Integer operations: one multiply and one add per (output, reduction term); the requantization is
// not counted.
double flops(const Problem& p) {
  const Geom g = geometry(p);
  return 2.0 * double(numel(g.out())) * double(g.K());
}

// The kernels' accumulators (padding taps add x_zp - x_zp = 0), then the requantization as they
// compute it (gpu/plans/q8ta_emulate.h); output in [N, C_out, OH, OW] order.
Floats emulate(const Problem& p, const Floats& in, bool up) {
  const AccumulatorEmulation emit(p, in, up);
  const std::vector<float> &x = in.at("x"), &w = in.at("weight");
  const Geom g = geometry(p);
  const int64_t OH = g.OH(), OW = g.OW(), Cog = g.C_out / g.groups;
  std::vector<float> o;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t co = 0; co < g.C_out; ++co)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int32_t acc = 0;
          for (int64_t ci = 0; ci < g.Cg; ++ci)
            for (int64_t kh = 0; kh < g.KH; ++kh)
              for (int64_t kw = 0; kw < g.KW; ++kw) {
                const int64_t ih = oh * g.sh - g.ph + kh * g.dh, iw = ow * g.sw - g.pw + kw * g.dw;
                if (ih < 0 || iw < 0 || ih >= g.H || iw >= g.W) continue;
                const int64_t c = co / Cog * g.Cg + ci;
                acc += (int32_t(x[size_t(((n * g.C_in + c) * g.H + ih) * g.W + iw)]) - emit.x_zp) *
                       int32_t(w[size_t(((co * g.Cg + ci) * g.KH + kh) * g.KW + kw)]);
              }
          o.push_back(emit(acc, co));
        }
  return {{"out", o}};
}

// The int8 seed's stress shapes (general beside im2col).
const std::vector<BenchWorkload> kBench = {
    {"q8ta_conv2d 3x3 C512 7x7", "q8ta_conv2d/C_in=512,C_out=512,H=7,W=7,KH=3,KW=3,ph=1,pw=1/int8/buffer;out=int8_4c1w;x=int8_4c1w/seed=8",
     "q8ta_conv2d/C_in=64,C_out=64,H=7,W=7,KH=3,KW=3,ph=1,pw=1/int8/buffer;out=int8_4c1w;x=int8_4c1w/seed=8"},
    {"q8ta_conv2d 1x1 C1024->2048 14x14 s2",
     "q8ta_conv2d/C_in=1024,C_out=2048,H=14,W=14,KH=1,KW=1,sh=2,sw=2/int8/buffer;out=int8_4c1w;x=int8_4c1w/seed=8",
     "q8ta_conv2d/C_in=128,C_out=256,H=14,W=14,KH=1,KW=1,sh=2,sw=2/int8/buffer;out=int8_4c1w;x=int8_4c1w/seed=8"},
};

}  // namespace

OpContract q8ta_conv2d_contract();

const OpDef& q8ta_conv2d_op() {
  static const OpDef op{q8ta_conv2d_contract(), {buffers, plan, tolerance, emulate, bytes_moved, flops, kBench}};
  return op;
}

}  // namespace ts
