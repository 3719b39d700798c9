#include "tools/sweep.h"

#include <rapidcheck.h>

#include <algorithm>
#include <stdexcept>

#include "core/contract.h"
#include "core/rng.h"
#include "properties/draw.h"

namespace ts {

rc::Shrinkable<Case> draw_shrinkable(const OpDef& op, DType dtype, const Draw& d) {
  const draw::Keyed keyed(d.key);  // the draws read the key, not RapidCheck's random state
  return op.generator(op, dtype, d.valid)(rc::Random(d.key), d.size);
}

Case draw_case(const OpDef& op, DType dtype, bool valid, uint64_t key, int size) {
  return draw_shrinkable(op, dtype, Draw{valid, key, size}).value();
}

Sweep::Sweep(const OpDef& op, DType dtype, int64_t count, uint64_t seed)
    : op_(&op), dtype_(dtype), count_(std::max<int64_t>(count, 0)), seed_(seed), edges_(op.edge_cases(dtype)) {
  if (dtype == op.large_case().dtype) {  // OpDef::large_case says why one dtype
    edges_.push_back(op.large_case());
    large_ = int64_t(edges_.size()) - 1;
  }
  if (int64_t(edges_.size()) > count_) edges_.resize(size_t(count_));
  if (large_ && *large_ >= count_) large_.reset();
}

std::optional<Draw> Sweep::draw(int64_t k) const {
  if (k < 0 || k >= count_) throw std::out_of_range("Sweep::at: case index out of range");
  const int64_t edges = int64_t(edges_.size());
  if (k < edges) return std::nullopt;
  const int64_t r = k - edges, random = count_ - edges;
  const uint64_t key = Stream(seed_, cat(op_->name, "/", dtype_name(dtype_))).bits(uint64_t(r));
  const int size = random > 1 ? int(r * 100 / (random - 1)) : 100;  // grow like RapidCheck: small cases first
  return Draw{r % 5 != 4, key, size};
}

Case Sweep::at(int64_t k) const {
  const std::optional<Draw> d = draw(k);
  if (!d) return edges_[size_t(k)];
  return draw_case(*op_, dtype_, d->valid, d->key, d->size);
}

}  // namespace ts
