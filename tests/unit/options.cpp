// Run-time options (docs/design.md §3 "Options"):
//  - armi::parse_options reads ARMI_* from the environment and --armi-* flags
//    (a flag wins), and REMOVES the flags from argv: the other arguments keep
//    their order, argc is updated, argv[argc] stays a null pointer;
//  - an unknown --armi- flag or a malformed value throws armi::option_error
//    with a one-line message naming the flag;
//  - --armi-help sets config::help; options_help() lists every option with
//    its environment variable and default;
//  - armi::execute(argc, argv, fn) hands fn the argv without the flags, runs
//    with the configuration they give, returns 2 on an option error and 0
//    without running fn for --armi-help;
//  - set_aggregation()/get_aggregation() per location at run time.
#include "support/test_support.hpp"

#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

char const* const all_env_vars[] = {"ARMI_BACKEND",           "ARMI_LOCATIONS",    "ARMI_AGGREGATION",
                                    "ARMI_AGGREGATION_LOCAL", "ARMI_AGGREGATION_REMOTE", "ARMI_BUFFER_BYTES",
                                    "ARMI_STATS",             "ARMI_WATCHDOG",     "ARMI_MAX_DELAY"};

// Clears every ARMI_* variable for the test's duration (the test may set some)
// and restores what was there before.
class clean_env {
 public:
  clean_env() {
    for (char const* name : all_env_vars) {
      if (char const* v = std::getenv(name)) m_saved[name] = v;
      ::unsetenv(name);
    }
  }
  clean_env(clean_env const&) = delete;
  clean_env& operator=(clean_env const&) = delete;
  ~clean_env() {
    for (char const* name : all_env_vars) ::unsetenv(name);
    for (auto const& [name, value] : m_saved) ::setenv(name.c_str(), value.c_str(), 1);
  }
  void set(char const* name, char const* value) { ::setenv(name, value, 1); }

 private:
  std::map<std::string, std::string> m_saved;
};

// A writable argv (with the terminating null pointer) built from strings.
class fake_argv {
 public:
  fake_argv(std::initializer_list<std::string> args) : m_storage(args) {
    for (auto& s : m_storage) m_ptrs.push_back(s.data());
    m_ptrs.push_back(nullptr);
    argc = static_cast<int>(m_storage.size());
  }
  char** argv() { return m_ptrs.data(); }
  std::vector<std::string> remaining() const {
    std::vector<std::string> out;
    for (int i = 0; i < argc; ++i) out.emplace_back(m_ptrs[static_cast<std::size_t>(i)]);
    return out;
  }
  int argc;

 private:
  std::vector<std::string> m_storage;
  std::vector<char*> m_ptrs;
};

armi::config parse(fake_argv& a) {
  return armi::parse_options(a.argc, a.argv());
}

// The option_error message for these arguments (REQUIREs that it throws one).
std::string parse_error(std::initializer_list<std::string> args) {
  fake_argv a(args);
  try {
    (void)parse(a);
  } catch (armi::option_error const& e) {
    return e.what();
  }
  FAIL("no armi::option_error thrown");
  return {};
}

bool one_line(std::string const& s) {
  return !s.empty() && s.find('\n') == std::string::npos;
}

}  // namespace

TEST_CASE("parse_options: defaults without flags or environment", "[options]") {
  clean_env env;
  fake_argv a{"prog", "x", "-v", "--other=1"};
  armi::config const cfg = parse(a);
  CHECK(cfg.backend == "threads");
  CHECK(cfg.locations == 0);
  CHECK(cfg.aggregation == 64);
  CHECK(cfg.buffer_bytes == 32768);
  CHECK_FALSE(cfg.buffer_bytes_given);  // mpi and mixed may then pick their own cap to other ranks
  CHECK_FALSE(cfg.stats);
  CHECK_FALSE(cfg.help);
  CHECK(cfg.progress == "poll");
  CHECK(cfg.progress_interval_ns == 1'000'000);
  CHECK(a.argc == 4);
  CHECK(a.remaining() == std::vector<std::string>{"prog", "x", "-v", "--other=1"});
  CHECK(a.argv()[4] == nullptr);
}

