#pragma once

#include <chrono>

namespace pos {

/// How repeated failed logins for one email are slowed down: after `max_failures` failures, each less than
/// `window` after the previous one, every further attempt is refused (same 401, no password check) until
/// `window` has passed since the last counted failure. Refused attempts do not extend the lock.
struct LoginThrottleRule {
    int max_failures = 5;
    std::chrono::seconds window{15 * 60};
};

/// The rule orderpos applies (documented in docs/pos.md).
inline constexpr LoginThrottleRule kLoginThrottle{};

/// The stored failures of one email: the count and the time since the last one.
struct LoginFailures {
    int count = 0;
    std::chrono::seconds since_last{0};
};

/// What to do with one login attempt. Attempts are counted before the password is checked (so concurrent
/// attempts cannot slip past the limit); a good login then deletes the count.
struct LoginAttemptDecision {
    bool allowed = false;    ///< check the password
    int count_to_store = 0;  ///< the failure count to store when allowed (this attempt included)
};

/// Decides whether an attempt may check its password, given the email's stored failures. Pure.
LoginAttemptDecision decide_login_attempt(const LoginFailures& failures,
                                          const LoginThrottleRule& rule = kLoginThrottle);

}  // namespace pos
