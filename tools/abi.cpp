// touchstone abi OP: the interface a kernel of OP must follow (for --kernels DIR), derived at run time
// from what the backends use: the op's plan on its own valid edge cases (one sample per distinct
// sequence of kernels), the tensors of those cases, the built-in kernels' declarations, and the
// preambles the backends generate. Nothing here is a table that could drift from the code.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>

#include "gpu/embedded.h"
#include "gpu/gpu_backend.h"
#include "gpu/kernel_source.h"
#include "gpu/vulkan/accessors.h"
#include "gpu/vulkan/programs.h"
#include "gpu/plans/registry.h"
#include "tools/cli_options.h"
#include "tools/commands.h"
#ifdef TS_HAVE_WEBGPU
#include "gpu/webgpu/accessors.h"
#include "gpu/webgpu/webgpu_backend.h"
#endif

namespace ts {
namespace {

std::string number_text(double v) { return v == std::floor(v) && std::fabs(v) < 9e15 ? cat(int64_t(v)) : cat(v); }

std::string joined(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const std::string& x : v) s += cat(s.empty() ? "" : sep, x);
  return s;
}

int64_t input_elements(const Problem& p) {
  int64_t n = 0;
  for (auto& [name, t] : p.inputs) n += t.numel();
  return n;
}

// A sample case per distinct sequence of kernels the plan makes from the valid edge cases: the
// smallest (fewest input elements) of each.
struct Sample {
  Case c;
  Problem p;
  std::vector<Dispatch> plan;
};

std::vector<Sample> samples(const OpDef& op, DType dtype) {
  std::map<std::string, Sample> by_kernels;
  std::vector<std::string> order;
  for (const Case& c : op.edge_cases(dtype)) {
    Problem p = make_problem(op, c);
    if (op.validate(p)) continue;
    std::vector<Dispatch> plan = op.plan(p);
    std::vector<std::string> kernels;
    for (const Dispatch& d : plan) kernels.push_back(d.kernel);
    const std::string key = joined(kernels, " -> ");
    auto it = by_kernels.find(key);
    if (it == by_kernels.end()) order.push_back(key);
    if (it == by_kernels.end() || input_elements(p) < input_elements(it->second.p))
      by_kernels[key] = {c, std::move(p), std::move(plan)};
  }
  std::vector<Sample> out;
  for (const std::string& k : order) out.push_back(std::move(by_kernels.at(k)));
  return out;
}

// The tensor a binding name reaches, with its shape and dtype in the sample ("" if the case has none).
std::string tensor_text(const Sample& s, const std::vector<BufferSpec>& specs, const Dispatch& d, const std::string& name) {
  const std::string t = bound_tensor(d, name);
  if (auto it = s.p.inputs.find(t); it != s.p.inputs.end())
    return cat(t, " ", dtype_name(it->second.dtype), shape_str(it->second.shape));
  for (const BufferSpec& b : specs)
    if (b.name == t) return cat(t, " ", dtype_name(b.dtype), shape_str(b.shape));
  return cat(t, " (NOT a tensor of this case)");
}

// The built-in kernel's bindings, as its own text declares them.
void print_builtin_bindings(const Sample& s, const std::vector<BufferSpec>& specs, const Dispatch& d, const char* ext) {
  std::string text;  // a copy: get() returns its text by value
  try {
    text = KernelSources(ext).get(d.kernel).text;
  } catch (const std::exception&) {
    std::printf("      %s: no built-in kernel\n", ext);
    return;
  }
  std::map<uint32_t, std::string> lines;
  const std::string src(text);
  if (std::string(ext) == ".comp") {
    for (const vk::AccessorDecl& a : vk::parse_accessors(text, d.kernel + ext, nullptr))
      lines[a.binding] = cat(a.output ? "TS_OUTPUT(" : "TS_INPUT(", a.name, ", ", a.binding, ")  -> ", tensor_text(s, specs, d, a.name));
    static const std::regex block(R"(layout\s*\(([^)]*)\)\s*((?:readonly|writeonly|restrict|coherent|\s)*)buffer\s+\w+\s*\{\s*(\w+)\s+(\w+)\s*\[\s*\]\s*;\s*\})");
    static const std::regex binding(R"(binding\s*=\s*(\d+))");
    for (auto it = std::sregex_iterator(src.begin(), src.end(), block); it != std::sregex_iterator(); ++it) {
      std::smatch b;
      const std::string q = (*it)[1];
      if (!std::regex_search(q, b, binding)) continue;
      std::string access = (*it)[2];
      access.erase(std::remove(access.begin(), access.end(), '\n'), access.end());
      lines[uint32_t(std::stoul(b[1]))] = cat("plain array `", (*it)[3], " ", (*it)[4], "[]` ", access, "-> ",
                                              tensor_text(s, specs, d, (*it)[4]));
    }
    static const std::regex push(R"(layout\s*\(\s*push_constant\s*\)\s*uniform\s+\w+\s*\{([^}]*)\})");
    std::smatch m;
    std::string members;
    if (std::regex_search(src, m, push))
      members = std::regex_replace(std::regex_replace(m[1].str(), std::regex(R"(\s+)"), " "), std::regex(R"(^ | $)"), "");
    for (auto& [b, l] : lines) std::printf("      %s binding %-2u %s\n", ext, b, l.c_str());
    std::printf("      %s push constants read: %s\n", ext, members.empty() ? "(none)" : members.c_str());
    return;
  }
#ifdef TS_HAVE_WEBGPU
  for (const webgpu::TensorDecl& a : webgpu::tensor_decls(text, d.kernel + ext))
    lines[a.binding] = cat(a.output ? "TS_OUTPUT(" : "TS_INPUT(", a.name, ", ", a.binding, ")  -> ", tensor_text(s, specs, d, a.name));
  static const std::regex storage(R"(@binding\((\d+)\)\s*var<storage\s*,\s*(read|read_write)>\s*(\w+)\s*:\s*([^;]+);)");
  for (auto it = std::sregex_iterator(src.begin(), src.end(), storage); it != std::sregex_iterator(); ++it)
    lines[uint32_t(std::stoul((*it)[1]))] = cat("plain `var<storage, ", (*it)[2], "> ", (*it)[3], " : ", (*it)[4], "` -> ",
                                                tensor_text(s, specs, d, (*it)[3]));
  static const std::regex uniform(R"(@binding\((\d+)\)\s*var<uniform>\s*(\w+)\s*:\s*(\w+))");
  for (auto it = std::sregex_iterator(src.begin(), src.end(), uniform); it != std::sregex_iterator(); ++it) {
    std::smatch m;
    const std::string type = (*it)[3];
    std::string members;
    if (std::regex_search(src, m, std::regex("struct\\s+" + type + "\\s*\\{([^}]*)\\}")))
      members = std::regex_replace(m[1].str(), std::regex(R"(\s+)"), " ");
    lines[uint32_t(std::stoul((*it)[1]))] = cat("uniform `", (*it)[2], " : ", type, "` {", members, "}");
  }
  for (auto& [b, l] : lines) std::printf("      %s binding %-2u %s\n", ext, b, l.c_str());
#endif
}

void print_sample(const OpDef& op, const Sample& s, size_t index, size_t count) {
  std::printf("\n== variant %zu of %zu: %zu dispatch%s; sample case (the smallest valid edge case of this variant):\n   %s\n",
              index + 1, count, s.plan.size(), s.plan.size() == 1 ? "" : "es", s.c.id().c_str());
  const std::vector<BufferSpec> specs = op.buffers(s.p);
  std::printf("\n  contract (the shapes as formulas of the case variables; `touchstone list` shows the variables):\n");
  for (const Rule& r : op.rules) std::printf("    %-22s %s\n", r.id.c_str(), r.text.c_str());
  std::printf("\n  tensors (shapes of the sample):\n");
  auto layouts_of = [&](const std::string& name) {
    auto it = op.layouts.find(name);
    return it == op.layouts.end() ? std::vector<std::string>{"buffer"} : it->second;
  };
  auto how = [&](const std::string& name, bool scratch) {
    const std::vector<std::string> l = scratch ? std::vector<std::string>{"buffer"} : layouts_of(name);
    return l.size() == 1 && l[0] == "buffer"
               ? std::string("always a buffer: a plain array, or TS_INPUT/TS_OUTPUT")
               : cat("layouts ", joined(l, " "), ": declare it with TS_INPUT/TS_OUTPUT (accessors)");
  };
  for (auto& [name, t] : s.p.inputs) {
    const bool in_place = std::any_of(specs.begin(), specs.end(), [&](const BufferSpec& b) { return b.init_from == name; });
    if (in_place) continue;
    std::printf("    %-14s input   %-9s %-20s %s\n", name.c_str(), std::string(dtype_name(t.dtype)).c_str(),
                shape_str(t.shape).c_str(), how(name, false).c_str());
  }
  for (const BufferSpec& b : specs) {
    const bool scratch = b.role == BufferSpec::Role::scratch;
    const char* role = scratch ? "scratch" : b.init_from.empty() ? "output" : "in/out";
    std::printf("    %-14s %-7s %-9s %-20s %s%s\n", b.name.c_str(), role, std::string(dtype_name(b.dtype)).c_str(),
                shape_str(b.shape).c_str(), how(b.name, scratch).c_str(),
                scratch ? "; never compared, but poisoned: the first dispatch binding it writes every element"
                : !b.init_from.empty() ? "; starts as the input of that name, updated in place"
                                       : "; poisoned before the run: every element must be written");
  }
  const DeviceLimits lim;  // the common 65,535 workgroups per dimension
  for (size_t i = 0; i < s.plan.size(); ++i) {
    const Dispatch& d = s.plan[i];
    std::printf("\n  dispatch %zu: kernel %s  (replaced by DIR/%s.comp, DIR/%s.wgsl)\n", i + 1, d.kernel.c_str(),
                d.kernel.c_str(), d.kernel.c_str());
    if (d.concurrent)
      std::printf("    runs beside dispatch %zu (Dispatch::concurrent; Vulkan puts no barrier between them): the two may "
                  "share no tensor that either writes\n", i);
    std::printf("    defines: %s%s\n", d.defines.empty() ? "(none)" : joined(d.defines).c_str(),
                "; TS_INT_DOT=1 is added where the device's packed int8 dot product is used (not for a case with an odd seed: its fallbacks run)");
    const uint32_t wg = d.workgroup ? d.workgroup : 64;
    const std::optional<Grid> g = fold_grid(d.invocations, wg, lim);
    std::printf("    invocations: %llu (a 1-D grid); workgroup: %s\n", (unsigned long long)d.invocations,
                d.workgroup ? cat("exactly ", d.workgroup, " (Dispatch::workgroup: the kernel cooperates in shared memory)").c_str()
                            : "the backend's (64 unless set; GLSL: specialization constant 0 via the preamble's "
                              "local_size_x_id, WGSL: @workgroup_size(WG))");
    if (g)
      std::printf("    grid at workgroup %u: %u x %u x %u workgroups (x up to 65,535 per dimension, then y, then z); "
                  "ts_linear_id() unfolds it, and invocations past %llu exist: bound-check the id%s\n",
                  g->workgroup_size, g->groups[0], g->groups[1], g->groups[2], (unsigned long long)d.invocations,
                  d.uniforms.count("n") ? " against the uniform `n`" : "");
    std::vector<std::string> u;
    for (auto& [name, v] : d.uniforms) u.push_back(cat(name, " = ", number_text(v)));
    std::printf("    uniforms (GLSL push constants / the WGSL var<uniform> struct, filled by member name and converted "
                "to the member's type u32/i32/f32; a kernel may read any subset):\n      %s\n",
                u.empty() ? "(none)" : joined(u).c_str());
    if (!d.bind.empty()) {
      std::vector<std::string> b;
      for (auto& [from, to] : d.bind) b.push_back(cat(from, " -> tensor ", to));
      std::printf("    binding names remapped by the plan: %s\n", joined(b).c_str());
    }
    std::printf("    the built-in kernels bind (binding numbers are the kernel's choice, below 16; names bind tensors):\n");
    print_builtin_bindings(s, specs, d, ".comp");
#ifdef TS_HAVE_WEBGPU
    print_builtin_bindings(s, specs, d, ".wgsl");
#endif
  }
}

void print_preambles(DType dtype, const std::vector<std::string>& defines) {
  std::printf("\n== what every kernel gets before its own text, for %s\n", std::string(dtype_name(dtype)).c_str());
  std::printf("\n  GLSL (gpu/vulkan/shaders/preamble.glsl, then these defines, the plan's defines as #define, then the\n"
              "  accessors generated for each TS_INPUT/TS_OUTPUT line). The preamble's functions:\n");
  const std::string pre(embedded("gpu/vulkan/shaders/preamble.glsl"));
  static const std::regex fn(R"(^(\w+\s+ts_\w+\([^)]*\)))", std::regex::multiline);
  std::vector<std::string> fns;
  for (auto it = std::sregex_iterator(pre.begin(), pre.end(), fn); it != std::sregex_iterator(); ++it) fns.push_back((*it)[1]);
  for (const std::string& f : fns) std::printf("    %s\n", f.c_str());
  std::printf("  and `layout(local_size_x_id = 0) in;` (do not declare a local size), constants TS_BUFFER .. TS_INT8_4W4C, TS_PADDING.\n");
  try {
    std::string defs = vk::dtype_defines(dtype);
    std::printf("  dtype defines:\n    %s\n", std::regex_replace(defs.substr(0, defs.size() - 1), std::regex("\n"), "\n    ").c_str());
  } catch (const std::exception& e) {
    std::printf("  dtype defines: none (%s)\n", e.what());
  }
#ifdef TS_HAVE_WEBGPU
  std::string w = WebGpuBackend::preamble(dtype, dtype == DType::f16, false, false, defines, true);
  std::printf("\n  WGSL (generated per program; then the accessor library and each TS_INPUT/TS_OUTPUT's functions):\n    %s\n",
              std::regex_replace(w.substr(0, w.size() - 1), std::regex("\n"), "\n    ").c_str());
#endif
  // The shared code a kernel may pull in with a line `#include "name"` (gpu/kernel_source.h).
  for (const char* ext : {".comp", ".wgsl"}) {
    const std::string dir = builtin_kernel_dir(ext);
    const std::vector<std::string> kernels = builtin_kernels(ext);
    std::vector<std::string> includes;
    for (auto& [path, text] : embedded_files()) {
      if (path.rfind(dir, 0) != 0 || path == dir + "preamble.glsl") continue;
      const std::string name = path.substr(dir.size());
      const std::string stem = name.substr(0, name.rfind('.'));
      if (!name.ends_with(ext) || std::find(kernels.begin(), kernels.end(), stem) == kernels.end()) includes.push_back(name);
    }
    std::printf("\n  %s includes (`#include \"name\"` on its own line, resolved from %s): %s\n", ext, dir.c_str(),
                includes.empty() ? "(none)" : joined(includes).c_str());
  }
  std::printf("\n  Layout accessors (NAME_at, NAME_at4, NAME_store, NAME_flat, NAME_texels, NAME_dims, ...): gpu/ACCESSORS.md;\n"
              "  ts_meta (the tensors' dims) binds at binding 16.\n");
}

}  // namespace

