// A reference point for bench's sdpa prefill rows, not part of Touchstone: times the flash attention
// that llama.cpp ships (ggml-vulkan, the foreign backend's libraries) on the prefill shape of bench's
// suite, Hq 32, Hkv 8, D 128, causal from position 0, S from the command line. Run with
// GGML_VK_VISIBLE_DEVICES=0 GGML_VK_PERF_LOGGER=1: ggml then prints each graph's GPU time per op
// (timestamps around the node); take the median of FLASH_ATTN_EXT's lines past the first few.
// GGML_VK_DISABLE_COOPMAT2=1 takes ggml's KHR_coopmat path instead. Built by bundle.sh
// (TS_BUNDLE_FOREIGN=1 or ggml) against the vendored libraries; usage: ggml_fa_time [S] [reps] [prec_f32].
// The cache update (ggml_set_rows) is left out: only the attention kernel is timed.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-vulkan.h"
#include "ggml.h"

static void to_stderr(ggml_log_level, const char* text, void*) { std::fputs(text, stderr); }

int main(int argc, char** argv) {
  const int S = argc > 1 ? std::atoi(argv[1]) : 512, reps = argc > 2 ? std::atoi(argv[2]) : 200;
  const bool prec_f32 = argc > 3 ? std::atoi(argv[3]) != 0 : true;  // GGML_PREC_F32, as the mapping asks
  const int Hq = 32, Hkv = 8, D = 128;
  if (S < 1 || reps < 1) {
    std::fprintf(stderr, "usage: ggml_fa_time [S >= 1] [reps >= 1] [prec_f32 0|1]\n");
    return 2;
  }
  ggml_log_set(to_stderr, nullptr);
  ggml_backend_t be = ggml_backend_vk_init(0);
  ggml_init_params p = {ggml_tensor_overhead() * 16 + ggml_graph_overhead(), nullptr, true};
  ggml_context* ctx = ggml_init(p);
  // ggml's dimensions innermost first: q [D, S, Hq], k and v [D, ctx, Hkv], mask [ctx, S].
  ggml_tensor* q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, D, S, Hq);
  ggml_tensor* k = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, D, S, Hkv);
  ggml_tensor* v = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, D, S, Hkv);
  ggml_tensor* mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, S, S);
  ggml_tensor* out = ggml_flash_attn_ext(ctx, q, k, v, mask, 1.0f / std::sqrt(float(D)), 0.0f, 0.0f);
  if (prec_f32) ggml_flash_attn_ext_set_prec(out, GGML_PREC_F32);
  ggml_cgraph* gf = ggml_new_graph(ctx);
  ggml_build_forward_expand(gf, out);
  ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors(ctx, be);
  // Values in [-0.5, 0.5): the time does not depend on them.
  std::vector<float> qd(size_t(D) * S * Hq);
  for (size_t i = 0; i < qd.size(); ++i) qd[i] = float((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  std::vector<ggml_fp16_t> kv(size_t(D) * S * Hkv), md(size_t(S) * S);
  for (size_t i = 0; i < kv.size(); ++i) kv[i] = ggml_fp32_to_fp16(float((i * 40503u) % 1000) / 1000.0f - 0.5f);
  for (int s = 0; s < S; ++s)
    for (int c = 0; c < S; ++c) md[size_t(s) * S + c] = ggml_fp32_to_fp16(c <= s ? 0.0f : -INFINITY);
  ggml_backend_tensor_set(q, qd.data(), 0, ggml_nbytes(q));
  ggml_backend_tensor_set(k, kv.data(), 0, ggml_nbytes(k));
  ggml_backend_tensor_set(v, kv.data(), 0, ggml_nbytes(v));
  ggml_backend_tensor_set(mask, md.data(), 0, ggml_nbytes(mask));
  for (int r = 0; r < reps; ++r)
    if (ggml_backend_graph_compute(be, gf) != GGML_STATUS_SUCCESS) {
      std::fprintf(stderr, "ggml_fa_time: graph compute failed\n");
      return 1;
    }
  std::fprintf(stderr, "ggml_fa_time: S=%d, %d graphs, prec_f32=%d\n", S, reps, int(prec_f32));
  ggml_backend_buffer_free(buffer);
  ggml_free(ctx);
  ggml_backend_free(be);
  return 0;
}
