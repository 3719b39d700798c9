#pragma once
// Command lines that touchstone prints for pasting (repro lines in the console, JUnit, JSON and
// HTML reports; golden verify's rerun lines) quote every word that comes from the user or a file
// (case ids, directories, layouts, patterns) with this one function, so that pasting the line into
// a POSIX shell runs exactly that command: a kernel directory named x'$(touch PWNED)'y stays one
// argument and runs nothing.
#include <string>
#include <string_view>

namespace ts {

// 'word' with each ' written as '\'' (the shell ends the quote, adds an escaped quote, reopens).
// Always quoted, even where no character needs it, so a line reads the same for every value.
std::string shell_quote(std::string_view word);

}  // namespace ts
