#include "tools/shell_quote.h"

namespace ts {

std::string shell_quote(std::string_view word) {
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace ts
