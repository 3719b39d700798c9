#include "gpu/webgpu/wgsl_reflect.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <stdexcept>

#include "core/contract.h"

namespace ts::webgpu {

namespace {

// The text with comments blanked out (newlines kept), so that a declaration quoted in a comment
// binds nothing. WGSL block comments nest.
std::string strip_comments(std::string_view s) {
  std::string out(s);
  size_t i = 0;
  while (i < out.size()) {
    if (out.compare(i, 2, "//") == 0) {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      int depth = 0;
      do {
        if (out.compare(i, 2, "/*") == 0) ++depth, out[i] = out[i + 1] = ' ', i += 2;
        else if (out.compare(i, 2, "*/") == 0) --depth, out[i] = out[i + 1] = ' ', i += 2;
        else out[i] = out[i] == '\n' ? '\n' : ' ', ++i;
      } while (depth > 0 && i < out.size());
    } else {
      ++i;
    }
  }
  return out;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<UniformMember> struct_members(const std::string& text, const std::string& type, const std::string& kernel) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("struct\\s+" + type + "\\s*\\{([^}]*)\\}")))
    throw std::runtime_error(cat("webgpu: kernel ", kernel, ": uniform struct ", type, " is not declared"));
  std::vector<UniformMember> members;
  static const std::regex member(R"(^(\w+)\s*:\s*(u32|i32|f32)$)");
  std::string body = m[1];
  size_t at = 0;
  while (at <= body.size()) {
    size_t comma = body.find(',', at);
    std::string item = trim(body.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    at = comma == std::string::npos ? body.size() + 1 : comma + 1;
    if (item.empty()) continue;  // a trailing comma
    std::smatch mm;
    if (!std::regex_match(item, mm, member))
      throw std::runtime_error(cat("webgpu: kernel ", kernel, ": uniform member '", item, "' of ", type,
                                   " is not NAME: u32|i32|f32 (every member is one 4-byte scalar)"));
    UniformMember u;
    u.name = mm[1];
    u.type = mm[2] == "u32" ? UniformMember::Type::u32 : mm[2] == "i32" ? UniformMember::Type::i32 : UniformMember::Type::f32;
    members.push_back(std::move(u));
  }
  return members;
}

}  // namespace

WgslResources reflect_wgsl(std::string_view source, const std::string& kernel) {
  const std::string text = strip_comments(source);
  static const std::regex decl(R"(((?:@\w+\s*\(\s*\w+\s*\)\s*)+)var\s*(?:<([^>]*)>)?\s*(\w+)\s*:\s*([^;]+);)");
  static const std::regex texture(R"(^texture_3d\s*<\s*(f32|u32|i32)\s*>$)");
  static const std::regex storage_texture(R"(^texture_storage_3d\s*<\s*(\w+)\s*,\s*write\s*>$)");
  static const std::regex attr(R"(@(\w+)\s*\(\s*(\w+)\s*\))");
  static const std::regex binding_attr(R"(@binding\s*\()");
  WgslResources r;
  size_t declared = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), decl); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    std::optional<uint32_t> group, binding;
    std::string attrs = m[1];
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), attr); a != std::sregex_iterator(); ++a) {
      if ((*a)[1] == "group") group = uint32_t(std::stoul((*a)[2]));
      if ((*a)[1] == "binding") binding = uint32_t(std::stoul((*a)[2]));
    }
    if (!binding) continue;
    ++declared;
    const std::string where = cat("webgpu: kernel ", kernel, ": resource '", m.str(3), "'");
    if (group.value_or(~0u) != 0) throw std::runtime_error(where + " must be in @group(0)");
    std::string space = m[2];
    space.erase(std::remove_if(space.begin(), space.end(), [](unsigned char c) { return std::isspace(c); }), space.end());
    const std::string name = m[3], type = trim(m[4]);
    std::smatch tm;
    if (space.empty()) {
      // Handles: textures, which only the accessors declare (3-D; inputs sampled, outputs stored).
      if (std::regex_match(type, tm, texture))
        r.storage.push_back({*binding, name, false, StorageBinding::Kind::texture,
                             tm[1] == "f32" ? "unfilterable-float" : tm[1] == "u32" ? "uint" : "sint"});
      else if (std::regex_match(type, tm, storage_texture))
        r.storage.push_back({*binding, name, true, StorageBinding::Kind::storage_texture, tm[1]});
      else
        throw std::runtime_error(cat(where, ": type ", type, " is not texture_3d<f32|u32|i32> or texture_storage_3d<FORMAT, write>"));
    } else if (space == "uniform") {
      if (r.uniform) throw std::runtime_error(where + ": a kernel has at most one uniform block");
      r.uniform = UniformBinding{*binding, struct_members(text, type, kernel)};
    } else if (space == "storage" || space == "storage,read" || space == "storage,read_write") {
      if (type.rfind("array<", 0) != 0) throw std::runtime_error(where + " must be an array<...>");
      r.storage.push_back({*binding, name, space == "storage,read_write"});
    } else {
      throw std::runtime_error(cat(where, ": address space <", m.str(2), "> is not storage or uniform"));
    }
  }
  const auto total = size_t(std::distance(std::sregex_iterator(text.begin(), text.end(), binding_attr),
                                          std::sregex_iterator()));
  if (total != declared)
    throw std::runtime_error(cat("webgpu: kernel ", kernel, ": ", total - declared,
                                 " @binding declaration(s) do not follow '@group(0) @binding(N) var<...> NAME : TYPE;'"));
  return r;
}

}  // namespace ts::webgpu
