#pragma once
// What ONNX Runtime's WebGPU execution provider can express of Touchstone's operators (one-node
// models of its own operators; gpu/ort/README.md says what matches and what differs).
#include "gpu/foreign/foreign_backend.h"

namespace ts::ort {

inline constexpr const char* kLibrary = "ort-webgpu";

Mapping rope_llama();  // com.microsoft RotaryEmbedding, interleaved (rope.cpp)
Mapping rope_half();   // com.microsoft RotaryEmbedding, not interleaved (rope.cpp)
Mapping sdpa();        // com.microsoft GroupQueryAttention (sdpa.cpp)

// onnxruntime-node has no bfloat16 tensors: such a case cannot be handed over.
std::optional<std::string> no_bfloat16(const Problem& p);
// `t` with another shape of as many elements (a view: ORT's [B, S, H*D] of a [B, S, H, D] tensor).
Tensor reshaped(Tensor t, Shape s);

}  // namespace ts::ort
