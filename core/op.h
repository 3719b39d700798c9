#pragma once
// An operator, defined once: its contract, how a case becomes input tensors, its float64 reference
// (reference/<op>.cpp), and the backend-neutral kernel plan that every GPU backend executes by name
// (gpu/plans/<op>.cpp). Adding an operator = those two files, one GLSL and one WGSL kernel, one
// generator in properties/, and one line in gpu/plans/registry.cpp.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/case.h"
#include "core/contract.h"
#include "core/layout.h"
#include "core/tensor.h"

namespace rc { template <class T> class Gen; }

namespace ts {

struct Expected;  // core/runner.h: a case prepared for judging
struct OpDef;

using Params = nlohmann::json;  // always an object; goldens store it verbatim

struct Problem {
  Tensors inputs;
  Params params = Params::object();
  DType dtype = DType::f32;        // the case dtype (float activations)
  std::string storage = "buffer";  // the case id's storage part (core/layout.h)
  // Run the kernels' capability fallbacks (the int8 dot product's scalar path, float16 stores
  // rounded in integers rather than by the device's RTE conversion) even where the device has the
  // faster path: otherwise a device that has it never runs the fallback, and a bug there passes on
  // it. make_problem() sets it for a case with an odd seed, so a sweep runs each path in about half
  // its cases and an id always reruns on the path it ran.
  bool fallback_paths = false;
  // Fold every dispatch's grid at kFoldedGridWidth workgroups per row, as a device folds past its
  // 65,535-per-dimension limit: otherwise only the large cases fold, and a kernel that takes its id
  // from gl_GlobalInvocationID.x passes every other case. make_problem() sets it when the seed's
  // second bit is set (independent of the first: each pairing of paths and folds in a quarter).
  bool fold_grids = false;
  // Number the invocations of a workgroup backwards (ts_local_index(): gpu/ACCESSORS.md): a device that
  // runs a workgroup a SIMD row at a time from barrier to barrier (lavapipe) then runs a shared
  // value's readers before its writer, where it otherwise runs the writer (invocation 0, the usual
  // one) first, and a missing barrier shows. make_problem() sets it when the seed's third bit is set.
  bool reverse_lanes = false;
  // How make() drew inputs that are not arbitrary, for a backend that computes them itself instead
  // of reading them: a foreign RoPE computes its own angles, so it is given the tables' first
  // position and base ({"rope_pos": 17, "rope_base": 10000}). Empty for arbitrary inputs and for a
  // problem read from a golden file (such a backend then cannot express the case).
  Params made_from = Params::object();

  // The layout of one tensor (input or output) under `storage`.
  Layout layout(const std::string& tensor) const { return layout_from_name(Storage::parse(storage).of(tensor)); }
};

// What an output element may differ from the float64 reference by (SPEC "Comparison and outcomes"):
// element i of output `name` passes iff |out - ref| <= atol + elem[name][i] + rtol*|ref|, NaN never.
// `elem` holds, per output, a float64 tensor of that output's shape: the bound of the kernel's own
// arithmetic on this case's inputs (gpu/plans/*.cpp derive it beside each operator's plan). atol and rtol
// are what every element shares: rtol the final store's rounding to a narrower dtype, atol its
// subnormal spacing. An output without an `elem` entry (a golden's {"atol","rtol"}) is held to the
// scalars alone. Tensors are shared, so copying a Tolerance (or an Expected) stays cheap.
struct Tolerance {
  double atol = 0, rtol = 0;
  std::map<std::string, std::shared_ptr<const Tensor>> elem;

