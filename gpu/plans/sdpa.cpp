// sdpa's plan: the four implementations (naive, tiled, split, coopmat) as dispatches, the tolerance
// of their arithmetic, and its emulation.
#include "gpu/plans/sdpa.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "core/half.h"
#include "core/runner.h"
#include "gpu/plans/common.h"
#include "gpu/plans/emulate.h"
#include "reference/sdpa.h"

namespace ts {
namespace {

using namespace sdpa;

// impl=tiled: sdpa_qk_tiled and sdpa_av_tiled are tiled GEMMs per kv head over its S*G query rows
// (the G heads of a kv head share each K/V tile in shared memory); sdpa_softmax shares a
// workgroup's invocations among a few rows (naive's too).
constexpr uint32_t kTiledWg = 256;   // = the kernels' WG
constexpr uint64_t kTiledRows = 128; // = their TM: query rows a workgroup
constexpr uint64_t kTiledCols = 64;  // = sdpa_qk_tiled's TN (keys) and sdpa_av_tiled's 4 * TD4 (head dims)
constexpr uint64_t kSoftmaxKeys = 8; // = sdpa_softmax's KR: keys an invocation holds in registers

// impl=split (flash-decoding, gpu/vulkan/shaders/sdpa_split_partial.comp): a workgroup of kSplitWg
// invocations takes `qblock` query rows of one kv head (its GQA heads, then the next positions: they
// share every K/V load) against one chunk of the context; a combine dispatch merges the chunks.
constexpr uint32_t kSplitWg = 64;        // = the kernels' WG
constexpr int64_t kSplitMaxQueries = 32; // the longest query block
constexpr int64_t kSplitMaxChunk = 256;  // the longest chunk
constexpr int64_t kSplitScores = 4096;   // the largest SCMAX (split_defines): qblock * chunk weights in shared memory
constexpr uint64_t kSplitSlices = 16;    // = the combine's SL: invocations sharing one output texel's chunks

// impl=split's decode partial (sdpa_decode_partial.comp), where a kv head has at most
// kDecodeMaxRows query rows, S <= kDecodeMaxS, D <= 4 * kDecodeMaxD4 and D % 8 == 0 (its invocations
// hold texels in pairs, one 16-byte word of a 16-bit cache): blocks of kDecodeQueries rows, their queries
// in registers, lane groups of kDecodeLanes invocations (one subgroup's) sharing each key.
constexpr uint32_t kDecodeWg = 128;        // = its WG
constexpr int64_t kDecodeQueries = 4;      // = its QB
constexpr uint32_t kDecodeLanes = 8;       // = its LG: Dispatch::subgroup
constexpr int64_t kDecodeMaxD4 = 32;       // = its LG * TL
constexpr int64_t kDecodeMaxRows = 16;     // four blocks: each reads the chunk's K and V (from L2 after the first)
constexpr int64_t kDecodeMaxS = 4;         // = its FMAX: this step's rows, staged in shared memory
constexpr int64_t kDecodeShared = 512;     // = its DCHUNK: the weights' shared vec4s, >= the longest chunk
constexpr int64_t kDecodeMaxChunk = 256;
constexpr int64_t kDecodeWave = 352;       // workgroups a wave (split_geometry)
constexpr int64_t kDecodeOneWaveChunk = 192;  // the longest chunk a one-wave grid takes

// impl=coopmat (flash attention on float16 tensor cores, sdpa_flash_coopmat.comp): a workgroup of 8
// subgroups of 32 per kCoopmatRows query rows of one kv head, after sdpa_update_cache, or beside it
// where it reads k and v themselves (coopmat_keys_from_kv).
constexpr uint32_t kCoopmatWg = 256;      // its define NI
constexpr uint64_t kCoopmatRows = 64;     // its define BR
constexpr uint32_t kCoopmatSubgroup = 32;
// Causal row tiles differ in work (tile i sees about i + 1 tiles of keys), so a grid of more row tiles
// than the largest GPUs have multiprocessors (132) pairs them, a long and a short one a workgroup:
// the longest workgroup then has about the average work. A smaller grid is not paired:
// it would halve the workgroups that run at once.
constexpr uint64_t kCoopmatPairAbove = 132;

// A prefill from position 0 reads exactly the cache rows the update writes from k and v: where those
// are buffers, laid out as the caches are ([S, Hkv, D], texels of 4), the flash kernel binds them in
// the caches' place and the update runs beside it, not before it (Dispatch::concurrent).
bool coopmat_keys_from_kv(const Problem& p, uint64_t pos) {
  return pos == 0 && p.layout("k") == Layout::buffer && p.layout("v") == Layout::buffer;
}

struct SplitGeometry {
  bool decode = false;  // sdpa_decode_partial (else sdpa_split_partial)
  int64_t qblock = 0, qblocks = 0, chunk = 0, chunks = 0;
  int64_t workgroups(int64_t Hkv) const { return chunks * qblocks * Hkv; }
};

// Query blocks of all S * G rows of a kv head up to 32 (a power of two, so that the 64 invocations
// split evenly among the block's queries in the reductions): decode blocks are the G heads that share
// one kv head, prefill blocks reuse each K/V row for 32 queries. Chunks of 32 keys where that leaves
// at most 512 workgroups, else longer chunks, up to 256 and qblock * chunk <= 4096: more chunks
// shorten each workgroup's chain of loads but lengthen the combine's, which reads every chunk's
// partial output (the chunk sizes' times: PERFORMANCE.md).
// The decode partial: blocks of 4 rows; chunks a multiple of 32 keys (its K steps and V batches),
// the shortest (at least 64) that leaves at most kDecodeWave workgroups, or two waves' worth where
// one would need chunks past 192 keys; at most 256. kDecodeWave is about one wave of these workgroups
// on a large GPU: a grid just past a multiple of a wave waits for a mostly idle last wave
// (the measurements behind the constant: PERFORMANCE.md).
SplitGeometry split_geometry(int64_t S, int64_t Hq, int64_t Hkv, int64_t D, int64_t ctx) {
  SplitGeometry g;
  const int64_t rows = S * (Hq / Hkv);
  auto chunks = [&] { return (ctx + g.chunk - 1) / g.chunk; };
  if (rows >= 1 && rows <= kDecodeMaxRows && S <= kDecodeMaxS && D <= 4 * kDecodeMaxD4 && D % 8 == 0) {
    g.decode = true;
    g.qblock = kDecodeQueries;
    g.qblocks = (rows + g.qblock - 1) / g.qblock;
    for (int64_t waves = 1; waves <= 2; ++waves) {
      g.chunk = 64;
      while (g.chunk < kDecodeMaxChunk && chunks() * g.qblocks * Hkv > waves * kDecodeWave) g.chunk += 32;
      if (g.chunk <= kDecodeOneWaveChunk) break;
    }
    g.chunks = chunks();
    return g;
  }
  g.qblock = 1;
  while (g.qblock < kSplitMaxQueries && g.qblock < rows) g.qblock *= 2;
  g.qblocks = (rows + g.qblock - 1) / g.qblock;
  g.chunk = 32;
  while (g.chunk < kSplitMaxChunk && 2 * g.chunk * g.qblock <= kSplitScores && chunks() * g.qblocks * Hkv > 512)
    g.chunk *= 2;
  g.chunks = chunks();
  if (g.chunk < kMinChunk) throw std::logic_error("sdpa: a split chunk shorter than the contract's kMinChunk");
  return g;
}

// The partial's shared arrays, sized for the plan: SCMAX floats of scores, QSTAGE staged query
// texels. Two sizes only, so that the sweep compiles few variants: decode's blocks of a few GQA
// heads get 4 KB of scores (16 KB, prefill's, would cap a large GPU's workgroups per multiprocessor).
std::vector<std::string> split_defines(const SplitGeometry& g) {
  if (g.decode) return {cat("DCHUNK=", kDecodeShared), cat("FMAX=", kDecodeMaxS)};
  if (g.qblock * g.chunk <= 1024) return {"SCMAX=1024", "QSTAGE=256"};
  return {cat("SCMAX=", kSplitScores), "QSTAGE=512"};
}

// out is computed; the caches are updated in place (they start as the inputs' bytes and are compared
// exactly); scores [Hq,S,ctx] is float32 scratch for every dtype, shared by QK, softmax and AV.
// impl=split has no scores: its scratch is each (query row, chunk)'s unnormalised output part_o
// [S*Hq, chunks, D] and (max, sum) part_ml [S*Hq, chunks, 2], float32, sized exactly: the partial
// dispatch writes every element (a chunk past a query's causal limit as max MASKED, sum 0, output 0).
std::vector<BufferSpec> buffers(const Problem& p) {
  const Shape& q = p.inputs.at("q").shape;
  const int64_t ctx = input_pos(p) + q[1];
  using R = BufferSpec::Role;
  std::vector<BufferSpec> v = {{"out", q, p.dtype},
                               {"k_cache", p.inputs.at("k_cache").shape, p.dtype, R::output, "k_cache"},
                               {"v_cache", p.inputs.at("v_cache").shape, p.dtype, R::output, "v_cache"}};
  const std::string impl = p.params.value("impl", "tiled");
  if (impl == "coopmat") return v;  // no scratch: scores and weights live in shared memory
  if (impl == "split") {
    const int64_t chunks = split_geometry(q[1], q[2], p.inputs.at("k").shape[2], q[3], ctx).chunks;
    v.push_back({"part_o", {q[1] * q[2], chunks, q[3]}, DType::f32, R::scratch});
    v.push_back({"part_ml", {q[1] * q[2], chunks, 2}, DType::f32, R::scratch});
  } else {
    v.push_back({"scores", {q[2], q[1], ctx}, DType::f32, R::scratch});
  }
  return v;
}

uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// An ideal kernel reads q, k, v once and the ctx - S cache rows written before this step (K and V),
// writes out and the S new cache rows; the scores scratch is its own business (a fused kernel has
// none). Rows past ctx (stale capacity) are never read.
double bytes_moved(const Problem& p) {
  const Shape& q = p.inputs.at("q").shape;
  const Shape& k = p.inputs.at("k").shape;
  const double es = double(dtype_size(p.dtype)), S = double(q[1]), Hkv = double(k[2]), D = double(q[3]);
  const double pos = double(input_pos(p));
  return es * (2 * S * q[2] * D + 2 * S * Hkv * D + 2 * pos * Hkv * D + 2 * S * Hkv * D);
}

// Causal attention counts the (query, key) pairs that are not masked: query row s sees pos + s + 1
// keys, and each pair costs a D-term dot product (2D) for QK and a D-wide multiply-add (2D) for AV;
// the softmax's exponentials are not counted (as the usual attention FLOP figures do).
double flops(const Problem& p) {
  const Shape& q = p.inputs.at("q").shape;
  const double S = double(q[1]), Hq = double(q[2]), D = double(q[3]), pos = double(input_pos(p));
  const double pairs = S * pos + S * (S + 1) / 2;
  return 4 * D * Hq * pairs;
}

// update_cache -> QK scores -> softmax (in place) -> AV, in one submission. `impl` picks the QK and
// AV kernels: one output element per invocation (naive) or shared-memory tiled GEMMs (tiled). split:
// two dispatches, partial (scores, chunk softmax statistics and weighted V per chunk, in shared
// memory; this step's keys read from k and v) -> combine (rescales each chunk by exp(m_j - M) and
// normalises; 16 invocations per output texel split the chunks, so that long contexts keep the GPU
// busy; it also writes the new cache rows, which nothing reads after it).
// impl=coopmat's scores are in log2 units (exp2 weights, power-of-two rescales): the scale times
// log2(e), which the kernel's push constant rounds to float32 once.
double coopmat_scale_log2(const Problem& p) { return scale_of(p) * 1.4426950408889634; }

std::vector<Dispatch> plan(const Problem& p) {
  const Shape& q = p.inputs.at("q").shape;
  const uint64_t S = uint64_t(q[1]), Hq = uint64_t(q[2]), D4 = uint64_t(q[3]) / 4;
  const uint64_t Hkv = uint64_t(p.inputs.at("k").shape[2]), pos = uint64_t(input_pos(p)), ctx = pos + S;
  const std::string impl = p.params.value("impl", "tiled");
  if (impl != "naive" && impl != "tiled" && impl != "split" && impl != "coopmat")
    throw std::invalid_argument(cat("sdpa: impl '", impl, "' is not naive, tiled, split or coopmat"));
  const std::map<std::string, double> shape = {{"S", double(S)},   {"Hq", double(Hq)},   {"Hkv", double(Hkv)},
                                               {"D4", double(D4)}, {"pos", double(pos)}, {"ctx", double(ctx)},
                                               {"scale", scale_of(p)}};
  auto dispatch = [&](std::string kernel, uint64_t n, std::vector<std::string> defines = {}) {
    Dispatch d{std::move(kernel), std::move(defines), n, shape, {}};
    d.uniforms["n"] = double(n);
    return d;
  };
  std::vector<Dispatch> v;
  if (impl == "split") {
    const SplitGeometry g = split_geometry(int64_t(S), int64_t(Hq), int64_t(Hkv), int64_t(4 * D4), int64_t(ctx));
    const uint32_t wg = g.decode ? kDecodeWg : kSplitWg;
    Dispatch part = dispatch(g.decode ? "sdpa_decode_partial" : "sdpa_split_partial",
                             uint64_t(g.workgroups(int64_t(Hkv))) * wg, split_defines(g));
    part.uniforms["chunk"] = double(g.chunk);
    part.uniforms["chunks"] = double(g.chunks);
    part.uniforms["qblocks"] = double(g.qblocks);
    part.uniforms["qblock"] = double(g.qblock);
    part.workgroup = wg;
    if (g.decode) part.subgroup = kDecodeLanes;
    v.push_back(std::move(part));
    const uint64_t texels = out_texels(p, "out", q);
    Dispatch combine = dispatch("sdpa_split_combine", div_up(texels * kSplitSlices, kSplitWg) * kSplitWg);
    combine.uniforms["n"] = double(texels);
    combine.workgroup = kSplitWg;
    combine.uniforms["chunk"] = double(g.chunk);
    combine.uniforms["chunks"] = double(g.chunks);
    v.push_back(std::move(combine));
    return v;
  }
  v.push_back(dispatch("sdpa_update_cache", S * Hkv * D4));
  if (impl == "coopmat") {
    const uint64_t rtiles = div_up(S * (Hq / Hkv), kCoopmatRows);
    const bool pair = pos < S && rtiles * Hkv > kCoopmatPairAbove;  // causal work uneven, and a grid to spare
    const uint64_t slots = pair ? div_up(rtiles, 2) : rtiles;
    Dispatch f = dispatch("sdpa_flash_coopmat", slots * Hkv * kCoopmatWg);
    f.uniforms.erase("n");
    f.uniforms.erase("scale");
    f.uniforms["scale_log2"] = coopmat_scale_log2(p);  // rounded to float32 once, as emulate() has it
    f.uniforms["rtiles"] = double(rtiles);
    f.uniforms["slots"] = double(slots);
    // The kernel's sizes are compile-time constants (its loops unroll over them); DB: 16-dim blocks of a head.
    f.defines.insert(f.defines.end(),
                     {cat("NI=", kCoopmatWg, "u"), cat("BR=", kCoopmatRows, "u"), cat("DB=", div_up(D4, 4), "u")});
    f.workgroup = kCoopmatWg;
    f.subgroup = kCoopmatSubgroup;
    f.whole_subgroups = true;  // 8 subgroups by id: two a strip of 16 rows
    f.cooperative_matrix = true;
    if (coopmat_keys_from_kv(p, pos)) {
      f.bind = {{"k_cache", "k"}, {"v_cache", "v"}};
      v.back().concurrent = true;  // the update: it writes the caches, which the flash kernel no longer reads
      v.insert(v.begin(), std::move(f));
    } else {
      v.push_back(std::move(f));
    }
    return v;
  }
  // A workgroup's tile: kTiledRows query rows (s*G + g) of one kv head.
  const uint64_t rtiles = div_up(S * (Hq / Hkv), kTiledRows);
  auto tiled = [&](std::string kernel, uint64_t workgroups, std::vector<std::string> defines = {}) {
    Dispatch d = dispatch(std::move(kernel), workgroups * kTiledWg, std::move(defines));
    d.uniforms.erase("n");
    d.uniforms["rtiles"] = double(rtiles);
    d.workgroup = kTiledWg;
    return d;
  };
  if (impl == "naive") {
    v.push_back(dispatch("sdpa_qk_naive", Hq * S * ctx));
  } else {
    Dispatch qk = tiled("sdpa_qk_tiled", div_up(ctx, kTiledCols) * rtiles * Hkv, {"SKIP_MASKED_TILES=1"});
    qk.uniforms["ctiles"] = double(div_up(ctx, kTiledCols));
    qk.rows = int64_t(S * (Hq / Hkv)), qk.cols = int64_t(ctx), qk.tile_rows = kTiledRows, qk.tile_cols = kTiledCols;
    v.push_back(std::move(qk));
  }
  // tpr invocations a row, from 32 up to a workgroup: kSoftmaxKeys keys each where that is enough
  // (the row is then read once into registers), fewer barriers and idle invocations for short rows.
  uint64_t tpr = 32;
  while (tpr < kTiledWg && tpr * kSoftmaxKeys < ctx) tpr *= 2;
  Dispatch softmax = dispatch("sdpa_softmax", div_up(Hq * S, kTiledWg / tpr) * kTiledWg);
  softmax.uniforms["n"] = double(Hq * S);
  softmax.uniforms["tpr"] = double(tpr);
  softmax.workgroup = kTiledWg;
  v.push_back(std::move(softmax));
  if (impl == "naive") {
    v.push_back(dispatch("sdpa_av_naive", out_texels(p, "out", q)));  // one per texel
  } else {
    const uint64_t dtiles = div_up(D4, kTiledCols / 4);
    Dispatch av = tiled("sdpa_av_tiled", rtiles * dtiles * Hkv);
    av.uniforms["dtiles"] = double(dtiles);
    av.rows = int64_t(S * (Hq / Hkv)), av.cols = int64_t(4 * D4), av.tile_rows = kTiledRows, av.tile_cols = kTiledCols;
    v.push_back(std::move(av));
  }
  return v;
}

// Every dtype computes in float32 (u = kUnitF32) from the case's inputs; float16 and bfloat16 are
// storage only (they widen exactly), and the scores scratch is float32 for all of them. Per
// output element (s, h, d): the query sees keys c < n = pos + s + 1 of its kv head; the kernels
// compute all ctx = pos + S scores of the row and MASK those past n. Exact: x_c = scale q.k_c,
// m = max x_c, p_c = exp(x_c - m) / sum, out_d = sum_c p_c v_cd. Worst-case (deterministic) bounds,
// valid for any rounding direction, summation order and fma contraction the specs allow:
//  1. A score is a D-term dot product times scale (itself rounded to float32), rounded:
//     |s_c - x_c| <= ds_c = gamma(D + 2) |scale| sum_i |q_i k_ci|.
//  2. Softmax: t_c = s_c - max s, rounded (by u T_c: |s_c - max s| <= T_c = |x_c - m| + ds_c + max ds,
//     so |t_c| <= (1 + u) T_c), then exp within (3 + 2|t|) ulp (GLSL.std.450 and WGSL alike). The
//     shift max s - m is common to every weight and cancels in the ratio, so weight c is off by a
//     factor 1 + rho_c, |rho_c| <= r_c = expm1(ds_c + u T_c) + (3 + 2(1 + u) T_c) u exp(ds_c + u T_c).
//     The sum (ctx - 1 additions), the reciprocal (2.5 ulp; the sum lies in [1, ctx]) and the
//     products round too: p^_c = p_c (1 + rho_c) / (1 + P) (1 + theta_c), P = sum_c p_c rho_c,
//     |theta_c| <= theta = (1 + 2.5u)(1 + u) / ((1 - gamma(ctx - 1))(1 - (ctx - n) 2^-47)) - 1, the
//     last factor for the masked weights' share of the sum (below).
//  3. AV is a ctx-term dot product: gamma(ctx) sum_c p^_c |v_cd|.
// As sum_c p_c (rho_c - P) = 0, the weights' errors move out_d by sum_c p_c (rho_c - P)(v_cd - out_d)
// / (1 + P); with rbar = sum_c p_c r_c and c1 = theta + gamma(ctx)(1 + theta):
//   |err_d| <= [sum_c p_c (r_c + rbar) |v_cd - out_d| + c1 sum_c p_c (1 + r_c) |v_cd|] / (1 - rbar).
// Whatever the score errors, out_d and the kernel's value are (nearly) convex combinations of v_.d,
// so err_d is also at most max_c v_cd - min_c v_cd + c1 max_c |v_cd|: the smaller of the two holds
// (the first grows without limit once huge logits make the score errors reach units).
// exp(MASKED - max) is within (3 + 2e30) ulp of 0 by the letter of the specs, below 2^-48 (every
// device returns 0): masked weights add (ctx - n) 2^-46 max_c |v_cd|.
// The softmax (naive's and tiled's) never reads the masked scores and stores their weights as
// exactly 0 (a term the bound above allows for, now nil), and reduces max and sum as a tree (any
// order is covered); the tiled AV adds those exact zeros past a row's limit inside its tile (they
// change no sum): the same bound holds.
// impl=split computes the same function in another arithmetic (sdpa_split_*.comp). Key c of chunk
// j (m_j its chunk's max, M = max_j m_j = max s) weighs e_c = exp(s_c - m_j), and the combine
// forms out_d = (sum_j a_j o_jd) * (1 / L), a_j = exp(m_j - M), o_jd = sum_{c in j} e_c v_cd,
// L = sum_j a_j l_j, l_j = sum_{c in j} e_c; keys past the causal limit are skipped (weight 0
// exactly). What changes in the bound, and only that:
//  - Two exps per weight instead of one: the exponents s_c - m_j and m_j - M have one sign, so
//    their roundings total u |s_c - M| <= u T_c as before and |t1| + |t2| <= (1 + u) T_c; the exps'
//    errors a, b (3 + 2|t| ulp each) multiply: |(1 + a)(1 + b) - 1| <= E + E^2/4 with
//    E = (6 + 2(1 + u) T_c) u, which replaces (3 + 2(1 + u) T_c) u in r_c.
//  - A term of L passes at most k - 1 additions in its chunk (k = min(chunk, ctx) keys), the product
//    by a_j and chunks - 1 additions: gamma(k + chunks - 1) replaces gamma(ctx - 1); a term of the
//    numerator one more rounding (its product by v): gamma(k + chunks) replaces gamma(ctx).
//  - The reciprocal and the final product are as before.
// impl=coopmat (sdpa_flash_coopmat.comp) computes the single softmax on float16 tensor cores, in one
// pass, in log2 units: y_c = fl(scale2 * dot_c) with scale2 = scale * log2(e) rounded once (the
// plan), a row's reference R an integer within 1 of its largest y so far (the ceiling of a tile's
// largest y, taken where that passes R by more than 1), e_c = exp2(y_c - R_t) with R_t the reference
// when c's tile came, and every sum multiplied by 2^(R_t - R_t') when the reference rises: exact, so
// e_c ends as exp2(y_c - R) 2^0 for the final R, one exp2 and no other rounding (the kernel's two
// streams of keys each have their own R and meet at the larger, which is within 1 of the row's
// largest y too, scaled by exact powers of two, the same argument);
// out_d = (sum_c e'_c v_cd) * (1 / L), L = sum_c e_c. What changes, and only that:
//  - The scores: one more rounding (scale2) and the change of units, gamma(D + 4) for gamma(D + 2).
//  - The exponent: |R - max_c y_c| < 1, so |y_c - R| ln 2 <= |x_c - M| + ln 2: T_c + ln 2 for T_c, and
//    exp2's (3 + 2|t|)-ulp error counts |t| in log2 units, (T_c + ln 2) / ln 2.
//  - The largest weight is in [1/2, 2], not 1, which the split's term below already allows (L >= 1/2;
//    w = 2^12 e <= 2^13 is a float16 number).
//  - A sum scaled past 2^-126 is dropped (factor 0), one subnormal flushed or rounded at most: at
//    most n 2^-125 max|v_cd| / L of out per rise of R (weights <= 2), at most one a stream's block of
//    16 keys and one a stream where the kernel's two streams of keys meet (the n 2^-124 term, with
//    2^-130 for the accumulators' own flushes).
//  - Every operation's unit roundoff is 2^-23 (kUnitTensorCore): tensor cores may truncate their
//    float32 sums instead of rounding to nearest; the float32 exps, sums and products are covered too.
//  - The products e v need a float16 weight: w = 2^12 e (exact), w' = w_hi + w_lo, w_hi = w cut to
//    float16's 11 significant bits, w_lo = float16(w - w_hi) (the difference is exact), and 1 / L
//    takes 2^-12 (exact). Cut or rounded in any direction, each half is off by less than one float16
//    ulp, and a subnormal half flushed or not (both halves are
//    normal down to e = 2^-15; below, a half is at most 2^-14 w = 2^-26 of e): |2^-12 w' - e_c| <=
//    2^-20 e_c + 2^-26 <= 2^-20 e_c + 2^-24, so out moves by at most 2^-20 sum_c p_c |v_cd| (written
//    2^-19 times the bound's sum_c p_c (1 + r_c) |v_cd|) plus n 2^-24 max|v_cd| / L, L >= 1/2.
//  - The weighted sum has 2n terms (e_hi v and e_lo v): gamma(2 ctx) replaces gamma(ctx).
// tests/test_tolerance_rounding.cpp emulates this arithmetic under every rounding direction.
// The float16 / bfloat16 store and the reference's own rounding are added by derived_tolerance.
// `u`: the unit roundoff of every operation (kUnitF32 here; sdpa_error_bound lets a foreign kernel
// that computes in another precision state its bound with the same derivation). A gamma whose n u
// reaches 1 bounds nothing: the bound is then infinite.
enum class Arithmetic { single, split, coopmat };
constexpr double kUnitTensorCore = 0x1p-23;

Arithmetic arithmetic_of(const Problem& p) {
  const std::string impl = p.params.value("impl", "tiled");
  return impl == "split" ? Arithmetic::split : impl == "coopmat" ? Arithmetic::coopmat : Arithmetic::single;
}

Tensor error_bound(const Problem& p, double u, Arithmetic arith) {
  const bool split = arith == Arithmetic::split, coop = arith == Arithmetic::coopmat;
  auto gamma = [u](double n) { return n * u < 1 ? n * u / (1 - n * u) : INFINITY; };
  const Tensor& qt = p.inputs.at("q");
  const int64_t S = qt.shape[1], Hq = qt.shape[2], D = qt.shape[3], Hkv = p.inputs.at("k").shape[2];
  const int64_t pos = input_pos(p), ctx = pos + S, group = Hq / Hkv;
  const double scale = scale_of(p);
  const Tensor kc = updated(p.inputs.at("k_cache"), p.inputs.at("k"), pos);
  const Tensor vc = updated(p.inputs.at("v_cache"), p.inputs.at("v"), pos);
  const SplitGeometry geo = split ? split_geometry(S, Hq, Hkv, D, ctx) : SplitGeometry{};
  const double k_split = double(std::min(geo.chunk, ctx) + geo.chunks);
  const double g_dot = gamma(double(D + (coop ? 4 : 2)));
  const double lift = coop ? std::log(2.0) : 0.0;       // coopmat: the reference R's extra unit
  const double exp_arg = coop ? 1 / std::log(2.0) : 1;  // coopmat: exp2's |t| in log2 units
  const double g_av = gamma(split ? k_split : coop ? 2.0 * double(ctx) : double(ctx)), g_sum = gamma(split ? k_split - 1 : double(ctx - 1));
  const double exp_ulps = split ? 6 : 3;  // the exps' (3 + 2|t|)-ulp errors along one weight, |t| aside
  Tensor bound(DType::f64, qt.shape);
  double* E = reinterpret_cast<double*>(bound.bytes.data());
  Mat K(ctx, D), V(ctx, D);
  for (int64_t kvh = 0; kvh < Hkv; ++kvh) {
    copy_rows(kc, kvh, K);
    copy_rows(vc, kvh, V);
    const Mat Ka = K.cwiseAbs(), Va = V.cwiseAbs();
    const Eigen::RowVectorXd vabs_all = Va.colwise().maxCoeff();
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t n = pos + s + 1, row = (s * Hq + h) * D;
        Eigen::VectorXd q(D);
        for (int64_t d = 0; d < D; ++d) q[d] = qt.get(row + d);
        const Eigen::ArrayXd x = (scale * (K.topRows(n) * q)).array();
        const Eigen::ArrayXd ds = g_dot * std::fabs(scale) * (Ka.topRows(n) * q.cwiseAbs()).array();
        const double m = x.maxCoeff();
        Eigen::ArrayXd pw = (x - m).exp();
        pw /= pw.sum();
        const Eigen::ArrayXd T = (x - m).abs() + ds + ds.maxCoeff() + lift;
        const Eigen::ArrayXd phi = ds + u * T;
        const Eigen::ArrayXd Ex = (exp_ulps + 2 * (1 + u) * exp_arg * T) * u;
        const Eigen::ArrayXd r = phi.unaryExpr([](double v) { return std::expm1(v); }) +
                                 (split ? Ex + Ex * Ex / 4 : Ex) * phi.exp();
        const double rbar = (pw * r).sum();
        const double theta = (1 + 2.5 * u) * (1 + u) / ((1 - g_sum) * (1 - double(ctx - n) * 0x1p-47)) - 1;
        const double c1 = theta + g_av * (1 + theta);
        const auto Vn = V.topRows(n);
        const Eigen::RowVectorXd out = pw.matrix().transpose() * Vn;
        const Eigen::RowVectorXd t1 = (pw * (r + rbar)).matrix().transpose() * (Vn.rowwise() - out).cwiseAbs();
        const Eigen::RowVectorXd t2 = (pw * (1 + r)).matrix().transpose() * Va.topRows(n);
        for (int64_t d = 0; d < D; ++d) {
          const double derived = rbar < 1 && std::isfinite(c1) ? (t1[d] + c1 * t2[d]) / (1 - rbar) : INFINITY;
          const double hull = Vn.col(d).maxCoeff() - Vn.col(d).minCoeff() + c1 * Va.topRows(n).col(d).maxCoeff();
          // The float16 split of the weights (impl=coopmat): relative 2^-20 and 2^-24 absolute each.
          const double vmax = Va.topRows(n).col(d).maxCoeff();
          const double halves = coop ? 0x1p-19 * t2[d] + double(n) * 0x1p-23 * vmax : 0.0;
          const double dropped = coop ? double((n + 15) / 16 + 2) * (double(n) * 0x1p-124 * vmax + 0x1p-130) : 0.0;
          E[row + d] = std::isfinite(c1) ? std::min(derived, hull) + halves + dropped + double(ctx - n) * 0x1p-46 * vabs_all[d]
                                         : INFINITY;
        }
      }
  }
  return bound;
}

Tolerance tolerance(const Problem& p) {
  const Arithmetic a = arithmetic_of(p);
  return derived_tolerance(p.dtype, {{"out", error_bound(p, a == Arithmetic::coopmat ? kUnitTensorCore : kUnitF32, a)}});
}

// Coverage of the split partials: the causal mask inside each (S > 1: keys to hide; a chunk none
// of query 0's keys reach); and of the flash kernel's paired row tiles.
std::vector<std::string> plan_classes(const Expected& e, const std::vector<Dispatch>& plan) {
  const Case& c = e.c;
  const int64_t S = c.get("S"), pos = c.get("pos", 0);
  std::vector<std::string> out;
  for (const Dispatch& d : plan) {
    if (d.kernel == "sdpa_flash_coopmat" && d.uniforms.at("slots") < d.uniforms.at("rtiles"))
      out.push_back(d.kernel + ": paired row tiles");
    if (d.kernel == "sdpa_flash_coopmat" && d.bind.count("k_cache")) out.push_back(d.kernel + ": keys from k and v");
    auto chunk = d.uniforms.find("chunk");
    if (d.kernel.find("partial") == std::string::npos || chunk == d.uniforms.end() || S == 1) continue;
    out.push_back(d.kernel + ": S>1, keys masked");
    if ((pos + S - 1) / int64_t(chunk->second) > pos / int64_t(chunk->second)) out.push_back(d.kernel + ": a chunk wholly masked");
  }
  return out;
}

std::vector<std::string> expected_plan_classes(const OpDef&) {
  return {"sdpa_split_partial: S>1, keys masked", "sdpa_split_partial: a chunk wholly masked",
          "sdpa_decode_partial: S>1, keys masked", "sdpa_flash_coopmat: paired row tiles",
          "sdpa_flash_coopmat: keys from k and v"};
}

// sdpa impl=split (gpu/vulkan/shaders/sdpa_split_*.comp): scores as vec4 dots accumulated over the
// head-dim texels; per chunk of the plan's length its max m_j, weights exp(s - m_j), their sum in
// workgroup / qblock strided parts added in order, and the weighted V in key order; then the combine's rescaling by
// exp(m_j - M), the sums over chunks in 16 strided slices then over the slices, and the reciprocal.
// The decode partial (sdpa_decode_partial.comp) orders three sums its own way: a chunk's weight sum
// adds its 32 parts in 4 runs of 8, each a tree (chunk_softmax's run_sum); a cached key's score is
// a tree over 8 lanes' partial dots (lane t: texels 2t, 2t + 1, 2t + 16, 2t + 17 in order; pairs t, t ^ 4, then
// ^ 2, then ^ 1), and the weighted V adds keys in 4 strided slices (slice r: keys r, r + 4, ... of
// the chunk, this step's keys after the cached ones), the slices added in order.
std::vector<float> sdpa_split(const Problem& p, const Floats& in, const std::vector<float>& K,
                              const std::vector<float>& V, float scale, bool up) {
  const std::vector<float>& q = in.at("q");
  const int64_t S = p.inputs.at("q").shape[1], Hq = p.inputs.at("q").shape[2], D = p.inputs.at("q").shape[3];
  const int64_t Hkv = p.inputs.at("k").shape[2], pos = p.params.at("input_pos").get<int64_t>();
  int64_t chunk = 0, parts = 0;  // parts: the invocations per query that split the chunk's max and sum
  bool decode = false;
  for (const Dispatch& d : plan(p))
    if (d.kernel == "sdpa_split_partial" || d.kernel == "sdpa_decode_partial") {
      chunk = int64_t(d.uniforms.at("chunk"));
      parts = int64_t(d.workgroup) / int64_t(d.uniforms.at("qblock"));
      decode = d.kernel == "sdpa_decode_partial";
    }
  if (chunk <= 0 || parts <= 0) throw std::runtime_error("sdpa split plan has no partial dispatch");
  auto ex = [up](float t) { return push(float(std::exp(double(t))), 2 + 2 * std::fabs(t), up); };
  std::vector<float> o(q.size());
  for (int64_t h = 0; h < Hq; ++h)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t kvh = h / (Hq / Hkv), n = pos + s + 1, row = s * Hq + h;
      std::vector<float> sc(static_cast<size_t>(n));
      auto texel_dot = [&](int64_t c, int64_t d) {
        const float* a = &q[size_t(row * D + d)];
        const float* k = &K[size_t((c * Hkv + kvh) * D + d)];
        return ((a[0] * k[0] + a[1] * k[1]) + a[2] * k[2]) + a[3] * k[3];
      };
      for (int64_t c = 0; c < n; ++c) {
        float acc = 0.0f;
        if (decode && c < pos) {
          float lane[8] = {};
          for (int64_t t = 0; t < 8; ++t)
            for (int64_t u = 0; u < 4; ++u) {
              const int64_t texel = 2 * (t + 8 * (u / 2)) + u % 2;
              if (4 * texel < D) lane[t] += texel_dot(c, 4 * texel);
            }
          for (int64_t bit : {4, 2, 1})
            for (int64_t t = 0; t < 8; ++t)
              if (!(t & bit)) lane[t] = lane[t ^ bit] = lane[t] + lane[t ^ bit];
          acc = lane[0];
        } else {
          for (int64_t d = 0; d < D; d += 4) acc += texel_dot(c, d);
        }
        sc[size_t(c)] = scale * acc;
      }
      std::vector<float> m, l, od;  // per chunk; od: [chunk][D]
      for (int64_t c0 = 0; c0 < n; c0 += chunk) {
        const int64_t c1 = std::min(n, c0 + chunk);
        float mj = -1.0e30f;
        for (int64_t c = c0; c < c1; ++c) mj = std::max(mj, sc[size_t(c)]);
        std::vector<float> e(size_t(c1 - c0)), part(size_t(parts), 0.0f);
        for (int64_t c = c0; c < c1; ++c) {
          e[size_t(c - c0)] = ex(sc[size_t(c)] - mj);
          part[size_t((c - c0) % parts)] += e[size_t(c - c0)];
        }
        // The decode partial first combines each lane group's 8 parts by shuffles (a tree: partners
        // t ^ 1, ^ 2, ^ 4), then adds the groups in order; the other partial adds the parts in order.
        const int64_t run = decode ? 8 : 1;
        for (int64_t bit = 1; bit < run; bit *= 2)
          for (int64_t k = 0; k < parts; ++k)
            if (!(k & bit)) part[size_t(k)] = part[size_t(k ^ bit)] = part[size_t(k)] + part[size_t(k ^ bit)];
        float lj = part[0];
        for (int64_t k = run; k < parts; k += run) lj += part[size_t(k)];
        m.push_back(mj);
        l.push_back(lj);
        for (int64_t d = 0; d < D; ++d) {
          auto weighted = [&](int64_t c) { return e[size_t(c - c0)] * V[size_t((c * Hkv + kvh) * D + d)]; };
          float acc = 0.0f;
          if (!decode) {
            for (int64_t c = c0; c < c1; ++c) acc += weighted(c);
          } else {
            for (int64_t r = 0; r < 4; ++r) {
              float slice = 0.0f;
              for (int64_t c = c0 + r; c < c1; c += 4) slice += weighted(c);
              acc = r == 0 ? slice : acc + slice;
            }
          }
          od.push_back(acc);
        }
      }
      // The combine: 16 slices of the chunks (slice k: chunks k, k + 16, ...), added in slice order.
      const float M = *std::max_element(m.begin(), m.end());
      float L = 0.0f;
      std::vector<float> acc(size_t(D), 0.0f);
      for (size_t k = 0; k < 16; ++k) {
        float Lk = 0.0f;
        std::vector<float> ok(size_t(D), 0.0f);
        for (size_t j = k; j < m.size(); j += 16) {
          const float a = ex(m[j] - M);
          Lk += a * l[j];
          for (int64_t d = 0; d < D; ++d) ok[size_t(d)] += a * od[j * size_t(D) + size_t(d)];
        }
        L = k == 0 ? Lk : L + Lk;
        for (int64_t d = 0; d < D; ++d) acc[size_t(d)] = k == 0 ? ok[size_t(d)] : acc[size_t(d)] + ok[size_t(d)];
      }
      const float inv = push(1.0f / L, 1, up);
      for (int64_t d = 0; d < D; ++d) o[size_t(row * D + d)] = acc[size_t(d)] * inv;
    }
  return o;
}

