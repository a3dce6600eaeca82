#include "pos/logic/credentials.hpp"

#include <boost/json/object.hpp>

#include "pos/logic/text.hpp"

namespace pos {
namespace {

namespace json = boost::json;

// The field as a string, or nullopt with Laravel's message recorded under `field`.
std::optional<std::string> required_string(const json::object& body, std::string_view field, ValidationErrors& errors) {
    const json::value* value = body.if_contains(field);
    const std::string name(field);
    if (value == nullptr || value->is_null()) {
        add_error(errors, name, "The " + name + " field is required.");
        return std::nullopt;
    }
    if (!value->is_string()) {
        add_error(errors, name, "The " + name + " must be a string.");
        return std::nullopt;
    }
    return std::string(value->get_string());
}

}  // namespace

ParsedLoginRequest parse_login_request(const boost::json::value& body) {
    ParsedLoginRequest result;
    if (!body.is_object()) {
        add_error(result.errors, "body", "The request body must be a JSON object.");
        return result;
    }
    const json::object& object = body.get_object();
    auto email = required_string(object, "email", result.errors);
    auto password = required_string(object, "password", result.errors);
    if (email && is_blank(*email)) {
        add_error(result.errors, "email", "The email field is required.");
    } else if (email && utf8_length(*email) > kMaxEmailLength) {
        add_error(result.errors, "email",
                  "The email must not be greater than " + std::to_string(kMaxEmailLength) + " characters.");
    }
    if (password && password->empty()) {
        add_error(result.errors, "password", "The password field is required.");
    } else if (password && password->size() > kMaxPasswordBytes) {
        add_error(result.errors, "password",
                  "The password must not be greater than " + std::to_string(kMaxPasswordBytes) + " characters.");
    }
    if (result.errors.empty()) result.request = LoginRequest{std::move(*email), std::move(*password)};
    return result;
}

std::optional<std::string> check_new_user(std::string_view email, std::string_view password) {
    const std::size_t at = email.find('@');
    if (email.empty() || at == 0 || at == std::string_view::npos || at + 1 == email.size() ||
        email.find('@', at + 1) != std::string_view::npos) {
        return "the email must look like name@example.com";
    }
    for (const char c : email) {
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return "the email must not contain white space";
    }
    if (utf8_length(email) > kMaxEmailLength) {
        return "the email must have at most " + std::to_string(kMaxEmailLength) + " characters";
    }
    if (utf8_length(password) < kMinPasswordLength) {
        return "the password must have at least " + std::to_string(kMinPasswordLength) + " characters";
    }
    if (password.size() > kMaxPasswordBytes) {
        return "the password must have at most " + std::to_string(kMaxPasswordBytes) + " bytes";
    }
    if (password.find_first_of("\r\n") != std::string_view::npos || password.find('\0') != std::string_view::npos) {
        return "the password must not contain line breaks or NUL characters";
    }
    return std::nullopt;
}

}  // namespace pos
