#pragma once

// What the ingest unit tests share: a webhook's text parsed and validated as the endpoint does.

#include <catch2/catch.hpp>
#include <string>

#include "common/json/parse.hpp"
#include "hub/ingest/validate.hpp"

namespace tests::ingest {

/// `text` parsed strictly and validated; fails the test (with the validation's problems) when it is not valid.
inline hub::ingest::Validated validated(const std::string& text) {
    auto p = common::json::parse_strict(text);
    REQUIRE(p.value);
    auto v = hub::ingest::validate_webhook(*p.value);
    std::string problems;
    for (const auto& e : v.errors) problems += e.path + ": " + e.message + "; ";
    INFO(text);
    INFO(problems);
    REQUIRE(v.value);
    return *v.value;
}

}  // namespace tests::ingest
