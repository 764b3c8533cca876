// SPDX-License-Identifier: MIT
// Strict command-line reading (cli.hpp).
#include "common/cli.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace sgmcmc::common {

Args::Args(int argc, char** argv, const char* program, const char* usage)
    : argc_(argc), argv_(argv), program_(program), usage_(usage) {}

bool Args::next() {
  if (status_ != 0 || i_ + 1 >= argc_) return false;
  arg_ = argv_[++i_];
  if (arg_ == "--help" || arg_ == "-h") {
    std::fputs(usage_, stdout);
    status_ = 1;
    return false;
  }
  return true;
}

const char* Args::value(const char* name) {
  if (i_ + 1 >= argc_) {
    fail(std::string(name) + " needs a value");
    return nullptr;
  }
  return argv_[++i_];
}

bool Args::text(const char* name, std::string& out) {
  if (arg_ != name) return false;
  if (const char* v = value(name)) out = v;
  return true;
}

bool Args::number(const char* name, double& out, double min) {
  if (arg_ != name) return false;
  const char* v = value(name);
  if (!v) return true;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !std::isfinite(x) || !(x >= min)) {
    char bound[48];
    if (min == std::numeric_limits<double>::min()) {
      std::snprintf(bound, sizeof bound, "> 0");
    } else {
      std::snprintf(bound, sizeof bound, ">= %g", min);
    }
    fail(std::string(name) + " needs a finite number " + bound + ", got '" + v + "'");
  } else {
    out = x;
  }
  return true;
}

bool Args::count(const char* name, std::uint64_t& out, std::uint64_t min) {
  if (arg_ != name) return false;
  const char* v = value(name);
  if (!v) return true;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || v[0] == '-' || v[0] == '+' || x < min) {
    fail(std::string(name) + " needs a whole number >= " + std::to_string(min) + ", got '" + v +
         "'");
  } else {
    out = x;
  }
  return true;
}

void Args::unknown() {
  std::fprintf(stderr, "%s: unknown argument '%s'\n\n%s", program_, arg_.c_str(), usage_);
  status_ = 2;
}

void Args::fail(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program_, message.c_str());
  status_ = 2;
}

}  // namespace sgmcmc::common
