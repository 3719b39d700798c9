// sdpa: scaled dot-product attention with KV-cache update (LLM decode and prefill), SPEC "sdpa".
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/runner.h"
#include "reference/common.h"
#include "reference/ops.h"

namespace ts {
namespace {

const char* const kInputs[] = {"q", "k", "v", "k_cache", "v_cache"};
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

Problem make(const Case& c) {
  const int64_t B = c.get("B", 1), S = c.get("S"), Hq = c.get("Hq"), Hkv = c.get("Hkv"), D = c.get("D");
  const int64_t pos = c.get("pos", 0), Cmax = c.get("Cmax", std::max<int64_t>(pos, 0) + S + 4), Hc = c.get("Hc", Hkv), Dc = c.get("Dc", D);
  const double L = double(c.get("logit_scale", 1));
  const std::string impl = c.word("impl", "tiled");
  Problem p;
  p.dtype = c.dtype;
  p.storage = c.storage;
  auto data = [&](const char* name, Shape s, double lo = -1, double hi = 1) {
    p.inputs[name] = uniform_tensor(input_dtype(c, name), std::move(s), c.seed, name, lo, hi);
  };
  data("q", {B, S, Hq, D}, -L, L);
  data("k", {B, c.get("Sk", S), Hkv, c.get("Dk", D)});
  data("v", {B, c.get("Sv", S), c.get("Hv", Hkv), c.get("Dv", D)});
  data("k_cache", {B, Cmax, Hc, Dc});
  data("v_cache", {B, c.get("Cv", Cmax), Hc, Dc});
  p.params["input_pos"] = pos;
  if (c.has("scale_milli")) p.params["scale"] = double(c.get("scale_milli")) / 1000.0;
  p.params["impl"] = impl;
  return p;
}

int64_t input_pos(const Problem& p) { return p.params.at("input_pos").get<int64_t>(); }

double scale_of(const Problem& p) {
  const double D = double(p.inputs.at("q").shape[3]);
  return p.params.contains("scale") ? p.params.at("scale").get<double>() : 1.0 / std::sqrt(D);
}

// The product of the factors, saturating at int64 max (every limit checked with it is far below).
int64_t product(std::initializer_list<int64_t> f) {
  int64_t r = 1;
  for (int64_t x : f)
    if (__builtin_mul_overflow(r, x, &r)) return std::numeric_limits<int64_t>::max();
  return r;
}

std::optional<Violation> validate(const Problem& p) {
  Contract c("sdpa");
  if (!has_inputs(c, p, {"q", "k", "v", "k_cache", "v_cache"})) return c.result();
  for (const char* name : kInputs) require_rank(c, p, name, 4);
  if (c.failed()) return c.result();
  auto shape = [&](const char* name) -> const Shape& { return p.inputs.at(name).shape; };
  for (const char* name : kInputs)
    c.require(shape(name)[0] == 1, "batch_is_1", name, " batch (", shape(name)[0], ") must be 1");
  const Shape &q = shape("q"), &k = shape("k"), &kc = shape("k_cache");
  const int64_t S = q[1], Hq = q[2], D = q[3], Hkv = k[2], Cmax = kc[1];
  c.require(S >= 1, "dims_positive", "seq_len S (", S, ") must be at least 1");
  c.require(Hq >= 1, "dims_positive", "q heads Hq (", Hq, ") must be at least 1");
  c.require(Hkv >= 1, "dims_positive", "kv heads Hkv (", Hkv, ") must be at least 1");
  c.require(D >= 1, "dims_positive", "head_dim (", D, ") must be at least 1");
  c.require(D % 4 == 0, "head_dim_multiple_of_4", "head_dim (", D, ") must be a multiple of 4");
  for (const char* name : {"k", "v", "k_cache", "v_cache"})
    c.require(shape(name)[3] == D, "head_dim_match", name, " head_dim (", shape(name)[3], ") must equal q head_dim (", D, ")");
  for (const char* name : {"k", "v"})
    c.require(shape(name)[1] == S, "kv_seq_match", name, " seq_len (", shape(name)[1], ") must equal q seq_len (", S, ")");
  for (const char* name : {"v", "k_cache", "v_cache"})
    c.require(shape(name)[2] == Hkv, "kv_heads_match", name, " heads (", shape(name)[2], ") must equal k heads (", Hkv, ")");
  c.require(shape("v_cache")[1] == Cmax, "cache_shapes_match", "v_cache capacity (", shape("v_cache")[1],
            ") must equal k_cache capacity (", Cmax, ")");
  if (c.failed()) return c.result();
  c.require(Hq % Hkv == 0, "heads_divisible", "q heads (", Hq, ") must be a multiple of kv heads (", Hkv, ")");
  const Params::const_iterator at = p.params.find("input_pos");
  const bool pos_int = at != p.params.end() && at->is_number_integer();
  const int64_t pos = pos_int ? at->get<int64_t>() : -1;
  c.require(pos_int, "input_pos_nonnegative", "input_pos must be given as an integer");
  c.require(pos >= 0 || !pos_int, "input_pos_nonnegative", "input_pos (", pos, ") must be >= 0");
  // Written as pos <= Cmax - S: input_pos may come from a golden file's params, and pos + S could overflow.
  c.require(pos < 0 || pos <= Cmax - S, "cache_capacity", "input_pos + S (", pos, " + ", S,
            ") must not exceed the cache capacity (", Cmax, ")");
  if (c.failed()) return c.result();
  // Kernels index with 32-bit unsigned integers, and the naive QK grid has one invocation per score.
  const int64_t ctx = pos + S, limit = int64_t(1) << 32;
  const int64_t scores = product({Hq, S, ctx});
  c.require(scores < limit, "scratch_fits_32bit", "scores scratch Hq*S*ctx (", Hq, "*", S, "*", ctx, " = ", scores,
            ") must be below 2^32");
  for (const char* name : {"q", "k_cache"})
    c.require(product({shape(name)[1], shape(name)[2], D}) < limit, "scratch_fits_32bit", name, " ",
              shape_str(shape(name)), " must have fewer than 2^32 elements");
  if (p.params.value("impl", "tiled") == "split" && !c.failed() && Hq % Hkv == 0) {
    const int64_t parts = product({Hq, S, split_geometry(S, Hq, Hkv, D, ctx).chunks, D});
    c.require(parts < limit, "scratch_fits_32bit", "split partial outputs Hq*S*chunks*D (", Hq, "*", S, "*",
              split_geometry(S, Hq, Hkv, D, ctx).chunks, "*", D, " = ", parts, ") must be below 2^32");
  }
  require_same_dtype(c, p);
  return c.result();
}

using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Rows [0, m.rows()) of t [1,R,H,D] at head h, as the rows of m.
void copy_rows(const Tensor& t, int64_t h, Mat& m) {
  const int64_t H = t.shape[2], D = t.shape[3];
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int64_t d = 0; d < D; ++d) m(r, d) = t.get((r * H + h) * D + d);
}

// The caches after step 1: rows input_pos .. input_pos+S-1 replaced by k and v, bit for bit.
Tensor updated(const Tensor& cache, const Tensor& rows, int64_t pos) {
  Tensor t = cache;
  const size_t row_bytes = rows.nbytes() / size_t(std::max<int64_t>(rows.shape[1], 1));
  std::memcpy(t.bytes.data() + size_t(pos) * row_bytes, rows.bytes.data(), rows.nbytes());
  return t;
}

Tensors reference(const Problem& p) {
  const Tensor& qt = p.inputs.at("q");
  const int64_t S = qt.shape[1], Hq = qt.shape[2], D = qt.shape[3], Hkv = p.inputs.at("k").shape[2];
  const int64_t pos = input_pos(p), ctx = pos + S, group = Hq / Hkv;
  const double scale = scale_of(p);
  Tensor kc = updated(p.inputs.at("k_cache"), p.inputs.at("k"), pos);
  Tensor vc = updated(p.inputs.at("v_cache"), p.inputs.at("v"), pos);
  Tensor out(DType::f64, qt.shape);
  Mat K(ctx, D), V(ctx, D), Q(S, D);
  Mat qrows(S * Hq, D);
  for (int64_t r = 0; r < S * Hq; ++r)
    for (int64_t d = 0; d < D; ++d) qrows(r, d) = qt.get(r * D + d);
  for (int64_t kvh = 0; kvh < Hkv; ++kvh) {
    copy_rows(kc, kvh, K);
    copy_rows(vc, kvh, V);
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
      for (int64_t s = 0; s < S; ++s) Q.row(s) = qrows.row(s * Hq + h);
      Mat w = scale * Q * K.transpose();
      for (int64_t s = 0; s < S; ++s) {
        // Causal: query s sits at position input_pos + s and sees keys up to it. Stable softmax:
        // subtracting the row max keeps exp() in range for any logit magnitude.
        const int64_t seen = pos + s + 1;
        auto row = w.row(s);
        row.tail(ctx - seen).setZero();
        const double m = row.head(seen).maxCoeff();
        row.head(seen) = (row.head(seen).array() - m).exp();
        row.head(seen) /= row.head(seen).sum();
      }
      Mat o = w * V;
      for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d) out.set((s * Hq + h) * D + d, o(s, d));
    }
  }
  return {{"out", std::move(out)}, {"k_cache", std::move(kc)}, {"v_cache", std::move(vc)}};
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
  if (p.params.value("impl", "tiled") == "split") {
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
std::vector<Dispatch> plan(const Problem& p) {
  const Shape& q = p.inputs.at("q").shape;
  const uint64_t S = uint64_t(q[1]), Hq = uint64_t(q[2]), D4 = uint64_t(q[3]) / 4;
  const uint64_t Hkv = uint64_t(p.inputs.at("k").shape[2]), pos = uint64_t(input_pos(p)), ctx = pos + S;
  const std::string impl = p.params.value("impl", "tiled");
  if (impl != "naive" && impl != "tiled" && impl != "split")
    throw std::invalid_argument(cat("sdpa: impl '", impl, "' is not naive, tiled or split"));
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
// tests/test_tolerance_rounding.cpp emulates this arithmetic under every rounding direction.
// The float16 / bfloat16 store and the reference's own rounding are added by derived_tolerance.
// `u`: the unit roundoff of every operation (kUnitF32 here; sdpa_error_bound lets a foreign kernel
// that computes in another precision state its bound with the same derivation). A gamma whose n u
// reaches 1 bounds nothing: the bound is then infinite.
Tensor error_bound(const Problem& p, double u, bool split) {
  auto gamma = [u](double n) { return n * u < 1 ? n * u / (1 - n * u) : INFINITY; };
  const Tensor& qt = p.inputs.at("q");
  const int64_t S = qt.shape[1], Hq = qt.shape[2], D = qt.shape[3], Hkv = p.inputs.at("k").shape[2];
  const int64_t pos = input_pos(p), ctx = pos + S, group = Hq / Hkv;
  const double scale = scale_of(p);
  const Tensor kc = updated(p.inputs.at("k_cache"), p.inputs.at("k"), pos);
  const Tensor vc = updated(p.inputs.at("v_cache"), p.inputs.at("v"), pos);
  const SplitGeometry geo = split ? split_geometry(S, Hq, Hkv, D, ctx) : SplitGeometry{};
  const double k_split = double(std::min(geo.chunk, ctx) + geo.chunks);
  const double g_dot = gamma(double(D + 2));
  const double g_av = gamma(split ? k_split : double(ctx)), g_sum = gamma(split ? k_split - 1 : double(ctx - 1));
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
        const Eigen::ArrayXd T = (x - m).abs() + ds + ds.maxCoeff();
        const Eigen::ArrayXd phi = ds + u * T;
        const Eigen::ArrayXd Ex = (exp_ulps + 2 * (1 + u) * T) * u;
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
          E[row + d] = std::isfinite(c1) ? std::min(derived, hull) + double(ctx - n) * 0x1p-46 * vabs_all[d] : INFINITY;
        }
      }
  }
  return bound;
}

