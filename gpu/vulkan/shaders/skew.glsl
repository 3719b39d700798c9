// Compiled in after the defines where a test asks for it (GpuBackend::set_barrier_skew): every
// barrier() of the kernel then holds some of the workgroup's subgroups back for a while after it, a
// different half each time (by bit 0, 1, 2 of the subgroup's index in turn), so that each phase
// between two barriers starts late on some subgroups. A GPU runs a workgroup's subgroups close to
// lock step, so a barrier taken out of a kernel (tests/test_barriers.cpp) seldom shows there; held
// back, a late subgroup writes what the others, past where the barrier was, have already read, or
// reads what they have already overwritten.
#extension GL_KHR_shader_subgroup_basic : enable
shared uint ts_skew_sink;
uint ts_skew_round = 0u;
void ts_skewed_barrier() {
  barrier();
  ts_skew_round = ts_skew_round == 2u ? 0u : ts_skew_round + 1u;
  if (((gl_SubgroupID >> ts_skew_round) & 1u) == 1u) {
    uint x = gl_LocalInvocationIndex;
    for (uint i = 0u; i < 2048u; ++i) x = x * 1664525u + 1013904223u;  // one dependent chain
    if (x == 0u) ts_skew_sink = x;  // what keeps the chain: a store the compiler cannot drop
  }
}
#define barrier() ts_skewed_barrier()
