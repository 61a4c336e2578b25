// The error messages of a location: cold, out-of-line functions that take
// what they print, so the paths that check stay small.  Those that end the
// run call fatal_exit; the others throw what the caller may catch.  Their
// bodies are at the end, under ARMI_RUNTIME_BODIES (core/config.hpp).
#pragma once

#include <armi/core/config.hpp>
#include <armi/core/error.hpp>
#include <armi/core/handle.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/wire.hpp>
#include <armi/serialization/packer.hpp>

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <typeinfo>

namespace armi::detail::errors {

[[noreturn, gnu::cold]] void bad_destination(location_id dest, char const* what, location_id size);

// Nothing of the request has been written or counted: the caller may go on.
[[noreturn, gnu::cold]] void request_too_large(location_id dest, std::size_t record, std::size_t most);

[[noreturn, gnu::cold]] void no_such_cell(location_id caller);

[[noreturn, gnu::cold]] void outside_execute(char const* what);

[[noreturn, gnu::cold]] void fence_in_request(location_id self);

[[noreturn, gnu::cold]] void malformed(location_id self, location_id source, std::size_t cursor, std::size_t size,
                                       std::string const& why);

// A target that has no one to answer (async, broadcast) threw (called in
// the catch block): the run ends, naming the location, the kind, the
// method's type and the message.
[[noreturn, gnu::cold]] void target_threw(location_id self, handler_entry const& e);

// Decoding gone wrong (called in the catch block): a corrupt size,
// bad_alloc on one, a user unpack function that threw.
[[noreturn, gnu::cold]] void undecodable(location_id self, handler_entry const& e, location_id source);

[[gnu::cold]] std::string unknown_handle_message(location_id self, request_header const& h, std::uint32_t handler,
                                                 location_id source);
[[noreturn, gnu::cold]] void unknown_handle(location_id self, request_header const& h, std::uint32_t handler,
                                            location_id source);

[[noreturn, gnu::cold]] void wrong_target_type(location_id self, request_header const& h, location_id source,
                                               std::string const& actual, std::string const& expected);

#if ARMI_RUNTIME_BODIES
// ---- out of line: inline when header-only, else compiled by <armi/src.hpp> ----

[[gnu::noinline]] ARMI_DECL void bad_destination(location_id dest, char const* what, location_id size) {
  throw std::out_of_range(std::string("armi::") + what + ": destination " + std::to_string(dest) +
                          " is not a location (there are " + std::to_string(size) + ")");
}

[[gnu::noinline]] ARMI_DECL void request_too_large(location_id dest, std::size_t record, std::size_t most) {
  throw std::length_error("armi: a request of " + std::to_string(record) + " bytes (its arguments as sent, and a " +
                          std::to_string(sizeof(request_header)) + "-byte header) to location " + std::to_string(dest) +
                          " is larger than one can be (at most " + std::to_string(most) +
                          " bytes to that location); nothing was sent");
}

[[gnu::noinline]] ARMI_DECL void no_such_cell(location_id caller) {
  throw decode_error("armi: request tag names an answer cell that location " + std::to_string(caller) +
                     " does not have");
}

[[gnu::noinline]] ARMI_DECL void outside_execute(char const* what) {
  throw std::logic_error(std::string("armi::") + what + " called outside armi::execute");
}

[[gnu::noinline]] ARMI_DECL void fence_in_request(location_id self) {
  fatal_exit("location " + std::to_string(self) +
             ": rmi_fence called inside an RMI target (it is collective; "
             "call it from the location's main code)");
}

[[gnu::noinline]] ARMI_DECL void malformed(location_id self, location_id source, std::size_t cursor, std::size_t size,
                                           std::string const& why) {
  fatal_exit("location " + std::to_string(self) + ": malformed buffer from location " + std::to_string(source) +
             " at byte " + std::to_string(cursor) + " of " + std::to_string(size) + ": " + why + " (not executed)");
}

[[gnu::noinline]] ARMI_DECL void target_threw(location_id self, handler_entry const& e) {
  std::string const kind_name = rmi_kind_names[static_cast<std::size_t>(e.kind)];
  std::string const head = "location " + std::to_string(self) + ": exception in " + kind_name + "_rmi target " +
                           (e.is_method() ? method_name(demangle(e.method_mangled_name)) : demangle(e.mangled_name)) +
                           ": ";
  try {
    throw;
  } catch (std::exception const& err) {
    fatal_exit(head + demangle(typeid(err).name()) + ": " + err.what());
  } catch (...) {
    fatal_exit(head + "an exception not derived from std::exception");
  }
}

[[gnu::noinline]] ARMI_DECL void undecodable(location_id self, handler_entry const& e, location_id source) {
  std::string const where = "location " + std::to_string(self) + ": ";
  try {
    throw;
  } catch (decode_error const& err) {
    fatal_exit(where + "malformed request from location " + std::to_string(source) + " for " +
               demangle(e.mangled_name) + ": " + err.what() + " (not executed)");
  } catch (std::exception const& err) {
    fatal_exit(where + "request from location " + std::to_string(source) + " for " + demangle(e.mangled_name) +
               " could not be decoded: " + demangle(typeid(err).name()) + ": " + err.what());
  } catch (...) {
    fatal_exit(where + "request from location " + std::to_string(source) + " for " + demangle(e.mangled_name) +
               " could not be decoded: an exception not derived from std::exception");
  }
}

[[gnu::noinline]] ARMI_DECL std::string unknown_handle_message(location_id self, request_header const& h,
                                                               std::uint32_t handler, location_id source) {
  handler_entry const* e = handler_table::instance().find(handler);
  return "location " + std::to_string(self) + ": RMI to unknown or destroyed handle{" + std::to_string(h.handle_index) +
         "," + std::to_string(h.handle_epoch) + "} from location " + std::to_string(source) + " (" +
         (e ? demangle(e->mangled_name) : std::string("?")) +
         "); was the object destroyed before an rmi_fence, or never registered here?";
}

[[gnu::noinline]] ARMI_DECL void unknown_handle(location_id self, request_header const& h, std::uint32_t handler,
                                                location_id source) {
  fatal_exit(unknown_handle_message(self, h, handler, source));
}

[[gnu::noinline]] ARMI_DECL void wrong_target_type(location_id self, request_header const& h, location_id source,
                                                   std::string const& actual, std::string const& expected) {
  fatal_exit("location " + std::to_string(self) + ": RMI from location " + std::to_string(source) + " targets handle{" +
             std::to_string(h.handle_index) + "," + std::to_string(h.handle_epoch) + "}, which is a " + actual +
             ", not a " + expected);
}

#endif  // ARMI_RUNTIME_BODIES

}  // namespace armi::detail::errors