// sdpa impl=coopmat (sdpa_flash_coopmat.comp): scores as tiled's times scale2 (log2 units; the
// tensor cores' summation order is theirs: emulated in order). The keys in two streams, blocks of 16
// keys taken in turn (keys c with c / 16 even, and odd), each a flash attention of its own, block by
// block: R the ceiling of the block's largest score where that passes R by more than 1, its sums so
// far times 2^(R_old - R) (0 past 2^-126) where R rises, e = exp2(y - R); l in 16 partial sums, the
// one of column j taking the stream's keys c with c % 16 = j in key order (and the rises' factors),
// then columns 0..7 and 8..15 each in order, then the two; the weighted sum adds w_hi v and w_lo v
// (w = 4096 e, w_hi = w cut to 11 significant bits, w_lo = float16(w - w_hi)) in key order. At the
// end both streams' l and sums go to the larger R the same way (f0, f1), l = l0 f0 + l1 f1,
// out = (sum0 f0 + sum1 f1) * (1 / l) / 4096.
// The score of query row `row` (s * Hq + h) against key c of kv head kvh: a float32 dot product in
// head-dim order, then the scale (naive's, tiled's and coopmat's order alike).
float scaled_dot(const std::vector<float>& q, const std::vector<float>& K, int64_t row, int64_t c, int64_t kvh,
                 int64_t Hkv, int64_t D, float scale) {
  float acc = 0.0f;
  for (int64_t d = 0; d < D; ++d) acc += q[size_t(row * D + d)] * K[size_t((c * Hkv + kvh) * D + d)];
  return scale * acc;
}

