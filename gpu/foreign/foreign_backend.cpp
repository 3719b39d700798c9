#include "gpu/foreign/foreign_backend.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/layout.h"
#include "gpu/worker_process.h"

namespace ts {

using json = nlohmann::json;

namespace {

constexpr const char* kUnsupportedPrefix = "unsupported: ";  // PROTOCOL.md: a case the library refuses

std::string text_of(const Frame& f) { return std::string(f.payload.begin(), f.payload.end()); }

std::span<const uint8_t> bytes_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

// A tensor of the reply: header {"name","dtype","shape","offset","bytes"} over `data`.
Tensor tensor_of(const json& t, const uint8_t* data, size_t size) {
  const std::string name = t.at("name"), dtype = t.at("dtype");
  const auto d = parse_dtype(dtype);
  if (!d) throw std::runtime_error(cat("worker returned ", name, " as '", dtype, "', not a Touchstone dtype"));
  Tensor r(*d, t.at("shape").get<Shape>());
  const uint64_t off = t.at("offset"), n = t.at("bytes");
  if (off > size || n > size - off || n != r.nbytes())
    throw std::runtime_error(cat("worker returned ", name, " with ", n, " bytes at ", off, " of ", size, "; ",
                                 r.describe(), " holds ", r.nbytes()));
  if (n) std::memcpy(r.bytes.data(), data + off, n);
  return r;
}

}  // namespace

std::optional<std::string> buffers_only(const Problem& p, const std::vector<std::string>& tensors, const char* library) {
  for (const std::string& t : tensors)
    if (p.layout(t) != Layout::buffer)
      return cat(library, " takes tensors in buffers only; ", t, " is ", layout_name(p.layout(t)));
  return std::nullopt;
}

std::unique_ptr<ForeignBackend> ForeignBackend::create(ForeignOptions o, std::string* why_not) {
  std::unique_ptr<ForeignBackend> b(new ForeignBackend(std::move(o)));
  try {
    b->start();
  } catch (const std::exception& e) {
    *why_not = e.what();
    return nullptr;
  }
  return b;
}

ForeignBackend::ForeignBackend(ForeignOptions o) : options_(std::move(o)) {}
ForeignBackend::~ForeignBackend() = default;

void ForeignBackend::start() {
  worker_.reset();
  auto w = std::make_unique<WorkerProcess>(options_.argv, options_.name);
  const Frame f = w->call(FrameType::info, {}, std::chrono::milliseconds(options_.timeout_ms));
  if (f.type != FrameType::info) {
    w->stop();
    std::string msg = f.type == FrameType::error ? text_of(f) : cat(options_.name, ": the worker answered INFO with a wrong frame");
    if (!w->stderr_tail().empty()) msg += cat("; worker stderr:\n", w->stderr_tail());
    throw std::runtime_error(msg);
  }
  if (info_.backend.empty()) {
    const json j = json::parse(text_of(f));
    info_.backend = options_.name;
    info_.name = cat(j.value("device", "?"), " (", j.value("library", options_.name), ")");
    for (const Mapping& m : options_.mappings) info_.capabilities.push_back("maps:" + m.op);
  }
  worker_ = std::move(w);
}

Tensors ForeignBackend::call(const ForeignCall& c) {
  json inputs = json::array();
  uint64_t at = 0;
  std::vector<std::vector<uint8_t>> widened;  // as_int64 inputs, their int64 bytes
  std::vector<std::span<const uint8_t>> data;
  for (const auto& [name, t] : c.inputs) {
    std::string dtype(dtype_name(t.dtype));
    data.push_back({t.bytes.data(), t.bytes.size()});
    if (std::find(c.as_int64.begin(), c.as_int64.end(), name) != c.as_int64.end()) {
      if (t.dtype != DType::i32) throw std::runtime_error(cat(name, " is sent as int64 but is ", t.describe()));
      std::vector<uint8_t>& w = widened.emplace_back(size_t(t.numel()) * 8);
      for (int64_t i = 0; i < t.numel(); ++i) {
        const int64_t v = int64_t(t.get(i));
        std::memcpy(w.data() + 8 * i, &v, 8);
      }
      data.back() = {w.data(), w.size()};
      dtype = "int64";
    }
    inputs.push_back({{"name", name}, {"dtype", dtype}, {"shape", t.shape}, {"offset", at}, {"bytes", data.back().size()}});
    at += data.back().size();
  }
  json outputs = json::array();
  for (const auto& [name, d] : c.outputs) outputs.push_back({{"name", name}, {"dtype", dtype_name(d)}});
  json h0 = c.header;
  h0.update(json{{"op", c.op}, {"attrs", c.attrs}, {"inputs", inputs}, {"outputs", outputs}});
  const std::string head = h0.dump();
  const uint32_t head_len = uint32_t(head.size());
  std::vector<std::span<const uint8_t>> parts = {{reinterpret_cast<const uint8_t*>(&head_len), 4}, bytes_of(head)};
  parts.insert(parts.end(), data.begin(), data.end());

  if (!worker_ || !worker_->alive()) start();
  Frame reply;
  try {
    reply = worker_->call(FrameType::run, parts, std::chrono::milliseconds(options_.timeout_ms));
  } catch (const WorkerLost&) {
    worker_.reset();  // the next case starts a fresh one
    throw;
  }
  if (reply.type == FrameType::error) throw std::runtime_error(text_of(reply));
  if (reply.type != FrameType::result || reply.payload.size() < 4)
    throw std::runtime_error(cat(options_.name, ": the worker answered RUN with a wrong frame"));
  uint32_t n = 0;
  std::memcpy(&n, reply.payload.data(), 4);
  if (n > reply.payload.size() - 4) throw std::runtime_error(cat(options_.name, ": RESULT header out of range"));
  const json h = json::parse(reply.payload.begin() + 4, reply.payload.begin() + 4 + n);
  const uint8_t* body = reply.payload.data() + 4 + n;
  const size_t size = reply.payload.size() - 4 - n;
  Tensors got;
  for (const json& t : h.at("outputs")) got[t.at("name")] = tensor_of(t, body, size);
  return got;
}

RunOutput ForeignBackend::run(const OpDef& op, const Problem& p) {
  RunOutput out;
  if (auto v = op.validate(p)) {
    out.status = RunOutput::Status::rejected;
    out.violation = *v;
    return out;
  }
  // Nothing to compute, and nothing the libraries take: ggml asserts on an empty buffer, ORT refuses
  // an empty dispatch. Not asked, so not a PASS either.
  for (const auto& [name, t] : p.inputs)
    if (t.numel() == 0) {
      out.status = RunOutput::Status::unsupported;
      out.message = cat(options_.name, ": ", name, " is empty (", t.describe(), "): the library is not asked");
      return out;
    }
  const Mapping* m = nullptr;
  for (const Mapping& candidate : options_.mappings)
    if (candidate.op == op.name) m = &candidate;
  if (!m) {
    out.status = RunOutput::Status::unsupported;
    out.message = cat(options_.name, " has no operation mapped to ", op.name);
    return out;
  }
  Expressed e = m->express(p);
  if (!e.call) {
    out.status = RunOutput::Status::unsupported;
    out.message = cat(options_.name, ": ", e.unsupported);
    out.capability = e.capability;
    return out;
  }
  std::lock_guard lock(mu_);
  try {
    ++dispatches;
    Tensors got = call(*e.call);
    out.outputs = m->outputs(p, std::move(got));
    out.tolerance = m->bound(p);
    out.ran = e.call->ran;
  } catch (const std::exception& ex) {
    const std::string what = ex.what();
    if (what.rfind(kUnsupportedPrefix, 0) == 0) {
      out.status = RunOutput::Status::unsupported;
      out.message = cat(options_.name, ": ", what.substr(std::strlen(kUnsupportedPrefix)));
    } else {
      out.status = RunOutput::Status::error;
      out.message = what;
      if (!worker_ && !what.empty()) out.message += " (the next case starts a fresh worker)";
    }
  }
  return out;
}

}  // namespace ts
