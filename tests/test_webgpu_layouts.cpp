// Layouts on the WebGPU backend (SPEC "Layouts", gpu/ACCESSORS.md): the WGSL accessors generated
// for TS_INPUT / TS_OUTPUT, every operator in mixed per-tensor layouts with ragged packed dimensions
// (1, 2, 3, 5) in float32, float16 and bfloat16, the same RoPE bits in every layout, padding lanes
// and unwritten texels caught, an image over the device's 3-D limit UNSUPPORTED, and the int8
// accessors (buffer and the packed int8 layouts) exact for every element, ragged tails included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/half.h"
#include "core/runner.h"
#include "gpu/webgpu/accessors.h"
#include "gpu/webgpu/webgpu_backend.h"
#include "gpu/webgpu/wgsl_reflect.h"
#include "gpu/plans/registry.h"
#include "tests/backend_fixture.h"
#include "tests/kernel_bugs.h"

namespace ts {
namespace {

std::string line(const CaseResult& r) { return cat(outcome_name(r.outcome), " ", r.id, ": ", r.detail); }

CaseResult run_id(Backend& b, const std::string& id) { return judge(prepare(parse_case(id)), b); }

// ---- The generated WGSL, without a device ----

TEST(WgslAccessors, DeclarationsAreReadStrictly) {
  auto d = webgpu::tensor_decls("// TS_INPUT(quoted, 3) in a comment\nTS_INPUT(x, 0)\n  TS_OUTPUT(out_, 2)  // why\n", "k");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].name, "x");
  EXPECT_FALSE(d[0].output);
  EXPECT_EQ(d[0].line, 2u);
  EXPECT_EQ(d[1].name, "out_");
  EXPECT_EQ(d[1].binding, 2u);
  EXPECT_TRUE(d[1].output);
  EXPECT_EQ(webgpu::accessor_prefix("out_"), "out");
  auto throws_with = [](const char* src, const char* words) {
    try {
      webgpu::tensor_decls(src, "k");
      ADD_FAILURE() << "no error for: " << src;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  throws_with("TS_INPUT(x)", "k.wgsl:1");
  throws_with("let a = 1; TS_INPUT(x, 0)", "alone on its line");
  throws_with("TS_INPUT(x, 16)", "ts_meta");
  throws_with("TS_INPUT(x, 0)\nTS_OUTPUT(x_, 1)", "declared twice");
  throws_with("TS_INPUT(x, 0)\nTS_OUTPUT(y, 0)", "binding 0 is declared twice");
}

// Each declaration becomes its resource on the same line (Dawn's line numbers stay the kernel
// file's), the accessors go before the kernel, and reflection sees the texture bindings.
TEST(WgslAccessors, ExpansionKeepsLinesAndReflects) {
  const std::string src = "TS_INPUT(x, 0)\nTS_INPUT(cos_, 1)\nTS_OUTPUT(out_, 2)\nfn main() {}\n";
  const auto decls = webgpu::tensor_decls(src, "k");
  const std::vector<webgpu::TensorForm> forms = {
      {Layout::texture3d_c, DType::bf16}, {Layout::buffer, DType::bf16}, {Layout::texture3d_w, DType::bf16}};
  const webgpu::Expansion e = webgpu::expand(src, decls, forms);
  EXPECT_EQ(std::count(e.kernel.begin(), e.kernel.end(), '\n'), std::count(src.begin(), src.end(), '\n'));
  EXPECT_EQ(e.kernel.substr(0, e.kernel.find('\n')), "@group(0) @binding(0) var x : texture_3d<u32>;");
  EXPECT_NE(e.kernel.find("var<storage, read> cos_ : array<vec2<u32>>;"), std::string::npos) << e.kernel;
  EXPECT_NE(e.kernel.find("var out_ : texture_storage_3d<rgba16uint, write>;"), std::string::npos) << e.kernel;
  for (const char* fn : {"fn x_at(", "fn x_at4(", "fn cos_at(", "fn out_store(", "fn out_flat(", "fn out_texels(",
                         "fn out_texel_of(", "fn out_dims(", "fn out_numel("})
    EXPECT_NE(e.functions.find(fn), std::string::npos) << fn;
  EXPECT_EQ(e.functions.find("fn x_store("), std::string::npos) << "inputs have no store";
  const auto res = webgpu::reflect_wgsl(webgpu::accessor_library(false) + e.functions + e.kernel, "k");
  ASSERT_EQ(res.storage.size(), 4u);  // ts_meta, x, cos_, out_
  auto find = [&](const std::string& name) {
    return *std::find_if(res.storage.begin(), res.storage.end(), [&](auto& s) { return s.array == name; });
  };
  using K = webgpu::StorageBinding::Kind;
  EXPECT_EQ(find("ts_meta").binding, kMetaBinding);
  EXPECT_EQ(find("x").kind, K::texture);
  EXPECT_EQ(find("x").format, "uint");
  EXPECT_EQ(find("cos_").kind, K::buffer);
  EXPECT_EQ(find("out_").kind, K::storage_texture);
  EXPECT_EQ(find("out_").format, "rgba16uint");
  EXPECT_THROW(webgpu::expand(src, decls, {{Layout::buffer, DType::i32}, forms[1], forms[2]}), std::invalid_argument);
}

// int8 tensors are arrays of 32-bit words, held as 16-byte chunks (vec4<u32>), in every int8
// layout; whether one is a buffer is compiled in; int8 has no texture, and the packed int8 layouts
// hold nothing else.
TEST(WgslAccessors, Int8TensorsAreWordArrays) {
  const std::string src = "TS_INPUT(x, 0)\nTS_OUTPUT(out_, 2)\nfn main() {}\n";
  const auto decls = webgpu::tensor_decls(src, "k");
  const webgpu::Expansion e = webgpu::expand(src, decls, {{Layout::int8_4w4c, DType::i8}, {Layout::buffer, DType::i8}});
  EXPECT_EQ(e.kernel.substr(0, e.kernel.find('\n')), "@group(0) @binding(0) var<storage, read> x : array<vec4<u32>>;");
  EXPECT_NE(e.kernel.find("var<storage, read_write> out_ : array<vec4<u32>>;"), std::string::npos) << e.kernel;
  for (const char* fn : {"fn x_at(i: u32) -> i32", "fn x_at4(i: u32) -> vec4<i32>", "fn x_packed4(i: u32) -> u32",
                         "fn x_word(t: u32) -> u32", "fn x_chunk(c: u32) -> vec4<u32>", "fn out_store(t: u32, v: vec4<i32>)",
                         "fn out_store_word(t: u32, w: u32)", "fn out_store_chunk(c: u32, w: vec4<u32>)", "fn out_flat(",
                         "fn out_texels(", "fn out_texel_of(", "fn x_dims(", "fn out_numel(", "const x_is_buffer = false;",
                         "const out_is_buffer = true;"})
    EXPECT_NE(e.functions.find(fn), std::string::npos) << fn;
  auto refused = [&](webgpu::TensorForm f, const char* words) {
    try {
      webgpu::expand(src, decls, {f, {Layout::buffer, DType::i8}});
      ADD_FAILURE() << "no error for " << layout_name(f.layout) << " " << dtype_name(f.dtype);
    } catch (const std::invalid_argument& ex) {
      EXPECT_NE(std::string(ex.what()).find(words), std::string::npos) << ex.what();
    }
  };
  refused({Layout::texture3d_w, DType::i8}, "int8 is held in buffer or the packed int8 layouts");
  refused({Layout::int8_4c1w, DType::f32}, "holds int8 only");
}

// ---- On the device ----

class WebGpuLayouts : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    Backend* b = test::shared_backend("webgpu", &why);
    if (!b) {
      if (test::missing_allowed("webgpu")) GTEST_SKIP() << "webgpu UNAVAILABLE: " << why;
      FAIL() << "webgpu backend UNAVAILABLE on this machine: " << why
             << " (set TOUCHSTONE_ALLOW_MISSING=webgpu to skip deliberately)";
    }
    backend_ = dynamic_cast<WebGpuBackend*>(b);
    ASSERT_NE(backend_, nullptr);
  }
  WebGpuBackend& backend() { return *backend_; }

