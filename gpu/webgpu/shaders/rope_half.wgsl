// rope_half: x [B,H,S,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + r[d]*sin[s,d],  r[d] = -x[d+D/2] for d < D/2, x[d-D/2] otherwise.
// One invocation per element.
// Bindings (gpu/webgpu/PROTOCOL.md): each storage array binds the tensor of its name (`cos_`, `sin_`,
// `out_` bind `cos`, `sin`, `out`: cos and sin are WGSL builtins), the uniform block `pc` takes the
// plan's uniforms by member name.
@group(0) @binding(0) var<storage, read> x : array<DTYPE>;
@group(0) @binding(1) var<storage, read> cos_ : array<DTYPE>;
@group(0) @binding(2) var<storage, read> sin_ : array<DTYPE>;
@group(0) @binding(3) var<storage, read_write> out_ : array<DTYPE>;
struct Params { n: u32, S: u32, D: u32 }
@group(0) @binding(4) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = ts_linear_id(gid, nwg);
  if (i >= pc.n) { return; }
  let d = i % pc.D;
  let s = (i / pc.D) % pc.S;
  let hd = pc.D / 2u;
  // Only the branch taken reads x, so neither index leaves the row.
  var r: f32;
  if (d < hd) { r = -f32(x[i + hd]); } else { r = f32(x[i - hd]); }
  out_[i] = DTYPE(f32(x[i]) * f32(cos_[s * pc.D + d]) + r * f32(sin_[s * pc.D + d]));
}
