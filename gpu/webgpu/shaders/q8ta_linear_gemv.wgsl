// q8ta_linear, impl=gemv (M = 1): out[0,n] = requantize(acc[n]), acc = sum_k (x[0,k] - x_zp) * weight[n,k].
// Workgroup w (WG = 64 invocations, the plan's Dispatch::workgroup) computes texel w of out: its
// lanes are columns n (M = 1: the flat index is the column). Invocation l takes K in groups of 4
// at 4l, 4l + 4 WG, ... and keeps one partial sum per lane; the K % 4 elements past the last whole
// group go to the invocation whose turn they would be. A tree reduction in workgroup memory adds
// the partial sums (barriers in uniform control flow: no invocation leaves before them), and
// invocation 0 requantizes and stores the texel (padding lanes 0).
// Requantization and the integer dot-product path (TS_INT_DOT): q8ta_requant.wgsl.
// Fast path (weight a buffer, known when compiling, and K % 16 == 0): every weight row starts on a
// 16-byte boundary, so invocation l reads chunk l, l + WG, ... of each of its 4 rows in one 16-byte
// load each (64 invocations cover 1 KiB of a row per step, a warp 512 consecutive bytes), and x's
// 16 matching elements in one load where x is a buffer (else through x_packed4). The same integer
// sums in another order: exact in i32 either way, so its results are bit-identical to the general
// path's, which every other case takes.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
@group(0) @binding(2) var<storage, read> weight_scales : array<f32>;
@group(0) @binding(3) var<storage, read> bias : array<f32>;
TS_OUTPUT(out_, 4)
struct Params { M: u32, K: u32, N: u32, x_zp: i32, out_zp: i32, input_scale: f32, inv_out_scale: f32, has_bias: u32 }
@group(0) @binding(5) var<uniform> pc : Params;

#include "q8ta_requant.wgsl"

var<workgroup> partial : array<vec4<i32>, WG>;

// Elements 16c .. 16c+15 of x as the bytes of 4 words.
fn x_sixteen(c: u32) -> vec4<u32> {
  if (x_is_buffer) { return x_chunk(c); }
  let k = 16u * c;
  return vec4<u32>(x_packed4(k), x_packed4(k + 4u), x_packed4(k + 8u), x_packed4(k + 12u));
}

fn dot16(a: vec4<u32>, b: vec4<u32>) -> i32 {
  if (TS_INT_DOT == 1) {
    return dot4I8Packed(a.x, b.x) + dot4I8Packed(a.y, b.y) + dot4I8Packed(a.z, b.z) + dot4I8Packed(a.w, b.w);
  }
  let zp = vec4<i32>(pc.x_zp);
  return dot(ts_i8_unpack4(a.x) - zp, ts_i8_unpack4(b.x)) + dot(ts_i8_unpack4(a.y) - zp, ts_i8_unpack4(b.y)) +
         dot(ts_i8_unpack4(a.z) - zp, ts_i8_unpack4(b.z)) + dot(ts_i8_unpack4(a.w) - zp, ts_i8_unpack4(b.w));
}

