// touchstone list: operators with their rules, backends with device and capabilities, and whether they
// meet each committed device profile.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "gpu/vulkan/vulkan_backend.h"
#include "gpu/plans/registry.h"
#include "tools/device_peaks.h"
#include "tools/backends.h"
#include "tools/cli_options.h"
#include "tools/commands.h"
#include "tools/device_profile.h"

namespace ts {

int cmd_list(const ListOptions& o) {
  std::vector<BackendSlot> slots = open_backends(o.backends);
  bool missing = false;
  std::printf("Operators\n");
  for (const OpDef* op : all_ops()) {
    std::string ins, outs, dts;
    for (auto& n : op->inputs) ins += (ins.empty() ? "" : ", ") + n;
    for (auto& n : op->outputs) outs += (outs.empty() ? "" : ", ") + n;
    for (DType t : op->dtypes) dts += (dts.empty() ? "" : ", ") + std::string(dtype_name(t));
    std::printf("\n  %s — %s\n    inputs: %s\n    outputs: %s\n    dtypes: %s\n    rules:\n", op->name.c_str(),
                op->summary.c_str(), ins.c_str(), outs.c_str(), dts.c_str());
    for (auto& r : op->rules) std::printf("      %-22s %s\n", r.id.c_str(), r.text.c_str());
    std::printf("    case variables (an id may hold only these; <input>_dtype=T puts one input in another dtype):\n");
    for (auto& v : op->vars) {
      std::string kind = v.kind == Var::Kind::word ? "one of " : v.kind == Var::Kind::integers ? "integers ':'-joined in " : "integer in ";
      if (v.kind == Var::Kind::word)
        for (size_t i = 0; i < v.words.size(); ++i) kind += (i ? "|" : "") + v.words[i];
      else
        kind += cat("[", v.min, ", ", v.max, "]");
      std::printf("      %-12s %s; %s; %s\n", v.name.c_str(), kind.c_str(),
                  v.dflt.empty() ? "required" : ("default " + v.dflt).c_str(), v.help.c_str());
    }
  }
  std::printf("\nBackends\n");
  for (auto& s : slots) {
    if (!s.backend) {
      std::printf("\n  %s: UNAVAILABLE — %s\n", s.name.c_str(), s.unavailable.c_str());
      missing |= s.requested;
      continue;
    }
    DeviceInfo info = s.backend->info();
    std::printf("\n  %s: %s\n", s.name.c_str(), info.name.c_str());
    for (auto& c : info.capabilities) std::printf("    %s\n", c.c_str());
    if (auto peaks = device_peaks(info.name))
      std::printf("    peak: %.1f TFLOP/s float16 tensor, %.1f TOP/s int8 tensor, %.1f TFLOP/s float32 (%s; bench's %% peak)\n",
                  peaks->f16_tensor / 1e12, peaks->int8_tensor / 1e12, peaks->f32 / 1e12, peaks->source.c_str());
    // What --device can pick: Vulkan devices, and for WebGPU Dawn's adapter on the same device.
    std::string why;
    std::printf("    devices (--device INDEX or a name substring%s):\n",
                s.name == "webgpu" ? "; Dawn's Vulkan adapter of that device" : "");
    for (auto& d : VulkanBackend::list_devices(&why)) std::printf("      %s\n", d.c_str());
    if (!why.empty()) std::printf("      none listed: %s\n", why.c_str());
  }
  // Which committed profile this machine meets, before a CI run finds out at open.
  std::printf("\nDevice profiles (check --expect NAME; ci/profiles/NAME.json)\n");
  for (const std::string& name : DeviceProfile::built_in()) {
    const DeviceProfile p = DeviceProfile::load(name);
    std::printf("\n  %s\n", name.c_str());
    for (auto& s : slots) {
      if (!s.backend || !p.require.count(s.name)) continue;
      std::string lacks;
      for (const std::string& w : p.missing(s.name, s.backend->info().capabilities)) lacks += " " + w;
      std::printf("    %s: %s\n", s.name.c_str(), lacks.empty() ? "has every capability it requires" : ("lacks" + lacks).c_str());
    }
  }
  if (missing) std::fprintf(stderr, "error: a backend named with --backend is UNAVAILABLE on this machine\n");
  return missing ? 2 : 0;
}

Command add_list_command(CLI::App& app) {
  CLI::App* list = app.add_subcommand(
      "list", wrap("operators (inputs, outputs, dtypes, contract rules with their ids) and backends (device "
                   "name and capabilities, or why UNAVAILABLE)"));
  auto a = std::make_shared<BackendArgs>();
  add_backend_options(list, *a);
  return {list, [list, a] { return cmd_list({backend_options(*a, list)}); }};
}

}  // namespace ts
