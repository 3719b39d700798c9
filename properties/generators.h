#pragma once
// Every operator's generator: random valid / invalid cases, drawn with properties/draw.h (which
// RapidCheck shrinks, and a property test runs as RapidCheck generators). The operator is an
// argument, not looked up: generators sit below reference/, whose OpDefs name them, and read only
// the operator's declaration (its layouts). The Gen keeps a pointer to it: operators are static.
#include "core/op.h"

namespace ts {

// The version of the sweeps' draws, part of their contract: bump it with any change to a generator,
// to properties/draw.h or to the sweep's keys and sizes (tools/sweep.h) that changes what some
// (operator, dtype, seed, index) draws; the ids tests/test_sweep.cpp pins then change too. Old ids
// in CI logs and --xfail files stop naming the sweep's cases. Reports record it (their sweep's
// "draw_version"), and `touchstone merge` refuses reports drawn by another version than its own.
constexpr int kSweepVersion = 2;

rc::Gen<Case> gen_rope_llama(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_rope_cis(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_rope_half(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_rope_matrix(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_sdpa(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_q8ta_linear(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_q8ta_add(const OpDef& op, DType, bool valid);
rc::Gen<Case> gen_q8ta_conv2d(const OpDef& op, DType, bool valid);

}  // namespace ts
