#pragma once

#include <boost/asio/awaitable.hpp>

#include "common/db/pool.hpp"
#include "common/http/message.hpp"

namespace pos::http {

/// `POST /api/orders` (product.md section 7): 401 without a valid bearer token, 400 for a body that is not
/// JSON, 403 for `brand_id` of another brand than the token's, 422 with every request and menu problem at once,
/// 201 for a new order, 200 with the first order's id for a repeated `partner_reference`. `pool` must outlive
/// the call.
boost::asio::awaitable<common::http::Response> handle_orders(common::http::Request req, common::db::Pool& pool);

}  // namespace pos::http
