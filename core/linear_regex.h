#pragma once
// Regular expressions a user types (check/bench --match), matched in time linear in the text: a
// Thompson NFA run as a Pike VM (one set of states per position, no backtracking), so `(a+)+$`
// costs what `a+$` costs. std::regex backtracks (minutes on such patterns) and recurses per group
// (30,000 nested groups overflowed the stack); it stays for the fixed patterns of the code only.
//
// The syntax is the ERE subset of ECMAScript that selecting case ids needs: literals, `.`,
// classes `[a-z_]` and `[^...]` (with \d \w \s inside), `*` `+` `?` (a trailing `?` marks a lazy
// quantifier, the same set of matches), `{m}` `{m,}` `{m,n}`, `|`, `(...)` and `(?:...)`, `^` `$`,
// and escapes: `\d \D \w \W \s \S \t \n` and a backslash before any punctuation. Anything else
// (back-references, look-arounds, `\b`, an unknown escape) is a UsageError naming it, as are
// patterns past the limits below, which bound the program and so the time per character.
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

class LinearRegex {
 public:
  static constexpr size_t kMaxPatternLength = 1000;  // characters
  static constexpr int kMaxNesting = 32;              // groups inside groups
  static constexpr int kMaxRepeat = 100;              // the largest m or n of {m,n}
  static constexpr size_t kMaxProgram = 2000;         // NFA states after expanding {m,n}

  // `what` names the pattern in messages ("--match"). Throws UsageError.
  LinearRegex(std::string_view pattern, std::string_view what);

  // Whether some substring of `text` matches (std::regex_search's question).
  bool search(std::string_view text) const;

  size_t states() const { return prog_.size(); }

 private:
  enum class Op : uint8_t { byte_set, split, jump, line_start, line_end, match };
  struct Inst {
    Op op;
    uint32_t x = 0, y = 0;  // split: both targets; jump: x
    uint32_t set = 0;       // byte_set: index into sets_
  };
  friend class RegexCompiler;
  std::vector<Inst> prog_;
  std::vector<std::bitset<256>> sets_;
};

}  // namespace ts
