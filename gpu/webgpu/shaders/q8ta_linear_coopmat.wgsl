// q8ta_linear, impl=coopmat: out[m,n] = requantize(acc[m,n]), acc = sum_k (x[m,k] - x_zp) * weight[n,k],
// computed as sum_k x[m,k] * weight[n,k] on int8 tensor cores (Dawn's subgroup matrices, 16x16x32,
// int32 accumulators: exact) minus x_zp * sum_k weight[n,k], as q8ta_linear_coopmat.comp does; the
// result is the tiled kernel's bit for bit. A workgroup of 4 subgroups (Dispatch::subgroup = 32) owns
// a BT x BT tile of out (BT: the plan's define, 64 or 32); subgroup s owns the quarter (s / 2, s % 2),
// FM x FM 16x16 accumulators (FM = BT / 32). K runs in stages of BK bytes through workgroup memory
// (x rows [m][k], then weight rows [n][k], padded), each invocation staging whole 16-byte chunks of
// one row: straight from the buffers where x and weight are buffers and K % 16 == 0, else word by
// word through the layout accessors (any int8 layout); bytes past K or past M / N are 0, which adds
// nothing. The zero-point sums of the weight rows come from the staged weight bytes: the invocations
// of a row add theirs into swsum at the end. The accumulators then go over the stage (int32 [m][n]),
// and the epilogue is the GLSL twin's: a buffer out with N % 4 == 0 a word (4 columns) per
// invocation; any other out by texel, a lane outside the tile computed on its own (accumulate()).
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
@group(0) @binding(2) var<storage, read> weight_scales : array<f32>;
@group(0) @binding(3) var<storage, read> bias : array<f32>;
TS_OUTPUT(out_, 4)
struct Params { M: u32, K: u32, N: u32, x_zp: i32, out_zp: i32, input_scale: f32, inv_out_scale: f32, has_bias: u32 }
@group(0) @binding(5) var<uniform> pc : Params;

fn gemm_out_index(m: u32, n: u32) -> u32 { return m * pc.N + n; }
fn gemm_out_mn(f: u32) -> vec2<u32> { return vec2<u32>(f / pc.N, f % pc.N); }

#include "q8ta_gemm_tile.wgsl"

const FM = BT / 32u;             // 16x16 accumulators per dimension a subgroup
const BK = 128u;                 // bytes of K a stage
const RB = BK + 16u;             // a staged row in bytes, padded against bank conflicts
const RW = RB / 4u;              // ... in words
const XW = BT * RW;              // words of the staged x rows (the weight rows follow)
const IPR = NI / BT;             // invocations a staged row (NI: the plan's define, = WG)
const CPI = BK / 16u / IPR;      // 16-byte chunks of a row an invocation stages
const SW = max(2u * XW, BT * BT);  // the stage; after the last, the accumulators [m][n]
var<workgroup> sbuf : array<i32, SW>;
var<workgroup> swsum : array<atomic<i32>, BT>;

// Bytes k .. k+15 of row r of weight (w) or x (rows past N or M, bytes past K: 0). `fast`: both are
// buffers and K % 16 == 0, so the chunk is one 16-byte load.
fn fetch(w: bool, r: u32, k: u32, fast: bool) -> vec4<u32> {
  if (r >= select(pc.M, pc.N, w) || k >= pc.K) { return vec4<u32>(0u); }
  let o = r * pc.K + k;
  if (fast) {
    if (w) { return weight_chunk(o / 16u); }
    return x_chunk(o / 16u);
  }
  var v = vec4<u32>(0u);
  for (var j = 0u; j < 4u; j++) {
    let kj = k + 4u * j;
    let oj = o + 4u * j;
    if (kj + 4u <= pc.K) {
      if (w) { v[j] = weight_packed4(oj); } else { v[j] = x_packed4(oj); }
    } else {
      for (var b = 0u; kj + b < pc.K; b++) {
        var e: i32;
        if (w) { e = weight_at(oj + b); } else { e = x_at(oj + b); }
        v[j] |= (bitcast<u32>(e) & 0xFFu) << (8u * b);
      }
    }
  }
  return v;
}

// The sum of a chunk's 16 signed bytes.
fn bytesum(v: vec4<u32>) -> i32 {
  return dot4I8Packed(v.x, ONES) + dot4I8Packed(v.y, ONES) + dot4I8Packed(v.z, ONES) + dot4I8Packed(v.w, ONES);
}

alias Left = subgroup_matrix_left<i8, 32, 16>;
alias Right = subgroup_matrix_right<i8, 16, 32>;
alias Acc = subgroup_matrix_result<i32, 16, 16>;

