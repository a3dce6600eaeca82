#pragma once

#include <boost/asio/awaitable.hpp>

#include "common/db/pool.hpp"
#include "common/http/message.hpp"
#include "pos/store/intake.hpp"

namespace pos::http {

/// `POST /api/orders` (product.md section 7): 401 without a valid bearer token, 400 for a body that is not
/// JSON, 403 for `brand_id` of another brand than the token's, 422 with every request and menu problem at once,
/// 201 for a new order, 200 with the first order's id for a repeated `partner_reference`. The token is checked
/// through `pool`, the order decided and stored through `intake`; both must outlive the call.
boost::asio::awaitable<common::http::Response> handle_orders(common::http::Request req, common::db::Pool& pool,
                                                             store::OrderIntake& intake);

}  // namespace pos::http