  // The embedded kernel with one line spliced in, for the rest of the test.
  void override_kernel(const std::string& kernel, const std::string& anchor, const std::string& bug, bool after) {
    backend().set_kernel_source(kernel, test::with_bug(cat("gpu/webgpu/shaders/", kernel, ".wgsl"), anchor, bug, after));
    overridden_.push_back(kernel);
  }
  void TearDown() override {
    for (const std::string& k : overridden_) backend_->set_kernel_source(k, "");
  }

 private:
  WebGpuBackend* backend_ = nullptr;
  std::vector<std::string> overridden_;
};

// Mixed per-tensor layouts, packed dimensions of 1, 2, 3 and 5 (ragged last texels in every
// packing), a packed dimension that is not the innermost, and all three float dtypes. bfloat16
// buffers of odd length (rope_matrix D = 5 and 3: the last texel has 1 or 3 lanes) keep the 2 guard
// bytes of their last word.
TEST_F(WebGpuLayouts, MixedLayoutsPassForEveryOperator) {
  const char* ids[] = {
      "rope_llama/B=1,S=3,Hq=5,Hkv=1,D=6/bfloat16/texture3d_c;freqs_cos=buffer/seed=3",
      "rope_llama/B=2,S=5,Hq=2,Hkv=1,D=2/float16/texture3d_w;freqs_cos=buffer;xk_out=texture3d_h/seed=4",
      "rope_llama/B=1,S=2,Hq=3,Hkv=3,D=10/float32/texture3d_h;xq=buffer;xk=texture3d_c;freqs_sin=texture3d_w/seed=5",
      "rope_llama/B=3,S=1,Hq=1,Hkv=1,D=4/bfloat16/texture3d_w;xq_out=buffer/seed=6",
      "rope_half/B=1,H=3,S=5,D=6/float32/texture3d_c;cos=texture3d_h;sin=buffer/seed=2",
      "rope_half/B=2,H=5,S=2,D=2/bfloat16/texture3d_h;out=texture3d_c/seed=3",
      "rope_half/B=1,H=1,S=3,D=10/float16/buffer;out=texture3d_w;x=texture3d_c/seed=4",
      "rope_cis/B=3,N=5,C=6/float32/texture3d_c;freqs_cis=buffer/seed=1",
      "rope_cis/B=1,N=2,C=2/bfloat16/texture3d_w;out=texture3d_h/seed=2",
      "rope_cis/B=5,N=3,C=10,fshape=1_n_c2_2/float16/texture3d_h;x=buffer/seed=3",
      "rope_matrix/B=1,H=1,S=1,D=5,mode=dense/bfloat16/buffer/seed=1",
      "rope_matrix/B=1,H=1,S=1,D=3,mode=dense/bfloat16/buffer;x=texture3d_w/seed=2",
      "rope_matrix/B=1,H=3,S=2,D=6,mode=interleave/float32/texture3d_w;m=texture3d_c;cos=buffer/seed=3",
      "rope_matrix/B=2,H=1,S=5,D=3,mode=dense/float16/texture3d_h;out=texture3d_c/seed=4",
      "sdpa/S=3,Hq=4,Hkv=2,D=8,pos=2,impl=naive/float32/buffer;q=texture3d_c;k=texture3d_h;v=texture3d_w;out=texture3d_w/seed=1",
      "sdpa/S=5,Hq=2,Hkv=1,D=4,impl=tiled/float16/buffer;q=texture3d_h;k=texture3d_c;v=texture3d_c;out=texture3d_w/seed=2",
      "sdpa/S=1,Hq=3,Hkv=3,D=12,pos=7,impl=naive/float16/buffer;q=texture3d_w;out=texture3d_w/seed=3",
      "sdpa/S=2,Hq=5,Hkv=1,D=4,pos=1,impl=tiled/float32/texture3d_w;k_cache=buffer;v_cache=buffer/seed=4",
  };
  for (const char* id : ids) {
    CaseResult r = run_id(backend(), id);
    EXPECT_EQ(r.outcome, Outcome::pass) << line(r);
  }
}