Tolerance tolerance(const Problem& p) {
  return derived_tolerance(p.dtype, {{"out", error_bound(p, kUnitF32, p.params.value("impl", "tiled") == "split")}});
}

std::vector<Case> edge_cases(DType t) {
  auto mk = [t](int64_t S, int64_t Hq, int64_t Hkv, int64_t D, int64_t pos, const char* impl) {
    Case c{"sdpa", {}, t, "buffer", uint64_t(2000 + S * 7 + Hq * 13 + Hkv * 17 + D * 19 + pos * 23)};
    c.set("S", S).set("Hq", Hq).set("Hkv", Hkv).set("D", D).set("pos", pos).set("impl", impl);
    return c;
  };
  std::vector<Case> v = {
      // Decode (S = 1) at positions 0, 1, 4095, 8191: small D keeps the long contexts cheap.
      mk(1, 1, 1, 4, 0, "naive"),
      mk(1, 2, 1, 4, 0, "tiled"),        // MQA, ctx 1: a single ragged column tile
      mk(1, 2, 1, 4, 1, "naive"),
      mk(1, 2, 1, 8, 1, "tiled"),
      mk(1, 4, 2, 8, 4095, "tiled"),     // ctx 4096: no ragged tail
      mk(1, 4, 2, 4, 4095, "naive"),
      mk(1, 2, 2, 4, 8191, "naive"),     // ctx 8192
      mk(1, 8, 1, 8, 8191, "tiled"),     // MQA 8:1 at ctx 8192
      mk(1, 32, 8, 128, 40, "tiled"),    // Llama-3 8B decode head shape, GQA 4:1, ctx 41
      mk(1, 32, 8, 128, 40, "naive"),
      // Prefill, and chunked prefill at input_pos > 0 (the causal mask cuts through tiles).
      mk(7, 6, 2, 64, 0, "naive"),       // GQA 3:1
      mk(7, 6, 2, 64, 0, "tiled"),
      mk(9, 8, 1, 8, 0, "tiled"),        // MQA 8:1
      mk(5, 4, 4, 128, 3, "naive"),      // 1:1, ctx 8
      mk(5, 4, 4, 128, 3, "tiled"),
      mk(6, 8, 1, 16, 13, "tiled"),      // ctx 19
      mk(10, 16, 2, 32, 22, "tiled"),    // GQA 8:1, ctx 32: no ragged tail
      mk(11, 4, 1, 12, 5, "naive"),      // D/4 odd, ctx 16
      mk(11, 4, 1, 12, 6, "tiled"),      // ctx 17
      mk(3, 2, 1, 4, 2, "tiled").set("scale_milli", 125),
      mk(2, 4, 2, 4, 5, "tiled").set("Cmax", 7),  // a full cache: no stale rows
      mk(2, 8, 2, 4, 5, "naive"),        // GQA 4:1, small enough for a committed golden
      mk(3, 16, 2, 4, 1, "tiled"),       // GQA 8:1, likewise
      // Scaled scores beyond 80: exp() of a raw float32 score overflows; a stable softmax does not.
      mk(4, 2, 1, 8, 12, "tiled").set("logit_scale", 300),
      mk(4, 2, 1, 8, 12, "naive").set("logit_scale", 300),
      // Layouts: q/out are [1,S,Hq,D] = [C,H,W] of the texel model; the caches stay buffers.
      in_storage(mk(5, 4, 2, 8, 3, "naive"), "texture3d_w;k_cache=buffer;v_cache=buffer"),
      in_storage(mk(3, 6, 3, 12, 1, "tiled"), "buffer;k=texture3d_c;q=texture3d_h;v=texture3d_h"),
      in_storage(mk(5, 5, 5, 4, 0, "naive"), "texture3d_c;k_cache=buffer;out=texture3d_w;v_cache=buffer"),
      in_storage(mk(2, 3, 1, 16, 6, "tiled"), "buffer;out=texture3d_w;q=texture3d_c"),
      // split: one chunk of one key; ragged chunks (ctx 201 = 6 x 32 + 9); 256 chunks of a long
      // context; decode chunks that are not a power of two (96 keys, the last of 24) and decode in
      // two waves (chunks of 192, 688 workgroups: split_geometry); the Llama-3 decode shape (GQA 4:1
      // in one workgroup); prefill whose query blocks span positions (GQA 3:1: 21 queries in a block
      // of 32; 280 in 9 blocks, the last ragged) and whose causal limit cuts through chunks.
      mk(1, 4, 1, 8, 0, "split"),
      mk(1, 8, 2, 16, 200, "split"),
      mk(1, 2, 1, 4, 8191, "split"),
      mk(1, 8, 8, 8, 2999, "split"),
      mk(1, 16, 16, 8, 8191, "split"),
      mk(1, 32, 8, 128, 100, "split"),
      mk(7, 6, 2, 64, 0, "split"),
      mk(70, 4, 1, 8, 30, "split"),
      mk(4, 2, 1, 8, 12, "split").set("logit_scale", 300),
      in_storage(mk(3, 6, 3, 12, 1, "split"), "buffer;k=texture3d_c;q=texture3d_h;v=texture3d_h"),
      in_storage(mk(2, 3, 1, 16, 6, "split"), "buffer;out=texture3d_w;q=texture3d_c"),
  };
  // Invalid: each rule broken on its own.
  v.push_back(mk(1, 2, 2, 4, 3, "tiled").set("B", 2));
  v.push_back(mk(0, 2, 2, 4, 3, "tiled"));
  v.push_back(mk(1, 2, 2, 6, 3, "tiled"));
  v.push_back(mk(2, 2, 2, 4, 3, "naive").set("Dk", 8));
  v.push_back(mk(2, 2, 2, 4, 3, "naive").set("Dc", 8));
  v.push_back(mk(2, 2, 2, 4, 3, "tiled").set("Sk", 3));
  v.push_back(mk(2, 2, 2, 4, 3, "tiled").set("Sv", 1));
  v.push_back(mk(2, 4, 2, 4, 3, "tiled").set("Hv", 4));
  v.push_back(mk(2, 4, 2, 4, 3, "tiled").set("Hc", 1));
  v.push_back(mk(2, 2, 2, 4, 3, "naive").set("Cv", 6));
  v.push_back(mk(2, 3, 2, 4, 3, "tiled"));
  v.push_back(mk(2, 2, 2, 4, -1, "tiled"));
  v.push_back(mk(4, 2, 2, 4, 3, "tiled").set("Cmax", 6));
  // Hq*S*ctx = 2^16 * 1 * 2^16: the smallest tensors that can overflow the scores' 32-bit index.
  v.push_back(mk(1, 65536, 1, 4, 65535, "naive").set("Cmax", 65536));
  v.push_back(mk(2, 2, 1, 4, 3, "tiled").set("k_cache_dtype", t == DType::f16 ? "float32" : "float16"));
  v.push_back(in_storage(mk(2, 2, 2, 4, 3, "tiled").set("Sk", 3), "texture3d_w;k_cache=buffer;v_cache=buffer"));
  return v;
}

