// Generators of the RoPE family: valid cases across the shape classes that break kernels, and
// invalid cases that break exactly one contract rule each (the rule is itself generated, by its id).
// Every case draws a layout per tensor (gen::storage), mixed layouts as often as uniform ones.
#include "properties/gen_common.h"
#include "properties/generators.h"

namespace ts {

rc::Gen<Case> gen_rope_llama(const OpDef& op, DType t, bool valid) {
  return draw::exec([o = &op, t, valid] {
    Case c{"rope_llama", {}, t, "buffer", 0};
    int64_t Hkv = draw::in_range<int64_t>(1, 9);
    int64_t ratio = draw::element<int64_t>(1, 2, 4, 8, 3);  // GQA ratios; Hkv = 1 is MQA
    int64_t D = gen::head_dim();
    c.set("B", draw::in_range<int64_t>(1, 3)).set("S", gen::seq_len()).set("Hq", Hkv * ratio).set("Hkv", Hkv);
    c.set("D", D);
    if (int64_t pos = gen::position()) c.set("pos", pos);
    gen::tables(c);
    c.storage = gen::storage(*o);
    if (!valid) {
      gen::break_rule(*o, {
          {"head_dim_even", [&] { c.set("D", D + 1); }},  // freqs follow D/2: only head_dim_even breaks
          {"head_dim_at_least_2", [&] { c.set("D", 0); }},
          {"q_k_batch_match", [&] { c.set("Bk", c.get("B") + draw::in_range<int64_t>(1, 3)); }},
          {"q_k_seq_match", [&] { c.set("Sk", c.get("S") + draw::in_range<int64_t>(1, 3)); }},
          {"q_k_head_dim_match", [&] { c.set("Dk", D + 2 * draw::in_range<int64_t>(1, 3)); }},
          {"freqs_shape",
           [&] {
             const std::string which = draw::element<std::string>("Sf", "Df");
             c.set(which, draw::in_range<int64_t>(D / 2 + 1, D + 2));
           }},
          {"dtypes_equal",
           [&] { c.set(draw::element<std::string>("xk_dtype", "freqs_cos_dtype", "freqs_sin_dtype"), gen::other_dtype(t)); }},
      });
    }
    c.seed = gen::seed();
    return c;
  });
}

rc::Gen<Case> gen_rope_cis(const OpDef& op, DType t, bool valid) {
  return draw::exec([o = &op, t, valid] {
    Case c{"rope_cis", {}, t, "buffer", 0};
    int64_t C = gen::head_dim();
    const int64_t N = gen::packed_dim(1, 64);
    const std::string fshape = draw::element<std::string>("n_c2_2", "1_n_c2_2", "nc2_2");
    c.set("B", draw::in_range<int64_t>(1, 4)).set("N", N).set("C", C).set("fshape", fshape);
    if (int64_t pos = gen::position()) c.set("pos", pos);
    gen::tables(c);
    // The flat table [N*C/2, 2] is N*C/2 texels high or deep in texture3d_w and texture3d_c.
    c.storage = gen::storage(*o, [&](const std::string& tensor, const std::string& layout) {
      return tensor != "freqs_cis" || fshape != "nc2_2" || gen::texture_fits({N * C / 2, 2}, t, layout);
    });
    if (!valid) {
      gen::break_rule(*o, {
          {"channels_even",  // C odd with an N*C-element pair table: only channels_even breaks
           [&] { c.set("N", 2 * draw::in_range<int64_t>(1, 17)).set("C", C + 1).set("fshape", "nc2_2"); }},
          {"freqs_cis_numel", [&] { c.set("Nf", c.get("N") + draw::in_range<int64_t>(1, 4)); }},
          {"freqs_cis_inner_2",
           [&] {  // a [N, C] table, whose innermost dimension is 2 only when C is
             c.set("fshape", "n_c");
             if (C == 2) c.set("C", 4);
           }},
          {"dtypes_equal", [&] { c.set(draw::element<std::string>("x_dtype", "freqs_cis_dtype"), gen::other_dtype(t)); }},
      });
    }
    c.seed = gen::seed();
    return c;
  });
}

rc::Gen<Case> gen_rope_half(const OpDef& op, DType t, bool valid) {
  return draw::exec([o = &op, t, valid] {
    Case c{"rope_half", {}, t, "buffer", 0};
    int64_t D = gen::head_dim();
    c.set("B", draw::in_range<int64_t>(1, 3)).set("H", draw::in_range<int64_t>(1, 9)).set("S", gen::seq_len());
    c.set("D", D);
    if (int64_t pos = gen::position()) c.set("pos", pos);
    gen::tables(c);
    c.storage = gen::storage(*o);
    if (!valid) {
      gen::break_rule(*o, {
          {"head_dim_even", [&] { c.set("D", D + 1); }},
          {"cos_sin_shape",
           [&] {
             const std::string which = draw::element<std::string>("Sc", "Dc");
             c.set(which, draw::in_range<int64_t>(1, 4) + (c.get("S") + D));
           }},
          {"dtypes_equal",
           [&] { c.set(draw::element<std::string>("x_dtype", "cos_dtype", "sin_dtype"), gen::other_dtype(t)); }},
      });
    }
    c.seed = gen::seed();
    return c;
  });
}

rc::Gen<Case> gen_rope_matrix(const OpDef& op, DType t, bool valid) {
  return draw::exec([o = &op, t, valid] {
    Case c{"rope_matrix", {}, t, "buffer", 0};
    std::string mode = draw::element<std::string>("half", "interleave", "dense");
    int64_t D = gen::head_dim();
    c.set("B", draw::in_range<int64_t>(1, 3)).set("H", draw::in_range<int64_t>(1, 5)).set("S", gen::seq_len());
    c.set("D", D).set("mode", mode);
    if (mode != "dense" && D >= 6 && draw::boolean()) {
      int64_t w = 2 * (D / 6);  // 3-D RoPE: three even sections, the last takes the rest
      c.set("sections", cat(w, ":", w, ":", D - 2 * w));
    }
    if (mode == "dense" && draw::boolean()) c.set("D", D - 1);  // dense m allows odd D
    if (int64_t pos = gen::position()) c.set("pos", pos);
    c.storage = gen::storage(*o);
    if (!valid) {
      const int64_t d = c.get("D");
      gen::break_rule(*o, {
          {"m_shape", [&] { c.set("Dm", d + draw::in_range<int64_t>(1, 3)); }},
          {"cos_sin_shape",
           [&] {
             const std::string which = draw::element<std::string>("Sc", "Dc");
             c.set(which, draw::in_range<int64_t>(1, 4) + (c.get("S") + d));
           }},
          {"dtypes_equal",
           [&] { c.set(draw::element<std::string>("x_dtype", "m_dtype", "cos_dtype", "sin_dtype"), gen::other_dtype(t)); }},
      });
    }
    c.seed = gen::seed();
    return c;
  });
}

}  // namespace ts