TEST_CASE("parse_options: flags are parsed and removed and other arguments keep their order",
          "[options]") {
  clean_env env;
  fake_argv a{"prog",
              "first",
              "--armi-locations=3",
              "second",
              "--armi-aggregation=7",
              "--armistice",
              "--armi-stats",
              "--",
              "--armi-buffer-bytes=4096",
              "-armi-x",
              "last",
              "--armi-backend=threads"};
  armi::config const cfg = parse(a);
  CHECK(cfg.locations == 3);
  CHECK(cfg.aggregation == 7);
  CHECK(cfg.stats);
  CHECK(cfg.buffer_bytes == 4096);
  CHECK(cfg.buffer_bytes_given);
  CHECK(cfg.backend == "threads");
  CHECK_FALSE(cfg.help);
  // "--armistice" and "-armi-x" are not armi options.
  CHECK(a.remaining() == std::vector<std::string>{"prog", "first", "second", "--armistice", "--",
                                                  "-armi-x", "last"});
  CHECK(a.argc == 7);
  CHECK(a.argv()[a.argc] == nullptr);
}

TEST_CASE("parse_options: only flags leaves the program name", "[options]") {
  clean_env env;
  fake_argv a{"prog", "--armi-locations=2", "--armi-aggregation=1"};
  armi::config const cfg = parse(a);
  CHECK(a.argc == 1);
  CHECK(a.remaining() == std::vector<std::string>{"prog"});
  CHECK(a.argv()[1] == nullptr);
  CHECK(cfg.locations == 2);
  CHECK(cfg.aggregation == 1);
}

TEST_CASE("parse_options: a later flag overrides an earlier one", "[options]") {
  clean_env env;
  fake_argv a{"prog", "--armi-locations=2", "--armi-locations=5"};
  CHECK(parse(a).locations == 5);
}

TEST_CASE("parse_options: range ends are accepted", "[options]") {
  clean_env env;
  fake_argv a{"prog", "--armi-locations=1", "--armi-aggregation=1"};
  armi::config const cfg = parse(a);
  CHECK(cfg.locations == 1);
  CHECK(cfg.aggregation == 1);
  fake_argv b{"prog", "--armi-locations=4096"};
  CHECK(parse(b).locations == 4096);
}

TEST_CASE("parse_options: ARMI_* environment variables", "[options]") {
  clean_env env;
  env.set("ARMI_LOCATIONS", "5");
  env.set("ARMI_AGGREGATION", "9");
  env.set("ARMI_BUFFER_BYTES", "2048");
  env.set("ARMI_STATS", "1");
  env.set("ARMI_BACKEND", "threads");
  fake_argv a{"prog", "arg"};
  armi::config const cfg = parse(a);
  CHECK(cfg.locations == 5);
  CHECK(cfg.aggregation == 9);
  CHECK(cfg.buffer_bytes == 2048);
  CHECK(cfg.buffer_bytes_given);
  CHECK(cfg.stats);
  CHECK(cfg.backend == "threads");
  CHECK(a.argc == 2);
  CHECK(a.remaining() == std::vector<std::string>{"prog", "arg"});
}

TEST_CASE("parse_options: --armi-stats=json:FILE", "[options]") {
  clean_env env;
  fake_argv a{"prog", "--armi-stats=json:out/run.json"};
  armi::config const cfg = parse(a);
  CHECK(cfg.stats);
  CHECK(cfg.stats_json == "out/run.json");
  // The last one wins: a plain switch after it goes back to the table.
  fake_argv b{"prog", "--armi-stats=json:x.json", "--armi-stats"};
  armi::config const cfg2 = parse(b);
  CHECK(cfg2.stats);
  CHECK(cfg2.stats_json.empty());
}

