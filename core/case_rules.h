#pragma once
// Strict case ids: a case is checked against its operator's declaration before anything is built.
// Everything here throws UsageError (exit 2) naming the offending part and what is allowed.
#include <cstdint>
#include <string_view>

#include "core/op.h"

namespace ts {

// The dtype is one the operator defines, every variable is declared (or is <input>_dtype with a
// dtype name) and holds a value of its kind in range, every required variable is present, and the
// storage part names only the operator's tensors with layouts declared for them.
void check_case(const OpDef& op, const Case& c);

// The storage part alone: it parses, its overrides name tensors of `op`, and every tensor takes a
// layout `op` declares for it (OpDef::layouts). Also for goldens, which may carry no case id.
void check_storage(const OpDef& op, std::string_view storage);

// The most bytes one case may hold in tensors: its inputs, the reference's float64 outputs and
// the backends' scratch. 2 GiB admits the largest seed shape of a RoPE (x [1,24,28800,128]: 0.35 GB in
// float32 plus a 0.71 GB float64 output) while two test processes on a 24 GiB, 2-core machine
// stay far from memory exhaustion. Larger cases are refused before anything is allocated.
constexpr uint64_t kMaxCaseBytes = uint64_t(2) << 30;

// Bytes of the outputs op.buffers() declares for a valid problem (scratch, device-only, aside), with computed float outputs
// counted as the reference's float64: the reference's memory, estimated before it runs.
uint64_t declared_output_bytes(const OpDef& op, const Problem& p);

// The size check of a case, computed from shapes and params before anything is built or computed.
// The Case form runs op.make() under AllocationLimit::Mode::shapes_only (nothing allocated or
// filled) and sizes its inputs, and its declared outputs where that problem is valid with values
// read as zeros (op.buffers() is defined for valid problems only); prepare() charges the declared
// outputs of the built problem again, once it is valid, before the reference allocates them. The Problem form sizes a valid problem read from a file, inputs and declared outputs,
// before its reference runs. Throws CaseTooLarge naming the bytes and `max_bytes` past it.
void check_case_size(const OpDef& op, const Case& c, uint64_t max_bytes = kMaxCaseBytes);
void check_case_size(const OpDef& op, const Problem& p, uint64_t max_bytes = kMaxCaseBytes);

}  // namespace ts
