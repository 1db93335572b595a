// How numbers look in reports: one place, so markdown and HTML agree to the digit.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "bench/metrics/aggregate.h"

namespace pk::report {

std::string percent(double rate);                           // "66.7%"
std::string percent(const metrics::estimate& e);            // "66.7% [41.7, 91.7]"
std::string points(double diff);                            // "+25.0 pp"
std::string points(double diff, const std::optional<metrics::interval>& ci);  // "+25.0 pp [-8.3, 58.3]"
std::string speedup(double s);                              // "1.22x"
std::string speedup(const metrics::estimate& e);            // "1.22x [1.07, 1.47]"
std::string dollars(double d);                              // "$0.300", "$12.40", "$0.0042"
std::string tokens(double t);                               // "950", "36.0k", "1.20M"
std::string seconds(double s);                              // "120.0 s"
std::string spend(double amount, const std::string& unit);  // dollars() or tokens() by unit
std::string fraction(int part, int whole);                  // "3/4"
/// Names with their counts, the most frequent first: "submitted 3, step_limit 1"; "—" when empty.
std::string counts(const std::map<std::string, int>& named);

}  // namespace pk::report
