#pragma once
// The project's single exception type. Exceptions are for bugs in tessera and
// for bad user input at the CLI boundary; a candidate's failure is never an
// exception that escapes an evaluation (it is an EvalResult status).
#include <stdexcept>
#include <string>
#include <string_view>

namespace tessera {

class Error : public std::runtime_error {
public:
  // What kind of failure, so the CLI can pick an exit code and RL trainers can
  // tell a harness problem (infra) from bad input.
  enum class Kind { internal, bad_input, unavailable };

  Error(Kind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
  explicit Error(std::string message) : Error(Kind::internal, std::move(message)) {}

  Kind kind() const noexcept { return kind_; }

private:
  Kind kind_;
};

// Builds "file:line: what failed: detail" so that every check names its call.
std::string where(const char* file, int line, std::string_view call, std::string_view detail);

[[noreturn]] inline void fail_bad_input(std::string message) {
  throw Error(Error::Kind::bad_input, std::move(message));
}

}  // namespace tessera

// Internal invariant: a false condition is a tessera bug.
#define TESSERA_REQUIRE(cond, msg)                                                         \
  do {                                                                                      \
    if (!(cond)) throw ::tessera::Error(::tessera::where(__FILE__, __LINE__, #cond, (msg))); \
  } while (0)
