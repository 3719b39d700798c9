#include "gpu/gpu_backend.h"

#include <algorithm>
#include <cstring>

namespace ts {

uint64_t poison_bits(DType t) {
  switch (t) {
    case DType::f32: return 0x7FD15EA5u;  // quiet NaN, payload "poisoned"
    case DType::f16: return 0x7E5Au;
    case DType::bf16: return 0x7FD1u;
    case DType::f64: return 0x7FFD15EA5D15EA5Dull;
    case DType::i8: return 0x5Au;  // a legal value: int8 outputs can't be proven written by poison alone
    case DType::i32: return 0x5A5A5A5Au;
  }
  return 0;
}

std::optional<Grid> fold_grid(uint64_t invocations, uint32_t workgroup_size, const DeviceLimits& lim) {
  Grid g;
  g.workgroup_size = std::max<uint32_t>(1, std::min({workgroup_size, lim.max_workgroup_size_x, lim.max_invocations}));
  uint64_t groups = (invocations + g.workgroup_size - 1) / g.workgroup_size;
  if (groups == 0) groups = 1;
  // Fold x first, then y: kernels recover the linear id as x + y*X + z*X*Y (ts_linear_id()).
  uint64_t x = std::min<uint64_t>(groups, lim.max_workgroups[0]);
  uint64_t rest = (groups + x - 1) / x;
  uint64_t y = std::min<uint64_t>(rest, lim.max_workgroups[1]);
  uint64_t z = (rest + y - 1) / y;
  if (z > lim.max_workgroups[2]) return std::nullopt;
  g.groups[0] = uint32_t(x);
  g.groups[1] = uint32_t(y);
  g.groups[2] = uint32_t(z);
  return g;
}

std::string bound_tensor(const Dispatch& d, const std::string& array_name) {
  auto m = d.bind.find(array_name);
  if (m != d.bind.end()) return m->second;
  if (!array_name.empty() && array_name.back() == '_') return array_name.substr(0, array_name.size() - 1);
  return array_name;
}

namespace {

RunOutput fail(RunOutput::Status s, std::string msg) {
  RunOutput r;
  r.status = s;
  r.message = std::move(msg);
  return r;
}

void fill_poison(std::vector<uint8_t>& b, size_t off, size_t n, DType t) {
  uint64_t bits = poison_bits(t);
  size_t es = dtype_size(t);
  for (size_t i = 0; i + es <= n; i += es) std::memcpy(b.data() + off + i, &bits, es);
}

// Every byte of [guard][data, n bytes][rounding + guard] outside the data must still be the guard byte.
GuardReport check_guards(const std::vector<uint8_t>& bytes, size_t n) {
  GuardReport g;
  auto check = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i)
      if (bytes[i] != kGuardByte) {
        if (!g.bad_bytes) g.first_offset = int64_t(i) - int64_t(GpuBackend::kGuardBytes);
        ++g.bad_bytes;
      }
  };
  check(0, GpuBackend::kGuardBytes);
  // Bytes between the tensor's end and the 4-byte-rounded end belong to the guard too.
  check(GpuBackend::kGuardBytes + n, bytes.size());
  return g;
}

ScratchReport check_scratch(const HostBuffer& b, const BufferSpec& s) {
  ScratchReport rep{s.shape, s.dtype, b.first_kernel};
  if (!is_float(s.dtype)) return rep;
  // No dispatch binds it: nothing can have written it, which its final contents show.
  const std::vector<uint8_t>& bytes = b.first_use.empty() ? b.bytes : b.first_use;
  const uint64_t poison = poison_bits(s.dtype);
  const size_t es = dtype_size(s.dtype);
  const int64_t count = numel(s.shape);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + GpuBackend::kGuardBytes + size_t(i) * es, es);
    if (bits != poison) continue;
    if (!rep.unwritten) rep.first_unwritten = i;
    ++rep.unwritten;
  }
  return rep;
}

}  // namespace

