#pragma once

// The "load session" step of the dashboard's API, done once before the routes that need it: the session cookie,
// the same-origin and CSRF checks of state-changing calls (no I/O), then the session's user with the branches they
// may see, loaded in the transaction of the call (in_session), and the one check of a branch against that scope.

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <optional>
#include <pqxx/connection>
#include <pqxx/transaction_base>
#include <string>
#include <utility>
#include <vector>

#include "common/db/pool.hpp"
#include "common/http/message.hpp"
#include "hub/dashboard/responses.hpp"

namespace hub::dashboard {

/// The session cookie of a request that passed the checks of check_session.
struct Session {
    std::string token;
    std::string hash;  ///< token_hash(token): what hub.dashboard_sessions stores
};

/// The session step: the session cookie (401 without one) and, for a method other than GET, the same-origin check
/// and the CSRF token (403). Sets `refusal` and returns nullopt when the call may not go on. No I/O.
std::optional<Session> check_session(const common::http::Request& req, common::http::Response& refusal);

/// The user of a live session, with the branches they may see.
struct User {
    std::string id;
    std::string email;
    std::string brand;
    std::vector<std::pair<std::string, std::string>> branches;  ///< id, name; by id

    /// True when the user may see `branch`.
    bool sees(const std::string& branch) const;
    /// {"id", "email", "brand", "branches": [{"id", "name"}]}
    boost::json::object to_json() const;
};

/// The user of the live session whose token hashes to `token_hash` (not expired, user not disabled); nullopt when
/// the session has ended.
std::optional<User> load_user(pqxx::transaction_base& tx, const std::string& token_hash);

/// 403 forbidden_branch when `branch` is named and `user` may not see it; nullopt when the call may go on.
std::optional<common::http::Response> refuse_branch(const User& user, const std::string& branch);

/// load_user on a database worker.
boost::asio::awaitable<std::optional<User>> find_user(common::db::Pool& pool, std::string token_hash);

/// Runs `body(tx, user)` on a database worker, in one transaction of type Tx (commit is up to `body`), for the user
/// of the session whose token hashes to `token_hash`; 401 when the session has ended. `body` returns the answer.
/// Not a coroutine (GCC 12 mishandles by-value lambda parameters of coroutines): it returns the pool's awaitable.
template <class Tx, class Body>
boost::asio::awaitable<common::http::Response> in_session(common::db::Pool& pool, std::string token_hash, Body body) {
    auto job = [hash = std::move(token_hash), body = std::move(body)](pqxx::connection& c) {
        Tx tx(c);
        auto user = load_user(tx, hash);
        if (!user) return unauthenticated();
        return body(tx, *user);
    };
    return pool.run(std::move(job));
}

}  // namespace hub::dashboard
