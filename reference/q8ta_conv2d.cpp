// q8ta_conv2d: int8 2-D convolution with per-output-channel weight scales, SPEC "q8ta_conv2d".
//
// acc[n,co,oh,ow] = sum_{ci,kh,kw} (x[n, g*Cg+ci, oh*sh-ph+kh*dh, ow*sw-pw+kw*dw] - x_zp) * weight[co,ci,kh,kw]
// exactly in integers (padded positions hold x_zp: they add 0), g = co / (C_out/groups), Cg =
// C_in/groups, then requantized like q8ta_linear (q8ta_common: accumulator_term, one bound for both).
//
// Implementations. impl=general: one invocation per output texel, a sliding window over the group's
// Cg x KH x KW taps. impl=im2col (groups = 1, C_in % 4 == 0): col[m, k] = the tap k = (ci, kh, kw)
// of output pixel m = (n, oh, ow), x_zp where it is padding, into an int8 scratch buffer, then the
// q8ta_linear tile code (one include) multiplies col [M, K] by weight viewed as [C_out, K]. The
// reduction order (ci, kh, kw) is weight's own, so the GEMM reads weight as q8ta_linear does.
// impl=auto picks im2col exactly when its rule holds (the seed's auto-selection).
//
// Layouts: x and out are int8_4c1w or int8_4w4c (packed along C, the seed's), or a plain int8
// buffer (the logical form goldens hold), mixed freely between x and out: kernels go through the
// layout accessors. weight, weight_scales and bias are buffers.
#include <algorithm>
#include <cmath>

#include "reference/common.h"
#include "reference/ops.h"
#include "reference/q8ta_common.h"
#include "reference/q8ta_conv2d.h"

