// Generator of sdpa cases: valid ones across the classes that break attention kernels (decode and
// prefill, chunked prefill at input_pos > 0, every GQA ratio and MQA, ragged context tiles, long
// contexts, explicit scales, logits large enough to overflow an unstable softmax, every kernel
// implementation, split prefills that mask whole chunks), and invalid ones that break exactly one
// contract rule each.
#include "properties/gen_common.h"
#include "properties/generators.h"

namespace ts {

rc::Gen<Case> gen_sdpa(const OpDef& op, DType t, bool valid) {
  return rc::gen::exec([o = &op, t, valid] {
    Case c{"sdpa", {}, t, "buffer", 0};
    int64_t Hkv = *rc::gen::inRange<int64_t>(1, 5);
    const int64_t ratio = *rc::gen::element<int64_t>(1, 2, 3, 4, 8);  // GQA ratios; Hkv = 1 is MQA
    int64_t D = *rc::gen::weightedOneOf<int64_t>({{3, rc::gen::map(rc::gen::inRange<int64_t>(1, 9), [](int64_t d) { return 4 * d; })},
                                                  {1, rc::gen::element<int64_t>(64, 128)}});
    int64_t S = gen::seq_len();
    int64_t pos = *rc::gen::weightedOneOf<int64_t>({{2, rc::gen::just<int64_t>(0)}, {2, rc::gen::inRange<int64_t>(1, 65)},
                                                    {1, rc::gen::oneOf(rc::gen::inRange<int64_t>(1000, 8200),
                                                                       rc::gen::inRange<int64_t>(8200, 20000))}});
    if (pos >= 1000) {  // long contexts with small heads and few queries keep a case cheap
      D = 4 * *rc::gen::inRange<int64_t>(1, 3);
      S = std::min<int64_t>(S, 4);
    }
    const std::string impl = *rc::gen::element<std::string>("naive", "tiled", "split");
    // A split prefill longer than a chunk (32 keys and up), one split case in five: its early queries
    // see none of the later chunks' keys, whole chunks masked.
    if (impl == "split" && pos < 1000 && gen::one_in(5)) S = *rc::gen::resize(100, rc::gen::inRange<int64_t>(33, 97));
    c.set("S", S).set("Hq", Hkv * ratio).set("Hkv", Hkv).set("D", D).set("pos", pos);
    c.set("impl", impl);
    if (*rc::gen::inRange(0, 4) == 0) c.set("Cmax", pos + S + *rc::gen::inRange<int64_t>(0, 9));  // 0: a full cache
    if (*rc::gen::inRange(0, 4) == 0) c.set("scale_milli", *rc::gen::inRange<int64_t>(50, 2000));
    // Large logits, and half the time with a long context: from ~8,200 keys a split decode has more
    // chunks than its combine holds at once (128), and a combine that loses a chunk's max overflows.
    if (*rc::gen::inRange(0, pos >= 1000 ? 2 : 6) == 0)
      c.set("logit_scale", pos >= 1000 ? *rc::gen::inRange<int64_t>(1000, 4000) : *rc::gen::inRange<int64_t>(100, 400));
    c.storage = gen::storage(*o);  // q, k, v in any float layout, out buffer or texture3d_w
    if (!valid) {
      const int64_t Cmax = c.get("Cmax", pos + S + 4);
      auto more = [] { return *rc::gen::inRange<int64_t>(1, 4); };
      switch (*rc::gen::inRange(0, 12)) {
        case 0: c.set("B", 1 + more()); break;
        case 1: c.set(*rc::gen::element<std::string>("S", "Hq", "Hkv", "D"), 0); break;
        case 2: c.set("D", D + more()); break;  // every tensor follows D: only head_dim_multiple_of_4 breaks
        case 3: c.set(*rc::gen::element<std::string>("Dk", "Dv", "Dc"), D + 4 * more()); break;
        case 4: c.set(*rc::gen::element<std::string>("Sk", "Sv"), S + more()); break;
        case 5: c.set(*rc::gen::element<std::string>("Hv", "Hc"), Hkv + more()); break;
        case 6: c.set("Cv", Cmax + more()); break;
        case 7:
          Hkv = std::max<int64_t>(Hkv, 2);
          c.set("Hkv", Hkv).set("Hq", Hkv * ratio + *rc::gen::inRange<int64_t>(1, Hkv));
          break;
        case 8: c.set("pos", -*rc::gen::inRange<int64_t>(1, 100)).set("Cmax", S + 4); break;
        case 9: c.set("Cmax", *rc::gen::inRange<int64_t>(0, pos + S)); break;
        case 10:  // Hq*S*ctx >= 2^32 with the smallest tensors that can reach it (~2^18 elements each)
          pos = 65535 + *rc::gen::inRange<int64_t>(0, 16);
          c.set("S", 1).set("Hq", 65536).set("Hkv", 1).set("D", 4).set("pos", pos).set("Cmax", pos + 1);
          break;
        default:
          c.set(*rc::gen::element<std::string>("q_dtype", "k_dtype", "v_dtype", "k_cache_dtype", "v_cache_dtype"),
                gen::other_dtype(t));
      }
    }
    c.seed = gen::seed();
    return c;
  });
}

}  // namespace ts
