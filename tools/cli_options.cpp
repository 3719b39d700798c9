#include "tools/cli_options.h"

#include <CLI/CLI.hpp>

#include "tools/environment.h"
#include "tools/help_examples.h"

namespace ts {

std::string wrap(std::string_view text, size_t width) {
  std::string out;
  size_t line = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\n') {
      out += '\n';
      line = 0;
      ++i;
      continue;
    }
    size_t end = text.find_first_of(" \n", i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(i, end - i);
    if (line > 0 && line + 1 + word.size() > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out.append(word);
    line += word.size();
    i = end < text.size() && text[end] == ' ' ? end + 1 : end;
  }
  return out;
}

CLI::Option* single_option(CLI::App* app, const std::string& name, std::string& into, const std::string& type,
                           const std::string& help) {
  return app->add_option(name, into, wrap(help, 60))
      ->type_name(type)
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw)
      ->check([name](const std::string& v) { return v.empty() ? "needs a non-empty value" : std::string(); });
}

CLI::Option* list_option(CLI::App* app, const std::string& name, std::vector<std::string>& into,
                         const std::string& type, const std::string& help) {
  return app->add_option(name, into, wrap(help, 60))->type_name(type)->allow_extra_args(false);
}

CLI::Option* flag_option(CLI::App* app, const std::string& name, bool& into, const std::string& help) {
  return app->add_flag(name, into, wrap(help, 60))->multi_option_policy(CLI::MultiOptionPolicy::Throw)->disable_flag_override();
}

void add_backend_options(CLI::App* app, BackendArgs& a) {
  const std::string group = "Backend options";
  list_option(app, "--backend", a.backend, "B[,B...]",
              "vulkan, webgpu or all (default: all, UNAVAILABLE ones shown and warned about); a named backend "
              "that cannot run here is an error, exit 2")
      ->group(group);
  single_option(app, "--device", a.device, "SEL",
                "the device of both backends: an index or a case-insensitive name substring of the Vulkan devices "
                "`touchstone list` shows (WebGPU runs Dawn's Vulkan adapter of that device; default: a GPU, else "
                "lavapipe). One that matches nothing makes each backend UNAVAILABLE, naming the devices found")
      ->group(group);
  flag_option(app, "--validation", a.validation,
              "Khronos validation layer (or TOUCHSTONE_VALIDATION=1; 0 or 1, anything else is a usage error): any "
              "message makes the case ERROR")
      ->group(group);
  flag_option(app, "--no-int-dot", a.no_int_dot,
              "int8 kernels take their scalar path even where the device has a packed integer dot product "
              "(`list` shows int8-dot-product or int8-dot-product=off)")
      ->group(group);
  single_option(app, "--timeout-ms", a.timeout_ms, "MS",
                "per-case GPU timeout, 1..86,400,000 (default 20000): a hung kernel is ERROR")
      ->group(group);
  single_option(app, "--compile-timeout-ms", a.compile_timeout_ms, "MS",
                "budget for compiling, on top of --timeout-ms, 1..86,400,000 (default 300000): a first dispatch "
                "where the device compiles (lavapipe), a WebGPU request with shaders new to its worker, a worker's "
                "start. Exceeding it is an ERROR that says so")
      ->group(group);
  single_option(app, "--kernels", a.kernels, "DIR",
                "your kernels (or TOUCHSTONE_KERNELS=DIR): DIR/<kernel>.comp (Vulkan GLSL) and DIR/<kernel>.wgsl "
                "(WebGPU) replace the built-in kernel of that name (a Dispatch::kernel stem such as " +
                    example_kernels() +
                    "); references, plans, sweeps and goldens are unchanged. `touchstone abi OP` prints the "
                    "interface such a file must follow. A file naming no built-in kernel is a usage error; one "
                    "that does not compile or binds a tensor the plan lacks makes that op's cases ERROR, naming "
                    "the file and line")
      ->group(group);
}

BackendOptions backend_options(const BackendArgs& a, const CLI::App* app) {
  BackendOptions o;
  o.names = split_list("--backend", a.backend);
  o.device = a.device;
  o.validation = a.validation || env_validation();
  o.int_dot = !a.no_int_dot;
  if (!a.timeout_ms.empty()) o.timeout_ms = uint32_t(parse_integer("--timeout-ms", a.timeout_ms, 1, kMaxTimeoutMs));
  if (!a.compile_timeout_ms.empty())
    o.compile_timeout_ms = uint32_t(parse_integer("--compile-timeout-ms", a.compile_timeout_ms, 1, kMaxTimeoutMs));
  if (!a.kernels.empty()) o.kernels = load_kernel_dir(a.kernels);
  else if (const auto dir = env_kernels()) o.kernels = load_kernel_dir(*dir);
  for (const char* name : {"--backend", "--device", "--validation", "--no-int-dot", "--timeout-ms", "--compile-timeout-ms", "--kernels"})
    if (app->get_option_no_throw(name) && app->count(name)) o.given = true;
  return o;
}

void require_distinct(std::initializer_list<NamedFile> outputs, const KernelDir& kernels, std::vector<NamedFile> extra) {
  std::vector<NamedFile> out;
  for (const NamedFile& f : outputs)
    if (!f.path.empty()) out.push_back(f);
  for (const KernelFile& k : kernels.files) extra.push_back({"--kernels file", k.path});
  check_distinct_files(out, extra);
}

}  // namespace ts