// The same case gives the same output bits in every layout of every tensor: the kernels do the same
// arithmetic, only the addressing differs. The first layout of each op runs after the others
// again (buffer), so a program cache keyed on less than every tensor's layout would show here.
TEST_F(WebGpuLayouts, OutputsAreBitIdenticalInEveryLayout) {
  struct Op {
    std::string name, vars, mixed;
    std::vector<std::string> dtypes;
  };
  const std::vector<Op> ops = {
      {"rope_llama", "B=2,S=3,Hq=5,Hkv=1,D=6,tables=random", "texture3d_c;xq=texture3d_h;freqs_cos=buffer;xk_out=buffer",
       {"float32", "float16", "bfloat16"}},
      {"rope_half", "B=1,H=3,S=5,D=10,tables=random", "texture3d_c;x=texture3d_w;cos=buffer;out=texture3d_h",
       {"float32", "bfloat16"}},
      {"rope_cis", "B=3,N=5,C=6,tables=random", "texture3d_h;freqs_cis=texture3d_w;out=buffer", {"float16"}},
      {"rope_matrix", "B=1,H=3,S=2,D=5,mode=dense", "buffer;m=texture3d_h;out=texture3d_c", {"float32"}},
      // H % 4 == 0: in buffers the sums read whole texels, in textures element by element.
      {"rms_norm", "B=2,S=3,H=24", "texture3d_c;weight=buffer;out=texture3d_h", {"float32", "bfloat16"}},
  };
  for (const Op& op : ops)
    for (const std::string& dtype : op.dtypes) {
      const std::vector<std::string> storages = {"buffer", "texture3d_w", "texture3d_h", "texture3d_c", op.mixed, "buffer"};
      std::map<std::string, uint64_t> first;
      std::string first_id;
      for (const std::string& storage : storages) {
        const std::string id = cat(op.name, "/", op.vars, "/", dtype, "/", storage, "/seed=11");
        CaseResult r = run_id(backend(), id);
        ASSERT_EQ(r.outcome, Outcome::pass) << line(r);
        if (first.empty()) {
          first = r.digests, first_id = id;
          continue;
        }
        EXPECT_EQ(r.digests, first) << id << " differs from " << first_id;
      }
    }
}

