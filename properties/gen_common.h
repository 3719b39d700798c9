#pragma once
// Shared pieces of the operator generators: the seed, the shape classes that break kernels, the
// storage part of a case id (a layout per tensor, drawn from the operator's declaration), and the
// choice of the contract rule an invalid case breaks. Every draw is a properties/draw.h primitive.
#include <rapidcheck.h>

#include <functional>
#include <string>
#include <vector>

#include "core/case.h"
#include "core/op.h"
#include "properties/draw.h"

namespace ts::gen {

// The data seed is a generated value like any other field, so it shrinks (towards 0) with the case.
inline uint64_t seed() { return draw::in_range<uint64_t>(0, uint64_t(1) << 31); }

// Sequence length: decode (S = 1) two times in five, else a short prefill, often 2, 3 or 5 (S is
// the packed dimension of a channels-packed [B,S,H,D] tensor, and the height of a [S,D] table).
inline int64_t seq_len() {
  return draw::weighted<int64_t>({{2, 1}, {1, [] { return draw::element<int64_t>(2, 3, 5); }},
                                  {2, [] { return draw::in_range<int64_t>(1, 33); }}});
}

// Head dim: even, 2..128, often ragged (D % 4 == 2), sometimes a full power of two up to 256
// (Gemma's), sometimes one whose half (the width of a D/2-wide table) is 1, 2, 3 or 5.
inline int64_t head_dim() {
  return draw::weighted<int64_t>({{6, [] { return 2 * draw::in_range<int64_t>(1, 33); }},
                                  {1, [] { return draw::element<int64_t>(2, 4, 6, 10); }},
                                  {2, [] { return draw::element<int64_t>(64, 128, 256); }}});
}

// First position: small, thousands or up to a million (large angles, long contexts); 0 only one time
// in twenty, because row 0 of a conventional table is the identity rotation (cos 1, sin 0), which
// cannot show a kernel that reads the wrong frequency or the wrong row. Position 0 stays in every
// operator's edge cases.
inline int64_t position() {
  return draw::weighted<int64_t>({{1, 0}, {12, [] { return draw::in_range<int64_t>(1, 64); }},
                                  {5, [] { return draw::in_range<int64_t>(1000, 10000); }},
                                  {2, [] { return draw::uniform<int64_t>(10000, 1 << 20); }}});
}

// RoPE tables: the conventional cos/sin two times in three, else arbitrary values the contract
// allows (a rotate-half table whose halves differ, freqs that are not a rotation).
inline void tables(Case& c) {
  if (draw::in_range(0, 3) == 0) c.set("tables", "random");
}

// A dtype other than `t`, for mixed-dtype invalid cases.
inline std::string other_dtype(DType t) { return t == DType::f32 ? "float16" : "float32"; }

// A small dimension that packed layouts get wrong when it lies along the packed dimension: 1, 2, 3
// and 5 (a texel with padding lanes, or one full texel and a ragged one), often; else [lo, hi].
inline int64_t packed_dim(int64_t lo, int64_t hi) {
  return draw::weighted<int64_t>({{1, [] { return draw::element<int64_t>(1, 2, 3, 5); }},
                                  {2, [=] { return draw::in_range<int64_t>(lo, hi + 1); }}});
}

// The largest texture extent a drawn case asks for: WebGPU's default maxTextureDimension3D (Vulkan
// devices allow at least as much), so generated texture cases run rather than end UNSUPPORTED.
constexpr int64_t kMaxTextureExtent = 2048;

// Whether a tensor of shape `s` in `layout` stays within kMaxTextureExtent (always, for buffers).
bool texture_fits(const Shape& s, DType t, const std::string& layout);

// The storage part of a case id for `op`, in canonical form (Storage::text: the default layout,
// then `;tensor=layout` for each tensor stored otherwise, in name order). Every tensor takes a layout its OpDef::layouts declares; `fits(tensor, layout)`, when
// given, can refuse a texture for a tensor too large for one (the tensor then takes another).
// Mixed layouts are common, not rare: a quarter of the cases keep every tensor a buffer, a quarter
// give every tensor one texture layout (tensors that cannot take it are overridden), and half
// take one of kMixedPatterns mixed patterns of the operator (a default kind, one to three tensors
// of the other kind; the two patterns flip the same tensors, from either default), each layout
// within its kind drawn per case.
constexpr uint64_t kMixedPatterns = 2;
using Fits = std::function<bool(const std::string& tensor, const std::string& layout)>;
std::string storage(const OpDef& op, const Fits& fits = {});

// One way an invalid case breaks one contract rule: the rule's id (one of the operator's
// OpDef::rules) and the change to the valid case drawn so far that breaks that rule, and no other
// before it (OpDef::validate reports the first broken rule).
struct Breaker {
  std::string rule;
  std::function<void()> apply;
};

// Breaks one rule of `op`: chooses one of `ways` alike at every size (draw::choose; a size-scaled
// choice would reach the last ways only in the sweep's last, largest cases) and applies it, drawing
// from the way's own stream; the choice shrinks towards the first way. Each way names its rule, so a
// rule added to or moved in OpDef::rules changes no case; a way naming a rule `op` does not declare
// is a std::logic_error.
void break_rule(const OpDef& op, const std::vector<Breaker>& ways);

// The rule break_rule last chose on this thread ("" before any): what the tests check an invalid
// case's violation against.
const std::string& last_broken_rule();

}  // namespace ts::gen
