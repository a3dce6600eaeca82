#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "hub/forward/job_state.hpp"

namespace hub::forward {

/// What a POS answer means for the job (product.md section 6).
enum class Verdict {
    delivered,     ///< 2xx with success: true and an order_id
    unauthorized,  ///< 401: log in again once when credentials are stored, else auth_failed
    rejected,      ///< a permanent refusal (400, 403, 404, 409, 422 and other 4xx; 2xx without success)
    retry,         ///< 408, 429, 5xx, time-outs, refused or broken connections
};

struct Classified {
    Verdict verdict = Verdict::retry;
    std::string reason;                               ///< for last_error and the attempt log
    std::string pos_order_id;                         ///< when delivered
    std::optional<std::chrono::seconds> retry_after;  ///< from a Retry-After header in seconds
};

/// Classifies an HTTP answer (`status` with `body` and the Retry-After header value, if any).
Classified classify_response(unsigned status, std::string_view body, std::optional<std::string_view> retry_after);

/// Classifies a transport failure (no HTTP answer): retried, except a URL that cannot work (rejected).
Classified classify_failure(bool bad_url, std::string_view error);

/// How a login (`POST /api/login`) ended: a token; or a refusal (`retry` false: the job is auth_failed); or a POS
/// that could not answer (no answer, 408, 429, 5xx: `retry`, the job is tried again later like any delivery).
struct LoginAnswer {
    std::optional<std::string> token;
    bool retry = false;
    std::string reason;
};

/// Classifies a login's answer: `status` 0 when none arrived (then `failure` says why; `bad_url` for a URL that
/// cannot work), else the HTTP status and body.
LoginAnswer classify_login(unsigned status, std::string_view body, bool bad_url, std::string_view failure);

/// Attempts before a job is `dead`.
inline constexpr int kMaxAttempts = 12;

/// How a claim ends, from the verdict of its last exchange (the answer table of product.md section 6).
struct Decision {
    JobState state = JobState::pending;  ///< delivered, rejected, auth_failed, pending (retry later) or dead
    std::chrono::milliseconds delay{0};  ///< for pending: the back-off before the next attempt
    std::string error;                   ///< last_error (empty when delivered)
    std::string pos_order_id;            ///< when delivered
};

/// The next state of a job whose attempt number `attempt` ended in `outcome`: delivered; rejected; auth_failed
/// (a 401 that a login could not cure); a retry after backoff(attempt, jitter, Retry-After), or dead once
/// `attempt` reached kMaxAttempts.
Decision decide(const Classified& outcome, int attempt, double jitter);

/// The wait before the next attempt after `failed_attempts` (1 = the first attempt failed): 1 s doubling to
/// 5 min, times (1 + 0.2 * jitter) with jitter in [-1, 1]; at least `retry_after` when the POS asked for it
/// (capped at 1 hour).
std::chrono::milliseconds backoff(int failed_attempts, double jitter,
                                  std::optional<std::chrono::seconds> retry_after = std::nullopt);

}  // namespace hub::forward
