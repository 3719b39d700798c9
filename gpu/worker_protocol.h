#pragma once
// Frames between a backend and its worker process: gpu/webgpu/worker.mjs (gpu/webgpu/PROTOCOL.md)
// and the foreign workers (gpu/foreign/PROTOCOL.md, which use info, run, result and error).
// A frame is u32 length (little-endian, counting the type byte and the payload), u8 type, payload.
// Requests come on the worker's stdin, replies go out on its descriptor kFrameFd; its stdout and
// stderr are one pipe, of which the backend keeps a tail for error messages.
#include <cstdint>
#include <vector>

namespace ts {

inline constexpr int kFrameFd = 3;

enum class FrameType : uint8_t {
  info = 1,    // request: empty; reply: JSON {adapter, features, limits, flags}
  run = 2,     // request: u32 header length, JSON header, raw data the header points into
  result = 3,  // reply to run: the read-back buffers' bytes, back to back, in buffer order, then snapshots
  error = 4,   // reply to anything: a UTF-8 message
  prepare = 5, // request: JSON array of shaders (as in RUN's header) to compile in the background; no reply
  time = 6,    // request: as run, the header with "timing"; runs once, then times the dispatch chain
  times = 7,   // reply to time: float64 seconds of each timed repetition
};

struct Frame {
  FrameType type = FrameType::error;
  std::vector<uint8_t> payload;
};

}  // namespace ts
