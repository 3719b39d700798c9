// rope_llama: for pair i of row (b,s,h) of xq and of xk, with c = freqs_cos[s,i], n = freqs_sin[s,i]:
//   out[2i] = x[2i]*c - x[2i+1]*n,   out[2i+1] = x[2i]*n + x[2i+1]*c.
// One invocation per pair, xq's nq pairs first, then xk's. float16 storage computes in float32.
layout(std430, binding = 0) readonly buffer XQ { DTYPE xq[]; };
layout(std430, binding = 1) readonly buffer XK { DTYPE xk[]; };
layout(std430, binding = 2) readonly buffer FC { DTYPE freqs_cos[]; };
layout(std430, binding = 3) readonly buffer FS { DTYPE freqs_sin[]; };
layout(std430, binding = 4) writeonly buffer OQ { DTYPE xq_out[]; };
layout(std430, binding = 5) writeonly buffer OK { DTYPE xk_out[]; };
layout(push_constant) uniform Params { uint n; uint nq; uint S; uint Hq; uint Hkv; uint hd; } pc;

void main() {
  uint id = ts_linear_id();
  if (id >= pc.n) return;
  bool is_q = id < pc.nq;
  uint p = is_q ? id : id - pc.nq;
  uint i = p % pc.hd;
  uint s = (p / pc.hd / (is_q ? pc.Hq : pc.Hkv)) % pc.S;
  float c = float(freqs_cos[s * pc.hd + i]);
  float n = float(freqs_sin[s * pc.hd + i]);
  if (is_q) {
    float a = float(xq[2 * p]), b = float(xq[2 * p + 1]);
    xq_out[2 * p] = DTYPE(a * c - b * n);
    xq_out[2 * p + 1] = DTYPE(a * n + b * c);
  } else {
    float a = float(xk[2 * p]), b = float(xk[2 * p + 1]);
    xk_out[2 * p] = DTYPE(a * c - b * n);
    xk_out[2 * p + 1] = DTYPE(a * n + b * c);
  }
}
