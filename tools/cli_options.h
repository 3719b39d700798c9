#pragma once
// What each command's part of the command line is built from (CLI11): options that follow
// touchstone's strict rules (one value, given once, never empty), help text wrapped to the
// formatter's width, the backend options every GPU command shares, and the check that a command
// writes over none of the files it reads. Values arrive as text and are converted once parsing is
// over (tools/options.h), so every usage error exits 2 before any work starts.
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "tools/options.h"
#include "tools/report_file.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ts {

// Breaks a help text into lines of at most `width` columns at spaces; the formatter indents them.
std::string wrap(std::string_view text, size_t width = 66);

// An option taking one value: given twice, or with an empty value, is a usage error.
CLI::Option* single_option(CLI::App* app, const std::string& name, std::string& into, const std::string& type,
                           const std::string& help);
// A comma-separated list; the option may be repeated, each time with one value.
CLI::Option* list_option(CLI::App* app, const std::string& name, std::vector<std::string>& into,
                         const std::string& type, const std::string& help);
// A switch: given twice, or with a value, is a usage error.
CLI::Option* flag_option(CLI::App* app, const std::string& name, bool& into, const std::string& help);

// The backend options as given.
struct BackendArgs {
  std::vector<std::string> backend;
  std::string device, timeout_ms, compile_timeout_ms, kernels;
  bool validation = false, no_int_dot = false;
};
void add_backend_options(CLI::App* app, BackendArgs& a);
// Converted (and --kernels DIR read), once `app` parsed.
BackendOptions backend_options(const BackendArgs& a, const CLI::App* app);

// The files a command reads and writes, checked with check_distinct_files: its outputs (those
// given), and its inputs, `extra` and the files of --kernels DIR.
void require_distinct(std::initializer_list<NamedFile> outputs, const KernelDir& kernels, std::vector<NamedFile> extra = {});

}  // namespace ts
