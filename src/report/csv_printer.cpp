#include "report/csv_printer.hpp"

namespace kbv {

std::string csv_escape(const std::string& value) {
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string render_csv(const std::vector<VerdictRecord>& records) {
  const auto& fields = result_fields();
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i].name;
  out += "\r\n";
  for (const auto& r : records) {
    for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_escape(field_value_text(fields[i].extract(r)));
    out += "\r\n";
  }
  return out;
}

}  // namespace kbv
