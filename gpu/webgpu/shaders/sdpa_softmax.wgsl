// sdpa softmax, in place over each score row r = (h, s) of ctx scores; the algorithm and order of
// operations of gpu/vulkan/shaders/sdpa_softmax.comp, which states them: query s sees keys c < n =
// pos + s + 1, m = max_{c < n} scores[r,c], scores[r,c] = exp(scores[r,c] - m) / sum_{c' < n}
// exp(scores[r,c'] - m) for c < n and 0 past it (the masked scores never read). A workgroup of
// WG = 256 takes WG / tpr rows, keys strided over a row's tpr invocations, max and sum reduced in
// shared memory (a tree), f32.
// Bindings (gpu/webgpu/PROTOCOL.md): the storage array binds the tensor of its name, the uniform
// block `pc` takes the plan's uniforms by member name.
@group(0) @binding(0) var<storage, read_write> scores : array<f32>;
struct Params { n: u32, S: u32, pos: u32, ctx: u32, tpr: u32 }
@group(0) @binding(1) var<uniform> pc : Params;

const MASKED = -1.0e30;

var<workgroup> red : array<f32, 256>;  // WG = 256 (reference/sdpa.cpp kTiledWg)

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  let T = pc.tpr;
  let t = l % T;
  let r = w * (WG / T) + l / T;
  if (w * (WG / T) >= pc.n) { return; }  // a folded grid's spare workgroups, whole
  let b = r * pc.ctx;
  let seen = select(0u, pc.pos + r % pc.S + 1u, r < pc.n);
  let ctx = select(0u, pc.ctx, r < pc.n);
  var m = MASKED;
  for (var c = t; c < seen; c += T) { m = max(m, scores[b + c]); }
  red[l] = m;
  workgroupBarrier();
  for (var k = T / 2u; k > 0u; k /= 2u) {
    if (t < k) { red[l] = max(red[l], red[l + k]); }
    workgroupBarrier();
  }
  m = red[l - t];
  workgroupBarrier();
  var sum = 0.0;
  for (var c = t; c < seen; c += T) {
    let e = exp(scores[b + c] - m);
    scores[b + c] = e;
    sum += e;
  }
  red[l] = sum;
  workgroupBarrier();
  for (var k = T / 2u; k > 0u; k /= 2u) {
    if (t < k) { red[l] += red[l + k]; }
    workgroupBarrier();
  }
  let inv = 1.0 / red[l - t];  // >= 1: the max's own term is exp(0)
  for (var c = t; c < seen; c += T) { scores[b + c] *= inv; }
  for (var c = seen + t; c < ctx; c += T) { scores[b + c] = 0.0; }
}
