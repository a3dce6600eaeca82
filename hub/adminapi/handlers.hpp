#pragma once

// The handlers of the operator API, one per route (hub/adminapi/api.cpp kRoutes). Each calls the same rule
// functions as the CLI (hub/admin/*_rules.hpp): one rule, two doors. Refusals propagate to the API's one error step.

#include <boost/asio/awaitable.hpp>

#include "common/http/message.hpp"
#include "hub/adminapi/context.hpp"

namespace hub::adminapi {

using Handler = boost::asio::awaitable<common::http::Response> (*)(Context&, const Call&);

// partners (partner_handlers.cpp)
boost::asio::awaitable<common::http::Response> list_partners(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> create_partner(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> show_partner(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> rotate_partner(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> rotate_partner_secret(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> disable_partner(Context& ctx, const Call& call);
/// POST partners/{id}/limit {"per_second", "burst"}; neither: the hub's default again.
boost::asio::awaitable<common::http::Response> limit_partner(Context& ctx, const Call& call);

// brands' POS connections, branches, mappings (setup_handlers.cpp)
boost::asio::awaitable<common::http::Response> show_pos(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> set_pos(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> list_branches(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> create_branch(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> show_branch(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> update_branch(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> list_mappings(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> set_mapping(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> delete_mapping(Context& ctx, const Call& call);

// orders and the inbox (order_handlers.cpp)
boost::asio::awaitable<common::http::Response> list_orders(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> show_order(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> resend_order(Context& ctx, const Call& call);
/// POST orders: an order pushed by an operator (order_create_handler.cpp).
boost::asio::awaitable<common::http::Response> create_order(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> order_audit(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> list_events(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> show_event(Context& ctx, const Call& call);
boost::asio::awaitable<common::http::Response> replay_event(Context& ctx, const Call& call);

}  // namespace hub::adminapi
