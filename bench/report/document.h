// The report as a document: headed sections of paragraphs, tables and lists, built once from the
// runs and rendered as markdown (markdown.h) or HTML (html.h), so both show the same numbers.
#pragma once

#include <string>
#include <vector>

#include "bench/report/run_set.h"

namespace pk::report {

struct table {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // right-aligned columns, by header index
  std::vector<std::vector<std::string>> rows;
};

struct block {
  enum class kind { paragraph, table, list } type = kind::paragraph;
  std::string text;                // paragraph
  report::table data;              // table
  std::vector<std::string> items;  // list
};

struct section {
  int level = 2;  // 2 = "##"
  std::string title;
  std::vector<block> blocks;
};

struct document {
  std::string title;
  std::vector<section> sections;
};

document build_document(const run_set& runs);

/// "GEMM + communication" for gemm_comm etc.
std::string category_title(metrics::category cat);

}  // namespace pk::report