  const Tensor* bound(const std::string& output) const {
    auto it = elem.find(output);
    return it == elem.end() ? nullptr : it->second.get();
  }
};

// A buffer a plan writes. Outputs are poisoned and guarded before dispatch; an in/out buffer
// (`init_from` set, e.g. a KV cache) starts as a copy of that input; scratch is never compared, but
// it is poisoned and guarded too, and the first dispatch that binds it must write every element
// (ScratchReport in core/backend.h).
struct BufferSpec {
  enum class Role { output, scratch };
  std::string name;
  Shape shape;
  DType dtype;
  Role role = Role::output;
  std::string init_from;
};

// One compute dispatch over a 1-D grid of `invocations` threads. Kernels compute their linear id
// with ts_linear_id() (folded grids are transparent). Resources bind by name: a storage block binds
// the tensor named by its (single) array member, remapped through `bind`; push-constant / uniform
// members are filled from `uniforms` by name, converted to the member's reflected type.
struct Dispatch {
  std::string kernel;                        // shader stem in gpu/vulkan/shaders, gpu/webgpu/shaders
  std::vector<std::string> defines;          // variant defines, e.g. "TILED=1" (DTYPE is added by the backend)
  uint64_t invocations = 0;
  std::map<std::string, double> uniforms;    // integers are exact up to 2^53
  std::map<std::string, std::string> bind;   // shader array name -> tensor name (default: same name)
  // 0: the backend's workgroup size. Otherwise exactly this many invocations per workgroup, for
  // kernels that cooperate through shared memory (a device that cannot: UNSUPPORTED).
  uint32_t workgroup = 0;
  // 0: no subgroup operations. Otherwise the kernel shuffles values within aligned runs of this many
  // consecutive invocations, which must lie in one subgroup: a device whose subgroups are smaller
  // (or that has no subgroup shuffle) is UNSUPPORTED.
  uint32_t subgroup = 0;
  // The kernel lays its workgroup out in subgroups of exactly `subgroup` invocations (it numbers them
  // by subgroup id, as the cooperative-matrix kernels do): a device whose subgroups are any other size,
  // or may vary, is UNSUPPORTED, not a multiple of it.
  bool whole_subgroups = false;
  // The kernel multiplies on cooperative matrices (tensor cores): a backend or device without them
  // (DeviceLimits::no_coopmat) is UNSUPPORTED, naming the capability `cooperative-matrix`.
  bool cooperative_matrix = false;
  // May run beside the dispatch before it (Vulkan records no barrier between them; WebGPU orders
  // them anyway): the two share no tensor that either writes (the Vulkan backend refuses a plan
  // where they do).
  bool concurrent = false;
  bool fallback_paths = false;  // the problem's (set by the backend): the backend compiles the fallbacks
  bool fold_grids = false;      // the problem's (set by the backend): the grid folds at kFoldedGridWidth
  bool reverse_lanes = false;   // the problem's (set by the backend): ts_local_index() counts backwards
  // A kernel that computes a rows x cols extent (row-major in its output) in tiles of tile_rows x
  // tile_cols: where a ragged last tile needs its bounds checked (coverage counts the cases whose
  // last tile is ragged in each dimension), and how far a store of a whole last tile can land past
  // the end (the output's guard band is at least that long). 0: not tiled.
  int64_t rows = 0, cols = 0, tile_rows = 0, tile_cols = 0;
};

// Workgroups per row of a grid folded on purpose (Problem::fold_grids): odd and not a power of two,
// so that an unfolding that assumes either is wrong. Backends use kDefaultWorkgroup invocations per
// workgroup unless a dispatch fixes its own; coverage counts folds with it.
constexpr uint32_t kFoldedGridWidth = 3;
constexpr uint32_t kDefaultWorkgroup = 64;
constexpr uint32_t kMaxGridDim = 65535;  // the workgroups per dimension every Vulkan device allows

// A variable of the operator's case ids (SPEC "Case ids"), declared once so that an unknown name,
// a value of the wrong type or out of range, or a word not listed is a usage error (exit 2) that
// names it and what is allowed — never silently the default. make() computes defaults; `dflt`
// states them for `touchstone list` ("" = required). Variables whose name ends in a tensor's
// override suffix (Sk, Df, ...) exist to write invalid cases that break one rule.
struct Var {
  enum class Kind { integer, word, integers };  // integers: a ':'-joined list, each in [min, max]
  std::string name;
  Kind kind = Kind::integer;
  int64_t min = 0, max = 0;
  std::vector<std::string> words;  // Kind::word: the allowed values
  std::string dflt;
  std::string help;
};

// Ranges stated once: a dimension up to 2^24 and a position up to 2^31 keep every sum and
// product of a few of them inside int64 (shape products are checked anyway: core/tensor.h).
constexpr int64_t kMaxDim = int64_t(1) << 24;
constexpr int64_t kMaxPos = int64_t(1) << 31;
Var int_var(std::string name, int64_t min, int64_t max, std::string dflt, std::string help);
Var word_var(std::string name, std::vector<std::string> words, std::string dflt, std::string help);
Var list_var(std::string name, int64_t min, int64_t max, std::string dflt, std::string help);

// What an operator is, whatever runs it: its case ids, rules, inputs and float64 reference — the
// product contract (SPEC), and the only part of an operator the goldens depend on (their manifest
// hashes reference/, where each operator keeps it).
struct OpContract {
  std::string name;
  std::string summary;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Rule> rules;
  std::vector<DType> dtypes;  // case dtypes the operator is defined for

