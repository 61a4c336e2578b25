// The run-time options have one table, detail::option_specs
// (include/armi/runtime/options.hpp): it drives the parser, --armi-help and
// the options page of the guide.  This test keeps the three in step:
//  - docs/guide/options.md holds, between its <!-- options:begin --> and
//    <!-- options:end --> lines, exactly detail::options_markdown() (else it
//    prints the differing rows and the command that rewrites the table);
//  - every option of the table appears on that page and in the --armi-help
//    output of armi::execute, with its environment variable.
#include <armi/armi.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path options_page() {
  return fs::path(__FILE__).parent_path().parent_path().parent_path() / "docs" / "guide" / "options.md";
}

char const* const regenerate = "cmake --build <build dir> --target armi_options_doc";

std::string read_file(fs::path const& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(std::string const& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The page's text between the marker lines (after the begin line's newline,
// up to the end line), or why there is none.
struct table_part {
  std::string text;
  std::string error;
};

table_part page_table(std::string const& page) {
  std::string const begin = "<!-- options:begin -->\n";
  std::string const end = "<!-- options:end -->";
  auto const b = page.find(begin);
  auto const e = page.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b)
    return {{}, "it needs the lines '<!-- options:begin -->' and '<!-- options:end -->' around the table"};
  return {page.substr(b + begin.size(), e - b - begin.size()), {}};
}

// The key of a table row: its first cell (the flag), or the whole line for
// the header lines.
std::string row_key(std::string const& line) {
  if (line.starts_with("| `")) {
    auto const end = line.find("` |");
    if (end != std::string::npos) return line.substr(3, end - 3);
  }
  return line;
}

// How the page's table differs from the generated one, row by row (matched
// by flag, so one missing row does not make every later row differ).
std::string describe_difference(std::string const& generated, std::string const& page) {
  auto const want = lines_of(generated);
  auto const have = lines_of(page);
  auto find = [](std::vector<std::string> const& rows, std::string const& key) -> std::string const* {
    for (auto const& row : rows)
      if (row_key(row) == key) return &row;
    return nullptr;
  };
  std::string out;
  for (auto const& row : want) {
    std::string const* on_page = find(have, row_key(row));
    if (on_page == nullptr)
      out += "  missing from the page: " + row + "\n";
    else if (*on_page != row)
      out += "  differs:\n  - page:      " + *on_page + "\n  + generated: " + row + "\n";
  }
  for (auto const& row : have)
    if (find(want, row_key(row)) == nullptr) out += "  not an option (any more): " + row + "\n";
  if (out.empty()) out = "  the same rows in another order (or other whitespace)\n";
  return out;
}

// What armi::execute(argc, argv, fn) writes to stdout for --armi-help, and
// its result; fn must not run.
struct help_run {
  std::string output;
  int status = -1;
  bool body_ran = false;
};

help_run run_help() {
  help_run r;
  std::string prog = "prog", flag = "--armi-help";
  char* argv[] = {prog.data(), flag.data(), nullptr};
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  std::fflush(stdout);
  int const saved = ::dup(STDOUT_FILENO);
  REQUIRE(saved >= 0);
  ::dup2(::fileno(capture), STDOUT_FILENO);
  r.status = armi::execute(2, argv, [&] { r.body_ran = true; });
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::rewind(capture);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, capture)) > 0;) r.output.append(buf, n);
  std::fclose(capture);
  return r;
}

}  // namespace

TEST_CASE("docs/guide/options.md holds the table options_markdown() renders", "[options][docs]") {
  fs::path const path = options_page();
  INFO("page: " << path.string());
  REQUIRE(fs::exists(path));
  table_part const part = page_table(read_file(path));
  INFO(part.error);
  REQUIRE(part.error.empty());
  std::string const generated = armi::detail::options_markdown();
  if (part.text != generated) {
    FAIL_CHECK(path.string() << ": the options table is out of date with detail::option_specs "
                             << "(include/armi/runtime/options.hpp).\n"
                             << describe_difference(generated, part.text) << "Rewrite it with: " << regenerate);
  }
}

TEST_CASE("every option is on the options page and in --armi-help", "[options][docs]") {
  table_part const part = page_table(read_file(options_page()));
  REQUIRE(part.error.empty());
  help_run const help = run_help();
  CHECK(help.status == 0);
  CHECK_FALSE(help.body_ran);
  CHECK(help.output == armi::options_help());
  for (auto const& spec : armi::detail::option_specs) {
    std::string const synopsis = armi::detail::option_synopsis(spec);
    INFO("option --armi-" << std::string(spec.flag));
    // The page escapes the bars of N|auto outside the code span; help prints them as they are.
    std::string escaped;
    for (char c : synopsis) escaped += c == '|' ? std::string("`\\|`") : std::string(1, c);
    CHECK(part.text.find("| `" + escaped + "` |") != std::string::npos);
    CHECK(help.output.find("  " + synopsis + " ") != std::string::npos);
    if (!spec.env.empty()) {
      CHECK(part.text.find("`" + std::string(spec.env) + "`") != std::string::npos);
      CHECK(help.output.find(std::string(spec.env)) != std::string::npos);
    }
    if (!spec.default_text.empty()) CHECK(help.output.find(std::string(spec.default_text)) != std::string::npos);
  }
}
