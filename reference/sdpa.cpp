// sdpa: scaled dot-product attention with KV-cache update (LLM decode and prefill), SPEC "sdpa".
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/runner.h"
#include "reference/common.h"
#include "reference/ops.h"
#include "reference/sdpa.h"

namespace ts {
namespace {

using namespace sdpa;

const char* const kInputs[] = {"q", "k", "v", "k_cache", "v_cache"};
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
    const int64_t chunks = (ctx + sdpa::kMinChunk - 1) / sdpa::kMinChunk, parts = product({Hq, S, chunks, D});
    c.require(parts < limit, "scratch_fits_32bit", "split partial outputs Hq*S*ceil(ctx/", sdpa::kMinChunk, ")*D (", Hq,
              "*", S, "*", chunks, "*", D, " = ", parts, ") must be below 2^32");
  }
  require_same_dtype(c, p);
  // Not a kernel's limit but the implementation's definition: it multiplies float16 on tensor cores
  // and holds a head in shared memory (as gemv_requires_m_1 defines impl=gemv).
  if (p.params.value("impl", "tiled") == "coopmat")
    c.require(p.dtype == DType::f16 && D <= 128, "coopmat_float16_head_dim",
              "impl=coopmat takes float16 heads of at most 128 dims: this case is ", dtype_name(p.dtype), " with D = ", D);
  return c.result();
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
  // coopmat (float16 tensor cores, where the device has them): decode, GQA 4:1 prefill past one key
  // tile and one row tile, a prefill from position 0 (its keys read from k and v, the cache update
  // beside it: gpu/plans/sdpa.cpp), a head dim that is no multiple of 16, the longest head.
  if (t == DType::f16) {
    v.push_back(mk(1, 32, 8, 128, 100, "coopmat"));
    v.push_back(mk(70, 4, 1, 8, 30, "coopmat"));
    v.push_back(mk(40, 4, 2, 16, 0, "coopmat"));
    v.push_back(mk(3, 6, 3, 20, 5, "coopmat"));
    v.push_back(in_storage(mk(2, 3, 1, 16, 6, "coopmat"), "buffer;out=texture3d_w;q=texture3d_c"));
  }
  // Invalid: each rule broken on its own.
  v.push_back(t == DType::f16 ? mk(2, 2, 1, 132, 3, "coopmat") : mk(2, 2, 1, 4, 3, "coopmat"));
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

// Coverage: the implementations, a ragged context tile, chunked prefill, large logits.
std::vector<std::string> classes(const Expected& e) {
  const Case& c = e.c;
  const int64_t S = c.get("S"), pos = c.get("pos", 0);
  std::vector<std::string> out = {"impl=" + c.word("impl", "tiled")};
  if ((pos + S) % 4 != 0) out.push_back("ctx%4!=0");
  if (S > 1 && pos > 0) out.push_back("chunked prefill (S>1, pos>0)");
  if (c.has("logit_scale")) out.push_back("large logits");
  return out;
}

std::vector<std::string> expected_classes(const OpDef&) {
  return {"impl=naive", "impl=tiled", "ctx%4!=0", "chunked prefill (S>1, pos>0)", "large logits"};
}

}  // namespace

namespace sdpa {

int64_t input_pos(const Problem& p) { return p.params.at("input_pos").get<int64_t>(); }

double scale_of(const Problem& p) {
  const double D = double(p.inputs.at("q").shape[3]);
  return p.params.contains("scale") ? p.params.at("scale").get<double>() : 1.0 / std::sqrt(D);
}

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

}  // namespace sdpa

OpContract sdpa_contract() {
  return {
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
       {"dtypes_equal", "every input has the case dtype"},
       {"coopmat_float16_head_dim", "impl=coopmat only with float16 and D <= 128"}},
      {DType::f32, DType::f16, DType::bf16},
      make, validate, reference, edge_cases, gen_sdpa, large_case,
      {int_var("S", 0, kMaxDim, "", "query rows (1: decode)"),
       int_var("Hq", 0, kMaxDim, "", "query heads"),
       int_var("Hkv", 0, kMaxDim, "", "key/value heads (GQA: Hq/Hkv query heads share one; MQA: 1)"),
       int_var("D", 0, kMaxDim, "", "head dim"),
       int_var("pos", -kMaxPos, kMaxPos, "0", "input_pos: the cache row of the first query (negative: invalid)"),
       int_var("Cmax", 0, kMaxPos, "pos+S+4", "cache rows (the default leaves stale rows past ctx that must not be read)"),
       word_var("impl", {"naive", "tiled", "split", "coopmat"}, "tiled",
                "kernels: one element per invocation, shared-memory tiled GEMMs, split context (flash-decoding), or "
                "flash attention on float16 tensor cores (cooperative matrices; float16 cases)"),
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
      classes,
      expected_classes};
}

}  // namespace ts
