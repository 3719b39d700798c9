// `touchstone bench --cold`: before each timed interval, every texel of a buffer larger than the
// device's caches is read, so that the interval finds none of the case's tensors there. It only
// reads: the cache is left holding clean lines, and no write-back of them can fall inside the
// interval (an overwrite would leave it full of dirty ones). The store is never taken (the source
// holds 0x3C3C3C3C in every word: its sum is not all ones), but no compiler can know that, so the
// loads stay. The sink is also what orders the interval after the scrub on WebGPU (gpu/gpu_backend.cpp).
layout(std430, binding = 0) readonly buffer Src { uvec4 scrub_src[]; };
layout(std430, binding = 1) buffer Sink { uint scrub_sink[]; };
layout(push_constant) uniform Params { uint n; } pc;

void main() {
  uint i = ts_linear_id();
  if (i >= pc.n) return;
  uvec4 v = scrub_src[i];
  if (v.x + v.y + v.z + v.w == 0xFFFFFFFFu) scrub_sink[0] = i;
}
