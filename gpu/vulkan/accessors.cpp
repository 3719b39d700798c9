#include "gpu/vulkan/accessors.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

#include "core/contract.h"
#include "gpu/gpu_backend.h"
#include "gpu/vulkan/images.h"

namespace ts::vk {


namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// `TS_INPUT(name, binding)` with optional spaces, an optional ';' and an optional // comment.
bool parse_line(std::string_view line, AccessorDecl& d) {
  line = trim(line);
  if (size_t c = line.find("//"); c != std::string_view::npos) line = trim(line.substr(0, c));
  if (!line.empty() && line.back() == ';') line = trim(line.substr(0, line.size() - 1));
  const std::string_view kinds[] = {"TS_INPUT", "TS_OUTPUT"};
  for (std::string_view kind : kinds) {
    if (line.substr(0, kind.size()) != kind) continue;
    std::string_view rest = trim(line.substr(kind.size()));
    if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return false;
    rest = rest.substr(1, rest.size() - 2);
    size_t comma = rest.find(',');
    if (comma == std::string_view::npos) return false;
    std::string_view name = trim(rest.substr(0, comma)), binding = trim(rest.substr(comma + 1));
    if (!identifier(name) || binding.empty() || binding.size() > 9 ||
        !std::all_of(binding.begin(), binding.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    d.name = std::string(name);
    d.binding = uint32_t(std::stoul(std::string(binding)));
    d.output = kind == "TS_OUTPUT";
    return true;
  }
  return false;
}

// The layout the index math is told: a buffer's is known when compiling; a texture's packing, and
// which packed int8 layout an int8 tensor has, come from ts_meta at run time (accessors.h says why).
std::string layout_expr(Layout l, uint32_t binding) {
  if (l == Layout::buffer) return "TS_BUFFER";
  return cat("ts_meta[", kLayoutMeta + binding, "].x");
}

// Replaces every @KEY@ of `text` by its value.
std::string fill(std::string text, const std::map<std::string, std::string>& values) {
  for (auto& [key, value] : values) {
    const std::string k = "@" + key + "@";
    for (size_t at = text.find(k); at != std::string::npos; at = text.find(k, at + value.size()))
      text.replace(at, k.size(), value);
  }
  return text;
}

// The dtype's conversions between what the resource holds and float32, as GLSL expressions of @X@.
// Stores round to the dtype to nearest even, in the preamble's integer rounding.
struct Conversions {
  std::string elem;        // buffer element: one texel
  std::string to_vec4;     // a loaded texel -> vec4
  std::string to_float;    // a loaded lane -> float
  std::string from_vec4;   // vec4 -> a buffer texel
  std::string from_float;  // float -> a buffer lane
  std::string image_load;  // imageLoad(...) -> vec4
  std::string image_store; // vec4 -> what imageStore takes
};

Conversions conversions(DType t, bool f16_rte) {
  switch (t) {
    case DType::f32: return {"vec4", "@X@", "@X@", "@X@", "@X@", "@X@", "@X@"};
    // Stores convert a value float16 holds exactly (the preamble's ts_f16_round): every layout
    // stores the same bits, whatever the device's own conversions round to. With f16_rte (the
    // accessors declare RoundingModeRTE for 16-bit) a buffer texel's conversion is nearest-even by
    // the SPIR-V spec, and ts_f16_rte4 rounds in integers only what that leaves open (gpu/ACCESSORS.md).
    case DType::f16:
      return {"f16vec4",   "vec4(@X@)", "float(@X@)",
              f16_rte ? "f16vec4(ts_f16_rte4(@X@))" : "f16vec4(ts_f16_round4(@X@))", "float16_t(ts_f16_round(@X@))",
              "@X@", "ts_f16_round4(@X@)"};
    case DType::bf16:
      return {"u16vec4", "ts_bf16_to_vec4(uvec4(@X@))", "ts_bf16_to_float(uint(@X@))", "u16vec4(ts_vec4_to_bf16(@X@))",
              "uint16_t(ts_float_to_bf16(@X@))", "ts_bf16_to_vec4(@X@)", "ts_vec4_to_bf16(@X@)"};
    default: break;
  }
  throw Unsupported("", cat("vulkan: no layout accessors for ", dtype_name(t), " tensors yet"));
}

// A conversion applied to the GLSL expression `x`.
std::string conv(const std::string& expr, const std::string& x) { return fill(expr, {{"X", x}}); }

constexpr const char* kCommon = R"(uvec4 @N@_dims() { return ts_meta[@B@]; }
uint @N@_numel() { return ts_numel(ts_meta[@B@]); }
)";

constexpr const char* kOutputIndex = R"(uint @N@_texels() { return ts_texels(@L@, ts_meta[@B@]); }
uint @N@_flat(uint t, uint j) { return ts_flat(@L@, ts_meta[@B@], t, j); }
uint @N@_texel_of(uint i) { return ts_locate(@L@, ts_meta[@B@], i).x; }
)";

std::string buffer_glsl(const AccessorDecl& d, const Conversions& c, std::map<std::string, std::string> v) {
  v["ELEM"] = c.elem;
  std::string s = fill("layout(std430, binding = @B@) @ACCESS@ buffer TsBlock_@N@ { @ELEM@ ts_buf_@N@[]; };\n",
                       {{"ACCESS", d.output ? "writeonly" : "readonly"}});
  s += kCommon;
  if (!d.output) {
    v["LANE"] = conv(c.to_float, "ts_buf_@N@[i >> 2][i & 3u]");
    v["TEXEL"] = conv(c.to_vec4, "ts_buf_@N@[i >> 2]");
    v["WHOLE"] = conv(c.to_vec4, "ts_buf_@N@[t]");
    s += R"(float @N@_at(uint i) { return @LANE@; }
vec4 @N@_texel(uint t) { return @WHOLE@; }
vec4 @N@_at4(uint i) {
  if ((i & 3u) == 0u) return @TEXEL@;
  return vec4(@N@_at(i), @N@_at(i + 1u), @N@_at(i + 2u), @N@_at(i + 3u));
}
)";
  } else {
    v["TEXEL"] = conv(c.from_vec4, "v");
    v["LANE"] = conv(c.from_float, "v[j]");
    s += kOutputIndex;
    // Lanes past the tensor's end are not written: they are the guard band's bytes.
    s += R"(void @N@_store_texel(uint t, vec4 v) { ts_buf_@N@[t] = @TEXEL@; }
void @N@_store(uint t, vec4 v) {
  uint k = ts_lanes(TS_BUFFER, ts_meta[@B@], t);
  if (k == 4u) {
    @N@_store_texel(t, v);
    return;
  }
  for (uint j = 0u; j < k; ++j) ts_buf_@N@[t][j] = @LANE@;
}
)";
  }
  // Twice: the values hold keys themselves (ts_buf_@N@ inside LANE).
  return fill(fill(s, v), v);
}

