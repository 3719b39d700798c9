// rope_llama and rope_half as ggml_rope_ext computes them: ggml takes positions and a base and makes
// its own angles, in float32, in the kernel (ggml-vulkan's rope_funcs.glsl):
//   theta_scale = powf(base, -2.0f / n_dims)                      (host, float32)
//   theta       = float(pos) * pow(theta_scale, i)                (shader)
//   out         = x0 * cos(theta) - x1 * sin(theta), x0 * sin(theta) + x1 * cos(theta)   (float32)
// rope_llama's pairs are (2i, 2i+1) (ggml mode NORMAL); rope_half's are (i, i + D/2) (mode NEOX),
// on [B,H,S,D] tensors that ggml, which takes positions along its third axis, sees permuted.
// The operator's tables hold cos/sin of (pos + s) * base^(-2i/D) rounded to the case dtype; ggml
// never reads them, so only cases whose tables are those (Problem::made_from) can be expressed:
// arbitrary tables are UNSUPPORTED.
#include <cmath>

#include "gpu/ggml/mappings.h"
#include "gpu/plans/common.h"

namespace ts::ggml {
namespace {

constexpr double u = kUnitF32;

// How far ggml's cos(theta'), sin(theta') may lie from the case's table entries, for pair i of a
// head of D at position P (a bound on both), by the letter of the Vulkan precision rules:
//  - theta_scale: -2/D rounded (its exponent off by u, so the power by |ln theta_scale| u) and powf's
//    ulp: delta_s = (2 ln(base) / D + 2) u, relative.
//  - pow(s, i) is exp2(i log2 s): log2 within 2^-21 absolute (or 3 ulp), times i; exp2 within
//    3 + 2|i log2 s| ulp (|i log2 s| <= log2 base): relative i delta_s + i 2^-21 ln 2 + (7 ln2 + 2)(3 + 2 log2 base) u.
//  - theta = float(P) * that: two more roundings (P past 2^24 is rounded too).
//  - sin and cos: 2^-11 absolute, which Vulkan states on [-pi, pi] only; ggml passes the raw angle,
//    so this assumes the device reduces it first (the sweep's large positions test the assumption).
//  - the table: the case rounded the exact value once, u_t of the case dtype.
double table_error(double P, int64_t i, int64_t D, double base, double u_t) {
  const double log2_base = std::log2(base);
  const double delta_s = (2 * std::log(base) / double(D) + 2) * u;
  const double delta_pow = double(i) * delta_s + double(i) * 0x1p-21 * M_LN2 + (7 * M_LN2 + 2) * (3 + 2 * log2_base) * u;
  const double theta = P * std::pow(base, -2.0 * double(i) / double(D));
  const double dtheta = theta * (delta_pow + 3 * u);
  return std::min(2.0, dtheta + 0x1p-11 + u_t);
}

// The pair (a, b) of element j of a head: its partner and the pair index.
struct Pairing {
  bool half;  // rope_half: (i, i + D/2); rope_llama: (2i, 2i + 1)
  int64_t partner(int64_t j, int64_t D) const { return half ? (j < D / 2 ? j + D / 2 : j - D / 2) : j ^ 1; }
  int64_t pair(int64_t j, int64_t D) const { return half ? j % (D / 2) : j / 2; }
};

// |err| of each element of x after the rotation: (|x_j| + |x_partner|) (table error + 3u), the 3u
// for the two products and the sum in float32 (|cos'|, |sin'| <= 1 + 2^-11).
Tensor rope_bound(const Problem& p, const Tensor& x, int seq_axis, Pairing pairing) {
  const double pos0 = p.made_from.at("rope_pos"), base = p.made_from.at("rope_base");
  const int64_t D = x.shape[3];
  Tensor b(DType::f64, x.shape);
  double* E = reinterpret_cast<double*>(b.bytes.data());
  const std::vector<double> v = x.values();
  std::vector<int64_t> stride(4, 1);
  for (int k = 2; k >= 0; --k) stride[k] = stride[k + 1] * x.shape[k + 1];
  const double u_t = unit_roundoff(p.dtype);  // the tables: the exact cos/sin rounded to it once
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t j = e % D, s = (e / stride[seq_axis]) % x.shape[seq_axis];
    const int64_t partner = e - j + pairing.partner(j, D);
    const double err = table_error(pos0 + double(s), pairing.pair(j, D), D, base, u_t) + 3 * u;
    E[e] = (std::fabs(v[e]) + std::fabs(v[partner])) * err;
  }
  return b;
}

std::optional<std::string> angles_known(const Problem& p) {
  if (!p.made_from.contains("rope_pos"))
    return "arbitrary cos/sin tables: ggml_rope_ext computes its own angles from positions and a base";
  // Asked anyway, ggml-vulkan accepts the node (supports_op) and then aborts: it has no such
  // pipeline (gpu/ggml/README.md, "Findings"; tests/test_foreign.cpp asks it on purpose).
  if (p.dtype == DType::bf16) return "no bfloat16 ROPE kernel (its supports_op claims one, and the library aborts)";
  return std::nullopt;
}

// The positions, one per row along the sequence: int32 in ggml.
std::optional<Tensor> positions(const Problem& p, int64_t S) {
  const int64_t pos0 = p.made_from.at("rope_pos");
  if (pos0 + S > INT32_MAX) return std::nullopt;
  Tensor t(DType::i32, {S});
  for (int64_t s = 0; s < S; ++s) t.set(s, double(pos0 + s));
  return t;
}

ForeignCall rope_call(int mode, int seq_axis, const Problem& p, Tensor pos) {
  ForeignCall c;
  c.op = "rope";
  c.attrs = {{"mode", {{"i", mode}}}, {"seq_axis", {{"i", seq_axis}}}, {"freq_base", {{"f", double(p.made_from.at("rope_base"))}}}};
  c.inputs.push_back({"pos", std::move(pos)});
  c.ran = mode == 0 ? "ROPE (NORMAL)" : "ROPE (NEOX)";
  return c;
}

// The worker returns each rotated tensor under its input's name, trailing unit dimensions dropped.
Tensor shaped(Tensors& got, const std::string& name, const Shape& shape) {
  auto it = got.find(name);
  if (it == got.end()) throw std::runtime_error(cat(kLibrary, " returned no ", name));
  Tensor t = std::move(it->second);
  if (t.numel() != numel(shape)) throw std::runtime_error(cat(kLibrary, " returned ", name, " as ", t.describe(), ", wanted ", shape_str(shape)));
  t.shape = shape;
  return t;
}

}  // namespace

