#pragma once

#include <chrono>
#include <string>

#include "hub/verify/report.hpp"
#include "hub/verify/rules.hpp"

namespace hub::verify {

/// How the run talks to the POS.
struct RunOptions {
    std::string ca_file;                                ///< PEM trust anchors for https; empty: the system store
    std::chrono::milliseconds forward_timeout{15'000};  ///< the hub's forward time-out: slower answers are flagged
};

/// Runs every rule of rules() in order against the POS of `settings`, one request at a time, through the hub's
/// outbound HTTP client (the forwarder's TLS: SNI, certificate chain and host name verified against `ca_file` or
/// the system store). Once the POS cannot be reached at all (rules.hpp: unreachable()), the rules still to come
/// are not checked. Blocks until done; bounded in time by the client's time-outs (connect 5 s, TLS handshake 5 s,
/// write 10 s, read the forward time-out plus 15 s, so that a slow answer is still measured) times 14 requests.
Report run(const Settings& settings, const RunOptions& options);

}  // namespace hub::verify