std::vector<float> sdpa_coopmat(const Problem& p, const Floats& in, const std::vector<float>& K,
                                const std::vector<float>& V, bool up) {
  const std::vector<float>& q = in.at("q");
  const int64_t S = p.inputs.at("q").shape[1], Hq = p.inputs.at("q").shape[2], D = p.inputs.at("q").shape[3];
  const int64_t Hkv = p.inputs.at("k").shape[2], pos = p.params.at("input_pos").get<int64_t>();
  auto f16 = [](float v) { return f16_to_f32(f32_to_f16(v)); };
  const float scale2 = float(coopmat_scale_log2(p));
  std::vector<float> o(q.size());
  for (int64_t h = 0; h < Hq; ++h)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t kvh = h / (Hq / Hkv), n = pos + s + 1, row = s * Hq + h;
      std::vector<float> y(static_cast<size_t>(n));
      for (int64_t c = 0; c < n; ++c) y[size_t(c)] = scaled_dot(q, K, row, c, kvh, Hkv, D, scale2);
      constexpr float kMasked = -1.0e30f;
      auto rescale = [](float R, float Rn) {
        return R == Rn ? 1.0f : R == kMasked || R - Rn < -126.0f ? 0.0f : std::ldexp(1.0f, int(R - Rn));
      };
      std::array<float, 2> R{kMasked, kMasked}, l{};
      std::array<std::vector<float>, 2> acc{std::vector<float>(size_t(D), 0.0f), std::vector<float>(size_t(D), 0.0f)};
      for (size_t st = 0; st < 2; ++st) {
        std::array<float, 16> L{};
        for (int64_t c0 = 16 * int64_t(st); c0 < n; c0 += 32) {
          const int64_t c1 = std::min(c0 + 16, n);
          const float top = *std::max_element(y.begin() + c0, y.begin() + c1);
          const float Rn = top - R[st] > 1.0f ? std::ceil(top) : R[st];
          const float f = rescale(R[st], Rn);
          R[st] = Rn;
          for (float& a : L) a *= f;
          for (float& a : acc[st]) a *= f;
          for (int64_t c = c0; c < c1; ++c) {
            const float t = y[size_t(c)] - R[st];
            const float e = push(float(std::exp2(double(t))), 2 + 2 * std::fabs(t), up);
            L[size_t(c % 16)] += e;
            const float w = 4096.0f * e;
            const float hi = std::bit_cast<float>(std::bit_cast<uint32_t>(w) & 0xFFFFE000u), lo = f16(w - hi);
            for (int64_t d = 0; d < D; ++d) {
              const float v = V[size_t((c * Hkv + kvh) * D + d)];
              acc[st][size_t(d)] += hi * v;
              acc[st][size_t(d)] += lo * v;
            }
          }
        }
        float l0 = 0.0f, l1 = 0.0f;
        for (size_t j = 0; j < 8; ++j) l0 += L[j];
        for (size_t j = 8; j < 16; ++j) l1 += L[j];
        l[st] = l0 + l1;
      }
      const float Rt = std::max(R[0], R[1]), f0 = rescale(R[0], Rt), f1 = rescale(R[1], Rt);
      const float inv = push(1.0f / (l[0] * f0 + l[1] * f1), 1, up);
      for (int64_t d = 0; d < D; ++d)
        o[size_t(row * D + d)] = (acc[0][size_t(d)] * f0 + acc[1][size_t(d)] * f1) * (inv * (1.0f / 4096.0f));
    }
  return o;
}

