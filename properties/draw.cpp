#include "properties/draw.h"

namespace ts::draw {
namespace detail {
namespace {

thread_local Context* current = nullptr;
thread_local std::optional<uint64_t> pending;

}  // namespace

Scope::Scope(uint64_t key, int size) : context_{Stream(key, "draw"), size, 0, current} { current = &context_; }
Scope::~Scope() { current = context_.outer; }

uint64_t next_bits() {
  if (!current) throw std::logic_error("draw: a primitive drawn outside a draw::exec generator");
  return current->stream.bits(current->next++);
}

int size() {
  if (!current) throw std::logic_error("draw: a primitive drawn outside a draw::exec generator");
  return current->size;
}

std::optional<uint64_t> take_key() { return std::exchange(pending, std::nullopt); }

}  // namespace detail

Keyed::Keyed(uint64_t key) { detail::pending = key; }
Keyed::~Keyed() { detail::pending.reset(); }

}  // namespace ts::draw