// Padding lanes must read zero: a kernel that writes garbage there (and every element right) FAILs
// on the padding alone (channels-packed, C = 3: one padding lane per texel).
TEST_F(WebGpuLayouts, GarbageInPaddingLanesFails) {
  override_kernel("rope_half", "out_store(t, v);",
                  "  if (ts_lanes(3u, out_dims(), t) < 4u) {\n"
                  "    textureStore(out_, ts_coord(3u, out_dims(), t),\n"
                  "                 select(vec4<f32>(7.0), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(ts_lanes(3u, out_dims(), t))));\n"
                  "    return;\n"
                  "  }  // BUG: padding lanes hold 7",
                  false);
  CaseResult r = run_id(backend(), "rope_half/B=2,H=3,S=2,D=4/float32/texture3d_c/seed=1");
  EXPECT_EQ(r.outcome, Outcome::fail) << line(r);
  EXPECT_NE(r.detail.find("padding lanes not zero"), std::string::npos) << line(r);
  EXPECT_NE(r.detail.find("texture3d_c"), std::string::npos) << line(r);
  ASSERT_EQ(r.reports.size(), 1u) << line(r);
  EXPECT_TRUE(r.reports[0].ok()) << "every element is right: only the padding shows the bug: " << line(r);
  EXPECT_EQ(r.guards.at("out").bad_padding, 2 * 2 * 4 * 1) << "B*S*D texels with 1 padding lane each: " << line(r);
}

