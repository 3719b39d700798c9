#include "core/linear_regex.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/contract.h"
#include "core/errors.h"

namespace ts {

namespace {

struct Node {
  enum Kind { set, cat, alt, repeat, line_start, line_end } kind;
  uint32_t set_index = 0;
  int min = 0, max = 0;  // repeat: max -1 = unbounded
  std::vector<Node> kids;
};

std::bitset<256> byte(unsigned char c) {
  std::bitset<256> s;
  s.set(c);
  return s;
}

std::bitset<256> char_class(char letter) {
  std::bitset<256> s;
  for (int c = 0; c < 256; ++c) {
    const bool in = letter == 'd' || letter == 'D'   ? std::isdigit(c) != 0
                    : letter == 'w' || letter == 'W' ? (std::isalnum(c) != 0 || c == '_') && c < 128
                                                     : c == ' ' || (c >= '\t' && c <= '\r');
    s[size_t(c)] = in != (std::isupper(static_cast<unsigned char>(letter)) != 0);
  }
  return s;
}

// The byte a one-byte set holds, else -1.
int only_byte(const std::bitset<256>& s) {
  if (s.count() != 1) return -1;
  for (int b = 0; b < 256; ++b)
    if (s[size_t(b)]) return b;
  return -1;
}

}  // namespace

// Parses into a tree (recursion bounded by kMaxNesting), sizes it before emitting anything (so
// `(a{100}){100}` is refused without being built), then emits the program.
class RegexCompiler {
 public:
  RegexCompiler(std::string_view p, std::string_view what, LinearRegex& out) : p_(p), what_(what), out_(out) {}

  void compile() {
    if (p_.size() > LinearRegex::kMaxPatternLength)
      throw fail(cat("is ", p_.size(), " characters long, more than the limit of ", LinearRegex::kMaxPatternLength));
    Node root = alternation(0);
    if (i_ < p_.size()) throw fail(cat("has an unmatched ')' at offset ", i_));
    const size_t n = size(root);
    if (n + 1 > LinearRegex::kMaxProgram)
      throw fail(cat("expands to more than ", LinearRegex::kMaxProgram,
                     " NFA states (the limit; each {m,n} copies its operand n times)"));
    out_.prog_.reserve(n + 1);
    emit(root);
    out_.prog_.push_back({LinearRegex::Op::match});
  }

 private:
  // A pattern past the length limit is shown by its start: the message stays one line.
  UsageError fail(const std::string& why) const {
    const bool cut = p_.size() > 80;
    return UsageError(cat(what_, " '", p_.substr(0, cut ? 60 : p_.size()), cut ? "...' " : "' ", why));
  }
  bool more() const { return i_ < p_.size(); }
  char peek() const { return p_[i_]; }

  uint32_t add_set(const std::bitset<256>& s) {
    out_.sets_.push_back(s);
    return uint32_t(out_.sets_.size() - 1);
  }
  Node set_node(const std::bitset<256>& s) { return Node{Node::set, add_set(s)}; }

  Node alternation(int depth) {
    std::vector<Node> options{concatenation(depth)};
    while (more() && peek() == '|') {
      ++i_;
      options.push_back(concatenation(depth));
    }
    if (options.size() == 1) return std::move(options[0]);
    return Node{Node::alt, 0, 0, 0, std::move(options)};
  }

  Node concatenation(int depth) {
    Node n{Node::cat};
    while (more() && peek() != '|' && peek() != ')') {
      Node a = atom(depth);
      const bool assertion = a.kind == Node::line_start || a.kind == Node::line_end;
      if (quantifier_next()) {
        if (assertion) throw fail(cat("repeats an anchor at offset ", i_, " (nothing to repeat)"));
        a = quantified(std::move(a));
      }
      n.kids.push_back(std::move(a));
    }
    return n;
  }