// scores: 8 x 64 x 32,775 = 16,780,800 elements, one naive QK invocation each (the grid folds).
Case large_case() {
  Case c{"sdpa", {}, DType::f32, "buffer", 7};
  return c.set("S", 64).set("Hq", 8).set("Hkv", 1).set("D", 4).set("pos", 32711).set("impl", "naive");
}

// Coverage: the implementations, a ragged context tile, chunked prefill, large logits, and the
// causal mask inside each split partial (S > 1: keys to hide; a chunk none of query 0's keys reach).
std::vector<std::string> classes(const Expected& e, const std::vector<Dispatch>& plan) {
  const Case& c = e.c;
  const int64_t S = c.get("S"), pos = c.get("pos", 0);
  std::vector<std::string> out = {"impl=" + c.word("impl", "tiled")};
  if ((pos + S) % 4 != 0) out.push_back("ctx%4!=0");
  if (S > 1 && pos > 0) out.push_back("chunked prefill (S>1, pos>0)");
  if (c.has("logit_scale")) out.push_back("large logits");
  for (const Dispatch& d : plan) {
    auto chunk = d.uniforms.find("chunk");
    if (d.kernel.find("partial") == std::string::npos || chunk == d.uniforms.end() || S == 1) continue;
    out.push_back(d.kernel + ": S>1, keys masked");
    if ((pos + S - 1) / int64_t(chunk->second) > pos / int64_t(chunk->second)) out.push_back(d.kernel + ": a chunk wholly masked");
  }
  return out;
}

