// `touchstone bench --cold`: before each timed interval, every texel of a buffer larger than the
// device's caches is read, so that the interval finds none of the case's tensors there. It only
// reads: the cache is left holding clean lines, and no write-back of them can fall inside the
// interval (an overwrite would leave it full of dirty ones). The store is never taken (the source
// holds 0x3C3C3C3C in every word: its sum is not all ones), but no compiler can know that, so the
// loads stay. The sink is also what orders the interval after the scrub (gpu/gpu_backend.cpp).
@group(0) @binding(0) var<storage, read> scrub_src : array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> scrub_sink : array<u32>;
struct Params { n: u32 }
@group(0) @binding(2) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = ts_linear_id(gid, nwg);
  if (i >= pc.n) { return; }
  let v = scrub_src[i];
  if (v.x + v.y + v.z + v.w == 0xFFFFFFFFu) { scrub_sink[0] = i; }
}
