#pragma once
// What each command was asked to do, as its part of the command line parsed it (add_*_command,
// tools/commands.h: the one definition of each command and option, from which --help is
// generated). Numbers are already range-checked; names (operators, dtypes, backends) are checked
// by the command that knows them, before it opens a backend or starts a sweep.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/kernel_dir.h"
#include "tools/sweep.h"

namespace ts {

struct BackendOptions {
  std::vector<std::string> names;  // empty or {"all"}: every known backend, none of them required
  std::string device;              // device selector: index or name substring ("" = default), both backends
  bool validation = false;         // Khronos validation layer (--validation or TOUCHSTONE_VALIDATION=1)
  uint32_t timeout_ms = 20000;
  uint32_t compile_timeout_ms = 300000;  // on top of timeout_ms where compiling (--compile-timeout-ms)
  bool int_dot = true;             // int8 kernels may use the packed dot product (--no-int-dot: scalar path)
  bool kernel_stats = false;       // Vulkan captures compiled-kernel statistics (bench sets it)
  bool given = false;              // any backend option was on the command line
  KernelDir kernels;               // --kernels DIR / TOUCHSTONE_KERNELS: replacements of built-in kernels
  bool own_kernels = false;        // the command needs Touchstone's kernels (bench times them): no foreign backend
};

struct ListOptions {
  BackendOptions backends;
};

struct CheckOptions {
  std::vector<std::string> ops;     // empty: every operator
  std::vector<std::string> dtypes;  // empty: each operator's own dtypes
  int64_t cases = kDefaultCases;    // per operator x dtype
  uint64_t seed = 1;
  uint32_t shard = 0, shards = 1;
  std::string junit;                // "" = none
  std::string json, html;           // reports ("" = none): tools/report_json.h, tools/html_report.h
  std::string xfail;                // known-failure list ("" = none): tools/xfail.h
  std::string expect;               // device profile, a name or a path ("" = none): tools/device_profile.h
  std::string match;                // core/linear_regex.h pattern a case id must contain a match of ("" = every case)
  bool list = false;                // print the case ids the sweep would run; run nothing
  bool fail_fast = false;           // stop after the first unexpected failure (or XPASS)
  bool quiet = false;
  BackendOptions backends;
};

struct ReproOptions {
  std::string id;
  std::string json;                 // "" = none
  BackendOptions backends;
};

struct AbiOptions {
  std::string op;
  std::string dtype;                // "" = the operator's first dtype
};

struct BenchOptions {
  std::vector<std::string> ids;     // case ids to time (default: the named suite, tools/bench.cpp)
  std::vector<std::string> ops;     // empty: every operator of the suite
  std::vector<std::string> dtypes;  // empty: every dtype of the suite
  std::string match;                // core/linear_regex.h pattern a case id must contain a match of
  std::string size;                 // "quick", "full"; "": quick on a CPU device, full on a GPU
  std::string json;                 // "" = none: tools/BENCH_SCHEMA.md
  uint32_t warmup = 3;              // untimed repetitions per case
  int64_t warmup_ms = -1;           // and untimed work until this long has passed; -1: 500 on a GPU, 0 on a CPU device
  uint32_t reps = 1000;             // at most this many timed repetitions per case
  uint32_t time_ms = 200;
  uint32_t stream = 1;              // dispatch chains per timed interval (TimingBudget::stream)
  bool cold = false;                // the caches overwritten before each interval (TimingBudget::cold_bytes)
  bool primed = false;              // a primer opens each interval, its own time taken off (TimingBudget::primed)
  bool kernel_stats = false;        // print the compiled kernels' statistics under each timed case
  BackendOptions backends;
};

struct MergeOptions {
  std::string out;                  // the merged JSON report
  std::vector<std::string> inputs;  // the shards' JSON reports
  std::string junit, html;          // "" = none
};

struct GoldenOptions {
  std::string sub;                   // regen, verify, export, show
  std::vector<std::string> args;     // verify/show: files; export: the case id
  std::string dir, junit, out;
  std::string layout;                // verify: the storage to run every golden in ("" = its own)
  bool reference_only = false;
  BackendOptions backends;
};

// Strict decimal integers: digits only (no sign, blanks, base prefix or exponent) and within
// [lo, hi]; anything else is a UsageError naming the option, the range and what was given.
uint64_t parse_integer(std::string_view option, std::string_view text, uint64_t lo, uint64_t hi);

// "I/N" with 0 <= I < N <= kMaxShards, both strict decimal integers.
std::pair<uint32_t, uint32_t> parse_shard(std::string_view text);

// A comma-separated list: "a,b" -> {a, b}. An empty item or one given twice is a UsageError.
std::vector<std::string> split_list(std::string_view option, const std::vector<std::string>& values);

constexpr uint64_t kMaxCases = 10'000'000;
constexpr uint32_t kMaxShards = 1'000'000;
constexpr uint32_t kMaxTimeoutMs = 86'400'000;  // a day

}  // namespace ts