std::vector<std::string> expected_classes(const OpDef&) {
  return {"impl=naive", "impl=tiled", "ctx%4!=0", "chunked prefill (S>1, pos>0)", "large logits",
          "sdpa_split_partial: S>1, keys masked", "sdpa_split_partial: a chunk wholly masked",
          "sdpa_decode_partial: S>1, keys masked"};
}

}  // namespace

const OpDef& sdpa_op() {
  static const OpDef op{
      "sdpa",
      "scaled dot-product attention with KV-cache update (decode and prefill)",
      {"q", "k", "v", "k_cache", "v_cache"},
      {"out", "k_cache", "v_cache"},
      {{"input_rank", "q, k, v are [1,S,H,D], the caches [1,Cmax,Hkv,D]"},
       {"batch_is_1", "every batch dimension is 1"},
       {"dims_positive", "S, Hq, Hkv and D are at least 1"},
       {"head_dim_multiple_of_4", "D % 4 == 0"},
       {"head_dim_match", "k, v and both caches have q's D"},
       {"kv_seq_match", "k and v have q's S"},
       {"kv_heads_match", "v and both caches have k's Hkv"},
       {"cache_shapes_match", "v_cache has k_cache's capacity Cmax"},
       {"heads_divisible", "Hq % Hkv == 0"},
       {"input_pos_nonnegative", "params.input_pos is an integer >= 0"},
       {"cache_capacity", "input_pos + S <= Cmax"},
       {"scratch_fits_32bit", "Hq*S*ctx scores and every tensor below 2^32 elements (32-bit indexing)"},
       {"dtypes_equal", "every input has the case dtype"}},
      {DType::f32, DType::f16, DType::bf16},
      make, validate, reference, buffers, plan, tolerance, edge_cases, gen_sdpa, large_case,
      {int_var("S", 0, kMaxDim, "", "query rows (1: decode)"),
       int_var("Hq", 0, kMaxDim, "", "query heads"),
       int_var("Hkv", 0, kMaxDim, "", "key/value heads (GQA: Hq/Hkv query heads share one; MQA: 1)"),
       int_var("D", 0, kMaxDim, "", "head dim"),
       int_var("pos", -kMaxPos, kMaxPos, "0", "input_pos: the cache row of the first query (negative: invalid)"),
       int_var("Cmax", 0, kMaxPos, "pos+S+4", "cache rows (the default leaves stale rows past ctx that must not be read)"),
       word_var("impl", {"naive", "tiled", "split"}, "tiled",
                "kernels: one element per invocation, shared-memory tiled GEMMs, or split context (flash-decoding)"),
       int_var("scale_milli", -1000000, 1000000, "1000/sqrt(D)", "scale = scale_milli / 1000"),
       int_var("logit_scale", 1, 100000, "1", "q drawn from [-L, L] instead of [-1, 1] (large logits)"),
       // Invalid cases override one shape at a time:
       int_var("B", 0, kMaxDim, "1", "batch of every tensor"),
       int_var("Sk", 0, kMaxDim, "S", "k rows"),
       int_var("Sv", 0, kMaxDim, "S", "v rows"),
       int_var("Hv", 0, kMaxDim, "Hkv", "v heads"),
       int_var("Hc", 0, kMaxDim, "Hkv", "heads of both caches"),
       int_var("Dk", 0, kMaxDim, "D", "k head dim"),
       int_var("Dv", 0, kMaxDim, "D", "v head dim"),
       int_var("Dc", 0, kMaxDim, "D", "head dim of both caches"),
       int_var("Cv", 0, kMaxPos, "Cmax", "v_cache rows")},
      // q, k, v are only read (any layout); the tiled AV kernel stores 4 consecutive head dims per
      // texel, so out is width-packed or a buffer; the caches are updated in place: buffers.
      [] {
        auto m = float_layouts({"q", "k", "v"});
        m["out"] = {"buffer", "texture3d_w"};
        return m;
      }(),
      bytes_moved, flops, classes, expected_classes};
  return op;
}

Tensor sdpa_error_bound(const Problem& p, double unit_roundoff) { return error_bound(p, unit_roundoff, false); }

}  // namespace ts
