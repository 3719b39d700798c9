// touchstone bench: device time of named workloads, every implementation of an operator side by
// side, each case judged against the reference first (a wrong kernel is FAIL, never a time).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/linear_regex.h"
#include "core/runner.h"
#include "goldens/files.h"
#include "gpu/gpu_backend.h"
#include "gpu/plans/registry.h"
#include "tools/device_peaks.h"
#include "tools/backends.h"
#include "tools/bench.h"
#include "tools/commands.h"
#include "tools/report_file.h"
#include "tools/report_json.h"
#include "tools/shell_quote.h"
#include "tools/tally.h"

namespace ts {
namespace {

// Bench judges exactly the case it times, so a named workload may need more host memory than
// check allows a case (kMaxCaseBytes, 2 GiB, chosen for sweeps of many drawn cases): the largest
// RoPE workload holds 0.7 GB of inputs and 1.4 GB of float64 reference outputs. The suite's sizes are fixed and fit the machines they are meant for (a GPU machine with
// 128 GiB of host memory); a user's id past this limit is still refused before anything is allocated.
constexpr uint64_t kBenchMaxCaseBytes = uint64_t(8) << 30;

// The copy that measures the bandwidth ceiling: past every cache of the device.
constexpr uint64_t kCopyBytesFull = uint64_t(512) << 20, kCopyBytesQuick = uint64_t(32) << 20;
// --cold's overwrite: several times the last-level cache of the largest GPUs Touchstone is run on
// (PERFORMANCE.md), lowered on each backend to what one binding may hold there (the header says).
constexpr uint64_t kColdBytes = uint64_t(256) << 20;
constexpr uint64_t kFloorBytes = 16;  // one texel: the fixed cost of a timed interval (Copy::floor)

bool cpu_device(const DeviceInfo& info) {
  const auto& c = info.capabilities;
  return std::find(c.begin(), c.end(), "device-type=cpu") != c.end();
}

// The filters given, as typed: "--op OP --match 'x'".
std::string filter_words(const BenchOptions& o) {
  std::string s;
  for (const std::string& n : o.ops) s += cat(s.empty() ? "" : " ", "--op ", n);
  for (const std::string& d : o.dtypes) s += cat(s.empty() ? "" : " ", "--dtype ", d);
  if (!o.match.empty()) s += cat(s.empty() ? "" : " ", "--match ", shell_quote(o.match));
  if (!o.ids.empty()) s += cat(s.empty() ? "" : " ", o.ids.size(), " case ids");
  return s;
}

// The ids one workload id stands for: itself if it names `impl` (or the operator has none), else
// one per implementation word the operator declares. `auto` is left out: it only picks one of the
// others by shape (e.g. a GEMV iff M = 1), which would time the same kernel twice.
std::vector<Case> implementations(const Case& c) {
  const OpDef* op = find_op(c.op);
  auto var = std::find_if(op->vars.begin(), op->vars.end(), [](const Var& v) { return v.name == "impl"; });
  if (c.has("impl") || var == op->vars.end()) return {c};
  std::vector<Case> out;
  for (const std::string& w : var->words)
    if (w != "auto") out.push_back(Case(c).set("impl", w));
  return out;
}

// The workload's key for speedups: the id without its impl.
std::string without_impl(Case c) {
  std::erase_if(c.vars, [](const auto& kv) { return kv.first == "impl"; });
  return c.id();
}

struct Row {
  std::string workload, id, op, impl, backend, dtype;
  Outcome outcome = Outcome::error;
  std::string detail;       // why not PASS, or why it was not timed
  bool timed = false;
  BenchTiming timing;
  std::optional<double> bytes, ops;
  DType type = DType::f32;  // the case's (dtype holds its name)
  bool integer = false;     // ops are integer operations (GOP/s), not FLOPs
  std::optional<double> speedup;
};

struct Copy {
  std::string backend;
  uint64_t bytes = 0;
  BenchTiming timing;
  // The same copy of one texel, one workgroup: what every timed interval holds besides the work
  // itself (a launch; on WebGPU also the wait of Dawn's timestamped pass before its first dispatch), so
  // that a small row's share of it can be read off.
  BenchTiming floor;
  double gbps() const { return timing.status == RunOutput::Status::ok ? 2.0 * double(bytes) / timing.median / 1e9 : 0; }
};

std::string us(double s) { return cat(std::lround(s * 1e7) / 10.0); }

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
// --primed: the primer's median alone, taken off the row's; null unprimed or untimed.
nlohmann::json primer_us(const BenchTiming& t) {
  return t.primer_median > 0 ? nlohmann::json(t.primer_median * 1e6) : nlohmann::json(nullptr);
}

}  // namespace

JudgedTiming judge_then_time(const Expected& e, GpuBackend& backend, const TimingBudget& budget) {
  JudgedTiming j;
  const CaseResult judged = judge(e, backend);
  j.outcome = judged.outcome;
  j.detail = judged.outcome == Outcome::rejected ? cat("rejected: ", judged.rule) : judged.detail;
  if (judged.outcome != Outcome::pass) return j;
  j.timing = backend.bench(*e.op, e.problem, budget);
  j.timed = j.timing.status == RunOutput::Status::ok;
  if (!j.timed) j.detail = cat("not timed: ", j.timing.message);
  return j;
}

int cmd_bench(const BenchOptions& o) {
  // Every usage error before a backend opens: names, the regex, the ids, the report path.
  for (const std::string& n : o.ops)
    if (!find_op(n)) throw UsageError(cat("unknown operator '", n, "' (see touchstone list)"));
  std::vector<DType> dtypes;
  for (const std::string& d : o.dtypes) {
    auto t = parse_dtype(d);
    if (!t) throw UsageError(cat("unknown dtype '", d, "' (dtypes: float32, float16, bfloat16, int8)"));
    dtypes.push_back(*t);
  }
  std::optional<LinearRegex> match;
  if (!o.match.empty()) match.emplace(o.match, "--match");
  struct Named {
    std::string name;
    std::optional<Case> full, quick;  // explicit ids: the same case for both sizes
    bool suite = false;
  };
  std::vector<Named> workloads;
  for (const std::string& id : o.ids) {
    Case c = parse_case(id);
    workloads.push_back({c.id(), c, c, false});
  }
  if (o.ids.empty())
    // Each operator's own workloads (OpPlan::bench), in the registry's order. Seed 8 sets none of the
    // bits that choose the sweep's other paths (core/op.h make_problem): the suite times what
    // production work runs, and its ids say so.
    for (const OpDef* op : all_ops())
      for (const BenchWorkload& w : op->bench) workloads.push_back({w.name, parse_case(w.full), parse_case(w.quick), true});
  auto selected = [&](const Case& c) {
    if (!o.ops.empty() && std::find(o.ops.begin(), o.ops.end(), c.op) == o.ops.end()) return false;
    if (!dtypes.empty() && std::find(dtypes.begin(), dtypes.end(), c.dtype) == dtypes.end()) return false;
    return !match || match->search(c.id());
  };
  // Either size may run (the device decides), so a filter must select a case of one of them.
  if (std::none_of(workloads.begin(), workloads.end(), [&](const Named& w) {
        for (const std::optional<Case>* base : {&w.full, &w.quick})
          for (const Case& c : implementations(**base))
            if (selected(c)) return true;
        return false;
      }))
    throw UsageError(cat("the filters select no case to time (", filter_words(o), "): nothing would run"));
  if (!o.json.empty()) check_output_path(o.json);
  backend_names(o.backends);

  BackendOptions opening = o.backends;
  opening.kernel_stats = true;  // the report carries them for every timed case
  std::vector<BackendSlot> slots = open_backends(opening);
  if (int rc = report_backends(slots, " (see touchstone list)")) return rc;
  TimingBudget budget;
  budget.warmup = o.warmup;
  budget.max_reps = o.reps;
  budget.min_reps = std::min<uint32_t>(budget.min_reps, o.reps);
  budget.max_seconds = o.time_ms / 1000.0;
  budget.stream = o.stream;
  budget.cold_bytes = o.cold ? kColdBytes : 0;
  budget.primed = o.primed;
  if (o.stream > 1) std::printf("timing: %u dispatch chains back to back per timed interval (--stream), each row one chain's share\n", o.stream);
  if (o.cold)
    std::printf("timing: before each interval the device overwrites up to %llu MiB elsewhere (--cold): no tensor of a case is in its caches\n",
                (unsigned long long)(kColdBytes >> 20));
  if (o.primed)
    std::printf("timing: each interval opens with a one-texel dispatch whose own median and min, timed alone, are taken off (--primed): "
                "a row is what its chain adds to a queue of work\n");
  const std::string started = utc_now();

  // Per backend: its size and the copy ceiling.
  std::map<std::string, bool> quick;
  std::vector<Copy> copies;
  std::map<std::string, TimingBudget> budgets;  // per backend: its warm-up by time
  for (BackendSlot& s : slots) {
    if (!s.backend) continue;
    const DeviceInfo info = s.backend->info();
    quick[s.name] = o.size.empty() ? cpu_device(info) : o.size == "quick";
    // A CPU device has no clock to bring up: its warm-up by time would only cost seconds.
    budgets[s.name] = budget;
    budgets[s.name].warmup_seconds = o.warmup_ms >= 0 ? o.warmup_ms / 1000.0 : cpu_device(info) ? 0.0 : 0.5;
    auto* gpu = dynamic_cast<GpuBackend*>(s.backend.get());
    if (!gpu) continue;  // every backend is a GPU backend; one that is not has nothing to time
    Copy c{s.name, quick[s.name] ? kCopyBytesQuick : kCopyBytesFull, {}};
    c.timing = gpu->bench_copy(c.bytes, budgets[s.name]);
    uint64_t texel = kFloorBytes;
    c.floor = gpu->bench_copy(texel, budgets[s.name]);
    const bool ok = c.timing.status == RunOutput::Status::ok, floor_ok = c.floor.status == RunOutput::Status::ok;
    std::printf("%s: %s, %s sizes; copy %llu MiB: %s; floor (a %llu-byte copy, one workgroup): %s%s\n", s.name.c_str(),
                info.name.c_str(), quick[s.name] ? "quick" : "full", (unsigned long long)(c.bytes >> 20),
                ok ? cat(us(c.timing.median), " us median, ", fixed(c.gbps(), 1), " GB/s").c_str() : c.timing.message.c_str(),
                (unsigned long long)texel, floor_ok ? cat(us(c.floor.median), " us median").c_str() : c.floor.message.c_str(),
                c.timing.cold_bytes ? cat("; cold: ", fixed(double(c.timing.cold_bytes) / (1 << 20), 1), " MiB overwritten before each interval").c_str() : "");
    copies.push_back(std::move(c));
  }

  std::vector<Row> rows;
  std::map<std::string, std::string> quick_ids;  // workload -> the id its quick size ran
  bool bad = false;
  for (const Named& w : workloads) {
    std::map<std::string, Expected> expected;  // by id: a case shared by backends is built once
    for (BackendSlot& s : slots) {
      if (!s.backend) continue;
      const Case& base = quick[s.name] ? *w.quick : *w.full;
      auto* gpu = dynamic_cast<GpuBackend*>(s.backend.get());
      if (!gpu) continue;
      for (const Case& c : implementations(base)) {
        if (!selected(c)) continue;
        const std::string id = c.id();
        auto e = expected.find(id);
        if (e == expected.end()) {
          try {
            e = expected.emplace(id, prepare(c, kBenchMaxCaseBytes)).first;
          } catch (const UsageError& ex) {
            throw UsageError(cat(id, ": ", ex.what(), " (bench allows ", kBenchMaxCaseBytes >> 30, " GiB a case)"));
          }
        }
        Row r;
        r.workload = quick[s.name] && w.suite ? w.name + " [quick]" : w.name;
        if (quick[s.name] && w.suite) quick_ids.emplace(w.name, base.id());
        r.id = id;
        r.op = c.op;
        r.impl = c.word("impl", "");
        r.backend = s.name;
        r.dtype = dtype_name(c.dtype);
        r.type = c.dtype;
        const OpDef& op = *e->second.op;
        JudgedTiming jt = judge_then_time(e->second, *gpu, budgets[s.name]);
        r.outcome = jt.outcome;
        r.detail = jt.detail;
        r.timed = jt.timed;
        r.timing = std::move(jt.timing);
        if (r.outcome == Outcome::pass) {
          if (op.bytes_moved) r.bytes = op.bytes_moved(e->second.problem);
          if (op.flops) r.ops = op.flops(e->second.problem);
          r.integer = !is_float(c.dtype);
        }
        bad |= is_failure(r.outcome) || (r.outcome == Outcome::pass && !r.timed);
        rows.push_back(std::move(r));
      }
    }
  }
  // Speedup against the first timed implementation of the same workload on the same backend.
  std::map<std::pair<std::string, std::string>, double> first;
  for (Row& r : rows) {
    if (!r.timed) continue;
    auto key = std::make_pair(r.workload + "\n" + without_impl(parse_case(r.id)), r.backend);
    auto [it, fresh] = first.emplace(key, r.timing.median);
    r.speedup = it->second / r.timing.median;
  }

  auto copy_of = [&](const std::string& backend) -> const Copy* {
    for (const Copy& c : copies)
      if (c.backend == backend && c.timing.status == RunOutput::Status::ok) return &c;
    return nullptr;
  };
  // The device's datasheet peaks, by the first backend whose device name is known (all run one device).
  std::optional<DevicePeaks> peaks;
  for (const BackendSlot& s : slots)
    if (s.backend && !peaks) peaks = device_peaks(s.backend->info().name);
  auto pct_peak = [&](const Row& r) -> std::optional<double> {
    const double peak = peaks && r.ops && r.timed ? peak_for(*peaks, r.type) : 0;
    if (peak <= 0) return std::nullopt;
    return 100.0 * *r.ops / r.timing.median / peak;
  };
  if (peaks) std::printf("\n%% peak: of %s's datasheet rate for the row's dtype (%s)\n", peaks->device.c_str(), peaks->source.c_str());
  std::printf("\n%-52s %-7s %-7s %-8s %10s %10s %9s %7s %12s %7s %8s  %s\n", "workload", "impl", "backend", "dtype",
              "us median", "us min", "GB/s", "% copy", "GFLOP|GOP/s", "% peak", "speedup", "verdict");
  for (const Row& r : rows) {
    std::string med = "-", mn = "-", gbps = "-", pct = "-", gops = "-", speed = "-", peak = "-";
    if (auto pp = pct_peak(r)) peak = fixed(*pp, 1);
    if (r.timed) {
      med = us(r.timing.median);
      mn = us(r.timing.min);
      if (r.bytes) {
        const double g = *r.bytes / r.timing.median / 1e9;
        gbps = fixed(g, 1);
        if (const Copy* c = copy_of(r.backend)) pct = fixed(100.0 * g / c->gbps(), 1);
      }
      if (r.ops) gops = cat(fixed(*r.ops / r.timing.median / 1e9, 1), r.integer ? " GOP" : " GF");
      if (r.speedup) speed = cat(fixed(*r.speedup, 2), "x");
    }
    std::printf("%-52s %-7s %-7s %-8s %10s %10s %9s %7s %12s %7s %8s  %s\n", r.workload.c_str(),
                r.impl.empty() ? "-" : r.impl.c_str(), r.backend.c_str(), r.dtype.c_str(), med.c_str(), mn.c_str(),
                gbps.c_str(), pct.c_str(), gops.c_str(), peak.c_str(), speed.c_str(), std::string(outcome_name(r.outcome)).c_str());
    if (!r.detail.empty()) std::printf("    %s: %s\n", r.id.c_str(), r.detail.c_str());
    if (o.kernel_stats && r.timed) {
      for (const KernelStatistics& k : r.timing.kernels) {
        std::string line;
        for (auto& [name, value] : k.values) line += cat(line.empty() ? "" : ", ", name, " ", value);
        std::printf("    %s: %s\n", k.kernel.c_str(), line.c_str());
      }
      if (r.timing.kernels.empty()) std::printf("    kernel statistics: none (%s)\n", r.timing.no_kernel_statistics.c_str());
    }
  }
  if (rows.empty()) std::printf("(no workload matches the selection)\n");
  if (!quick_ids.empty()) std::printf("\n[quick]: the workload's shape class at a size for a CPU device (--size full: the named size)\n");
  for (auto& [name, id] : quick_ids) std::printf("  %s [quick] = %s\n", name.c_str(), id.c_str());

  if (!o.json.empty()) {
    nlohmann::json devices = nlohmann::json::array(), copy = nlohmann::json::array(), cases = nlohmann::json::array();
    for (const BackendSlot& s : slots) {
      DeviceInfo info;
      if (s.backend) info = s.backend->info();
      nlohmann::json d = device_json(s.name, s.backend ? &info : nullptr, s.unavailable);
      if (s.backend) d["size"] = quick[s.name] ? "quick" : "full";
      devices.push_back(std::move(d));
    }
    for (const Copy& c : copies) {
      const bool ok = c.timing.status == RunOutput::Status::ok;
      copy.push_back({{"backend", c.backend},
                      {"bytes", c.bytes},
                      {"reps", c.timing.seconds.size()},
                      {"median_us", ok ? nlohmann::json(c.timing.median * 1e6) : nlohmann::json(nullptr)},
                      {"min_us", ok ? nlohmann::json(c.timing.min * 1e6) : nlohmann::json(nullptr)},
                      {"gbps", ok ? nlohmann::json(c.gbps()) : nlohmann::json(nullptr)},
                      {"cold_bytes", c.timing.cold_bytes},
                      {"floor_us", c.floor.status == RunOutput::Status::ok ? nlohmann::json(c.floor.median * 1e6) : nlohmann::json(nullptr)},
                      {"primer_us", primer_us(c.timing)},
                      {"error", ok ? "" : c.timing.message}});
    }
    for (const Row& r : rows) {
      std::optional<double> gbps, pct, gops;
      if (r.timed && r.bytes) {
        gbps = *r.bytes / r.timing.median / 1e9;
        if (const Copy* c = copy_of(r.backend)) pct = 100.0 * *gbps / c->gbps();
      }
      if (r.timed && r.ops) gops = *r.ops / r.timing.median / 1e9;
      nlohmann::json kernels = nlohmann::json::array();
      for (const KernelStatistics& k : r.timing.kernels) {
        nlohmann::json values = nlohmann::json::object();
        for (auto& [name, value] : k.values) values[name] = value;
        kernels.push_back({{"kernel", k.kernel}, {"statistics", std::move(values)}});
      }
      cases.push_back({{"workload", r.workload},
                       {"id", r.id},
                       {"op", r.op},
                       {"impl", r.impl.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.impl)},
                       {"backend", r.backend},
                       {"dtype", r.dtype},
                       {"verdict", outcome_name(r.outcome)},
                       {"detail", r.detail},
                       {"timed", r.timed},
                       {"reps", r.timing.seconds.size()},
                       {"median_us", r.timed ? nlohmann::json(r.timing.median * 1e6) : nlohmann::json(nullptr)},
                       {"min_us", r.timed ? nlohmann::json(r.timing.min * 1e6) : nlohmann::json(nullptr)},
                       {"primer_us", primer_us(r.timing)},
                       {"bytes", opt(r.bytes)},
                       {"gbps", opt(gbps)},
                       {"pct_of_copy", opt(pct)},
                       {"ops", opt(r.ops)},
                       {"ops_unit", r.ops ? nlohmann::json(r.integer ? "GOP/s" : "GFLOP/s") : nlohmann::json(nullptr)},
                       {"gops", opt(gops)},
                       {"pct_of_peak", opt(pct_peak(r))},
                       {"speedup", opt(r.speedup)},
                       {"kernel_statistics", std::move(kernels)}});
    }
    nlohmann::json report = {{"schema", "touchstone-bench/1"},
                             {"started", started},
                             {"budget", {{"warmup", budget.warmup},
                                         {"min_reps", budget.min_reps},
                                         {"max_reps", budget.max_reps},
                                         {"max_seconds", budget.max_seconds},
                                         {"stream", budget.stream},
                                         {"cold_bytes", budget.cold_bytes},
                                         {"primed", budget.primed}}},
                             {"devices", devices},
                             {"copy", copy},
                             {"cases", cases},
                             {"gate", bad ? "fail" : "pass"}};
    write_report(o.json, [&](std::FILE* f, const std::string& name) { put(f, report.dump(2) + "\n", name); });
  }
  return bad ? 1 : 0;
}

}  // namespace ts
