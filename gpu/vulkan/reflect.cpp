#include "gpu/vulkan/reflect.h"

#include <spirv_cross_c.h>

#include <map>
#include <memory>
#include <stdexcept>

#include "core/contract.h"

namespace ts::vk {

namespace {

using Context = std::unique_ptr<spvc_context_s, decltype(&spvc_context_destroy)>;

struct Reflector {
  spvc_context ctx;
  spvc_compiler compiler = nullptr;
  spvc_resources resources = nullptr;
  const std::string& kernel;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(cat("vulkan: kernel '", kernel, "': ", what));
  }
  void check(spvc_result r, const char* what) const {
    if (r != SPVC_SUCCESS) fail(cat(what, ": ", spvc_context_get_last_error_string(ctx)));
  }
  std::pair<const spvc_reflected_resource*, size_t> list(spvc_resource_type type) const {
    const spvc_reflected_resource* items = nullptr;
    size_t n = 0;
    check(spvc_resources_get_resource_list_for_type(resources, type, &items, &n), "reflection");
    return {items, n};
  }
};

PushMember::Type scalar_type(const Reflector& r, spvc_type t, const std::string& name) {
  bool scalar = spvc_type_get_vector_size(t) == 1 && spvc_type_get_columns(t) == 1 &&
                spvc_type_get_num_array_dimensions(t) == 0;
  switch (scalar ? spvc_type_get_basetype(t) : SPVC_BASETYPE_UNKNOWN) {
    case SPVC_BASETYPE_UINT32: return PushMember::Type::u32;
    case SPVC_BASETYPE_INT32: return PushMember::Type::i32;
    case SPVC_BASETYPE_FP32: return PushMember::Type::f32;
    default: r.fail(cat("push constant '", name, "' must be a uint, int or float scalar"));
  }
}

// The Workgroup variables' sizes, read from the SPIR-V itself: SPIRV-Cross's C API does not list
// them. Scalars and vectors at their natural size, arrays at ArrayStride (when decorated) times a
// constant length, structs as the sum of their members; an array whose length is a specialization
// constant makes its variable's size unknown (not counted). Workgroup memory layout is the driver's
// own, so this is what the kernel asks for, not what the driver reserves: a check up front, while
// the driver stays the judge of the near misses.
uint64_t workgroup_bytes(const std::vector<uint32_t>& spirv) {
  constexpr uint64_t kUnknown = ~uint64_t(0);
  std::map<uint32_t, uint64_t> size, constant, stride;  // by result id
  std::map<uint32_t, uint32_t> pointee;                  // Workgroup pointer type -> pointee type
  uint64_t total = 0;
  auto size_of = [&](uint32_t id) {
    auto it = size.find(id);
    return it == size.end() ? kUnknown : it->second;
  };
  auto times = [](uint64_t a, uint64_t b) { return a == kUnknown || b == kUnknown ? kUnknown : a * b; };
  for (size_t i = 5; i < spirv.size();) {
    const uint32_t words = spirv[i] >> 16, op = spirv[i] & 0xFFFF;
    if (words == 0 || i + words > spirv.size()) break;  // malformed: glslang never emits it
    const uint32_t* w = &spirv[i];
    switch (op) {
      case SpvOpDecorate:
        if (words >= 4 && w[2] == SpvDecorationArrayStride) stride[w[1]] = w[3];
        break;
      case SpvOpTypeBool: size[w[1]] = 4; break;
      case SpvOpTypeInt:
      case SpvOpTypeFloat: size[w[1]] = w[2] / 8; break;
      case SpvOpTypeVector:
      case SpvOpTypeMatrix: size[w[1]] = times(size_of(w[2]), w[3]); break;
      case SpvOpConstant:
        if (words >= 4) constant[w[2]] = w[3];
        break;
      case SpvOpTypeArray: {
        auto len = constant.find(w[3]);
        auto st = stride.find(w[1]);
        size[w[1]] = times(st != stride.end() ? st->second : size_of(w[2]), len != constant.end() ? len->second : kUnknown);
        break;
      }
      case SpvOpTypeStruct: {
        uint64_t sum = 0;
        for (uint32_t m = 2; m < words && sum != kUnknown; ++m)
          sum = size_of(w[m]) == kUnknown ? kUnknown : sum + size_of(w[m]);
        size[w[1]] = sum;
        break;
      }
      case SpvOpTypePointer:
        if (w[2] == SpvStorageClassWorkgroup) pointee[w[1]] = w[3];
        break;
      case SpvOpVariable:
        if (w[3] == SpvStorageClassWorkgroup)
          if (auto p = pointee.find(w[1]); p != pointee.end() && size_of(p->second) != kUnknown)
            total += size_of(p->second);
        break;
      case SpvOpFunction: return total;  // every type and global variable comes before the first function
      default: break;
    }
    i += words;
  }
  return total;
}

// What SPIRV-Cross is shown of a kernel that multiplies on cooperative matrices: Debian's
// SPIRV-Cross cannot parse SPV_NV_cooperative_matrix (neither its types nor its instructions), and
// reflection needs neither: only the module's capabilities, types, decorations and global variables,
// all of which come before the first function. Kept: those, each cooperative-matrix type recast as
// a 4-vector of its component type (same id, so what refers to it still parses), and the entry
// point with an empty body. Other modules pass unchanged.
std::vector<uint32_t> reflection_view(const std::vector<uint32_t>& spirv) {
  bool coopmat = false;
  for (size_t i = 5; i < spirv.size() && (spirv[i] >> 16);) {
    if ((spirv[i] & 0xFFFF) == SpvOpCapability && spirv[i + 1] == SpvCapabilityCooperativeMatrixNV) coopmat = true;
    i += spirv[i] >> 16;
  }
  if (!coopmat) return spirv;
  std::vector<uint32_t> out(spirv.begin(), spirv.begin() + 5);
  for (size_t i = 5; i < spirv.size();) {
    const uint32_t words = spirv[i] >> 16, op = spirv[i] & 0xFFFF;
    if (words == 0 || i + words > spirv.size()) break;
    const uint32_t* w = &spirv[i];
    if (op == SpvOpFunction) {
      const uint32_t label = out[3]++;  // a fresh id: the bound grows by one
      out.insert(out.end(), w, w + words);
      out.insert(out.end(), {(2u << 16) | SpvOpLabel, label, (1u << 16) | SpvOpReturn, (1u << 16) | SpvOpFunctionEnd});
      break;  // glslang emits the entry point first; reflection needs no function body
    }
    if (op == SpvOpTypeCooperativeMatrixNV) out.insert(out.end(), {(4u << 16) | SpvOpTypeVector, w[1], w[2], 4u});
    else out.insert(out.end(), w, w + words);
    i += words;
  }
  return out;
}

}  // namespace

