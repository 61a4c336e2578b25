// armi::view<T>: a target's parameter that reads a request's elements in
// place, without a copy (defined with the serialization it is part of).
#pragma once

#include <armi/serialization/view.hpp>