// The fast path's partial sums of rows n (K % 16 == 0, weight a buffer). STEPS steps of chunks a
// round, all their loads issued before any product (a step past K loads a chunk that exists and adds
// nothing); the weights' byte sums only where the zero point needs them.
const STEPS = 4u;
fn fast_sums(n: vec4<u32>, l: u32) -> vec4<i32> {
  let KC = pc.K / 16u;
  let row = n * KC;  // each row's first chunk
  var s = vec4<i32>(0);
  var ws = vec4<i32>(0);
  for (var c = l; c < KC; c += STEPS * WG) {
    var xa: array<vec4<u32>, STEPS>;
    var w0: array<vec4<u32>, STEPS>;
    var w1: array<vec4<u32>, STEPS>;
    var w2: array<vec4<u32>, STEPS>;
    var w3: array<vec4<u32>, STEPS>;
    for (var j = 0u; j < STEPS; j++) {
      let cj = min(c + j * WG, KC - 1u);
      xa[j] = x_sixteen(cj);
      w0[j] = weight_chunk(row.x + cj);
      w1[j] = weight_chunk(row.y + cj);
      w2[j] = weight_chunk(row.z + cj);
      w3[j] = weight_chunk(row.w + cj);
    }
    // @marker chunks_loaded
    for (var j = 0u; j < STEPS; j++) {
      if (c + j * WG >= KC) { break; }
      s += vec4<i32>(dot16(xa[j], w0[j]), dot16(xa[j], w1[j]), dot16(xa[j], w2[j]), dot16(xa[j], w3[j]));
      if (TS_INT_DOT == 1 && pc.x_zp != 0) {
        let ones = vec4<u32>(ONES);
        ws += vec4<i32>(dot16(w0[j], ones), dot16(w1[j], ones), dot16(w2[j], ones), dot16(w3[j], ones));
      }
    }
  }
  return s - pc.x_zp * ws;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let l = ts_local_index(li);
  // The texel: workgroups of a folded grid count x first, then y, then z (gpu/gpu_backend.cpp).
  let t = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  let live = t < out_texels();
  let K = pc.K;
  let K4 = K - K % 4u;
  var s = vec4<i32>(0);
  if (live) {
    // Padding lanes read row 0 and are never stored.
    var n = vec4<u32>(0u);
    for (var j = 0u; j < 4u; j++) {
      let f = out_flat(t, j);
      if (f != TS_PAD) { n[j] = f; }
    }
    let wo = n * K;
    if (weight_is_buffer && K % 16u == 0u) {
      s = fast_sums(n, l);
    } else {
      var wsum = vec4<i32>(0);
      for (var k = 4u * l; k < K4; k += 4u * WG) {
        if (TS_INT_DOT == 1) {
          let a = x_packed4(k);
          let w = vec4<u32>(weight_packed4(wo.x + k), weight_packed4(wo.y + k), weight_packed4(wo.z + k), weight_packed4(wo.w + k));
          s += vec4<i32>(dot4I8Packed(a, w.x), dot4I8Packed(a, w.y), dot4I8Packed(a, w.z), dot4I8Packed(a, w.w));
          wsum += vec4<i32>(dot4I8Packed(w.x, ONES), dot4I8Packed(w.y, ONES), dot4I8Packed(w.z, ONES), dot4I8Packed(w.w, ONES));
        } else {
          let a = x_at4(k) - vec4<i32>(pc.x_zp);
          s += vec4<i32>(dot(a, weight_at4(wo.x + k)), dot(a, weight_at4(wo.y + k)), dot(a, weight_at4(wo.z + k)),
                         dot(a, weight_at4(wo.w + k)));
        }
      }
      s -= pc.x_zp * wsum;
      if (K4 < K && l == (K4 / 4u) % WG) {
        for (var k = K4; k < K; k++) {
          let w = vec4<i32>(weight_at(wo.x + k), weight_at(wo.y + k), weight_at(wo.z + k), weight_at(wo.w + k));
          s += (x_at(k) - pc.x_zp) * w;
        }
      }
    }
  }
  partial[l] = s;
  // Halve the live width each step: invocation l < width - half adds in l + half (half rounded up).
  for (var width = WG; width > 1u;) {
    let half = (width + 1u) / 2u;
    workgroupBarrier();
    if (l + half < width) { partial[l] += partial[l + half]; }
    width = half;
  }
  // No barrier: invocation 0 made the last addition into partial[0] itself.
  if (l == 0u && live) {
    let acc = partial[0];
    var v = vec4<i32>(0);
    for (var j = 0u; j < 4u; j++) {
      let f = out_flat(t, j);
      if (f != TS_PAD) { v[j] = requantize(acc[j], f); }
    }
    out_store(t, v);
  }
}