  Problem (*make)(const Case&);                            // tensors from vars + seed (never throws on contract)
  std::optional<Violation> (*validate)(const Problem&);    // first broken rule, or none
  Tensors (*reference)(const Problem&);                    // outputs: float64 for computed floats
  std::vector<Case> (*edge_cases)(DType);                  // hand-picked, valid and invalid
  // properties/: random valid / invalid cases of this operator (call it with the OpDef itself).
  rc::Gen<Case> (*generator)(const OpDef& op, DType, bool valid);
  // One case past 2^24 elements in some tensor (where an index held in a float32 stops being
  // exact) and past 65,535 x 64 invocations in some dispatch (where the grid folds into a second
  // dimension). The sweep of its dtype runs it after the edge cases: float32 (int8 for the int8-only
  // operators), one dtype only, since the index arithmetic is the same for every dtype and this one
  // case costs more than the rest of a sweep.
  Case (*large_case)();
  std::vector<Var> vars;                                   // every variable its ids may hold (besides
                                                           // <input>_dtype, allowed for every input)
  // The layouts each tensor (input or output) may take; a tensor not listed allows only `buffer`.
  std::map<std::string, std::vector<std::string>> layouts = {};
  // Coverage classes of the operator's own, from the case and its inputs (the classes its values
  // fall in), beside those every operator gets from its case variables and storage
  // (gpu/plans/coverage.cpp): the ones a valid case meets, and the ones a sweep is expected to meet
  // (`check` shows a 0 for a class it missed). `golden regen` picks goldens by them. nullptr: none.
  std::vector<std::string> (*classes)(const Expected&) = nullptr;
  std::vector<std::string> (*expected_classes)(const OpDef&) = nullptr;
};

// The float32 values of some tensors, by name (OpPlan::emulate).
using Floats = std::map<std::string, std::vector<float>>;

// A named workload of `touchstone bench`'s default suite: a case id per size, without `impl` (every
// implementation the operator declares is benchmarked).
struct BenchWorkload {
  std::string name;
  std::string full;   // the shapes GPUs are measured at
  std::string quick;  // the same shape class, smaller: CPU devices (lavapipe), a few seconds in all
};

// How the GPU computes an operator, the same for every backend: buffers, dispatches and their
// constants, what the kernels' arithmetic may err by, and what `bench` measures. Each operator keeps
// it in gpu/plans/<op>.cpp; a change there leaves the goldens as they are.
struct OpPlan {
  std::vector<BufferSpec> (*buffers)(const Problem&);      // valid problems only
  std::vector<Dispatch> (*plan)(const Problem&);           // valid problems only
  Tolerance (*tolerance)(const Problem&);                  // for output dtype == case dtype
  // The kernels' float32 arithmetic in their order, on the CPU, under the caller's rounding direction
  // (std::fesetround), with exp() and reciprocals pushed `up` or down as far as the shading
  // languages allow (gpu/plans/emulate.h): tests/test_tolerance_rounding.cpp checks `tolerance`
  // against it. Results are the float32 values before the store (int8: the final integers).
  Floats (*emulate)(const Problem&, const Floats& inputs, bool up) = nullptr;
  // Performance models for `touchstone bench` (nullptr: not applicable). bytes_moved: what an ideal
  // kernel must read and write (each input byte it needs once, each output byte once; scratch and
  // re-reads not counted), so bytes / time is the bandwidth the case reached. flops: floating-point
  // (or, for integer operators, integer) arithmetic operations of the algorithm, multiply and add
  // counted apart.
  double (*bytes_moved)(const Problem&) = nullptr;
  double (*flops)(const Problem&) = nullptr;
  std::vector<BenchWorkload> bench = {};
  // Coverage classes of the plan's own (which kernels, which paths), beside those every plan gets
  // (folded grids, ragged tiles: gpu/plans/coverage.cpp): the ones a valid case meets, and the ones
  // a sweep is expected to meet. nullptr: none.
  std::vector<std::string> (*plan_classes)(const Expected&, const std::vector<Dispatch>& plan) = nullptr;
  std::vector<std::string> (*expected_plan_classes)(const OpDef&) = nullptr;
};

// An operator: its contract (reference/<op>.cpp) and its plan (gpu/plans/<op>.cpp), joined in its
// plan file and listed once in gpu/plans/registry.cpp.
struct OpDef : OpContract, OpPlan {};

// The problem of case c: op.make(c), with the seed's low bits choosing the paths a device takes
// besides its usual ones (fallback_paths, fold_grids, reverse_lanes), so that an id reruns on its own.
inline Problem make_problem(const OpDef& op, const Case& c) {
  Problem p = op.make(c);
  p.fallback_paths = c.seed & 1;
  p.fold_grids = c.seed & 2;
  p.reverse_lanes = c.seed & 4;
  return p;
}

}  // namespace ts
