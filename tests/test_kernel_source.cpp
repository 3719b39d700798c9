// resolve_includes (gpu/kernel_source.h): the one include mechanism of GLSL and WGSL kernels.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/embedded.h"
#include "gpu/kernel_source.h"

namespace ts {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(KernelSource, IncludesResolveRecursivelyOnceEachAndNothingElseChanges) {
  const std::map<std::string, std::string> files = {
      {"a.glsl", "// a\n#include \"c.glsl\"\nint a;\n"}, {"b.glsl", "  #include \"c.glsl\"  \nint b;"}, {"c.glsl", "int c;\n"}};
  auto read = [&](const std::string& name) -> std::optional<std::string> {
    auto it = files.find(name);
    return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  const std::string src = "first\n#include \"a.glsl\"\n// #include \"missing.glsl\" in a comment stays\n#include \"b.glsl\"\nlast";
  EXPECT_EQ(resolve_includes(src, "dir/", "k.comp", read),
            "first\n// a\nint c;\nint a;\n// #include \"missing.glsl\" in a comment stays\n\nint b;\nlast");
  const std::string plain = "no includes\n  # include \"x\"\nat all";
  EXPECT_EQ(resolve_includes(plain, "dir/", "k.comp", read), plain);
}

TEST(KernelSource, AMissingIncludeNamesTheKernelAndTheFile) {
  try {
    resolve_includes("#include \"nope.wgsl\"\n", "gpu/webgpu/shaders/", "mine.wgsl");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("mine.wgsl"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpu/webgpu/shaders/nope.wgsl"), std::string::npos) << e.what();
  }
}

// The built-in kernels hold their shared code once, through includes, in both languages: each
// shared definition stands in the includer's resolved text once and not in the includer's own.
TEST(KernelSource, BuiltInKernelsShareTheirCodeThroughIncludes) {
  struct Shared {
    std::vector<const char*> kernels;
    const char* glsl;  // the definition in GLSL, then in WGSL
    const char* wgsl;
  };
  const Shared shared[] = {
      {{"q8ta_linear_tiled", "q8ta_linear_gemv", "q8ta_conv2d_general", "q8ta_conv2d_gemm"}, "int requantize(",
       "fn requantize("},
      {{"q8ta_linear_tiled", "q8ta_conv2d_gemm"}, "void q8ta_gemm_tile(", "fn q8ta_gemm_tile("},
      {{"sdpa_qk_tiled", "sdpa_av_tiled"}, "void tile_fma(", "fn tile_fma("},
      {{"sdpa_split_partial", "sdpa_decode_partial"}, "void chunk_softmax(", "fn chunk_softmax("},
  };
  for (const Shared& sh : shared)
    for (const auto& [dir, ext, def] : {std::tuple{"gpu/vulkan/shaders/", ".comp", sh.glsl},
                                        std::tuple{"gpu/webgpu/shaders/", ".wgsl", sh.wgsl}})
      for (const char* kernel : sh.kernels) {
        const std::string path = std::string(dir) + kernel + ext;
        const std::string_view own = embedded(path);
        const std::string text = resolve_includes(own, dir, path);
        EXPECT_EQ(count(std::string(own), def), 0u) << path << " defines " << def << " itself";
        EXPECT_EQ(count(text, def), 1u) << path << ": " << def;
        EXPECT_EQ(count(text, "#include"), 0u) << path;
      }
}

}  // namespace
}  // namespace ts
