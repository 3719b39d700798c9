// `touchstone bench`'s bandwidth ceiling: dst = src, 16 bytes per invocation, no arithmetic. It
// reads and writes every byte once, as the bytes_moved models count an ideal kernel, so the ratio
// of a case's GB/s to this one's is how close the case came to what the device can move.
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Params { uint n; } pc;

void main() {
  uint i = ts_linear_id();
  if (i >= pc.n) return;
  dst[i] = src[i];
}
