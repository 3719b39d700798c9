#include "reference/coverage.h"

#include "reference/q8ta_common.h"

namespace ts {

std::vector<std::string> case_classes(const Expected& e) {
  std::vector<std::string> out;
  const Case& c = e.c;
  if (e.violation) {
    out.push_back("reject:" + e.violation->rule);
    return out;
  }
  if (!e.error.empty()) return out;
  out.push_back("valid");
  auto has = [&](const char* k) { return c.has(k); };
  if (has("S")) out.push_back(c.get("S") == 1 ? "decode (S=1)" : "prefill (S>1)");
  if (has("Hq") && has("Hkv")) {
    int64_t hq = c.get("Hq"), hkv = c.get("Hkv");
    if (hkv == 1 && hq > 1) out.push_back("mqa (Hkv=1)");
    else if (hkv > 0 && hq % hkv == 0) out.push_back(cat("gqa ", hq / hkv, ":1"));
  }
  for (const char* k : {"D", "C"})
    if (has(k)) {
      int64_t d = c.get(k);
      if (d == 2) out.push_back(cat(k, "=2"));
      if (d % 4 == 2) out.push_back(cat("ragged (", k, "%4==2)"));
      if (d % 2 == 1) out.push_back(cat("odd ", k));
    }
  if (c.get("pos", 0) >= 1000) out.push_back("position >= 1000");
  if (c.word("tables", "rope") == "random") out.push_back("tables=random");
  // Past 2^24 elements a float32-held index stops being exact (and the grid folds).
  int64_t largest = 0;
  for (auto& [name, t] : e.problem.inputs) largest = std::max(largest, t.numel());
  for (auto& b : e.op->buffers(e.problem)) largest = std::max(largest, numel(b.shape));
  if (largest > (int64_t(1) << 24)) out.push_back("large (>2^24 elements)");
  if (has("mode")) out.push_back("mode=" + c.word("mode", ""));
  if (has("sections")) out.push_back("sections (3-D RoPE)");
  if (has("fshape")) out.push_back("freqs_cis " + c.word("fshape", ""));
  if (c.op == "sdpa") {
    const int64_t S = c.get("S"), pos = c.get("pos", 0);
    out.push_back("impl=" + c.word("impl", "tiled"));
    if ((pos + S) % 4 != 0) out.push_back("ctx%4!=0");  // a ragged context tile
    if (S > 1 && pos > 0) out.push_back("chunked prefill (S>1, pos>0)");
    if (has("logit_scale")) out.push_back("large logits");
  }
  if (c.op.rfind("q8ta_", 0) == 0)
    for (auto& cls : q8ta::classes(e)) out.push_back(cls);
  return out;
}

std::vector<std::string> expected_classes(const OpDef& op) {
  std::vector<std::string> out = {"large (>2^24 elements)"};
  if (op.name.rfind("rope_", 0) == 0 && op.name != "rope_matrix") out.push_back("tables=random");
  for (auto& r : op.rules)
    if (r.id != "input_rank") out.push_back("reject:" + r.id);  // case vars cannot change a rank
  if (op.name == "sdpa")
    for (const char* cls : {"impl=naive", "impl=tiled", "ctx%4!=0", "chunked prefill (S>1, pos>0)", "large logits"})
      out.push_back(cls);
  if (op.name.rfind("q8ta_", 0) == 0)
    for (auto& cls : q8ta::expected_classes(op)) out.push_back(cls);
  return out;
}

}  // namespace ts