  bool quantifier_next() const { return more() && (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{'); }

  Node quantified(Node a) {
    const size_t at = i_;
    int lo = 0, hi = -1;
    const char q = p_[i_++];
    if (q == '+') lo = 1;
    else if (q == '?') hi = 1;
    else if (q == '{') {
      lo = bound();
      hi = lo;
      if (more() && peek() == ',') {
        ++i_;
        hi = more() && peek() == '}' ? -1 : bound();
      }
      if (!more() || peek() != '}')
        throw fail(cat("has a '{' at offset ", at, " that is not a repetition {m}, {m,} or {m,n} (write \\{ for a brace)"));
      ++i_;
      if (hi != -1 && hi < lo) throw fail(cat("has {", lo, ",", hi, "} at offset ", at, ": n is less than m"));
    }
    if (more() && peek() == '?') ++i_;  // lazy: the same set of matches
    if (quantifier_next()) throw fail(cat("repeats a repetition at offset ", i_, " (nothing to repeat)"));
    return Node{Node::repeat, 0, lo, hi, {std::move(a)}};
  }

  int bound() {
    const size_t start = i_;
    long v = 0;
    while (more() && std::isdigit(static_cast<unsigned char>(peek())) && v <= LinearRegex::kMaxRepeat) v = v * 10 + (p_[i_++] - '0');
    if (i_ == start) throw fail(cat("has a '{' at offset ", start - 1, " without a count (write \\{ for a brace)"));
    if (v > LinearRegex::kMaxRepeat)
      throw fail(cat("repeats ", v, " times at offset ", start, ", more than the limit of ", LinearRegex::kMaxRepeat));
    return int(v);
  }

  Node atom(int depth) {
    const size_t at = i_;
    const char c = p_[i_++];
    switch (c) {
      case '(': {
        if (depth + 1 > LinearRegex::kMaxNesting)
          throw fail(cat("nests groups deeper than the limit of ", LinearRegex::kMaxNesting, " (offset ", at, ")"));
        if (p_.substr(i_, 2) == "?:") i_ += 2;
        else if (more() && peek() == '?')
          throw fail(cat("has a look-around or named group at offset ", at, ", which this matcher does not take"));
        Node inner = alternation(depth + 1);
        if (!more() || peek() != ')') throw fail(cat("has an unclosed '(' at offset ", at));
        ++i_;
        return inner;
      }
      case '[': return set_node(bracket(at));
      case '.': return set_node(std::bitset<256>().set().reset('\n').reset('\r'));
      case '^': return Node{Node::line_start};
      case '$': return Node{Node::line_end};
      case '\\': return set_node(escape(at, false));
      case '*': case '+': case '?': case '{':
        throw fail(cat("has '", c, "' at offset ", at, " with nothing to repeat"));
      default: return set_node(byte(static_cast<unsigned char>(c)));
    }
  }

  std::bitset<256> escape(size_t at, bool in_class) {
    if (!more()) throw fail("ends with a lone backslash");
    const unsigned char c = static_cast<unsigned char>(p_[i_++]);
    if (c && std::strchr("dDwWsS", c)) return char_class(char(c));
    if (c == 't') return byte('\t');
    if (c == 'n') return byte('\n');
    if (std::ispunct(c) || c == ' ') return byte(c);
    if (std::isdigit(c) && !in_class)
      throw fail(cat("has a back-reference \\", char(c), " at offset ", at, ", which this matcher does not take"));
    throw fail(cat("has an unknown escape \\", char(c), " at offset ", at));
  }

  std::bitset<256> bracket(size_t at) {
    std::bitset<256> s;
    const bool negated = more() && peek() == '^';
    if (negated) ++i_;
    for (;;) {  // as in ECMAScript, `[]` is empty and `[^]` is any byte
      if (!more()) throw fail(cat("has an unclosed '[' at offset ", at));
      if (peek() == ']') break;
      const size_t item = i_;
      std::bitset<256> one;
      int lo = -1;  // a single byte, which may start a range
      if (peek() == '\\') {
        ++i_;
        one = escape(item, true);
        lo = only_byte(one);
      } else {
        lo = static_cast<unsigned char>(p_[i_++]);
        one.set(size_t(lo));
      }
      if (lo >= 0 && i_ + 1 < p_.size() && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        int hi;
        if (peek() == '\\') {
          ++i_;
          hi = only_byte(escape(i_ - 1, true));
          if (hi < 0) throw fail(cat("has a range ending in a class at offset ", item));
        } else {
          hi = static_cast<unsigned char>(p_[i_++]);
        }
        if (hi < lo) throw fail(cat("has a range out of order at offset ", item));
        for (int b = lo; b <= hi; ++b) one.set(size_t(b));
      }
      s |= one;
    }
    ++i_;  // ']'
    return negated ? ~s : s;
  }

  static size_t size(const Node& n) {
    auto capped = [](size_t v) { return std::min(v, LinearRegex::kMaxProgram + 1); };
    switch (n.kind) {
      case Node::set: case Node::line_start: case Node::line_end: return 1;
      case Node::cat: {
        size_t t = 0;
        for (const Node& k : n.kids) t = capped(t + size(k));
        return t;
      }
      case Node::alt: {
        size_t t = 2 * (n.kids.size() - 1);
        for (const Node& k : n.kids) t = capped(t + size(k));
        return t;
      }
      case Node::repeat: {
        const size_t k = size(n.kids[0]);
        const size_t tail = n.max < 0 ? k + 2 : size_t(n.max - n.min) * (k + 1);
        return capped(size_t(n.min) * k + tail);
      }
    }
    return 0;
  }

  uint32_t here() const { return uint32_t(out_.prog_.size()); }
  uint32_t put(LinearRegex::Op op, uint32_t x = 0, uint32_t y = 0, uint32_t set = 0) {
    out_.prog_.push_back({op, x, y, set});
    return here() - 1;
  }

  void emit(const Node& n) {
    using Op = LinearRegex::Op;
    switch (n.kind) {
      case Node::set: put(Op::byte_set, 0, 0, n.set_index); return;
      case Node::line_start: put(Op::line_start); return;
      case Node::line_end: put(Op::line_end); return;
      case Node::cat:
        for (const Node& k : n.kids) emit(k);
        return;
      case Node::alt: {
        std::vector<uint32_t> jumps;
        for (size_t i = 0; i < n.kids.size(); ++i) {
          const bool last = i + 1 == n.kids.size();
          const uint32_t split = last ? 0 : put(Op::split);
          if (!last) out_.prog_[split].x = here();
          emit(n.kids[i]);
          if (!last) {
            jumps.push_back(put(Op::jump));
            out_.prog_[split].y = here();
          }
        }
        for (uint32_t j : jumps) out_.prog_[j].x = here();
        return;
      }
      case Node::repeat: {
        for (int i = 0; i < n.min; ++i) emit(n.kids[0]);
        if (n.max < 0) {
          const uint32_t split = put(Op::split);
          out_.prog_[split].x = here();
          emit(n.kids[0]);
          put(Op::jump, split);
          out_.prog_[split].y = here();
          return;
        }
        for (int i = n.min; i < n.max; ++i) {
          const uint32_t split = put(Op::split);
          out_.prog_[split].x = here();
          emit(n.kids[0]);
          out_.prog_[split].y = here();
        }
        return;
      }
    }
  }

  std::string_view p_, what_;
  LinearRegex& out_;
  size_t i_ = 0;
};

LinearRegex::LinearRegex(std::string_view pattern, std::string_view what) {
  RegexCompiler(pattern, what, *this).compile();
}

bool LinearRegex::search(std::string_view text) const {
  // Two lists of states (the current position's and the next's), each a sparse set: a state is in a
  // list at most once, so a step costs at most the program's size whatever the pattern's nesting.
  const size_t n = prog_.size();
  std::vector<uint32_t> cur, next, stack;
  std::vector<size_t> seen(n, SIZE_MAX);  // the position whose list holds the state
  cur.reserve(n), next.reserve(n);
  // Adds `pc` and every state it reaches without reading a byte, at position `pos`.
  auto add = [&](std::vector<uint32_t>& list, uint32_t pc, size_t pos) {
    stack.push_back(pc);
    while (!stack.empty()) {
      const uint32_t s = stack.back();
      stack.pop_back();
      if (seen[s] == pos) continue;
      seen[s] = pos;
      const Inst& in = prog_[s];
      switch (in.op) {
        case Op::jump: stack.push_back(in.x); break;
        case Op::split: stack.push_back(in.y), stack.push_back(in.x); break;
        case Op::line_start: if (pos == 0) stack.push_back(s + 1); break;
        case Op::line_end: if (pos == text.size()) stack.push_back(s + 1); break;
        case Op::byte_set: case Op::match: list.push_back(s); break;
      }
    }
  };
  for (size_t pos = 0;; ++pos) {
    add(cur, 0, pos);  // a match may start anywhere
    for (uint32_t s : cur)
      if (prog_[s].op == Op::match) return true;
    if (pos == text.size()) return false;
    const unsigned char c = static_cast<unsigned char>(text[pos]);
    next.clear();
    for (uint32_t s : cur)
      if (prog_[s].op == Op::byte_set && sets_[prog_[s].set][c]) add(next, s + 1, pos + 1);
    std::swap(cur, next);
  }
}

}  // namespace ts
