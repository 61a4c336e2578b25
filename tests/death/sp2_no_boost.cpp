// A program built without Boost.Asio runs the sp2 backend's threads mode, and
// asking for its process mode is an option error that says what to install.
//
// clang-format off
// CASE: process | --armi-backend=sp2 --armi-sp2-mode=process | armi: error: --armi-sp2-mode=process: this program was built without Boost.Asio.*apt-get install libboost-dev
// RUN: threads | --armi-backend=sp2 --armi-sp2-mode=threads --armi-locations=2 | sp2_no_boost: ran on 2 nodes
// clang-format on
// armi-test: header-only (the option check must see ARMI_HAS_BOOST_ASIO=0)
#define ARMI_HAS_SP2 1
#define ARMI_HAS_BOOST_ASIO 0
#include <armi/armi.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  return armi::execute(argc, argv, [] {
    armi::rmi_fence();
    if (armi::get_location_id() == 0) std::printf("sp2_no_boost: ran on %u nodes\n", armi::get_num_locations());
  });
}
