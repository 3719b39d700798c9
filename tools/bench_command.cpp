// The command line of `touchstone bench` (the command itself: tools/bench.cpp).
#include <CLI/CLI.hpp>

#include <memory>

#include "tools/cli_options.h"
#include "tools/commands.h"

namespace ts {

Command add_bench_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> ids, op, dtype;
    std::string match, size, time_ms, reps, warmup, warmup_ms, stream, json;
    bool kernel_stats = false, cold = false, primed = false;
    BackendArgs backends;
  };
  auto a = std::make_shared<Args>();
  CLI::App* bench = app.add_subcommand(
      "bench", wrap("device time of kernels (GPU timestamps around each case's whole dispatch chain): warm-up, "
                    "then repetitions until --time-ms or --reps; per case the median and min in microseconds, GB/s "
                    "from the operator's bytes-moved model and % of a copy kernel's bandwidth measured in the same "
                    "run, GFLOP/s or GOP/s where the operator has an operation model, and the speedup of each "
                    "implementation (impl=) over the first. Without case ids it runs the named suite (production "
                    "sizes of the operators: decode and prefill, GEMV and GEMM, ...) with every implementation each "
                    "operator declares. It times Touchstone's kernels on vulkan and webgpu (the default); a "
                    "foreign backend (ggml-vulkan, ort-webgpu) runs a library's kernels in a worker and is a "
                    "usage error here. Every case is judged against the reference first, as check does: one that "
                    "is not PASS is shown with its verdict and never timed. Exit 0 when every case passed and was "
                    "timed, 1 otherwise, 2 usage or set-up error"));
  bench->add_option("CASE_IDS", a->ids, "cases to time instead of the suite (without impl=: every implementation)")
      ->type_name("");
  list_option(bench, "--op", a->op, "NAME[,NAME...]", "only these operators' workloads");
  list_option(bench, "--dtype", a->dtype, "T[,T...]", "only workloads of these dtypes");
  single_option(bench, "--match", a->match, "REGEX",
                "only the cases whose id contains a match of REGEX (as check --match); one that selects no case is "
                "a usage error");
  single_option(bench, "--size", a->size, "quick|full",
                "the suite's sizes: full (the issue's shapes) or quick (the same shape classes, smaller); default: "
                "quick on a CPU device (lavapipe), full on a GPU");
  single_option(bench, "--time-ms", a->time_ms, "MS", "time budget per case, 1..600,000 (default 200; at least 5 repetitions)");
  single_option(bench, "--reps", a->reps, "N", "at most N timed repetitions per case, 1..1,000,000 (default 1000)");
  single_option(bench, "--warmup", a->warmup, "N", "untimed repetitions before timing, 0..1000 (default 3)");
  single_option(bench, "--warmup-ms", a->warmup_ms, "MS",
                "and untimed work until MS milliseconds have passed, 0..60,000, so that the GPU's clock is up "
                "(default 500 on a GPU, 0 on a CPU device)");
  single_option(bench, "--stream", a->stream, "N",
                "time N dispatch chains back to back in each timed interval and report a chain's share, 1..64 "
                "(default 1: each chain alone). A stream is how a model runs kernels: a backend's fixed cost "
                "around each interval (WebGPU: Dawn's pass timestamps) is shared N ways; the copy ceiling is "
                "timed the same way");
  flag_option(bench, "--cold", a->cold,
              "before each timed interval the device overwrites 256 MiB elsewhere (untimed; at most one "
              "binding's size), so that no interval finds the case's tensors in the GPU's caches; without it, "
              "repetitions follow each other and a working set that fits the last-level cache (the H100's "
              "50 MB) is partly read from there. The overwritten lines' write-back may fall in an interval: "
              "a cold time errs on the slow side, as a kernel in a model meets its predecessor's. The copy "
              "ceiling is timed the same way");
  flag_option(bench, "--primed", a->primed,
              "each timed interval opens with a one-texel dispatch (the primer), and the primer's own median "
              "and min, timed alone the same way, are taken off the row's: the primer meets what an interval's "
              "first dispatch waits for (WebGPU: Dawn's timestamped pass holds its first dispatch back several "
              "microseconds), so a row is what its chain adds to a queue of work, its barriers and launches "
              "included. Not with --stream above 1 (a stream shares that cost instead). The copy ceiling is "
              "timed the same way");
  single_option(bench, "--json", a->json, "FILE", "write the results as JSON (schema touchstone-bench/1, tools/BENCH_SCHEMA.md)");
  flag_option(bench, "--kernel-stats", a->kernel_stats,
              "print what the driver compiled for each timed case's kernels (Vulkan: "
              "VK_KHR_pipeline_executable_properties, e.g. registers and spills per invocation; `list` shows "
              "kernel-statistics where offered); --json always has them");
  add_backend_options(bench, a->backends);
  return {bench, [bench, a] {
            BenchOptions o;
            o.ids = a->ids;
            o.ops = split_list("--op", a->op);
            o.dtypes = split_list("--dtype", a->dtype);
            o.match = a->match;
            if (!a->size.empty() && a->size != "quick" && a->size != "full")
              throw UsageError("--size must be quick or full, got '" + a->size + "'");
            o.size = a->size;
            o.json = a->json;
            o.kernel_stats = a->kernel_stats;
            o.cold = a->cold;
            o.primed = a->primed;
            if (!a->time_ms.empty()) o.time_ms = uint32_t(parse_integer("--time-ms", a->time_ms, 1, 600'000));
            if (!a->reps.empty()) o.reps = uint32_t(parse_integer("--reps", a->reps, 1, 1'000'000));
            if (!a->warmup.empty()) o.warmup = uint32_t(parse_integer("--warmup", a->warmup, 0, 1000));
            if (!a->stream.empty()) o.stream = uint32_t(parse_integer("--stream", a->stream, 1, 64));
            if (o.primed && o.stream > 1)
              throw UsageError(cat("--primed times one chain an interval; --stream ", o.stream,
                                   " shares an interval's fixed cost instead: give one of them"));
            if (!a->warmup_ms.empty()) o.warmup_ms = parse_integer("--warmup-ms", a->warmup_ms, 0, 60'000);
            o.backends = backend_options(a->backends, bench);
            o.backends.own_kernels = true;
            require_distinct({{"--json", o.json}}, o.backends.kernels);
            return cmd_bench(o);
          }};
}

}  // namespace ts
