#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>

#include "common/db/pool.hpp"
#include "common/http/message.hpp"
#include "pos/http/password_worker.hpp"

namespace pos::http {

/// `POST /api/login`: 200 `{"access_token": "…"}` for right credentials; 401 with the documented `status` for
/// wrong ones, an unknown email (checked against a dummy hash, so as slow) or a throttled email; 400 for a body
/// that is not JSON; 422 for a missing or mistyped field. Issues a new random 256-bit token per login, stored as
/// its SHA-256, valid for `token_lifetime`. 503 `busy` (JSON, Retry-After) when the password checks are full
/// (PasswordWorker::try_acquire). `pool` and `passwords` must outlive the call.
boost::asio::awaitable<common::http::Response> handle_login(common::http::Request req, common::db::Pool& pool,
                                                            PasswordWorker& passwords,
                                                            std::chrono::seconds token_lifetime);

}  // namespace pos::http
