#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "pos/logic/validation_errors.hpp"

namespace pos {

/// Longest email accepted (characters), as the users table allows.
inline constexpr std::size_t kMaxEmailLength = 254;
/// Longest password accepted (bytes), to bound the work of one login.
inline constexpr std::size_t kMaxPasswordBytes = 1024;
/// Shortest password `user add` accepts (characters).
inline constexpr std::size_t kMinPasswordLength = 8;

/// A `POST /api/login` body (interface 2.3).
struct LoginRequest {
    std::string email;
    std::string password;
};

/// The outcome of parse_login_request: `request` is set exactly when `errors` is empty.
struct ParsedLoginRequest {
    std::optional<LoginRequest> request;
    ValidationErrors errors;
};

/// Validates a parsed login body: `email` a non-blank string of at most kMaxEmailLength characters, `password`
/// a non-empty string of at most kMaxPasswordBytes. No format check on the email: an address that is not a
/// user simply fails to log in. Laravel's keys and wording. Pure.
ParsedLoginRequest parse_login_request(const boost::json::value& body);

/// The problem with the credentials of `orderpos user add`, or nullopt: the email must look like an address
/// (something@something, no white space, at most kMaxEmailLength characters), the password must have
/// kMinPasswordLength to kMaxPasswordBytes bytes and no line break. Pure.
std::optional<std::string> check_new_user(std::string_view email, std::string_view password);

}  // namespace pos
