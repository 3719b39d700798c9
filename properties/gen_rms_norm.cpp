// Generator of rms_norm cases: valid ones across the hidden sizes that break reductions (1, ragged
// texels, one workgroup's worth and past it), decode and prefill rows, values from tiny to huge and
// epsilons from Llama's to 1; invalid ones that break exactly one contract rule each.
#include "properties/gen_common.h"

namespace ts {

rc::Gen<Case> gen_rms_norm(const OpDef& op, DType t, bool valid) {
  return rc::gen::exec([o = &op, t, valid] {
    Case c{"rms_norm", {}, t, "buffer", 0};
    const int64_t H = *rc::gen::weightedOneOf<int64_t>({{2, rc::gen::inRange<int64_t>(1, 70)},
                                                        {1, rc::gen::element<int64_t>(1, 2, 3, 5, 63, 64, 65, 255, 257)},
                                                        {1, rc::gen::inRange<int64_t>(200, 5000)}});
    c.set("B", *rc::gen::inRange<int64_t>(1, 4)).set("S", gen::seq_len()).set("H", H);
    if (*rc::gen::inRange(0, 3) == 0) c.set("eps_micro", *rc::gen::element<int64_t>(10, 100, 1000000));
    // Tiny and huge values, within the dtype's range (float16's ends at 2^16).
    if (*rc::gen::inRange(0, 4) == 0)
      c.set("x_exp", t == DType::f16 ? *rc::gen::element<int64_t>(-12, -6, 6, 12) : *rc::gen::element<int64_t>(-40, -20, 20, 40));
    const Shape x = {c.get("B"), c.get("S"), H};
    c.storage = gen::storage(*o, [&](const std::string& tensor, const std::string& layout) {
      return gen::texture_fits(tensor == "weight" ? Shape{H} : x, t, layout);
    });
    if (!valid) {
      const std::string rule =
          *rc::gen::element<std::string>("hidden_size_positive", "weight_shape", "eps_positive", "values_in_range", "dtypes_equal");
      if (rule == "hidden_size_positive") c.set("H", 0).set("Hw", 0);
      if (rule == "weight_shape") c.set("Hw", H + *rc::gen::inRange<int64_t>(1, 4));
      if (rule == "eps_positive") c.set("eps_micro", -*rc::gen::inRange<int64_t>(0, 1000));
      if (rule == "values_in_range") c.set("x_exp", *rc::gen::inRange<int64_t>(41, 128));
      if (rule == "dtypes_equal") {  // values in every dtype's range: only the dtype breaks a rule
        std::erase_if(c.vars, [](const auto& v) { return v.first == "x_exp"; });
        c.set(*rc::gen::element<std::string>("x_dtype", "weight_dtype"), gen::other_dtype(t));
      }
    }
    c.seed = gen::seed();
    return c;
  });
}

}  // namespace ts
