#pragma once

#include <chrono>
#include <cstdint>
#include <pqxx/connection_base>
#include <string>

#include "pos/logic/login_throttle.hpp"

namespace pos::store {

/// The outcome of add_user.
enum class AddUserResult { added, unknown_brand, email_taken };

/// A user added by add_user (id 0 unless added).
struct AddedUser {
    AddUserResult result = AddUserResult::unknown_brand;
    std::int64_t id = 0;
};

/// Adds a user who may log in for `brand_id`, with an already computed password hash. One transaction.
AddedUser add_user(pqxx::connection_base& c, const std::string& email, const std::string& password_hash,
                   const std::string& brand_id);

/// What a login attempt needs from the database before the password is checked.
struct LoginCandidate {
    bool allowed = false;     ///< false: throttled, answer 401 without checking the password
    bool user_found = false;  ///< false: check against a dummy hash (dummy_verify)
    std::int64_t user_id = 0;
    std::string brand_id;
    std::string password_hash;
};

/// How long a token lives unless `orderpos serve --token-lifetime` says otherwise (docs/pos.md).
inline constexpr std::chrono::seconds kDefaultTokenLifetime{12 * 3600};

/// At most this many stale rows (failure rows older than the throttle window, expired tokens) are purged by one
/// login: each login adds at most one row of each, so stale rows cannot pile up, and no login waits long.
inline constexpr int kPurgeBatch = 100;

/// Counts the attempt for `email` under `rule` (see decide_login_attempt) and reads the user, in one short
/// transaction; concurrent attempts for one email are counted one after another. Purges up to kPurgeBatch
/// failure rows that no longer count.
LoginCandidate begin_login(pqxx::connection_base& c, const std::string& email,
                           const LoginThrottleRule& rule = kLoginThrottle);

/// After a good password: clears the email's failures and stores `token_hash` for the user and brand, valid for
/// `lifetime`; purges up to kPurgeBatch expired tokens.
void finish_login(pqxx::connection_base& c, const std::string& email, std::int64_t user_id, const std::string& brand_id,
                  const std::string& token_hash, std::chrono::seconds lifetime = kDefaultTokenLifetime);

/// The brand of the token whose SHA-256 hex is `token_hash` ("" when there is no such token or it expired);
/// records the use.
std::string authenticate_token(pqxx::connection_base& c, const std::string& token_hash);

}  // namespace pos::store
