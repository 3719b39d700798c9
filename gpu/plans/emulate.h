#pragma once
// What the plans' emulations (OpPlan::emulate) share: the shading languages' looser functions, and
// inputs as float32.
#include "core/op.h"

namespace ts {

// v moved int(ulps) representable floats up or down (as that many nextafter steps, stopping at
// infinity), in O(1): a large logit asks for thousands of steps per exp. An emulated exp() is pushed
// 2 + 2|x| ulps and a reciprocal 1 (the specs allow 3 + 2|x| and 2.5).
float push(float v, double ulps, bool up);

// Every input as float32 (exact: inputs are float32-representable).
Floats to_floats(const Tensors& in);

}  // namespace ts
