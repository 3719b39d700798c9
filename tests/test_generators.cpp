// The cases the default sweep draws (properties/, tools/sweep.h), checked without a backend: every id
// is canonical and fits its operator's declaration, storage included; layouts come from
// OpDef::layouts with mixed layouts common, not rare; drawn textures fit the smallest device limit;
// the edge cases include texture and mixed-layout cases; and the sweep reaches every coverage class
// (gpu/plans/coverage.h), each layout and the mixed class among them.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/case_rules.h"
#include "core/runner.h"
#include "properties/draw.h"
#include "properties/gen_common.h"
#include "gpu/plans/coverage.h"
#include "gpu/plans/registry.h"
#include "tools/sweep.h"

namespace ts {
namespace {


std::vector<std::string> tensors_of(const OpDef& op) {
  std::vector<std::string> t = op.inputs;
  for (auto& o : op.outputs)
    if (std::find(t.begin(), t.end(), o) == t.end()) t.push_back(o);
  return t;
}

// The distinct layouts a storage gives the operator's tensors.
std::set<std::string> layouts_of(const OpDef& op, const std::string& storage) {
  const Storage s = Storage::parse(storage);
  std::set<std::string> out;
  for (auto& t : tensors_of(op)) out.insert(s.of(t));
  return out;
}

// The reference side of a case without its outputs: what coverage classes are computed from.
Expected built(const OpDef& op, const Case& c) {
  Expected e;
  e.c = c;
  e.op = &op;
  e.problem = make_problem(op, c);
  e.violation = op.validate(e.problem);
  return e;
}

// Every tensor of a valid case that a drawn storage puts in a texture fits the smallest
// maxImageDimension3D a backend has (WebGPU's default, gen::kMaxTextureExtent), and is not empty.
// Scratch is not the case's: OpDef::layouts declares inputs and outputs.
void expect_textures_fit(const Expected& e) {
  std::map<std::string, std::pair<Shape, DType>> tensors;
  for (auto& [name, t] : e.problem.inputs) tensors[name] = {t.shape, t.dtype};
  for (auto& b : e.op->buffers(e.problem))
    if (b.role == BufferSpec::Role::output) tensors[b.name] = {b.shape, b.dtype};
  for (auto& [name, sd] : tensors) {
    const Physical p = physical(sd.first, sd.second, e.problem.layout(name));
    if (!is_texture(p.layout)) continue;
    for (int64_t x : p.extent)
      EXPECT_TRUE(x >= 1 && x <= gen::kMaxTextureExtent)
          << e.c.id() << ": " << name << " " << shape_str(sd.first) << " as " << layout_name(p.layout) << " has extent " << x;
  }
}

TEST(Generators, SweepCasesAreCanonicalDeclaredAndOftenMixed) {
  for (const OpDef* op : all_ops()) {
    const std::string large = op->large_case().id();
    // Whether every tensor may take some one texture layout (sdpa's caches are buffers only).
    bool uniform_possible = false;
    for (const std::string& l : {"texture3d_w", "texture3d_h", "texture3d_c"}) {
      bool all = true;
      for (auto& t : tensors_of(*op)) {
        auto it = op->layouts.find(t);
        all &= it != op->layouts.end() && std::find(it->second.begin(), it->second.end(), l) != it->second.end();
      }
      uniform_possible |= all;
    }
    for (DType t : op->dtypes) {
      const Sweep sweep(*op, t, kDefaultCases, 1);
      int drawn = 0, all_buffer = 0, one_texture = 0, mixed = 0;
      std::set<std::string> storages, patterns;
      const int64_t edges = int64_t(op->edge_cases(t).size()) + (t == DType::f32 ? 1 : 0);
      for (int64_t k = 0; k < sweep.size(); ++k) {
        const Case c = sweep.at(k);
        EXPECT_EQ(Case::parse(c.id()).id(), c.id());
        EXPECT_NO_THROW(check_case(*op, c)) << c.id();
        EXPECT_EQ(Storage::parse(c.storage).text(), c.storage) << c.id() << ": storage not canonical";
        if (c.id() == large) continue;
        const Expected e = built(*op, c);
        if (!e.violation) expect_textures_fit(e);
        if (k < edges) continue;
        ++drawn;
        storages.insert(c.storage);
        // Which tensors are textures, packed int8 or buffers: what a backend compiles a program per.
        std::string kinds;
        for (auto& name : tensors_of(*op)) {
          const Layout l = layout_from_name(Storage::parse(c.storage).of(name));
          kinds += is_texture(l) ? 'T' : is_packed_int8(l) ? 'P' : 'B';
        }
        patterns.insert(kinds);
        const std::set<std::string> ls = layouts_of(*op, c.storage);
        if (ls.size() > 1) ++mixed;
        else if (*ls.begin() == "buffer") ++all_buffer;
        else ++one_texture;
      }
      const std::string what = cat(op->name, "/", dtype_name(t), ": ", drawn, " drawn, ", all_buffer, " all buffers, ",
                                   one_texture, " one texture layout, ", mixed, " mixed; ", storages.size(),
                                   " distinct storages, ", patterns.size(), " patterns of storage kinds");
      std::printf("[ storage  ] %s\n", what.c_str());
      EXPECT_GE(mixed * 4, drawn) << what;       // half drawn mixed, give or take
      // A quarter all buffers for float ops (mode 0 of gen::storage); int8 ops draw the seed's packed
      // pairings two times in three. The bound for float ops is a tenth, not the quarter: at ~140
      // drawn cases one standard deviation is 3.6 points, and a tenth is 4 of them below, so that a
      // generator change elsewhere in a case (which reshuffles the draws) does not trip it; a sixth,
      // 2.3 deviations below, did.
      EXPECT_GE(all_buffer * (is_float(t) ? 10 : 20), drawn) << what;
      if (uniform_possible) EXPECT_GE(one_texture * 8, drawn) << what;
      // A backend compiles a program per pattern of storage kinds (a texture's packing, an int8
      // tensor's packed layout, is read at run time): the sweep draws few patterns (all buffers,
      // all textures, the operator's mixed patterns, and a few where a texture was too large for
      // the case's shape), each for many shapes and layouts; a cold sweep's compile time is set by
      // this count.
      EXPECT_LE(patterns.size(), 1 + 1 + gen::kMixedPatterns + 4) << what;
      if (!is_float(t)) continue;
      EXPECT_GT(storages.size(), patterns.size()) << what << ": layouts within a kind should vary freely";
    }
  }
}

TEST(Generators, EdgeCasesCoverTexturesAndMixedLayouts) {
  for (const OpDef* op : all_ops())
    for (DType t : op->dtypes) {
      int texture = 0, mixed = 0, invalid_texture = 0;
      for (const Case& c : op->edge_cases(t)) {
        EXPECT_NO_THROW(check_case(*op, c)) << c.id();
        EXPECT_EQ(Storage::parse(c.storage).text(), c.storage) << c.id() << ": storage not canonical";
        const std::set<std::string> ls = layouts_of(*op, c.storage);
        const bool valid = !op->validate(op->make(c));
        const bool tex = std::any_of(ls.begin(), ls.end(), [](auto& l) { return l != "buffer"; });
        texture += valid && tex;
        mixed += valid && ls.size() > 1;
        invalid_texture += !valid && tex;
      }
      EXPECT_GE(texture, 3) << op->name << " " << dtype_name(t);
      EXPECT_GE(mixed, 2) << op->name << " " << dtype_name(t);
      EXPECT_GE(invalid_texture, 1) << op->name << " " << dtype_name(t) << ": a rejection in textures or packed int8, before any image";
    }
}

// Classes the default sweep must reach, as `touchstone check` counts them over every dtype; the
// large case is left out (it is the sweep's by construction and costs 16M elements).
TEST(Generators, DefaultSweepReachesEveryCoverageClass) {
  for (const OpDef* op : all_ops()) {
    std::map<std::string, int> seen;
    const std::string large = op->large_case().id();
    for (DType t : op->dtypes) {
      const Sweep sweep(*op, t, kDefaultCases, 1);
      for (int64_t k = 0; k < sweep.size(); ++k) {
        const Case c = sweep.at(k);
        if (c.id() == large) continue;
        for (auto& cls : case_classes(built(*op, c))) ++seen[cls];
      }
    }
    std::string line;
    for (auto& [cls, n] : seen)
      if (is_storage_class(cls)) line += cat(line.empty() ? "" : ", ", cls, " ", n);
    std::printf("[ coverage ] %-12s %s\n", op->name.c_str(), line.c_str());
    for (auto& cls : expected_classes(*op)) {
      if (cls == "large (>2^24 elements)") continue;
      EXPECT_GT(seen[cls], 0) << op->name << ": the default sweep misses class '" << cls << "'";
    }
    const bool int8 = op->dtypes == std::vector<DType>{DType::i8};  // packed int8 layouts, their own ragged classes
    // int8 operators: the layouts each declares (q8ta_conv2d's x and out are packed along C only).
    for (const std::string l : int8 ? std::vector<std::string>{"layout buffer", "mixed layouts"}
                                    : std::vector<std::string>{"layout buffer", "layout texture3d_w", "mixed layouts", "ragged last texel"})
      EXPECT_GT(seen[l], 0) << op->name << " " << l;
    if (int8)
      for (auto& [tensor, layouts] : op->layouts)
        for (auto& l : layouts) EXPECT_GT(seen["layout " + l], 0) << op->name << " " << tensor << " " << l;
  }
}

// Each generator breaks the rule it names (gen::break_rule): every invalid case it draws is refused
// with that rule's id, and every rule of every operator is broken, but the ranks no case id can
// change (input_rank, except q8ta_add's, whose shape variable sets the rank).
TEST(Generators, InvalidCasesBreakTheRuleTheyNameAndEveryRuleIsBroken) {
  for (const OpDef* op : all_ops()) {
    std::map<std::string, int> broken;
    for (DType t : op->dtypes)
      for (uint64_t key = 0; key < 200; ++key) {
        const Case c = draw_case(*op, t, false, key, int(key % 101));
        const std::string meant = gen::last_broken_rule();
        const Expected e = built(*op, c);
        ASSERT_TRUE(e.violation) << c.id() << " is valid; it was to break " << meant;
        EXPECT_EQ(e.violation->rule, meant) << c.id() << ": " << e.violation->message;
        ++broken[meant];
      }
    std::string line;
    for (auto& [rule, n] : broken) line += cat(line.empty() ? "" : ", ", rule, " ", n);
    std::printf("[ rules    ] %-12s %s\n", op->name.c_str(), line.c_str());
    for (const Rule& r : op->rules) {
      if (r.id == "input_rank" && op->name != "q8ta_add") continue;
      EXPECT_GT(broken[r.id], 0) << op->name << ": no invalid case breaks " << r.id;
    }
  }
}

// A way to break a rule the operator does not declare is the generator's bug, named at once.
TEST(Generators, BreakingAnUndeclaredRuleIsAnError) {
  const OpDef& op = *find_op("rope_half");
  const rc::Gen<Case> gen = draw::exec([&op] {
    Case c{"rope_half", {}, DType::f32, "buffer", 0};
    gen::break_rule(op, {{"head_dim_even", [&] { c.set("D", 3); }}, {"no_such_rule", [] {}}});
    return c;
  });
  const draw::Keyed keyed(1);
  try {
    gen(rc::Random(), 0).value();
    FAIL() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_rule"), std::string::npos) << e.what();
  }
}

TEST(Generators, StorageTextIsCanonical) {
  Storage s = Storage::parse("texture3d_c;xk_out=texture3d_w;freqs_cos=buffer;xq=texture3d_c");
  EXPECT_EQ(s.text(), "texture3d_c;freqs_cos=buffer;xk_out=texture3d_w");
  EXPECT_EQ(Storage::parse("buffer").text(), "buffer");
}

}  // namespace
}  // namespace ts
