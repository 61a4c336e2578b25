// Command-line flags of armi's examples: --name=value words, declared one by
// one with their defaults and help lines, then checked all at once.
//
//   armi_example::flags f(argc, argv, "sample_sort", "sorts random ints");
//   auto const n    = f.size("n", 1'000'000, "random ints per location");
//   auto const frac = f.real("remote", 0.4, "fraction of remote edges (0..1)");
//   if (auto const status = f.finish()) return *status;   // --help: 0, bad flag: 2
//
// Every location parses the same argv and gets the same answer; only
// location 0 prints.  The --armi-* options are gone from argv by then
// (armi::execute takes them).  Examples only; not part of armi's API.
#pragma once

#include <armi/armi.hpp>

#include <fmt/core.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace armi_example {

// This location's aggregation factor (armi::get_aggregation) as a word:
// the number, or "auto" under --armi-aggregation=auto.
inline std::string aggregation_text() {
  std::size_t const factor = armi::get_aggregation();
  return factor == armi::aggregation_auto ? std::string("auto") : std::to_string(factor);
}

class flags {
 public:
  flags(int argc, char** argv, std::string_view program, std::string_view summary)
      : m_program(program), m_summary(summary) {
    for (int i = 1; i < argc; ++i) m_args.push_back({argv[i], false});
  }

  // An unsigned integer flag --name=N.
  std::uint64_t size(std::string_view name, std::uint64_t fallback, std::string_view help) {
    describe(name, "N", fmt::format("{} (default {})", help, fallback));
    std::uint64_t value = fallback;
    if (auto const text = take(name)) {
      auto const [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
      if (ec != std::errc{} || end != text->data() + text->size()) malformed(name, *text, "an unsigned integer");
    }
    return value;
  }

  // A floating-point flag --name=X.
  double real(std::string_view name, double fallback, std::string_view help) {
    describe(name, "X", fmt::format("{} (default {})", help, fallback));
    double value = fallback;
    if (auto const text = take(name)) {
      auto const [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
      if (ec != std::errc{} || end != text->data() + text->size()) malformed(name, *text, "a number");
    }
    return value;
  }

  // A word flag --name=WORD, one of `choices`.
  std::string choice(std::string_view name, std::string_view fallback, std::vector<std::string_view> choices,
                     std::string_view help) {
    std::string list;
    for (auto c : choices) list += (list.empty() ? "" : "|") + std::string(c);
    describe(name, list, fmt::format("{} (default {})", help, fallback));
    std::string value(fallback);
    if (auto const text = take(name)) {
      bool known = false;
      for (auto c : choices) known = known || c == *text;
      if (!known) malformed(name, *text, "one of " + list);
      value = std::string(*text);
    }
    return value;
  }

  // After the last declaration: nullopt to go on, or the exit status to
  // return at once (0 after --help, 2 after a malformed or unknown flag).
  std::optional<int> finish() {
    bool const loud = armi::get_location_id() == 0;
    for (auto const& a : m_args) {
      if (a.text == "--help" || a.text == "-h") {
        if (loud) usage(stdout);
        return 0;
      }
    }
    for (auto const& a : m_args)
      if (!a.used && m_error.empty()) m_error = fmt::format("unknown or malformed argument '{}'", a.text);
    if (m_error.empty()) return std::nullopt;
    if (loud) {
      fmt::print(stderr, "{}: error: {}\n", m_program, m_error);
      usage(stderr);
    }
    return 2;
  }

 private:
  struct arg {
    std::string_view text;
    bool used;
  };

  void describe(std::string_view name, std::string_view metavar, std::string help) {
    m_help += fmt::format("  {:<24} {}\n", fmt::format("--{}={}", name, metavar), help);
  }

  // The value of the last --name=value, if any; marks every --name=... used.
  std::optional<std::string_view> take(std::string_view name) {
    std::optional<std::string_view> value;
    for (auto& a : m_args) {
      std::string_view const t = a.text;
      if (t.size() > name.size() + 2 && t.starts_with("--") && t.substr(2, name.size()) == name &&
          t[name.size() + 2] == '=') {
        a.used = true;
        value = t.substr(name.size() + 3);
      }
    }
    return value;
  }

  void malformed(std::string_view name, std::string_view text, std::string_view expected) {
    if (m_error.empty()) m_error = fmt::format("--{}={}: expected {}", name, text, expected);
  }

  void usage(std::FILE* out) const {
    fmt::print(out, "usage: {} [flags] [--armi-* options]\n  {}\n{}", m_program, m_summary, m_help);
    fmt::print(out, "  {:<24} this text; --armi-help lists the armi options\n", "--help");
  }

  std::string_view m_program;
  std::string_view m_summary;
  std::vector<arg> m_args;
  std::string m_help;
  std::string m_error;
};

}  // namespace armi_example