TEST_CASE("parse_options: a flag wins over the environment", "[options]") {
  clean_env env;
  env.set("ARMI_LOCATIONS", "5");
  env.set("ARMI_AGGREGATION", "9");
  env.set("ARMI_STATS", "1");
  fake_argv a{"prog", "--armi-locations=2", "--armi-aggregation=3", "--armi-stats=off"};
  armi::config const cfg = parse(a);
  CHECK(cfg.locations == 2);
  CHECK(cfg.aggregation == 3);
  CHECK_FALSE(cfg.stats);
  CHECK(a.argc == 1);
  // Only the ones given as flags are overridden.
  env.set("ARMI_BUFFER_BYTES", "1000");
  fake_argv b{"prog", "--armi-aggregation=4"};
  armi::config const cfg2 = parse(b);
  CHECK(cfg2.aggregation == 4);
  CHECK(cfg2.locations == 5);
  CHECK(cfg2.buffer_bytes == 1000);
}

TEST_CASE("parse_options: unknown --armi- flags are errors naming the flag", "[options]") {
  clean_env env;
  for (std::string const flag :
       {"--armi-foo", "--armi-foo=1", "--armi-locationz=3", "--armi-", "--armi-LOCATIONS=3"}) {
    INFO(flag);
    std::string const msg = parse_error({"prog", "x", flag, "y"});
    CHECK(one_line(msg));
    std::string const name = flag.substr(0, flag.find('='));
    CHECK(msg.find(name) != std::string::npos);
  }
}

TEST_CASE("parse_options: aggregation auto and --armi-max-delay", "[options]") {
  clean_env env;
  fake_argv a{"prog", "--armi-aggregation=auto", "--armi-aggregation-remote=256", "--armi-max-delay=250.5"};
  armi::config const cfg = parse(a);
  CHECK(cfg.aggregation == armi::aggregation_auto);
  CHECK(cfg.aggregation_local == 0);
  CHECK(cfg.aggregation_remote == 256);
  CHECK(cfg.max_delay_ns == 250500);
  fake_argv b{"prog", "--armi-aggregation-local=auto", "--armi-max-delay=0"};
  armi::config const cfg2 = parse(b);
  CHECK(cfg2.aggregation == 64);
  CHECK(cfg2.aggregation_local == armi::aggregation_auto);
  CHECK(cfg2.max_delay_ns == 0);  // off
  CHECK(armi::options_help().find("--armi-max-delay=US") != std::string::npos);
  CHECK(armi::options_help().find("--armi-aggregation=N|auto") != std::string::npos);
}

