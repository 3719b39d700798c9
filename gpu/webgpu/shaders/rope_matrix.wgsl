// rope_matrix: x [B,H,S,D], m [D,D]; element d of row (b,h,s):
//   out[d] = x[d]*cos[s,d] + (sum_k x[k]*m[k,d]) * sin[s,d]
// One invocation per element; the dot product accumulates in float32 in k order.
// Bindings (gpu/webgpu/PROTOCOL.md): each storage array binds the tensor of its name (`cos_`, `sin_`,
// `out_` bind `cos`, `sin`, `out`: cos and sin are WGSL builtins), the uniform block `pc` takes the
// plan's uniforms by member name.
@group(0) @binding(0) var<storage, read> x : array<DTYPE>;
@group(0) @binding(1) var<storage, read> m : array<DTYPE>;
@group(0) @binding(2) var<storage, read> cos_ : array<DTYPE>;
@group(0) @binding(3) var<storage, read> sin_ : array<DTYPE>;
@group(0) @binding(4) var<storage, read_write> out_ : array<DTYPE>;
struct Params { n: u32, S: u32, D: u32 }
@group(0) @binding(5) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = ts_linear_id(gid, nwg);
  if (i >= pc.n) { return; }
  let d = i % pc.D;
  let row = i / pc.D;
  let s = row % pc.S;
  let base = row * pc.D;
  var acc = 0.0;
  for (var k = 0u; k < pc.D; k++) {
    acc += f32(x[base + k]) * f32(m[k * pc.D + d]);
  }
  out_[i] = DTYPE(f32(x[i]) * f32(cos_[s * pc.D + d]) + acc * f32(sin_[s * pc.D + d]));
}