Mapping rope_llama() {
  return {"rope_llama",
          [](const Problem& p) {
            if (auto why = buffers_only(p, {"xq", "xk", "freqs_cos", "freqs_sin", "xq_out", "xk_out"}, kLibrary)) return Expressed::no(*why);
            if (auto why = angles_known(p)) return Expressed::no(*why);
            auto pos = positions(p, p.inputs.at("xq").shape[1]);
            if (!pos) return Expressed::no("a position past int32 (ggml's positions are int32)");
            ForeignCall c = rope_call(0, 1, p, std::move(*pos));
            c.inputs.push_back({"xq", p.inputs.at("xq")});
            c.inputs.push_back({"xk", p.inputs.at("xk")});
            c.outputs = {{"xq", p.dtype}, {"xk", p.dtype}};
            return Expressed{std::move(c)};
          },
          [](const Problem& p, Tensors got) {
            Tensors out;
            out["xq_out"] = shaped(got, "xq", p.inputs.at("xq").shape);
            out["xk_out"] = shaped(got, "xk", p.inputs.at("xk").shape);
            return out;
          },
          [](const Problem& p) {
            return derived_tolerance(p.dtype, {{"xq_out", rope_bound(p, p.inputs.at("xq"), 1, {false})},
                                               {"xk_out", rope_bound(p, p.inputs.at("xk"), 1, {false})}});
          }};
}

Mapping rope_half() {
  return {"rope_half",
          [](const Problem& p) {
            if (auto why = buffers_only(p, {"x", "cos", "sin", "out"}, kLibrary)) return Expressed::no(*why);
            if (auto why = angles_known(p)) return Expressed::no(*why);
            auto pos = positions(p, p.inputs.at("x").shape[2]);
            if (!pos) return Expressed::no("a position past int32 (ggml's positions are int32)");
            ForeignCall c = rope_call(2, 2, p, std::move(*pos));
            c.inputs.push_back({"x", p.inputs.at("x")});
            c.outputs = {{"x", p.dtype}};
            return Expressed{std::move(c)};
          },
          [](const Problem& p, Tensors got) {
            Tensors out;
            out["out"] = shaped(got, "x", p.inputs.at("x").shape);
            return out;
          },
          [](const Problem& p) { return derived_tolerance(p.dtype, {{"out", rope_bound(p, p.inputs.at("x"), 2, {true})}}); }};
}

}  // namespace ts::ggml
