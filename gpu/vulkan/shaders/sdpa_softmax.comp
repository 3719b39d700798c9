// sdpa softmax, in place over each score row r = (h, s), c < ctx:
//   scores[r,c] = exp(scores[r,c] - m) / sum_c' exp(scores[r,c'] - m),   m = max_c scores[r,c].
// Subtracting the row max keeps every exp() in (0, 1] whatever the logits' size (an unstable
// softmax overflows float32 once a score passes ~88.7); MASKED scores become exactly 0.
// One invocation per row, float32.
layout(std430, binding = 0) buffer SC { float scores[]; };
layout(push_constant) uniform Params { uint n; uint ctx; } pc;

void main() {
  uint r = ts_linear_id();
  if (r >= pc.n) return;
  uint b = r * pc.ctx;
  float m = scores[b];
  for (uint c = 1; c < pc.ctx; ++c) m = max(m, scores[b + c]);
  float sum = 0.0;
  for (uint c = 0; c < pc.ctx; ++c) {
    float e = exp(scores[b + c] - m);
    scores[b + c] = e;
    sum += e;
  }
  float inv = 1.0 / sum;  // sum >= 1: the max's own term is exp(0)
  for (uint c = 0; c < pc.ctx; ++c) scores[b + c] *= inv;
}
