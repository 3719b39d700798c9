#include "gpu/gpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "core/profile.h"

namespace ts {

namespace {
// The raw bits of element i of an integer or float tensor of element size es.
uint64_t element_bits(const Tensor& t, int64_t i, size_t es) {
  uint64_t bits = 0;
  std::memcpy(&bits, t.bytes.data() + size_t(i) * es, es);
  return bits;
}
}  // namespace

std::optional<Grid> dispatch_grid(const Dispatch& d, uint32_t dflt, const DeviceLimits& lim) {
  std::optional<Grid> g;
  if (d.fold_grids) {  // narrower than the device, unless that cannot hold the grid
    DeviceLimits narrow = lim;
    narrow.max_workgroups[0] = std::min(lim.max_workgroups[0], kFoldedGridWidth);
    g = fold_grid(d.invocations, d.workgroup ? d.workgroup : dflt, narrow);
  }
  if (!g) g = fold_grid(d.invocations, d.workgroup ? d.workgroup : dflt, lim);
  if (g && d.workgroup && g->workgroup_size != d.workgroup) return std::nullopt;
  return g;
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
  const uint64_t z = (rest + y - 1) / y;
  if (z > lim.max_workgroups[2]) return std::nullopt;
  // Then the narrowest rows that still hold the grid: the spare workgroups, which return at once but
  // are launched all the same, are then fewer than y * z, not up to a whole row (65,536 workgroups
  // on WebGPU's 65,535 a dimension: 2 x 32,768, not 2 x 65,535; PERFORMANCE.md has what that cost).
  y = (rest + z - 1) / z;
  x = (groups + y * z - 1) / (y * z);
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

// An error of a run whose plan uses a replaced kernel names the replacement's file (unless the
// compiler's message already does), so a user's broken kernel is never blamed on the built-in one.
std::string naming_replaced(std::string msg, const std::vector<Dispatch>& plan, const KernelSources& kernels) {
  if (!kernels.any_replaced()) return msg;
  std::vector<std::string> seen;
  for (const Dispatch& d : plan) {
    if (std::find(seen.begin(), seen.end(), d.kernel) != seen.end()) continue;
    seen.push_back(d.kernel);
    const std::string file = kernels.file(d.kernel);
    if (kernels.replaced(d.kernel) && msg.find(file) == std::string::npos)
      msg += cat(" [kernel ", d.kernel, " replaced by ", file, "]");
  }
  return msg;
}

RunOutput fail(RunOutput::Status s, std::string msg) {
  RunOutput r;
  r.status = s;
  r.message = std::move(msg);
  return r;
}

// `capability`: RunOutput::capability.
RunOutput unsupported(std::string capability, std::string msg) {
  RunOutput r = fail(RunOutput::Status::unsupported, std::move(msg));
  r.capability = std::move(capability);
  return r;
}

void fill_poison(std::vector<uint8_t>& b, size_t off, size_t n, DType t, bool second) {
  uint64_t bits = poison_bits(t, second);
  size_t es = dtype_size(t);
  for (size_t i = 0; i + es <= n; i += es) std::memcpy(b.data() + off + i, &bits, es);
}

constexpr uint32_t kGuardWord = 0x01010101u * kGuardByte;

// The 32-bit word of a dtype's poison pattern repeated (elements of 1, 2 or 4 bytes tile a word
// exactly); nullopt for 8-byte elements.
std::optional<uint32_t> poison_word(DType t, bool second) {
  const uint64_t bits = poison_bits(t, second);
  switch (dtype_size(t)) {
    case 1: return uint32_t(bits) * 0x01010101u;
    case 2: return uint32_t(bits) | uint32_t(bits) << 16;
    case 4: return uint32_t(bits);
    default: return std::nullopt;
  }
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

namespace {

// Elements past the end of its output that a tiled dispatch of `plan` reaches by storing its whole
// last tile: tile_rows rows of its extent and a tile's width more.
uint64_t tile_overshoot(const std::vector<Dispatch>& plan) {
  uint64_t most = 0;
  for (const Dispatch& d : plan)
    if (d.tile_rows > 0) most = std::max<uint64_t>(most, uint64_t(d.tile_rows * d.cols + d.tile_cols));
  return most;
}

// Host images of every buffer: inputs packed into their layouts, outputs and scratch poisoned
// (buffers inside guard bands; images in every lane, padding included) with the first sentinel,
// or with the second on a rerun (integer outputs, run() step 6).
// The guard after a buffer of `padded` bytes: as long as the tensor, and as a whole last tile's store
// can reach past it (`tile_bytes`), so that a store a whole row, tile or head past the end lands in
// it, not in memory nobody reads (lavapipe and WebGPU drop a store past the binding; a GPU may let it
// land anywhere); at least kGuardBytes, at most kMaxTrailingGuard, and within what the device limit
// leaves the binding.
size_t trailing_guard(size_t padded, size_t tile_bytes, uint64_t max_binding_bytes) {
  constexpr size_t g = GpuBackend::kGuardBytes;
  const size_t length = std::max(padded, tile_bytes);
  const size_t want = std::clamp<size_t>((length + g - 1) / g * g, g, GpuBackend::kMaxTrailingGuard);
  const uint64_t room = max_binding_bytes > padded ? (max_binding_bytes - padded) / g * g : 0;
  return std::max<size_t>(g, std::min<uint64_t>(want, room));
}

// `tile_elements`: how many elements past its end a whole ragged last tile of the plan can store
// (Dispatch::tile_rows rows of the tiled extent and a tile's width), the least trailing guard in elements.
std::vector<HostBuffer> host_buffers(const Problem& p, const std::vector<BufferSpec>& specs,
                                     const std::map<std::string, Physical>& phys, bool second, uint64_t max_binding_bytes,
                                     uint64_t tile_elements) {
  constexpr size_t kGuardBytes = GpuBackend::kGuardBytes;
  std::vector<HostBuffer> bufs;
  // An output updated in place (init_from == its own name, e.g. a KV cache) replaces its input.
  auto in_place = [&](const std::string& name) {
    return std::any_of(specs.begin(), specs.end(), [&](const BufferSpec& s) { return s.name == name && s.init_from == name; });
  };
  for (auto& [name, t] : p.inputs)
    if (!in_place(name)) {
      const Physical& ph = phys.at(name);
      bufs.push_back({name, ph, t.dtype, 0, ph.bytes, false, pack(t, ph.layout)});
    }
  for (auto& s : specs) {
    const Physical& ph = phys.at(s.name);
    HostBuffer b{s.name, ph, s.dtype, 0, ph.bytes, true, {}};
    b.snapshot = s.role == BufferSpec::Role::scratch;
    if (b.image()) {
      b.bytes.resize(ph.bytes);
      if (!s.init_from.empty()) b.bytes = pack(p.inputs.at(s.init_from), ph.layout);
      else fill_poison(b.bytes, 0, ph.bytes, s.dtype, second);
      bufs.push_back(std::move(b));
      continue;
    }
    const size_t n = ph.bytes;
    const size_t padded = (n + 3) & ~size_t(3);
    const size_t tail = trailing_guard(padded, tile_elements * dtype_size(s.dtype), max_binding_bytes);
    b.offset = kGuardBytes;
    b.size = padded + tail;
    const size_t total = kGuardBytes + padded + tail;
    // The guard bands and the poison are filled on the device (HostBuffer::fills); only a word
    // shared by the tensor's last bytes and the guard, and an in-place tensor's data, come from here.
    const std::optional<uint32_t> word = poison_word(s.dtype, second);
    if (!s.init_from.empty() || !word) {
      b.bytes.resize(total);
      std::memset(b.bytes.data() + kGuardBytes + n, kGuardByte, padded - n);
      if (!s.init_from.empty()) {
        std::vector<uint8_t> init = pack(p.inputs.at(s.init_from), ph.layout);
        if (n) std::memcpy(b.bytes.data() + kGuardBytes, init.data(), n);  // an empty tensor's data() may be null
      } else {
        fill_poison(b.bytes, kGuardBytes, n, s.dtype, second);
      }
      b.fills = {{0, kGuardBytes, kGuardWord}, {kGuardBytes + padded, tail, kGuardWord}};
      bufs.push_back(std::move(b));
      continue;
    }
    b.bytes.resize(total);
    const size_t whole = n & ~size_t(3);  // whole words of poison; the rest of the last word is guard
    b.fills.push_back({0, kGuardBytes, kGuardWord});
    if (whole) b.fills.push_back({kGuardBytes, whole, *word});
    if (padded != whole) {
      fill_poison(b.bytes, kGuardBytes + whole, n - whole, s.dtype, second);
      std::memset(b.bytes.data() + kGuardBytes + n, kGuardByte, padded - n);
    }
    b.fills.push_back({kGuardBytes + padded, tail, kGuardWord});
    bufs.push_back(std::move(b));
  }
  return bufs;
}

}  // namespace

std::vector<std::pair<size_t, size_t>> HostBuffer::uploads() const {
  std::vector<std::pair<size_t, size_t>> out;
  size_t at = 0;
  for (const Fill& f : fills) {
    if (f.offset > at) out.emplace_back(at, f.offset - at);
    at = std::max(at, f.offset + f.size);
  }
  if (bytes.size() > at) out.emplace_back(at, bytes.size() - at);
  return out;
}

static_assert(kLayoutMeta >= kMetaBinding, "layout entries follow every binding's dims");

std::vector<uint32_t> accessor_meta(const std::vector<std::pair<uint32_t, const HostBuffer*>>& bound, uint32_t lane_xor) {
  std::vector<uint32_t> meta;
  for (auto& [binding, b] : bound) {
    if (meta.size() < 4 * (size_t(binding) + 1)) meta.resize(4 * (size_t(binding) + 1), 0);
    const Nchw& d = b->phys.dims;
    for (int64_t v : {d.w, d.h, d.c, d.n})
      if (v < 0 || v > int64_t(UINT32_MAX))
        throw std::runtime_error(cat("tensor ", b->name, ": dimension ", v, " does not fit a 32-bit accessor"));
    meta[4 * binding + 0] = uint32_t(d.w);
    meta[4 * binding + 1] = uint32_t(d.h);
    meta[4 * binding + 2] = uint32_t(d.c);
    meta[4 * binding + 3] = uint32_t(d.n);
  }
  if (bound.empty()) return std::vector<uint32_t>(4, 0);
  meta.resize(4 * size_t(kLaneMeta + 1), 0);
  for (auto& [binding, b] : bound) meta[4 * size_t(kLayoutMeta + binding)] = uint32_t(b->phys.layout);
  meta[4 * size_t(kLaneMeta)] = lane_xor;
  return meta;
}

std::string subgroup_gap(const Dispatch& d, const DeviceLimits& lim) {
  if (!d.subgroup) return "";
  const uint32_t most = std::max(lim.subgroup, lim.subgroup_max);
  const bool whole = d.whole_subgroups;
  if (whole ? lim.subgroup == d.subgroup && most == d.subgroup
            : lim.subgroup >= d.subgroup && lim.subgroup % d.subgroup == 0 && most % d.subgroup == 0)
    return "";  // every case's path: no string built
  return cat(whole ? " lays its workgroup out in subgroups of exactly " : " shuffles within groups of ", d.subgroup,
             " invocations; ",
             !lim.subgroup        ? std::string("the device offers no subgroup shuffle")
             : most != lim.subgroup ? cat("the device's subgroups are ", lim.subgroup, " to ", most, " invocations")
                                    : cat("the device's subgroups are ", lim.subgroup));
}

// Steps 1 and 2 of run(): the contract, the device's limits and every tensor's physical form, all
// before any allocation. A verdict other than "go on" comes back as the RunOutput to return.
std::optional<RunOutput> GpuBackend::lay_out(const OpDef& op, const Problem& p, Laid& laid) const {
  // 1. The contract, exactly as the reference checks it.
  if (auto v = op.validate(p)) {
    RunOutput r;
    r.status = RunOutput::Status::rejected;
    r.violation = *v;
    return r;
  }
  const DeviceLimits& lim = limits();
  if ((p.dtype == DType::f16) && !lim.f16)
    return unsupported("shader-f16", "device has no 16-bit storage / float16 arithmetic");
  if (p.dtype == DType::bf16 && !lim.bf16)
    return unsupported("bfloat16", "this backend has no bfloat16 kernels");
  if (p.dtype == DType::f64)
    return unsupported("", cat("no ", dtype_name(p.dtype), " kernels on GPU backends"));

  // 2. Device limits, before any allocation: every dispatch must fit the grid and every buffer a binding.
  std::vector<Dispatch>& plan = laid.plan;
  plan = op.plan(p);
  if (plan.empty())  // an operator whose kernels are not written yet: a stated gap, never PASS
    return unsupported("", cat("no ", kind(), " kernel for ", op.name, " yet"));
  std::vector<BufferSpec>& specs = laid.specs;
  specs = op.buffers(p);
  for (const Dispatch& d : plan) {
    if (d.invocations >= (1ull << 32))
      return fail(RunOutput::Status::error, cat(op.name, ": dispatch ", d.kernel, " needs ", d.invocations,
                                                " invocations, over 32-bit indexing [grid_too_large]"));
    if (d.workgroup && d.workgroup > std::min(lim.max_workgroup_size_x, lim.max_invocations))
      return unsupported("", cat(op.name, ": dispatch ", d.kernel, " needs workgroups of ", d.workgroup,
                                 " invocations; the device allows ", std::min(lim.max_workgroup_size_x, lim.max_invocations)));
    if (d.cooperative_matrix && !lim.no_coopmat.empty())
      return unsupported("cooperative-matrix", cat(op.name, ": dispatch ", d.kernel, " multiplies on cooperative matrices (tensor cores): ",
                                                   lim.no_coopmat));
    // A kernel not written yet in this backend's language (a new kernel's twin still to come):
    // a stated gap, never PASS. What is missing is the kernel, so that is the capability it names
    // (no backend lists one, so no device profile can require it and every test sees a gap).
    if (!kernels_.has(d.kernel))
      return unsupported(cat("kernel:", kernels_.file(d.kernel)),
                         cat(op.name, ": dispatch ", d.kernel, ": no ", kernels_.file(d.kernel), " yet"));
    // "subgroups" also where the device shuffles in subgroups of another size: the kernels' subgroup
    // path is what a device profile that requires subgroups expects to run.
    if (std::string gap = subgroup_gap(d, lim); !gap.empty())
      return unsupported("subgroups", cat(op.name, ": dispatch ", d.kernel, gap));
    if (!dispatch_grid(d, workgroup_size, lim))
      return fail(RunOutput::Status::error, cat(op.name, ": dispatch ", d.kernel, " of ", d.invocations,
                                                " invocations does not fit the device grid [grid_too_large]"));
  }
  // The packed int8 dot product where the device has it, except on a problem that runs the fallbacks;
  // only for kernels that use it, so that no other kernel compiles twice.
  for (Dispatch& d : plan) {
    d.fallback_paths = p.fallback_paths;
    d.fold_grids = p.fold_grids;
    d.reverse_lanes = p.reverse_lanes;
    if (lim.int_dot && !p.fallback_paths && kernels_.mentions(d.kernel, "TS_INT_DOT")) d.defines.push_back("TS_INT_DOT=1");
  }
  // Every tensor's physical form; a texture the device cannot hold is UNSUPPORTED, naming the extent.
  auto physical_of = [&](const std::string& name, const Shape& shape, DType dtype) {
    Physical ph = physical(shape, dtype, p.layout(name));
    if (is_texture(ph.layout))
      for (int a = 0; a < 3; ++a)
        if (ph.extent[a] > int64_t(lim.max_image_3d) || ph.extent[a] < 1)
          throw Unsupported("", cat(op.name, ": tensor ", name, " ", shape_str(shape), " as ", layout_name(ph.layout),
                                " needs a 3-D image of ", ph.extent[0], "x", ph.extent[1], "x", ph.extent[2],
                                " texels; extent ", "xyz"[a], " = ", ph.extent[a],
                                ph.extent[a] < 1 ? " (an empty image)" : "",
                                " is outside [1, ", lim.max_image_3d, "] (maxImageDimension3D)"));
    return ph;
  };
  std::map<std::string, Physical>& phys = laid.phys;
  try {
    for (auto& [name, t] : p.inputs) {
      phys[name] = physical_of(name, t.shape, t.dtype);
      laid.dtypes[name] = t.dtype;
    }
    for (auto& s : specs) {  // scratch is no tensor of the case id: always a buffer
      phys[s.name] = s.role == BufferSpec::Role::scratch ? physical(s.shape, s.dtype, Layout::buffer)
                                                         : physical_of(s.name, s.shape, s.dtype);
      laid.dtypes[s.name] = s.dtype;
    }
  } catch (const Unsupported& e) {
    return unsupported(e.capability, e.what());
  }
  for (auto& [name, ph] : phys)
    if (ph.bytes > lim.max_buffer_bytes)
      return unsupported("", cat(op.name, ": tensor ", name, " (", ph.bytes, " bytes) exceeds the device binding limit (",
                                 lim.max_buffer_bytes, " bytes)"));
  return std::nullopt;
}

void GpuBackend::warm(const OpDef& op, const Problem& p) {
  try {
    Laid laid;
    {
      Phase ph("gpu: compile ahead: lay out");
      if (lay_out(op, p, laid)) return;  // nothing will run
    }
    Phase ph("gpu: compile ahead: hand over");
    precompile(laid.plan, laid.phys, laid.dtypes, p.dtype);
  } catch (const std::exception&) {
    // run() meets the same problem and reports it as the case's outcome.
  }
}

RunOutput GpuBackend::run(const OpDef& op, const Problem& p) {
  Laid laid;
  if (std::optional<RunOutput> verdict = lay_out(op, p, laid)) return *verdict;
  const std::vector<Dispatch>& plan = laid.plan;
  const std::vector<BufferSpec>& specs = laid.specs;
  const std::map<std::string, Physical>& phys = laid.phys;

  // 3. Host images of every buffer.
  auto host_buffers = [&](bool second) {
    return ts::host_buffers(p, specs, phys, second, limits().max_buffer_bytes + kGuardBytes, tile_overshoot(plan));
  };
  std::vector<HostBuffer> bufs = [&] {
    Phase ph("gpu: host buffers (pack, poison)");
    return host_buffers(false);
  }();

  // 4. Run. Primitives report missing capabilities as Unsupported, everything else as errors.
  try {
    Phase ph("gpu: execute");
    execute(plan, bufs, p.dtype);
  } catch (const Unsupported& e) {
    return unsupported(e.capability, naming_replaced(e.what(), plan, kernels_));
  } catch (const std::exception& e) {
    return fail(RunOutput::Status::error, naming_replaced(e.what(), plan, kernels_));
  }

  // 5. Outputs back in logical form; every changed guard byte is a write outside the tensor, every
  // padding lane not zero a write past the packed dimension; scratch holds no poison after its first
  // writer.
  RunOutput r;
  Phase unpacking("gpu: outputs (unpack, guards)");
  for (auto& s : specs) {
    auto it = std::find_if(bufs.begin(), bufs.end(), [&](const HostBuffer& b) { return b.name == s.name; });
    GuardReport& g = r.guards[s.name];
    if (!it->image()) g = check_guards(it->bytes, it->phys.bytes);
    if (s.role == BufferSpec::Role::scratch) {
      r.scratch[s.name] = check_scratch(*it, s);
      continue;
    }
    r.outputs[s.name] = unpack(it->bytes, it->offset, s.shape, s.dtype, it->phys.layout, &g.bad_padding,
                               &g.first_bad_texel);
  }

  // 6. Integer outputs: the poison is a legal value. Where an output holds the first sentinel, the
  // case runs again with the second; an element holding both was never written (SPEC "Layouts").
  std::vector<const BufferSpec*> suspects;
  for (auto& s : specs) {
    if (s.role != BufferSpec::Role::output || !s.init_from.empty() || is_float(s.dtype)) continue;
    const Tensor& t = r.outputs.at(s.name);
    const size_t es = dtype_size(t.dtype);
    const uint64_t first = poison_bits(t.dtype);
    for (int64_t i = 0; i < t.numel(); ++i)
      if (element_bits(t, i, es) == first) {
        suspects.push_back(&s);
        break;
      }
  }
  if (suspects.empty()) return r;
  std::vector<HostBuffer> again = host_buffers(true);
  try {
    execute(plan, again, p.dtype);
  } catch (const Unsupported& e) {
    return unsupported(e.capability, e.what());
  } catch (const std::exception& e) {
    return fail(RunOutput::Status::error, cat("the rerun with the second int sentinel: ", e.what()));
  }
  for (const BufferSpec* s : suspects) {
    auto it = std::find_if(again.begin(), again.end(), [&](const HostBuffer& b) { return b.name == s->name; });
    int64_t ignored_padding = 0, ignored_texel = -1;
    const Tensor rerun = unpack(it->bytes, it->offset, s->shape, s->dtype, it->phys.layout, &ignored_padding, &ignored_texel);
    const Tensor& t = r.outputs.at(s->name);
    const size_t es = dtype_size(t.dtype);
    const uint64_t first = poison_bits(t.dtype), second = poison_bits(t.dtype, true);
    std::vector<uint8_t>& mask = r.unwritten[s->name];
    mask.assign(size_t(t.numel()), 0);
    for (int64_t i = 0; i < t.numel(); ++i)
      mask[size_t(i)] = element_bits(t, i, es) == first && element_bits(rerun, i, es) == second;
  }
  return r;
}

namespace {
// A buffer of the device's own filling: `word` in every byte range, nothing crosses from the host
// (HostBuffer::device_only).
HostBuffer device_filled(const std::string& name, uint64_t bytes, uint32_t word) {
  const Physical ph = physical({int64_t(bytes / 4)}, DType::i32, Layout::buffer);
  HostBuffer b{name, ph, DType::i32, 0, ph.bytes, false, {}};
  b.fills = {{0, ph.bytes, word}};
  return b;
}

// bench --cold: two dispatches ahead of the chain, run before each timed interval (TimingBudget::
// untimed). bench_scrub overwrites `bytes` of a buffer of its own, then once more one texel of it:
// WebGPU must order that second dispatch after the first (the same buffer, written), and the timed
// pass is reached once both are done (Dawn orders a pass after earlier work only on its own
// resources, and writes a pass's first timestamp where the queue reaches it). Vulkan's barrier
// before each interval orders them anyway. Returns the bytes overwritten.
uint64_t add_scrub(std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, uint64_t bytes) {
  const uint64_t texels = std::max<uint64_t>(1, bytes / 16);
  buffers.push_back(device_filled("scrub", texels * 16, 0));
  plan.insert(plan.begin(), {Dispatch{"bench_scrub", {}, texels, {{"n", double(texels)}}, {}},
                             Dispatch{"bench_scrub", {}, 1, {{"n", 1.0}}, {}}});
  return texels * 16;
}

// bench --primed: a one-texel dispatch on a buffer of its own, at `at` in the plan (after the untimed
// dispatches: the first of the interval).
void add_primer(std::vector<Dispatch>& plan, std::vector<HostBuffer>& buffers, uint32_t at) {
  buffers.push_back(device_filled("primer", 16, 0));
  Dispatch d{"bench_scrub", {}, 1, {{"n", 1.0}}, {}};
  d.bind = {{"scrub", "primer"}};
  plan.insert(plan.begin() + at, std::move(d));
}

// The median and minimum of t.seconds, or t an error where there is no repetition or one is not a
// positive time.
void summarize(BenchTiming& t, std::string_view kind) {
  if (t.seconds.empty()) {
    t.status = RunOutput::Status::error;
    t.message = cat(kind, ": no timed repetition");
    return;
  }
  for (double s : t.seconds)
    if (!(s > 0) || !std::isfinite(s)) {  // a zero interval is a timer too coarse for the chain
      t.status = RunOutput::Status::error;
      t.message = cat(kind, ": a timed repetition measured ", s, " s (timestamps too coarse or out of order)");
      return;
    }
  std::vector<double> sorted = t.seconds;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  t.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  t.min = sorted.front();
}
}  // namespace

BenchTiming GpuBackend::timed(std::vector<Dispatch> plan, std::vector<HostBuffer>& buffers, DType dtype,
                              TimingBudget budget) {
  BenchTiming t;
  if (budget.primed && budget.stream != 1)
    throw std::invalid_argument(cat("timing: a primed interval holds one chain, not a stream of ", budget.stream));
  if (budget.cold_bytes) {
    t.cold_bytes = add_scrub(plan, buffers, std::min<uint64_t>(budget.cold_bytes, limits().max_buffer_bytes));
    budget.untimed = 2;
  }
  auto measure = [&](const std::vector<Dispatch>& chain, std::vector<HostBuffer>& bufs, BenchTiming& into) {
    try {
      PlanTiming pt = time_plan(chain, bufs, dtype, budget);
      into.seconds = std::move(pt.seconds);
      for (double& s : into.seconds) s /= budget.stream;  // each interval held `stream` chains
      into.kernels = std::move(pt.kernels);
      into.no_kernel_statistics = into.kernels.empty() ? std::move(pt.no_kernel_statistics) : "";
    } catch (const Unsupported& e) {
      into.status = RunOutput::Status::unsupported;
      into.message = e.what();
    } catch (const std::exception& e) {
      into.status = RunOutput::Status::error;
      into.message = e.what();
    }
  };
  BenchTiming primer;
  if (budget.primed) {
    // The primer alone first, after the same untimed work (--cold's overwrite) as the chain.
    std::vector<Dispatch> alone(plan.begin(), plan.begin() + budget.untimed);
    std::vector<HostBuffer> bufs;
    if (budget.cold_bytes) bufs.push_back(buffers.back());  // add_scrub's buffer
    add_primer(alone, bufs, budget.untimed);
    measure(alone, bufs, primer);
    if (primer.status == RunOutput::Status::ok) summarize(primer, kind());
    if (primer.status != RunOutput::Status::ok) {
      t.status = primer.status;
      t.message = cat("the primer alone: ", primer.message);
      return t;
    }
    t.primer_median = primer.median;
    add_primer(plan, buffers, budget.untimed);
  }
  measure(plan, buffers, t);
  if (t.status != RunOutput::Status::ok) return t;
  summarize(t, kind());
  if (t.status != RunOutput::Status::ok || !budget.primed) return t;
  // The statistics are the chain's: the primer is bench's, not the case's.
  auto primer_stats = std::find_if(t.kernels.begin(), t.kernels.end(),
                                   [](const KernelStatistics& k) { return k.kernel == "bench_scrub"; });
  if (primer_stats != t.kernels.end()) t.kernels.erase(primer_stats);
  // Medians and minima apart: single repetitions of either scatter more than the difference of a
  // short chain.
  t.median -= primer.median;
  t.min -= primer.min;
  if (!(t.median > 0) || !(t.min > 0)) {
    t.status = RunOutput::Status::error;
    t.message = cat(kind(), ": the chain's time is within the timer's noise past its primer (median ", t.median,
                    " s, minimum ", t.min, " s past the primer's ", primer.median, " s / ", primer.min, " s)");
  }
  return t;
}

BenchTiming GpuBackend::bench(const OpDef& op, const Problem& p, const TimingBudget& budget) {
  Laid laid;
  if (std::optional<RunOutput> r = lay_out(op, p, laid)) {
    BenchTiming t;
    t.status = r->status;
    t.message = r->status == RunOutput::Status::rejected ? cat("rejected: ", r->violation.rule) : r->message;
    return t;
  }
  std::vector<HostBuffer> bufs =
      host_buffers(p, laid.specs, laid.phys, false, limits().max_buffer_bytes + kGuardBytes, tile_overshoot(laid.plan));
  for (HostBuffer& b : bufs) b.snapshot = false;  // the chain alone is timed: no scratch copies inside it
  return timed(laid.plan, bufs, p.dtype, budget);
}

BenchTiming GpuBackend::bench_copy(uint64_t& bytes, const TimingBudget& budget) {
  // At most what one binding may hold (lavapipe: 128 MiB): the caller reads the size it got back.
  bytes = std::min<uint64_t>(bytes, limits().max_buffer_bytes);
  const uint64_t texels = std::max<uint64_t>(1, bytes / 16);
  Dispatch d{"bench_copy", {}, texels, {{"n", double(texels)}}, {}};
  // The source's contents do not matter to a copy; the destination starts as poison like any
  // output. Both are filled on the device: nothing of them crosses from the host.
  std::vector<HostBuffer> bufs;
  bufs.push_back(device_filled("src", texels * 16, 0x3C3C3C3Cu));
  bufs.push_back(device_filled("dst", texels * 16, uint32_t(poison_bits(DType::i32))));
  bytes = texels * 16;
  return timed({d}, bufs, DType::i32, budget);
}

}  // namespace ts