// An image texel the kernel never stores keeps its poison through the upload, the dispatch and the
// read-back, for each image format (float32 NaN, float16 NaN, bfloat16 NaN bits in rgba16uint).
TEST_F(WebGpuLayouts, UnwrittenTexelsOfImagesAreNamed) {
  override_kernel("rope_half", "out_store(t, v);", "  if (t == pc.n - 1u) { return; }  // BUG: the last texel", false);
  for (const char* dtype : {"float32", "float16", "bfloat16"}) {
    CaseResult r = run_id(backend(), cat("rope_half/B=1,H=2,S=3,D=6/", dtype, "/texture3d_w/seed=2"));
    EXPECT_EQ(r.outcome, Outcome::fail) << line(r);
    ASSERT_EQ(r.reports.size(), 1u) << line(r);
    EXPECT_EQ(r.reports[0].unwritten, 2) << "the last texel holds 2 elements (W = 6): " << line(r);
    EXPECT_NE(r.detail.find("never written"), std::string::npos) << line(r);
  }
}

// A texture3d extent over maxTextureDimension3D is UNSUPPORTED, naming the extent, before anything
// is allocated or dispatched; the same case as a buffer PASSes.
TEST_F(WebGpuLayouts, ExtentOverMaxImage3DIsUnsupported) {
  int64_t limit = 0;
  for (const std::string& c : backend().info().capabilities)
    if (c.rfind("max-texture-3d=", 0) == 0) limit = std::stoll(c.substr(15));
  ASSERT_GT(limit, 0) << "info() names max-texture-3d";
  const int64_t D = limit + 2;  // even; width-packed it fits (ceil(D/4)), height-packed x = D does not
  const uint64_t allocs = backend().allocations, dispatches = backend().dispatches;
  CaseResult r = run_id(backend(), cat("rope_half/B=1,H=1,S=1,D=", D, "/float32/texture3d_h/seed=1"));
  EXPECT_EQ(r.outcome, Outcome::unsupported) << line(r);
  EXPECT_NE(r.detail.find(cat("extent x = ", D)), std::string::npos) << line(r);
  EXPECT_NE(r.detail.find("maxImageDimension3D"), std::string::npos) << line(r);
  EXPECT_EQ(backend().allocations, allocs);
  EXPECT_EQ(backend().dispatches, dispatches);
  CaseResult w = run_id(backend(), cat("rope_half/B=1,H=1,S=1,D=", D, "/float32/texture3d_w/seed=1"));
  EXPECT_EQ(w.outcome, Outcome::pass) << line(w);
}

