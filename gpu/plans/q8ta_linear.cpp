// q8ta_linear's plan: a tiled GEMM, or a GEMV of one workgroup per output texel.
#include "gpu/plans/common.h"
#include "gpu/plans/emulate.h"
#include "gpu/plans/q8ta_emulate.h"
#include "reference/q8ta_common.h"

namespace ts {
namespace {

using namespace q8ta;

constexpr uint32_t kGemvThreads = 64;  // one GEMV workgroup: the threads that split K (SPEC)
// impl=coopmat (q8ta_linear_coopmat.comp): a workgroup of 4 subgroups of 32 per 64x64 tile of out,
// or per 32x32 tile where 64x64 tiles would leave fewer than kCoopmatMinTiles workgroups (fewer than
// a GPU of a hundred-odd multiprocessors has: most of it would idle).
constexpr uint32_t kCoopmatThreads = 128, kCoopmatSubgroup = 32;
constexpr int64_t kCoopmatMinTiles = 128;
std::vector<BufferSpec> buffers(const Problem& p) {
  return {{"out", {p.inputs.at("x").shape[0], p.inputs.at("weight").shape[0]}, DType::i8}};
}

// x, the weights, their scales and the bias read once, out written once.
double bytes_moved(const Problem& p) {
  double b = 0;
  for (auto& [name, t] : p.inputs) b += tensor_bytes(t);
  return b + double(p.inputs.at("x").shape[0]) * double(p.inputs.at("weight").shape[0]);
}

// Integer operations: M x N dot products of K multiply-adds (the requantization is not counted).
double flops(const Problem& p) {
  return 2.0 * double(p.inputs.at("x").shape[0]) * double(p.inputs.at("x").shape[1]) *
         double(p.inputs.at("weight").shape[0]);
}

// One dispatch, the same interface for both implementations and both languages:
//   TS_INPUT(x, 0)  TS_INPUT(weight, 1)  float weight_scales[] (2)  float bias[] (3)  TS_OUTPUT(out, 4)
//   uniforms M, K, N (uint), x_zp, out_zp (int), input_scale, inv_out_scale, has_bias (uint).
// inv_out_scale is 1 / output_scale rounded once to float32 on the host (the seed's choice; the
// bound's derivation above allows it). Without a bias, `bias` binds weight_scales and has_bias = 0:
// a binding must hold a tensor, and a second program for the bias-free case would double compiles.
// tiled: one invocation per 4x4 tile of out (rows 4 i.., columns 4 j..), ceil(M/4) * ceil(N/4) of
// them. gemv (M = 1): one workgroup of 64 invocations per output texel, splitting K. coopmat: one
// workgroup per 64x64 (or 32x32) tile of out, multiplying on int8 cooperative matrices (tensor cores).
std::vector<Dispatch> plan(const Problem& p) {
  const int64_t M = p.inputs.at("x").shape[0], K = p.inputs.at("x").shape[1], N = p.inputs.at("weight").shape[0];
  const bool bias = p.inputs.count("bias") > 0;
  const std::string impl = p.params.value("impl", "auto");
  const bool gemv = impl == "gemv" || (impl == "auto" && M == 1);
  Dispatch d;
  const bool coopmat = impl == "coopmat";
  d.kernel = gemv ? "q8ta_linear_gemv" : coopmat ? "q8ta_linear_coopmat" : "q8ta_linear_tiled";
  d.uniforms = {{"M", double(M)},
                {"K", double(K)},
                {"N", double(N)},
                {"x_zp", double(zero_point_param(p.params, "input_zero_point"))},
                {"out_zp", double(zero_point_param(p.params, "output_zero_point"))},
                {"input_scale", scale_param(p.params, "input_scale")},
                {"inv_out_scale", double(float(1.0 / scale_param(p.params, "output_scale")))},
                {"has_bias", bias ? 1.0 : 0.0}};
  if (!bias) d.bind["bias"] = "weight_scales";
  if (coopmat) {
    auto tiles_of = [&](int64_t t) { return uint64_t((M + t - 1) / t) * uint64_t((N + t - 1) / t); };
    const int64_t tile = tiles_of(64) >= uint64_t(kCoopmatMinTiles) ? 64 : 32;
    const uint64_t tiles = tiles_of(tile);
    d.defines.insert(d.defines.end(), {cat("NI=", kCoopmatThreads, "u"), cat("BT=", tile, "u")});
    d.workgroup = kCoopmatThreads;
    d.subgroup = kCoopmatSubgroup;
    d.whole_subgroups = true;  // its subgroups by id, each a cooperative matrix's
    d.cooperative_matrix = true;
    d.invocations = tiles * kCoopmatThreads;
    d.rows = M, d.cols = N, d.tile_rows = tile, d.tile_cols = tile;
  } else if (gemv) {
    d.workgroup = kGemvThreads;
    d.invocations = out_texels(p, "out", {M, N}) * kGemvThreads;
  } else {
    d.invocations = uint64_t((M + 3) / 4) * uint64_t((N + 3) / 4);
    d.rows = M, d.cols = N, d.tile_rows = 4, d.tile_cols = 4;
  }
  return {d};
}

Tolerance tolerance(const Problem& p) {
  return int8_tolerance("out", {p.inputs.at("x").shape[0], p.inputs.at("weight").shape[0]}, linear_requant(p));
}

// The kernels' accumulators, then the requantization as they compute it (gpu/plans/q8ta_emulate.h).
Floats emulate(const Problem& p, const Floats& in, bool up) {
  const AccumulatorEmulation emit(p, in, up);
  const std::vector<float> &x = in.at("x"), &w = in.at("weight");
  const int64_t M = p.inputs.at("x").shape[0], K = p.inputs.at("x").shape[1], N = p.inputs.at("weight").shape[0];
  std::vector<float> o;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int32_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (int32_t(x[size_t(m * K + k)]) - emit.x_zp) * int32_t(w[size_t(n * K + k)]);
      o.push_back(emit(acc, n));
    }
  return {{"out", o}};
}

const std::vector<BenchWorkload> kBench = {
    {"q8ta_linear GEMV M1 K4096 N4096", "q8ta_linear/M=1,K=4096,N=4096/int8/buffer/seed=8",
     "q8ta_linear/M=1,K=1024,N=256/int8/buffer/seed=8"},
    {"q8ta_linear GEMM M256 K2048 N2048", "q8ta_linear/M=256,K=2048,N=2048/int8/buffer/seed=8",
     "q8ta_linear/M=16,K=256,N=128/int8/buffer/seed=8"},
};

}  // namespace

OpContract q8ta_linear_contract();

const OpDef& q8ta_linear_op() {
  static const OpDef op{q8ta_linear_contract(), {buffers, plan, tolerance, emulate, bytes_moved, flops, kBench}};
  return op;
}

}  // namespace ts
