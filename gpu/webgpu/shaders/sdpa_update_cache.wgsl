// sdpa update_cache: k_cache[pos + s] = k[s] and v_cache[pos + s] = v[s] for s < S. A row is Hkv*D
// values and the cache rows are contiguous, so row s of k lands pos*Hkv*D values into k_cache.
// D % 4 == 0: one invocation per 4 consecutive elements of k (and the same of v), an exact copy.
// Bindings (gpu/webgpu/PROTOCOL.md): k and v are read through their accessors (TS_INPUT,
// gpu/ACCESSORS.md: any layout); each storage array binds the tensor of its name (the caches are
// buffers, updated in place); the uniform block `pc` takes the plan's uniforms by member name.
TS_INPUT(k, 0)
TS_INPUT(v, 1)
@group(0) @binding(2) var<storage, read_write> k_cache : array<vec4<DTYPE>>;
@group(0) @binding(3) var<storage, read_write> v_cache : array<vec4<DTYPE>>;
struct Params { n: u32, pos: u32, Hkv: u32, D4: u32 }
@group(0) @binding(4) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = ts_linear_id(gid, nwg);
  if (i >= pc.n) { return; }
  let at = pc.pos * pc.Hkv * pc.D4 + i;
  k_cache[at] = vec4<DTYPE>(k_at4(4u * i));
  v_cache[at] = vec4<DTYPE>(v_at4(4u * i));
}
