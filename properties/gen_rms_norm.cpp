// Generator of rms_norm cases: valid ones across the hidden sizes that break reductions (1, ragged
// texels, one workgroup's worth and past it), decode and prefill rows, values from tiny to huge and
// epsilons from Llama's to 1; invalid ones that break exactly one contract rule each, named by id.
#include "properties/gen_common.h"

namespace ts {

rc::Gen<Case> gen_rms_norm(const OpDef& op, DType t, bool valid) {
  return draw::exec([o = &op, t, valid] {
    Case c{"rms_norm", {}, t, "buffer", 0};
    const int64_t H = draw::weighted<int64_t>({{2, [] { return draw::in_range<int64_t>(1, 70); }},
                                               {1, [] { return draw::element<int64_t>(1, 2, 3, 5, 63, 64, 65, 255, 257); }},
                                               {1, [] { return draw::in_range<int64_t>(200, 5000); }}});
    const int64_t B = draw::in_range<int64_t>(1, 4);
    const int64_t S = gen::seq_len();
    c.set("B", B).set("S", S).set("H", H);
    if (draw::one_in(3)) c.set("eps_micro", draw::element<int64_t>(10, 100, 1000000));
    // Tiny and huge values, within the dtype's range (float16's ends at 2^16).
    if (draw::one_in(4)) {
      const int64_t e = t == DType::f16 ? draw::element<int64_t>(-12, -6, 6, 12) : draw::element<int64_t>(-40, -20, 20, 40);
      c.set("x_exp", e);
    }
    const Shape x = {B, S, H};
    c.storage = gen::storage(*o, [&](const std::string& tensor, const std::string& layout) {
      return gen::texture_fits(tensor == "weight" ? Shape{H} : x, t, layout);
    });
    if (!valid) {
      gen::break_rule(*o, {
          {"hidden_size_positive", [&] { c.set("H", 0).set("Hw", 0); }},
          {"weight_shape", [&] { c.set("Hw", H + draw::in_range<int64_t>(1, 4)); }},
          {"eps_positive", [&] { c.set("eps_micro", -draw::in_range<int64_t>(0, 1000)); }},
          // x from [-2^e, 2^e], e >= 87: a value within 2^40 is a chance of 2^-47 each.
          {"values_in_range", [&] { c.set("x_exp", 127 - draw::in_range<int64_t>(0, 41)); }},
          {"dtypes_equal",
           [&] {  // values in every dtype's range: only the dtype breaks a rule
             std::erase_if(c.vars, [](const auto& v) { return v.first == "x_exp"; });
             c.set(draw::element<std::string>("x_dtype", "weight_dtype"), gen::other_dtype(t));
           }},
      });
    }
    c.seed = gen::seed();
    return c;
  });
}

}  // namespace ts