// int8 tensors, one 32-bit word of 4 bytes per texel (lane j in byte j), held as 16-byte chunks
// (uvec4) so that a kernel can move 4 words in one load or store; word t is ts_buf_NAME[t >> 2][t & 3].
// Whether the tensor is a `buffer` is compiled in (NAME_is_buffer; a buffer's accessors index
// directly); which packed layout it is, is read from ts_meta. Values widen to int; stores take each
// lane's low byte (the kernel clamps). A packed layout's padding lanes are the tensor's own bytes and
// are stored as zero; a buffer's last partial word keeps its other bytes (the trailing guard's) by a
// read-modify-write of that word alone (one writer per word), so the block is not writeonly.
std::string int8_glsl(const AccessorDecl& d, bool buffer, std::map<std::string, std::string> v) {
  std::string s = fill("layout(std430, binding = @B@) @ACCESS@buffer TsBlock_@N@ { uvec4 ts_buf_@N@[]; };\n",
                       {{"ACCESS", !d.output ? "readonly " : buffer ? "" : "writeonly "}});
  s += kCommon;
  if (!d.output) {
    s += R"(uint @N@_word(uint t) { return ts_buf_@N@[t >> 2][t & 3u]; }
uvec4 @N@_chunk(uint c) { return ts_buf_@N@[c]; }
ivec4 @N@_texel(uint t) { return ts_i8_unpack4(@N@_word(t)); }
)";
    if (buffer) {
      // Elements i .. i+3 lie in word i/4, or across words i/4 and i/4 + 1 (both hold elements).
      s += R"(int @N@_at(uint i) { return ts_i8_byte(@N@_word(i >> 2), i & 3u); }
uint @N@_packed4(uint i) {
  uint t = i >> 2, s = 8u * (i & 3u), w = @N@_word(t);
  if (s == 0u) return w;
  return (w >> s) | (@N@_word(t + 1u) << (32u - s));
}
)";
    } else {
      // One word where the 4 elements are one (int8_4w from a multiple of 4 within a row), the same
      // lane of 4 consecutive words (int8_4c1w within a row, int8_4w4c from a multiple of 4 within
      // a row), else element by element.
      s += R"(int @N@_at(uint i) {
  uvec2 p = ts_locate(@L@, ts_meta[@B@], i);
  return ts_i8_byte(@N@_word(p.x), p.y);
}
uint @N@_packed4(uint i) {
  uvec4 d = ts_meta[@B@];
  uint l = @L@, w = i % d.x;
  bool row = w + 3u < d.x, w4 = (w & 3u) == 0u;
  if ((l == TS_INT8_4W && row && w4) || (l == TS_INT8_4C1W && row) || (l == TS_INT8_4W4C && row && w4)) {
    uvec2 p = ts_locate(l, d, i);
    if (l == TS_INT8_4W) return @N@_word(p.x);
    uint s = 8u * p.y;
    return ((@N@_word(p.x) >> s) & 0xFFu) | (((@N@_word(p.x + 1u) >> s) & 0xFFu) << 8) |
           (((@N@_word(p.x + 2u) >> s) & 0xFFu) << 16) | (((@N@_word(p.x + 3u) >> s) & 0xFFu) << 24);
  }
  return ts_i8_pack4(ivec4(@N@_at(i), @N@_at(i + 1u), @N@_at(i + 2u), @N@_at(i + 3u)));
}
)";
    }
    s += "ivec4 @N@_at4(uint i) { return ts_i8_unpack4(@N@_packed4(i)); }\n";
  } else {
    s += kOutputIndex;
    s += R"(void @N@_store_word(uint t, uint w) { ts_buf_@N@[t >> 2][t & 3u] = w; }
void @N@_store_chunk(uint c, uvec4 w) { ts_buf_@N@[c] = w; }
void @N@_store_texel(uint t, ivec4 v) { @N@_store_word(t, ts_i8_pack4(v)); }
)";
    if (buffer) {
      s += R"(void @N@_store(uint t, ivec4 v) {
  uint k = ts_lanes(TS_BUFFER, ts_meta[@B@], t), w = ts_i8_pack4(v);
  if (k == 4u) {
    @N@_store_word(t, w);
    return;
  }
  uint keep = 0xFFFFFFFFu << (8u * k);
  ts_buf_@N@[t >> 2][t & 3u] = (ts_buf_@N@[t >> 2][t & 3u] & keep) | (w & ~keep);
}
)";
    } else {
      s += R"(void @N@_store(uint t, ivec4 v) {
  for (uint j = ts_lanes(@L@, ts_meta[@B@], t); j < 4u; ++j) v[j] = 0;
  @N@_store_word(t, ts_i8_pack4(v));
}
)";
    }
  }
  return fill(s, v);
}

