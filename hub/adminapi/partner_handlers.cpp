// Partners: GET/POST partners, GET partners/{id}, POST partners/{id}/rotate, /rotate-secret, /disable.
#include <boost/json.hpp>

#include "hub/admin/partner_rules.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/adminapi/handlers.hpp"

namespace hub::adminapi {

using common::http::Response;

boost::asio::awaitable<Response> list_partners(Context& ctx, const Call&) {
    auto job = [](pqxx::transaction_base& tx) { return admin::list_partners(tx); };
    auto rows = co_await read(ctx, std::move(job));
    co_return answer(200, one_page(std::move(rows)));
}

boost::asio::awaitable<Response> create_partner(Context& ctx, const Call& call) {
    const auto body = call.body();
    admin::PartnerInput in;
    in.name = string_field(body, "name").value_or("");
    in.label = string_field(body, "label");
    in.time_zone = string_field(body, "time_zone").value_or("UTC");
    in.signing = bool_field(body, "signing").value_or(false);
    admin::check_partner_input(in, ctx.box);
    auto job = [box = ctx.box, base = ctx.public_url, in](pqxx::transaction_base& tx) {
        admin::IssuedPartner issued = admin::create_partner(tx, box, in);
        issued.partner["webhook_url"] = admin::webhook_url(base, issued.webhook_key);  // shown this once
        return issued.partner;
    };
    auto out = co_await change(ctx, call, "", 201, std::move(job));
    co_return answer(201, out);
}

boost::asio::awaitable<Response> show_partner(Context& ctx, const Call& call) {
    auto job = [id = call.param("id")](pqxx::transaction_base& tx) { return admin::show_partner(tx, id); };
    co_return answer(200, co_await read(ctx, std::move(job)));
}

boost::asio::awaitable<Response> rotate_partner(Context& ctx, const Call& call) {
    auto job = [id = call.param("id"), base = ctx.public_url](pqxx::transaction_base& tx) {
        admin::IssuedPartner issued = admin::rotate_partner_key(tx, id);
        issued.partner["webhook_url"] = admin::webhook_url(base, issued.webhook_key);  // shown this once
        return issued.partner;
    };
    co_return answer(200, co_await change(ctx, call, call.param("id"), 200, std::move(job)));
}

boost::asio::awaitable<Response> rotate_partner_secret(Context& ctx, const Call& call) {
    const auto grace = int_field(call.body(), "grace_hours").value_or(24);
    if (ctx.box == nullptr)
        throw admin::Refusal(admin::Refusal::Kind::invalid, "this hub has no secret key to seal a signing secret");
    auto job = [box = ctx.box, id = call.param("id"), grace](pqxx::transaction_base& tx) {
        return admin::rotate_partner_secret(tx, *box, id, grace);
    };
    co_return answer(200, co_await change(ctx, call, call.param("id"), 200, std::move(job)));
}

boost::asio::awaitable<Response> limit_partner(Context& ctx, const Call& call) {
    const auto body = call.body();
    auto job = [id = call.param("id"), rate = int_field(body, "per_second"), burst = int_field(body, "burst")](
                   pqxx::transaction_base& tx) { return admin::set_partner_limit(tx, id, rate, burst); };
    co_return answer(200, co_await change(ctx, call, call.param("id"), 200, std::move(job)));
}

boost::asio::awaitable<Response> disable_partner(Context& ctx, const Call& call) {
    auto job = [id = call.param("id")](pqxx::transaction_base& tx) { return admin::disable_partner(tx, id); };
    co_return answer(200, co_await change(ctx, call, call.param("id"), 200, std::move(job)));
}

}  // namespace hub::adminapi
