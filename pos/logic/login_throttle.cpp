#include "pos/logic/login_throttle.hpp"

namespace pos {

LoginAttemptDecision decide_login_attempt(const LoginFailures& failures, const LoginThrottleRule& rule) {
    // Failures older than the window no longer count: the streak starts again.
    const int recent = failures.since_last >= rule.window ? 0 : failures.count;
    if (recent >= rule.max_failures) return {.allowed = false, .count_to_store = failures.count};
    return {.allowed = true, .count_to_store = recent + 1};
}

}  // namespace pos