// The kernels' float32 arithmetic: naive's and tiled's scores, softmax and AV, split's or coopmat's (above).
Floats emulate(const Problem& p, const Floats& in, bool up) {
  auto shape = [&](const char* name) -> const Shape& { return p.inputs.at(name).shape; };
  const std::vector<float>& q = in.at("q");
  const int64_t S = shape("q")[1], Hq = shape("q")[2], D = shape("q")[3], Hkv = shape("k")[2];
  const int64_t pos = p.params.at("input_pos").get<int64_t>(), ctx = pos + S;
  const float scale = float(p.params.contains("scale") ? p.params.at("scale").get<double>() : 1.0 / std::sqrt(double(D)));
  // The caches after update_cache: rows pos .. pos+S-1 from k and v.
  std::vector<float> K = in.at("k_cache"), V = in.at("v_cache");
  std::copy(in.at("k").begin(), in.at("k").end(), K.begin() + pos * Hkv * D);
  std::copy(in.at("v").begin(), in.at("v").end(), V.begin() + pos * Hkv * D);
  if (p.params.value("impl", "tiled") == "split") return {{"out", sdpa_split(p, in, K, V, scale, up)}};
  if (p.params.value("impl", "tiled") == "coopmat") return {{"out", sdpa_coopmat(p, in, K, V, up)}};
  std::vector<float> o(q.size()), w(static_cast<size_t>(ctx));
  for (int64_t h = 0; h < Hq; ++h)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t kvh = h / (Hq / Hkv);
      for (int64_t c = 0; c < ctx; ++c) {
        if (c > pos + s) {
          w[size_t(c)] = -1.0e30f;
          continue;
        }
        w[size_t(c)] = scaled_dot(q, K, s * Hq + h, c, kvh, Hkv, D, scale);
      }
      float m = w[0];
      for (int64_t c = 1; c < ctx; ++c) m = std::max(m, w[size_t(c)]);
      float sum = 0.0f;
      for (int64_t c = 0; c < ctx; ++c) {
        const float t = w[size_t(c)] - m;
        // exp in float64, rounded in the current direction, then pushed: within 3 + 2|t| ulps.
        w[size_t(c)] = c > pos + s ? 0.0f : push(float(std::exp(double(t))), 2 + 2 * std::fabs(t), up);
        sum += w[size_t(c)];
      }
      const float inv = push(1.0f / sum, 1, up);
      for (int64_t c = 0; c < ctx; ++c) w[size_t(c)] *= inv;
      for (int64_t d = 0; d < D; ++d) {
        float acc = 0.0f;
        for (int64_t c = 0; c < ctx; ++c) acc += w[size_t(c)] * V[size_t((c * Hkv + kvh) * D + d)];
        o[size_t((s * Hq + h) * D + d)] = acc;
      }
    }
  return {{"out", o}};
  }

