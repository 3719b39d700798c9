// Generator of sdpa cases: valid ones across the classes that break attention kernels (decode and
// prefill, chunked prefill at input_pos > 0, every GQA ratio and MQA, ragged context tiles, long
// contexts, explicit scales, logits large enough to overflow an unstable softmax, every kernel
// implementation, split prefills that mask whole chunks), and invalid ones that break exactly one
// contract rule each.
#include "properties/gen_common.h"
#include "properties/generators.h"

namespace ts {

rc::Gen<Case> gen_sdpa(const OpDef& op, DType t, bool valid) {
  return draw::exec([o = &op, t, valid] {
    Case c{"sdpa", {}, t, "buffer", 0};
    int64_t Hkv = draw::in_range<int64_t>(1, 5);
    const int64_t ratio = draw::element<int64_t>(1, 2, 3, 4, 8);  // GQA ratios; Hkv = 1 is MQA
    int64_t D = draw::weighted<int64_t>({{3, [] { return 4 * draw::in_range<int64_t>(1, 9); }},
                                         {1, [] { return draw::element<int64_t>(64, 128); }}});
    int64_t S = gen::seq_len();
    int64_t pos = draw::weighted<int64_t>({{2, 0}, {2, [] { return draw::in_range<int64_t>(1, 65); }},
                                           {1, [] {
                                              return draw::weighted<int64_t>({{1, [] { return draw::in_range<int64_t>(1000, 8200); }},
                                                                              {1, [] { return draw::in_range<int64_t>(8200, 20000); }}});
                                            }}});
    if (pos >= 1000) {  // long contexts with small heads and few queries keep a case cheap
      D = 4 * draw::in_range<int64_t>(1, 3);
      S = std::min<int64_t>(S, 4);
    }
    // coopmat (float16 tensor cores) where the case may use it; elsewhere the draw is another impl.
    std::string impl = draw::element<std::string>("naive", "tiled", "split", "coopmat");
    if (impl == "coopmat" && t != DType::f16) impl = "tiled";
    // A split prefill longer than a chunk (32 keys and up), one split case in five: its early queries
    // see none of the later chunks' keys, whole chunks masked.
    if (impl == "split" && pos < 1000 && draw::one_in(5)) S = draw::uniform<int64_t>(33, 97);
    // One coopmat case in six has a grid the plan pairs: more than 132 row tiles of 64 query rows
    // (8 kv heads of 8 query heads and S >= 136: 8 * ceil(8 S / 64) >= 136); small heads keep it cheap.
    const bool paired = impl == "coopmat" && draw::one_in(6);
    if (paired) {
      S = draw::in_range<int64_t>(136, 161);
      pos = draw::in_range<int64_t>(0, 65);
      D = 4 * draw::in_range<int64_t>(1, 5);
      Hkv = 8;
    }
    c.set("S", S).set("Hq", Hkv * (paired ? 8 : ratio)).set("Hkv", Hkv).set("D", D).set("pos", pos);
    c.set("impl", impl);
    if (draw::in_range(0, 4) == 0) c.set("Cmax", pos + S + draw::in_range<int64_t>(0, 9));  // 0: a full cache
    if (draw::in_range(0, 4) == 0) c.set("scale_milli", draw::in_range<int64_t>(50, 2000));
    // Large logits, and half the time with a long context: from ~8,200 keys a split decode has more
    // chunks than its combine holds at once (128), and a combine that loses a chunk's max overflows.
    if (draw::in_range(0, pos >= 1000 ? 2 : 6) == 0)
      c.set("logit_scale", pos >= 1000 ? draw::in_range<int64_t>(1000, 4000) : draw::in_range<int64_t>(100, 400));
    c.storage = gen::storage(*o);  // q, k, v in any float layout, out buffer or texture3d_w
    if (!valid) {
      if (impl == "coopmat") c.set("impl", "tiled");  // a broken shape must not break the coopmat rule too
      const int64_t Cmax = c.get("Cmax", pos + S + 4);
      auto more = [] { return draw::in_range<int64_t>(1, 4); };
      gen::break_rule(*o, {
          {"batch_is_1", [&] { c.set("B", 1 + more()); }},
          {"dims_positive", [&] { c.set(draw::element<std::string>("S", "Hq", "Hkv", "D"), 0); }},
          {"head_dim_multiple_of_4", [&] { c.set("D", D + more()); }},  // every tensor follows D: only this rule breaks
          {"head_dim_match",
           [&] {
             const std::string which = draw::element<std::string>("Dk", "Dv", "Dc");
             c.set(which, D + 4 * more());
           }},
          {"kv_seq_match",
           [&] {
             const std::string which = draw::element<std::string>("Sk", "Sv");
             c.set(which, S + more());
           }},
          {"kv_heads_match",
           [&] {
             const std::string which = draw::element<std::string>("Hv", "Hc");
             c.set(which, Hkv + more());
           }},
          {"cache_shapes_match", [&] { c.set("Cv", Cmax + more()); }},
          {"heads_divisible",
           [&] {
             Hkv = std::max<int64_t>(Hkv, 2);
             c.set("Hkv", Hkv).set("Hq", Hkv * ratio + draw::in_range<int64_t>(1, Hkv));
           }},
          {"input_pos_nonnegative", [&] { c.set("pos", -draw::in_range<int64_t>(1, 100)).set("Cmax", S + 4); }},
          {"cache_capacity", [&] { c.set("Cmax", draw::in_range<int64_t>(0, pos + S)); }},
          {"scratch_fits_32bit",
           [&] {  // Hq*S*ctx >= 2^32 with the smallest tensors that can reach it (~2^18 elements each)
             pos = 65535 + draw::in_range<int64_t>(0, 16);
             c.set("S", 1).set("Hq", 65536).set("Hkv", 1).set("D", 4).set("pos", pos).set("Cmax", pos + 1);
           }},
          {"coopmat_float16_head_dim",
           [&] {
             c.set("impl", "coopmat");
             if (t == DType::f16) c.set("D", 4 * draw::in_range<int64_t>(33, 40));
           }},
          {"dtypes_equal",
           [&] {
             c.set(draw::element<std::string>("q_dtype", "k_dtype", "v_dtype", "k_cache_dtype", "v_cache_dtype"),
                   gen::other_dtype(t));
           }},
      });
    }
    c.seed = gen::seed();
    return c;
  });
}

}  // namespace ts
