// `touchstone bench`'s bandwidth ceiling: dst = src, 16 bytes per invocation, no arithmetic. It
// reads and writes every byte once, as the bytes_moved models count an ideal kernel, so the ratio
// of a case's GB/s to this one's is how close the case came to what the device can move.
@group(0) @binding(0) var<storage, read> src : array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst : array<vec4<u32>>;
struct Params { n: u32 }
@group(0) @binding(2) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = ts_linear_id(gid, nwg);
  if (i >= pc.n) { return; }
  dst[i] = src[i];
}