// The default suite's attention rows: decode at two context lengths, and a causal prefill.
const std::vector<BenchWorkload> kBench = {
    {"sdpa decode f16 Hq32 Hkv8 D128 ctx4096", "sdpa/S=1,Hq=32,Hkv=8,D=128,pos=4095/float16/buffer/seed=8",
     "sdpa/S=1,Hq=32,Hkv=8,D=128,pos=255/float16/buffer/seed=8"},
    {"sdpa decode f16 Hq32 Hkv8 D128 ctx32768", "sdpa/S=1,Hq=32,Hkv=8,D=128,pos=32767/float16/buffer/seed=8",
     "sdpa/S=1,Hq=32,Hkv=8,D=128,pos=1023/float16/buffer/seed=8"},
    {"sdpa prefill f16 Hq32 Hkv8 D128 S512 causal", "sdpa/S=512,Hq=32,Hkv=8,D=128,pos=0/float16/buffer/seed=8",
     "sdpa/S=32,Hq=32,Hkv=8,D=128,pos=0/float16/buffer/seed=8"},
};

}  // namespace

OpContract sdpa_contract();

const OpDef& sdpa_op() {
  static const OpDef op{sdpa_contract(), {buffers, plan, tolerance, emulate, bytes_moved, flops, kBench, plan_classes, expected_plan_classes}};
  return op;
}

Tensor sdpa_error_bound(const Problem& p, double unit_roundoff) { return error_bound(p, unit_roundoff, Arithmetic::single); }

}  // namespace ts
