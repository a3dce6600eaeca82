#include "pos/store/users.hpp"

#include <pqxx/pqxx>

#include "pos/store/queries.hpp"

namespace pos::store {

AddedUser add_user(pqxx::connection_base& c, const std::string& email, const std::string& password_hash,
                   const std::string& brand_id) {
    pqxx::work tx(c);
    if (exec(tx, sql::kBrandExists, brand_id).empty()) return {AddUserResult::unknown_brand, 0};
    const pqxx::result r = exec(tx, sql::kInsertUser, email, password_hash, brand_id);
    if (r.empty()) return {AddUserResult::email_taken, 0};
    tx.commit();
    return {AddUserResult::added, r[0][0].as<std::int64_t>()};
}

LoginCandidate begin_login(pqxx::connection_base& c, const std::string& email, const LoginThrottleRule& rule) {
    pqxx::work tx(c);
    exec(tx, sql::kPurgeLoginFailures, static_cast<std::int64_t>(rule.window.count()), kPurgeBatch);
    const pqxx::row failures = exec(tx, sql::kLockLoginFailures, email).at(0);
    const LoginAttemptDecision decision = decide_login_attempt(
        {.count = failures[0].as<int>(), .since_last = std::chrono::seconds(failures[1].as<std::int64_t>())}, rule);
    LoginCandidate candidate;
    candidate.allowed = decision.allowed;
    if (decision.allowed) {
        exec(tx, sql::kCountLoginAttempt, email, decision.count_to_store);
        const pqxx::result user = exec(tx, sql::kFindUser, email);
        if (!user.empty()) {
            candidate.user_found = true;
            candidate.user_id = user[0][0].as<std::int64_t>();
            candidate.brand_id = user[0][1].as<std::string>();
            candidate.password_hash = user[0][2].as<std::string>();
        }
    }
    tx.commit();
    return candidate;
}

void finish_login(pqxx::connection_base& c, const std::string& email, std::int64_t user_id, const std::string& brand_id,
                  const std::string& token_hash, std::chrono::seconds lifetime) {
    pqxx::work tx(c);
    exec(tx, sql::kClearLoginFailures, email);
    exec(tx, sql::kPurgeExpiredTokens, kPurgeBatch);
    exec(tx, sql::kInsertToken, token_hash, user_id, brand_id, static_cast<std::int64_t>(lifetime.count()));
    tx.commit();
}

std::string authenticate_token(pqxx::connection_base& c, const std::string& token_hash) {
    // One statement in autocommit: one round trip, and a commit only when it touched last_used_at.
    pqxx::nontransaction tx(c);
    const pqxx::result r = exec(tx, sql::kAuthenticateToken, token_hash);
    return r.empty() ? std::string() : r[0][0].as<std::string>();
}

}  // namespace pos::store
