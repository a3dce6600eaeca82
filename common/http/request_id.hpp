#pragma once

#include <string>

namespace common::http {

/// A request id unique within the process and unlikely to repeat across processes: 16 hex characters.
std::string new_request_id();

}  // namespace common::http
