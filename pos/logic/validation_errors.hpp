#pragma once

#include <map>
#include <string>
#include <vector>

namespace pos {

/// Laravel-style validation errors: messages keyed by the dotted path of the field ("products.0.quantity").
using ValidationErrors = std::map<std::string, std::vector<std::string>>;

/// Appends `message` to the messages of `key`.
void add_error(ValidationErrors& errors, const std::string& key, std::string message);

/// Appends every message of `more` to `errors`.
void merge_errors(ValidationErrors& errors, const ValidationErrors& more);

/// The top-level `message` of a 422 answer, as Laravel summarizes: the first message of the first key, then
/// " (and N more errors)" when there are more ("" when there is none).
std::string summarize_errors(const ValidationErrors& errors);

}  // namespace pos
