// rope_cis: x [B,N,C] viewed as pairs; pair p uses freqs_cis pair j = p mod (N*C/2) = (c, s):
//   out[2p] = x[2p]*c - x[2p+1]*s,   out[2p+1] = x[2p]*s + x[2p+1]*c.
// freqs_cis of any rank is the same flat run of (cos, sin) pairs. One invocation per output texel,
// float32 arithmetic, any layouts (gpu/ACCESSORS.md). Bandwidth: when the texel's lanes are 4
// consecutive elements from an even one (lane 3 = lane 0 + 3; every buffer texel), they are two whole
// pairs: one 4-wide load of x, and of freqs_cis when the two table pairs are adjacent (j not
// wrapping to 0). Other texels take the per-lane path; the same float32 expression per element.
TS_INPUT(x, 0)
TS_INPUT(freqs_cis, 1)
TS_OUTPUT(out_, 2)
struct Params { n: u32, nc2: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

fn rotate(a: f32, b: f32, c: f32, s: f32) -> vec2<f32> { return vec2<f32>(a * c - b * s, a * s + b * c); }

// Every tensor a buffer (known when compiling: gpu/ACCESSORS.md) and N*C/2 even: texel t is pairs
// 2t, 2t+1 with table pairs j0 = 2t mod N*C/2 (even) and j0 + 1, one table texel; every texel is
// whole. The same expression as the run path below, with no accessor arithmetic.
const kBuffers = x_is_buffer && freqs_cis_is_buffer && out_is_buffer;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  let fast = kBuffers && pc.nc2 % 2u == 0u;
  var f0 = 4u * t;
  if (!fast) { f0 = out_flat(t, 0u); }
  var v = vec4<f32>(0.0);  // padding lanes stay 0
  if (fast) {
    let x = x_texel(t);
    let f = freqs_cis_texel(((f0 / 2u) % pc.nc2) / 2u);
    v = vec4<f32>(rotate(x.x, x.y, f.x, f.y), rotate(x.z, x.w, f.z, f.w));
  } else if (out_flat(t, 3u) == f0 + 3u && f0 % 2u == 0u) {
    let x = x_at4(f0);
    let j0 = (f0 / 2u) % pc.nc2;
    var f: vec4<f32>;
    if (j0 + 1u < pc.nc2) {
      f = freqs_cis_at4(2u * j0);
    } else {
      f = vec4<f32>(freqs_cis_at(2u * j0), freqs_cis_at(2u * j0 + 1u), freqs_cis_at(0u), freqs_cis_at(1u));
    }
    v = vec4<f32>(rotate(x.x, x.y, f.x, f.y), rotate(x.z, x.w, f.z, f.w));
  } else {
    for (var j = 0u; j < 4u; j++) {
      let i = out_flat(t, j);
      if (i == TS_PAD) { continue; }
      let p = i / 2u;
      let k = p % pc.nc2;
      let r = rotate(x_at(2u * p), x_at(2u * p + 1u), freqs_cis_at(2u * k), freqs_cis_at(2u * k + 1u));
      v[j] = select(r.y, r.x, i % 2u == 0u);
    }
  }
  out_store(t, v);
}