std::string image_glsl(const AccessorDecl& d, const Conversions& c, const TexelFormat& f,
                       std::map<std::string, std::string> v) {
  v["FMT"] = f.glsl;
  v["IMG"] = f.integer ? "uimage3D" : "image3D";
  std::string s = fill("layout(binding = @B@, @FMT@) uniform @ACCESS@ @IMG@ ts_img_@N@;\n",
                       {{"ACCESS", d.output ? "writeonly" : "readonly"}});
  s += kCommon;
  if (!d.output) {
    v["LOAD"] = conv(c.image_load, "imageLoad(ts_img_@N@, ivec3(p))");
    // texture3d_w holds 4 consecutive elements in one texel when W % 4 == 0 and i % 4 == 0.
    v["ONE_TEXEL"] = R"(  uvec4 d = ts_meta[@B@];
  if (@L@ == TS_TEXTURE3D_W && (i & 3u) == 0u && (d.x & 3u) == 0u) return ts_texel_@N@(ts_image_locate(@L@, d, i).xyz);
)";
    s += R"(vec4 ts_texel_@N@(uvec3 p) { return @LOAD@; }
vec4 @N@_texel(uint t) { return ts_texel_@N@(ts_coord(@L@, ts_meta[@B@], t)); }
float @N@_at(uint i) {
  uvec4 p = ts_image_locate(@L@, ts_meta[@B@], i);
  return ts_texel_@N@(p.xyz)[p.w];
}
vec4 @N@_at4(uint i) {
@ONE_TEXEL@  return vec4(@N@_at(i), @N@_at(i + 1u), @N@_at(i + 2u), @N@_at(i + 3u));
}
)";
  } else {
    v["STORE"] = conv(c.image_store, "v");
    s += kOutputIndex;
    // Padding lanes are stored as zero whatever the kernel passes (SPEC: they hold zero).
    s += R"(void @N@_store_texel(uint t, vec4 v) { imageStore(ts_img_@N@, ivec3(ts_coord(@L@, ts_meta[@B@], t)), @STORE@); }
void @N@_store(uint t, vec4 v) {
  uvec4 d = ts_meta[@B@];
  for (uint j = ts_lanes(@L@, d, t); j < 4u; ++j) v[j] = 0.0;
  imageStore(ts_img_@N@, ivec3(ts_coord(@L@, d, t)), @STORE@);
}
)";
  }
  return fill(fill(s, v), v);
}

}  // namespace