TEST_CASE("parse_options: --armi-progress and its interval", "[options][progress]") {
  clean_env env;
  fake_argv a{"prog", "--armi-progress=thread", "--armi-progress-interval=250"};
  armi::config const cfg = parse(a);
  CHECK(cfg.progress == "thread");
  CHECK(cfg.progress_interval_ns == 250'000);
  fake_argv b{"prog", "--armi-progress=poll", "--armi-progress-interval=10"};
  armi::config const cfg2 = parse(b);
  CHECK(cfg2.progress == "poll");
  CHECK(cfg2.progress_interval_ns == 10'000);
}

TEST_CASE("parse_options: malformed values are errors naming the option", "[options]") {
  clean_env env;
  for (std::string const arg : {
           "--armi-locations=abc",
           "--armi-locations=",
           "--armi-locations",
           "--armi-locations=0",
           "--armi-locations=-1",
           "--armi-locations=3x",
           "--armi-locations= 3",
           "--armi-locations=4097",
           "--armi-locations=4294967297",  // wraps to 1 in 32 bits
           "--armi-locations=99999999999999999999999999",
           "--armi-aggregation=-3",
           "--armi-aggregation=",
           "--armi-aggregation",
           "--armi-aggregation=0",
           "--armi-aggregation=1.5",
           "--armi-aggregation=18446744073709551616",  // 2^64
           "--armi-aggregation=99999999999999999999999999",
           "--armi-aggregation=autox",
           "--armi-aggregation-local=Auto",
           "--armi-aggregation-remote=auto1",
           "--armi-max-delay=-1",
           "--armi-max-delay=",
           "--armi-max-delay=soon",
           "--armi-max-delay=1000001",
           "--armi-progress=",
           "--armi-progress=threads",
           "--armi-progress-interval=5",
           "--armi-progress-interval=1000001",
           "--armi-progress-interval=often",
           "--armi-buffer-bytes=abc",
           "--armi-buffer-bytes=",
           "--armi-buffer-bytes=-1",
           "--armi-buffer-bytes=18446744073709551617",
           "--armi-backend=",
           "--armi-backend=nosuch",
           "--armi-stats=maybe",
           "--armi-stats=json:",
           "--armi-stats=xml:out.xml",
           "--armi-help=1",
       }) {
    INFO(arg);
    std::string const msg = parse_error({"prog", arg});
    CHECK(one_line(msg));
    std::string const name = arg.substr(2, arg.find('=') - 2);  // "armi-locations"
    CHECK(msg.find(name) != std::string::npos);
  }
}

TEST_CASE("parse_options: malformed environment values are errors", "[options]") {
  for (auto [var, value] : {std::pair<char const*, char const*>{"ARMI_LOCATIONS", "abc"},
                            {"ARMI_LOCATIONS", "-2"},
                            {"ARMI_AGGREGATION", "0"},
                            {"ARMI_AGGREGATION", "-3"},
                            {"ARMI_AGGREGATION", "99999999999999999999999"},
                            {"ARMI_BUFFER_BYTES", "x"},
                            {"ARMI_BACKEND", "nosuch"}}) {
    clean_env env;
    env.set(var, value);
    INFO(var << "=" << value);
    std::string const msg = parse_error({"prog"});
    CHECK(one_line(msg));
    CHECK(msg.find(var) != std::string::npos);
  }
}

TEST_CASE("parse_options: --armi-help sets the help flag", "[options]") {
  clean_env env;
  fake_argv a{"prog", "--armi-help", "rest"};
  armi::config const cfg = parse(a);
  CHECK(cfg.help);
  CHECK(a.remaining() == std::vector<std::string>{"prog", "rest"});
}

TEST_CASE("options_help lists every option with its default", "[options]") {
  std::string const help = armi::options_help();
  std::istringstream in(help);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  auto line_of = [&](std::string const& flag) -> std::string {
    for (auto const& l : lines)
      if (l.find(flag) != std::string::npos) return l;
    return {};
  };
  struct expected {
    std::string flag, env, default_text;
  };
  for (auto const& e :
       {expected{"--armi-backend", "ARMI_BACKEND", "threads"},
        expected{"--armi-locations", "ARMI_LOCATIONS", ""},
        expected{"--armi-aggregation", "ARMI_AGGREGATION", "64"},
        expected{"--armi-buffer-bytes", "ARMI_BUFFER_BYTES", "32768"},
        expected{"--armi-stats", "ARMI_STATS", ""}, expected{"--armi-help", "", ""}}) {
    INFO(e.flag);
    std::string const line = line_of(e.flag);
    REQUIRE_FALSE(line.empty());
    if (!e.env.empty()) CHECK(line.find(e.env) != std::string::npos);
    if (!e.default_text.empty()) CHECK(line.find(e.default_text) != std::string::npos);
  }
  // The locations default is described (hardware threads), not left out.
  CHECK(line_of("--armi-locations").find("default") != std::string::npos);
  CHECK(line_of("--armi-stats").find("default") != std::string::npos);
}

TEST_CASE("execute(argc argv fn) hands fn the argv without the armi flags", "[options][execute]") {
  clean_env env;
  env.set("ARMI_AGGREGATION", "11");  // overridden by the flag
  env.set("ARMI_BUFFER_BYTES", "4096");
  fake_argv a{"prog", "--armi-locations=3",      "x", "--armi-aggregation=5",
              "y",    "--armi-buffer-bytes=8192"};
  std::atomic<int> calls{0};
  armi_test::failures().take();
  int const rc = armi::execute(a.argc, a.argv(), [&calls](int argc, char** argv) {
    ++calls;
    ARMI_CHECK_EQ(argc, 3);
    if (argc == 3) {
      ARMI_CHECK_EQ(std::string(argv[0]), "prog");
      ARMI_CHECK_EQ(std::string(argv[1]), "x");
      ARMI_CHECK_EQ(std::string(argv[2]), "y");
      ARMI_CHECK(argv[3] == nullptr);
    }
    ARMI_CHECK_EQ(armi::get_num_locations(), 3u);
    ARMI_CHECK_EQ(armi::get_aggregation(), 5u);
  });
  auto const msgs = armi_test::failures().take();
  for (auto const& m : msgs) UNSCOPED_INFO(m);
  CHECK(msgs.empty());
  CHECK(rc == 0);
  CHECK(calls == 3);
}

TEST_CASE("execute(argc argv fn) uses the environment", "[options][execute]") {
  clean_env env;
  env.set("ARMI_LOCATIONS", "2");
  env.set("ARMI_AGGREGATION", "6");
  fake_argv a{"prog"};
  std::atomic<int> calls{0};
  armi_test::failures().take();
  int const rc = armi::execute(a.argc, a.argv(), [&calls] {
    ++calls;
    ARMI_CHECK_EQ(armi::get_num_locations(), 2u);
    ARMI_CHECK_EQ(armi::get_aggregation(), 6u);
  });
  auto const msgs = armi_test::failures().take();
  for (auto const& m : msgs) UNSCOPED_INFO(m);
  CHECK(msgs.empty());
  CHECK(rc == 0);
  CHECK(calls == 2);
}

TEST_CASE("execute(argc argv fn): option errors return 2 without running fn",
          "[options][execute]") {
  clean_env env;
  for (std::string const bad : {"--armi-bogus=1", "--armi-locations=abc", "--armi-aggregation=0"}) {
    INFO(bad);
    fake_argv a{"prog", bad};
    std::atomic<int> calls{0};
    int const rc = armi::execute(a.argc, a.argv(), [&calls] { ++calls; });
    CHECK(rc == 2);
    CHECK(calls == 0);
  }
}

TEST_CASE("execute(argc argv fn): --armi-help returns 0 without running fn", "[options][execute]") {
  clean_env env;
  fake_argv a{"prog", "--armi-help", "--armi-locations=2"};
  std::atomic<int> calls{0};
  int const rc = armi::execute(a.argc, a.argv(), [&calls] { ++calls; });
  CHECK(rc == 0);
  CHECK(calls == 0);
}

namespace {

class aggregation_probe : public armi::p_object {
 public:
  void hit() { ++m_hits; }
  int hits() const { return m_hits; }
  std::size_t aggregation_here() const { return armi::get_aggregation(); }

 private:
  int m_hits = 0;
};

}  // namespace

TEST_CASE("set_aggregation / get_aggregation at run time", "[options][aggregation]") {
  for (std::size_t initial : {std::size_t{1}, std::size_t{5}, std::size_t{64}}) {
    armi::config cfg;
    cfg.locations = 3;
    cfg.aggregation = initial;
    INFO("initial aggregation " << initial);
    armi_test::run(cfg, [initial] {
      auto const me = armi::get_location_id();
      auto const n = armi::get_num_locations();
      aggregation_probe probe;
      ARMI_CHECK_EQ(armi::get_aggregation(), initial);
      armi::rmi_fence();

      // Each location picks its own factor; the others keep theirs.
      std::size_t const mine = 2 + me * 7;
      armi::set_aggregation(mine);
      ARMI_CHECK_EQ(armi::get_aggregation(), mine);
      armi::rmi_fence();
      for (armi::location_id l = 0; l < n; ++l) {
        std::size_t const theirs =
            armi::sync_rmi(l, probe.get_rmi_handle(), &aggregation_probe::aggregation_here);
        ARMI_CHECK_EQ(theirs, std::size_t{2 + l * 7});
      }
      armi::rmi_fence();  // nobody changes its factor while others still ask
      // RMIs keep working with the new factor, and after switching to 1 and back.
      for (int i = 0; i < 100; ++i)
        armi::async_rmi((me + 1) % n, probe.get_rmi_handle(), &aggregation_probe::hit);
      armi::set_aggregation(1);
      ARMI_CHECK_EQ(armi::get_aggregation(), 1u);
      for (int i = 0; i < 50; ++i)
        armi::async_rmi((me + 1) % n, probe.get_rmi_handle(), &aggregation_probe::hit);
      armi::set_aggregation(1000);
      ARMI_CHECK_EQ(armi::get_aggregation(), 1000u);
      for (int i = 0; i < 50; ++i)
        armi::async_rmi((me + 1) % n, probe.get_rmi_handle(), &aggregation_probe::hit);
      armi::rmi_fence();
      ARMI_CHECK_EQ(probe.hits(), 200);
      armi::rmi_fence();
    });
  }
}

TEST_CASE("the configured aggregation is every location's starting factor",
          "[options][aggregation]") {
  armi::config cfg;
  cfg.locations = 4;
  cfg.aggregation = 13;
  armi_test::run(cfg, [] {
    ARMI_CHECK_EQ(armi::get_aggregation(), 13u);
    ARMI_CHECK_EQ(armi::get_num_locations(), 4u);
  });
}

TEST_CASE("parse_options: local and remote aggregation factors", "[options][aggregation]") {
  clean_env env;
  env.set("ARMI_AGGREGATION_REMOTE", "512");
  fake_argv a{"prog", "--armi-aggregation-local=3", "--armi-aggregation=9", "x"};
  armi::config const cfg = parse(a);
  CHECK(cfg.aggregation == 9);
  CHECK(cfg.aggregation_local == 3);  // the specific option wins, in either order
  CHECK(cfg.aggregation_remote == 512);
  CHECK(a.remaining() == std::vector<std::string>{"prog", "x"});
  fake_argv b{"prog"};
  env.set("ARMI_AGGREGATION_REMOTE", "");
  CHECK_THROWS_AS(parse(b), armi::option_error);
  ::unsetenv("ARMI_AGGREGATION_REMOTE");
  for (std::string const bad : {"--armi-aggregation-local=0", "--armi-aggregation-remote=x",
                                "--armi-aggregation-local", "--armi-aggregation-remote=99999999999"}) {
    INFO(bad);
    std::string const e = parse_error({"prog", bad});
    CHECK(one_line(e));
    CHECK(e.find(bad.substr(0, bad.find('='))) != std::string::npos);
  }
}

TEST_CASE("parse_options: --armi-watchdog takes seconds", "[options][watchdog]") {
  clean_env env;
  fake_argv a{"prog", "--armi-watchdog=2.5"};
  CHECK(parse(a).watchdog == 2.5);
  fake_argv b{"prog"};
  CHECK(parse(b).watchdog == 0);
  env.set("ARMI_WATCHDOG", "30");
  fake_argv c{"prog"};
  CHECK(parse(c).watchdog == 30);
  for (std::string const bad : {"--armi-watchdog=-1", "--armi-watchdog=abc", "--armi-watchdog=1.2.3",
                                "--armi-watchdog=.", "--armi-watchdog", "--armi-watchdog=1e9", "--armi-watchdog=90000"}) {
    INFO(bad);
    std::string const e = parse_error({"prog", bad});
    CHECK(one_line(e));
    CHECK(e.find("--armi-watchdog") != std::string::npos);
  }
}
