#include "cli/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>

namespace strop::cli {

void Table::print(std::FILE* out) const {
  std::vector<std::size_t> widths(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c)
    widths[c] = headers_[c].size();
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::string cell = c < row.size() ? row[c] : "";
      const std::string pad(widths[c] - cell.size(), ' ');
      if (c > 0) line += "  ";
      line += c == 0 ? cell + pad : pad + cell;
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    std::fprintf(out, "%s\n", line.c_str());
  };
  print_row(headers_);
  std::size_t total = 0;
  for (std::size_t w : widths)
    total += w + 2;
  std::fprintf(out, "%s\n", std::string(total > 2 ? total - 2 : 0, '-').c_str());
  for (const auto& row : rows_)
    print_row(row);
}

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int size = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(size > 0 ? std::size_t(size) : 0, '\0');
  if (size > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

std::string format_error(double relative_error) {
  if (std::isnan(relative_error)) return "-";
  return format("%.1e", relative_error);
}

std::string format_ms(double seconds) {
  const double ms = seconds * 1e3;
  if (ms >= 100) return format("%.1f", ms);
  if (ms >= 1) return format("%.2f", ms);
  return format("%.3f", ms);
}

std::string format_count(double count) {
  std::string digits = format("%.0f", count);
  std::string out;
  const std::size_t first = digits.size() % 3 == 0 ? 3 : digits.size() % 3;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i >= first && (i - first) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_ratio(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  return ratio >= 100 ? format("%.0fx", ratio) : format("%.1fx", ratio);
}

std::string format_shape(Index rows, Index cols) {
  return format("%lld x %lld", static_cast<long long>(rows), static_cast<long long>(cols));
}

}  // namespace strop::cli
