#include "tools/help_examples.h"

#include <optional>
#include <vector>

#include "core/contract.h"
#include "gpu/plans/registry.h"

namespace ts {
namespace {

struct Example {
  Case c;
  std::vector<Dispatch> plan;
};

std::optional<Example> first_valid(const OpDef& op) {
  for (const Case& c : op.edge_cases(op.dtypes.front())) {
    const Problem p = make_problem(op, c);
    if (!op.validate(p)) return Example{c, op.plan(p)};
  }
  return std::nullopt;
}

const std::optional<Example>& first_example() {
  static const std::optional<Example> e = all_ops().empty() ? std::nullopt : first_valid(*all_ops().front());
  return e;
}

}  // namespace

std::string example_case_id() {
  return first_example() ? first_example()->c.id() : "<op>/<k=v,...>/<dtype>/<storage>/seed=<n>";
}

std::string example_match() {
  const auto& e = first_example();
  if (!e || e->c.vars.empty()) return "'^<op>/'";
  const auto& [key, value] = e->c.vars.back();
  return cat("'^", e->c.op, "/.*", key, "=", value, "'");
}

std::string example_kernels() {
  std::vector<std::string> stems;
  if (first_example() && !first_example()->plan.empty()) stems.push_back(first_example()->plan.front().kernel);
  for (const OpDef* op : all_ops()) {
    if (stems.size() >= 3) break;
    if (op == all_ops().front()) continue;
    const auto e = first_valid(*op);
    if (!e) continue;
    for (const Dispatch& d : e->plan)
      if (d.kernel != op->name) {
        stems.push_back(d.kernel);
        break;
      }
  }
  std::string s;
  for (const std::string& k : stems) s += cat(s.empty() ? "" : ", ", k);
  return s.empty() ? "<kernel>" : s;
}

}  // namespace ts
