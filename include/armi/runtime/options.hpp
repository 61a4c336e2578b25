// Run-time options: --armi-* flags, ARMI_* environment variables, defaults.
// A flag wins over the environment; parse_options() removes the flags it
// consumed from argv so the user's program never sees them.
#pragma once

#include <armi/backend/sp2/model.hpp>
#include <armi/core/config.hpp>

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace armi {

/// An unknown `--armi-` flag, or a malformed value of a flag or an `ARMI_*` variable.
///
/// Thrown by parse_options.  what() is one line naming the flag (or variable) and what
/// is wrong with it; armi::execute prints it and returns exit status 2.
struct option_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An aggregation factor meaning "auto": the runtime picks each destination's factor
/// online, from how fast its buffers fill.
///
/// Accepted wherever a factor is: config::aggregation and its local and remote
/// variants, set_aggregation, and `--armi-aggregation=auto`.
inline constexpr std::size_t aggregation_auto = SIZE_MAX;

/// How a run is configured: backend, locations, aggregation, diagnostics.
///
/// parse_options fills one from the `--armi-*` flags and `ARMI_*` variables, and
/// armi::execute(argc, argv, fn) runs with it; a program that builds its own passes
/// it to armi::execute(cfg, fn).  Each member names the option that sets it; the
/// options page of the guide (docs/guide/options.md) lists their values and defaults.
/// A plain value: no member is checked until the run starts.
struct config {
  /// `--armi-backend`: threads, sp2, or (with armi::mpi) mpi or mixed.
  std::string backend = "threads";
  /// True when `--armi-backend` or ARMI_BACKEND set #backend; otherwise a run started by
  /// `mpiexec -n` > 1 uses mpi (see effective_backend).
  bool backend_given = false;
  /// `--armi-locations`: locations (threads) per process; 0 means the hardware threads,
  /// shared among the ranks of a node (see effective_locations).
  std::uint32_t locations = 0;
  /// `--armi-aggregation`: most requests per buffer; 1 = no aggregation, or aggregation_auto.
  std::size_t aggregation = 64;
  /// `--armi-aggregation-local`: the factor to this process's locations; 0 = #aggregation.
  std::size_t aggregation_local = 0;
  /// `--armi-aggregation-remote`: the factor to other processes' locations; 0 = #aggregation.
  std::size_t aggregation_remote = 0;
  /// `--armi-buffer-bytes`: byte cap of one aggregation buffer.
  std::size_t buffer_bytes = 32768;
  /// True when `--armi-buffer-bytes` or ARMI_BUFFER_BYTES set #buffer_bytes; otherwise the
  /// mpi and mixed backends cap buffers to other ranks at 8192 bytes (MPI's eager limit).
  bool buffer_bytes_given = false;
  /// `--armi-max-delay` in nanoseconds: the longest a request waits in a buffer; 0 = no bound.
  std::int64_t max_delay_ns = 0;
  /// `--armi-tree-arity`: children per node of the trees the collectives (and, on sp2, the
  /// fence's sums) run over.
  std::uint32_t tree_arity = 4;
  /// `--armi-routing`: `direct` (a buffer per destination), `grid` (through the location
  /// of this one's row in the destination's column) or `node` (through a location of this
  /// node that aggregates for the destination's node).
  std::string routing = "direct";
  /// `--armi-progress`: `poll` (a location serves requests only inside armi calls) or
  /// `thread` (a communication thread per process also serves locations busy in their own code).
  std::string progress = "poll";
  /// `--armi-progress-interval` in nanoseconds: how often the communication thread looks.
  std::int64_t progress_interval_ns = 1'000'000;
  /// `--armi-stats`: collect per-location statistics and report them at exit.
  bool stats = false;
  /// `--armi-stats=json:FILE`: write the statistics as JSON into this file; empty = a
  /// table on stderr.
  std::string stats_json;
  /// `--armi-trace=FILE`: write a Chrome trace-event JSON of the run; empty = no trace.
  std::string trace;
  /// `--armi-watchdog`: seconds a location may wait without progress before every
  /// location's wait is reported and the run ends; 0 = off.
  double watchdog = 0;
  /// `--armi-mpi-shm`: on the mpi backend, ranks of one node exchange buffers through
  /// shared memory; on mpi and mixed, they share global_array blocks.
  bool mpi_shm = true;
  /// `--armi-mpi-rma`: on the mpi and mixed backends, one-sided gets and puts to ranks
  /// outside the node's shared windows go by MPI-3 RMA instead of a request to the owner.
  bool mpi_rma = false;
  /// `--armi-heartbeat`: on mpi and mixed, seconds after which a host that has sent no
  /// heartbeat ends the job with a message naming it; 0 = no heartbeats.
  double heartbeat = 4;
  /// `--armi-help`: armi::execute prints options_help() and returns 0 without running.
  bool help = false;
  /// `--armi-sp2-mode`: how the sp2 backend runs its nodes, `threads` or `process`.
  std::string sp2_mode = "threads";
  /// `--armi-sp2-*`: the emulated SP2's queues, cost model and fault rates.
  sp2_machine sp2;

  /// The number of locations a run with this configuration gets: #locations, or the
  /// hardware threads (at least 1) when it is 0.
  std::uint32_t effective_locations() const {
    if (locations != 0) return locations;
    unsigned const hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : hw;
  }
};

namespace detail {

// One run-time option.  option_specs is the one table of them: the parser
// reads the environment from it, options_help() prints it for --armi-help and
// options_markdown() renders it for docs/guide/options.md (the test
// unit.options_doc checks that page against it).  A new option is a row here
// plus its case in apply_option.
struct option_spec {
  std::string_view flag;          // without the leading "--armi-"
  std::string_view env;           // empty: no environment variable
  std::string_view value_name;    // empty: a switch; "[...]" (in brackets): the value is optional
  std::string_view default_text;  // empty: nothing to say
  std::string_view help;          // one line for --armi-help; the table's meaning
  std::string_view doc = {};      // more for the options page only, appended to help there
};

inline constexpr option_spec option_specs[] = {
    {"backend", "ARMI_BACKEND", "NAME", "threads; mpi under mpiexec -n >1",
     "backend to run on: threads, sp2 (an emulated IBM SP2, one location per node), or mpi and mixed "
     "(ranks x threads) in programs linked with armi::mpi"},
    {"locations", "ARMI_LOCATIONS", "N", "hardware threads",
     "locations (threads) per process, 1..4096 (mixed: per rank; default: the node's hardware threads / its ranks)"},
    {"aggregation", "ARMI_AGGREGATION", "N|auto", "64",
     "most requests per aggregation buffer, 1 = no aggregation; auto: adjusted online per destination from "
     "how fast its buffers fill (sets both of the next two)"},
    {"aggregation-local", "ARMI_AGGREGATION_LOCAL", "N|auto", "--armi-aggregation",
     "the same, for destinations in this process (threads of a rank)"},
    {"aggregation-remote", "ARMI_AGGREGATION_REMOTE", "N|auto", "--armi-aggregation",
     "the same, for destinations in other processes (mpi, mixed)"},
    {"buffer-bytes", "ARMI_BUFFER_BYTES", "N", "32768; 8192 to other ranks on mpi and mixed (MPI's eager limit)",
     "byte cap of one aggregation buffer, 64..2^30 (when given: to every destination)",
     "The mpi and mixed default keeps a full buffer under MPICH's eager limit; a larger one would go by "
     "rendezvous, a round trip more. Unless given, the cap is also at most 256 MiB over the buffers a process "
     "may hold open (its locations times their destinations, or next hops under --armi-routing): it binds "
     "only at thousands of locations per process."},
    {"max-delay", "ARMI_MAX_DELAY", "US", "0 (off)",
     "a buffered request is sent within about this many microseconds (up to 1e6) while its location runs armi "
     "code (RMIs, polls, waits); a location busy elsewhere sends nothing",
     "It bounds the wait with fixed factors and with auto alike."},
    {"tree-arity", "ARMI_TREE_ARITY", "K", "4",
     "children per node of the trees that broadcast_rmi, reduce_rmi, allreduce_rmi and, on sp2, rmi_fence's sums "
     "run over, 1..4096 (1: a chain; P - 1 or more: a star)",
     "Each member sends and receives at most K + 1 messages per collective, over about log_K(P) levels."},
    {"routing", "ARMI_ROUTING", "direct|grid|node", "direct",
     "how requests travel: direct (one buffer per destination), grid (locations on a near-square grid; a request "
     "goes along its row, then down the destination's column), node (rows are nodes: a request to another node "
     "goes through the location of this node that aggregates for the destination's column there)",
     "Under grid and node a location aggregates for about 2 sqrt(P) next hops instead of P destinations, so "
     "buffers fill P/2sqrt(P) times faster under sparse traffic, at the cost of a second hop per request. A "
     "request's path is fixed (per-pair order holds) and at most two hops long; a location passes requests on "
     "while it runs armi code, as it serves them. node on threads and sp2, with one node or one location per "
     "node, goes direct."},
    {"progress", "ARMI_PROGRESS", "poll|thread", "poll",
     "who serves a location's requests: poll (the location itself, inside armi calls) or thread (also a "
     "communication thread per process, while the location runs its own code)",
     "Under thread, requests and continuations may run while their location computes outside armi; code that "
     "touches state requests change holds them off with armi::hold_requests (docs/guide/progress.md). The thread "
     "sleeps between looks, and looks at a location only once it has made no armi call for a whole interval."},
    {"progress-interval", "ARMI_PROGRESS_INTERVAL", "US", "1000",
     "--armi-progress=thread: how often (in microseconds, 10..1e6) the communication thread looks for locations "
     "busy in their own code, serves them, and sends their partly filled buffers"},
    {"stats", "ARMI_STATS", "[json:FILE]", "off",
     "per-location statistics at exit: a table on stderr, or JSON written to FILE"},
    {"trace", "ARMI_TRACE", "FILE", "off",
     "write a Chrome trace-event JSON (fences, waits, flushes, sampled executions; one track per location)",
     "Open it in chrome://tracing or Perfetto."},
    {"watchdog", "ARMI_WATCHDOG", "SECONDS", "0 (off)",
     "a location blocked this long without progress prints what every location waits on, then ends the run"},
    {"heartbeat", "ARMI_HEARTBEAT", "SECONDS", "4",
     "mpi and mixed across hosts: the hosts send each other heartbeats, and a host not heard from for this long "
     "(its link cut, its processes gone or stopped) ends the job with a message naming its rank and host; 0: off",
     "One thread per host, blocked between beats, on TCP connections of its own in a ring of the hosts; it does "
     "not depend on the locations calling armi, so a location that computes for a long time is never taken for "
     "a dead one."},
    {"mpi-shm", "ARMI_MPI_SHM", "on|off", "on",
     "mpi backend: ranks on one node copy small buffers through shared memory, and announce larger ones there "
     "(off: every buffer is an MPI message); mpi and mixed: ranks on one node reach each other's global_array "
     "blocks by address (off: as other nodes' blocks)",
     "Buffers up to 128 KiB are copied; off makes ranks of one node talk as ranks of different nodes do."},
    {"mpi-rma", "ARMI_MPI_RMA", "on|off", "off",
     "mpi and mixed backends: global_array gets and puts to ranks outside this node's shared windows go by "
     "MPI-3 RMA (MPI_Rget, MPI_Raccumulate) instead of a request that the owner's runtime serves; atomics stay "
     "requests",
     "Off by default: over TCP (UCX tcp, no RDMA) MPICH carries RMA as messages that the owner's MPI calls "
     "serve, and an 8-byte get between two emulated hosts took about 4x a sync_rmi (docs/results.md); with RDMA "
     "the owner need not poll."},
    {"sp2-mode", "ARMI_SP2_MODE", "MODE", "threads",
     "sp2 backend: how nodes run; threads (threads of this process, linked in memory) or process (one "
     "process per node, linked by local sockets; needs Boost.Asio)"},
    {"sp2-drop", "ARMI_SP2_DROP", "P", "0", "sp2: probability in [0, 1) that a packet transmission is lost"},
    {"sp2-dup", "ARMI_SP2_DUP", "P", "0", "sp2: probability in [0, 1) that a packet arrives twice"},
    {"sp2-delay", "ARMI_SP2_DELAY", "P", "0", "sp2: probability in [0, 1) that a packet is held back behind later ones"},
    {"sp2-seed", "ARMI_SP2_SEED", "S", "1", "sp2: seed of the fault injection (same seed, same faults)"},
    {"sp2-packet-bytes", "ARMI_SP2_PACKET_BYTES", "N", "256", "sp2: packet size including the 40-byte header, 57..65535"},
    {"sp2-send-queue", "ARMI_SP2_SEND_QUEUE", "N", "128", "sp2: send queue entries (packets) per node, 1..65536"},
    {"sp2-recv-queue", "ARMI_SP2_RECV_QUEUE", "N", "64", "sp2: receive queue entries per node and peer, 1..65536"},
    {"sp2-send-overhead", "ARMI_SP2_SEND_OVERHEAD", "US", "4.2", "sp2 model: processor time to send a packet (us)"},
    {"sp2-recv-overhead", "ARMI_SP2_RECV_OVERHEAD", "US", "4.2", "sp2 model: processor time to receive a packet (us)"},
    {"sp2-latency", "ARMI_SP2_LATENCY", "US", "15", "sp2 model: wire latency of a packet (us)"},
    {"sp2-gap", "ARMI_SP2_GAP", "US", "0.025", "sp2 model: time per byte on the wire (us; 0.025 = 40 MB/s)"},
    {"sp2-handler", "ARMI_SP2_HANDLER", "US", "1", "sp2 model: dispatching a message to its handler (us)"},
    {"sp2-bulk-overhead", "ARMI_SP2_BULK_OVERHEAD", "US", "15.1", "sp2 model: extra cost of a bulk message (us)"},
    {"help", "", "", "", "print these options and exit"},
};

// How a flag is written: --armi-NAME=VALUE, --armi-NAME[=VALUE] for an
// optional value, --armi-NAME for a switch.
inline std::string option_synopsis(option_spec const& o) {
  std::string flag = "--armi-" + std::string(o.flag);
  if (o.value_name.starts_with('['))
    flag += "[=" + std::string(o.value_name.substr(1));
  else if (!o.value_name.empty())
    flag += "=" + std::string(o.value_name);
  return flag;
}

// The options table as Markdown (Flag, Environment, Default, Meaning), the
// table of docs/guide/options.md: the same rows as --armi-help, with each
// row's doc text after its help text.
inline std::string options_markdown() {
  // A bar would end the cell: escape it.  Inside a code span doxygen 1.9
  // would print the backslash, so a flag's code span is closed around it.
  auto cell = [](std::string_view text, std::string_view bar = "\\|") {
    std::string out;
    for (char c : text) {
      if (c == '|')
        out += bar;
      else
        out += c;
    }
    return out;
  };
  // A default that is another flag is code (doxygen would print its -- as a dash).
  auto default_cell = [&](std::string_view text) {
    if (text.empty()) return std::string("–");
    if (text.starts_with("--armi-")) return "`" + std::string(text) + "`";
    return cell(text);
  };
  std::string s =
      "| Flag | Environment | Default | Meaning |\n"
      "|------|-------------|---------|---------|\n";
  for (auto const& o : option_specs) {
    std::string meaning(o.help);
    if (!o.doc.empty()) meaning += ". " + std::string(o.doc);
    s += "| `" + cell(option_synopsis(o), "`\\|`") + "` | " + (o.env.empty() ? "–" : "`" + std::string(o.env) + "`") +
         " | " + default_cell(o.default_text) + " | " + cell(meaning) + " |\n";
  }
  return s;
}

inline std::uint64_t parse_unsigned(std::string_view name, std::string_view text, std::uint64_t lo,
                                    std::uint64_t hi) {
  std::string const s(text);
  auto bad = [&](char const* why) {
    return option_error(std::string("--armi-") + std::string(name) + "=" + s + ": " + why);
  };
  if (s.empty()) throw bad("missing value");
  for (char c : s)
    if (c < '0' || c > '9') throw bad("not a non-negative integer");
  errno = 0;
  unsigned long long const v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi)
    throw bad(("out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]").c_str());
  return v;
}

// A non-negative decimal number of seconds (0.5, 30), at most a day.
inline double parse_seconds(std::string_view name, std::string_view text) {
  std::string const s(text);
  auto bad = [&](char const* why) {
    return option_error(std::string("--armi-") + std::string(name) + "=" + s + ": " + why);
  };
  bool digits = false, point = false;
  for (char c : s) {
    if (c >= '0' && c <= '9')
      digits = true;
    else if (c == '.' && !point)
      point = true;
    else
      throw bad("not a number of seconds");
  }
  if (!digits) throw bad("not a number of seconds");
  double const v = std::strtod(s.c_str(), nullptr);
  if (v > 86400) throw bad("more than a day");
  return v;
}

// A non-negative decimal number (0.5, 30) no larger than max.
inline double parse_decimal(std::string_view name, std::string_view text, double max, char const* what) {
  std::string const s(text);
  auto bad = [&](std::string const& why) {
    return option_error(std::string("--armi-") + std::string(name) + "=" + s + ": " + why);
  };
  bool digits = false, point = false;
  for (char c : s) {
    if (c >= '0' && c <= '9')
      digits = true;
    else if (c == '.' && !point)
      point = true;
    else
      throw bad(std::string("not ") + what);
  }
  if (!digits) throw bad(std::string("not ") + what);
  double const v = std::strtod(s.c_str(), nullptr);
  if (v > max) throw bad("more than " + std::to_string(max));
  return v;
}

// A probability in [0, 1).
inline double parse_probability(std::string_view name, std::string_view text) {
  double const v = parse_decimal(name, text, 1, "a probability");
  if (v >= 1)
    throw option_error("--armi-" + std::string(name) + "=" + std::string(text) +
                       ": a probability must be below 1 (a packet that is always lost never arrives)");
  return v;
}

// Microseconds (up to a second) to whole nanoseconds.
inline std::int64_t parse_micros(std::string_view name, std::string_view text) {
  return std::llround(parse_decimal(name, text, 1e6, "a number of microseconds") * 1000.0);
}

// An aggregation factor, 1..2^24, or auto.
inline std::size_t parse_aggregation(std::string_view name, std::string_view text) {
  if (text == "auto") return aggregation_auto;
  if (!text.empty() && (text[0] < '0' || text[0] > '9'))
    throw option_error("--armi-" + std::string(name) + "=" + std::string(text) +
                       ": not a number of requests or auto");
  return parse_unsigned(name, text, 1, std::uint64_t{1} << 24);
}

inline bool parse_switch(std::string_view name, std::string_view text) {
  if (text.empty() || text == "1" || text == "on" || text == "yes" || text == "true") return true;
  if (text == "0" || text == "off" || text == "no" || text == "false") return false;
  throw option_error("--armi-" + std::string(name) + "=" + std::string(text) + ": expected on or off");
}

// The sp2 cost-model member a --armi-sp2-<cost> flag sets, or nullptr.
inline std::int64_t sp2::cost_model::*sp2_cost_field(std::string_view name) {
  using cost = sp2::cost_model;
  static constexpr std::pair<std::string_view, std::int64_t cost::*> fields[] = {
      {"sp2-send-overhead", &cost::send_overhead_ns}, {"sp2-recv-overhead", &cost::recv_overhead_ns},
      {"sp2-latency", &cost::latency_ns},             {"sp2-gap", &cost::gap_ns_per_byte},
      {"sp2-handler", &cost::handler_ns},             {"sp2-bulk-overhead", &cost::bulk_overhead_ns}};
  for (auto const& [flag, field] : fields)
    if (flag == name) return field;
  return nullptr;
}

// Applies one option (from a flag or the environment) to cfg.
inline void apply_option(config& cfg, std::string_view name, std::string_view value, bool has_value) {
  auto need_value = [&] {
    if (!has_value || value.empty())
      throw option_error("--armi-" + std::string(name) + " needs a value: --armi-" + std::string(name) + "=VALUE");
  };
  auto need_diagnostics = [&] {
    if (!has_diagnostics)
      throw option_error("--armi-" + std::string(name) +
                         ": this program was built with ARMI_DIAGNOSTICS=0 (no statistics, traces or watchdog)");
  };
  if (name == "backend") {
    need_value();
    bool const compiled = value == "threads" || (has_sp2_backend && value == "sp2") ||
                          (has_mpi_backend && (value == "mpi" || value == "mixed"));
    if (!compiled) {
      std::string const available = std::string(" (available: ") + compiled_backends + ")";
      if (value == "mpi" || value == "mixed")
        throw option_error("--armi-backend=" + std::string(value) +
                           ": this program was not built with MPI (link armi::mpi)" + available);
      if (value == "sp2")
        throw option_error("--armi-backend=sp2: this program was built header-only without the sp2 emulator (link "
                           "armi::armi, or build with -DARMI_HAS_SP2=1)" +
                           available);
      throw option_error("--armi-backend=" + std::string(value) + ": unknown backend" + available);
    }
    cfg.backend = std::string(value);
    cfg.backend_given = true;
  } else if (name == "locations") {
    need_value();
    cfg.locations = static_cast<std::uint32_t>(parse_unsigned(name, value, 1, 4096));
  } else if (name == "aggregation") {
    need_value();
    cfg.aggregation = parse_aggregation(name, value);
  } else if (name == "aggregation-local") {
    need_value();
    cfg.aggregation_local = parse_aggregation(name, value);
  } else if (name == "aggregation-remote") {
    need_value();
    cfg.aggregation_remote = parse_aggregation(name, value);
  } else if (name == "tree-arity") {
    need_value();
    cfg.tree_arity = static_cast<std::uint32_t>(parse_unsigned(name, value, 1, 4096));
  } else if (name == "progress") {
    need_value();
    if (value != "poll" && value != "thread")
      throw option_error("--armi-progress=" + std::string(value) + ": expected poll or thread");
    cfg.progress = std::string(value);
  } else if (name == "progress-interval") {
    need_value();
    cfg.progress_interval_ns = parse_micros(name, value);
    if (cfg.progress_interval_ns < 10'000)
      throw option_error("--armi-progress-interval=" + std::string(value) + ": expected 10 to 1000000 microseconds");
  } else if (name == "routing") {
    need_value();
    if (value != "direct" && value != "grid" && value != "node")
      throw option_error("--armi-routing=" + std::string(value) + ": expected direct, grid or node");
    cfg.routing = std::string(value);
  } else if (name == "buffer-bytes") {
    need_value();
    cfg.buffer_bytes = parse_unsigned(name, value, 64, std::uint64_t{1} << 30);
    cfg.buffer_bytes_given = true;
  } else if (name == "max-delay") {
    need_value();
    cfg.max_delay_ns = parse_micros(name, value);
  } else if (name == "watchdog") {
    need_value();
    cfg.watchdog = parse_seconds(name, value);
    if (cfg.watchdog > 0) need_diagnostics();
  } else if (name == "trace") {
    need_value();
    cfg.trace = std::string(value);
    need_diagnostics();
  } else if (name == "stats") {
    if (value.starts_with("json:")) {
      if (value.size() == 5) throw option_error("--armi-stats=json: needs a file name: --armi-stats=json:FILE");
      cfg.stats = true;
      cfg.stats_json = std::string(value.substr(5));
    } else {
      cfg.stats = parse_switch(name, value);
      cfg.stats_json.clear();
    }
    if (cfg.stats) need_diagnostics();
  } else if (name == "mpi-shm") {
    cfg.mpi_shm = parse_switch(name, value);
  } else if (name == "mpi-rma") {
    cfg.mpi_rma = parse_switch(name, value);
  } else if (name == "heartbeat") {
    need_value();
    cfg.heartbeat = parse_seconds(name, value);
  } else if (name == "sp2-mode") {
    need_value();
    if (value == "process" && !has_sp2_process_mode)
      throw option_error("--armi-sp2-mode=process: this program was built without Boost.Asio, which the process "
                         "mode needs (link armi::armi, or build header-only with -DARMI_HAS_BOOST_ASIO=1; "
                         "Debian: apt-get install libboost-dev)");
    if (value != "threads" && value != "process")
      throw option_error("--armi-sp2-mode=" + std::string(value) + ": unknown mode (available: threads, process)");
    cfg.sp2_mode = std::string(value);
  } else if (name == "sp2-drop") {
    need_value();
    cfg.sp2.faults.drop = parse_probability(name, value);
  } else if (name == "sp2-dup") {
    need_value();
    cfg.sp2.faults.duplicate = parse_probability(name, value);
  } else if (name == "sp2-delay") {
    need_value();
    cfg.sp2.faults.delay = parse_probability(name, value);
  } else if (name == "sp2-seed") {
    need_value();
    cfg.sp2.faults.seed = parse_unsigned(name, value, 0, UINT64_MAX);
  } else if (name == "sp2-packet-bytes") {
    need_value();
    cfg.sp2.packet_bytes = static_cast<std::uint32_t>(
        parse_unsigned(name, value, detail::sp2::header_bytes + detail::sp2::short_message_bytes + 1, 65535));
  } else if (name == "sp2-send-queue") {
    need_value();
    cfg.sp2.send_queue = static_cast<std::uint32_t>(parse_unsigned(name, value, 1, 65536));
  } else if (name == "sp2-recv-queue") {
    need_value();
    cfg.sp2.recv_queue = static_cast<std::uint32_t>(parse_unsigned(name, value, 1, 65536));
  } else if (auto const field = sp2_cost_field(name)) {
    need_value();
    cfg.sp2.cost.*field = parse_micros(name, value);
  } else if (name == "help") {
    if (has_value) throw option_error("--armi-help takes no value");
    cfg.help = true;
  } else {
    throw option_error("unknown option --armi-" + std::string(name) + " (see --armi-help)");
  }
}

}  // namespace detail

/// Reads the run's configuration from the `ARMI_*` environment and the `--armi-*` flags.
///
/// A flag wins over its variable.  The flags are removed from argv and argc is updated:
/// the other arguments keep their order and argv[argc] stays a null pointer, so the
/// program parses its own arguments afterwards as if armi's were never there.
/// armi::execute(argc, argv, fn) calls it; call it directly to inspect or change the
/// configuration before armi::execute(cfg, fn).  Not thread-safe (it reads the
/// environment and writes argv); call it once, before any location runs.
/// @throws option_error for an unknown `--armi-` flag or a malformed value.
inline config parse_options(int& argc, char** argv) {
  config cfg;
  for (auto const& spec : detail::option_specs) {
    if (spec.env.empty()) continue;
    if (char const* v = std::getenv(std::string(spec.env).c_str())) {
      try {
        detail::apply_option(cfg, spec.flag, v, true);
      } catch (option_error const& e) {
        throw option_error(std::string(spec.env) + "=" + v + ": " + e.what());
      }
    }
  }
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view const arg = argv[i] != nullptr ? argv[i] : "";
    if (arg.substr(0, 7) != "--armi-") {
      argv[out++] = argv[i];
      continue;
    }
    std::string_view body = arg.substr(7);
    auto const eq = body.find('=');
    bool const has_value = eq != std::string_view::npos;
    std::string_view const name = body.substr(0, eq);
    std::string_view const value = has_value ? body.substr(eq + 1) : std::string_view{};
    detail::apply_option(cfg, name, value, has_value);
  }
  if (argc > 0) argv[out] = nullptr;
  argc = argc > 0 ? out : argc;
  return cfg;
}

/// The `--armi-help` text: every option with its environment variable, meaning and default.
///
/// The same table feeds parse_options and the guide's options page, so the three agree.
inline std::string options_help() {
  std::string s = "armi options (flag, environment variable, default); a flag wins over the environment:\n";
  for (auto const& o : detail::option_specs) {
    std::string flag = "  " + detail::option_synopsis(o);
    if (flag.size() < 32) flag.resize(32, ' ');
    std::string env = std::string(o.env.empty() ? "-" : o.env);
    if (env.size() < 24) env.resize(24, ' ');
    s += flag + " " + env + " " + std::string(o.help);
    if (!o.default_text.empty()) s += " [default: " + std::string(o.default_text) + "]";
    s += "\n";
  }
  return s;
}

}  // namespace armi
