// Corrupted traffic on the sp2 backend is rejected with a clear message and
// never executed: an armi handler id no handler table holds (arriving
// through SP-AM bulk messages, like any request from another node), a
// one-sided operation with an unknown code (to the SP-AM handler that serves
// global_array operations) and a result for an operation never sent, a
// packet
// naming an AM handler id the node never registered, and a packet whose
// header fails its check word.
//
// clang-format off
// CASE: armi_handler_id | --armi-backend=sp2 --armi-locations=2 armi | armi: location 1: malformed buffer from location 0 .*unknown handler id 703710 .not executed
// CASE: armi_handler_id_faults | --armi-backend=sp2 --armi-locations=2 --armi-sp2-drop=0.2 --armi-sp2-dup=0.2 armi | unknown handler id 703710 .not executed
// CASE: one_sided_code | --armi-backend=sp2 --armi-locations=2 one-sided | armi: sp2: node 1: malformed message from node 0: a one-sided operation with an unknown code .not executed
// CASE: one_sided_result | --armi-backend=sp2 --armi-locations=2 one-sided-range | armi: sp2: node 0: malformed message from node 1: a one-sided result for no operation in flight .not executed
// RUN: one_sided_sizes | --armi-backend=sp2 --armi-locations=2 one-sided-sizes | sp2_corrupt: std::out_of_range: location 1: a one-sided operation on bytes .24, 32. of a block of 16 bytes
// CASE: am_handler_id | am-handler | armi: sp2: node 1: corrupted packet from the wire .*unknown AM handler id 77 from node 0 .not acted on
// CASE: check_word | check-word | armi: sp2: node 1: corrupted packet from the wire .*header check word mismatch .not acted on
// RUN: intact | intact | sp2_corrupt: delivered
// clang-format on
#include <armi/armi.hpp>
#include <armi/backend/sp2/am.hpp>
#include <armi/backend/sp2/transport.hpp>
#include <armi/global_array.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace sp2 = armi::detail::sp2;

namespace {

// A one-packet message from node 0 to node 1's handler `handler`, as the
// wire would carry it.
std::vector<std::byte> packet(std::uint8_t handler) {
  sp2::packet_header h;
  h.src = 0;
  h.dst = 1;
  h.seq = 1;
  h.ack = 1;
  h.window = 65;
  h.kind = sp2::packet_kind::data;
  h.handler = handler;
  h.flags = sp2::flag_first | sp2::flag_last;
  h.length = 4;
  h.message_bytes = 4;
  sp2::seal(h);
  std::vector<std::byte> bytes(sizeof h + 4, std::byte{0x5a});
  std::memcpy(bytes.data(), &h, sizeof h);
  return bytes;
}

int raw(std::string const& what) {
  sp2::memory_wire w(2);
  sp2::node receiver(1, w, sp2::machine{});
  bool delivered = false;
  receiver.set_handler(1, [&](sp2::call&, std::byte const*, std::size_t n) { delivered = n == 4; });
  auto bytes = packet(what == "am-handler" ? 77 : 1);
  if (what == "check-word") bytes[12] ^= std::byte{0x40};  // a bit of the acknowledgement
  w.put(1, bytes.data(), bytes.size());
  receiver.poll();
  std::printf("sp2_corrupt: %s\n", delivered ? "delivered" : "not delivered");
  return delivered ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) != "armi") return raw(argv[1]);
  return armi::execute(argc, argv, [](int ac, char** av) {
    std::string const mode = ac > 1 ? av[ac - 1] : "armi";
    if (mode == "one-sided-sizes") {
      // Blocks of different sizes (a misuse the caller cannot see): the
      // owner refuses the get past its block, and the caller's future throws.
      armi::global_array<std::uint64_t> a(armi::get_location_id() == 0 ? 4 : 2);
      if (armi::get_location_id() == 0) {
        try {
          (void)armi::rget(a.pointer(1, 3)).get();
        } catch (armi::remote_error const& e) {
          std::printf("sp2_corrupt: %s: %s\n", e.type_name().c_str(), e.what());
        }
      }
      armi::rmi_fence();
      return;
    }
    if (mode != "armi") {
      // A forged one-sided operation, straight to node 1's SP-AM handler:
      // an unknown code, or a get past the end of a 2-element block.
      armi::global_array<std::uint64_t> a(2);
      if (armi::get_location_id() == 0) {
        armi::detail::remote_op const op{armi::detail::remote_code::get, 1, a.get_rmi_handle().index, 16};
        std::vector<std::byte> message;
        armi::detail::write_remote_header(message, op);
        if (mode == "one-sided") message[0] = std::byte{0x07};
        std::uint64_t const bytes = 8;
        message.resize(message.size() + 8);
        std::memcpy(message.data() + 8, &bytes, 8);
        auto& tr = dynamic_cast<armi::detail::sp2_transport&>(armi::detail::current("test").transport_of());
        tr.node().request(1, armi::detail::sp2_transport::remote_handler, message.data(), message.size());
      }
      armi::rmi_fence();
      return;
    }
    if (armi::get_location_id() == 0) {
      auto& self = armi::detail::current("test");
      armi::detail::request_header h{};
      h.handler = 703710;  // 0xabcde: no handler table holds it
      self.begin_request(1, armi::detail::rmi_kind::async, h, 0);
      self.end_request(1, false);
      self.flush(1, armi::detail::flush_cause::flush);
    }
    armi::rmi_fence();
  });
}
