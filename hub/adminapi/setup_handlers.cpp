// What an operator sets up: brands/{brand}/pos (GET, PUT), branches (GET, POST), branches/{id} (GET, PATCH),
// mappings (GET, POST), mappings/{partner}/{kind}/{external} (DELETE).
#include <boost/json.hpp>

#include "hub/admin/branch_rules.hpp"
#include "hub/admin/pos_rules.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/adminapi/handlers.hpp"

namespace hub::adminapi {
namespace {

using admin::Refusal;
using common::http::Response;

std::optional<admin::AcceptMode> accept_mode(const std::optional<std::string>& text) {
    if (!text) return std::nullopt;
    for (auto m : {admin::AcceptMode::pending, admin::AcceptMode::automatic, admin::AcceptMode::manual})
        if (admin::accept_mode_name(m) == *text) return m;
    throw Refusal(Refusal::Kind::invalid, "accept_mode must be pending, auto or manual");
}

admin::BranchChange branch_change(const boost::json::object& body) {
    admin::BranchChange c;
    c.name = string_field(body, "name");
    c.pos_branch_id = string_field(body, "pos_branch_id");
    c.accept_mode = accept_mode(string_field(body, "accept_mode"));
    c.accept_timeout_minutes = int_field(body, "accept_timeout_minutes");
    c.schedule_lead_minutes = int_field(body, "schedule_lead_minutes");
    return c;
}

std::string environment_of(const Call& call) { return call.query("environment").value_or("production"); }

}  // namespace

boost::asio::awaitable<Response> show_pos(Context& ctx, const Call& call) {
    auto job = [brand = call.param("brand"), env = environment_of(call)](pqxx::transaction_base& tx) {
        for (auto& c : admin::list_pos_connections(tx)) {
            const auto& o = c.as_object();
            if (o.at("brand") == brand.c_str() && o.at("environment") == env.c_str()) return o;
        }
        throw Refusal(Refusal::Kind::not_found, "no POS connection for brand '" + brand + "' in " + env);
    };
    co_return answer(200, co_await read(ctx, std::move(job)));
}

boost::asio::awaitable<Response> set_pos(Context& ctx, const Call& call) {
    const auto body = call.body();
    admin::PosConnectionInput in;
    in.brand = call.param("brand");
    in.environment = environment_of(call);
    in.base_url = string_field(body, "base_url").value_or("");
    in.token = string_field(body, "token");
    in.email = string_field(body, "email");
    in.password = string_field(body, "password");
    in.ca_file = string_field(body, "ca_file").value_or("");
    in.allow_insecure_http = bool_field(body, "allow_insecure_http").value_or(false);
    if (ctx.box == nullptr) throw Refusal(Refusal::Kind::invalid, "this hub has no secret key to seal POS credentials");
    auto job = [box = ctx.box, in](pqxx::transaction_base& tx) { return admin::set_pos_connection(tx, *box, in); };
    co_return answer(200, co_await change(ctx, call, in.brand + "/" + in.environment, 200, std::move(job)));
}

boost::asio::awaitable<Response> list_branches(Context& ctx, const Call&) {
    auto job = [](pqxx::transaction_base& tx) {
        boost::json::array rows;
        for (const auto& b : admin::list_branches(tx)) rows.push_back(admin::branch_json(b));
        return rows;
    };
    co_return answer(200, one_page(co_await read(ctx, std::move(job))));
}

boost::asio::awaitable<Response> create_branch(Context& ctx, const Call& call) {
    const auto body = call.body();
    const std::string id = string_field(body, "id").value_or("");
    const std::string brand = string_field(body, "brand").value_or("");
    auto job = [id, brand, settings = branch_change(body)](pqxx::transaction_base& tx) {
        return admin::branch_json(admin::create_branch(tx, id, brand, settings));
    };
    co_return answer(201, co_await change(ctx, call, id, 201, std::move(job)));
}

boost::asio::awaitable<Response> show_branch(Context& ctx, const Call& call) {
    auto job = [id = call.param("id")](pqxx::transaction_base& tx) {
        for (const auto& b : admin::list_branches(tx))
            if (b.id == id) return admin::branch_json(b);
        throw Refusal(Refusal::Kind::not_found, "no branch '" + id + "'");
    };
    co_return answer(200, co_await read(ctx, std::move(job)));
}

boost::asio::awaitable<Response> update_branch(Context& ctx, const Call& call) {
    const auto body = call.body();
    if (body.contains("brand") || body.contains("id"))
        throw Refusal(Refusal::Kind::invalid, "a branch's id and brand cannot change (create a new branch)");
    auto job = [id = call.param("id"), c = branch_change(body)](pqxx::transaction_base& tx) {
        return admin::branch_json(admin::update_branch(tx, id, c));
    };
    co_return answer(200, co_await change(ctx, call, call.param("id"), 200, std::move(job)));
}

boost::asio::awaitable<Response> list_mappings(Context& ctx, const Call& call) {
    auto job = [partner = call.query("partner").value_or(""), kind = call.query("kind").value_or("")](
                   pqxx::transaction_base& tx) { return admin::list_mappings(tx, partner, kind); };
    co_return answer(200, one_page(co_await read(ctx, std::move(job))));
}

boost::asio::awaitable<Response> set_mapping(Context& ctx, const Call& call) {
    const auto body = call.body();
    auto job = [partner = string_field(body, "partner").value_or(""), kind = string_field(body, "kind").value_or(""),
                external = string_field(body, "external").value_or(""), pos = string_field(body, "pos").value_or("")](
                   pqxx::transaction_base& tx) { return admin::set_mapping(tx, partner, kind, external, pos); };
    co_return answer(200, co_await change(ctx, call, string_field(body, "external").value_or(""), 200, std::move(job)));
}

boost::asio::awaitable<Response> delete_mapping(Context& ctx, const Call& call) {
    auto job = [partner = call.param("partner"), kind = call.param("kind"), external = call.param("external")](
                   pqxx::transaction_base& tx) { return admin::delete_mapping(tx, partner, kind, external); };
    co_return answer(200, co_await change(ctx, call, call.param("external"), 200, std::move(job)));
}

}  // namespace hub::adminapi
