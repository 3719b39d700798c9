// sdpa softmax, in place over each score row r = (h, s) of ctx scores; the algorithm and order of
// operations of gpu/vulkan/shaders/sdpa_softmax.comp, which states them: query s sees keys c < n =
// pos + s + 1, m = max_{c < n} scores[r,c], scores[r,c] = exp(scores[r,c] - m) / sum_{c' < n}
// exp(scores[r,c'] - m) for c < n and 0 past it (the masked scores never read). A workgroup of
// WG = 256 takes WG / tpr rows, keys strided over a row's tpr invocations, max and sum reduced in
// shared memory (a tree), f32; a row of at most KR * tpr keys is read once into registers and
// written once, a longer one in three passes.
// Bindings (gpu/webgpu/PROTOCOL.md): the storage array binds the tensor of its name, the uniform
// block `pc` takes the plan's uniforms by member name.
@group(0) @binding(0) var<storage, read_write> scores : array<f32>;
struct Params { n: u32, S: u32, pos: u32, ctx: u32, tpr: u32 }
@group(0) @binding(1) var<uniform> pc : Params;

const KR = 8u;  // keys an invocation holds in registers (gpu/plans/sdpa.cpp kSoftmaxKeys)
const MASKED = -1.0e30;

var<workgroup> red : array<f32, 256>;  // WG = 256 (gpu/plans/sdpa.cpp kTiledWg)

// The row's max (sum) over its tpr invocations l - t .. l - t + tpr - 1, returned to each of them.
fn reduce_max(l: u32, t: u32, m0: f32) -> f32 {
  red[l] = m0;
  workgroupBarrier();
  for (var k = pc.tpr / 2u; k > 0u; k /= 2u) {
    if (t < k) { red[l] = max(red[l], red[l + k]); }
    workgroupBarrier();
  }
  let m = red[l - t];
  workgroupBarrier();
  return m;
}
fn reduce_sum(l: u32, t: u32, s0: f32) -> f32 {
  red[l] = s0;
  workgroupBarrier();
  for (var k = pc.tpr / 2u; k > 0u; k /= 2u) {
    if (t < k) { red[l] += red[l + k]; }
    workgroupBarrier();
  }
  let sum = red[l - t];
  return sum;  // no barrier: the kernel's last use of red
}
// The weight exp(x - m) of key c, added to the invocation's sum; 0 past the causal limit.
fn weight(c: u32, seen: u32, x: f32, m: f32, sum: ptr<function, f32>) -> f32 {
  if (c >= seen) { return 0.0; }
  let e = exp(x - m);
  *sum += e;
  return e;
}
fn load(b: u32, c: u32, seen: u32) -> f32 {
  if (c < seen) { return scores[b + c]; }
  return MASKED;
}
fn put(b: u32, c: u32, ctx: u32, p: f32) {
  if (c < ctx) { scores[b + c] = p; }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let l = ts_local_index(li);
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  let T = pc.tpr;
  let t = l % T;
  let r = w * (WG / T) + l / T;
  if (w * (WG / T) >= pc.n) { return; }  // a folded grid's spare workgroups, whole
  let b = r * pc.ctx;
  let seen = select(0u, pc.pos + r % pc.S + 1u, r < pc.n);
  let ctx = select(0u, pc.ctx, r < pc.n);
  var m = MASKED;
  var sum = 0.0;
  if (pc.ctx <= KR * T) {  // uniform in the workgroup
    var x0 = load(b, t, seen);
    var x1 = load(b, t + T, seen);
    var x2 = load(b, t + 2u * T, seen);
    var x3 = load(b, t + 3u * T, seen);
    var x4 = load(b, t + 4u * T, seen);
    var x5 = load(b, t + 5u * T, seen);
    var x6 = load(b, t + 6u * T, seen);
    var x7 = load(b, t + 7u * T, seen);
    m = reduce_max(l, t, max(max(max(x0, x1), max(x2, x3)), max(max(x4, x5), max(x6, x7))));
    x0 = weight(t, seen, x0, m, &sum);
    x1 = weight(t + T, seen, x1, m, &sum);
    x2 = weight(t + 2u * T, seen, x2, m, &sum);
    x3 = weight(t + 3u * T, seen, x3, m, &sum);
    x4 = weight(t + 4u * T, seen, x4, m, &sum);
    x5 = weight(t + 5u * T, seen, x5, m, &sum);
    x6 = weight(t + 6u * T, seen, x6, m, &sum);
    x7 = weight(t + 7u * T, seen, x7, m, &sum);
    let inv = 1.0 / reduce_sum(l, t, sum);  // >= 1: the max's own term is exp(0)
    put(b, t, ctx, x0 * inv);
    put(b, t + T, ctx, x1 * inv);
    put(b, t + 2u * T, ctx, x2 * inv);
    put(b, t + 3u * T, ctx, x3 * inv);
    put(b, t + 4u * T, ctx, x4 * inv);
    put(b, t + 5u * T, ctx, x5 * inv);
    put(b, t + 6u * T, ctx, x6 * inv);
    put(b, t + 7u * T, ctx, x7 * inv);
    return;
  }
  for (var c = t; c < seen; c += T) { m = max(m, scores[b + c]); }
  m = reduce_max(l, t, m);
  for (var c = t; c < seen; c += T) { scores[b + c] = weight(c, seen, scores[b + c], m, &sum); }
  let inv = 1.0 / reduce_sum(l, t, sum);  // >= 1: the max's own term is exp(0)
  for (var c = t; c < seen; c += T) { scores[b + c] *= inv; }
  for (var c = seen + t; c < ctx; c += T) { scores[b + c] = 0.0; }
}
