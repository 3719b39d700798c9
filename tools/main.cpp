#include <cstdio>
#include <cstring>
#include <exception>

#include "tools/commands.h"
#include "tools/golden_cmd.h"

namespace ts {
const char* const kHelp = R"(touchstone — differential testing of GPU kernels of LLM operators against float64 references

usage: touchstone <command> [options]

commands
  list                      operators (inputs, outputs, dtypes, contract rules with their ids) and
                            backends (device name and capabilities, or why UNAVAILABLE)
  check                     sweep operators x backends x dtypes and compare every backend with the
                            reference; prints a table and every failing case id as a repro line
  repro CASE_ID             rerun one case: outcome, input/output digests, first mismatches, error
                            statistics and where the errors concentrate
  golden SUBCOMMAND         golden tensor files (touchstone-golden/1 safetensors; goldens/README.md)

check options
  --op NAME[,NAME...]       operators (default: all; see `touchstone list`)
  --dtype T[,T...]          float32, float16, bfloat16 (default: every dtype the operator defines;
                            a backend without kernels for a dtype reports UNSUPPORTED)
  --cases N                 cases per operator x dtype (default 200): the hand-picked edge cases
                            first (valid and invalid), then cases drawn from the operator's
                            generators, one in five invalid
  --seed S                  seed of the drawn cases (default 1); the same seed gives the same cases
  --shard I/N               run only cases with index % N == I (no overlap, no gap across shards)
  --junit FILE              write JUnit XML (one testsuite per op/backend/dtype)
  --quiet                   no progress lines on stderr

golden subcommands
  golden regen [--dir DIR]  rewrite the golden set (default goldens/) from the references: the
                            smallest valid edge cases and one rejected case per contract rule, per
                            operator and dtype. Deterministic and atomic; MANIFEST.json records each
                            file's sha256 and the hash of the reference sources. Removes only files
                            its previous manifest listed; a second regen of DIR at once refuses
  golden verify [FILES... | --dir DIR] [--reference-only] [--junit FILE] [backend options]
                            per file: the reference still reproduces the expected outputs to float64
                            precision, every backend matches them within the file's tolerance, and
                            reject files are rejected by all with the same rule id; prints a file x
                            backend table.
                            A malformed file is reported and the run goes on. With a MANIFEST.json,
                            stale goldens (reference sources changed since regen) and hand-edited
                            files fail; a --dir without MANIFEST.json, or left mid-commit by a killed
                            regen, fails (exit 1): name files to verify them without a manifest.
                            Default --dir goldens; files made by other tools verify the same way.
                            Exit 0 all good, 1 any failure, 2 usage or set-up error
  golden export CASE_ID [-o FILE]
                            one case as a golden file (valid: expected outputs; invalid: expect=reject);
                            FILE must be new or a regular file: links and special files are refused
  golden show FILE...       metadata, and each tensor's dtype, shape, min, max, mean, NaN/Inf counts

backend options (check, repro, list, golden verify)
  --backend B[,B...]        vulkan, webgpu or all (default: all found; one that cannot run here is
                            shown as UNAVAILABLE; naming it explicitly makes that an error, exit 2)
  --device SEL              Vulkan device: index or name substring (default: a real GPU if present,
                            else lavapipe)
  --validation              enable the Khronos validation layer (also TOUCHSTONE_VALIDATION=1);
                            any validation message makes the case ERROR
  --timeout-ms MS           per-case GPU timeout (default 20000); a hung kernel is ERROR, the run goes on

case ids
  <op>/<k=v,...>/<dtype>/<storage>/seed=<n>, e.g.
  rope_llama/B=1,S=1,Hq=32,Hkv=8,D=128/float16/buffer/seed=1234
  An id determines the case completely, data included (counter-based data from the seed, see
  core/rng.h): the same id gives the same bytes on any machine.

outcomes
  PASS, FAIL (values out of tolerance, never-written elements, writes outside the tensor),
  REJECTED (reference and backend reject with the same rule id), UNEXPECTED_REJECT, MISSED_REJECT
  (backend and reference disagree on validity or rule id), UNSUPPORTED (a stated missing device
  capability), ERROR (compile error, validation message, timeout, crash)

exit codes
  0 all good, 1 any FAIL/ERROR/UNEXPECTED_REJECT/MISSED_REJECT, 2 usage or set-up error
)";
}  // namespace ts

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(ts::kHelp, stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  try {
    ts::Args args(argc, argv, 2);
    if (args.flag("--help")) return std::fputs(ts::kHelp, stdout), 0;
    if (cmd == "list") return ts::cmd_list(args);
    if (cmd == "check") return ts::cmd_check(args);
    if (cmd == "repro") return ts::cmd_repro(args);
    if (cmd == "golden") return ts::cmd_golden(args);
    std::fprintf(stderr, "error: unknown command '%s' (see touchstone --help)\n", cmd.c_str());
    return 2;
  } catch (const ts::UsageError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
