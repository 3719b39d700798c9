// sdpa update_cache: k_cache[pos + s] = k[s] and v_cache[pos + s] = v[s] for s < S. A row is Hkv*D
// values and the cache rows are contiguous, so row s of k lands pos*Hkv*D values into k_cache.
// D % 4 == 0: one invocation per 4 elements of k (and the same 4 of v), an exact copy: k and v, in
// any layout (gpu/ACCESSORS.md), widen exactly to float32 and round back to the same values.
TS_INPUT(k, 0)
TS_INPUT(v, 1)
layout(std430, binding = 2) writeonly buffer KC { DTYPE4 k_cache[]; };
layout(std430, binding = 3) writeonly buffer VC { DTYPE4 v_cache[]; };
layout(push_constant) uniform Params { uint n; uint pos; uint Hkv; uint D4; } pc;

void main() {
  uint i = ts_linear_id();
  if (i >= pc.n) return;
  uint at = pc.pos * pc.Hkv * pc.D4 + i;
  k_cache[at] = FROM_VEC4(k_at4(4u * i));
  v_cache[at] = FROM_VEC4(v_at4(4u * i));
}
