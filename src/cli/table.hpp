#pragma once
// Plain-text tables and number formatting for the strop tool's reports.
#include <cstdio>
#include <string>
#include <vector>

#include "strop/core/scalar.hpp"

namespace strop::cli {

// Columns sized to their widest cell; the first column is left-aligned, the others right.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::FILE* out = stdout) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// printf into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

std::string format_error(double relative_error);   // "3.1e-07", "-" when unknown (NaN)
std::string format_ms(double seconds);             // "12.345"
std::string format_count(double count);            // "16,777,216"
std::string format_ratio(double ratio);            // "12.3x"
std::string format_shape(Index rows, Index cols);  // "4096 x 4096"

}  // namespace strop::cli
