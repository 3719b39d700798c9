// sdpa softmax, in place over each score row r = (h, s), c < ctx:
//   scores[r,c] = exp(scores[r,c] - m) / sum_c' exp(scores[r,c'] - m),   m = max_c scores[r,c].
// Subtracting the row max keeps every exp() in (0, 1] whatever the logits' size (an unstable
// softmax overflows f32 once a score passes ~88.7); MASKED scores become exactly 0.
// One invocation per row, f32.
// Bindings (gpu/webgpu/PROTOCOL.md): the storage array binds the tensor of its name, the uniform
// block `pc` takes the plan's uniforms by member name.
@group(0) @binding(0) var<storage, read_write> scores : array<f32>;
struct Params { n: u32, ctx: u32 }
@group(0) @binding(1) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = ts_linear_id(gid, nwg);
  if (r >= pc.n) { return; }
  let b = r * pc.ctx;
  var m = scores[b];
  for (var c = 1u; c < pc.ctx; c++) {
    m = max(m, scores[b + c]);
  }
  var sum = 0.0;
  for (var c = 0u; c < pc.ctx; c++) {
    let e = exp(scores[b + c] - m);
    scores[b + c] = e;
    sum += e;
  }
  let inv = 1.0 / sum;  // sum >= 1: the max's own term is exp(0)
  for (var c = 0u; c < pc.ctx; c++) {
    scores[b + c] *= inv;
  }
}
