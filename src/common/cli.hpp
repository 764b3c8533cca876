// SPDX-License-Identifier: MIT
// Strict command-line reading shared by the demo and the experiment programs: one loop shape, one
// set of messages, numbers that must parse whole and be finite.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace sgmcmc::common {

/// Reads argv one argument at a time:
///   Args args(argc, argv, "sgmcmc_demo", kUsage);
///   while (args.next()) {
///     if (args.is("--quick")) o.quick = true;
///     else if (args.text("--out", o.out)) {}
///     else if (args.number("--noise", o.noise, 0.0)) {}
///     else args.unknown();
///   }
///   if (args.status() != 0) return args.status() == 1 ? 0 : 2;
/// --help and -h print the usage and stop the loop. A matching option whose value is missing or
/// malformed prints a message to stderr, records the failure and stops the loop.
class Args {
 public:
  Args(int argc, char** argv, const char* program, const char* usage);

  /// Moves to the next argument; false at the end, after --help, or after a failure.
  bool next();
  /// The current argument.
  const std::string& arg() const { return arg_; }
  /// Is the current argument this flag?
  bool is(const char* name) const { return arg_ == name; }
  /// If the current argument is `name`, reads its value into out. True when the name matched.
  bool text(const char* name, std::string& out);
  /// Likewise for a finite number >= min (min = numeric_limits<double>::min() reads "> 0").
  bool number(const char* name, double& out, double min = -std::numeric_limits<double>::infinity());
  /// Likewise for a whole number >= min (no sign, no trailing characters).
  bool count(const char* name, std::uint64_t& out, std::uint64_t min = 0);
  /// The current argument is not an option of this program.
  void unknown();
  /// Records a failure with a message (printed as "program: message").
  void fail(const std::string& message);
  /// 0: run; 1: --help was printed; 2: bad arguments (a message was printed).
  int status() const { return status_; }

 private:
  const char* value(const char* name);

  int argc_;
  char** argv_;
  int i_ = 0;
  const char* program_;
  const char* usage_;
  std::string arg_;
  int status_ = 0;
};

}  // namespace sgmcmc::common
