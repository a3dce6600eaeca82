#include "hub/adminapi/context.hpp"

#include <boost/json.hpp>

#include "hub/admin/refusal.hpp"
#include "hub/dashboard/auth.hpp"
#include "hub/db/roles.hpp"

namespace hub::adminapi {
namespace {

using admin::Refusal;

[[noreturn]] void wrong_type(std::string_view name, std::string_view want) {
    throw Refusal(Refusal::Kind::invalid, std::string(name) + " must be " + std::string(want));
}

const boost::json::value* field(const boost::json::object& body, std::string_view name) {
    const auto* v = body.if_contains(name);
    return v == nullptr || v->is_null() ? nullptr : v;
}

}  // namespace

std::string Call::param(std::string_view name) const {
    for (const auto& [k, v] : params)
        if (k == name) return v;
    return {};
}

std::optional<std::string> Call::query(std::string_view name) const { return dashboard::query_param(req.target, name); }

boost::json::object Call::body() const {
    if (req.body.empty()) return {};
    boost::system::error_code ec;
    auto v = boost::json::parse(req.body, ec);
    if (ec || !v.is_object()) throw Refusal(Refusal::Kind::invalid, "the body must be a JSON object");
    return std::move(v.as_object());
}

std::optional<std::string> string_field(const boost::json::object& body, std::string_view name) {
    const auto* v = field(body, name);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) wrong_type(name, "a string");
    return std::string(v->get_string());
}

std::optional<bool> bool_field(const boost::json::object& body, std::string_view name) {
    const auto* v = field(body, name);
    if (v == nullptr) return std::nullopt;
    if (!v->is_bool()) wrong_type(name, "true or false");
    return v->get_bool();
}

std::optional<long long> int_field(const boost::json::object& body, std::string_view name) {
    const auto* v = field(body, name);
    if (v == nullptr) return std::nullopt;
    if (v->is_int64()) return v->get_int64();
    wrong_type(name, "a whole number");
}

std::string operator_role(pqxx::connection& c) { return db::hub_roles(c).operator_role; }

void record_change(pqxx::transaction_base& tx, const Call& call, const std::string& target, unsigned status) {
    tx.exec_params(
        "INSERT INTO hub.admin_changes (token_id, actor, method, path, target, http_status) "
        "VALUES ($1, $2, $3, $4, NULLIF($5, ''), $6)",
        call.token.id, call.token.name, call.req.method, call.req.path, target, static_cast<int>(status));
}

common::http::Response answer(unsigned status, const boost::json::value& body) {
    auto r = common::http::json_response(status, body);
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
}

boost::json::object one_page(boost::json::value items) {
    return {{"items", std::move(items)}, {"next_cursor", nullptr}};
}

long long page_size(const Call& call) {
    const auto text = call.query("limit");
    if (!text) return kDefaultPage;
    long long n = 0;
    if (text->empty() || text->size() > 4 || text->find_first_not_of("0123456789") != std::string::npos ||
        (n = std::stoll(*text)) < 1 || n > kMaxPage)
        throw Refusal(Refusal::Kind::invalid, "limit must be a number from 1 to " + std::to_string(kMaxPage));
    return n;
}

std::string cursor_key(const Call& call) {
    const auto text = call.query("cursor");
    if (!text || text->empty()) return {};
    auto key = decode_cursor(*text);
    if (!key) throw Refusal(Refusal::Kind::invalid, "cursor is not one this API gave");
    return *key;
}

boost::json::object page(boost::json::array rows, long long limit, std::string_view key_field) {
    boost::json::value next = nullptr;
    if (static_cast<long long>(rows.size()) > limit) {
        rows.resize(static_cast<std::size_t>(limit));
        const auto& key = rows.back().as_object().at(key_field);
        next = encode_cursor(key.is_string() ? std::string(key.get_string()) : boost::json::serialize(key));
    }
    return {{"items", std::move(rows)}, {"next_cursor", std::move(next)}};
}

}  // namespace hub::adminapi
