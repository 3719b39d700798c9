// q8ta_add's plan: one invocation per output texel, or per 16-byte chunk of out when every tensor is
// a buffer (the kernel's buffer fast path).
#include "gpu/plans/common.h"
#include "gpu/plans/emulate.h"
#include "gpu/plans/q8ta_emulate.h"
#include "reference/q8ta_common.h"

namespace ts {
namespace {

using namespace q8ta;

std::vector<BufferSpec> buffers(const Problem& p) { return {{"out", p.inputs.at("a").shape, DType::i8}}; }

// a and b read once, out written once (a memory-bound operator: no operation count).
double bytes_moved(const Problem& p) { return elementwise_bytes(p, {"a"}); }

// TS_INPUT(a, 0)  TS_INPUT(b, 1)  TS_OUTPUT(out, 2); one invocation per output texel, or, with a, b
// and out all buffers (the kernels know it when compiling: NAME_is_buffer), per 4 texels (16 bytes);
// uniforms a_scale, b_scale, inv_out_scale (float; the last 1 / output_scale rounded once on the
// host), a_zp, b_zp, out_zp (int), n (uint: the invocations).
std::vector<Dispatch> plan(const Problem& p) {
  const uint64_t texels = out_texels(p, "out", p.inputs.at("a").shape);
  const bool buffers = p.layout("a") == Layout::buffer && p.layout("b") == Layout::buffer && p.layout("out") == Layout::buffer;
  const uint64_t n = buffers ? (texels + 3) / 4 : texels;
  return {{"q8ta_add",
           {},
           n,
           {{"a_scale", scale_param(p.params, "a_scale")},
            {"b_scale", scale_param(p.params, "b_scale")},
            {"inv_out_scale", double(float(1.0 / scale_param(p.params, "output_scale")))},
            {"a_zp", double(zero_point_param(p.params, "a_zero_point"))},
            {"b_zp", double(zero_point_param(p.params, "b_zero_point"))},
            {"out_zp", double(zero_point_param(p.params, "output_zero_point"))},
            {"n", double(n)}}}};
}

Tolerance tolerance(const Problem& p) { return int8_tolerance("out", p.inputs.at("a").shape, add_requant(p)); }

// a_scale (a - a_zp) + b_scale (b - b_zp) in float32, then the requantization (gpu/plans/q8ta_emulate.h).
Floats emulate(const Problem& p, const Floats& in, bool up) {
  const Requantizer store(p.params, up);
  const float as = float(p.params.at("a_scale").get<double>()), bs = float(p.params.at("b_scale").get<double>());
  const int64_t azp = p.params.at("a_zero_point").get<int64_t>(), bzp = p.params.at("b_zero_point").get<int64_t>();
  const std::vector<float> &a = in.at("a"), &b = in.at("b");
  std::vector<float> o;
  for (size_t i = 0; i < a.size(); ++i) o.push_back(store(as * float(int64_t(a[i]) - azp) + bs * float(int64_t(b[i]) - bzp)));
  return {{"out", o}};
}

const std::vector<BenchWorkload> kBench = {
    {"q8ta_add 4096x4096", "q8ta_add/shape=4096:4096/int8/buffer/seed=8", "q8ta_add/shape=256:256/int8/buffer/seed=8"},
};

}  // namespace

OpContract q8ta_add_contract();

const OpDef& q8ta_add_op() {
  static const OpDef op{q8ta_add_contract(), {buffers, plan, tolerance, emulate, bytes_moved, nullptr, kBench}};
  return op;
}

}  // namespace ts
