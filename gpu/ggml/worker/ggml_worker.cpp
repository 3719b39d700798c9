// Touchstone's ggml-vulkan worker: llama.cpp's ggml Vulkan backend (the shared libraries npm
// @node-llama-cpp/linux-x64-vulkan ships, unmodified) behind the frames of gpu/foreign/PROTOCOL.md.
// A process of its own because ggml aborts (GGML_ASSERT) on input it does not accept: the backend
// (gpu/ggml/ggml_backend.cpp) validates first, and a case that still aborts here ends as ERROR
// without ending the run. Built without sanitizers: the libraries it loads have none.
//
// Operations (RUN "op"):
//   rope       inputs pos int32 [S] and tensors [B, S, H, D] or [B, H, S, D] (attr seq_axis: 1 or 2),
//              each rotated and returned under its own name; attrs mode (GGML_ROPE_TYPE_*),
//              freq_base. ggml_rope_ext with YaRN off.
//   attention  inputs q [1,S,Hq,D], k, v [1,S,Hkv,D], k_cache, v_cache [1,Cmax,Hkv,D], mask
//              float16 [S, ctx] (0 or -inf), rows int32 [S]; attrs scale, prec (0 default, 10 f32).
//              SET_ROWS writes k, v into the caches at rows, then FLASH_ATTN_EXT reads the first
//              ctx rows of both caches, as llama.cpp's graph does. Outputs out (float32), k_cache,
//              v_cache (the whole caches).
// A case the backend's supports_op refuses is an ERROR frame that starts "unsupported: ".
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/worker_protocol.h"

#include <nlohmann/json.hpp>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-vulkan.h"
#include "ggml.h"

using json = nlohmann::json;

