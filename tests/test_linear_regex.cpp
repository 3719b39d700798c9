// core/linear_regex.h: the same answers as std::regex_search on the patterns it takes, refusals
// naming the rule for what it does not take or past its limits, and time linear in the text on
// the patterns that make a backtracking engine take minutes or overflow its stack.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/linear_regex.h"

namespace ts {
namespace {

std::string refusal(const std::string& pattern) {
  try {
    LinearRegex r(pattern, "--match");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(LinearRegex, AgreesWithStdRegexOnCaseIds) {
  const std::vector<std::string> ids = {
      "rope_llama/B=1,S=1,Hq=32,Hkv=8,D=128/float16/buffer/seed=1234",
      "sdpa/S=3,Hq=2,Hkv=1,D=8,pos=5/float16/texture3d_c;k=buffer/seed=1",
      "rope_half/B=1,H=2,S=3,D=6,pos=5/float16/buffer/seed=9",
      "q8ta_add/N=7/int8/buffer/seed=0",
      "",
      "aaaa",
      "a\nb",
  };
  const std::vector<std::string> patterns = {
      "D=(2|6),", "^sdpa/.*pos=0", "Hkv=1,", "float16", "^rope_(llama|half)/", "seed=[0-9]+$", "seed=\\d{4}$",
      "[^a-z/=,;0-9_]", "[a-c]{2,3}", "x?", "^$", "^", "$", "a+$", "(a|b)*c", "(?:ab)+", "D=12?8", "\\.", "S=[13],",
      "[]a]", "[^]", "a]", "[a-]", "[\\]]", "\\w+=\\d+,\\s?", "\\D\\W\\S", "a{0}", "a{2,}", "(a*)*", "(a|)+b", "q8ta_.*int8",
      "texture3d_c;k=", ".", "a.b", "[.]", "seed=1$", "^(sdpa|q8ta_add)/", "(^q8|^rope)", "a*?a", "[\\d,]{3}",
  };
  for (const std::string& p : patterns) {
    const LinearRegex mine(p, "--match");
    const std::regex theirs(p, std::regex::ECMAScript);
    for (const std::string& id : ids)
      EXPECT_EQ(mine.search(id), std::regex_search(id, theirs)) << "pattern '" << p << "' on '" << id << "'";
  }
}

TEST(LinearRegex, RefusesWhatItDoesNotTakeNamingIt) {
  EXPECT_NE(refusal("(a").find("unclosed '('"), std::string::npos);
  EXPECT_NE(refusal("a)").find("unmatched ')'"), std::string::npos);
  EXPECT_NE(refusal("[a").find("unclosed '['"), std::string::npos);
  EXPECT_NE(refusal("*a").find("nothing to repeat"), std::string::npos);
  EXPECT_NE(refusal("a**").find("nothing to repeat"), std::string::npos);
  EXPECT_NE(refusal("^*").find("anchor"), std::string::npos);
  EXPECT_NE(refusal("(a)\\1").find("back-reference"), std::string::npos);
  EXPECT_NE(refusal("(?=a)").find("look-around"), std::string::npos);
  EXPECT_NE(refusal("\\q").find("unknown escape \\q"), std::string::npos);
  EXPECT_NE(refusal("a{3,2}").find("n is less than m"), std::string::npos);
  EXPECT_NE(refusal("a{x}").find("without a count"), std::string::npos);
  EXPECT_NE(refusal("[z-a]").find("out of order"), std::string::npos);
  EXPECT_NE(refusal("a\\").find("lone backslash"), std::string::npos);
  EXPECT_EQ(refusal("a{2}"), "");
}

TEST(LinearRegex, RefusesPatternsPastItsLimitsNamingTheLimit) {
  const std::string deep = std::string(30000, '(') + "a" + std::string(30000, ')');
  EXPECT_NE(refusal(deep).find("characters long, more than the limit of 1000"), std::string::npos) << refusal(deep);
  const std::string nested = std::string(40, '(') + "a" + std::string(40, ')');
  EXPECT_NE(refusal(nested).find("deeper than the limit of 32"), std::string::npos) << refusal(nested);
  EXPECT_EQ(refusal(std::string(32, '(') + "a" + std::string(32, ')')), "");
  EXPECT_NE(refusal("a{101}").find("more than the limit of 100"), std::string::npos);
  EXPECT_NE(refusal("a{1000000000000}").find("more than the limit of 100"), std::string::npos);
  EXPECT_NE(refusal("((a{100}){100}){100}").find("more than 2000 NFA states"), std::string::npos);
  EXPECT_EQ(LinearRegex("ab|c", "--match").states(), 6u);  // split, a, b, jump, c, match
}

// (a+)+$ on "aaaa...b" makes a backtracking engine try every way of splitting the a's: 2^n paths.
// Here each character costs at most the program's size; 100,000 characters would not finish with
// backtracking in the life of the machine, so this test ends only if the matcher is linear.
TEST(LinearRegex, CatastrophicBacktrackingPatternsRunInLinearTime) {
  const std::string text = std::string(100000, 'a') + "b";
  EXPECT_FALSE(LinearRegex("(a+)+$", "--match").search(text));
  EXPECT_FALSE(LinearRegex("(a|a)*c", "--match").search(text));
  EXPECT_FALSE(LinearRegex("(a*)*(a*)*(a*)*x", "--match").search(text));
  EXPECT_TRUE(LinearRegex("(a+)+b$", "--match").search(text));
}

}  // namespace
}  // namespace ts