int cmd_abi(const AbiOptions& o) {
  const OpDef* op = find_op(o.op);
  if (!op) {
    std::vector<std::string> names;
    for (const OpDef* x : all_ops()) names.push_back(x->name);
    throw UsageError(cat("unknown operator '", o.op, "' (operators: ", joined(names), ")"));
  }
  DType dtype = op->dtypes.at(0);
  if (!o.dtype.empty()) {
    auto t = parse_dtype(o.dtype);
    if (!t || std::find(op->dtypes.begin(), op->dtypes.end(), *t) == op->dtypes.end()) {
      std::vector<std::string> names;
      for (DType x : op->dtypes) names.push_back(std::string(dtype_name(x)));
      throw UsageError(cat("operator ", op->name, " does not define dtype '", o.dtype, "' (its dtypes: ", joined(names), ")"));
    }
    dtype = *t;
  }
  std::printf("kernel ABI of %s (%s), case dtype %s: what DIR/<kernel>.comp / .wgsl must follow under --kernels DIR\n",
              op->name.c_str(), op->summary.c_str(), std::string(dtype_name(dtype)).c_str());
  const std::vector<Sample> all = samples(*op, dtype);
  if (all.empty()) throw std::runtime_error(cat(op->name, " has no valid edge case of dtype ", dtype_name(dtype)));
  std::vector<std::string> defines;
  for (size_t i = 0; i < all.size(); ++i) {
    print_sample(*op, all[i], i, all.size());
    for (const Dispatch& d : all[i].plan)
      for (const std::string& def : d.defines)
        if (std::find(defines.begin(), defines.end(), def) == defines.end()) defines.push_back(def);
  }
  print_preambles(dtype, defines);
  return 0;
}

Command add_abi_command(CLI::App& app) {
  auto a = std::make_shared<AbiOptions>();
  CLI::App* abi = app.add_subcommand(
      "abi", wrap("the kernel ABI of an operator: what a file under --kernels DIR must follow. Derived from the "
                  "op's plan on its valid edge cases (one sample per sequence of kernels, e.g. an operator's naive "
                  "and tiled implementations): per dispatch the kernel stem, defines, invocations and workgroup (how "
                  "ts_linear_id() folds the grid), the uniform / push-constant members with the sample's values, the "
                  "tensors' shapes, dtypes and layouts (TS_INPUT/TS_OUTPUT accessors vs plain arrays) and the "
                  "built-in kernels' bindings; then the preamble and defines each language gets (gpu/ACCESSORS.md)"));
  abi->add_option("OP", a->op, "the operator (see touchstone list)")->required()->type_name("");
  single_option(abi, "--dtype", a->dtype, "T", "the case dtype whose defines and sample are shown (default: the op's first)");
  return {abi, [a] { return cmd_abi(*a); }};
}

}  // namespace ts
