#pragma once
// Shared pieces of the operator generators: the seed and the shape classes that break kernels.
#include <rapidcheck.h>

#include "core/case.h"

namespace ts::gen {

// The data seed is a generated value like any other field, so it shrinks (towards 0) with the case.
inline uint64_t seed() { return *rc::gen::inRange<uint64_t>(0, uint64_t(1) << 31); }

// Sequence length: decode (S = 1) half the time, else a short prefill.
inline int64_t seq_len() { return *rc::gen::weightedOneOf<int64_t>({{1, rc::gen::just<int64_t>(1)}, {1, rc::gen::inRange<int64_t>(1, 33)}}); }

// Head dim: even, 2..128, often ragged (D % 4 == 2), sometimes a full power of two.
inline int64_t head_dim() {
  return *rc::gen::weightedOneOf<int64_t>({{3, rc::gen::map(rc::gen::inRange<int64_t>(1, 33), [](int64_t h) { return 2 * h; })},
                                            {1, rc::gen::element<int64_t>(64, 128)}});
}

// First position: small or thousands (large angles); 0 only one time in twenty, because row 0 of a
// conventional table is the identity rotation (cos 1, sin 0), which cannot show a kernel that reads
// the wrong frequency or the wrong row. Position 0 stays in every operator's edge cases.
inline int64_t position() {
  return *rc::gen::weightedOneOf<int64_t>({{1, rc::gen::just<int64_t>(0)}, {12, rc::gen::inRange<int64_t>(1, 64)},
                                            {7, rc::gen::inRange<int64_t>(1000, 10000)}});
}

// RoPE tables: the conventional cos/sin two times in three, else arbitrary values the contract
// allows (a rope_half table whose halves differ, freqs that are not a rotation).
inline void tables(Case& c) {
  if (*rc::gen::inRange(0, 3) == 0) c.set("tables", "random");
}

// A dtype other than `t`, for mixed-dtype invalid cases.
inline std::string other_dtype(DType t) { return t == DType::f32 ? "float16" : "float32"; }

}  // namespace ts::gen