namespace ts {

namespace q8ta {

namespace {

constexpr int64_t kMaxGeom = 1024;  // strides, dilations, paddings: enough for any model, no overflow

bool pair_param(const Params& p, const char* key, int64_t dflt, int64_t& a, int64_t& b) {
  auto it = p.find(key);
  if (it == p.end()) {
    a = b = dflt;
    return true;
  }
  if (!it->is_array() || it->size() != 2 || !(*it)[0].is_number_integer() || !(*it)[1].is_number_integer()) return false;
  a = (*it)[0].get<int64_t>();
  b = (*it)[1].get<int64_t>();
  return std::abs(a) <= kMaxGeom && std::abs(b) <= kMaxGeom;
}

}  // namespace

Geom geometry(const Problem& p) {
  Geom g;
  const Shape &x = p.inputs.at("x").shape, &w = p.inputs.at("weight").shape;
  g.N = x[0], g.C_in = x[1], g.H = x[2], g.W = x[3];
  g.C_out = w[0], g.Cg = w[1], g.KH = w[2], g.KW = w[3];
  g.ok = pair_param(p.params, "stride", 1, g.sh, g.sw) && pair_param(p.params, "padding", 0, g.ph, g.pw) &&
         pair_param(p.params, "dilation", 1, g.dh, g.dw);
  auto it = p.params.find("groups");
  if (it != p.params.end()) {
    g.ok = g.ok && it->is_number_integer() && std::abs(it->get<int64_t>()) <= kMaxDim;
    if (g.ok) g.groups = it->get<int64_t>();
  }
  return g;
}

namespace {

bool im2col_applies(const Geom& g) { return g.groups == 1 && g.C_in % 4 == 0; }

}  // namespace

bool uses_im2col(const Problem& p, const Geom& g) {
  const std::string impl = p.params.value("impl", "auto");
  return impl == "im2col" || (impl == "auto" && im2col_applies(g));
}

}  // namespace q8ta

namespace {

using namespace q8ta;

// |x - zp| <= 255 and |w| <= 128: a reduction of Cg KH KW terms stays below 32640 * 65536 < 2^31.
constexpr int64_t kMaxK = 65536;

Problem make(const Case& c) {
  const int64_t N = c.get("N", 1), C_in = c.get("C_in"), H = c.get("H"), W = c.get("W"), C_out = c.get("C_out");
  const int64_t KH = c.get("KH"), KW = c.get("KW"), groups = c.get("groups", 1);
  const int64_t Cg = c.get("Cw", groups >= 1 ? C_in / groups : C_in);
  Problem p = accumulator_problem(c, {N, C_in, H, W}, {C_out, Cg, KH, KW}, Cg * KH * KW, c.get("Ns", C_out), c.get("Nb", C_out));
  p.params["stride"] = {c.get("sh", 1), c.get("sw", 1)};
  p.params["padding"] = {c.get("ph", 0), c.get("pw", 0)};
  p.params["dilation"] = {c.get("dh", 1), c.get("dw", 1)};
  p.params["groups"] = groups;
  p.params["impl"] = c.word("impl", "auto");
  return p;
}

std::optional<Violation> validate(const Problem& p) {
  Contract c("q8ta_conv2d");
  if (!accumulator_inputs(c, p, 4)) return c.result();
  const bool bias = p.inputs.count("bias") > 0;
  const Geom g = geometry(p);
  // Not a listed rule: no case id can break it (like inputs_present), only a golden's params.
  c.require(g.ok, "params_valid", "params.stride, padding and dilation (", p.params.value("stride", Params()).dump(), ", ",
            p.params.value("padding", Params()).dump(), ", ", p.params.value("dilation", Params()).dump(),
            ") must be [h, w] integer pairs of magnitude at most ", kMaxGeom, ", params.groups an integer");
  if (c.failed()) return c.result();
  c.require(g.N >= 1 && g.C_in >= 1 && g.H >= 1 && g.W >= 1 && g.C_out >= 1 && g.KH >= 1 && g.KW >= 1 && g.groups >= 1,
            "dims_positive", "N, C_in, H, W (x ", shape_str(p.inputs.at("x").shape), "), C_out, KH, KW (weight ",
            shape_str(p.inputs.at("weight").shape), ") and groups (", g.groups, ") must be at least 1");
  c.require(g.sh >= 1 && g.sw >= 1 && g.dh >= 1 && g.dw >= 1, "stride_dilation_positive", "stride [", g.sh, ", ", g.sw,
            "] and dilation [", g.dh, ", ", g.dw, "] must be at least 1");
  c.require(g.ph >= 0 && g.pw >= 0, "padding_nonnegative", "padding [", g.ph, ", ", g.pw, "] must be at least 0");
  if (c.failed()) return c.result();
  c.require(g.C_in % g.groups == 0, "cin_multiple_of_groups", "C_in (", g.C_in, ") must be a multiple of groups (", g.groups, ")");
  c.require(g.C_out % g.groups == 0, "cout_multiple_of_groups", "C_out (", g.C_out, ") must be a multiple of groups (", g.groups,
            ")");
  if (c.failed()) return c.result();
  c.require(g.Cg == g.C_in / g.groups, "weight_shape", "weight ", shape_str(p.inputs.at("weight").shape),
            " must be [C_out, C_in/groups, KH, KW] with C_in/groups = ", g.C_in / g.groups);
  c.require(g.K() <= kMaxK, "k_range", "C_in/groups * KH * KW (", g.K(), ") must be at most ", kMaxK,
            " (an int32 accumulator is exact)");
  c.require(g.OH() >= 1 && g.OW() >= 1, "output_size_positive", "output size OH x OW (", g.OH(), " x ", g.OW(),
            ") must be at least 1 x 1: H ", g.H, ", W ", g.W, ", kernel ", g.KH, "x", g.KW, ", stride [", g.sh, ", ", g.sw,
            "], padding [", g.ph, ", ", g.pw, "], dilation [", g.dh, ", ", g.dw, "]");
  const Shape& s = p.inputs.at("weight_scales").shape;
  c.require(s == Shape{g.C_out}, "scales_shape", "weight_scales ", shape_str(s), " must be [C_out] = [", g.C_out, "]");
  if (bias) {
    const Shape& b = p.inputs.at("bias").shape;
    c.require(b == Shape{g.C_out}, "bias_shape", "bias ", shape_str(b), " must be [C_out] = [", g.C_out, "]");
  }
  if (c.failed()) return c.result();
  require_scale(c, p.params, "input_scale");
  require_scale(c, p.params, "output_scale");
  require_scale_values(c, p.inputs.at("weight_scales"), "weight_scales");
  require_zero_point(c, p.params, "input_zero_point");
  require_zero_point(c, p.params, "output_zero_point");
  if (bias) {
    const Tensor& b = p.inputs.at("bias");
    for (int64_t n = 0; n < g.C_out && !c.failed(); ++n)
      c.require(std::isfinite(b.get(n)) && std::fabs(b.get(n)) <= kMaxBias, "bias_range", "bias[", n, "] (",
                num(b.get(n)), ") must be finite with magnitude at most 2^32");
  }
  const Params::const_iterator impl = p.params.find("impl");
  const bool known = impl == p.params.end() ||
                     (impl->is_string() && (*impl == "auto" || *impl == "general" || *impl == "im2col"));
  c.require(known, "params_valid", "params.impl (", impl == p.params.end() ? "" : impl->dump(),
            ") must be \"auto\", \"general\" or \"im2col\"");
  c.require(!(known && impl != p.params.end() && *impl == "im2col" && !im2col_applies(g)),
            "im2col_requires_groups_1_and_cin_multiple_of_4", "impl=im2col needs groups = 1 and C_in % 4 == 0: groups (",
            g.groups, "), C_in (", g.C_in, ")");
  return c.result();
}

}  // namespace

namespace q8ta {

Requant conv2d_requant(const Problem& p) {
  const Geom g = geometry(p);
  const Tensor &x = p.inputs.at("x"), &w = p.inputs.at("weight"), &wsc = p.inputs.at("weight_scales");
  auto bias = p.inputs.find("bias");
  const double is = scale_param(p.params, "input_scale"), os = scale_param(p.params, "output_scale");
  const int64_t xzp = zero_point_param(p.params, "input_zero_point");
  const int8_t* xd = reinterpret_cast<const int8_t*>(x.bytes.data());
  const int8_t* wd = reinterpret_cast<const int8_t*>(w.bytes.data());
  const int64_t OH = g.OH(), OW = g.OW(), Cog = g.C_out / g.groups;
  Requant r;
  r.zp = zero_point_param(p.params, "output_zero_point");
  r.v.resize(size_t(g.N * g.C_out * OH * OW));
  r.d.resize(r.v.size());
  size_t i = 0;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t co = 0; co < g.C_out; ++co) {
      const double ws = wsc.get(co), b = bias == p.inputs.end() ? 0.0 : bias->second.get(co);
      const int64_t c0 = co / Cog * g.Cg;
      const int8_t* wco = wd + co * g.K();
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow, ++i) {
          int64_t acc = 0;  // exact: |acc| < 2^31 (k_range); padding (x = x_zp) adds 0
          for (int64_t ci = 0; ci < g.Cg; ++ci)
            for (int64_t kh = 0; kh < g.KH; ++kh) {
              const int64_t ih = oh * g.sh - g.ph + kh * g.dh;
              if (ih < 0 || ih >= g.H) continue;
              const int8_t* xrow = xd + ((n * g.C_in + c0 + ci) * g.H + ih) * g.W;
              const int8_t* wrow = wco + (ci * g.KH + kh) * g.KW;
              for (int64_t kw = 0; kw < g.KW; ++kw) {
                const int64_t iw = ow * g.sw - g.pw + kw * g.dw;
                if (iw >= 0 && iw < g.W) acc += (int64_t(xrow[iw]) - xzp) * int64_t(wrow[kw]);
              }
            }
          accumulator_term(double(acc), is, ws, b, os, r.v[i], r.d[i]);
        }
    }
  return r;
}

}  // namespace q8ta

