// `touchstone bench --cold`: before each timed interval, every texel of a buffer larger than the
// device's caches is overwritten, so that the interval finds none of the case's tensors there. It
// writes, as nvbench's memset does, rather than only reading: the cache is then full of dirty lines,
// as a model's previous kernel leaves it, and their write-back may fall inside the interval (a cold
// row errs on the slow side). After a read the cache would be clean, and up to its size of the
// interval's own writes could stay there past the interval's end (PERFORMANCE.md).
layout(std430, binding = 0) writeonly buffer Scrub { uvec4 scrub[]; };
layout(push_constant) uniform Params { uint n; } pc;

void main() {
  uint i = ts_linear_id();
  if (i >= pc.n) return;
  scrub[i] = uvec4(i);
}
