#pragma once

#include <boost/json/value.hpp>

namespace pos {

/// True when a string or key anywhere in `value` holds a NUL character, which PostgreSQL text and jsonb cannot
/// store (the raw request is kept as jsonb). Pure.
bool contains_nul(const boost::json::value& value);

}  // namespace pos