namespace {

Tensors reference(const Problem& p) { return int8_output("out", geometry(p).out(), conv2d_requant(p)); }

// x and out in one packed layout, or x in the first and out in the second (weight and the scales
// are always buffers: the default layout of the storage text).
const char* const k4c = "buffer;out=int8_4c1w;x=int8_4c1w";
const char* const k4w4c = "buffer;out=int8_4w4c;x=int8_4w4c";
const char* const k4w4c_4c = "buffer;out=int8_4c1w;x=int8_4w4c";
const char* const k4c_4w4c = "buffer;out=int8_4w4c;x=int8_4c1w";

std::vector<Case> edge_cases(DType t) {
  if (t != DType::i8) return {};
  // conv(C_in, C_out, H, W, KH, KW): defaults stride 1, no padding, dilation 1, groups 1.
  auto mk = [t](int64_t Ci, int64_t Co, int64_t H, int64_t W, int64_t KH, int64_t KW, const char* storage) {
    Case c{"q8ta_conv2d", {}, t, Storage::parse(storage).text(),
           uint64_t(5000 + Ci * 7 + Co * 11 + H * 13 + W * 17 + KH * 19 + KW * 23)};
    c.set("C_in", Ci).set("C_out", Co).set("H", H).set("W", W).set("KH", KH).set("KW", KW);
    return c;
  };
  auto with_seed = [](Case c, uint64_t seed) {
    c.seed = seed;
    return c;
  };
  std::vector<Case> v = {
      mk(1, 1, 1, 1, 1, 1, k4c),                                                        // the smallest: 1x1 output
      mk(4, 4, 3, 3, 3, 3, k4c).set("impl", "im2col"),                                  // 3x3 -> one output pixel
      mk(3, 5, 5, 6, 3, 3, k4w4c).set("ph", 1).set("pw", 1).set("x_zp", -128).set("out_zp", 127),  // ragged C, padding
      mk(8, 8, 7, 7, 3, 3, k4c).set("ph", 1).set("pw", 1).set("x_zp", 77).set("impl", "general"),  // padding holds x_zp
      mk(8, 8, 7, 7, 3, 3, k4c).set("ph", 1).set("pw", 1).set("x_zp", 77).set("impl", "im2col"),
      mk(5, 5, 6, 7, 3, 3, k4w4c).set("groups", 5).set("ph", 1).set("pw", 1).set("x_zp", 9),    // depthwise
      mk(4, 8, 5, 5, 3, 3, k4c_4w4c).set("groups", 4).set("sh", 2).set("sw", 2),  // channel multiplier 2
      mk(8, 6, 9, 9, 3, 3, k4w4c).set("groups", 2).set("dh", 2).set("dw", 2).set("ph", 2),         // grouped, dilated
      mk(4, 13, 8, 11, 1, 7, k4w4c_4c).set("pw", 3).set("sw", 3),               // 1x7
      mk(13, 4, 11, 8, 7, 1, k4c).set("ph", 3).set("sh", 2).set("impl", "general"),              // 7x1
      mk(4, 4, 9, 9, 5, 5, k4c).set("ph", 3).set("pw", 0).set("sh", 3).set("sw", 2).set("x_zp", -7),  // padding vs kernel
      mk(3, 4, 5, 5, 3, 3, "buffer"),                                                    // plain buffers
      // Exact ties (both parities) with odd zero points; just off ties inside the float32 bound.
      with_seed(mk(4, 4, 4, 4, 3, 3, k4c).set("ph", 1).set("pw", 1).set("scales", "pow2").set("range", 1)
                    .set("out_shift", 7).set("x_zp", 3).set("out_zp", -1), 1),
      with_seed(mk(5, 5, 4, 4, 3, 3, k4w4c).set("groups", 5).set("scales", "pow2").set("range", 1).set("out_shift", 5)
                    .set("out_zp", 1), 1),
      mk(4, 8, 5, 5, 3, 3, k4c).set("scales", "near").set("range", 2).set("out_shift", 6),
      mk(8, 4, 6, 6, 3, 3, k4w4c).set("out_shift", -4).set("x_zp", 127),                 // saturates at both ends
      mk(4, 4, 6, 5, 2, 2, k4c).set("N", 2).set("bias", "no"),                            // batch, no bias
      // The seed's stress shapes, at small spatial sizes: 512 channels at 7x7 (3x3 kernel) and
      // 1024 -> 2048 channels, 1x1, stride 2.
      mk(512, 512, 7, 7, 3, 3, k4c).set("ph", 1).set("pw", 1),
      mk(1024, 2048, 4, 4, 1, 1, k4w4c).set("sh", 2).set("sw", 2),
  };
  // Invalid: each rule broken on its own, mostly in buffers (rules do not depend on the storage,
  // and goldens hold logical tensors); one packed, rejected before anything is packed.
  v.push_back(mk(0, 4, 3, 3, 1, 1, k4c));
  v.push_back(mk(4, 4, 3, 3, 1, 1, "buffer").set("sh", 0));
  v.push_back(mk(4, 4, 3, 3, 1, 1, "buffer").set("pw", -1));
  v.push_back(mk(6, 4, 3, 3, 1, 1, "buffer").set("groups", 4));
  v.push_back(mk(4, 6, 3, 3, 1, 1, "buffer").set("groups", 4));
  v.push_back(mk(4, 4, 3, 3, 1, 1, "buffer").set("Cw", 3));
  v.push_back(mk(4, 4, 3, 3, 5, 1, "buffer"));
  v.push_back(mk(4, 4, 3, 3, 1, 1, "buffer").set("Ns", 5));
  v.push_back(mk(4, 4, 3, 3, 1, 1, "buffer").set("Nb", 3));
  v.push_back(mk(4, 4, 3, 3, 1, 1, "buffer").set("x_dtype", "int32"));
  v.push_back(mk(4, 4, 3, 3, 1, 1, "buffer").set("bad_value", "output_scale_negative"));
  v.push_back(mk(4, 4, 3, 3, 1, 1, "buffer").set("x_zp", 128));
  v.push_back(mk(4, 4, 3, 3, 1, 1, "buffer").set("bad_value", "bias_nan"));
  v.push_back(mk(6, 6, 3, 3, 1, 1, "buffer").set("impl", "im2col"));
  v.push_back(mk(4, 4, 3, 3, 1, 1, "buffer").set("groups", 2).set("impl", "im2col"));
  v.push_back(mk(1, 1, 3, 3, 257, 257, "buffer"));
  return v;
}

// x [1, 4, 2048, 2049]: 16,785,408 elements; a 1x1 conv to one channel (impl=general) keeps every
// pixel, and out in int8_4c1w is 4,196,352 texels of one channel, one invocation each: past 65,535
// workgroups of 64, with a quarter of the outputs (and reference work) that C_out = 4 would take.
Case large_case() {
  Case c{"q8ta_conv2d", {}, DType::i8, k4c, 7};
  return c.set("C_in", 4).set("C_out", 1).set("H", 2048).set("W", 2049).set("KH", 1).set("KW", 1).set("impl", "general");
}

std::vector<Var> vars() {
  std::vector<Var> v = {
      int_var("N", 0, kMaxDim, "1", "batch"),
      int_var("C_in", 0, kMaxDim, "", "input channels"),
      int_var("H", 0, kMaxDim, "", "input height"),
      int_var("W", 0, kMaxDim, "", "input width"),
      int_var("C_out", 0, kMaxDim, "", "output channels"),
      int_var("KH", 0, kMaxDim, "", "kernel height"),
      int_var("KW", 0, kMaxDim, "", "kernel width"),
      int_var("sh", 0, kMaxGeom, "1", "stride along H"),
      int_var("sw", 0, kMaxGeom, "1", "stride along W"),
      int_var("ph", -kMaxGeom, kMaxGeom, "0", "padding along H (both sides; holds input_zero_point)"),
      int_var("pw", -kMaxGeom, kMaxGeom, "0", "padding along W (both sides)"),
      int_var("dh", 0, kMaxGeom, "1", "dilation along H"),
      int_var("dw", 0, kMaxGeom, "1", "dilation along W"),
      int_var("groups", 0, kMaxDim, "1", "groups (C_in = groups = C_out: depthwise)"),
      word_var("impl", {"auto", "general", "im2col"}, "auto",
               "general: sliding window, any groups; im2col: groups = 1 and C_in % 4 == 0, columns then the int8 "
               "GEMM; auto: im2col exactly where it applies")};
  for (Var& a : accumulator_vars(int_var("Cw", 0, kMaxDim, "C_in/groups", "weight's second dimension"), "C_out"))
    v.push_back(std::move(a));
  return v;
}

// q8ta_conv2d's shape classes, from the case's vars (defaults as make() takes them).
const char* const kConvClasses[] = {"depthwise (groups = C_in)", "grouped (1 < groups < C_in)", "strided (stride > 1)",
                                    "dilated (dilation > 1)", "padded with non-zero zero point", "1x1 output",
                                    "ragged channel block (C % 4 != 0)", "impl=general", "impl=im2col", "impl=auto",
                                    "kernel 1x1", "kernel 3x3", "kernel 5x5", "kernel 1x7", "kernel 7x1", "batch > 1"};

void conv2d_classes(const Case& c, std::vector<std::string>& out) {
  const int64_t Ci = c.get("C_in"), Co = c.get("C_out"), g = c.get("groups", 1), KH = c.get("KH"), KW = c.get("KW");
  const int64_t sh = c.get("sh", 1), sw = c.get("sw", 1), ph = c.get("ph", 0), pw = c.get("pw", 0);
  const int64_t dh = c.get("dh", 1), dw = c.get("dw", 1), H = c.get("H"), W = c.get("W");
  if (g > 1 && g == Ci) out.push_back(kConvClasses[0]);
  if (g > 1 && g < Ci) out.push_back(kConvClasses[1]);
  if (sh > 1 || sw > 1) out.push_back(kConvClasses[2]);
  if (dh > 1 || dw > 1) out.push_back(kConvClasses[3]);
  if ((ph > 0 || pw > 0) && c.get("x_zp", 0) != 0) out.push_back(kConvClasses[4]);
  if ((H + 2 * ph - dh * (KH - 1) - 1) / sh == 0 && (W + 2 * pw - dw * (KW - 1) - 1) / sw == 0) out.push_back(kConvClasses[5]);
  if (Ci % 4 != 0 || Co % 4 != 0) out.push_back(kConvClasses[6]);
  const std::string impl = c.word("impl", "auto");
  const bool im2col = impl == "im2col" || (impl == "auto" && g == 1 && Ci % 4 == 0);
  out.push_back(im2col ? kConvClasses[8] : kConvClasses[7]);
  if (impl == "auto") out.push_back(kConvClasses[9]);
  const std::string k = cat("kernel ", KH, "x", KW);
  if (std::find(std::begin(kConvClasses), std::end(kConvClasses), k) != std::end(kConvClasses)) out.push_back(k);
  if (c.get("N", 1) > 1) out.push_back(kConvClasses[15]);
}

std::vector<std::string> coverage(const Expected& e) {
  std::vector<std::string> out;
  conv2d_classes(e.c, out);
  for (auto& cls : q8ta::classes(e)) out.push_back(cls);
  return out;
}

std::vector<std::string> expected_coverage(const OpDef& op) {
  std::vector<std::string> out(std::begin(kConvClasses), std::end(kConvClasses));
  for (auto& cls : q8ta::expected_classes(op)) out.push_back(cls);
  return out;
}

}  // namespace

