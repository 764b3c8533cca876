// SPDX-License-Identifier: MIT
// Allocation-free text output over semihosting: strings, integers and fixed-point floats.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sgmcmc/cortex_m/semihosting.hpp"

namespace sgmcmc::cortex_m {

/// Builds one line in a fixed buffer and writes it with a single semihosting call; newlib's
/// printf is avoided because its float formatting allocates.
class Line {
 public:
  Line() noexcept { buf_[0] = '\0'; }
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;
  /// Writes whatever is left unflushed.
  ~Line() { flush(); }

  /// Appends a string.
  Line& operator<<(const char* s) noexcept {
    while (*s != '\0') put(*s++);
    return *this;
  }
  /// Appends a character.
  Line& operator<<(char c) noexcept {
    put(c);
    return *this;
  }
  /// Appends a signed integer in decimal.
  Line& operator<<(long long v) noexcept {
    if (v < 0) {
      put('-');
      return *this << static_cast<unsigned long long>(-(v + 1)) + 1u;
    }
    return *this << static_cast<unsigned long long>(v);
  }
  Line& operator<<(long v) noexcept { return *this << static_cast<long long>(v); }
  Line& operator<<(int v) noexcept { return *this << static_cast<long long>(v); }
  /// Appends an unsigned integer in decimal.
  Line& operator<<(unsigned long long v) noexcept {
    char digits[20];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10u);
      v /= 10u;
    } while (v != 0u);
    while (n > 0) put(digits[--n]);
    return *this;
  }
  Line& operator<<(unsigned long v) noexcept { return *this << static_cast<unsigned long long>(v); }
  Line& operator<<(unsigned v) noexcept { return *this << static_cast<unsigned long long>(v); }
  /// Appends a float with `decimals()` digits after the point (default 5).
  Line& operator<<(float v) noexcept { return fixed(v, decimals_); }
  /// Appends a double through the same fixed-point formatter.
  Line& operator<<(double v) noexcept { return fixed(v, decimals_); }

  /// Sets the number of decimals used for floating-point values.
  Line& decimals(int d) noexcept {
    decimals_ = d < 0 ? 0 : (d > 9 ? 9 : d);
    return *this;
  }

  /// Writes the buffer and empties it.
  void flush() noexcept {
    if (len_ == 0) return;
    buf_[len_] = '\0';
    semihosting::write0(buf_);
    len_ = 0;
  }

 private:
  void put(char c) noexcept {
    if (len_ + 1 >= sizeof(buf_)) flush();
    buf_[len_++] = c;
  }

  template <class T>
  Line& fixed(T v, int decimals) noexcept {
    if (v != v) return *this << "nan";
    if (v < T(0)) {
      put('-');
      v = -v;
    }
    if (v > T(1.8e19)) return *this << "inf";
    unsigned long long scale = 1;
    for (int i = 0; i < decimals; ++i) scale *= 10u;
    // Round at the last printed decimal, then split into integer and fraction.
    const T scaled = v * static_cast<T>(scale) + T(0.5);
    if (scaled > T(1.8e19)) return *this << static_cast<unsigned long long>(v);
    const auto total = static_cast<unsigned long long>(scaled);
    *this << total / scale;
    if (decimals == 0) return *this;
    put('.');
    unsigned long long frac = total % scale;
    for (unsigned long long div = scale / 10u; div != 0u; div /= 10u) {
      put(static_cast<char>('0' + frac / div));
      frac %= div;
    }
    return *this;
  }

  char buf_[128];
  std::size_t len_ = 0;
  int decimals_ = 5;
};

}  // namespace sgmcmc::cortex_m
