#pragma once
// The deterministic case sequence of one operator x dtype: the hand-picked edge cases first, then
// cases drawn from the operator's generators (the same ones the properties use), about one in five
// of them invalid. Cases are made one at a time, when asked for, so a sweep of ten million cases
// holds one case at a time. Case k depends only on (op, dtype, count, seed, k) and the draws'
// version (kSweepVersion, properties/generators.h), never on RapidCheck's: drawn case r (k minus the edge
// cases) is invalid when r % 5 == 4, has the key Stream(seed, "<op>/<dtype>").bits(r) (core/rng.h;
// e.g. "sdpa/float16") and the size r * 100 / (drawn - 1), a ramp over the count's drawn cases
// (small cases first, as RapidCheck grows them; 100 when one is drawn).
#include <cstdint>
#include <optional>
#include <vector>

#include "core/op.h"

namespace rc { template <class T> class Shrinkable; }

namespace ts {

constexpr int64_t kDefaultCases = 200;  // touchstone check's cases per operator x dtype

// How a drawn case came out of its generator: the generator (valid or invalid cases), its draw key
// and RapidCheck's size.
struct Draw {
  bool valid = true;
  uint64_t key = 0;
  int size = 0;
};

class Sweep {
 public:
  Sweep(const OpDef& op, DType dtype, int64_t count, uint64_t seed);
  int64_t size() const { return count_; }
  Case at(int64_t k) const;  // 0 <= k < size()
  std::optional<Draw> draw(int64_t k) const;  // how case k was drawn; none for a hand-picked edge case
  // Where the operator's large case (OpDef::large_case) stands in this sweep, if it runs at all: its
  // reference takes seconds, so check starts preparing it when the sweep starts.
  std::optional<int64_t> large_index() const { return large_; }
  int64_t edges() const { return int64_t(edges_.size()); }  // cases 0..edges()-1 are hand-picked
  const OpDef& op() const { return *op_; }
  DType dtype() const { return dtype_; }

 private:
  const OpDef* op_;
  DType dtype_;
  int64_t count_;
  uint64_t seed_;
  std::vector<Case> edges_;  // the first min(count, edge cases) cases
  std::optional<int64_t> large_;
};

// Draws one case from a generator with draw key `key` (properties/draw.h: the case is a function of
// the key and the size alone); with its shrink tree (RapidCheck's smaller variants of it, for check's
// shrinking, tools/shrink.h).
Case draw_case(const OpDef& op, DType dtype, bool valid, uint64_t key, int size);
rc::Shrinkable<Case> draw_shrinkable(const OpDef& op, DType dtype, const Draw& d);

}  // namespace ts
