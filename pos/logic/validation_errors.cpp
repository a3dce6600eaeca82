#include "pos/logic/validation_errors.hpp"

namespace pos {

void add_error(ValidationErrors& errors, const std::string& key, std::string message) {
    errors[key].push_back(std::move(message));
}

void merge_errors(ValidationErrors& errors, const ValidationErrors& more) {
    for (const auto& [key, messages] : more) {
        auto& target = errors[key];
        target.insert(target.end(), messages.begin(), messages.end());
    }
}

std::string summarize_errors(const ValidationErrors& errors) {
    std::string first;
    std::size_t count = 0;
    for (const auto& [key, messages] : errors) {
        if (first.empty() && !messages.empty()) {
            first = messages.front();
        }
        count += messages.size();
    }
    if (count <= 1) {
        return first;
    }
    const std::size_t more = count - 1;
    return first + " (and " + std::to_string(more) + (more == 1 ? " more error)" : " more errors)");
}

}  // namespace pos