std::vector<AccessorDecl> parse_accessors(std::string_view source, const std::string& kernel, std::string* stripped) {
  std::vector<AccessorDecl> decls;
  std::string out;
  out.reserve(source.size());
  size_t line_no = 0;
  for (size_t start = 0; start < source.size();) {
    size_t end = source.find('\n', start);
    if (end == std::string_view::npos) end = source.size();
    std::string_view line = source.substr(start, end - start);
    ++line_no;
    std::string_view word = trim(line);
    if (word.rfind("TS_INPUT", 0) == 0 || word.rfind("TS_OUTPUT", 0) == 0) {
      AccessorDecl d;
      auto fail = [&](const std::string& why) {
        throw std::runtime_error(cat("vulkan: kernel '", kernel, "' line ", line_no, ": ", why, ": ", trim(line)));
      };
      if (!parse_line(line, d)) fail("a tensor declaration is TS_INPUT(name, binding) or TS_OUTPUT(name, binding)");
      d.line = line_no;
      if (d.binding >= kMetaBinding) fail(cat("binding ", d.binding, " is not below ", kMetaBinding, " (ts_meta's)"));
      for (const AccessorDecl& e : decls) {
        if (e.name == d.name) fail(cat("tensor '", d.name, "' is declared twice"));
        if (e.binding == d.binding) fail(cat("binding ", d.binding, " is taken by '", e.name, "'"));
      }
      decls.push_back(std::move(d));
    } else {
      out += line;
    }
    if (end < source.size()) out += '\n';
    start = end + 1;
  }
  if (stripped) *stripped = std::move(out);
  return decls;
}

std::string accessor_glsl(const std::vector<AccessorDecl>& decls, const std::vector<TensorForm>& forms, bool f16_rte) {
  // A kernel without declared tensors has no ts_meta: its invocations count forwards always.
  if (decls.empty()) return "uint ts_local_index() { return gl_LocalInvocationIndex; }\n";
  std::string s = cat("// (W, H, C, N) of the tensor at binding b in entry b (gpu/ACCESSORS.md); its layout in entry ",
                      kLayoutMeta, " + b\nlayout(std430, binding = ", kMetaBinding,
                      ") readonly buffer TsMeta { uvec4 ts_meta[]; };\n",
                      "// The invocation's index in its workgroup, counted backwards in cases that reverse lanes\n",
                      "uint ts_local_index() { return gl_LocalInvocationIndex ^ ts_meta[", kLaneMeta, "].x; }\n");
  bool rte = false;
  for (size_t i = 0; i < decls.size(); ++i)
    rte |= f16_rte && decls[i].output && forms.at(i).dtype == DType::f16 && forms.at(i).layout == Layout::buffer;
  // Execution mode RoundingModeRTE (4462) for 16-bit floats, capability RoundingModeRTE (4467): core
  // SPIR-V since 1.4, so no extension. Only where a float16 buffer is stored, on a device that has it.
  if (rte) s += "spirv_execution_mode(capabilities = [4467], 4462, 16);\n";
  for (size_t i = 0; i < decls.size(); ++i) {
    const AccessorDecl& d = decls[i];
    const TensorForm& f = forms.at(i);
    const bool int8 = f.dtype == DType::i8;
    std::map<std::string, std::string> v = {
        {"N", d.name}, {"B", std::to_string(d.binding)}, {"L", layout_expr(f.layout, d.binding)}};
    s += cat("\n// ", d.output ? "TS_OUTPUT(" : "TS_INPUT(", d.name, ", ", d.binding, "): ",
             is_texture(f.layout)                ? "texture3d (packing in ts_meta)"
             : int8 && f.layout != Layout::buffer ? "packed int8 words (layout in ts_meta)"
             : int8                               ? "int8 words, buffer"
                                                  : "buffer",
             ", ", dtype_name(f.dtype), "\n");
    // A compile-time constant: a kernel may branch on it to a path with no index arithmetic (texel
    // t of a buffer holds flat elements 4t .. 4t+3); the compiler drops the other branch.
    s += cat("const bool ", d.name, "_is_buffer = ", f.layout == Layout::buffer ? "true" : "false", ";\n");
    if (int8) s += int8_glsl(d, f.layout == Layout::buffer, v);
    else if (is_texture(f.layout)) s += image_glsl(d, conversions(f.dtype, false), texel_format(f.dtype), v);
    else s += buffer_glsl(d, conversions(f.dtype, rte), v);
  }
  return s;
}

}  // namespace ts::vk
