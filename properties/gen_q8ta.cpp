// Generators of the int8 operators: valid cases across the classes that break int8 kernels (GEMV
// at M = 1 half the time, K ragged against the 4-element word and the tiles, N = 1, zero points at
// -128 and 127, saturation at both ends, bias present and absent, power-of-two scales whose ties
// must round to even bit for bit, every layout and mixed layouts), and invalid cases that break
// exactly one contract rule each.
#include <tuple>

#include "properties/gen_common.h"
#include "properties/generators.h"

namespace ts {
namespace {

// A zero point: 0, an extreme (the int8 ends make |x - zp| reach 255), or anywhere.
int64_t zero_point() {
  return draw::weighted<int64_t>({{2, 0}, {1, -128}, {1, 127}, {2, [] { return draw::in_range<int64_t>(-128, 128); }}});
}

int64_t bad_zero_point() {
  return draw::weighted<int64_t>({{1, [] { return draw::in_range<int64_t>(-1000, -128); }},
                                  {1, [] { return draw::in_range<int64_t>(128, 1001); }}});
}

// The quantization variables both operators share; defaults are left out of the id.
void quantization(Case& c) {
  const std::string scales = draw::weighted<std::string>({{3, "random"}, {2, "pow2"}, {1, "near"}, {1, "decimal"}});
  if (scales != "random") c.set("scales", scales);
  // Small ranges make small values: with power-of-two scales and positive shifts, many exact ties.
  const int64_t range = draw::weighted<int64_t>({{2, 128}, {1, [] { return draw::in_range<int64_t>(1, 5); }},
                                                 {1, [] { return draw::in_range<int64_t>(5, 65); }}});
  if (range != 128) c.set("range", range);
  // -40..-30: output scales so small that the value before the clamp is past int32 (a kernel that
  // converts to an integer before clamping gets the conversion's out-of-range result).
  const int64_t shift = draw::weighted<int64_t>({{6, 0}, {2, [] { return draw::in_range<int64_t>(-6, 0); }},
                                                 {1, [] { return draw::in_range<int64_t>(-40, -29); }},
                                                 {2, [] { return draw::uniform<int64_t>(1, 9); }}});
  if (shift) c.set("out_shift", shift);
  if (int64_t zp = zero_point()) c.set("out_zp", zp);
}

// The ways of breaking what q8ta_linear and q8ta_conv2d share: operand dtypes (the bias given),
// scales, the bias's values and zero points.
void wrong_dtype(Case& c) {
  c.set("bias", "yes");
  if (draw::in_range(0, 2)) {
    const std::string which = draw::element<std::string>("x_dtype", "weight_dtype");
    c.set(which, draw::element<std::string>("int32", "float32"));
  } else {
    const std::string which = draw::element<std::string>("weight_scales_dtype", "bias_dtype");
    c.set(which, draw::element<std::string>("float16", "int8", "int32"));
  }
  c.storage = "buffer";  // packed int8 layouts hold int8 only: the contract speaks first anyway
}

void bad_scale(Case& c) {
  c.set("bad_value", draw::element<std::string>("input_scale_zero", "output_scale_negative", "weight_scale_nan", "weight_scale_huge"));
}

void bad_bias(Case& c) { c.set("bad_value", draw::element<std::string>("bias_nan", "bias_huge")); }

void bad_zero_points(Case& c, std::initializer_list<const char*> names) {
  const std::string which = draw::element_of(std::vector<std::string>(names.begin(), names.end()));
  c.set(which, bad_zero_point());
}

// The rules of an operator with per-output-channel weights (q8ta_linear's N, q8ta_conv2d's C_out)
// broken the same way in both, in the order both list them.
std::vector<gen::Breaker> output_channel_breakers(Case& c, int64_t n) {
  return {{"scales_shape", [&c, n] { c.set("Ns", n + draw::in_range<int64_t>(1, 4)); }},
          {"bias_shape", [&c, n] { c.set("bias", "yes").set("Nb", n + draw::in_range<int64_t>(1, 4)); }},
          {"input_dtypes", [&c] { wrong_dtype(c); }},
          {"scales_valid", [&c] { bad_scale(c); }},
          {"bias_range", [&c] { bad_bias(c); }},
          {"zero_point_range", [&c] { bad_zero_points(c, {"x_zp", "out_zp"}); }}};
}

}  // namespace

rc::Gen<Case> gen_q8ta_linear(const OpDef& op, DType t, bool valid) {
  return draw::exec([o = &op, t, valid] {
    Case c{"q8ta_linear", {}, t, "buffer", 0};
    int64_t M = draw::weighted<int64_t>({{1, 1}, {1, [] { return draw::in_range<int64_t>(2, 18); }}});
    // One case in eleven past 768 columns: over 192 tiles or GEMV workgroups, a grid that folds at
    // kFoldedGridWidth workgroups (Problem::fold_grids); sized apart from RapidCheck's size.
    int64_t N = draw::weighted<int64_t>({{1, 1}, {4, [] { return draw::in_range<int64_t>(2, 18); }}});
    if (draw::one_in(11)) N = draw::uniform<int64_t>(769, 1025);
    // Mostly short and ragged; sometimes whole 16-element blocks; sometimes past the GEMV's 64 x 4.
    const int64_t K = draw::weighted<int64_t>({{4, [] { return draw::in_range<int64_t>(1, 33); }},
                                               {1, [] { return 16 * draw::in_range<int64_t>(1, 9); }},
                                               {1, [] { return draw::uniform<int64_t>(33, 300); }}});
    // coopmat (tensor cores) one case in 5 or 7: a device without them (lavapipe) reports those
    // UNSUPPORTED, and the portable kernels keep most of its sweep.
    std::string impl = M == 1 ? draw::weighted<std::string>({{2, "auto"}, {2, "gemv"}, {2, "tiled"}, {1, "coopmat"}})
                              : draw::weighted<std::string>({{2, "auto"}, {2, "tiled"}, {1, "coopmat"}});
    c.set("M", M).set("K", K).set("N", N).set("impl", impl);
    if (draw::in_range(0, 3) == 0) c.set("bias", "no");
    if (int64_t zp = zero_point()) c.set("x_zp", zp);
    quantization(c);
    // The seed's pairings two times in three (tiled: int8_4w4c, GEMV: int8_4w), else any mix.
    auto storage = [&c](int64_t rows, const std::string& how) {
      const bool gemv = how == "gemv" || (how == "auto" && rows == 1);
      if (draw::in_range(0, 3) != 0) {
        c.storage = gemv ? "buffer;out=int8_4w;x=int8_4w" : "buffer;out=int8_4w4c;x=int8_4w4c";
        return;
      }
      const std::string x = draw::element<std::string>("buffer", "int8_4w", "int8_4w4c");
      const std::string out = draw::element<std::string>("buffer", "int8_4w", "int8_4w4c");
      c.storage = "buffer";  // overrides in name order: the canonical text (Storage::text)
      if (out != "buffer") c.storage += ";out=" + out;
      if (x != "buffer") c.storage += ";x=" + x;
    };
    storage(M, impl);
    if (!valid) {
      std::vector<gen::Breaker> ways({
          {"dims_positive", [&] { c.set(draw::element<std::string>("M", "N"), 0); }},
          {"k_range",
           [&] {
             if (draw::in_range(0, 4)) c.set("K", 0);
             else c.set("M", 1).set("N", 1).set("K", 65537 + draw::in_range<int64_t>(0, 4));  // past the int32-exact length
           }},
          {"weight_k_match", [&] { c.set("Kw", K + draw::in_range<int64_t>(1, 4)); }},
      });
      for (gen::Breaker& b : output_channel_breakers(c, N)) ways.push_back(std::move(b));
      ways.insert(ways.end(), {
          {"gemv_requires_m_1",
           [&] {
             M = draw::in_range<int64_t>(2, 18);
             c.set("M", M).set("impl", "gemv");
             storage(M, "gemv");
           }},
      });
      gen::break_rule(*o, ways);
    }
    c.seed = gen::seed();
    return c;
  });
}

rc::Gen<Case> gen_q8ta_add(const OpDef& op, DType t, bool valid) {
  return draw::exec([o = &op, t, valid] {
    Case c{"q8ta_add", {}, t, "buffer", 0};
    const int rank = draw::in_range(1, 5);
    std::vector<int64_t> dims;
    // W up to 18, or in one case in ten past 768: over 192 words of every layout, a grid that folds at
    // kFoldedGridWidth workgroups (Problem::fold_grids); sized apart from RapidCheck's size.
    for (int i = 0; i < rank; ++i)
      dims.push_back(draw::in_range<int64_t>(1, i == rank - 1 ? 19 : 9));
    if (draw::one_in(10)) dims.back() = draw::uniform<int64_t>(769, 1025);
    auto joined = [](const std::vector<int64_t>& d) {
      std::string s;
      for (int64_t x : d) s += (s.empty() ? "" : ":") + std::to_string(x);
      return s;
    };
    c.set("shape", joined(dims));
    if (int64_t zp = zero_point()) c.set("a_zp", zp);
    if (int64_t zp = zero_point()) c.set("b_zp", zp);
    quantization(c);
    // One layout for all three, or C-packed layouts mixed freely (int8_4w4c with int8_4c1w).
    auto with = [&c](const std::string& a, const std::string& b, const std::string& out) {
      c.storage = a;
      if (b != a) c.storage += ";b=" + b;
      if (out != a) c.storage += ";out=" + out;
    };
    auto c_packed = [] { return draw::element<std::string>("int8_4c1w", "int8_4w4c"); };
    if (draw::in_range(0, 2)) {
      const std::string l = draw::element<std::string>("buffer", "int8_4w", "int8_4c1w", "int8_4w4c");
      with(l, l, l);
    } else {
      const std::string a = c_packed(), b = c_packed(), out = c_packed();
      with(a, b, out);
    }
    if (!valid) {
      gen::break_rule(*o, {
          {"input_rank",
           [&] {
             while (dims.size() < 5) dims.insert(dims.begin(), draw::in_range<int64_t>(1, 3));
             c.set("shape", joined(dims));
           }},
          {"shapes_match",
           [&] {
             const size_t i = size_t(draw::in_range(0, rank));
             dims[i] += draw::in_range<int64_t>(1, 4);
             c.set("bshape", joined(dims));
           }},
          {"input_dtypes",
           [&] {
             const std::string which = draw::element<std::string>("a_dtype", "b_dtype");
             c.set(which, draw::element<std::string>("int32", "float32", "float16"));
             c.storage = "buffer";  // packed int8 layouts hold int8 only: the contract speaks first anyway
           }},
          {"scales_valid", [&] { c.set("bad_value", draw::element<std::string>("a_scale_zero", "b_scale_negative", "output_scale_huge")); }},
          {"zero_point_range", [&] { bad_zero_points(c, {"a_zp", "b_zp", "out_zp"}); }},
          {"packed_dim_compatible",
           [&] {  // two packed dimensions (or block sizes) among the three tensors
             const std::string w = draw::element<std::string>("int8_4w", "buffer");
             const std::string ch = c_packed();
             const std::string other = w == "int8_4w" ? "buffer" : "int8_4w";
             switch (draw::in_range(0, 4)) {
               case 0: with(w, ch, ch); break;
               case 1: with(ch, w, ch); break;
               case 2: with(ch, ch, w); break;
               default: with(w, other, w);
             }
           }},
      });
    }
    c.seed = gen::seed();
    return c;
  });
}

// q8ta_conv2d: kernels 1x1, 3x3, 5x5, 1x7, 7x1 (sometimes any up to 4x4); strides 1-3, dilations
// 1-2, paddings 0-3 on each axis independently of the kernel; groups 1, 2 and depthwise (channel
// multiplier 1 or 2); channels around multiples of 4 (3, 4, 5, 8, 13); spatial sizes from the
// smallest the window allows (1x1 outputs) up, now and then past 768 output columns; both packed
// layouts (sometimes a buffer) on x and out independently; every impl that applies.
rc::Gen<Case> gen_q8ta_conv2d(const OpDef& op, DType t, bool valid) {
  return draw::exec([o = &op, t, valid] {
    Case c{"q8ta_conv2d", {}, t, "buffer", 0};
    using Kernel = std::pair<int64_t, int64_t>;
    const Kernel k = draw::weighted<Kernel>(
        {{3, [] { return draw::element_of(std::vector<Kernel>{{1, 1}, {3, 3}, {5, 5}, {1, 7}, {7, 1}}); }},
         {1, [] {
            const int64_t kh = draw::in_range<int64_t>(1, 5);
            return Kernel(kh, draw::in_range<int64_t>(1, 5));
          }}});
    const auto channels = [] {
      return draw::weighted<int64_t>({{3, [] { return draw::element<int64_t>(3, 4, 5, 8, 13); }},
                                      {1, [] { return draw::in_range<int64_t>(1, 17); }}});
    };
    const int mode = draw::weighted<int>({{3, 0}, {1, 1}, {2, 2}});  // groups 1, 2, depthwise
    int64_t Ci = 0, Co = 0, groups = 1;
    if (mode == 0) {
      // Half the time a multiple of 4, where im2col applies.
      Ci = draw::boolean() ? 4 * draw::element<int64_t>(1, 2, 3) : channels();
      Co = channels();
    } else if (mode == 1) {
      groups = 2;
      Ci = 2 * draw::element<int64_t>(1, 2, 3, 4, 6);
      Co = 2 * draw::element<int64_t>(1, 2, 3, 4, 6);
    } else {
      Ci = groups = channels();
      Co = Ci * draw::weighted<int64_t>({{3, 1}, {1, 2}});
    }
    auto small = [](int64_t lo, int64_t hi, int64_t w) {
      return draw::weighted<int64_t>({{uint64_t(w), lo}, {1, [=] { return draw::in_range(lo, hi + 1); }}});
    };
    const int64_t sh = small(1, 3, 2), sw = small(1, 3, 2), dh = small(1, 2, 3), dw = small(1, 2, 3);
    const int64_t ph = small(0, 3, 1), pw = small(0, 3, 1);
    // The smallest input the window allows (one output), then a few more rows.
    auto extent = [](int64_t kk, int64_t s, int64_t p, int64_t d) {
      const int64_t least = std::max<int64_t>(1, d * (kk - 1) + 1 - 2 * p);
      return least + draw::weighted<int64_t>({{1, [=] { return draw::in_range<int64_t>(0, s); }},
                                              {3, [] { return draw::in_range<int64_t>(0, 10); }}});
    };
    const int64_t H = extent(k.first, sh, ph, dh);
    int64_t W = extent(k.second, sw, pw, dw);
    // One case in ten past 768 output columns: over 192 texels of out in every layout, a grid that
    // folds at kFoldedGridWidth workgroups (Problem::fold_grids) in every impl, as q8ta_linear's and
    // q8ta_add's wide cases; sized apart from RapidCheck's size.
    if (draw::one_in(10)) W += sw * draw::uniform<int64_t>(768, 1025);
    c.set("C_in", Ci).set("C_out", Co).set("H", H).set("W", W).set("KH", k.first).set("KW", k.second);
    if (draw::in_range(0, 5) == 0) c.set("N", 2);
    if (groups != 1) c.set("groups", groups);
    for (auto [name, v, dflt] : {std::tuple{"sh", sh, 1}, {"sw", sw, 1}, {"ph", ph, 0}, {"pw", pw, 0}, {"dh", dh, 1}, {"dw", dw, 1}})
      if (v != dflt) c.set(name, v);
    const bool im2col = groups == 1 && Ci % 4 == 0;
    c.set("impl", im2col ? draw::element<std::string>("auto", "general", "im2col") : draw::element<std::string>("auto", "general"));
    if (draw::in_range(0, 4) == 0) c.set("bias", "no");
    if (int64_t zp = zero_point()) c.set("x_zp", zp);
    quantization(c);
    // x and out packed along C (the seed's layouts) each on its own, mostly; both plain buffers one
    // time in eight; one of them a buffer now and then.
    auto packed = [] { return draw::element<std::string>("int8_4c1w", "int8_4w4c"); };
    std::string x = packed(), out = packed();
    switch (draw::weighted<int>({{12, 0}, {2, 1}, {1, 2}, {1, 3}})) {
      case 1: x = out = "buffer"; break;
      case 2: x = "buffer"; break;
      case 3: out = "buffer"; break;
      default: break;
    }
    c.storage = "buffer";  // overrides in name order: the canonical text (Storage::text)
    if (out != "buffer") c.storage += ";out=" + out;
    if (x != "buffer") c.storage += ";x=" + x;
    if (!valid) {
      const int64_t g = draw::in_range<int64_t>(2, 5);
      auto multiple = [&] { return g * draw::in_range<int64_t>(1, 4); };  // of the g groups
      std::vector<gen::Breaker> ways({
          {"dims_positive", [&] { c.set(draw::element<std::string>("N", "C_in", "C_out", "H", "W", "KH", "KW", "groups"), 0); }},
          {"stride_dilation_positive", [&] { c.set(draw::element<std::string>("sh", "sw", "dh", "dw"), 0); }},
          {"padding_nonnegative",
           [&] {
             const std::string which = draw::element<std::string>("ph", "pw");
             c.set(which, -draw::in_range<int64_t>(1, 4));
           }},
          {"cin_multiple_of_groups",
           [&] {
             const int64_t ci = multiple();
             const int64_t off = draw::in_range<int64_t>(1, g);
             c.set("groups", g).set("C_in", ci + off).set("C_out", multiple());
             c.set("impl", "general");
           }},
          {"cout_multiple_of_groups",
           [&] {
             const int64_t ci = multiple(), co = multiple();
             c.set("groups", g).set("C_in", ci).set("C_out", co + draw::in_range<int64_t>(1, g));
             c.set("impl", "general");
           }},
          {"weight_shape", [&] { c.set("Cw", (groups >= 1 ? Ci / groups : Ci) + draw::in_range<int64_t>(1, 4)); }},
          {"k_range",
           [&] {  // past the int32-exact reduction length
             c = Case{"q8ta_conv2d", {}, t, c.storage, 0};
             c.set("C_in", 7282 + draw::in_range<int64_t>(0, 4)).set("C_out", draw::in_range<int64_t>(1, 3)).set("H", 3).set("W", 3);
             c.set("KH", 3).set("KW", 3).set("ph", 1).set("pw", 1).set("impl", "general");
           }},
          {"output_size_positive",
           [&] {
             const bool h = draw::boolean();
             const int64_t kk = draw::in_range<int64_t>(2, 8);
             c.set(h ? "KH" : "KW", kk).set(h ? "H" : "W", draw::in_range<int64_t>(1, kk)).set(h ? "ph" : "pw", 0).set(h ? "dh" : "dw", 1);
           }},
      });
      for (gen::Breaker& b : output_channel_breakers(c, Co)) ways.push_back(std::move(b));
      ways.insert(ways.end(), {
          {"im2col_requires_groups_1_and_cin_multiple_of_4",
           [&] {
             c.set("impl", "im2col");
             if (draw::boolean()) {
               c.set("groups", 2).set("C_in", 2 * draw::in_range<int64_t>(1, 5)).set("C_out", 2 * draw::in_range<int64_t>(1, 5));
             } else {
               const int64_t blocks = draw::in_range<int64_t>(0, 4);
               c.set("groups", 1).set("C_in", 4 * blocks + draw::in_range<int64_t>(1, 4));
             }
           }},
      });
      gen::break_rule(*o, ways);
    }
    c.seed = gen::seed();
    return c;
  });
}

}  // namespace ts