OpContract q8ta_conv2d_contract() {
  const std::vector<std::string> layouts = {"buffer", "int8_4c1w", "int8_4w4c"};
  return {
      "q8ta_conv2d",
      "int8 2-D convolution, per-output-channel weight scales (sliding window, and im2col + GEMM)",
      {"x", "weight", "weight_scales", "bias"},
      {"out"},
      {{"input_rank", "x [N,C_in,H,W] and weight [C_out,C_in/groups,KH,KW] have rank 4, weight_scales and bias rank 1"},
       {"input_dtypes", "x and weight are int8, weight_scales and bias float32"},
       {"dims_positive", "N, C_in, H, W, C_out, KH, KW and groups are at least 1"},
       {"stride_dilation_positive", "strides and dilations are at least 1"},
       {"padding_nonnegative", "paddings are at least 0"},
       {"cin_multiple_of_groups", "C_in % groups == 0"},
       {"cout_multiple_of_groups", "C_out % groups == 0"},
       {"weight_shape", "weight is [C_out, C_in/groups, KH, KW]"},
       {"k_range", "C_in/groups * KH * KW <= 65536 (the int32 accumulator is exact)"},
       {"output_size_positive", "OH = floor((H + 2ph - dh(KH-1) - 1)/sh) + 1 >= 1, likewise OW"},
       {"scales_shape", "weight_scales is [C_out]"},
       {"bias_shape", "bias, when given, is [C_out]"},
       {"scales_valid", "input_scale, output_scale and every weight_scales[c] are numbers in [2^-32, 2^32] (kernels use them rounded to float32)"},
       {"zero_point_range", "input_zero_point and output_zero_point are integers in [-128, 127]"},
       {"bias_range", "every bias[c] is finite with magnitude at most 2^32"},
       {"im2col_requires_groups_1_and_cin_multiple_of_4", "impl=im2col only with groups = 1 and C_in % 4 == 0"}},
      {DType::i8},
      make, validate, reference, edge_cases, gen_q8ta_conv2d, large_case,
      vars(),
      {{"x", layouts}, {"out", layouts}},
      coverage,
      expected_coverage};
}

}  // namespace ts
