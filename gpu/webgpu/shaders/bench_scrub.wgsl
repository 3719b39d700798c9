// `touchstone bench --cold`: before each timed interval, every texel of a buffer larger than the
// device's caches is overwritten, so that the interval finds none of the case's tensors there. It
// writes, as nvbench's memset does, rather than only reading: the cache is then full of dirty lines,
// as a model's previous kernel leaves it, and their write-back may fall inside the interval (a cold
// row errs on the slow side). After a read the cache would be clean, and up to its size of the
// interval's own writes could stay there past the interval's end (PERFORMANCE.md).
@group(0) @binding(0) var<storage, read_write> scrub : array<vec4<u32>>;
struct Params { n: u32 }
@group(0) @binding(1) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = ts_linear_id(gid, nwg);
  if (i >= pc.n) { return; }
  scrub[i] = vec4<u32>(i);
}
