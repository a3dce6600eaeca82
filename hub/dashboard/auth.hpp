#pragma once

// Pure pieces of the dashboard's authentication: cookies, CSRF tokens, e-mail and password rules, phone masking.
// No I/O; unit-tested in tests/unit/dashboard_test.cpp.

#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/http/message.hpp"

namespace hub::dashboard {

/// Name of the session cookie.
inline constexpr std::string_view kSessionCookie = "orderhub_session";

/// How long a session lasts after login.
inline constexpr std::chrono::hours kSessionLifetime{12};

/// The header that carries the CSRF token on state-changing calls.
inline constexpr std::string_view kCsrfHeader = "X-CSRF-Token";

/// Trimmed, lower-case.
std::string normalize_email(std::string_view email);

/// One `@` with text on both sides, no spaces, at most 254 bytes.
bool plausible_email(std::string_view email);

/// Why a text field cannot reach a query or a log, or nullopt: it is not UTF-8, or it holds a control character
/// (U+0000 to U+001F, U+007F to U+009F). libpq ends a text parameter at its first NUL, so `a@b.c\0x` would be looked
/// up as `a@b.c` while everything else (the login throttle) saw another string; a line feed or an escape would
/// forge or garble a log line or a terminal.
std::optional<std::string> text_problem(std::string_view text);

/// Why a new password is refused (fewer than 10 or more than 1024 bytes), or nullopt.
std::optional<std::string> password_problem(std::string_view password);

/// The value of the session cookie among the request's Cookie headers.
std::optional<std::string> session_token(const common::http::Request& req);

/// Set-Cookie for a new session: HttpOnly, SameSite=Strict, Path=/, Max-Age; Secure when `tls`.
std::string session_cookie(std::string_view token, std::chrono::seconds max_age, bool tls);

/// Set-Cookie that removes the session cookie.
std::string cleared_cookie(bool tls);

/// What the database stores of a session token: its SHA-256 in hex.
std::string token_hash(std::string_view token);

/// The CSRF token of a session: derived from the session token (a hash of it), so nothing more is stored and a
/// script of another origin, which cannot read the cookie, cannot compute it.
std::string csrf_token(std::string_view session_token);

/// True when `header` is the CSRF token of `session_token` (constant-time comparison).
bool csrf_matches(std::string_view session_token, std::string_view header);

/// False when the request carries an Origin (or, without one, a Referer) that is not this host: a cross-site
/// request. Requests without either (curl, older clients) pass; the CSRF token still guards them.
bool same_origin(const common::http::Request& req);

/// `+966500000001` -> `+966*******01`: the first four and last two characters stay, other digits become `*`.
std::string mask_phone(std::string_view phone);

/// The query parameter `name` of a request target, percent-decoded; nullopt when absent.
std::optional<std::string> query_param(std::string_view target, std::string_view name);

/// Failed logins per e-mail: after `max_failures` within `window`, further attempts for that e-mail are refused
/// until the window has passed since the first failure; a successful login clears the count. In memory, per
/// process (a bound on guessing, not an account lock-out); at most `max_entries` e-mails are tracked, the
/// oldest dropped first. Thread-safe.
class LoginThrottle {
public:
    using Clock = std::chrono::steady_clock;
    LoginThrottle(int max_failures = 5, std::chrono::seconds window = std::chrono::minutes(15),
                  std::size_t max_entries = 10'000)
        : max_failures_(max_failures), window_(window), max_entries_(max_entries) {}
    /// How long `email` must wait, or nullopt when it may try now.
    std::optional<std::chrono::seconds> blocked(const std::string& email, Clock::time_point now);
    void failed(const std::string& email, Clock::time_point now);
    void succeeded(const std::string& email);

private:
    struct Entry {
        Clock::time_point first;
        int failures = 0;
    };
    const int max_failures_;
    const std::chrono::seconds window_;
    const std::size_t max_entries_;
    std::mutex mutex_;
    std::map<std::string, Entry> entries_;
};

/// The password checks of logins, shared fairly between client addresses. At most `slots` checks run at once (each
/// holds a database worker about 0.3 s). A login that finds them taken waits in its address's line, and a freed slot
/// goes to the next address in turn: a client that sends many logins waits behind its own, not in front of other
/// clients'. At most `per_address` logins of one address and `max_addresses` addresses wait (beyond: busy at once);
/// the caller gives up on a wait after its deadline. IPv6 clients count by their /64 (one host holds a whole one).
/// Pure (the caller polls), thread-safe.
class LoginGate {
public:
    using Ticket = std::uint64_t;
    explicit LoginGate(int slots = 2, std::size_t per_address = 2, std::size_t max_addresses = 256)
        : slots_(slots), per_address_(per_address), max_addresses_(max_addresses) {}

    enum class Admission { run, wait, busy };
    struct Entry {
        Admission admission;
        Ticket ticket = 0;  ///< for `wait`: what to poll
    };
    /// A login from `address` arrives: it may run now, must wait (poll its ticket), or is refused (busy).
    Entry arrive(const std::string& address);
    /// True when the waiting `ticket` got a slot (it then runs, and must call release() when done).
    bool granted(Ticket ticket);
    /// The waiting `ticket` gives up (its deadline passed). Returns true when it got a slot after all (it runs).
    bool abandon(Ticket ticket);
    /// A running check ends: its slot goes to the next address in line.
    void release();

    /// The key of a client address: itself, or its /64 for IPv6.
    static std::string client_key(const std::string& address);

private:
    struct Line {
        std::string key;
        std::deque<Ticket> tickets;
    };
    void grant_next();  // with mutex_ held

    const int slots_;
    const std::size_t per_address_;
    const std::size_t max_addresses_;
    std::mutex mutex_;
    int running_ = 0;
    Ticket next_ticket_ = 1;
    std::list<Line> lines_;     ///< addresses with logins waiting, in turn order
    std::set<Ticket> granted_;  ///< waited and got a slot, not yet polled
};

}  // namespace hub::dashboard
