#pragma once

// The fast path of webhook validation: a body of the interface's plain shape read straight from its text into the
// order, with no document in between (docs/performance.md).
//
// It accepts only what the full path (common::json::parse_strict, then validate_webhook) accepts, and gives the same
// Validated; anything else it declines, and the full path reads the body again and names every problem in its
// words. It declines every refused body, and also valid ones outside the plain shape: an unknown member anywhere,
// `payload` before `event`, a key in pieces (an escape in a key), a number in pieces or one that is not an integer
// of int64 or a plain decimal fraction of at most 15 digits (an exponent, say). tests/unit/plain_webhook_test.cpp
// and tests/fuzz/fuzz_webhook.cpp hold it to the full path.

#include <string_view>

#include "hub/ingest/validate.hpp"

namespace hub::ingest {

/// Reads `body` into `out` (an empty Validated) when it is a valid webhook of the plain shape above: true, `out`
/// equal to what validate_webhook() gives for its document. False otherwise, `out` then left in no useful state.
bool read_plain_webhook(std::string_view body, Validated& out);

}  // namespace hub::ingest