@compute @workgroup_size(NI)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32, @builtin(subgroup_id) s: u32) {
  let tiles_n = (pc.N + BT - 1u) / BT;
  let g = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  // A folded grid's spare workgroups leave whole: no barrier below is reached by part of one.
  if (g >= ((pc.M + BT - 1u) / BT) * tiles_n) { return; }
  let m0 = BT * (g / tiles_n);
  let n0 = BT * (g % tiles_n);
  let l = ts_local_index(li);
  let fast = x_is_buffer && weight_is_buffer && pc.K % 16u == 0u;
  let fr = l / IPR;                // the row this invocation stages, of x and of weight
  let fc = (l % IPR) * CPI;        // its first chunk of the row
  let sm = (BT / 2u) * (s / 2u);
  let sn = (BT / 2u) * (s % 2u);
  if (l < BT) { atomicStore(&swsum[l], 0); }
  var ws = 0;                      // the byte sum of the weight chunks it staged
  var a00 = Acc();
  var a01 = Acc();
  var a10 = Acc();
  var a11 = Acc();
  let stages = (pc.K + BK - 1u) / BK;
  for (var st = 0u; st < stages; st++) {
    workgroupBarrier();            // every subgroup is done with the stage before
    for (var c = 0u; c < CPI; c++) {
      let k = st * BK + 16u * (fc + c);
      let xv = bitcast<vec4<i32>>(fetch(false, m0 + fr, k, fast));
      let wv = fetch(true, n0 + fr, k, fast);
      ws += bytesum(wv);
      let at = fr * RW + 4u * (fc + c);
      for (var j = 0u; j < 4u; j++) {
        sbuf[at + j] = xv[j];
        sbuf[XW + at + j] = bitcast<i32>(wv[j]);  // @marker stage_w
      }
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk += 32u) {
      // Offsets and strides count sbuf's elements (i32 words, 4 i8 each), not the matrices' (the
      // deprecated boolean-majorness form counted bytes): ci/gpu/dawn_subgroup_matrix_probe.mjs.
      let x0 = subgroupMatrixLoad<Left, row_major>(&sbuf, sm * RW + kk / 4u, RW);
      let w0 = subgroupMatrixLoad<Right, col_major>(&sbuf, XW + sn * RW + kk / 4u, RW);
      a00 = subgroupMatrixMultiplyAccumulate(x0, w0, a00);
      if (FM == 2u) {
        let x1 = subgroupMatrixLoad<Left, row_major>(&sbuf, (sm + 16u) * RW + kk / 4u, RW);
        let w1 = subgroupMatrixLoad<Right, col_major>(&sbuf, XW + (sn + 16u) * RW + kk / 4u, RW);
        a01 = subgroupMatrixMultiplyAccumulate(x0, w1, a01);
        a10 = subgroupMatrixMultiplyAccumulate(x1, w0, a10);
        a11 = subgroupMatrixMultiplyAccumulate(x1, w1, a11);
      }
    }
  }
  workgroupBarrier();              // every read of the last stage is done: the accumulators go over it
  atomicAdd(&swsum[fr], ws);
  subgroupMatrixStore<row_major>(&sbuf, sm * BT + sn, a00, BT);
  if (FM == 2u) {
    subgroupMatrixStore<row_major>(&sbuf, sm * BT + sn + 16u, a01, BT);
    subgroupMatrixStore<row_major>(&sbuf, (sm + 16u) * BT + sn, a10, BT);
    subgroupMatrixStore<row_major>(&sbuf, (sm + 16u) * BT + sn + 16u, a11, BT);
  }
  workgroupBarrier();

  // A buffer out whose rows are whole words (N % 4 == 0): every word of the tile is 4 columns of one
  // row, all inside the tile, so invocation l stores words l, l + NI, ... of it.
  if (out_is_buffer && pc.N % 4u == 0u) {
    for (var q = l; q < BT * BT / 4u; q += NI) {
      let r = q / (BT / 4u);
      let c = 4u * (q % (BT / 4u));
      if (m0 + r >= pc.M || n0 + c >= pc.N) { continue; }
      var v = vec4<i32>(0);
      for (var j = 0u; j < 4u; j++) {
        v[j] = requantize(sbuf[r * BT + c + j] - pc.x_zp * atomicLoad(&swsum[c + j]), n0 + c + j);
      }
      out_store_word(((m0 + r) * pc.N + n0 + c) / 4u, ts_i8_pack4(v));
    }
    return;
  }
  let texels = out_texels();
  for (var e = l; e < BT * BT; e += NI) {
    let r = m0 + e / BT;
    let c = n0 + e % BT;
    if (r >= pc.M || c >= pc.N) { continue; }
    let i = gemm_out_index(r, c);
    let t = out_texel_of(i);
    if (out_flat(t, 0u) != i) { continue; }
    var v = vec4<i32>(0);
    for (var j = 0u; j < 4u; j++) {
      let f = out_flat(t, j);
      if (f == TS_PAD) { continue; }
      let mn = gemm_out_mn(f);
      var a: i32;
      if (mn.x >= m0 && mn.x < m0 + BT && mn.y >= n0 && mn.y < n0 + BT) {
        a = sbuf[(mn.x - m0) * BT + mn.y - n0] - pc.x_zp * atomicLoad(&swsum[mn.y - n0]);
      } else {
        a = accumulate(mn.x * pc.K, mn.y * pc.K);
      }
      v[j] = requantize(a, mn.y);
    }
    out_store(t, v);
    for (var u = t + 1u; u < texels && out_flat(u, 0u) == TS_PAD; u++) { out_store(u, vec4<i32>(0)); }
  }
}