Reflection reflect(const std::vector<uint32_t>& spirv, const std::string& kernel) {
  spvc_context raw = nullptr;
  if (spvc_context_create(&raw) != SPVC_SUCCESS) throw std::runtime_error("vulkan: spvc_context_create failed");
  Context owner(raw, spvc_context_destroy);  // owns every object made from it
  Reflector r{raw, nullptr, nullptr, kernel};
  spvc_parsed_ir ir = nullptr;
  const std::vector<uint32_t> view = reflection_view(spirv);
  r.check(spvc_context_parse_spirv(raw, view.data(), view.size(), &ir), "parsing SPIR-V");
  r.check(spvc_context_create_compiler(raw, SPVC_BACKEND_NONE, ir, SPVC_CAPTURE_MODE_TAKE_OWNERSHIP, &r.compiler),
          "reflection");
  r.check(spvc_compiler_create_shader_resources(r.compiler, &r.resources), "reflection");

  const std::pair<spvc_resource_type, const char*> unbindable[] = {
      {SPVC_RESOURCE_TYPE_UNIFORM_BUFFER, "uniform buffer"},
      {SPVC_RESOURCE_TYPE_SAMPLED_IMAGE, "sampled image"},
      {SPVC_RESOURCE_TYPE_SEPARATE_IMAGE, "image"},
      {SPVC_RESOURCE_TYPE_SEPARATE_SAMPLERS, "sampler"},
      {SPVC_RESOURCE_TYPE_ACCELERATION_STRUCTURE, "acceleration structure"}};
  for (auto [type, what] : unbindable)
    if (auto [items, n] = r.list(type); n)
      r.fail(cat("declares ", what, " '", items[0].name, "'; the vulkan backend binds storage buffers and storage images only"));

  Reflection out;
  // One resource per binding of descriptor set 0 (the backend's only set), never an array of them.
  auto single_in_set_0 = [&r](const spvc_reflected_resource& b, const char* what, const char* plural) {
    if (spvc_compiler_get_decoration(r.compiler, b.id, SpvDecorationDescriptorSet) != 0)
      r.fail(cat(what, " '", b.name, "' is not in descriptor set 0"));
    if (spvc_type_get_num_array_dimensions(spvc_compiler_get_type_handle(r.compiler, b.type_id)) != 0)
      r.fail(cat(what, " '", b.name, "' is an array of ", plural));
  };
  auto [buffers, nbuf] = r.list(SPVC_RESOURCE_TYPE_STORAGE_BUFFER);
  for (size_t i = 0; i < nbuf; ++i) {
    const spvc_reflected_resource& b = buffers[i];
    single_in_set_0(b, "storage buffer", "blocks");
    const char* first = spvc_compiler_get_member_name(r.compiler, b.base_type_id, 0);
    if (!first || !*first) r.fail(cat("storage buffer '", b.name, "' has no named first member"));
    out.buffers.push_back({spvc_compiler_get_decoration(r.compiler, b.id, SpvDecorationBinding), first, false});
  }
  auto [images, nimg] = r.list(SPVC_RESOURCE_TYPE_STORAGE_IMAGE);
  for (size_t i = 0; i < nimg; ++i) {
    const spvc_reflected_resource& b = images[i];
    single_in_set_0(b, "storage image", "images");
    if (spvc_type_get_image_dimension(spvc_compiler_get_type_handle(r.compiler, b.base_type_id)) != SpvDim3D)
      r.fail(cat("storage image '", b.name, "' is not 3-D (texture3d tensors are image3D)"));
    out.buffers.push_back({spvc_compiler_get_decoration(r.compiler, b.id, SpvDecorationBinding), b.name, true});
  }

  auto [push, npush] = r.list(SPVC_RESOURCE_TYPE_PUSH_CONSTANT);
  if (npush) {
    spvc_type block = spvc_compiler_get_type_handle(r.compiler, push[0].base_type_id);
    size_t size = 0;
    r.check(spvc_compiler_get_declared_struct_size(r.compiler, block, &size), "push constant size");
    out.push_size = uint32_t(size);
    for (unsigned m = 0; m < spvc_type_get_num_member_types(block); ++m) {
      PushMember pm;
      pm.name = spvc_compiler_get_member_name(r.compiler, push[0].base_type_id, m);
      r.check(spvc_compiler_type_struct_member_offset(r.compiler, block, m, &pm.offset), "push constant offset");
      spvc_type t = spvc_compiler_get_type_handle(r.compiler, spvc_type_get_member_type(block, m));
      pm.type = scalar_type(r, t, pm.name);
      out.push.push_back(std::move(pm));
    }
  }

  const SpvCapability* caps = nullptr;
  size_t ncaps = 0;
  r.check(spvc_compiler_get_declared_capabilities(r.compiler, &caps, &ncaps), "capabilities");
  out.capabilities.assign(caps, caps + ncaps);
  out.shared_bytes = workgroup_bytes(spirv);
  return out;
}

}  // namespace ts::vk