// Every float16 and bfloat16 bit pattern but NaN goes through an input (textureLoad or the buffer
// accessor) and back out through an output's store unchanged, and scaled values round to nearest
// even, subnormals included, in every layout alike. On lavapipe an rgba16float image store does not
// round a float32 to nearest even by itself (and the compiler folds a float16 round trip away), so
// the accessors round in integer arithmetic and store a value the image holds exactly.
TEST_F(WebGpuLayouts, HalfPrecisionImagesHoldEveryValueAndRoundToNearestEven) {
  const OpDef& op = *find_op("rope_half");
  for (DType t : {DType::f16, DType::bf16}) {
    // float32 arithmetic may flush float32 subnormals (bfloat16's): only float16 is scaled.
    const std::vector<std::string> scales = t == DType::f16 ? std::vector<std::string>{"1.0", "0.125", "1.0009765625", "4096.0"}
                                                            : std::vector<std::string>{"1.0"};
    for (const std::string& scale : scales) {
      // Every lane's value replaced just before the store, whichever path (4-wide or per lane) made it.
      override_kernel("rope_half", "out_store(t, v);",
                      cat("  for (var j = 0u; j < 4u; j++) { let i = out_flat(t, j); if (i != TS_PAD) { v[j] = x_at(i) * ", scale,
                          "; } }  // the value under test"),
                      false);
      for (const char* layout : {"buffer", "texture3d_w", "texture3d_h", "texture3d_c"}) {
        Expected e = prepare(parse_case(cat("rope_half/B=1,H=1,S=256,D=256/", dtype_name(t), "/", layout, "/seed=1")));
        Tensor& x = e.problem.inputs.at("x");
        std::vector<uint16_t> want(65536);
        for (uint32_t h = 0; h < 65536; ++h) {
          const float f = t == DType::f16 ? f16_to_f32(uint16_t(h)) : bf16_to_f32(uint16_t(h));
          const uint16_t in = std::isnan(f) ? 0 : uint16_t(h);
          std::memcpy(x.bytes.data() + 2 * h, &in, 2);
          const float v = (t == DType::f16 ? f16_to_f32(in) : bf16_to_f32(in)) * std::stof(scale);
          want[h] = t == DType::f16 ? f32_to_f16(v) : f32_to_bf16(v);
        }
        RunOutput out = backend().run(op, e.problem);
        ASSERT_EQ(out.status, RunOutput::Status::ok) << out.message;
        const Tensor& got = out.outputs.at("out");
        int64_t bad = 0, first = -1;
        for (uint32_t h = 0; h < 65536; ++h)
          if (std::memcmp(got.bytes.data() + 2 * h, &want[h], 2) != 0 && bad++ == 0) first = h;
        EXPECT_EQ(bad, 0) << dtype_name(t) << " " << layout << " x " << scale << ": first at input bits 0x" << std::hex
                          << first;
      }
    }
  }
}

// ---- int8 accessors, through test kernels ----

// z = clamp(-x, -127, 127) through x_at, stored with multiples of 256 added (the store keeps each
// lane's low byte): a byte read unsigned, or a lane stored from the wrong byte, shows.
constexpr const char* kNegateInt8 = R"(TS_INPUT(x, 0)
TS_OUTPUT(z, 1)
struct Params { n: u32 }
@group(0) @binding(2) var<uniform> pc : Params;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  var v = vec4<i32>(0);
  for (var j = 0u; j < 4u; j++) {
    let i = z_flat(t, j);
    if (i != TS_PAD) { v[j] = clamp(-x_at(i), -127, 127) + 256 * (i32(j) - 2); }
  }
  z_store(t, v);
}
)";

// z = x, element i taken from a read of 4 consecutive elements starting at s, i - 3 <= s <= i,
// s stepping through every residue mod 4 and every position in a row: x_at4 for even i, the bytes
// of x_packed4 for odd i. Every placement of a 4-element run (one word, two words, one lane of 4
// words, element by element) in every layout.
constexpr const char* kRunsInt8 = R"(TS_INPUT(x, 0)
TS_OUTPUT(z, 1)
struct Params { n: u32 }
@group(0) @binding(2) var<uniform> pc : Params;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  let numel = x_numel();
  var v = vec4<i32>(0);
  for (var j = 0u; j < 4u; j++) {
    let i = z_flat(t, j);
    if (i == TS_PAD) { continue; }
    if (numel < 4u) { v[j] = x_at(i); continue; }
    let s = min(i - min(i, (i / 4u) % 4u), numel - 4u);
    if (i % 2u == 0u) { v[j] = x_at4(s)[i - s]; }
    else { v[j] = extractBits(bitcast<i32>(x_packed4(s)), 8u * (i - s), 8u); }
  }
  z_store(t, v);
}
)";