namespace {

enum Frame : uint8_t { kInfo = 1, kRun = 2, kResult = 3, kError = 4 };

struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool read_exact(void* dst, size_t n) {
  auto* p = static_cast<uint8_t*>(dst);
  while (n) {
    ssize_t r = read(0, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r, n -= size_t(r);
  }
  return true;
}

void write_exact(const void* src, size_t n) {
  auto* p = static_cast<const uint8_t*>(src);
  while (n) {
    ssize_t r = write(ts::kFrameFd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) std::exit(3);  // the backend went away
    p += r, n -= size_t(r);
  }
}

void send(uint8_t type, const std::string& head, const std::vector<uint8_t>* data = nullptr) {
  const bool framed = type == kResult;
  const uint32_t len = uint32_t(1 + (framed ? 4 : 0) + head.size() + (data ? data->size() : 0));
  write_exact(&len, 4);
  write_exact(&type, 1);
  if (framed) {
    const uint32_t hl = uint32_t(head.size());
    write_exact(&hl, 4);
  }
  write_exact(head.data(), head.size());
  if (data) write_exact(data->data(), data->size());
}

ggml_type type_of(const std::string& d) {
  static const std::map<std::string, ggml_type> types = {{"float32", GGML_TYPE_F32}, {"float16", GGML_TYPE_F16},
                                                         {"bfloat16", GGML_TYPE_BF16}, {"int32", GGML_TYPE_I32},
                                                         {"int64", GGML_TYPE_I64}, {"int8", GGML_TYPE_I8}};
  auto it = types.find(d);
  if (it == types.end()) throw std::runtime_error("ggml worker: no ggml type for dtype '" + d + "'");
  return it->second;
}

std::string dtype_of(ggml_type t) {
  switch (t) {
    case GGML_TYPE_F32: return "float32";
    case GGML_TYPE_F16: return "float16";
    case GGML_TYPE_BF16: return "bfloat16";
    case GGML_TYPE_I32: return "int32";
    case GGML_TYPE_I64: return "int64";
    case GGML_TYPE_I8: return "int8";
    default: throw std::runtime_error(std::string("ggml worker: unexpected output type ") + ggml_type_name(t));
  }
}

// One RUN: the graph's leaves in ctx_in (allocated whole, then filled), its nodes in ctx_graph.
class Run {
 public:
  Run(ggml_backend_t backend, const json& head, const uint8_t* data, size_t size) : backend_(backend) {
    ggml_init_params p = {ggml_tensor_overhead() * 64, nullptr, true};
    ctx_in_ = ggml_init(p);
    p.mem_size = ggml_tensor_overhead() * 256 + ggml_graph_overhead();
    ctx_ = ggml_init(p);
    for (const json& t : head.at("inputs")) {
      std::vector<int64_t> shape = t.at("shape");
      int64_t ne[4] = {1, 1, 1, 1};  // ggml counts dimensions innermost first
      if (shape.size() > 4) throw std::runtime_error("ggml worker: rank above 4");
      for (size_t i = 0; i < shape.size(); ++i) ne[i] = shape[shape.size() - 1 - i];
      ggml_tensor* g = ggml_new_tensor_4d(ctx_in_, type_of(t.at("dtype")), ne[0], ne[1], ne[2], ne[3]);
      const uint64_t off = t.at("offset"), bytes = t.at("bytes");
      if (off + bytes > size || bytes != ggml_nbytes(g)) throw std::runtime_error("ggml worker: input data out of range");
      inputs_[t.at("name")] = g;
      fill_.push_back({g, data + off});
    }
  }
  ~Run() {
    if (galloc_) ggml_gallocr_free(galloc_);
    if (buffer_) ggml_backend_buffer_free(buffer_);
    ggml_free(ctx_);
    ggml_free(ctx_in_);
  }

  ggml_tensor* in(const char* name) const {
    auto it = inputs_.find(name);
    if (it == inputs_.end()) throw std::runtime_error(std::string("ggml worker: missing input ") + name);
    return it->second;
  }
  ggml_context* ctx() const { return ctx_; }

  // Allocates, uploads, computes and returns each of `outs` (name, tensor) in order.
  std::pair<json, std::vector<uint8_t>> compute(const std::vector<std::pair<std::string, ggml_tensor*>>& outs) {
    ggml_cgraph* gf = ggml_new_graph(ctx_);
    for (auto& [name, t] : outs) {
      ggml_set_output(t);
      ggml_build_forward_expand(gf, t);
    }
    for (int i = 0; i < ggml_graph_n_nodes(gf); ++i) {
      ggml_tensor* node = ggml_graph_node(gf, i);
      if (!ggml_backend_supports_op(backend_, node))
        throw Unsupported(std::string("unsupported: ggml-vulkan does not run ") + ggml_op_desc(node) + " on " +
                          ggml_type_name(node->src[0] ? node->src[0]->type : node->type) + " with these shapes");
    }
    buffer_ = ggml_backend_alloc_ctx_tensors(ctx_in_, backend_);
    if (!buffer_) throw std::runtime_error("ggml worker: could not allocate the inputs");
    galloc_ = ggml_gallocr_new(ggml_backend_get_default_buffer_type(backend_));
    if (!ggml_gallocr_alloc_graph(galloc_, gf)) throw std::runtime_error("ggml worker: could not allocate the graph");
    for (auto& [t, src] : fill_) ggml_backend_tensor_set(t, src, 0, ggml_nbytes(t));
    if (ggml_backend_graph_compute(backend_, gf) != GGML_STATUS_SUCCESS)
      throw std::runtime_error("ggml worker: graph compute failed");
    json list = json::array();
    std::vector<uint8_t> bytes;
    for (auto& [name, t] : outs) {
      const size_t n = ggml_nbytes(t), off = bytes.size();
      if (!ggml_is_contiguous(t)) throw std::runtime_error("ggml worker: output " + name + " is not contiguous");
      bytes.resize(off + n);
      ggml_backend_tensor_get(t, bytes.data() + off, 0, n);
      json shape = json::array();
      for (int d = ggml_n_dims(t) - 1; d >= 0; --d) shape.push_back(t->ne[d]);
      list.push_back({{"name", name}, {"dtype", dtype_of(t->type)}, {"shape", shape}, {"offset", off}, {"bytes", n}});
    }
    return {json{{"outputs", list}}, std::move(bytes)};
  }

 private:
  ggml_backend_t backend_;
  ggml_context* ctx_in_ = nullptr;
  ggml_context* ctx_ = nullptr;
  ggml_backend_buffer_t buffer_ = nullptr;
  ggml_gallocr_t galloc_ = nullptr;
  std::map<std::string, ggml_tensor*> inputs_;
  std::vector<std::pair<ggml_tensor*, const uint8_t*>> fill_;
};

double attr(const json& a, const char* name) {
  const json& v = a.at(name);
  return v.contains("i") ? double(v.at("i").get<int64_t>()) : v.at("f").get<double>();
}

std::pair<json, std::vector<uint8_t>> rope(Run& r, const json& head) {
  ggml_context* ctx = r.ctx();
  const json& a = head.at("attrs");
  // ggml takes the positions along ne[2]: a [.., H, S, D] tensor is viewed heads-innermost first.
  const bool heads_outer = attr(a, "seq_axis") == 2;
  std::vector<std::pair<std::string, ggml_tensor*>> outs;
  for (const json& t : head.at("inputs")) {
    const std::string name = t.at("name");
    if (name == "pos") continue;
    ggml_tensor* x = r.in(name.c_str());
    if (heads_outer) x = ggml_cont(ctx, ggml_permute(ctx, x, 0, 2, 1, 3));
    ggml_tensor* y = ggml_rope_ext(ctx, x, r.in("pos"), nullptr, int(x->ne[0]), int(attr(a, "mode")), 0,
                                   float(attr(a, "freq_base")), 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    if (heads_outer) y = ggml_cont(ctx, ggml_permute(ctx, y, 0, 2, 1, 3));
    outs.push_back({name, y});
  }
  return r.compute(outs);
}

std::pair<json, std::vector<uint8_t>> attention(Run& r, const json& a) {
  ggml_context* ctx = r.ctx();
  ggml_tensor *q = r.in("q"), *k = r.in("k"), *v = r.in("v"), *kc = r.in("k_cache"), *vc = r.in("v_cache");
  ggml_tensor *mask = r.in("mask"), *rows = r.in("rows");
  const int64_t D = q->ne[0], Hkv = kc->ne[1], Cmax = kc->ne[2], S = q->ne[2], ctx_len = mask->ne[0];
  // The caches as rows of D*Hkv, as llama.cpp's KV cache writes them.
  ggml_tensor* kc2 = ggml_set_rows(ctx, ggml_reshape_2d(ctx, kc, D * Hkv, Cmax), ggml_reshape_2d(ctx, k, D * Hkv, S), rows);
  ggml_tensor* vc2 = ggml_set_rows(ctx, ggml_reshape_2d(ctx, vc, D * Hkv, Cmax), ggml_reshape_2d(ctx, v, D * Hkv, S), rows);
  const size_t es = ggml_element_size(kc);
  // [D, ctx, Hkv]: a view of the first ctx rows with heads outermost, strides of the [Cmax, Hkv, D] cache.
  auto view = [&](ggml_tensor* c) { return ggml_view_3d(ctx, c, D, ctx_len, Hkv, es * D * Hkv, es * D, 0); };
  ggml_tensor* qp = ggml_permute(ctx, q, 0, 2, 1, 3);  // [D, S, Hq]
  ggml_tensor* o = ggml_flash_attn_ext(ctx, qp, view(kc2), view(vc2), mask, float(attr(a, "scale")), 0.0f, 0.0f);
  if (int(attr(a, "prec")) == GGML_PREC_F32) ggml_flash_attn_ext_set_prec(o, GGML_PREC_F32);
  // The caches are read back whole: rows past ctx must still hold what they held.
  ggml_tensor* kc_out = ggml_cpy(ctx, ggml_reshape_4d(ctx, kc2, D, Hkv, Cmax, 1), ggml_dup_tensor(ctx, kc));
  ggml_tensor* vc_out = ggml_cpy(ctx, ggml_reshape_4d(ctx, vc2, D, Hkv, Cmax, 1), ggml_dup_tensor(ctx, vc));
  return r.compute({{"out", o}, {"k_cache", kc_out}, {"v_cache", vc_out}});
}

void log_to_stderr(ggml_log_level, const char* text, void*) { std::fputs(text, stderr); }

}  // namespace

int main() {
  ggml_log_set(log_to_stderr, nullptr);  // its stdout is the stderr pipe: frames go to descriptor 3
  ggml_backend_t backend = nullptr;
  for (;;) {
    uint32_t len = 0;
    uint8_t type = 0;
    if (!read_exact(&len, 4)) break;
    if (len == 0 || !read_exact(&type, 1)) break;
    std::vector<uint8_t> payload(len - 1);
    if (!payload.empty() && !read_exact(payload.data(), payload.size())) break;
    try {
      if (type == kInfo) {
        if (ggml_backend_vk_get_device_count() < 1) throw std::runtime_error("ggml-vulkan: no Vulkan device");
        if (!backend) backend = ggml_backend_vk_init(0);
        if (!backend) throw std::runtime_error("ggml-vulkan: ggml_backend_vk_init(0) failed");
        char desc[256] = {};
        ggml_backend_vk_get_device_description(0, desc, sizeof desc);
        send(kInfo, json{{"device", desc}, {"library", "ggml-vulkan"}, {"backend", ggml_backend_name(backend)}}.dump());
      } else if (type == kRun) {
        if (!backend) throw std::runtime_error("ggml worker: RUN before INFO");
        uint32_t hl = 0;
        if (payload.size() < 4) throw std::runtime_error("ggml worker: short RUN");
        std::memcpy(&hl, payload.data(), 4);
        if (4 + size_t(hl) > payload.size()) throw std::runtime_error("ggml worker: RUN header out of range");
        const json head = json::parse(payload.begin() + 4, payload.begin() + 4 + hl);
        Run r(backend, head, payload.data() + 4 + hl, payload.size() - 4 - hl);
        const std::string op = head.at("op");
        const json& attrs = head.at("attrs");
        auto [out_head, bytes] = op == "rope"        ? rope(r, head)
                                 : op == "attention" ? attention(r, attrs)
                                                     : throw std::runtime_error("ggml worker: unknown op '" + op + "'");
        send(kResult, out_head.dump(), &bytes);
      } else {
        throw std::runtime_error("ggml worker: unknown frame type " + std::to_string(type));
      }
    } catch (const std::exception& e) {
      send(kError, e.what());
    }
  }
  if (backend) ggml_backend_free(backend);
  return 0;
}
