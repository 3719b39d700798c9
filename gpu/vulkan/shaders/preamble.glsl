#version 450
// Prepended to every kernel, followed by the DTYPE / DTYPE4 / IS_F16 defines and the plan's defines.
// The type extensions are always enabled: glslang declares a SPIR-V capability only for types a
// kernel actually uses, so a float32 kernel stays valid on a device without 8/16-bit support, and
// the backend reports a kernel needing a missing capability as UNSUPPORTED.
#extension GL_EXT_shader_16bit_storage : enable
#extension GL_EXT_shader_8bit_storage : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : enable
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : enable

// The workgroup size is specialization constant 0, chosen by the backend per device.
layout(local_size_x_id = 0) in;

// The invocation's index in the dispatch's 1-D grid. Grids over the per-dimension workgroup limit
// are folded into y and z by the backend; this unfolds them (invocations past the end of the 1-D
// grid exist in the last row: kernels bound-check the id as usual).
uint ts_linear_id() {
  return gl_GlobalInvocationID.x +
         gl_NumWorkGroups.x * gl_WorkGroupSize.x * (gl_GlobalInvocationID.y + gl_NumWorkGroups.y * gl_GlobalInvocationID.z);
}
