#include "hub/dashboard/session.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/dashboard/auth.hpp"
#include "hub/dashboard/queries.hpp"

namespace hub::dashboard {

using common::http::Request;
using common::http::Response;

std::optional<Session> check_session(const Request& req, Response& refusal) {
    auto token = session_token(req);
    if (!token) {
        refusal = unauthenticated();
        return std::nullopt;
    }
    if (req.method != "GET") {
        if (!same_origin(req)) {
            refusal = cross_origin();
            return std::nullopt;
        }
        const auto header = req.header(kCsrfHeader);
        if (!header || !csrf_matches(*token, *header)) {
            refusal = failed(403, "csrf_failed", "missing or wrong X-CSRF-Token header");
            return std::nullopt;
        }
    }
    std::string hash = token_hash(*token);
    return Session{std::move(*token), std::move(hash)};
}

bool User::sees(const std::string& branch) const {
    return std::any_of(branches.begin(), branches.end(), [&](const auto& b) { return b.first == branch; });
}

boost::json::object User::to_json() const {
    boost::json::array bs;
    for (const auto& [branch, name] : branches) bs.push_back({{"id", branch}, {"name", name}});
    return {{"id", id}, {"email", email}, {"brand", brand}, {"branches", std::move(bs)}};
}

std::optional<User> load_user(pqxx::transaction_base& tx, const std::string& token_hash) {
    auto r = exec(tx, sql::kSessionUser, token_hash);
    if (r.empty()) return std::nullopt;
    User u{r[0]["id"].c_str(), r[0]["email"].c_str(), r[0]["brand_id"].c_str(), {}};
    for (const auto& b : exec(tx, sql::kUserBranches, u.id))
        u.branches.emplace_back(b["id"].c_str(), b["name"].c_str());
    return u;
}

std::optional<Response> refuse_branch(const User& user, const std::string& branch) {
    if (branch.empty() || user.sees(branch)) return std::nullopt;
    return forbidden_branch(branch);
}

boost::asio::awaitable<std::optional<User>> find_user(common::db::Pool& pool, std::string token_hash) {
    auto job = [hash = std::move(token_hash)](pqxx::connection& c) {
        pqxx::read_transaction tx(c);
        return load_user(tx, hash);
    };
    return pool.run(std::move(job));
}

}  // namespace hub::dashboard
