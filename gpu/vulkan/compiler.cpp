#include "gpu/vulkan/compiler.h"

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

#include <stdexcept>

#include "core/contract.h"

namespace ts::vk {

namespace {

std::string trimmed(std::string log) {
  log.erase(log.find_last_not_of(" \n") + 1);
  return log;
}

struct GlslangProcess {
  GlslangProcess() { glslang::InitializeProcess(); }
  ~GlslangProcess() { glslang::FinalizeProcess(); }
};

}  // namespace

std::vector<uint32_t> compile_compute(const std::vector<SourcePart>& parts, const std::string& kernel) {
  static GlslangProcess process;
  std::vector<const char*> texts, names;
  std::vector<int> lengths;
  for (const SourcePart& p : parts) {
    texts.push_back(p.text.data());
    lengths.push_back(int(p.text.size()));
    names.push_back(p.name.c_str());
  }
  glslang::TShader shader(EShLangCompute);
  shader.setStringsWithLengthsAndNames(texts.data(), lengths.data(), names.data(), int(parts.size()));
  // SPIR-V 1.5 rather than 1.6: 1.6 turns local_size_x_id into LocalSizeId, which needs the
  // Vulkan 1.3 maintenance4 feature; 1.5 runs on any Vulkan 1.2 device and is validation-clean.
  shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_2);
  shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_5);
  const auto messages = EShMessages(EShMsgSpvRules | EShMsgVulkanRules);
  if (!shader.parse(GetDefaultResources(), 450, false, messages))
    throw std::runtime_error(cat("vulkan: kernel '", kernel, "' does not compile:\n", trimmed(shader.getInfoLog())));
  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages))
    throw std::runtime_error(cat("vulkan: kernel '", kernel, "' does not link:\n", trimmed(program.getInfoLog())));
  std::vector<uint32_t> spirv;
  spv::SpvBuildLogger logger;
  glslang::SpvOptions options;
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spirv, &logger, &options);
  if (spirv.empty())
    throw std::runtime_error(cat("vulkan: kernel '", kernel, "' produced no SPIR-V:\n", trimmed(logger.getAllMessages())));
  return spirv;
}

}  // namespace ts::vk