std::optional<Violation> no_rules(const Problem&) { return std::nullopt; }
std::vector<BufferSpec> z_like_x(const Problem& p) { return {{"z", p.inputs.at("x").shape, p.dtype}}; }
std::vector<Dispatch> z_texels(const Problem& p) {
  const uint64_t n = uint64_t(physical(p.inputs.at("x").shape, p.dtype, p.layout("z")).texels);
  return {{p.params.value("kernel", ""), {}, n, {{"n", double(n)}}}};
}
OpDef int8_texel_op() {
  OpDef o;
  o.name = "int8_texel_test";
  o.validate = no_rules;
  o.buffers = z_like_x;
  o.plan = z_texels;
  return o;
}

// x[i] runs through every int8 value: (37 i + 5) mod 256 - 128.
int64_t int8_value(int64_t i) { return (37 * i + 5) % 256 - 128; }

Problem int8_problem(const Shape& s, const std::string& storage, const std::string& kernel) {
  Problem p;
  p.dtype = DType::i8;
  p.storage = storage;
  Tensor x(DType::i8, s);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, double(int8_value(i)));
  p.inputs["x"] = std::move(x);
  p.params = {{"kernel", kernel}};
  return p;
}

// Packed dimensions (W, and C for the channel-packed layouts) of 1, 2, 3, 4, 5, 8 and 9, rows that
// end mid-word, ranks 1 to 5 (dimensions before the last four fold into N).
const std::vector<Shape>& int8_shapes() {
  static const std::vector<Shape> s = {{1},          {7},       {2, 3},       {3, 9},        {5, 1, 3},
                                       {2, 5, 8},    {3, 5, 2, 4}, {2, 3, 5, 1}, {1, 6, 2, 12}, {2, 2, 3, 2, 5}};
  return s;
}

// Every int8 layout as input and as output, mixed: every element read and written exactly, packed
// padding lanes zero, a buffer's trailing guard bytes (past a last word of 1 to 3 elements) kept.
TEST_F(WebGpuLayouts, Int8LayoutsReadAndWriteEveryElementExactly) {
  backend().set_kernel_source("test_i8_negate", kNegateInt8);
  backend().set_kernel_source("test_i8_runs", kRunsInt8);
  const char* layouts[] = {"buffer", "int8_4w", "int8_4c1w", "int8_4w4c"};
  OpDef o = int8_texel_op();
  for (const char* kernel : {"test_i8_negate", "test_i8_runs"})
    for (const Shape& s : int8_shapes())
      for (const char* in : layouts)
        for (const char* out : layouts) {
          const std::string storage = cat(in, ";z=", out), what = cat(kernel, " ", shape_str(s), " ", storage);
          RunOutput r = backend().run(o, int8_problem(s, storage, kernel));
          ASSERT_EQ(r.status, RunOutput::Status::ok) << what << ": " << r.message;
          const Tensor& z = r.outputs.at("z");
          for (int64_t i = 0; i < z.numel(); ++i) {
            const int64_t want = kernel == std::string("test_i8_negate") ? std::min<int64_t>(-int8_value(i), 127) : int8_value(i);
            ASSERT_EQ(int64_t(z.get(i)), want) << what << " at " << i;
          }
          EXPECT_EQ(r.guards.at("z").bad_bytes, 0) << what;
          EXPECT_EQ(r.guards.at("z").bad_padding, 0) << what;
        }
}

// The formats this backend uses for images are probed at start and listed.
TEST_F(WebGpuLayouts, ImageFormatsAreProbedAndListed) {
  const auto caps = backend().info().capabilities;
  for (const char* f : {"rgba32float", "rgba16float", "rgba16uint"}) {
    const bool ok = std::find(caps.begin(), caps.end(), cat("texture3d:", f)) != caps.end();
    const bool refused = std::find(caps.begin(), caps.end(), cat("no-texture3d:", f)) != caps.end();
    EXPECT_TRUE(ok != refused) << f << ": " << testing::PrintToString(caps);
  }
}

}  // namespace
}  // namespace ts
