// What a check sweeps: the operators and dtypes of --op and --dtype, the cases of each sweep that
// this shard and --match run.
#include <algorithm>

#include "core/contract.h"
#include "core/errors.h"
#include "gpu/plans/registry.h"
#include "tools/check_run.h"

namespace ts {
namespace {

std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (DType t : ts) s += cat(s.empty() ? "" : ", ", dtype_name(t));
  return s;
}

}  // namespace

Match match_regex(const std::string& pattern) {
  if (pattern.empty()) return std::nullopt;
  return LinearRegex(pattern, "--match");
}

void for_each_case(const CheckOptions& o, const SweepPlan& plan,
                   const std::function<void(uint64_t, const OpDef&, DType, const std::string&)>& f) {
  const auto match = match_regex(o.match);
  uint64_t index = 0;
  for (auto& [op, dtypes] : plan)
    for (DType t : dtypes) {
      Sweep sweep(*op, t, o.cases, o.seed);
      for (int64_t k = 0; k < sweep.size(); ++k) {
        const uint64_t position = index++;
        if (position % o.shards != o.shard) continue;
        const std::string id = sweep.at(k).id();
        if (match && !match->search(id)) continue;
        f(position, *op, t, id);
      }
    }
}

SweepPlan sweep_plan(const CheckOptions& o) {
  std::vector<const OpDef*> ops;
  for (auto& n : o.ops) {
    const OpDef* op = find_op(n);
    if (!op) throw UsageError(cat("unknown operator '", n, "' (see touchstone list)"));
    ops.push_back(op);
  }
  const bool named_ops = !ops.empty();
  if (!named_ops) ops = all_ops();
  std::vector<DType> dtypes;
  for (auto& d : o.dtypes) {
    auto t = parse_dtype(d);
    if (!t) throw UsageError(cat("unknown dtype '", d, "' (dtypes: float32, float16, bfloat16)"));
    dtypes.push_back(*t);
  }
  SweepPlan plan;
  for (const OpDef* op : ops) {
    std::vector<DType> mine;
    for (DType t : dtypes.empty() ? op->dtypes : dtypes) {
      const bool defined = std::find(op->dtypes.begin(), op->dtypes.end(), t) != op->dtypes.end();
      if (defined) mine.push_back(t);
      else if (named_ops)
        throw UsageError(cat("operator ", op->name, " does not define dtype ", dtype_name(t), " (its dtypes: ",
                             dtype_list(op->dtypes), ")"));
    }
    if (!mine.empty()) plan.push_back({op, mine});
  }
  for (DType t : dtypes)
    if (std::none_of(plan.begin(), plan.end(), [&](auto& p) {
          return std::find(p.second.begin(), p.second.end(), t) != p.second.end();
        }))
      throw UsageError(cat("no operator defines dtype ", dtype_name(t), " (see touchstone list)"));
  return plan;
}

}  // namespace ts
