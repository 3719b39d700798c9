// rope_cis: x [B,N,C] viewed as pairs; pair p uses freqs_cis pair j = p mod (N*C/2) = (c, s):
//   out[2p] = x[2p]*c - x[2p+1]*s,   out[2p+1] = x[2p]*s + x[2p+1]*c.
// freqs_cis of any rank is the same flat run of (cos, sin) pairs. One invocation per pair.
// Bindings (gpu/webgpu/PROTOCOL.md): each storage array binds the tensor of its name (`out_` binds
// `out`), the uniform block `pc` takes the plan's uniforms by member name.
@group(0) @binding(0) var<storage, read> x : array<DTYPE>;
@group(0) @binding(1) var<storage, read> freqs_cis : array<DTYPE>;
@group(0) @binding(2) var<storage, read_write> out_ : array<DTYPE>;
struct Params { n: u32, nc2: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = ts_linear_id(gid, nwg);
  if (p >= pc.n) { return; }
  let j = p % pc.nc2;
  let c = f32(freqs_cis[2u * j]);
  let s = f32(freqs_cis[2u * j + 1u]);
  let a = f32(x[2u * p]);
  let b = f32(x[2u * p + 1u]);
  out_[2u * p] = DTYPE(a * c - b * s);
  out_[2u * p + 1u] = DTYPE(a * s + b * c);
}