RunOutput GpuBackend::run(const OpDef& op, const Problem& p) {
  // 1. The contract, exactly as the reference checks it.
  if (auto v = op.validate(p)) {
    RunOutput r;
    r.status = RunOutput::Status::rejected;
    r.violation = *v;
    return r;
  }
  const DeviceLimits& lim = limits();
  if ((p.dtype == DType::f16) && !lim.f16)
    return fail(RunOutput::Status::unsupported, "device has no 16-bit storage / float16 arithmetic");
  if (p.dtype == DType::bf16 || p.dtype == DType::f64)
    return fail(RunOutput::Status::unsupported,
                cat("no ", dtype_name(p.dtype), " kernels on GPU backends"));

  // 2. Device limits, before any allocation: every dispatch must fit the grid and every buffer a binding.
  std::vector<Dispatch> plan = op.plan(p);
  std::vector<BufferSpec> specs = op.buffers(p);
  for (const Dispatch& d : plan) {
    if (d.invocations >= (1ull << 32))
      return fail(RunOutput::Status::error, cat(op.name, ": dispatch ", d.kernel, " needs ", d.invocations,
                                                " invocations, over 32-bit indexing [grid_too_large]"));
    if (!fold_grid(d.invocations, workgroup_size, lim))
      return fail(RunOutput::Status::error, cat(op.name, ": dispatch ", d.kernel, " of ", d.invocations,
                                                " invocations does not fit the device grid [grid_too_large]"));
  }
  auto too_big = [&](const std::string& name, size_t bytes) -> std::optional<RunOutput> {
    if (bytes > lim.max_buffer_bytes)
      return fail(RunOutput::Status::unsupported, cat(op.name, ": tensor ", name, " (", bytes,
                                                      " bytes) exceeds the device binding limit (",
                                                      lim.max_buffer_bytes, " bytes)"));
    return std::nullopt;
  };
  for (auto& [name, t] : p.inputs)
    if (auto r = too_big(name, t.nbytes())) return *r;
  for (auto& s : specs)
    if (auto r = too_big(s.name, size_t(numel(s.shape)) * dtype_size(s.dtype))) return *r;

  // 3. Host images of every buffer: inputs as they are, outputs and scratch poisoned inside guard bands.
  std::vector<HostBuffer> bufs;
  // An output updated in place (init_from == its own name, e.g. a KV cache) replaces its input.
  auto in_place = [&](const std::string& name) {
    return std::any_of(specs.begin(), specs.end(), [&](const BufferSpec& s) { return s.name == name && s.init_from == name; });
  };
  for (auto& [name, t] : p.inputs)
    if (!in_place(name)) bufs.push_back({name, 0, t.nbytes(), false, t.bytes});
  for (auto& s : specs) {
    size_t n = size_t(numel(s.shape)) * dtype_size(s.dtype);
    const size_t padded = (n + 3) & ~size_t(3);
    HostBuffer b{s.name, kGuardBytes, padded + kGuardBytes, true, {}};
    b.snapshot = s.role == BufferSpec::Role::scratch;
    b.bytes.assign(kGuardBytes + padded + kGuardBytes, kGuardByte);
    if (!s.init_from.empty()) {
      const Tensor& src = p.inputs.at(s.init_from);
      if (n) std::memcpy(b.bytes.data() + kGuardBytes, src.bytes.data(), n);  // an empty tensor's data() may be null
    } else {
      fill_poison(b.bytes, kGuardBytes, n, s.dtype);
    }
    bufs.push_back(std::move(b));
  }

  // 4. Run. Primitives report missing capabilities as Unsupported, everything else as errors.
  try {
    execute(plan, bufs, p.dtype);
  } catch (const Unsupported& e) {
    return fail(RunOutput::Status::unsupported, e.what());
  } catch (const std::exception& e) {
    return fail(RunOutput::Status::error, e.what());
  }

  // 5. Outputs back in logical form; every changed guard byte is a write outside the tensor; scratch
  // holds no poison after its first writer.
  RunOutput r;
  for (auto& s : specs) {
    auto it = std::find_if(bufs.begin(), bufs.end(), [&](const HostBuffer& b) { return b.name == s.name; });
    const size_t n = size_t(numel(s.shape)) * dtype_size(s.dtype);
    r.guards[s.name] = check_guards(it->bytes, n);
    if (s.role == BufferSpec::Role::scratch) {
      r.scratch[s.name] = check_scratch(*it, s);
      continue;
    }
    Tensor t(s.dtype, s.shape);
    if (n) std::memcpy(t.bytes.data(), it->bytes.data() + kGuardBytes, n);
    r.outputs[s.name] = std::move(t);
  }
  return r;
}

}  // namespace ts
